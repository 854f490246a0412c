"""The whole-checkout model: classes resolved across modules, C3 MROs and subclass indexes.

Built from :class:`FileRecord` objects only, so it is cheap to rebuild from the cache.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter, deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from heapq import heappop, heappush
from itertools import accumulate

from hookguard.model.externals import external_defines
from hookguard.model.records import ClassRecord, FileRecord, MethodRecord

# Bases outside the checkout that define no overridable methods of their own.
EMPTY_EXTERNALS = frozenset(
    {
        "object",
        "abc.ABC",
        "typing.Generic",
        "typing.Protocol",
        "typing_extensions.Protocol",
        "typing_extensions.Generic",
    }
)
_MAX_ALIAS_DEPTH = 24
#: Most classes one method resolution order may hold (the class, its ancestors in the checkout
#: and the bases outside it). The longest in sympy and torch hold 12; a chain of 20,000
#: ``class C1(C0)`` lines in one 1 MB file would hold 200 million entries in all (each class
#: keeps its MRO, as CPython's ``__mro__`` does), and every rule walks them. A class past the
#: limit, and every class below it, gets the MRO ``(class, ?)``: what it inherits is unknown
#: to the rules, and it is left out of its bases' subclass lists, so no walk down a line
#: passes the cut either; one input error names the class where the line was cut. Its bases
#: stay as written (the names its line defines are still known, shared down the line: see
#: :meth:`Project._inherited`). The model then holds at most this many entries per class.
MAX_MRO = 128
UNKNOWN_BASE = "?"  # an ``External`` of this name: a base nothing is known about


@dataclass(frozen=True, slots=True)
class External:
    """A base class defined outside the checkout (``torch.nn.Module``), kept by name."""

    name: str

    @property
    def is_empty(self) -> bool:
        return self.name in EMPTY_EXTERNALS

    def may_define(self, name: str | None) -> bool:
        """Whether this class may define ``name`` (any method, when None)."""
        if self.is_empty:
            return False
        if name is None:
            return True
        return external_defines(self.name, name) is not False


@dataclass(eq=False, slots=True)
class ClassInfo:
    fq: str  # ``package.module.Outer.Inner``
    record: ClassRecord
    file: FileRecord

    @property
    def name(self) -> str:
        return self.record.name

    def defines(self, name: str) -> bool:
        return name in self.record.methods or name in self.record.attributes

    def method(self, name: str) -> MethodRecord | None:
        return self.record.methods.get(name)

    def __repr__(self) -> str:
        return f"ClassInfo({self.fq})"


Node = ClassInfo | External


@dataclass(frozen=True, slots=True)
class ModelError:
    path: str
    line: int
    message: str


@dataclass
class Project:
    files: dict[str, FileRecord]
    modules: dict[str, FileRecord] = field(default_factory=dict)
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    errors: list[ModelError] = field(default_factory=list)
    _bases: dict[str, tuple[Node, ...]] = field(default_factory=dict)
    _mro: dict[str, tuple[Node, ...]] = field(default_factory=dict)
    _subclasses: dict[str, list[ClassInfo]] = field(default_factory=dict)
    _top_packages: frozenset[str] = frozenset()
    _mirrors: dict[str, str] = field(default_factory=dict)  # module name -> what it mirrors
    _looked_up: dict[str, Node] = field(default_factory=dict)  # see :meth:`_lookup`
    _inherited_names: dict[str, frozenset[str]] = field(default_factory=dict)
    _inherited_refs: dict[str, frozenset[str]] = field(default_factory=dict)
    _aliases: Mapping[str, str] = field(default_factory=dict)  # as given to :meth:`build`
    _cut: set[str] = field(default_factory=set)  # classes past :data:`MAX_MRO` (see there)

    @classmethod
    def build(
        cls, records: Iterable[FileRecord], aliases: Mapping[str, str] | None = None
    ) -> Project:
        """The model of ``records``. ``aliases`` maps a module name to the module it mirrors
        (``pytorch_lightning`` -> ``lightning.pytorch``), as the files' own
        ``sys.modules[...] = ...`` assignments do."""
        project = cls(files={}, _aliases=dict(aliases or {}))
        full, imported_as = _namespace_names(records)
        named = _separate_copies(full)
        for record in sorted(named, key=lambda r: r.path):
            project.files[record.path] = record
            if record.error is not None:
                project.errors.append(ModelError(record.path, record.error_line, record.error))
                continue
            project.modules.setdefault(record.module, record)
            for klass in record.classes:
                fq = f"{record.module}.{klass.qualname}" if record.module else klass.qualname
                project.classes.setdefault(fq, ClassInfo(fq, klass, record))
        mirrors = {**imported_as, **(aliases or {})}
        for record in project.files.values():
            for alias, target in record.module_aliases.items():
                mirrors.setdefault(alias, target)
        project._mirrors = {a: t for a, t in mirrors.items() if a != t}
        project._top_packages = frozenset(m.split(".")[0] for m in project.modules)
        for info in project.classes.values():
            bases = project._resolve_bases(info)
            project._bases[info.fq] = bases
            for base in bases:
                if isinstance(base, ClassInfo):
                    project._subclasses.setdefault(base.fq, []).append(info)
        for info in project.classes.values():
            project.mro(info)
        project._drop_cut_edges()
        return project

    def mirrored_modules(self) -> frozenset[str]:
        """The module names that stand for others: ``sys.modules[name] = module`` in the
        checkout, the configuration's ``module_aliases``, names bound by import."""
        return frozenset(self._mirrors)

    def with_files(self, before: Iterable[FileRecord], after: Iterable[FileRecord]) -> Project:
        """The model of ``after``, for a project built from ``before``: the same model as
        :meth:`build` gives. Derived from this one, without resolving a name or linearising a
        class again, when only method bodies and members changed: every file that differs keeps
        its path, its name, its imports and aliases, its classes and their bases, and parses
        (see :func:`graph_inputs`). Otherwise built afresh. (``check`` builds the base and the
        head of a change; most changes are of that kind.)"""
        old = {r.path: r for r in before}
        new = {r.path: r for r in after}
        changed = [p for p, r in new.items() if old.get(p) is not r]
        if old.keys() != new.keys() or not changed or any(
            self.files.get(p) is not old[p] or old[p].error is not None
            or new[p].error is not None or graph_inputs(old[p]) != graph_inputs(new[p])
            for p in changed
        ):
            return Project.build(new.values(), self._aliases)
        derived = Project(files=dict(self.files), modules=dict(self.modules),
                          classes=dict(self.classes), errors=list(self.errors),
                          _top_packages=self._top_packages, _mirrors=self._mirrors,
                          _aliases=self._aliases, _cut=set(self._cut))
        swapped: dict[int, ClassInfo] = {}  # id(old ClassInfo) -> its new one
        for path in changed:
            was, now = old[path], new[path]
            derived.files[path] = now
            if derived.modules.get(now.module) is was:
                derived.modules[now.module] = now
            prefix = f"{now.module}." if now.module else ""
            for before_class, after_class in zip(was.classes, now.classes, strict=True):
                fq = f"{prefix}{after_class.qualname}"
                info = self.classes.get(fq)
                if info is not None and info.record is before_class:
                    swapped[id(info)] = derived.classes[fq] = ClassInfo(fq, after_class, now)

        def swap(node: Node) -> Node:
            return swapped.get(id(node), node)

        derived._bases = {fq: tuple(map(swap, b)) for fq, b in self._bases.items()}
        derived._mro = {fq: tuple(map(swap, m)) for fq, m in self._mro.items()}
        derived._subclasses = {
            fq: [swapped.get(id(c), c) for c in subs] for fq, subs in self._subclasses.items()}
        derived._looked_up = {name: swap(n) for name, n in self._looked_up.items()}
        return derived

    # -- name resolution --------------------------------------------------------------------
    def _resolve_bases(self, info: ClassInfo) -> tuple[Node, ...]:
        resolved: list[Node] = []
        for base in info.record.bases:
            if base == UNKNOWN_BASE:
                resolved.append(External(UNKNOWN_BASE))
                continue
            node = self.resolve_name(info.file, base, scope=info.record.qualname)
            if node is info:  # ``class S(S)``: the name still meant what it was bound to before
                node = self._resolve_in_file(info.file, base, "", 0, skip_own=True)
                if node is info:
                    node = External(base)
            if isinstance(node, External) and node.name.split(".")[0] in self._top_packages:
                self.errors.append(
                    ModelError(
                        info.file.path,
                        info.record.line,
                        f"cannot resolve base class {base!r} of {info.name} "
                        f"({node.name} is not defined in the checkout)",
                    )
                )
            resolved.append(node)
        return tuple(resolved)

    def resolve_name(self, file: FileRecord, dotted: str, scope: str = "") -> Node:
        """What ``dotted`` names inside ``file``, seen from the class or function ``scope``."""
        return self._resolve_in_file(file, dotted, scope, 0)

    def _resolve_in_file(
        self, file: FileRecord, dotted: str, scope: str, depth: int, skip_own: bool = False
    ) -> Node:
        head, _, rest = dotted.partition(".")
        tail = f".{rest}" if rest else ""
        prefix = f"{file.module}." if file.module else ""
        if head in file.ambiguous:
            return External(dotted)  # bound by one of several branches: which is unknown
        # Enclosing scopes first: a class in the same function, then module level.
        parts = scope.split(".")[:-1]
        while parts:
            candidate = f"{prefix}{'.'.join(parts)}.{head}"
            if candidate in self.classes:
                return self._lookup(candidate + tail, depth)
            parts.pop()
        if f"{prefix}{head}" in self.classes and not skip_own:
            return self._lookup(f"{prefix}{head}{tail}", depth)
        if head in file.imports:
            return self._lookup(file.imports[head] + tail, depth)
        if head in file.aliases and depth < _MAX_ALIAS_DEPTH:
            return self._resolve_in_file(file, file.aliases[head] + tail, "", depth + 1)
        for star in file.star_imports:
            if star not in self.modules:
                continue  # not in the checkout: nothing to follow (see _follow)
            node = self._lookup(f"{star}.{dotted}", depth)
            if isinstance(node, ClassInfo):
                return node
        return External(dotted)

    def _lookup(self, fq: str, depth: int) -> Node:
        """Follow re-exports (imports, aliases, star imports) until a class or the edge.

        Each name is followed once: star imports that re-export each other (``from .core
        import *`` everywhere) would otherwise branch at every step, and a cycle of them is
        the edge."""
        info = self.classes.get(fq)
        if info is not None:
            return info
        known = self._looked_up.get(fq)
        if known is not None:
            return known
        if depth >= _MAX_ALIAS_DEPTH:
            return External(fq)
        self._looked_up[fq] = External(fq)  # while it is followed: a cycle back here ends
        found = self._follow(fq, depth)
        self._looked_up[fq] = found
        return found

    def _follow(self, fq: str, depth: int) -> Node:
        for alias, target in self._mirrors.items():
            if fq.startswith(f"{alias}."):
                return self._lookup(f"{target}{fq[len(alias):]}", depth + 1)
        parts = fq.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = self.modules.get(".".join(parts[:cut]))
            if module is None:
                continue
            name, rest = parts[cut], parts[cut + 1 :]
            tail = "".join(f".{p}" for p in rest)
            if name in module.imports:
                return self._lookup(module.imports[name] + tail, depth + 1)
            if name in module.aliases:
                return self._resolve_in_file(module, module.aliases[name] + tail, "", depth + 1)
            for star in module.star_imports:
                # A module the checkout lacks holds nothing to follow; looked up, its name
                # would be cut at a parent again, one name longer each time: five such star
                # imports in a package took minutes and gigabytes to resolve one base.
                if star not in self.modules:
                    continue
                node = self._lookup(f"{star}.{name}{tail}", depth + 1)
                if isinstance(node, ClassInfo):
                    return node
            break
        return External(fq)

    # -- inheritance ------------------------------------------------------------------------
    def bases(self, info: ClassInfo) -> tuple[Node, ...]:
        return self._bases.get(info.fq, ())

    def mro(self, info: ClassInfo) -> tuple[Node, ...]:
        """The C3 linearisation; cycles and inconsistent hierarchies are reported, not raised."""
        done = self._mro
        cached = done.get(info.fq)
        if cached is not None:
            return cached
        if all(not isinstance(b, ClassInfo) or b.fq in done for b in self.bases(info)):
            done[info.fq] = linearised = self._linearise(info)  # most classes, built in order
            return linearised
        # Iterative post-order so deep hierarchies never hit the recursion limit.
        stack: list[tuple[ClassInfo, bool]] = [(info, False)]
        visiting: set[str] = set()
        while stack:
            current, expanded = stack.pop()
            if current.fq in self._mro:
                continue
            if expanded:
                visiting.discard(current.fq)
                self._mro[current.fq] = self._linearise(current)
                continue
            visiting.add(current.fq)
            stack.append((current, True))
            for base in self.bases(current):
                if isinstance(base, ClassInfo) and base.fq not in self._mro:
                    if base.fq in visiting:
                        self._report_cycle(current, base)
                        self._mro[base.fq] = (base,)
                        continue
                    stack.append((base, False))
        return self._mro[info.fq]

    def _report_cycle(self, child: ClassInfo, base: ClassInfo) -> None:
        self.errors.append(
            ModelError(
                child.file.path,
                child.record.line,
                f"cyclic inheritance: {child.fq} and {base.fq} inherit from each other",
            )
        )

    def _linearise(self, info: ClassInfo) -> tuple[Node, ...]:
        bases = self.bases(info)
        if self._cut and any(isinstance(b, ClassInfo) and b.fq in self._cut for b in bases):
            return self._cut_off(info, None)  # below a cut: unknown too, reported there
        if len(bases) == 1:  # single inheritance, most classes: C3 is the base's MRO
            base = bases[0]
            if not isinstance(base, ClassInfo):
                return (info, base)
            above = self._mro.get(base.fq, (base,))
            return (info, *above) if len(above) < MAX_MRO else self._cut_off(info, base)
        bases = _generic_dropped(bases, self._mro)
        sequences: list[list[Node]] = [
            list(self._mro.get(b.fq, (b,))) if isinstance(b, ClassInfo) else [b] for b in bases
        ]
        sequences.append(list(bases))
        # (counted before merging: the merge's steps are as many as the MRO's entries; no
        # more distinct ones than entries)
        if sum(map(len, sequences)) >= MAX_MRO and len(
                {n for seq in sequences for n in seq}) >= MAX_MRO:
            return self._cut_off(info, None)
        merged = _c3_merge(sequences)
        if merged is None:
            self.errors.append(
                ModelError(
                    info.file.path,
                    info.record.line,
                    f"inconsistent method resolution order for {info.fq}; using depth-first",
                )
            )
            merged = list(dict.fromkeys(n for seq in sequences for n in seq))
        return (info, *merged)

    def _cut_off(self, info: ClassInfo, base: ClassInfo | None) -> tuple[Node, ...]:
        """``info``'s MRO would hold over :data:`MAX_MRO` classes, or a base's was cut: its
        MRO is ``(info, ?)`` (see :data:`MAX_MRO`). Reported once per line, where it is cut."""
        if not any(isinstance(b, ClassInfo) and b.fq in self._cut for b in self.bases(info)):
            through = f" (through {base.fq})" if base is not None else ""
            self.errors.append(
                ModelError(
                    info.file.path,
                    info.record.line,
                    f"inheritance too deep: the method resolution order of {info.fq} would "
                    f"hold over {MAX_MRO} classes{through}; it and its subclasses are "
                    "analysed as if their bases were unknown",
                )
            )
        self._cut.add(info.fq)
        return (info, External(UNKNOWN_BASE))

    def _drop_cut_edges(self) -> None:
        """Take the classes cut at :data:`MAX_MRO` out of their bases' subclass lists, as
        their MROs left those bases: no walk down a line passes the cut."""
        if not self._cut:
            return
        for fq, subclasses in self._subclasses.items():
            if any(c.fq in self._cut for c in subclasses):
                self._subclasses[fq] = [c for c in subclasses if c.fq not in self._cut]

    def ancestors(self, info: ClassInfo) -> tuple[Node, ...]:
        return self.mro(info)[1:]

    def subclasses(self, info: ClassInfo) -> list[ClassInfo]:
        return self._subclasses.get(info.fq, [])

    def descendants(self, info: ClassInfo) -> Iterator[ClassInfo]:
        seen = {info.fq}
        queue = deque(self.subclasses(info))
        while queue:
            current = queue.popleft()
            if current.fq in seen:
                continue
            seen.add(current.fq)
            yield current
            queue.extend(self.subclasses(current))

    def defining_ancestor(self, info: ClassInfo, name: str) -> Node | None:
        """The first class after ``info`` in its MRO that defines ``name``, if known."""
        for node in self.ancestors(info):
            if isinstance(node, ClassInfo) and node.defines(name):
                return node
        return None

    def inherited_names(self, info: ClassInfo) -> frozenset[str]:
        """Names (methods and class attributes) that ``info``'s ancestors in the checkout
        define."""
        return self._inherited(info, self._inherited_names, _defined_names)

    def inherited_refs(self, info: ClassInfo) -> frozenset[str]:
        """Names ``info``'s ancestors in the checkout use on ``self``."""
        return self._inherited(info, self._inherited_refs, _self_refs)

    def _inherited(
        self,
        info: ClassInfo,
        cache: dict[str, frozenset[str]],
        own: Callable[[ClassInfo], frozenset[str]],
    ) -> frozenset[str]:
        """The union of ``own`` over ``info``'s ancestors, shared down a line of classes that
        add nothing: a 10,000-class chain costs linear time and memory, not quadratic. Below a
        cut (:data:`MAX_MRO`) the union stops growing: every class there shares the one above
        the cut (a chain whose every class adds a name would need the square of its length)."""
        found = cache.get(info.fq)
        if found is not None:
            return found
        pending = [info]
        waiting = {info.fq}  # on the stack, not yet computed: a base found here is a cycle
        while pending:  # bases first, without recursion
            current = pending[-1]
            bases = [b for b in self.bases(current) if isinstance(b, ClassInfo)
                     and b.fq not in cache and b.fq != current.fq]
            if bases and not any(b.fq in waiting for b in bases):
                pending.extend(bases)
                waiting.update(b.fq for b in bases)
                continue
            pending.pop()
            waiting.discard(current.fq)
            if current.fq in cache:
                continue
            parts = [b for b in self.bases(current) if isinstance(b, ClassInfo)]
            if len(parts) == 1 and parts[0].fq in cache:
                base = parts[0]
                above, mine = cache[base.fq], own(base)
                if base.fq in self._cut:  # below a cut (see MAX_MRO): what is known above it
                    cache[current.fq] = above
                else:
                    cache[current.fq] = above if mine <= above else above | mine
            else:  # several bases (or a cycle): take the MRO's union
                cache[current.fq] = frozenset().union(
                    *(own(n) for n in self.ancestors(current) if isinstance(n, ClassInfo)))
        return cache[info.fq]

    def unknown_before(
        self, info: ClassInfo, until: Node | None = None, name: str | None = None
    ) -> External | None:
        """The first base outside the checkout that may define ``name`` (any method, when
        None) in ``info``'s MRO before ``until`` (anywhere when None): where it stands, what the
        name resolves to cannot be known from the checkout alone. A well-known base that does
        not define the name (``torch.nn.Module`` and ``update_layer``) hides nothing."""
        for node in self.ancestors(info):
            if node is until:
                return None
            if isinstance(node, External) and node.may_define(name):
                return node
        return None

    def find_class(self, name: str) -> list[ClassInfo]:
        """Classes by fully qualified name, or by bare or partly qualified name."""
        info = self.classes.get(name)
        if info is not None:
            return [info]
        suffix = f".{name}"
        return [c for fq, c in self.classes.items() if fq.endswith(suffix)]


def _namespace_names(
    records: Iterable[FileRecord],
) -> tuple[list[FileRecord], dict[str, str]]:
    """The records, with module names that implicit namespace packages (PEP 420) cut short
    given in full, and the other names the checkout imports those packages under (an alias
    for each, to the name chosen).

    A file's first name comes from its ``__init__.py`` chain (:func:`module_names`), which stops
    at a directory without one: ``pkg/srt/comm/encoder/receiver.py`` is ``encoder.receiver``
    when ``comm/`` has no ``__init__.py``. The checkout's own absolute imports show the real
    root: imports of ``pkg.srt.comm.encoder.*`` name every module under ``comm/``
    ``pkg.srt.comm.*``. A package can be imported under two names (``diffusers`` from an
    installed src-layout, and ``src.diffusers`` by one test run from the root): the name most
    imports use wins, the longer one on a tie. Relative imports, resolved against the short
    name when the file was read, move with it.
    """
    records = list(records)
    short = [r for r in records if r.error is None and r.module
             and _top_directory(r) is not None]
    if not short:
        return records, {}  # every name already starts at the checkout's root
    targets: list[str] = []
    for record in records:
        targets.extend(record.imports.values())
        targets.extend(record.star_imports)
    imported = set(".".join(set(targets)).split("."))  # every name an import target holds
    if imported.isdisjoint({r.module.split(".")[0] for r in short}):
        return records, {}  # no import names a short name's top package (sympy's example
        # scripts in folders without ``__init__.py``): nothing to count
    uses = _ImportCounts(targets)  # dotted name -> imports of it or of something inside it
    prefixes: dict[str, str] = {}  # directory holding the short name's top -> dotted prefix
    aliases: dict[str, str] = {}
    for record in short:
        directory = _top_directory(record)
        if directory is None or directory in prefixes:
            continue
        top = record.module.split(".")[0]
        segments = directory.split("/")
        # shallowest first: on a tie, the longest name wins
        named = [".".join(segments[start:]) for start in range(len(segments))
                 if all(s.isidentifier() for s in segments[start:])]
        counted = [(uses[f"{prefix}.{top}"], prefix) for prefix in named]
        counted.append((uses[top], ""))
        best_count, best = max(counted, key=lambda c: c[0])
        if best_count == 0:
            continue
        prefixes[directory] = best
        chosen = f"{best}.{top}" if best else top
        for count, prefix in counted:
            other = f"{prefix}.{top}" if prefix else top
            if count and other != chosen:
                aliases.setdefault(other, chosen)
    prefixes = {d: p for d, p in prefixes.items() if p}
    if not prefixes:
        return records, aliases
    renamed: list[FileRecord] = []
    for record in records:
        directory = _top_directory(record) if record.module else None
        found = prefixes.get(directory) if directory is not None else None
        renamed.append(record if found is None else _prefixed(record, found))
    return renamed, aliases


class _ImportCounts:
    """How many of ``targets`` (``import``/``from`` targets and star imports, over all records)
    name a dotted name or something inside it: ``uses["a.b"]`` counts ``a.b`` and ``a.b.c``,
    not ``a.bc``. Answered from the sorted targets, so only the names asked about cost."""

    def __init__(self, targets: Iterable[str]) -> None:
        counts = Counter(targets)
        self._exact = counts
        self._names = sorted(counts)
        self._running = [0, *accumulate(map(counts.__getitem__, self._names))]

    def __getitem__(self, name: str) -> int:
        # ``name.``-prefixed targets sort together, before ``name/`` ('/' follows '.')
        low = bisect_left(self._names, f"{name}.")
        high = bisect_left(self._names, f"{name}/", low)
        return self._exact.get(name, 0) + self._running[high] - self._running[low]


def _prefixed(record: FileRecord, prefix: str, tops: Collection[str] = ()) -> FileRecord:
    """``record`` with ``prefix`` before its module name (when its top package is in ``tops``,
    or always when ``tops`` is empty) and before its imports of ``tops`` (default: its own)."""
    own = record.module.split(".")[0]
    renamed = tops or {own}

    def moved(target: str) -> str:
        return f"{prefix}.{target}" if target.split(".")[0] in renamed else target

    return replace(
        record,
        module=f"{prefix}.{record.module}" if own in renamed else record.module,
        imports={k: moved(v) for k, v in record.imports.items()},
        star_imports=tuple(moved(t) for t in record.star_imports),
        aliases={k: moved(v) for k, v in record.aliases.items()},
        needed_modules=tuple((moved(m), line) for m, line in record.needed_modules),
        needed_names=tuple((moved(m), n, line) for m, n, line in record.needed_names),
    )


def _separate_copies(records: list[FileRecord]) -> list[FileRecord]:
    """Give each extra copy of a top-level package or module its own module names.

    A checkout can hold one package twice (``server/tgi`` and ``backends/gaudi/server/tgi``), or
    scripts beside their own ``utils.py`` in several folders. Under one name, the second copy's
    classes would vanish and its subclasses would bind to the first copy's bases. The copy
    nearest the checkout's root keeps the name; every other copy is named from its directory
    (``backends.gaudi.server.tgi.models``), and the files beside it import it under that name,
    so each copy resolves within its own folder, as Python would with that folder on its path.
    """
    homes: dict[str, set[str]] = {}  # top package -> directories holding a copy of it
    for record in records:
        if record.error is None and record.module:
            homes.setdefault(record.module.split(".")[0], set()).add(
                _top_directory(record) or "")
    moved: dict[str, set[str]] = {}  # directory -> the top packages renamed there
    for top, directories in homes.items():
        if len(directories) > 1:
            for directory in sorted(directories, key=lambda d: (d.count("/"), d))[1:]:
                moved.setdefault(directory, set()).add(top)
    if not moved:
        return records
    named: list[FileRecord] = []
    for record in records:
        home = (_top_directory(record) or "") if record.module else None
        tops = moved.get(home) if home is not None else None
        if not tops or home is None:
            named.append(record)
            continue
        prefix = ".".join(p if p.isidentifier() else "_" for p in home.split("/"))
        named.append(_prefixed(record, prefix, tops))
    return named


def _top_directory(record: FileRecord) -> str | None:
    """The directory holding the top package (or module) of ``record``'s module name."""
    segments = record.path[:-3].split("/")
    if record.is_package:
        segments = segments[:-1]
    depth = len(record.module.split("."))
    if len(segments) <= depth:
        return None  # already named from the checkout's root
    return "/".join(segments[: len(segments) - depth])


def graph_inputs(record: FileRecord) -> object:
    """What name resolution and the class graph read from a file."""
    return (
        record.module,
        record.is_package,
        record.error,
        record.imports,
        record.star_imports,
        record.ambiguous,
        record.module_aliases,
        record.aliases,
        [(c.qualname, c.name, c.bases, c.local_scope, c.self_prefixes, c.members, c.rebinds,
          c.narrows) for c in record.classes],
    )


def _defined_names(info: ClassInfo) -> frozenset[str]:
    return frozenset(info.record.methods) | info.record.attributes


def _self_refs(info: ClassInfo) -> frozenset[str]:
    return info.record.self_refs


_GENERIC = frozenset({"typing.Generic", "typing_extensions.Generic", "Generic"})
_PROTOCOL = frozenset({"typing.Protocol", "typing_extensions.Protocol", "Protocol"})


def _generic_dropped(
    bases: tuple[Node, ...], mros: dict[str, tuple[Node, ...]]
) -> tuple[Node, ...]:
    """``bases`` as Python puts them in the MRO: ``Generic[T]`` gives no entry when a later
    base is itself generic or one is a ``Protocol`` (``typing``'s ``__mro_entries__``), so
    ``class C(Generic[T], Base[T])`` is consistent."""
    def generic(node: Node) -> bool:
        return isinstance(node, External) and node.name in _GENERIC

    if not any(generic(b) for b in bases):
        return bases
    kept: list[Node] = []
    for index, base in enumerate(bases):
        later = bases[index + 1:]
        if generic(base) and (
            any(isinstance(b, External) and b.name in _PROTOCOL for b in bases)
            or any(isinstance(b, ClassInfo) and any(generic(n) for n in mros.get(b.fq, ()))
                   for b in later)
        ):
            continue
        kept.append(base)
    return tuple(kept)


_SMALL_MERGE = 48  # entries up to which the plain merge beats the heap's bookkeeping


def _c3_merge_small(seqs: list[list[Node]]) -> list[Node] | None:
    """:func:`_c3_merge` the plain way, for the few short sequences of most classes with
    several bases: the same steps, the lists rebuilt at each (its cost grows with the
    square of the entries, which stay under :data:`_SMALL_MERGE` here)."""
    result: list[Node] = []
    while seqs:
        for seq in seqs:
            head = seq[0]
            if not any(head in other[1:] for other in seqs):
                break
        else:
            return None
        result.append(head)
        seqs = [s[1:] if s[0] == head else s for s in seqs]
        seqs = [s for s in seqs if s]
    return result


def _c3_merge(sequences: list[list[Node]]) -> list[Node] | None:
    """C3's merge, or None when the sequences cannot be merged.

    Each step takes the head of the first sequence whose head is in no sequence's tail. Each
    sequence is read from a position that only moves forward, and how many tails hold each
    node is counted: tails only shrink, so a head once free stays free. The sequences whose
    head is free wait in a heap by their order, each pushed when its head becomes free: every
    entry is visited once, in O(n log k) for n entries in k sequences. (Rebuilding the lists
    at each step cost the square of an MRO's length, and scanning the sequences for a free
    head, steps times sequences: a class with 200 bases.)"""
    seqs = [s for s in sequences if s]
    if sum(map(len, seqs)) <= _SMALL_MERGE:
        return _c3_merge_small(seqs)
    at = [0] * len(seqs)
    in_tails: Counter[Node] = Counter(n for s in seqs for n in s[1:])
    heads: dict[Node, list[int]] = {}  # node -> the sequences it heads now
    for k, seq in enumerate(seqs):
        heads.setdefault(seq[0], []).append(k)
    free = [k for k, seq in enumerate(seqs) if not in_tails[seq[0]]]  # sorted: a heap
    result: list[Node] = []
    live = len(seqs)
    while live:
        # an entry whose sequence moved on since it was pushed is dropped
        while free and (at[free[0]] == len(seqs[free[0]])
                        or in_tails[seqs[free[0]][at[free[0]]]]):
            heappop(free)
        if not free:
            return None
        head = seqs[free[0]][at[free[0]]]
        result.append(head)
        for k in heads.pop(head):
            seq = seqs[k]
            at[k] += 1
            if at[k] == len(seq):
                live -= 1
                continue
            following = seq[at[k]]  # out of this sequence's tail: it heads it now
            heads.setdefault(following, []).append(k)
            in_tails[following] -= 1
            if not in_tails[following]:  # free from now on: every sequence it heads
                for j in heads[following]:
                    heappush(free, j)
    return result
