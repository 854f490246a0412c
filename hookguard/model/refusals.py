"""Names a file looks up only to refuse them.

A framework that removes a hook often keeps its name in a check that raises when a user's
object still has it (Lightning 1.8's ``_check_deprecated_callback_hooks``)::

    for hook, alternative in (("on_batch_end", "on_train_batch_end"),):
        if callable(getattr(callback, hook, None)):
            raise RuntimeError(f"{hook} was removed, use {alternative}")

Such a string is no dispatch: nothing calls the name through it, the program stops instead.
The shapes read as a refusal are a whitelist; anything else keeps the string a lookup:

* an ``if`` with no ``else`` whose body starts with ``raise`` (not ``NotImplementedError``),
  whose one-line test is
  true with ``hasattr``, ``getattr`` or ``is_overridden`` of the string (the probe itself,
  ``callable(<probe>)``, or an ``and`` of them and other tests; ``not hasattr`` demands the
  name);
* a ``for`` with no ``else`` whose every statement is such an ``if``, testing the loop's
  variable: the strings at that variable's place in the loop's literal tuple or list, written
  in the ``for`` itself or assigned once, in the same function, to a name only that ``for``
  reads.

A string is refused only when every occurrence of it in the file is in such a place.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left
from collections.abc import Iterator, Sequence

# an ``if`` whose one-line test probes a name and whose body starts with ``raise``: the only
# text a refusal can be; matched from the start of a line that holds one of the probes
_PROBE_NAMES = ("hasattr", "getattr", "is_overridden")  # as :func:`_probed` reads a call
_PROBES = tuple(f"{name}(" for name in _PROBE_NAMES)
_PROBING_IF = re.compile(
    r"[^\n]*?\bif\b[^\n:]*\b(?:hasattr|getattr|is_overridden)\([^\n]*:"
    r"(?:[ \t]*raise\b|[ \t]*(?:#[^\n]*)?\n(?:[ \t]*(?:#[^\n]*)?\n)*[ \t]*raise\b)")


def may_refuse(text: str) -> bool:
    """Cheap test on a file's text: whether :func:`refused_names` can find anything (a test
    spread over several lines is not read as a refusal: the name stays a lookup, the safe
    side). The pattern is tried only on the lines that hold a probe after an ``if`` (found
    with ``str.find``: a search of the pattern over the whole text cost 0.6 ms a file, most of
    the time spent trying each ``if``)."""
    if "raise" not in text:
        return False
    tried: set[int] = set()  # starts of lines the pattern did not match from
    for probe in _PROBES:
        for at in _occurrences(text, probe):
            start = text.rfind("\n", 0, at) + 1
            if start not in tried and "if" in text[start:at]:
                if _PROBING_IF.match(text, start):
                    return True
                tried.add(start)
    return False


def probe_lines(text: str) -> tuple[int, ...] | None:
    """The lines of ``text`` (1-based, ascending) that name a probe: every ``if`` whose test
    probes a name spans one of them. None where a lone carriage return may end a line (the
    parser's line numbers and ours could differ there)."""
    if "\r" in text:
        return None
    found = sorted(at for name in _PROBE_NAMES for at in _occurrences(text, name))
    lines: list[int] = []
    line, previous = 1, 0
    for at in found:
        line += text.count("\n", previous, at)
        previous = at
        if not lines or lines[-1] != line:
            lines.append(line)
    return tuple(lines)


def _occurrences(text: str, word: str) -> Iterator[int]:
    at = text.find(word)
    while at >= 0:
        yield at
        at = text.find(word, at + len(word))


def refused_names(tree: ast.Module, lines: Sequence[int] | None = None) -> frozenset[str]:
    """The strings ``tree`` holds only in refusals (see the module's docstring); ``lines``,
    from :func:`probe_lines` of its text, spares the walk of statements that span none."""
    ifs = _ifs_spanning(tree, lines) if lines is not None else (
        node for node in ast.walk(tree) if isinstance(node, ast.If))
    if not any(_raises(node) and next(_probed(node.test), None) is not None for node in ifs):
        return frozenset()
    refusing: set[int] = set()  # ids of the string constants in a refusal's place
    for scope in _scopes(tree):
        single = _assigned_once(scope)
        for node in _walk_scope(scope):
            if isinstance(node, ast.If) and _raises(node):
                refusing.update(id(arg) for arg in _probed(node.test)
                                if isinstance(arg, ast.Constant))
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                refusing.update(id(c) for c in _loop_refusals(node, single))
    if not refusing:
        return frozenset()
    held: dict[str, bool] = {}  # string -> every occurrence refused so far
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            held[node.value] = held.get(node.value, True) and id(node) in refusing
    return frozenset(name for name, only in held.items() if only)


def _ifs_spanning(tree: ast.Module, lines: Sequence[int]) -> Iterator[ast.If]:
    """The ``if`` statements of ``tree`` that span one of ``lines``: a statement that spans
    none is not entered, nor is any expression (it holds no statement)."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If):
            yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                continue
            start, end = getattr(child, "lineno", None), getattr(child, "end_lineno", None)
            if start is not None and end is not None:
                i = bisect_left(lines, start)
                if i == len(lines) or lines[i] > end:
                    continue
            stack.append(child)


def _scopes(tree: ast.Module) -> Iterator[ast.Module | ast.FunctionDef | ast.AsyncFunctionDef]:
    yield tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def _walk_scope(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``scope``'s own body: nested functions and classes are scopes of their
    own (their names are not ``scope``'s)."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                 ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))


def _assigned_once(scope: ast.AST) -> dict[str, ast.expr]:
    """Local names of a function bound once, by ``name = (...)`` or ``[...]``, and read once:
    the tuple a single ``for`` walks (module names may be imported and walked elsewhere)."""
    if isinstance(scope, ast.Module):
        return {}
    bound: dict[str, list[ast.AST]] = {}
    reads: dict[str, int] = {}
    for node in _walk_scope(scope):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                reads[node.id] = reads.get(node.id, 0) + 1
            else:
                bound.setdefault(node.id, []).append(node)
    found: dict[str, ast.expr] = {}
    for node in _walk_scope(scope):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, (ast.Tuple, ast.List))):
            name = node.targets[0].id
            if len(bound.get(name, ())) == 1 and reads.get(name, 0) == 1:
                found[name] = node.value
    return found


def _raises(node: ast.If) -> bool:
    """An ``if`` without ``else`` whose body starts by raising something other than
    ``NotImplementedError`` (a placeholder, not a refusal)."""
    if node.orelse or not node.body:
        return False
    stmt = node.body[0]
    if not isinstance(stmt, ast.Raise) or stmt.exc is None:
        return False
    exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
    return not (isinstance(exc, ast.Name) and exc.id == "NotImplementedError")


def _probed(test: ast.expr) -> Iterator[ast.expr]:
    """The arguments that can name the attribute of the probes ``test`` is true with: the
    second of ``hasattr``/``getattr``, any of ``is_overridden``, where the test is the probe,
    ``callable(<probe>)``, or an ``and`` of them and other tests (``not hasattr(...)`` demands
    the name: no refusal)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        for value in test.values:
            yield from _probed(value)
        return
    if not isinstance(test, ast.Call):
        return
    func = test.func
    name = func.id if isinstance(func, ast.Name) else (
        func.attr if isinstance(func, ast.Attribute) else "")
    if name == "callable" and len(test.args) == 1:
        yield from _probed(test.args[0])
    elif name == "is_overridden":
        yield from test.args
        yield from (k.value for k in test.keywords)
    elif name in ("hasattr", "getattr") and len(test.args) >= 2:
        yield test.args[1]


def _loop_refusals(loop: ast.For | ast.AsyncFor, single: dict[str, ast.expr]
                   ) -> Iterator[ast.Constant]:
    if loop.orelse or not loop.body or not all(
            isinstance(s, ast.If) and _raises(s) for s in loop.body):
        return
    probed = {arg.id for s in loop.body if isinstance(s, ast.If)
              for arg in _probed(s.test) if isinstance(arg, ast.Name)}
    target = loop.target
    if isinstance(target, ast.Name):
        places: list[int] | None = None if target.id in probed else []
    elif isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
        places = [i for i, e in enumerate(target.elts)
                  if isinstance(e, ast.Name) and e.id in probed]
    else:
        return
    if places == []:
        return
    items = loop.iter
    if isinstance(items, ast.Name):
        items = single.get(items.id, items)
    if not isinstance(items, (ast.Tuple, ast.List)):
        return
    for element in items.elts:
        if places is None:
            if isinstance(element, ast.Constant) and isinstance(element.value, str):
                yield element
            continue
        if not isinstance(element, (ast.Tuple, ast.List)):
            continue
        for i in places:
            if i < len(element.elts):
                value = element.elts[i]
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    yield value
