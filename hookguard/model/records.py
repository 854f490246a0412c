"""Compact per-file records: the whole static model is built from these.

The leaves (parameters, call sites, assignments) are named tuples: they are created and
decoded by the hundred thousand, and tuples are the cheapest objects Python has for that.

A record holds what the rules need and nothing of the syntax tree, so records can be cached by
content hash, shipped between processes and merged into a :class:`~hookguard.model.project.Project`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, NamedTuple, TypeVar, overload


class MethodKind(str, Enum):
    PLAIN = "plain"
    STATIC = "static"
    CLASS = "class"
    PROPERTY = "property"


class ParamKind(str, Enum):
    POSITIONAL_ONLY = "positional-only"
    POSITIONAL_OR_KEYWORD = "positional-or-keyword"
    VAR_POSITIONAL = "var-positional"
    KEYWORD_ONLY = "keyword-only"
    VAR_KEYWORD = "var-keyword"


class Param(NamedTuple):
    name: str
    kind: ParamKind
    has_default: bool

    def render(self) -> str:
        prefix = {ParamKind.VAR_POSITIONAL: "*", ParamKind.VAR_KEYWORD: "**"}.get(self.kind, "")
        return f"{prefix}{self.name}{'=...' if self.has_default else ''}"

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return (tuple.__new__, (type(self), tuple(self)))  # unpickled in C, no Python __new__


class CallSite(NamedTuple):
    """A call ``<receiver>.<name>(...)`` made inside a method, with its argument shape."""

    # "self", "cls", "super", "explicit" (``Base.name(self, ...)``), "member"
    # (``self.<explicit_base>.name(...)``: a call on an object the instance holds) or "typed"
    # (``x.name(...)`` where ``isinstance(x, <explicit_base>)`` holds)
    receiver: str
    name: str
    line: int
    col: int
    positional: int  # positional arguments, not counting an explicit ``self``
    keywords: tuple[str, ...]
    star_args: bool  # ``*args`` at the call: positional count is a lower bound
    star_kwargs: bool  # ``**kwargs`` at the call: keywords are a lower bound
    condition: str | None = None  # source of the enclosing ``if`` test, when there is one
    explicit_base: str | None = None  # ``Base`` of ``Base.name(self, ...)``; a member's name
    # sources of the tests of ``if <test>: return`` (or raise, or a skip) before the call in
    # the method's own body: the call runs only when each of them is false
    exits: tuple[str, ...] = ()
    # the test of the innermost branch around the call (``if``, ``while``, ``except``,
    # ``case``), whatever it reads; None where it runs whenever its method does
    branch: str | None = None

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return (tuple.__new__, (type(self), tuple(self)))  # unpickled in C, no Python __new__


class Assignment(NamedTuple):
    attr: str
    line: int
    condition: str | None = None
    augmented: bool = False  # ``self.x += 1``: an update, not an initialisation
    empty: bool = False  # assigned None, False, 0, "" or an empty [], {}, (), set()

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return (tuple.__new__, (type(self), tuple(self)))  # unpickled in C, no Python __new__


@dataclass(slots=True)
class MethodRecord:
    name: str
    line: int
    col: int
    end_line: int
    def_line: int  # line of the ``def`` keyword (after decorators)
    kind: MethodKind
    params: tuple[Param, ...]
    decorators: tuple[str, ...]
    is_override: bool  # carries ``@override``
    is_abstract: bool
    is_async: bool
    body_digest: bytes  # bottom-k sketch of the body's lines (uint32s), for rename pairing
    self_assigns: tuple[Assignment, ...] = ()
    self_reads: frozenset[str] = frozenset()
    calls: tuple[CallSite, ...] = ()
    suppressed: frozenset[str] = frozenset()  # rules named in ``# hookguard: ignore[...]``
    guarded: frozenset[str] = frozenset()  # ``hasattr(self, "x")``/``getattr(self, "x", d)``
    raises_only: bool = False  # the body is a single ``raise``: the hook is disabled on purpose
    skipped: bool = False  # an unconditional ``@skip`` test decorator: the body never runs
    no_op: bool = False  # the body does nothing (``pass``, ``...``, a docstring, bare ``return``)
    # It raises ``NotImplementedError`` on some path (and does other work on another): it
    # supports only some configurations of its base.
    refuses: bool = False
    returns: str | None = None  # the body is ``return self.<returns>``: an accessor of that field
    placeholder: bool = False  # the body is a lone ``raise NotImplementedError``: to be filled
    # the body does nothing of its own: nothing, a lone ``raise``, ``return`` of a constant, a
    # bare name or a field of ``self``, or a forward to the same-named method of another object
    hollow: bool = False

    @property
    def bound_params(self) -> tuple[Param, ...]:
        """The parameters a call through an instance binds (``self``/``cls`` removed).

        ``__new__`` is a static method without the decorator: its callers pass ``cls``.
        """
        if self.kind is MethodKind.STATIC or not self.params or self.name == "__new__":
            return self.params
        first = self.params[0]
        if first.kind in (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD):
            return self.params[1:]
        return self.params

    @property
    def keyword_names(self) -> frozenset[str]:
        """The parameters a caller can pass by keyword (``**kwargs`` aside)."""
        return frozenset(p.name for p in self.bound_params
                         if p.kind in (ParamKind.POSITIONAL_OR_KEYWORD, ParamKind.KEYWORD_ONLY))

    @property
    def takes_any_keyword(self) -> bool:
        """It has ``**kwargs``."""
        return any(p.kind is ParamKind.VAR_KEYWORD for p in self.params)

    def signature(self) -> str:
        """``name(self, a, /, b=..., *, c=..., **kw)``, as written."""
        parts: list[str] = []
        star_needed = not any(p.kind is ParamKind.VAR_POSITIONAL for p in self.params)
        for index, param in enumerate(self.params):
            if param.kind is ParamKind.KEYWORD_ONLY and star_needed:
                parts.append("*")
                star_needed = False
            parts.append(param.render())
            following = self.params[index + 1] if index + 1 < len(self.params) else None
            if param.kind is ParamKind.POSITIONAL_ONLY and (
                following is None or following.kind is not ParamKind.POSITIONAL_ONLY
            ):
                parts.append("/")
        return f"{self.name}({', '.join(parts)})"


def _mentions(method: MethodRecord) -> Iterator[str]:
    yield method.name
    yield from (call.name for call in method.calls)
    yield from (assign.attr for assign in method.self_assigns)
    yield from method.self_reads
    yield from method.guarded


def method_mentions(method: MethodRecord) -> frozenset[str]:
    """The names ``method`` defines or uses on its class: itself, the methods it calls on
    ``self``/``cls``/``super()``, the fields it reads, guards and sets."""
    return frozenset(_mentions(method))


class UndecodableRecord(ValueError):
    """A cached record that passed the cache's checks (stamp, size, signature) and still does
    not decode: only a holder of the cache key can write one (a bug, or a broken build whose
    cache was saved). The run that meets it is run again without reading the cache
    (:func:`hookguard.engine.rebuilding_bad_records`)."""


class LazyMethods(Mapping[str, MethodRecord]):
    """A class's methods by name, decoded from the cache on the first read of any of them.

    The cache keeps a class's method names beside the encoded methods (see
    :mod:`hookguard.model.cache`), so ``name in methods`` and iteration cost nothing; a run that
    reads few classes never decodes the methods of the others. ``decode`` turns the encoded bytes
    into the records, in the order of ``names`` (or raises :class:`UndecodableRecord`); it only
    builds data, it cannot run code.
    """

    __slots__ = ("_data", "_decode", "_names", "_raw")

    def __init__(
        self, names: tuple[str, ...], raw: Any, decode: Callable[[Any], list[MethodRecord]]
    ) -> None:
        self._names: dict[str, None] = dict.fromkeys(names)
        self._raw: Any = raw  # a buffer: bytes, or a view of the cache file read
        self._decode = decode
        self._data: dict[str, MethodRecord] | None = None

    @property
    def encoded(self) -> Any:
        """The encoded methods while they have not been decoded (the cache writes them back
        as they are)."""
        return self._raw

    @property
    def loaded(self) -> dict[str, MethodRecord]:
        data = self._data
        if data is None:
            assert self._raw is not None
            methods = self._decode(self._raw)  # (raises UndecodableRecord)
            if len(methods) != len(self._names):
                raise UndecodableRecord("a cached method table does not match its names")
            data = self._data = dict(zip(self._names, methods, strict=True))
            self._raw = None  # one copy in memory: the records, or their encoding
        return data

    def __getitem__(self, name: str) -> MethodRecord:
        if name not in self._names:
            raise KeyError(name)
        return self.loaded[name]

    def get(self, name: str, default: MethodRecord | None = None) -> MethodRecord | None:  # type: ignore[override]
        if name not in self._names:
            return default
        return self.loaded[name]

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return self._names.keys() == other.keys() and dict(self.items()) == dict(
                other.items())
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return (dict, (self.loaded,))  # between processes: a plain dict

    def __repr__(self) -> str:
        return f"LazyMethods({list(self._names)})"


_Item = TypeVar("_Item")


class LazyTuple(Sequence[_Item]):
    """A field of a cached record that few runs read (a file's module-level imports, see
    :mod:`hookguard.model.loadable`), decoded from the cache on its first read; ``decode``
    only builds data (or raises :class:`UndecodableRecord`). Compares equal to the tuple it
    decodes to."""

    __slots__ = ("_data", "_decode", "_raw")

    def __init__(self, raw: Any, decode: Callable[[Any], tuple[_Item, ...]]) -> None:
        self._raw: Any = raw  # a buffer: bytes, or a view of the cache file read
        self._decode = decode
        self._data: tuple[_Item, ...] | None = None

    @property
    def encoded(self) -> Any:
        """The encoding while it has not been decoded (the cache writes it back as it is)."""
        return self._raw

    @property
    def loaded(self) -> tuple[_Item, ...]:
        data = self._data
        if data is None:
            data = self._data = self._decode(self._raw)  # (raises UndecodableRecord)
            self._raw = None
        return data

    @overload
    def __getitem__(self, index: int) -> _Item: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[_Item, ...]: ...
    def __getitem__(self, index: int | slice) -> _Item | tuple[_Item, ...]:
        return self.loaded[index]

    def __iter__(self) -> Iterator[_Item]:
        return iter(self.loaded)

    def __len__(self) -> int:
        return len(self.loaded)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (LazyTuple, tuple)):
            return self.loaded == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return (tuple, (self.loaded,))  # between processes: a plain tuple

    def __repr__(self) -> str:
        return repr(self.loaded)


@dataclass(slots=True)
class ClassRecord:
    qualname: str  # dotted within the module: ``Outer.Inner``, ``factory.<locals>.Local``
    name: str
    line: int
    col: int
    bases: tuple[str, ...]  # dotted names as written; ``?`` for expressions we cannot name
    methods: Mapping[str, MethodRecord] = field(default_factory=dict)
    attributes: frozenset[str] = frozenset()  # names bound in the class body that are not defs
    # class attributes bound once in the body, to a literal (``_USE_BASE = False``): its truth
    flags: dict[str, bool] = field(default_factory=dict)
    self_refs: frozenset[str] = frozenset()  # ``self.X``/``cls.X`` loads anywhere in the class
    # the ``self_refs`` made only inside the method of that name (``def f(self): return
    # self.f()``): they run once something else has called it, so they call no hook
    recursive: frozenset[str] = frozenset()
    # what it hands to other code as values, not calling them: ``self.X`` loaded other than
    # as a callee (``Dialog.__init__(self, show_callback=self.on_show)``; X may be inherited,
    # or a member), or one of its own methods named in the class body (``readOnly =
    # property(fget=isReadOnly)``)
    handed: frozenset[str] = frozenset()
    self_prefixes: frozenset[str] = frozenset()  # ``getattr(self, f"on_{x}")`` -> ``on_``
    local_scope: bool = False  # defined inside a function
    # The names its methods use on the class (see :func:`method_mentions`) that are neither
    # ``self_refs`` nor method names, kept apart to stay small: with those, what an incremental
    # run compares a change against without decoding the methods.
    mentions: frozenset[str] = frozenset()
    # ``self.<member>`` -> the class it holds, as written, where the code says so: an annotation
    # (``policy: Policy``), an annotated parameter stored as is (``def __init__(self, policy:
    # Policy): self.policy = policy``), both meaning that class or a subclass; or a constructor
    # call (``self.policy = Policy()``), written ``Policy()``: exactly that class.
    members: dict[str, str] = field(default_factory=dict)
    # ``self.<member>`` -> each class some assignment constructs into it, where the assignments
    # do not agree on one (``self.opt = build(...)`` here, ``self.opt = BMUF(self.opt)`` there):
    # on the path that runs that constructor, the member is exactly that class.
    constructed: dict[str, tuple[str, ...]] = field(default_factory=dict)
    rebinds: bool = False  # ``setattr(self, <computed name>, ...)``: methods replaced at run time
    narrows: bool = False  # some method calls through an ``isinstance``-narrowed name ("typed")
    member_calls: frozenset[str] = frozenset()  # names called on members or narrowed names

    def calls_on_self(self, name: str) -> bool:
        """Whether the class calls (or reads) ``name`` on ``self`` outside the method of that
        name: a call of a hook, where a method reaching its own name calls none."""
        return name in self.self_refs and name not in self.recursive


@dataclass(slots=True)
class FileRecord:
    """Everything the checker keeps of one source file."""

    path: str  # posix, relative to the repository root
    module: str  # dotted module name
    is_package: bool  # an ``__init__.py``
    imports: dict[str, str] = field(default_factory=dict)  # local name -> qualified target
    star_imports: tuple[str, ...] = ()
    ambiguous: frozenset[str] = frozenset()  # imported names bound differently in branches
    aliases: dict[str, str] = field(default_factory=dict)  # module-level ``Name = other.Name``
    module_aliases: dict[str, str] = field(default_factory=dict)  # ``sys.modules[name] = module``
    classes: list[ClassRecord] = field(default_factory=list)
    attr_refs: frozenset[str] = frozenset()  # ``x.NAME`` loads on receivers other than self/cls
    string_refs: frozenset[str] = frozenset()  # literal names given to getattr/hasattr/setattr
    literals: frozenset[str] = frozenset()  # every identifier-like string constant in the file
    # ``(old, new)``: ``if hasattr(o, "new"): ... elif hasattr(o, "old"): o.old(...)``, a lookup
    # of ``old`` only for objects without ``new`` (see :class:`~hookguard.model.extract.Fallbacks`)
    fallbacks: tuple[tuple[str, str], ...] = ()
    # ``(package, name)``: ``x.name`` only on names holding what a call into ``package``
    # returned (``ss = np.random.SeedSequence(...); ss.spawn(2)``); a reference to a class of
    # the checkout only when ``package`` is in it
    instance_refs: tuple[tuple[str, str], ...] = ()
    prefix_refs: frozenset[str] = frozenset()  # ``getattr(o, f"on_{x}")`` -> ``on_``
    # names (as written) of classes given methods by ``setattr(Cls, <computed name>, ...)``:
    # they may define any name at run time
    open_classes: frozenset[str] = frozenset()
    module_names: frozenset[str] = frozenset()  # names bound at module level
    # ``(module, line)``: each module an import at module level, outside any block, needs to
    # load (``import a.b`` and ``from a.b import c`` both need ``a.b``); the file cannot load
    # without it (see :mod:`hookguard.model.loadable`)
    needed_modules: Sequence[tuple[str, int]] = ()  # (a LazyTuple, read from the cache)
    # ``(module, name, line)``: each ``from module import name`` among those imports
    needed_names: Sequence[tuple[str, str, int]] = ()
    content_key: str = ""  # git blob id of the bytes the record was built from
    error: str | None = None  # one-line parse error; the record is otherwise empty
    error_line: int = 0
