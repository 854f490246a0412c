"""Shims: how a framework makes a call that an old override cannot take without failing.

A framework that starts passing a new argument to a hook often checks the override first, or
catches the failure, or wraps old overrides; then an override without the argument still
works, with a deprecation warning or silently, until a later release drops the shim. The
shapes read here, in the new version's source of the caller (never run):

- **a signature check** before the call, in the caller's function: a call of ``signature``,
  ``getfullargspec``, ``getargspec``, ``getcallargs``, or of a helper whose name says it checks
  what a function accepts (``func_accepts_kwargs``, ``_accepts``, ``has_kwargs``,
  ``takes_kwarg``, ``supports_kwargs``...), given the hook (``self.compute_loss``,
  ``getattr(self, "compute_loss")``), or a read of ``self.compute_loss.__code__``; also such a
  check made elsewhere in the caller's file and kept in a name, an attribute or a helper method
  (``self._accepts_num_items = "num_items_in_batch" in inspect.signature(...).parameters``,
  ``def _accepts_num_items(self): return ...``) that an ``if`` around the call, or an ``and``
  before it, tests;
- **a fallback on TypeError**: the call in the body of a ``try`` whose handlers catch
  ``TypeError`` (or ``Exception``, ``BaseException``, or everything);
- **an adapter**: a function in the caller's file (``__init_subclass__``, a metaclass, a
  constructor) that checks the hook's signature and assigns the hook on the class or instance
  (``cls.compute_loss = _drop_kwarg(cls.compute_loss)``, ``setattr(self, "compute_loss", ...)``):
  old overrides are wrapped before any call reaches them.

A file the running ``ast`` cannot read has no shim this module can see: the call stays a
proof. See :mod:`hookguard.upgrade.check` for what makes an error.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hookguard.model.extract import dotted_name, parse_quietly
from hookguard.model.sources import blob_sha

if TYPE_CHECKING:
    from hookguard.model.cache import RecordCache

_MISSING = object()

_INSPECTORS = frozenset({"signature", "getfullargspec", "getargspec", "getcallargs", "getargs"})
_CHECKER = re.compile(
    r"accept|(?:has|takes?|supports?)_?(?:var_?)?(?:kw)?(?:args?|kwargs?|params?|parameters?"
    r"|keywords?|arguments?)", re.IGNORECASE)
_CATCH_ALL = frozenset({"TypeError", "Exception", "BaseException"})


@dataclass(frozen=True)
class Shim:
    kind: str  # "signature-check", "type-error-fallback" or "adapter"
    path: str
    line: int
    source: str  # what was found, as written (shortened)

    def describe(self) -> str:
        what = {"signature-check": "checks the override's signature first",
                "type-error-fallback": "catches the TypeError",
                "adapter": "wraps old overrides"}[self.kind]
        return f"{what} ({self.source} at {self.path}:{self.line})"

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "path": self.path, "line": self.line, "source": self.source}


@dataclass(frozen=True)
class KeywordCheck:
    """``"kw" in inspect.signature(self.hook).parameters``: the keyword is passed only to
    overrides that take it."""

    keyword: str
    hook: str
    path: str
    line: int
    scope: str  # qualified name of the enclosing class (``Outer.Trainer``), "" at module level
    source: str


def _short(node: ast.AST, limit: int = 80) -> str:
    text = ast.unparse(node)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _mentions_hook(node: ast.AST, hook: str) -> bool:
    for inner in ast.walk(node):
        if isinstance(inner, ast.Attribute) and inner.attr == hook:
            return True
        if isinstance(inner, ast.Constant) and inner.value == hook:
            return True
    return False


def _inspector(func: ast.expr) -> bool:
    name = dotted_name(func)
    if name is None:
        return False
    last = name.rsplit(".", 1)[-1]
    return last in _INSPECTORS or _CHECKER.search(last) is not None


def _is_check(node: ast.AST, hook: str) -> bool:
    """``signature(self.hook)``, ``func_accepts_kwargs(self.hook)``, ``self.hook.__code__``."""
    if isinstance(node, ast.Call):
        return _inspector(node.func) and any(
            _mentions_hook(arg, hook) for arg in (*node.args, *node.keywords))
    return isinstance(node, ast.Attribute) and node.attr in (
        "__code__", "__signature__", "__wrapped__") and (
        isinstance(node.value, ast.Attribute) and node.value.attr == hook)


def inspects(node: ast.AST, hook: str) -> ast.AST | None:
    """The part of ``node`` that checks ``hook``'s signature, or None."""
    return next((inner for inner in ast.walk(node) if _is_check(inner, hook)), None)


def _checked_hooks(node: ast.AST) -> frozenset[str]:
    """The hooks whose signature ``node`` may check (see :func:`_is_check`): the attribute
    names and strings in an inspector's arguments, or the attribute ``__code__`` is read on."""
    if isinstance(node, ast.Call) and _inspector(node.func):
        names: set[str] = set()
        for arg in (*node.args, *node.keywords):
            for inner in ast.walk(arg):
                if isinstance(inner, ast.Attribute):
                    names.add(inner.attr)
                elif isinstance(inner, ast.Constant) and isinstance(inner.value, str):
                    names.add(inner.value)
        return frozenset(names)
    if isinstance(node, ast.Attribute) and node.attr in (
            "__code__", "__signature__", "__wrapped__") and isinstance(node.value, ast.Attribute):
        return frozenset((node.value.attr,))
    return frozenset()


@dataclass
class _Check:
    """A node that checks a signature: what it checks, and the nodes it lies within."""

    node: ast.AST
    hooks: frozenset[str]
    within: frozenset[int]  # ids of the node and of its ancestors


@dataclass
class _File:
    tree: ast.Module | None
    parents: dict[int, ast.AST] = field(default_factory=dict)
    flags: dict[str, set[str]] = field(default_factory=dict)  # hook -> flag names
    checks: list[_Check] = field(default_factory=list)  # in ``ast.walk`` order
    keyword_checks: dict[str, list[KeywordCheck]] = field(default_factory=dict)  # by hook


_ANSWER = "shim-1:"  # answers kept in a package cache: shim-1:<blob id>:<path>:<question>


class ShimFinder:
    """Shims in one version's files (path -> bytes), each file parsed once, when asked.

    With ``cache`` (the version's signed package cache), each answer of :meth:`at_call` and
    :meth:`keyword_checks` is kept there under the file's blob id (``blobs``, else hashed
    from its bytes), its path and the question: a file asked about before is not parsed
    again. The answer is a function of the file's bytes alone, so it is the one a parse
    gives."""

    def __init__(self, files: Mapping[str, bytes | int], cache: RecordCache | None = None,
                 blobs: Mapping[str, str] | None = None) -> None:
        self._files = files
        self._parsed: dict[str, _File] = {}
        self._cache = cache
        self._blobs = dict(blobs or {})  # (and the blob ids hashed so far)

    def _answer_key(self, path: str, question: str) -> str | None:
        if self._cache is None:
            return None
        blob = self._blobs.get(path)
        if blob is None:
            data = self._files.get(path)
            if not isinstance(data, bytes):
                return None
            blob = self._blobs[path] = blob_sha(data)
        return f"{_ANSWER}{blob}:{path}:{question}"

    def _kept(self, key: str | None) -> object:
        """The answer kept under ``key`` (decoded), or :data:`_MISSING`."""
        if key is None or self._cache is None:
            return _MISSING
        stored = self._cache.get_history(key)
        if stored is None:
            return _MISSING
        try:
            return json.loads(stored)
        except ValueError:  # pragma: no cover - signed: only a bug writes such a thing
            return _MISSING

    def _keep(self, key: str | None, answer: object) -> None:
        if key is not None and self._cache is not None:
            self._cache.put_history(key, json.dumps(answer, sort_keys=True).encode())

    def at_call(self, path: str, line: int, col: int, hook: str) -> Shim | None:
        """The shim around the call of ``hook`` at ``path:line:col`` (1-based column), if any."""
        key = self._answer_key(path, f"at-call:{line}:{col}:{hook}")
        kept = self._kept(key)
        if kept is None:
            return None
        if isinstance(kept, dict):
            try:
                return Shim(str(kept["kind"]), str(kept["path"]), int(kept["line"]),
                            str(kept["source"]))
            except (KeyError, TypeError, ValueError):  # pragma: no cover - as in _kept
                pass
        found = self._at_call(path, line, col, hook)
        self._keep(key, found.to_json() if found is not None else None)
        return found

    def keyword_checks(self, path: str, hook: str) -> list[KeywordCheck]:
        """Each ``"kw" in <a check of hook's signature>`` in ``path``."""
        key = self._answer_key(path, f"keyword-checks:{hook}")
        kept = self._kept(key)
        if isinstance(kept, list):
            try:
                return [KeywordCheck(str(k["keyword"]), str(k["hook"]), str(k["path"]),
                                     int(k["line"]), str(k["scope"]), str(k["source"]))
                        for k in kept]
            except (KeyError, TypeError, ValueError):  # pragma: no cover - as in _kept
                pass
        found = self._keyword_checks(path, hook)
        self._keep(key, [dataclasses.asdict(k) for k in found])
        return found

    def _file(self, path: str) -> _File:
        found = self._parsed.get(path)
        if found is None:
            data = self._files.get(path)
            tree: ast.Module | None = None
            if isinstance(data, bytes):
                try:
                    tree = parse_quietly(data, path)
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    tree = None
            found = self._parsed[path] = _File(tree)
            if tree is not None:
                for node in ast.walk(tree):
                    for child in ast.iter_child_nodes(node):
                        found.parents[id(child)] = node
                    hooks = _checked_hooks(node)
                    if hooks:  # (one walk of the file: every later question is a lookup)
                        within = {id(node)}
                        within.update(id(a) for a in self._ancestors(found, node))
                        found.checks.append(_Check(node, hooks, frozenset(within)))
        return found

    @staticmethod
    def _inspects(parsed: _File, node: ast.AST, hook: str) -> ast.AST | None:
        """As :func:`inspects`, from the file's index of checks (``node`` is of the file)."""
        key = id(node)
        return next((c.node for c in parsed.checks if hook in c.hooks and key in c.within),
                    None)

    def _flags(self, path: str, hook: str) -> set[str]:
        """Names, attributes and helpers of ``path`` that hold a check of ``hook``'s
        signature: ``accepts = ...``, ``self._accepts = ...``, ``def _accepts(self): ...``."""
        parsed = self._file(path)
        if hook in parsed.flags or parsed.tree is None:
            return parsed.flags.get(hook, set())
        flags: set[str] = set()
        for check in parsed.checks:
            if hook not in check.hooks:
                continue
            # Up from the check: the value of an assignment (its targets are flags), or the
            # value of a ``return`` (the function is one) and every function around it.
            child: ast.AST = check.node
            for node in self._ancestors(parsed, check.node):
                if isinstance(node, (ast.Assign, ast.AnnAssign)) and child is node.value:
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for target in targets:
                        for part in ast.walk(target):
                            if isinstance(part, ast.Name):
                                flags.add(part.id)
                            elif isinstance(part, ast.Attribute):
                                flags.add(part.attr)
                elif isinstance(node, ast.Return) and child is node.value:
                    flags.update(a.name for a in self._ancestors(parsed, node)
                                 if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef)))
                child = node
        parsed.flags[hook] = flags
        return flags

    def _tests_flag(self, test: ast.AST, path: str, hook: str) -> ast.AST | None:
        found = self._inspects(self._file(path), test, hook)
        if found is not None:
            return found
        flags = self._flags(path, hook)
        for inner in ast.walk(test):
            if (isinstance(inner, ast.Name) and inner.id in flags) or (
                    isinstance(inner, ast.Attribute) and inner.attr in flags):
                return inner
        return None

    def _at_call(self, path: str, line: int, col: int, hook: str) -> Shim | None:
        parsed = self._file(path)
        if parsed.tree is None:
            return None
        call = next((n for n in ast.walk(parsed.tree) if isinstance(n, ast.Call)
                     and n.lineno == line and n.col_offset + 1 == col
                     and isinstance(n.func, ast.Attribute) and n.func.attr == hook), None)
        if call is None:
            return None
        child: ast.AST = call
        function: ast.AST | None = None
        for node in self._ancestors(parsed, call):
            if isinstance(node, (ast.If, ast.IfExp, ast.While)):
                found = self._tests_flag(node.test, path, hook)
                if found is not None:
                    return Shim("signature-check", path, getattr(found, "lineno", line),
                                _short(found))
            elif isinstance(node, ast.BoolOp):
                for value in node.values:
                    if value is child:
                        break
                    found = self._tests_flag(value, path, hook)
                    if found is not None:
                        return Shim("signature-check", path, getattr(found, "lineno", line),
                                    _short(found))
            elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
                body = getattr(node, "body", [])
                if any(child is stmt for stmt in body) and any(
                        _catches_type_error(h) for h in getattr(node, "handlers", [])):
                    return Shim("type-error-fallback", path, getattr(node, "lineno", line),
                                "try/except TypeError")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                function = node
                break
            child = node
        if function is not None:  # a check anywhere before the call in the caller's function
            for check in parsed.checks:
                node = check.node
                if (hook in check.hooks and id(function) in check.within
                        and getattr(node, "lineno", line + 1) <= line and _is_check(node, hook)):
                    return Shim("signature-check", path, getattr(node, "lineno", line),
                                _short(node))
        return self.adapter(path, hook)

    def adapter(self, path: str, hook: str) -> Shim | None:
        """A function of ``path`` that checks ``hook``'s signature and assigns the hook."""
        parsed = self._file(path)
        if parsed.tree is None:
            return None
        functions = {id(a): a for c in parsed.checks if hook in c.hooks
                     for a in self._ancestors(parsed, c.node)
                     if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for node in ast.walk(parsed.tree):
            if id(node) not in functions or not isinstance(
                    node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for inner in ast.walk(node):
                if _assigns(inner, hook):
                    return Shim("adapter", path, getattr(inner, "lineno", node.lineno),
                                _short(inner))
        return None

    def _keyword_checks(self, path: str, hook: str) -> list[KeywordCheck]:
        parsed = self._file(path)
        if parsed.tree is None:
            return []
        known = parsed.keyword_checks.get(hook)
        if known is not None:
            return known
        found: list[KeywordCheck] = []
        flags = self._flags(path, hook)
        if flags or any(hook in c.hooks for c in parsed.checks):
            for node in ast.walk(parsed.tree):
                if not (isinstance(node, ast.Compare) and len(node.ops) == 1
                        and isinstance(node.ops[0], (ast.In, ast.NotIn))
                        and isinstance(node.left, ast.Constant)
                        and isinstance(node.left.value, str)):
                    continue
                if self._inspects(parsed, node.comparators[0], hook) is None and not any(
                        isinstance(n, ast.Name) and n.id in flags
                        for n in ast.walk(node.comparators[0])):
                    continue
                found.append(KeywordCheck(node.left.value, hook, path, node.lineno,
                                          self._scope(parsed, node), _short(node)))
        parsed.keyword_checks[hook] = found
        return found

    def _ancestors(self, parsed: _File, node: ast.AST) -> Iterator[ast.AST]:
        current = parsed.parents.get(id(node))
        while current is not None:
            yield current
            current = parsed.parents.get(id(current))

    def _scope(self, parsed: _File, node: ast.AST) -> str:
        """The qualified name of the class ``node`` is in (methods' classes, outermost first)."""
        names = [a.name for a in self._ancestors(parsed, node) if isinstance(a, ast.ClassDef)]
        return ".".join(reversed(names))


@dataclass(frozen=True)
class KeywordAdapter:
    """A function that passes ``keyword`` only to callables that take it, whatever they are:
    ``if func_supports_parameter(conv, "context"): conv = partial(conv, context={})`` (Django
    2.x, ``SQLCompiler.get_converters``). When a release drops it, the callables it fed
    ``keyword`` get nothing for it."""

    keyword: str
    path: str
    line: int
    function: str  # qualified name of the function (``SQLCompiler.get_converters``)
    source: str


def keyword_adapters(data: bytes, path: str, keyword: str) -> list[KeywordAdapter]:
    """The functions of ``data`` that check whether a callable takes ``keyword`` (an inspector
    given the name ``"keyword"``: ``func_supports_parameter(f, "keyword")``, or ``"keyword" in
    <inspector>(f).parameters``) and pass ``keyword=`` in a call of their own. A file that
    does not parse has none."""
    word = keyword.encode()
    if b"'" + word + b"'" not in data and b'"' + word + b'"' not in data:
        return []
    try:
        tree = parse_quietly(data, path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    found: list[KeywordAdapter] = []

    def visit(node: ast.AST, names: tuple[str, ...]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, (*names, child.name))
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qualname = (*names, child.name)
                check = _keyword_check_in(child, keyword)
                if check is not None and any(
                        isinstance(n, ast.Call) and any(k.arg == keyword for k in n.keywords)
                        for n in ast.walk(child)):
                    found.append(KeywordAdapter(keyword, path, check.lineno,
                                                ".".join(qualname), _short(check)))
                visit(child, qualname)

    visit(tree, ())
    return found


def _keyword_check_in(function: ast.AST, keyword: str) -> ast.expr | None:
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and _inspector(node.func) and any(
                isinstance(a, ast.Constant) and a.value == keyword
                for a in (*node.args, *(k.value for k in node.keywords))):
            return node
        if (isinstance(node, ast.Compare) and len(node.ops) == 1
                and isinstance(node.ops[0], (ast.In, ast.NotIn))
                and isinstance(node.left, ast.Constant) and node.left.value == keyword
                and any(isinstance(n, ast.Call) and _inspector(n.func)
                        for n in ast.walk(node.comparators[0]))):
            return node
    return None


def _catches_type_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any((dotted_name(k) or "").rsplit(".", 1)[-1] in _CATCH_ALL for k in kinds)


def _assigns(node: ast.AST, hook: str) -> bool:
    """``x.hook = ...`` or ``setattr(x, "hook", ...)``."""
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return any(isinstance(t, ast.Attribute) and t.attr == hook for t in targets)
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "setattr" and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant) and node.args[1].value == hook)


__all__ = ["KeywordAdapter", "KeywordCheck", "Shim", "ShimFinder", "inspects", "keyword_adapters"]
