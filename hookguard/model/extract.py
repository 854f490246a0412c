"""Build a :class:`FileRecord` from source bytes with the stdlib ``ast``.

This is the hot path of a cold run, so it walks each tree once and keeps only what the rules
need. It imports nothing heavy: parser worker processes import this module alone.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import warnings
import zlib
from array import array
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from functools import partial
from typing import Any, cast

from hookguard.model.records import (
    Assignment,
    CallSite,
    ClassRecord,
    FileRecord,
    MethodKind,
    MethodRecord,
    Param,
    ParamKind,
    method_mentions,
)
from hookguard.model.refusals import may_refuse, probe_lines, refused_names

_OVERRIDE_DECORATORS = frozenset({"override", "overrides"})
_PROPERTY_DECORATORS = frozenset({"property", "cached_property", "abstractproperty"})
_REFLECTIVE_CALLS = frozenset({"getattr", "hasattr", "setattr", "delattr", "methodcaller"})
_SUPPRESS = re.compile(r"#\s*hookguard:\s*ignore(?:\[([A-Za-z0-9_,\s-]+)\])?")
MAX_BODY_LINES = 256
SKETCH_SIZE = 24


def walk(root: ast.AST, prune: frozenset[int] | set[int] = frozenset()) -> Iterator[ast.AST]:
    """Every node under ``root`` (itself included), in no particular order.

    About twice as fast as :func:`ast.walk`: a plain stack, and expression contexts
    (``Load``/``Store``) are skipped. The ``body`` of nodes whose ``id`` is in ``prune`` is not
    entered (methods the scanner has already visited).
    """
    stack = [root]
    pop, push, node_type = stack.pop, stack.append, ast.AST
    while stack:
        node = pop()
        yield node
        pruned = id(node) in prune
        for name in node._fields:
            if name == "ctx" or (pruned and name == "body"):
                continue
            value = getattr(node, name, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, node_type):
                        push(item)
            elif isinstance(value, node_type):
                push(value)


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def statements(root: ast.AST) -> Iterator[ast.AST]:
    """``root`` and every statement under it (with the ``except`` handlers and ``case``
    clauses that hold some), in no particular order: the lists of statements only, never an
    expression, which holds none. What :func:`walk` would find of them, at a fraction of
    the nodes."""
    stack = [root]
    pop, extend = stack.pop, stack.extend
    while stack:
        node = pop()
        yield node
        for field in _BLOCKS:
            value = getattr(node, field, None)
            if type(value) is list:
                extend(value)


def dotted_name(node: ast.expr) -> str | None:
    """``a.b.c`` for a Name/Attribute chain; the subscripted value for ``Generic[T]``."""
    if isinstance(node, ast.Subscript):
        return dotted_name(node.value)
    if isinstance(node, ast.Call):  # ``with_metaclass(Meta, Base)``-style factories: unnamed
        return None
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def annotation_name(node: ast.expr) -> str | None:
    """The class an annotation names: ``Policy``, ``mod.Policy`` or ``"Policy"``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value.strip()
        return text if all(p.isidentifier() for p in text.split(".")) else None
    return dotted_name(node)


def resolve_relative(module: str, is_package: bool, level: int, target: str | None) -> str:
    """The absolute module named by ``from <level dots><target> import ...`` inside ``module``."""
    parts = module.split(".") if module else []
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)] if level - 1 <= len(parts) else []
    if target:
        parts.append(target)
    return ".".join(parts)


def suppressions(text: str) -> dict[int, frozenset[str]]:
    """Map line number to the rule names its ``# hookguard: ignore[...]`` comment names.

    A bare ``# hookguard: ignore`` maps to ``{"*"}``.
    """
    found: dict[int, frozenset[str]] = {}
    if "hookguard:" not in text:
        return found
    for number, line in enumerate(text.splitlines(), start=1):
        match = _SUPPRESS.search(line)
        if match:
            names = match.group(1)
            found[number] = (
                frozenset(n.strip() for n in names.split(",") if n.strip())
                if names
                else frozenset({"*"})
            )
    return found


def _params(args: ast.arguments) -> tuple[Param, ...]:
    params: list[Param] = []
    positional = [*args.posonlyargs, *args.args]
    first_default = len(positional) - len(args.defaults)
    for index, arg in enumerate(positional):
        kind = (
            ParamKind.POSITIONAL_ONLY
            if index < len(args.posonlyargs)
            else ParamKind.POSITIONAL_OR_KEYWORD
        )
        params.append(Param(arg.arg, kind, index >= first_default))
    if args.vararg:
        params.append(Param(args.vararg.arg, ParamKind.VAR_POSITIONAL, False))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        params.append(Param(arg.arg, ParamKind.KEYWORD_ONLY, default is not None))
    if args.kwarg:
        params.append(Param(args.kwarg.arg, ParamKind.VAR_KEYWORD, False))
    return tuple(params)


def _string_prefix(node: ast.expr) -> str | None:
    """The constant prefix of a computed attribute name: ``f"on_{x}"``, ``"on_" + x``."""
    if isinstance(node, ast.JoinedStr) and node.values:
        head = node.values[0]
        if isinstance(head, ast.Constant) and isinstance(head.value, str):
            return head.value
        return ""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        left = node.left
        if isinstance(left, ast.Constant) and isinstance(left.value, str):
            return left.value.split("%")[0] if isinstance(node.op, ast.Mod) else left.value
        return _string_prefix(left) if isinstance(node.op, ast.Add) else None
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
        and isinstance(node.func.value, ast.Constant)
        and isinstance(node.func.value.value, str)
    ):
        return node.func.value.value.split("{")[0]
    return None


def body_line_hashes(lines: list[str], start: int, end: int) -> tuple[int, ...]:
    """A bottom-k sketch of the body: the smallest :data:`SKETCH_SIZE` CRC32s of its stripped,
    non-blank, non-comment lines. Two sketches estimate the Jaccard similarity of two bodies
    in a fixed, small size (a record must not grow with its methods' length)."""
    hashes: set[int] = set()
    for line in lines[start - 1 : min(end, start - 1 + MAX_BODY_LINES)]:
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            hashes.add(zlib.crc32(stripped.encode()))
    return tuple(sorted(hashes)[:SKETCH_SIZE])


class _FileReferences:
    """Names a file uses on receivers other than ``self``: attributes and reflective lookups."""

    def __init__(self) -> None:
        self.attrs: set[str] = set()
        self.strings: set[str] = set()
        self.prefixes: set[str] = set()
        self.literals: set[str] = set()
        self.dynamic = False  # ``getattr(obj, name)`` with a variable: any literal may be it
        # ``hint = "_eval_expand_" + hint`` anywhere in the file: a variable holding a prefix;
        # the variables given to getattr-like calls (matched once the file is walked)
        self.local_prefixes: dict[str, str] = {}
        self.looked_up: set[str] = set()
        # ``name.attr`` on a plain name, by name: ``sys.modules`` on an imported module says
        # nothing about any class's ``modules`` (see :meth:`attributes`)
        self.on_names: dict[str, set[str]] = {}
        # ``ss = np.random.SeedSequence(...)``: the names assigned (one name, at module level or
        # in a function) the result of calling through an imported name, with those names;
        # how many such assignments; and the names assigned anything else
        self.made_by: dict[str, set[str]] = {}
        self.made_count: dict[str, int] = {}
        self.rebound: set[str] = set()
        # ``setattr(Scheduler, name, method)`` with a computed name: the class's names, as written
        self.opened: set[str] = set()

    def attributes(self, modules: Collection[str]) -> frozenset[str]:
        """The attribute names used on receivers other than ``self``, less those used only on
        the names in ``modules`` (bound by ``import x``)."""
        found = set(self.attrs)
        for name, attrs in self.on_names.items():
            if name not in modules:
                found |= attrs
        return frozenset(found)

    def computed_prefixes(self) -> frozenset[str]:
        """Prefixes written inline, and those held by a variable a lookup was given."""
        held = {self.local_prefixes[n] for n in self.looked_up if n in self.local_prefixes}
        return frozenset(self.prefixes | held)

    def visit(self, node: ast.AST) -> None:
        kind = type(node)  # exact types: AST classes are never subclassed, and this is hot
        if kind is ast.Attribute:
            self.attribute(node)  # type: ignore[arg-type]
        elif kind is ast.Constant:
            value = node.value  # type: ignore[attr-defined]
            if type(value) is str and value.isidentifier():
                self.literals.add(value)
        elif kind is ast.Call:
            self.call(node)  # type: ignore[arg-type]
        elif kind is ast.Assign:
            self.assign(node)  # type: ignore[arg-type]

    def assign(self, node: ast.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target = node.targets[0].id
            prefix = _string_prefix(node.value)
            if prefix:
                self.local_prefixes[target] = prefix
            root = _call_root(node.value)
            if root is None:
                self.rebound.add(target)
            else:
                self.made_by.setdefault(target, set()).add(root)
                self.made_count[target] = self.made_count.get(target, 0) + 1

    def instance_attributes(
        self, tree: ast.AST, modules: Collection[str], imports: Mapping[str, str]
    ) -> dict[str, set[str]]:
        """Attributes used only on names that hold what a call through an imported module
        returned (``ss = np.random.SeedSequence(...); ss.spawn(2)``), by the top package of
        that module: they name a method of whatever that package builds, which is no class of
        the checkout when the package is not in it. Taken out of ``on_names``."""
        candidates = {
            name for name, roots in self.made_by.items()
            if name in self.on_names and name not in modules and name not in self.rebound
            and roots <= set(modules)
        }
        if not candidates:
            return {}
        stores = _count_stores(tree, candidates)
        found: dict[str, set[str]] = {}
        for name in candidates:
            if stores.get(name, 0) != self.made_count[name]:
                continue
            packages = {imports.get(root, root).split(".")[0] for root in self.made_by[name]}
            if len(packages) == 1:
                found.setdefault(packages.pop(), set()).update(self.on_names.pop(name))
        return found

    def attribute(self, node: ast.Attribute) -> None:
        value = node.value
        if type(value) is ast.Name:
            name = value.id
            if name != "self" and name != "cls":
                attrs = self.on_names.get(name)
                if attrs is None:
                    attrs = self.on_names[name] = set()
                attrs.add(node.attr)
        elif type(value) is ast.Attribute:
            # ``torch.multiprocessing.spawn``: a chain of lower-case names from a plain name is
            # a module path when that name is an imported module (kept by it, as above);
            # ``pkg.Base.hook`` or ``self.model.spawn`` name a class's attribute
            root: ast.expr = value
            while isinstance(root, ast.Attribute) and root.attr[:1].islower():
                root = root.value
            if isinstance(root, ast.Name) and root.id not in ("self", "cls"):
                attrs = self.on_names.get(root.id)
                if attrs is None:
                    attrs = self.on_names[root.id] = set()
                attrs.add(node.attr)
            else:
                self.attrs.add(node.attr)
        elif not _is_super_call(value):
            self.attrs.add(node.attr)

    def call(self, node: ast.Call) -> None:
        if not node.args:
            return
        func = node.func
        kind = type(func)
        name = func.id if kind is ast.Name else (  # type: ignore[attr-defined]
            func.attr if kind is ast.Attribute else None  # type: ignore[attr-defined]
        )
        if name in _REFLECTIVE_CALLS:
            self._reflective(name, node.args)

    def _reflective(self, name: str, args: list[ast.expr]) -> None:
        receiver = args[0]
        if isinstance(receiver, ast.Name) and receiver.id in ("self", "cls"):
            return  # resolved per class: see _MethodScanner._reflective
        arg = args[0] if name == "methodcaller" else (args[1] if len(args) > 1 else None)
        if arg is None:
            return
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            self.strings.add(arg.value)
        elif isinstance(arg, (ast.Name, ast.Attribute, ast.Subscript)):
            self.dynamic = True
            if name == "setattr" and len(args) > 2:
                target = dotted_name(receiver)
                if target is not None:
                    self.opened.add(target)
            if isinstance(arg, ast.Name):
                self.looked_up.add(arg.id)
        else:
            prefix = _string_prefix(arg)
            if prefix is not None:
                self.prefixes.add(prefix)


class _MethodScanner:
    """One pass over a method body: ``self`` assignments, reads and hook-relevant calls."""

    def __init__(
        self,
        self_name: str | None,
        cls_names: frozenset[str],
        file_refs: _FileReferences,
        annotations: Mapping[str, str] | None = None,
    ) -> None:
        self.file_refs = file_refs
        self.annotations = annotations or {}  # parameter -> annotated class name
        self.members: dict[str, str | None] = {}  # ``self.x`` -> the class it holds, if known
        self.constructed: dict[str, set[str]] = {}  # ``self.x = X(...)``: x -> {"X()", ...}
        self.self_name = self_name
        self.receivers = cls_names | ({self_name} if self_name else frozenset())
        self.assigns: list[Assignment] = []
        self.reads: set[str] = set()
        self.calls: list[CallSite] = []
        self.refs: set[str] = set()
        # ``self.X`` loaded other than as a call's callee (``show_callback=self.on_show``): the
        # method handed to other code as a value
        self.handed: set[str] = set()
        self.callees: set[int] = set()  # ids of the ``self.X`` nodes that are called
        self.prefixes: set[str] = set()
        self.guarded: set[str] = set()
        self.looked_up: set[str] = set()  # variables given to getattr(self, <variable>)
        self.rebound: set[str] = set()  # variables given to setattr(self, <variable>, ...)
        self.local_prefixes: dict[str, str] = {}  # ``name = "_print_" + kind``
        self.narrowed: dict[str, str] = {}  # ``if isinstance(target, Layer):`` target -> Layer
        self.exits: tuple[str, ...] = ()  # early exits passed so far in the method's own body
        # the tests of the branches around the statement walked (``if``, ``while``, ``except``,
        # ``case``), innermost last, whatever they read: a call there runs only when it holds
        self.branches: list[_Test] = []
        self.refuses = False  # ``raise NotImplementedError`` somewhere in the method's own body
        self.typed_funcs: set[int] = set()  # ids of the callees of calls on narrowed names

    def scan(self, body: Iterable[ast.stmt]) -> None:
        exits: list[str] = []
        for stmt in body:
            self._stmt(stmt, None)
            if isinstance(stmt, ast.If) and _exits(stmt) and self._mentions_self(stmt):
                exits.append(ast.unparse(stmt.test))
                self.exits = tuple(exits)  # what the calls after it run past

    def _branch(self, test: Callable[[], str], body: Iterable[ast.stmt],
                condition: str | None) -> None:
        self.branches.append(_Test(test))
        for child in body:
            self._stmt(child, condition)
        self.branches.pop()

    def _stmt(self, stmt: ast.stmt, condition: str | None) -> None:
        if isinstance(stmt, ast.While):
            self._expr(stmt.test, condition)
            self._branch(partial(ast.unparse, stmt.test), stmt.body, condition)
            for child in stmt.orelse:
                self._stmt(child, condition)
            return
        if isinstance(stmt, _TRY):
            tried = cast(ast.Try, stmt)  # (``except*`` has the same fields)
            for child in (*tried.body, *tried.orelse, *tried.finalbody):
                self._stmt(child, condition)
            for handler in tried.handlers:
                if handler.type is not None:
                    self._expr(handler.type, condition)
                self._branch(partial(_raised, handler.type), handler.body, condition)
            return
        if isinstance(stmt, ast.Match):
            self._expr(stmt.subject, condition)
            for case in stmt.cases:
                if case.guard is not None:
                    self._expr(case.guard, condition)
                self._branch(partial(_matches, stmt.subject, case.pattern), case.body,
                             condition)
            return
        if isinstance(stmt, ast.If):
            self._expr(stmt.test, condition)
            test = ast.unparse(stmt.test) if _telling(stmt.test, self.receivers) else None
            inner = test if condition is None or test is None else f"{condition} and {test}"
            narrowed = _isinstance_narrowing(stmt.test)
            saved = {name: self.narrowed.get(name) for name in narrowed}
            self.narrowed.update(narrowed)
            self._branch(partial(ast.unparse, stmt.test), stmt.body, inner)
            for name, previous in saved.items():
                if previous is None:
                    self.narrowed.pop(name, None)
                else:
                    self.narrowed[name] = previous
            negated = None if test is None else f"not ({test})"
            inner_else = (
                negated if condition is None or negated is None else f"{condition} and {negated}"
            )
            if stmt.orelse:
                self._branch(partial(_negated, stmt.test), stmt.orelse, inner_else)
            return
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            # Nested code may never run: it references names but sets no state here.
            visit = self.file_refs.visit
            for node in walk(stmt):
                self._reference(node)
                visit(node)
            return
        if isinstance(stmt, ast.Raise) and _not_implemented(stmt.exc):
            self.refuses = True
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(
            stmt.targets[0], ast.Name
        ):
            prefix = _string_prefix(stmt.value)  # ``method = "_print_" + cls.__name__``
            if prefix:
                self.local_prefixes[stmt.targets[0].id] = prefix
                self.file_refs.local_prefixes[stmt.targets[0].id] = prefix
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                for attr, line in self._self_targets(target):
                    self.assigns.append(
                        Assignment(attr, line, condition, isinstance(stmt, ast.AugAssign),
                                   _is_empty(stmt.value))
                    )
                if isinstance(target, ast.Attribute) and self._is_self(target.value):
                    self._member(target.attr, stmt)
        kind = type(stmt)
        fields = _CHILD_FIELDS.get(kind)
        if fields is None:
            fields = _CHILD_FIELDS[kind] = _child_fields(kind)
        for field in fields:  # (what ``ast.iter_child_nodes`` gives, in its order)
            value: Any = getattr(stmt, field, None)
            nodes: Iterable[Any] = value if type(value) is list else (value,)
            for node in nodes:
                if isinstance(node, ast.stmt):
                    self._stmt(node, condition)
                elif isinstance(node, ast.expr):
                    self._expr(node, condition)
                elif isinstance(node, ast.AST):  # (``with`` items, import aliases...)
                    for sub in ast.iter_child_nodes(node):
                        if isinstance(sub, ast.stmt):
                            self._stmt(sub, condition)
                        elif isinstance(sub, ast.expr):
                            self._expr(sub, condition)

    def _member(self, attr: str, stmt: ast.Assign | ast.AnnAssign | ast.AugAssign) -> None:
        """What ``self.attr`` holds after ``stmt``, when the code names a class for it."""
        held: str | None = None
        if isinstance(stmt, ast.AnnAssign):
            held = annotation_name(stmt.annotation)
        elif isinstance(stmt, ast.Assign):
            value = stmt.value
            if isinstance(value, ast.Call):
                held = dotted_name(value.func)
                if held is not None and not held.rsplit(".", 1)[-1][:1].isupper():
                    held = None  # a factory function: what it returns is not named
                elif held is not None:
                    held += "()"  # constructed here: exactly that class, no subclass
            elif isinstance(value, ast.Name):
                held = self.annotations.get(value.id)
        known = self.members.get(attr, held)
        self.members[attr] = held if known == held else None  # two classes: not known
        if held is not None and held.endswith("()"):
            self.constructed.setdefault(attr, set()).add(held)

    def _mentions_self(self, stmt: ast.If) -> bool:
        receivers = self.receivers
        return any(_on_receiver(node, receivers) for node in walk(stmt.test))

    def _self_targets(self, target: ast.expr) -> Iterator[tuple[str, int]]:
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                yield from self._self_targets(element)
        elif isinstance(target, ast.Starred):
            yield from self._self_targets(target.value)
        elif isinstance(target, ast.Attribute) and self._is_self(target.value):
            yield target.attr, target.lineno

    def _is_self(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id == self.self_name

    def _is_receiver(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id in self.receivers

    def _reference(self, node: ast.AST) -> None:
        if isinstance(node, ast.Attribute) and (
            self._is_receiver(node.value) or _is_super_call(node.value)
        ):
            self.refs.add(node.attr)

    def _expr(self, expr: ast.expr, condition: str | None) -> None:
        refs = self.file_refs
        literals, children = refs.literals, _CHILD_FIELDS
        stack: list[ast.AST] = [expr]
        pop, push, node_type = stack.pop, stack.append, ast.AST
        name_type, constant_type = ast.Name, ast.Constant
        while stack:  # the extractor's hottest loop: an inlined walk with exact-type dispatch
            node = pop()
            kind = type(node)
            if kind is ast.Attribute:
                if id(node) not in self.typed_funcs:  # a call on a narrowed name: kept as a call
                    refs.attribute(node)  # type: ignore[arg-type]
                self._attribute(node)  # type: ignore[arg-type]
            elif kind is ast.Call:
                refs.call(node)  # type: ignore[arg-type]
                self._any_call(node, condition)  # type: ignore[arg-type]
            elif kind is ast.Constant:
                value = node.value  # type: ignore[attr-defined]
                if type(value) is str and value.isidentifier():
                    refs.literals.add(value)
                continue
            elif kind is ast.Name:
                continue
            fields = children.get(kind)
            if fields is None:
                fields = children[kind] = _child_fields(kind)
            for name in fields:
                value = getattr(node, name, None)
                if type(value) is list:  # (names and constants: as in _scan_references)
                    for item in value:
                        item_kind = type(item)
                        if item_kind is name_type:
                            continue
                        if item_kind is constant_type:
                            literal = item.value
                            if type(literal) is str and literal.isidentifier():
                                literals.add(literal)
                        elif isinstance(item, node_type):
                            push(item)
                else:
                    item_kind = type(value)
                    if item_kind is name_type or value is None:
                        continue
                    if item_kind is constant_type:
                        literal = value.value
                        if type(literal) is str and literal.isidentifier():
                            literals.add(literal)
                    elif isinstance(value, node_type):
                        push(value)

    def _attribute(self, node: ast.Attribute) -> None:
        if _is_super_call(node.value):
            self.refs.add(node.attr)
        elif self._is_receiver(node.value):
            self.refs.add(node.attr)
            if isinstance(node.ctx, ast.Load):
                if self._is_self(node.value):
                    self.reads.add(node.attr)
                if id(node) not in self.callees:
                    self.handed.add(node.attr)

    def _any_call(self, node: ast.Call, condition: str | None) -> None:
        if isinstance(node.func, ast.Attribute):
            self.callees.add(id(node.func))  # (the call is walked before its callee)
            self._call(node, condition)
        elif (
            isinstance(node.func, ast.Name)
            and node.func.id in _REFLECTIVE_CALLS
            and len(node.args) > 1
            and self._is_receiver(node.args[0])
        ):
            self._reflective(node.args[1])
            literal = node.args[1]
            if isinstance(literal, ast.Name) and node.func.id in ("getattr", "setattr"):
                # ``setattr(self, name, shim(getattr(self, name)))``: a method replaced by an
                # adapter on the instance (registering components by name is not that).
                (self.rebound if node.func.id == "setattr" else self.looked_up).add(literal.id)
            if (
                isinstance(literal, ast.Constant)
                and isinstance(literal.value, str)
                and (node.func.id == "hasattr" or len(node.args) > 2)
            ):
                self.guarded.add(literal.value)

    def _reflective(self, name: ast.expr) -> None:
        """``getattr(self, ...)``: a reference that resolves within this class's family."""
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            self.refs.add(name.value)
        else:
            prefix = (self.local_prefixes.get(name.id) if isinstance(name, ast.Name)
                      else _string_prefix(name))
            if prefix:
                self.prefixes.add(prefix)

    def _call(self, call: ast.Call, condition: str | None) -> None:
        func = call.func
        assert isinstance(func, ast.Attribute)
        receiver: str | None = None
        explicit: str | None = None
        positional = sum(1 for a in call.args if not isinstance(a, ast.Starred))
        if self._is_self(func.value):
            receiver = "self"
        elif self._is_receiver(func.value):
            receiver = "cls"
        elif _is_super_call(func.value) and _super_of_own(func.value, self._is_self,
                                                           self._is_receiver):
            receiver = "super"
            super_args = func.value.args  # type: ignore[attr-defined]
            if super_args:  # ``super(X, self)``: the lookup starts after X
                explicit = dotted_name(super_args[0])
        elif isinstance(func.value, ast.Attribute) and self._is_self(func.value.value):
            receiver = "member"  # ``self.policy.attention(...)``
            explicit = func.value.attr
        elif isinstance(func.value, ast.Name) and func.value.id in self.narrowed:
            receiver = "typed"  # ``if isinstance(target, Layer): target.merge(...)``
            explicit = self.narrowed[func.value.id]
            # Not a reference to ``merge`` on any object: the call site says whose it is
            # (``References.typed_reaches``).
            self.typed_funcs.add(id(func))
        elif call.args and self._is_self(call.args[0]):
            explicit = dotted_name(func.value)
            if explicit is None:
                return
            receiver = "explicit"
            positional -= 1
        if receiver is None:
            return
        keywords = tuple(k.arg for k in call.keywords if k.arg is not None)
        self.calls.append(
            CallSite(
                receiver=receiver,
                name=func.attr,
                line=call.lineno,
                col=call.col_offset + 1,
                positional=positional,
                keywords=keywords,
                star_args=any(isinstance(a, ast.Starred) for a in call.args),
                star_kwargs=any(k.arg is None for k in call.keywords),
                condition=condition,
                explicit_base=explicit,
                exits=self.exits,
                branch=self.branches[-1].text() if self.branches else None,
            )
        )


_TRY: tuple[type[ast.stmt], ...] = (ast.Try, *((ast.TryStar,) if hasattr(ast, "TryStar")
                                               else ()))  # (``except*``: 3.11 on)


class _Test:
    """A branch's test, written out (``ast.unparse``) only when a call recorded under it
    asks, once: most branches hold no such call, and writing every test out cost diffusers'
    extraction 46 704 ``unparse`` calls."""

    __slots__ = ("_text", "_write")

    def __init__(self, write: Callable[[], str]) -> None:
        self._write = write
        self._text: str | None = None

    def text(self) -> str:
        if self._text is None:
            self._text = _shortened(self._write())
        return self._text


def _raised(kind: ast.expr | None) -> str:
    return f"{ast.unparse(kind) if kind is not None else 'anything'} is raised"


def _matches(subject: ast.expr, pattern: ast.pattern) -> str:
    return f"{ast.unparse(subject)} matches {ast.unparse(pattern)}"


def _negated(test: ast.expr) -> str:
    return f"not ({ast.unparse(test)})"


def _shortened(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _super_of_own(node: ast.expr, is_self: Callable[[ast.expr], bool],
                  is_cls: Callable[[ast.expr], bool]) -> bool:
    """``super()`` or ``super(X, self)`` / ``super(X, cls)``: bound to what the method was
    called on. ``super(X, instance)`` in a class method is bound to another object (PyBaMM's
    ``_from_json``: first contact, round 9), how the model does not follow."""
    args = node.args  # type: ignore[attr-defined]
    return len(args) != 2 or is_self(args[1]) or is_cls(args[1])


def _is_super_call(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "super"
    )


class _FileExtractor:
    def __init__(self, path: str, module: str, is_package: bool, text: str) -> None:
        self.record = FileRecord(path=path, module=module, is_package=is_package)
        self.lines = text.splitlines()
        self.has_fallbacks = _ELIF_HASATTR.search(text) is not None
        self.may_refuse = may_refuse(text)
        self.probe_lines = probe_lines(text) if self.may_refuse else None
        self.suppressed = suppressions(text)
        self.imports: dict[str, str] = {}
        self.star_imports: list[str] = []
        self.references = _FileReferences()
        self.module_bindings: set[str] = set()  # names ``import x`` / ``import x as y`` bind
        self.method_nodes: set[int] = set()  # ids of method defs the scanner has walked
        self.rebinding: set[int] = set()  # method defs that ``setattr(self, <name>, ...)``
        self.branches = 0  # depth of ``if``/``try``/loop blocks around the statement walked
        self.ambiguous: set[str] = set()

    def run(self, tree: ast.Module, classes_only: bool = False) -> FileRecord:
        module_names: set[str] = set()
        for stmt in tree.body:
            module_names.update(_bound_names(stmt))
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
            ):
                target = dotted_name(stmt.value) if not isinstance(stmt.value, ast.Call) else None
                if target is not None:
                    self.record.aliases[stmt.targets[0].id] = target
        self._walk_scope(tree.body, qualprefix="", in_function=False)
        record = self.record
        if classes_only:
            record.imports = self.imports
            return record
        self._scan_references(tree)
        for stmt in tree.body:  # ``sys.modules["pkg.old"] = new_module``: after the imports
            alias = _sys_modules_alias(stmt)
            if alias is not None:
                record.module_aliases[alias[0]] = self._qualify(alias[1])
        record.imports = self.imports
        record.ambiguous = frozenset(self.ambiguous)
        record.star_imports = tuple(self.star_imports)
        refs = self.references
        instances = refs.instance_attributes(tree, self.module_bindings, self.imports)
        record.instance_refs = tuple(sorted(
            (package, attr) for package, attrs in instances.items() for attr in attrs))
        record.attr_refs = refs.attributes(self.module_bindings)
        record.string_refs = frozenset(refs.strings | (refs.literals if refs.dynamic else set()))
        record.literals = frozenset(refs.literals)
        if self.has_fallbacks:
            fallbacks = hasattr_fallbacks(tree)
            if fallbacks.pairs:
                record.fallbacks = tuple(sorted(fallbacks.pairs))
                record.attr_refs -= fallbacks.attributes_only_there
                record.string_refs -= fallbacks.strings_only_there
                record.literals -= fallbacks.strings_only_there
        if self.may_refuse:
            # ``if callable(getattr(cb, "on_batch_end", None)): raise ...``: no lookup
            record.string_refs -= refused_names(tree, self.probe_lines)
        record.prefix_refs = refs.computed_prefixes()
        record.open_classes = frozenset(refs.opened)
        record.module_names = frozenset(module_names)
        self._needs(tree)
        return record

    def _needs(self, tree: ast.Module) -> None:
        """What the unconditional imports at module level need to load (see
        :attr:`FileRecord.needed_modules`); the ones in a ``try``, an ``if`` or a function may
        never run, or run with a fallback."""
        modules: list[tuple[str, int]] = []
        names: list[tuple[str, str, int]] = []
        for stmt in tree.body:
            if isinstance(stmt, ast.Import):
                modules.extend((alias.name, stmt.lineno) for alias in stmt.names)
            elif isinstance(stmt, ast.ImportFrom):
                depth = self.record.module.count(".") + (1 if self.record.is_package else 0)
                if stmt.level > depth:
                    # past the top of the package its name starts at: it runs under a longer
                    # name than the checkout gives it (a folder without ``__init__.py`` above)
                    continue
                if stmt.level:
                    module = resolve_relative(self.record.module, self.record.is_package,
                                              stmt.level, stmt.module)
                else:
                    module = stmt.module or ""
                if module:
                    modules.append((module, stmt.lineno))
                    names.extend((module, alias.name, stmt.lineno) for alias in stmt.names
                                 if alias.name != "*")
        self.record.needed_modules = tuple(modules)
        self.record.needed_names = tuple(names)

    # -- scopes ---------------------------------------------------------------------------
    def _walk_scope(self, body: list[ast.stmt], qualprefix: str, in_function: bool) -> None:
        for stmt in body:
            if type(stmt) in _SIMPLE_STATEMENTS:
                continue  # (most statements of a function: no class, import or block in them)
            if isinstance(stmt, ast.ClassDef):
                self._class(stmt, qualprefix, in_function)
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._walk_scope(stmt.body, f"{qualprefix}{stmt.name}.<locals>.", True)
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                self._import(stmt, overwrite=not in_function)
            elif isinstance(stmt, ast.If) and _is_type_checking(stmt.test):
                # Only the ``else`` runs: a class defined for type checkers does not exist, and
                # what the block imports only names annotations, never a runtime binding.
                self._walk_scope(stmt.orelse, qualprefix, in_function)
                for child in stmt.body:
                    if isinstance(child, (ast.Import, ast.ImportFrom)):
                        self._import(child, overwrite=False)
            elif isinstance(stmt, (ast.With, ast.AsyncWith)) and _expects_raise(stmt):
                # ``with pytest.raises(OverrideError): class B(A): ...``: a class the test
                # expects Python or a decorator to refuse; it never exists.
                self._walk_scope([s for s in stmt.body if not isinstance(s, ast.ClassDef)],
                                 qualprefix, in_function)
            else:
                self.branches += 1
                for block in _child_blocks(stmt):
                    self._walk_scope(block, qualprefix, in_function)
                self.branches -= 1

    def _import(self, stmt: ast.Import | ast.ImportFrom, overwrite: bool) -> None:
        def bind(local: str, target: str) -> None:
            known = self.imports.get(local)
            if known is not None and known != target and self.branches and overwrite:
                # ``if backend == "jax": from .jax import Trainer`` / ``elif``: which binding
                # holds depends on how the program runs.
                self.ambiguous.add(local)
            if overwrite or known is None:
                self.imports[local] = target

        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    bind(alias.asname, alias.name)
                    self.module_bindings.add(alias.asname)
                else:
                    head = alias.name.split(".")[0]
                    bind(head, head)
                    self.module_bindings.add(head)
            return
        if stmt.level:
            base = resolve_relative(
                self.record.module, self.record.is_package, stmt.level, stmt.module
            )
        else:
            base = stmt.module or ""
        for alias in stmt.names:
            if alias.name == "*":
                self.star_imports.append(base)
            else:
                bind(alias.asname or alias.name, f"{base}.{alias.name}" if base else alias.name)

    def _class(self, node: ast.ClassDef, qualprefix: str, in_function: bool) -> None:
        qualname = f"{qualprefix}{node.name}"
        bases = tuple(dotted_name(b) or "?" for b in node.bases)
        record = ClassRecord(
            qualname=qualname,
            name=node.name,
            line=node.lineno,
            col=node.col_offset + 1,
            bases=bases,
            local_scope=in_function,
        )
        self.record.classes.append(record)
        if any(b in ("type", "builtins.type") for b in bases):
            # A metaclass reads and rewrites class namespaces by name (``dct.pop("_on_dt_over")``,
            # backtrader: first contact, round 12): each name it spells is looked up by name.
            self.references.strings.update(
                n.value for n in ast.walk(node) if isinstance(n, ast.Constant)
                and isinstance(n.value, str) and n.value.isidentifier())
        attributes: set[str] = set()
        flags: dict[str, bool | None] = {}
        refs: set[str] = set()
        prefixes: set[str] = set()
        methods: dict[str, MethodRecord] = {}
        recursion: tuple[set[str], set[str]] = (set(), set())
        handed: set[str] = set()  # ``self.X`` values in its methods (X may be inherited)
        named: set[str] = set()  # names its body reads outside methods
        members: dict[str, str | None] = {}
        constructed: dict[str, set[str]] = {}
        returned: dict[str, str] = {}  # property -> the member it returns
        for stmt in _class_body(node.body):
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                held = annotation_name(stmt.annotation)
                known = members.get(stmt.target.id, held)
                members[stmt.target.id] = held if known == held else None
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                # classes a method defines (a test's own subclass): ``C.test.<locals>.MyNS``
                self._walk_scope(stmt.body, f"{qualname}.{stmt.name}.<locals>.", True)
                method = self._method(stmt, refs, prefixes, members, constructed, returned,
                                      recursion, handed)
                if method is None:
                    continue
                existing = methods.get(method.name)
                # A later ``def`` wins, as in Python, except a property's setter/deleter.
                if existing is None or existing.kind is not MethodKind.PROPERTY:
                    methods[method.name] = method
            elif isinstance(stmt, ast.ClassDef):
                attributes.add(stmt.name)
                self._class(stmt, f"{qualname}.", in_function)
            else:
                # ``readOnly = property(fget=isReadOnly)``: a method handed on as a value (a
                # docstring or ``NAME = <constant>`` loads no name: not walked)
                if not _loads_nothing(stmt):
                    named.update(n.id for n in ast.walk(stmt)
                                 if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))
                bound = list(_bound_names(stmt))
                flag = _literal_flag(stmt)
                for name in bound:
                    # bound once, to a literal: its truth is known; bound again: it is not
                    flags[name] = flag if name not in attributes and flag is not None else None
                attributes.update(bound)
        record.flags = {name: value for name, value in flags.items()
                        if value is not None and name not in methods}
        record.methods = methods
        record.mentions = frozenset(
            set().union(*map(method_mentions, methods.values())) - refs - methods.keys()
        )
        record.attributes = frozenset(attributes - methods.keys())
        record.self_refs = frozenset(refs)
        record.handed = frozenset(handed | (named & methods.keys()))
        record.recursive = frozenset(recursion[0] - recursion[1])
        record.self_prefixes = frozenset(prefixes)
        for prop, attr in returned.items():
            if prop not in members and attr in members:
                members[prop] = members[attr]
            if prop not in constructed and attr in constructed:
                constructed[prop] = constructed[attr]
        record.members = {attr: held for attr, held in members.items() if held is not None}
        record.constructed = {attr: tuple(sorted(held)) for attr, held in constructed.items()
                              if members.get(attr) is None}
        record.narrows = any(c.receiver == "typed" for m in methods.values() for c in m.calls)
        record.member_calls = frozenset(
            c.name for m in methods.values() for c in m.calls
            if c.receiver in ("member", "typed"))
        record.rebinds = any(
            id(stmt) in self.rebinding for stmt in _class_body(node.body)
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)))

    def _method(
        self,
        node: ast.FunctionDef | ast.AsyncFunctionDef,
        class_refs: set[str],
        class_prefixes: set[str],
        class_members: dict[str, str | None],
        class_constructed: dict[str, set[str]],
        returned: dict[str, str],
        recursion: tuple[set[str], set[str]],
        class_handed: set[str],
    ) -> MethodRecord | None:
        decorators = tuple(
            dotted_name(d.func if isinstance(d, ast.Call) else d) or "?"
            for d in node.decorator_list
        )
        last_parts = {self._qualify(d).rsplit(".", 1)[-1] for d in decorators}
        if "overload" in last_parts:
            return None
        if last_parts & {"staticmethod", "abstractstaticmethod"}:
            kind = MethodKind.STATIC
        elif last_parts & {"classmethod", "abstractclassmethod"}:
            kind = MethodKind.CLASS
        elif last_parts & _PROPERTY_DECORATORS or any(
            d.endswith((".setter", ".getter", ".deleter")) for d in decorators
        ):
            kind = MethodKind.PROPERTY
        else:
            kind = MethodKind.PLAIN
        params = _params(node.args)
        positional = [p for p in params if p.kind is not ParamKind.KEYWORD_ONLY]
        first = positional[0].name if positional and kind is not MethodKind.STATIC else None
        self_name = first if kind in (MethodKind.PLAIN, MethodKind.PROPERTY) else None
        cls_names = frozenset({first}) if kind is MethodKind.CLASS and first else frozenset()
        annotations = {
            a.arg: name
            for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)
            if a.annotation is not None and (name := annotation_name(a.annotation)) is not None
        }
        scanner = _MethodScanner(self_name, cls_names, self.references, annotations)
        scanner.scan(node.body)
        for attr, held in scanner.members.items():
            known = class_members.get(attr, held)
            class_members[attr] = held if known == held else None
        for attr, classes in scanner.constructed.items():
            class_constructed.setdefault(attr, set()).update(classes)
        if kind is MethodKind.PROPERTY and node.body:
            last = node.body[-1]  # ``return self._optimizer``: the property is that member
            if isinstance(last, ast.Return) and isinstance(last.value, ast.Attribute) and (
                    isinstance(last.value.value, ast.Name) and last.value.value.id == self_name):
                returned[node.name] = last.value.attr
        self.method_nodes.add(id(node))
        itself, others = recursion  # names used on self in their own method; elsewhere
        if node.name in scanner.refs:
            itself.add(node.name)
        others.update(scanner.refs - {node.name})
        class_refs.update(scanner.refs)
        class_handed.update(scanner.handed)
        class_prefixes.update(scanner.prefixes)
        if scanner.looked_up & scanner.rebound:
            self.rebinding.add(id(node))
        start = node.decorator_list[0].lineno if node.decorator_list else node.lineno
        suppressed: set[str] = set()
        for line in range(start, node.lineno + 1):
            suppressed.update(self.suppressed.get(line, ()))
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:] or body
        end = node.end_lineno or node.lineno
        return MethodRecord(
            name=node.name,
            line=node.lineno,
            col=node.col_offset + 1,
            end_line=end,
            def_line=node.lineno,
            kind=kind,
            params=params,
            decorators=decorators,
            is_override=bool(last_parts & _OVERRIDE_DECORATORS),
            is_abstract="abstractmethod" in last_parts,
            is_async=isinstance(node, ast.AsyncFunctionDef),
            body_digest=_digest(body_line_hashes(self.lines, body[0].lineno, end)),
            self_assigns=tuple(scanner.assigns),
            self_reads=frozenset(scanner.reads),
            calls=tuple(scanner.calls),
            suppressed=frozenset(suppressed),
            guarded=frozenset(scanner.guarded),
            raises_only=len(body) == 1 and isinstance(body[0], ast.Raise),
            skipped=any(d.rsplit(".", 1)[-1] == "skip" for d in decorators),
            no_op=all(_does_nothing(stmt) for stmt in node.body),
            refuses=scanner.refuses and not (len(body) == 1 and isinstance(body[0], ast.Raise)),
            returns=_returned_field(body, self_name),
            placeholder=len(body) == 1 and isinstance(body[0], ast.Raise)
            and _not_implemented(body[0].exc),
            hollow=_hollow(body, node.name, self_name),
        )

    def _qualify(self, dotted: str) -> str:
        """``dotted`` with its first name replaced by what it was imported as."""
        head, _, rest = dotted.partition(".")
        target = self.imports.get(head)
        if target is None:
            return dotted
        return f"{target}.{rest}" if rest else target

    # -- references -----------------------------------------------------------------------
    def _scan_references(self, tree: ast.Module) -> None:
        """Visit every node the method scanner has not: module code, class bodies, signatures.

        What :meth:`_FileReferences.visit` does over :func:`walk`, inlined: most of a file's
        nodes pass through here, and names and constants (most of those) have no children.
        """
        refs = self.references
        attribute, call, assign, literals = refs.attribute, refs.call, refs.assign, refs.literals
        prune = self.method_nodes
        children = _CHILD_FIELDS
        stack: list[ast.AST] = [tree]
        pop, push, node_type = stack.pop, stack.append, ast.AST
        name_type, constant_type = ast.Name, ast.Constant
        while stack:
            node = pop()
            kind = type(node)
            if kind is ast.Attribute:
                attribute(node)  # type: ignore[arg-type]
            elif kind is ast.Call:
                call(node)  # type: ignore[arg-type]
            elif kind is ast.Assign:
                assign(node)  # type: ignore[arg-type]
            fields = children.get(kind)
            if fields is None:
                fields = children[kind] = _child_fields(kind)
            pruned = id(node) in prune
            for name in fields:
                if pruned and name == "body":
                    continue
                value = getattr(node, name, None)
                # Names and constants are taken here, never pushed: they have no children
                # (a third of the nodes walked)
                if type(value) is list:
                    for item in value:
                        item_kind = type(item)
                        if item_kind is name_type:
                            continue
                        if item_kind is constant_type:
                            literal = item.value
                            if type(literal) is str and literal.isidentifier():
                                literals.add(literal)
                        elif isinstance(item, node_type):
                            push(item)
                else:
                    item_kind = type(value)
                    if item_kind is name_type or value is None:
                        continue
                    if item_kind is constant_type:
                        literal = value.value
                        if type(literal) is str and literal.isidentifier():
                            literals.add(literal)
                    elif isinstance(value, node_type):
                        push(value)


# node type -> the fields a walk enters: not ``ctx`` (Load/Store) nor ``op``/``ops`` (operators),
# nodes without fields or meaning to any walk here
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(kind: type) -> tuple[str, ...]:
    return tuple(f for f in kind._fields if f not in ("ctx", "op", "ops"))  # type: ignore[attr-defined]


def _count_stores(tree: ast.AST, candidates: set[str]) -> dict[str, int]:
    """How many times each of ``candidates`` is assigned (a ``Name`` stored) in ``tree``; a
    candidate bound any other way (a parameter, a ``def``/``class``/``except``/``match``
    name, ``global``/``nonlocal``) is taken out of ``candidates``.

    A walk like :meth:`_FileExtractor._scan_references`'s: names and constants, a third of the
    nodes, are looked at where they are met and never pushed.
    """
    stores: dict[str, int] = {}
    children = _CHILD_FIELDS
    stack: list[ast.AST] = [tree]
    pop, push, node_type = stack.pop, stack.append, ast.AST
    name_type, constant_type, store_type = ast.Name, ast.Constant, ast.Store
    while stack:
        node = pop()
        kind = type(node)
        if kind is ast.arg:
            candidates.discard(node.arg)  # type: ignore[attr-defined]
        elif kind in _NAMED_BINDINGS:
            candidates.discard(getattr(node, "name", None) or getattr(node, "rest", "") or "")
        elif kind is ast.Global or kind is ast.Nonlocal:
            candidates.difference_update(node.names)  # type: ignore[attr-defined]
        fields = children.get(kind)
        if fields is None:
            fields = children[kind] = _child_fields(kind)
        for field in fields:
            value: Any = getattr(node, field, None)
            items: Iterable[Any] = value if type(value) is list else (value,)
            for item in items:
                item_kind = type(item)
                if item_kind is name_type:
                    if type(item.ctx) is store_type:
                        name = item.id
                        stores[name] = stores.get(name, 0) + 1
                elif item_kind is not constant_type and isinstance(item, node_type):
                    push(item)
    return stores


@dataclasses.dataclass
class Fallbacks:
    """``if hasattr(c, "new"): c.new(...)`` / ``elif hasattr(c, "old"): c.old(...)``.

    The ``elif`` runs only for objects without ``new``: for a class that has it, the name
    ``old`` is looked up nowhere. ``pairs`` holds each ``(old, new)``; the two sets, the names
    that the file uses (as a string, as an attribute off ``self``) only inside such a branch.
    """

    pairs: set[tuple[str, str]] = dataclasses.field(default_factory=set)
    strings_only_there: frozenset[str] = frozenset()
    attributes_only_there: frozenset[str] = frozenset()


_ELIF_HASATTR = re.compile(r"elif\s+hasattr\(")  # no leading \b: a literal start is fast


def _hasattr_test(test: ast.expr) -> tuple[str, str] | None:
    """``hasattr(<receiver>, "<name>")`` -> (receiver as written, name)."""
    if (isinstance(test, ast.Call) and isinstance(test.func, ast.Name)
            and test.func.id == "hasattr" and len(test.args) == 2 and not test.keywords):
        name = test.args[1]
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            return ast.unparse(test.args[0]), name.value
    return None


def hasattr_fallbacks(tree: ast.AST) -> Fallbacks:
    """The ``hasattr`` fallbacks in ``tree`` (see :class:`Fallbacks`)."""
    found = Fallbacks()
    inside: set[int] = set()  # ids of the string and attribute nodes in fallback branches
    for node in statements(tree):
        if not isinstance(node, ast.If) or len(node.orelse) != 1:
            continue
        fallback = node.orelse[0]
        if not isinstance(fallback, ast.If):
            continue
        preferred, old = _hasattr_test(node.test), _hasattr_test(fallback.test)
        if preferred is None or old is None or preferred[0] != old[0] or preferred[1] == old[1]:
            continue
        found.pairs.add((old[1], preferred[1]))
        for part in (fallback.test, *fallback.body):
            for inner in walk(part):
                if (isinstance(inner, ast.Constant) and inner.value == old[1]) or (
                        isinstance(inner, ast.Attribute) and inner.attr == old[1]):
                    inside.add(id(inner))
    if not found.pairs:
        return found
    olds = {old for old, _ in found.pairs}
    strings: set[str] = set(olds)
    attributes: set[str] = set(olds)
    for node in walk(tree):
        if id(node) in inside:
            continue
        if isinstance(node, ast.Constant) and node.value in olds:
            strings.discard(node.value)
        elif isinstance(node, ast.Attribute) and node.attr in olds:
            attributes.discard(node.attr)
    found.strings_only_there = frozenset(strings)
    found.attributes_only_there = frozenset(attributes)
    return found


_NAMED_BINDINGS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler,
                   ast.MatchAs, ast.MatchStar, ast.MatchMapping)


def _call_root(value: ast.expr) -> str | None:
    """``np`` for ``np.random.SeedSequence(...)``: the name a call's dotted callable starts at
    (a call of a plain name has none: it may be a class of this file)."""
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute):
        return None
    root: ast.expr = value.func
    while isinstance(root, ast.Attribute):
        root = root.value
    return root.id if isinstance(root, ast.Name) else None


def _not_implemented(exc: ast.expr | None) -> bool:
    """``raise NotImplementedError`` or ``raise NotImplementedError(...)``."""
    if isinstance(exc, ast.Call):
        exc = exc.func
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"


def _returned_field(body: list[ast.stmt], self_name: str | None) -> str | None:
    """``x`` when the body (past its docstring) is ``return self.x``: an accessor."""
    if len(body) != 1 or not isinstance(body[0], ast.Return):
        return None
    value = body[0].value
    if (isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name)
            and value.value.id == self_name):
        return value.attr
    return None


_MODES = frozenset({"is_scripting", "is_tracing", "is_compiling", "TYPE_CHECKING"})


def _telling(test: ast.expr, receivers: Collection[str]) -> bool:
    """Whether an ``if`` test is written out as the condition of the calls under it, in one
    walk of the test: it reads the method's receiver or calls through ``super()``
    (:func:`_on_receiver`); it checks a mode of the program (``torch.jit.is_scripting()``
    and the like: TorchScript, tracing, compilation, type checking; the branch runs in
    another mode, not for every call); or it probes an object other than the receiver for a
    feature (``getattr(config, "target_parameters", [])``, ``hasattr(config, "x")``: the
    branch runs only for objects that have it, which the code expects some not to have)."""
    for node in walk(test):
        kind = type(node)
        if _on_receiver(node, receivers):
            return True
        if kind is ast.Name:  # (a mode named; a call's callee is walked too)
            if node.id in _MODES:  # type: ignore[attr-defined]
                return True
        elif kind is ast.Attribute:
            if node.attr in _MODES and dotted_name(node) is not None:  # type: ignore[attr-defined,arg-type]
                return True
        elif kind is ast.Call and _probes(node, receivers):  # type: ignore[arg-type]
            return True
    return False


def _on_receiver(node: ast.AST, receivers: Collection[str]) -> bool:
    """An attribute of the method's receiver (``self.x``), or a call of one through
    ``super()``."""
    kind = type(node)
    if kind is ast.Attribute:
        value = node.value  # type: ignore[attr-defined]
        return type(value) is ast.Name and value.id in receivers
    if kind is ast.Call:
        func = node.func  # type: ignore[attr-defined]
        return type(func) is ast.Attribute and _is_super_call(func.value)
    return False


def _probes(node: ast.Call, receivers: Collection[str]) -> bool:
    """``getattr(obj, "name", default)`` or ``hasattr(obj, "name")`` on an ``obj`` other
    than the receiver."""
    func, args = node.func, node.args
    return (isinstance(func, ast.Name) and func.id in ("getattr", "hasattr") and len(args) >= 2
            and isinstance(args[1], ast.Constant) and isinstance(args[1].value, str)
            and (func.id == "hasattr" or len(args) == 3)
            and not (isinstance(args[0], ast.Name) and args[0].id in receivers))


def _isinstance_narrowing(test: ast.expr) -> dict[str, str]:
    """The local names an ``if`` test proves to be instances of one named class:
    ``isinstance(target, Layer)``, also as one operand of an ``and``."""
    tests = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) \
        else [test]
    narrowed: dict[str, str] = {}
    for part in tests:
        if (
            isinstance(part, ast.Call)
            and isinstance(part.func, ast.Name)
            and part.func.id == "isinstance"
            and len(part.args) == 2
            and isinstance(part.args[0], ast.Name)
        ):
            held = dotted_name(part.args[1])
            if held is not None:
                narrowed[part.args[0].id] = held
    return narrowed


def _sys_modules_alias(stmt: ast.stmt) -> tuple[str, str] | None:
    """``sys.modules["pkg.old"] = pkg.new``: (the aliased module name, the module, as written)."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        return None
    target = stmt.targets[0]
    if not (isinstance(target, ast.Subscript) and dotted_name(target.value) == "sys.modules"):
        return None
    key, value = target.slice, dotted_name(stmt.value)
    if isinstance(key, ast.Constant) and isinstance(key.value, str) and value is not None:
        return key.value, value
    return None


def _is_type_checking(test: ast.expr) -> bool:
    """``if TYPE_CHECKING:`` or ``if typing.TYPE_CHECKING:``."""
    name = dotted_name(test)
    return name is not None and name.rsplit(".", 1)[-1] == "TYPE_CHECKING"


def _is_empty(value: ast.expr | None) -> bool:
    """``None``, ``False``, ``0``, ``""``, or an empty ``[]``/``{}``/``()``/``set()``/``dict()``."""
    if isinstance(value, ast.Constant):
        return not value.value
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        return not value.elts
    if isinstance(value, ast.Dict):
        return not value.keys
    return (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
            and value.func.id in ("list", "dict", "set", "tuple") and not value.args
            and not value.keywords)


def _exits(stmt: ast.If) -> bool:
    """``if <test>: ... return`` (or ``raise``, ``pytest.skip(...)``, ``self.skipTest(...)``)
    with no ``else``: what follows runs only when the test is false."""
    if stmt.orelse or not stmt.body:
        return False
    last = stmt.body[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    return (isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)
            and isinstance(last.value.func, ast.Attribute)
            and last.value.func.attr in ("skip", "skipTest"))


def _loads_nothing(stmt: ast.stmt) -> bool:
    """A docstring, or ``NAME = <constant>`` (targets all plain names): no name is read."""
    if isinstance(stmt, ast.Expr):
        return isinstance(stmt.value, ast.Constant)
    return isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant) and all(
        isinstance(target, ast.Name) for target in stmt.targets)


def _hollow(body: list[ast.stmt], name: str, self_name: str | None) -> bool:
    """Whether the body (past its docstring) does nothing of its own: it does nothing
    (:func:`_does_nothing`), or is one ``raise``, or returns a constant, a bare name
    (whoosh's ``return emptybytes``) or a field of ``self``, or hands its call to the method
    of the same name on another object (``return self._reader.order_by(*args, **kwargs)``,
    awaited or not)."""
    if all(_does_nothing(stmt) for stmt in body):
        return True
    if len(body) != 1:
        return False
    stmt = body[0]
    if isinstance(stmt, ast.Raise):
        return True
    value = stmt.value if isinstance(stmt, (ast.Return, ast.Expr)) else None
    if isinstance(value, ast.Await):
        value = value.value
    if isinstance(value, (ast.Constant, ast.Name)):
        return True  # a constant, a global or an argument as it came
    if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
        return value.value.id == self_name
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        receiver = value.func.value
        return value.func.attr == name and not (
            isinstance(receiver, ast.Name) and receiver.id == self_name)
    return False


def _does_nothing(stmt: ast.stmt) -> bool:
    """``pass``, ``...``, a docstring, or ``return``/``return None``."""
    if isinstance(stmt, ast.Pass):
        return True
    if isinstance(stmt, ast.Expr):
        return isinstance(stmt.value, ast.Constant)
    return isinstance(stmt, ast.Return) and (
        stmt.value is None or (isinstance(stmt.value, ast.Constant) and stmt.value.value is None)
    )


def _digest(hashes: tuple[int, ...]) -> bytes:
    return array("I", hashes).tobytes()


# Statements that hold no other statement and bind no class or import (exact types: AST
# classes are never subclassed).
_SIMPLE_STATEMENTS = frozenset({
    ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Assert, ast.Raise,
    ast.Pass, ast.Break, ast.Continue, ast.Delete, ast.Global, ast.Nonlocal,
})


_RAISES = frozenset({"raises", "assertRaises", "assertRaisesRegex", "assertRaisesRegexp"})


def _expects_raise(stmt: ast.With | ast.AsyncWith) -> bool:
    """``with pytest.raises(...)`` or ``with self.assertRaises(...)``: its body is expected
    to raise."""
    for item in stmt.items:
        call = item.context_expr
        if isinstance(call, ast.Call):
            name = dotted_name(call.func)
            if name is not None and name.rsplit(".", 1)[-1] in _RAISES:
                return True
    return False


def _child_blocks(stmt: ast.stmt) -> Iterator[list[ast.stmt]]:
    """Statement lists nested in a compound statement that runs in the same scope."""
    if isinstance(stmt, (ast.If, ast.For, ast.AsyncFor, ast.While)):
        yield stmt.body
        yield stmt.orelse
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        yield stmt.body
    elif isinstance(stmt, ast.Try) or (
        hasattr(ast, "TryStar") and type(stmt).__name__ == "TryStar"
    ):
        yield stmt.body  # type: ignore[attr-defined]
        for handler in stmt.handlers:  # type: ignore[attr-defined]
            yield handler.body
        yield stmt.orelse  # type: ignore[attr-defined]
        yield stmt.finalbody  # type: ignore[attr-defined]
    elif isinstance(stmt, ast.Match):
        for case in stmt.cases:
            yield case.body


def _literal_flag(stmt: ast.stmt) -> bool | None:
    """The truth of the constant ``stmt`` binds one name to (``_USE_BASE = False``), or None
    where it binds something else."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(
            stmt.targets[0], ast.Name):
        value: ast.expr | None = stmt.value
    elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        value = stmt.value
    else:
        return None
    return bool(value.value) if isinstance(value, ast.Constant) else None


def _class_body(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    for stmt in body:
        if isinstance(stmt, (ast.If, ast.Try)):
            for block in _child_blocks(stmt):
                yield from _class_body(block)
        else:
            yield stmt


def _bound_names(stmt: ast.stmt) -> Iterator[str]:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield stmt.name
    elif isinstance(stmt, ast.Assign):
        for target in stmt.targets:
            yield from _target_names(target)
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        yield from _target_names(stmt.target)
    elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
        for alias in stmt.names:
            if alias.name != "*":
                yield alias.asname or alias.name.split(".")[0]
    else:
        for block in _child_blocks(stmt):
            for child in block:
                yield from _bound_names(child)


def _target_names(target: ast.expr) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _target_names(element)


def parse_quietly(source: str | bytes, path: str = "<unknown>") -> ast.Module:
    """``ast.parse``, without the compiler's warnings about the audited code (an invalid escape
    like ``"\\d"`` is a ``SyntaxWarning`` on Python 3.12+): they are not hookguard's to print,
    and under ``-W error`` they would turn a valid file into a parse failure."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return ast.parse(source, filename=path)


def extract(
    path: str, module: str, is_package: bool, data: bytes, *, classes_only: bool = False,
    newer_grammar: bool = True,
) -> FileRecord:
    """Parse ``data`` and return its record; parse failures give a record with ``error`` set.
    ``classes_only``: the classes and imports alone, without the file's references to names
    elsewhere (what an old version read for history evidence needs: a third less work).
    ``newer_grammar``: whether source the running ``ast`` rejects may be newer Python, worth
    repairing (:mod:`hookguard.model.grammar`); not for a version older than that grammar."""
    try:
        if b"\0" in data:
            raise ValueError("file contains NUL bytes (binary, not Python source)")
        try:
            tree = parse_quietly(data, path)
        except SyntaxError as original:
            if not newer_grammar:
                raise
            try:
                text = _decode(data)
            except (SyntaxError, UnicodeDecodeError):
                raise original from None
            tree = _parse_newer_grammar(text, path, original)
        else:
            text = _decode(data)
        return _FileExtractor(path, module, is_package, text).run(tree, classes_only)
    except SyntaxError as exc:
        line = exc.lineno or 0
        return _error(path, module, is_package, f"syntax error: {exc.msg}", line)
    except UnicodeDecodeError as exc:
        return _error(path, module, is_package, f"cannot decode source: {exc.reason}", 0)
    except (ValueError, RecursionError, MemoryError) as exc:
        message = str(exc) or type(exc).__name__
        if isinstance(exc, RecursionError):
            message = "too deeply nested to analyse (recursion limit)"
        return _error(path, module, is_package, message, 0)


def _parse_newer_grammar(text: str, path: str, original: SyntaxError) -> ast.Module:
    """Parse a file the running ``ast`` rejects but newer Python accepts (see
    :mod:`hookguard.model.grammar`); raise the interpreter's own error for real syntax errors."""
    from hookguard.model.grammar import downgrade, repair

    for attempt in (downgrade, repair):
        older = attempt(text)
        if older is not None and older != text:
            try:
                return parse_quietly(older, path)
            except SyntaxError:
                continue
    raise original


def _decode(data: bytes) -> str:
    import io
    import tokenize

    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding)


def _error(path: str, module: str, is_package: bool, message: str, line: int) -> FileRecord:
    return FileRecord(
        path=path, module=module, is_package=is_package, error=message, error_line=line
    )
