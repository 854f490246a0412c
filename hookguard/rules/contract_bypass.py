"""HG003 contract-bypass."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hookguard.findings import Finding, Location, Severity
from hookguard.model.project import ClassInfo, External, Project
from hookguard.model.records import MethodRecord
from hookguard.rules.base import Rule, RuleContext, is_class_private, is_dunder, is_test_file

if TYPE_CHECKING:
    from hookguard.contracts import HookContract


@dataclass(frozen=True)
class StateEffect:
    """A field a method sets, through which chain of ``self.`` calls, under which condition."""

    field: str
    via: tuple[str, ...]  # method names from the hook down to the one that assigns
    condition: str | None
    line: int


def _and(outer: str | None, inner: str | None) -> str | None:
    if outer is None:
        return inner
    return outer if inner is None else f"{outer} and {inner}"


def state_effects(
    project: Project, receiver: ClassInfo, method: MethodRecord
) -> dict[str, StateEffect]:
    """Fields ``method`` sets on ``self``, following ``self.`` and ``super()`` calls as an
    instance of ``receiver`` would run them.

    An unconditional path to a field wins over a conditional one.
    """
    effects: dict[str, StateEffect] = {}
    mro = [n for n in project.mro(receiver) if isinstance(n, ClassInfo)]
    seen: set[int] = set()
    start = next((i for i, c in enumerate(mro) if c.record.methods.get(method.name) is method), 0)
    stack: list[tuple[int, MethodRecord, tuple[str, ...], str | None]] = [
        (start, method, (method.name,), None)
    ]
    while stack:
        owner, current, via, condition = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        updates = Counter(a.attr for a in current.self_assigns if a.augmented)
        for assign in current.self_assigns:
            if updates[assign.attr] > 1:
                continue  # ``self.depth += 1 ... self.depth -= 1``: bookkeeping around a call
            effect = StateEffect(assign.attr, via, _and(condition, assign.condition), assign.line)
            known = effects.get(assign.attr)
            if known is None or (known.condition is not None and effect.condition is None):
                effects[assign.attr] = effect
        for call in current.calls:
            if call.receiver in ("self", "cls"):
                found = _resolve_from(mro, 0, call.name)
            elif call.receiver == "super" and call.explicit_base is None:
                found = _resolve_from(mro, owner + 1, call.name)
            elif call.receiver in ("super", "explicit") and call.explicit_base is not None:
                # ``super(Cls, self).hook()`` starts after Cls; ``Base.hook(self)`` and
                # ``mod.Base.hook(self)`` at Base: chained constructors set state too.
                at = _index_of(project, mro, mro[owner], call.explicit_base)
                if at is None:
                    continue
                found = _resolve_from(mro, at + (call.receiver == "super"), call.name)
            else:
                continue
            if found is not None:
                index, target = found
                stack.append((index, target, (*via, call.name), _and(condition, call.condition)))
    return effects


def _index_of(project: Project, mro: list[ClassInfo], owner: ClassInfo, dotted: str) -> int | None:
    """Where the class ``dotted`` (as written in ``owner``'s file) stands in ``mro``, or None."""
    node = project.resolve_name(owner.file, dotted, owner.record.qualname)
    return next((i for i, c in enumerate(mro) if c is node), None)


def _resolve_from(
    mro: list[ClassInfo], start: int, name: str
) -> tuple[int, MethodRecord] | None:
    for index in range(start, len(mro)):
        method = mro[index].record.methods.get(name)
        if method is not None:
            return index, method
    return None


def _resolve(project: Project, receiver: ClassInfo, name: str) -> MethodRecord | None:
    for node in project.mro(receiver):
        if isinstance(node, ClassInfo) and name in node.record.methods:
            return node.record.methods[name]
    return None


class ContractBypass(Rule):
    """
    ## What it does
    Finds overrides of a hook that do not call the base implementation (`super().hook(...)` or
    `Base.hook(self, ...)`) and do not set all the state the hook must establish themselves.

    The state comes from the hook's contract in `contracts/*.toml` when one is declared, and is
    otherwise inferred from the base implementation: the attributes it assigns on `self`,
    including through the `self.` methods it calls, with the conditions under which it does.
    A field is not required when the subclass also overrides every base method that reads it.

    ## Why is this bad?
    A re-implemented hook that forgets part of the base's setup fails later and elsewhere: an
    `AttributeError` on a missing staging tensor in a method the subclass never touched, only
    when a feature flag is on.

    ## Example
    ```python
    class KVCacheManagerV2:
        def _prepare_page_table_tensor(self, capacity):
            self.kv_cache_pool_pointers = ...
            if self.enable_swa_scratch_reuse:
                self._prepare_swa_scratch_copy_tensors(capacity)  # sets _device_copy_idx_staging

    class MiniMaxM3KVCacheManagerV2(KVCacheManagerV2):
        def _prepare_page_table_tensor(self, capacity):
            self.kv_cache_pool_pointers = ...  # no super(), no scratch tensors
    ```

    ## Use instead
    Call `super()._prepare_page_table_tensor(capacity)` and adjust, or call
    `self._prepare_swa_scratch_copy_tensors(capacity)` under the same condition.

    ## Severity
    An error only when a contract (`contracts/*.toml`) declares the hook's fields: the contract
    is the proof of what the hook must set. Without one, a warning when a base method that still
    runs for the subclass (not overridden, and reached from an entry point) reads a missing
    inferred field, saying that no contract declares it (the field may be set in a way the model
    does not see, or read only on paths this subclass never takes). Inferred fields no such
    method reads are not reported, nor overrides that do nothing (`pass`, a
    docstring: the hook is disabled on purpose) or classes local to a function (test doubles).
    Counters a method raises and lowers around a call (`self._depth += 1 ... -= 1`) are
    bookkeeping, not state. Neither proves anything without a contract: an override that
    raises `NotImplementedError` on some path (it supports only some configurations, and which
    base readers run in the others is not visible), nor a field read only by an accessor
    (`return self._field`) that nothing in the class family uses (API for outside callers, who
    may never ask this subclass for it).

    ## Known limitations
    State set outside the override (in the subclass's `__init__`, say) counts as set. Fields set
    through other objects, `setattr` or `__dict__` are not seen.
    """

    code = "HG003"
    name = "contract-bypass"
    severity = Severity.ERROR
    summary = "override replaces a hook without super() and skips state the hook must set"
    autofix = "No autofix: which state to set, and how, is the override author's decision."

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        project = ctx.project
        contracts = {(c.cls, c.method): c for c in ctx.contracts}
        for info in ctx.classes():
            for method in info.record.methods.values():
                if is_dunder(method.name) or method.name.startswith("test") or (
                        is_class_private(method.name)):
                    continue  # test methods establish no state for anyone else; a private
                    # ``__name`` replaces nothing
                if method.raises_only or method.skipped:
                    continue  # the hook is disabled on purpose
                if _calls_base(method):
                    continue
                ancestor = project.defining_ancestor(info, method.name)
                if not isinstance(ancestor, ClassInfo):
                    continue
                base = ancestor.method(method.name)
                if base is None or project.unknown_before(info, ancestor, method.name) is not None:
                    continue  # a base outside the checkout may be what the override replaces
                contract = _contract_for(project, info, method.name, contracts)
                finding = self._judge(ctx, info, method, ancestor, base, contract)
                if finding is not None:
                    yield finding

    def _judge(
        self,
        ctx: RuleContext,
        info: ClassInfo,
        method: MethodRecord,
        ancestor: ClassInfo,
        base: MethodRecord,
        contract: HookContract | None,
    ) -> Finding | None:
        project = ctx.project
        required = state_effects(project, info, base)
        if contract is None and not required:
            return None  # the base hook sets no state: nothing to bypass
        # Cheapest sources of provided fields first; stop as soon as nothing is missing.
        provided = set(state_effects(project, info, method))
        if contract is None and required.keys() <= provided:
            return None
        provided |= _set_on_subclass_side(project, info, ancestor, method.name)
        for node in project.mro(info):  # a class-level default, a method or a property
            if isinstance(node, ClassInfo):  # makes the field always present
                provided |= node.record.attributes
                provided.update(node.record.methods)
        if contract is None and required.keys() <= provided:
            return None
        provided |= _initialised(project, info, base.name)
        missing: dict[str, StateEffect] = {}
        consumers: dict[str, tuple[str, ...]] = {}
        if contract is not None:
            for spec, attr in contract.all_fields():
                effect = required.get(spec.name) or StateEffect(
                    spec.name, ("(declared in the contract)",),
                    f"self.{attr}" if attr else None, 0,
                )
                if attr and effect.condition is None:
                    effect = StateEffect(effect.field, effect.via, f"self.{attr}", effect.line)
                if spec.name not in provided:
                    missing[spec.name] = effect
                    consumers[spec.name] = spec.consumers
        else:
            missing = {
                f: e for f, e in required.items()
                if f not in provided and not _lazy(f, e)
            }
        unread: list[str] = []
        proven: list[str] = []
        for name in list(missing):
            if _set_by_every_reader(project, info, ancestor, name, method.name):
                del missing[name]  # whoever reads it sets it first: it needs no hook
                continue
            readers = _readers(project, info, ancestor, name, method.name, consumers.get(name, ()),
                               ctx.live(info))
            if readers and all(overridden for _, overridden in readers):
                del missing[name]
            elif any(not overridden for _, overridden in readers):
                proven.append(name)
            else:
                unread.append(name)
        if not missing or (contract is None and not (proven and ctx.config.inferred_state)):
            # Inferred state nothing is known to read: nothing to act on. Inferred state at
            # all only with ``inferred-state = true``: on code met for the first time, one
            # such warning in five was worth a maintainer's time (first contact, round 7).
            return None
        # An error is a proof: only a contract says which fields the hook *must* set. Inferred
        # from the base, a field may be set another way the model does not see, or read only
        # on paths this subclass never takes: a warning that says so.
        severity = Severity.ERROR if contract is not None else Severity.WARNING
        if contract is None and (
            info.record.local_scope or method.no_op or method.refuses
            or is_test_file(info.file.path)
        ):
            # A test double (function-local, or in a test file), an override that does nothing
            # (a hook disabled on purpose), or one that refuses some configurations (``raise
            # NotImplementedError`` on a path): whether the base's readers run in the
            # configurations it accepts is not something the code shows.
            return None
        groups: dict[tuple[tuple[str, ...], str | None], list[str]] = {}
        for name, effect in missing.items():
            groups.setdefault((effect.via[1:], effect.condition), []).append(name)
        parts = []
        for (via, condition), names in groups.items():
            how = f"set by self.{via[0]}(...)" if via else f"set by {ancestor.name}.{base.name}"
            if via and via[0].startswith("("):
                how = "declared in the contract"
            when = f" when {condition}" if condition else ""
            parts.append(f"{', '.join(names)} ({how}{when})")
        source = (f"contract {contract.location}" if contract
                  else "inferred from the base; no contract declares this hook's fields")
        message = (
            f"{info.name}.{method.name} replaces {ancestor.name}.{base.name} without calling it "
            f"and never sets {'; '.join(parts)} [{source}]; call "
            f"super().{base.name}(...) or set these fields"
        )
        return self.finding(
            info,
            method,
            hook=method.name,
            severity=severity,
            message=message,
            evidence={
                "kind": "contract" if contract else "inferred",
                "ancestor": ancestor.fq,
                "contract": contract.location if contract else None,
                "missing": [
                    {"field": n, "set_by": list(e.via[1:]), "condition": e.condition,
                     "read_by_base": n in proven}
                    for n, e in missing.items()
                ],
                "fix": f"call super().{base.name}(...) or set the missing fields",
            },
            related=[Location(ancestor.file.path, base.def_line, base.col,
                              f"{ancestor.name}.{base.name}")],
        )


def _lazy(field: str, effect: StateEffect) -> bool:
    """``if self.x is None: self.x = ...``: set on demand by whoever reads it."""
    return effect.condition is not None and f"self.{field}" in effect.condition


def _initialised(project: Project, info: ClassInfo, hook: str) -> set[str]:
    """Fields the constructor chain sets: always present. A counter it starts that the hook
    would have raised (``self.count += 1``) is present too: left at its start value, it may be
    wrong, but nothing that reads it fails, which is what an error here must prove."""
    init = _resolve(project, info, "__init__")
    if init is None or hook == "__init__":
        return set()
    return set(state_effects(project, info, init))


def _calls_base(method: MethodRecord) -> bool:
    """It runs the base's hook (``super()``), or hands the call to an object it wraps
    (``self.inner.hook(...)``), whose hook sets the state on that object."""
    return any(
        c.name == method.name and c.receiver in ("super", "explicit", "member")
        for c in method.calls
    )


def _contract_for(
    project: Project, info: ClassInfo, name: str, contracts: dict[tuple[str, str], HookContract]
) -> HookContract | None:
    if not contracts:
        return None
    for node in project.ancestors(info):
        if isinstance(node, ClassInfo):
            contract = contracts.get((node.fq, name))
            if contract is not None:
                return contract
    return None


def _set_on_subclass_side(
    project: Project, info: ClassInfo, ancestor: ClassInfo, hook: str
) -> set[str]:
    """Fields the subclass side of the MRO (before ``ancestor``) assigns in any other method."""
    fields: set[str] = set()
    for node in project.mro(info):
        if node is ancestor:
            break
        if isinstance(node, ClassInfo):
            for method in node.record.methods.values():
                if method.name != hook:
                    fields.update(a.attr for a in method.self_assigns)
    return fields


def _readers(
    project: Project,
    info: ClassInfo,
    ancestor: ClassInfo,
    field: str,
    hook: str,
    declared: tuple[str, ...],
    live: frozenset[str] | None,
) -> list[tuple[str, bool]]:
    """Base-side methods that read ``field``, each with whether it never runs for ``info``: it
    is overridden, or nothing that runs on ``info`` reaches it (``live``: see
    :mod:`hookguard.model.reach`)."""
    readers: list[tuple[str, bool]] = []
    past = False
    names: set[str] = set(declared)
    for node in project.mro(info):
        past = past or node is ancestor
        if past and isinstance(node, ClassInfo):
            names.update(
                m.name for m in node.record.methods.values()
                if field in m.self_reads and m.name != hook and field not in m.guarded
                and not _sets_first(m, field)
            )
    accessors = {
        name for name in names
        if (reader := _resolve(project, info, name)) is not None and reader.returns == field
    }
    if accessors:  # ``return self.field``: it proves something only where the family uses it
        names -= accessors - _used_by_family(project, info, accessors)
    for name in sorted(names):
        definer = project.defining_ancestor(info, name) if name not in info.record.methods else info
        overridden = definer is not None and not _is_base_side(project, info, ancestor, definer)
        readers.append((name, overridden or (live is not None and name not in live)))
    return readers


def _used_by_family(project: Project, info: ClassInfo, names: set[str]) -> set[str]:
    """Which of ``names`` some method of ``info``'s MRO reads or calls on ``self``, other than
    the accessor itself. An accessor nothing in the family uses is API for callers outside: a
    field it returns that the subclass never sets makes that accessor fail, not the hook's
    users, and whether anyone asks this subclass for it is not visible here."""
    used: set[str] = set()
    for node in project.mro(info):
        if isinstance(node, ClassInfo):
            for method in node.record.methods.values():
                used.update(n for n in names if n != method.name and (
                    n in method.self_reads
                    or any(c.name == n and c.receiver in ("self", "cls") for c in method.calls)
                ))
    return used


def _set_by_every_reader(
    project: Project, info: ClassInfo, ancestor: ClassInfo, field: str, hook: str
) -> bool:
    readers = [
        m for node in project.mro(info)[project.mro(info).index(ancestor):]
        if isinstance(node, ClassInfo)
        for m in node.record.methods.values()
        if field in m.self_reads and m.name != hook
    ]
    return bool(readers) and all(_sets_first(m, field) for m in readers)


def _sets_first(method: MethodRecord, field: str) -> bool:
    """The method assigns the field unconditionally itself: it does not depend on the hook."""
    return any(a.attr == field and a.condition is None and not a.augmented
               for a in method.self_assigns)


def _is_base_side(
    project: Project, info: ClassInfo, ancestor: ClassInfo, node: ClassInfo | External
) -> bool:
    mro = project.mro(info)
    return node in mro and mro.index(node) >= mro.index(ancestor)
