"""Which classes an edit can affect, so a warm audit re-checks only those.

An audit keeps its findings per class (:class:`AuditState`). The next audit compares the old and
new records of the files that changed and re-runs the per-class rules on the classes whose
findings could differ; every other class keeps its findings.

Why that is sound. The rules judge a class ``C`` by its own record, by the members of the
classes in its MRO and, for a few questions, of its descendants, and by checkout-wide name
indexes (who references or defines a name). They only ever reach a member of another class
through a name: one of ``C``'s own, or one named by a member already reached (a call on
``self``, a field read or set, a guard). So the members that can matter to ``C`` are connected to
``C``'s own names through the names members define and mention. A changed member whose name and
mentions (before and after) meet no name of any unchanged member in ``C``'s MRO is outside that
connected part before and after the edit, and ``C``'s findings cannot change.

Members are compared without their positions (see :func:`_meaning`); a class whose last findings
point into a changed file is re-checked for its locations. What escapes the argument (a changed
base list, import, alias or class set, a parse error, a new or deleted file) makes
:func:`affected_classes` answer ``None``: check everything.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

import msgspec

from hookguard.findings import Finding
from hookguard.model.project import ClassInfo, Project, graph_inputs
from hookguard.model.records import ClassRecord, FileRecord, MethodRecord, method_mentions

STATE_VERSION = 1


@dataclass
class AuditState:
    """The last full model's inputs and its findings, grouped by the class they are about."""

    inputs: str  # digest of everything but the files: config, contracts, history, options
    keys: dict[str, str]  # path -> content key of every file the model was built from
    by_class: dict[str, list[Finding]] = field(default_factory=dict)  # per-class rules only
    history_notes: list[str] = field(default_factory=list)  # what git history could not answer
    version: int = STATE_VERSION


_STATE_DECODER: msgspec.msgpack.Decoder[AuditState] = msgspec.msgpack.Decoder(AuditState)


def encode_state(state: AuditState) -> bytes:
    """``state`` as the cache keeps it (the cache stores bytes; this module owns the type)."""
    return msgspec.msgpack.encode(state)


def decode_state(data: bytes) -> AuditState | None:
    """A stored state, or None where the bytes are not one (then everything is checked)."""
    try:
        return _STATE_DECODER.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def class_of(finding: Finding) -> str:
    """The class a per-class rule's finding is about (its symbol is ``<class fq>.<method>``)."""
    return finding.symbol.rpartition(".")[0]


@dataclass
class _ClassChange:
    touched: set[str]  # names of changed members, and what they mention before and after
    kept: set[str]  # names defined or mentioned by the members that did not change


def _member_mentions(member: MethodRecord | None) -> frozenset[str]:
    return method_mentions(member) if member is not None else frozenset()


def _meaning(member: MethodRecord | None) -> object:
    """A member without its positions: what the rules judge a class by.

    Positions in another class only reach a finding as a location in that class's file, and
    :func:`mentions_path` re-checks every class whose findings point into a changed file. So an
    edit that only moves a member (lines added above it) or changes code that names nothing on
    ``self`` changes no class's findings but those that point at it.
    """
    if member is None:
        return None
    return (
        member.name, member.kind, member.params, member.decorators, member.is_override,
        member.is_abstract, member.is_async, member.self_reads, member.suppressed,
        member.guarded, member.raises_only, member.skipped, member.no_op,
        tuple((a.attr, a.condition, a.augmented) for a in member.self_assigns),
        tuple(c._replace(line=0, col=0) for c in member.calls),
    )


def mentions_path(finding: Finding, paths: Collection[str]) -> bool:
    """Whether ``finding`` points into one of ``paths`` (its location, related locations,
    message or evidence)."""
    text = json.dumps(finding.to_json(), ensure_ascii=False)
    return any(path in text or json.dumps(path, ensure_ascii=False)[1:-1] in text
               for path in paths)


def _compare(old: ClassRecord, new: ClassRecord, definers: set[str]) -> _ClassChange | None:
    touched: set[str] = set()
    kept: set[str] = set(old.self_refs & new.self_refs)
    for name in dict.fromkeys([*old.methods, *new.methods]):
        before, after = old.methods.get(name), new.methods.get(name)
        if _meaning(before) == _meaning(after):
            kept |= _member_mentions(after)
            continue
        touched.add(name)
        touched |= _member_mentions(before) | _member_mentions(after)
        # ``self.policy.attention(...)`` reaches the overrides of another family: a change to
        # such a call re-checks every class defining the name, as a changed reference does.
        definers.update(c.name for m in (before, after) if m is not None
                        for c in m.calls if c.receiver in ("member", "typed"))
        if (before is None) != (after is None):
            definers.add(name)
    touched |= old.attributes ^ new.attributes
    touched |= {n for n in old.flags.keys() | new.flags.keys()  # a flag's truth changed
                if old.flags.get(n) != new.flags.get(n)}
    kept |= old.attributes & new.attributes
    touched |= old.self_refs ^ new.self_refs
    return _ClassChange(touched, kept) if touched else None


def affected_classes(
    project: Project,
    before: Mapping[str, FileRecord],
    after: Mapping[str, FileRecord],
    outside_names: Collection[str] = (),
) -> set[str] | None:
    """Fully qualified names of the classes whose findings may differ between the files
    ``before`` and ``after`` (both keyed by path; ``project`` is built with ``after``), or None
    when the change reaches the class graph itself and everything must be checked.

    ``outside_names`` are names the rules read from outside the code (contracts: hooks, fields,
    conditions). They join no member to a class by the code's names, so a change touching one
    re-checks the changed class's whole line, ancestors and descendants.
    """
    if before.keys() != after.keys():
        return None
    affected: set[str] = set()
    changes: dict[str, _ClassChange] = {}
    global_names: set[str] = set()  # names whose checkout-wide references or definers changed
    prefixes: set[str] = set()
    for path, new in after.items():
        old = before[path]
        if graph_inputs(old) != graph_inputs(new) or old.open_classes != new.open_classes:
            return None  # (a class opened by setattr may define any name: a graph input too)
        global_names |= (old.attr_refs ^ new.attr_refs) | (old.string_refs ^ new.string_refs)
        global_names.update(n for pair in set(old.fallbacks) ^ set(new.fallbacks) for n in pair)
        global_names.update(n for _, n in set(old.instance_refs) ^ set(new.instance_refs))
        prefixes |= old.prefix_refs ^ new.prefix_refs
        prefix = f"{new.module}." if new.module else ""
        for old_class, new_class in zip(old.classes, new.classes, strict=True):
            fq = f"{prefix}{new_class.qualname}"
            info = project.classes.get(fq)
            if info is None or info.record is not new_class:
                return None  # shadowed by a class of the same name elsewhere: keep it simple
            affected.add(fq)
            change = _compare(old_class, new_class, global_names)
            if change is not None:
                changes[fq] = change
    for fq, change in changes.items():
        changed = project.classes[fq]
        if change.touched.isdisjoint(outside_names):
            affected |= _reached(project, changed, change)
        else:
            affected |= {n.fq for n in project.ancestors(changed) if isinstance(n, ClassInfo)}
            affected |= {d.fq for d in project.descendants(changed)}
    if global_names or prefixes:
        for info in project.classes.values():
            if info.fq in affected:
                continue
            names = info.record.methods
            if not global_names.isdisjoint(names) or not global_names.isdisjoint(
                info.record.attributes
            ) or any(n.startswith(p) for p in prefixes for n in names):
                affected.add(info.fq)
    return affected


def _reached(project: Project, changed: ClassInfo, change: _ClassChange) -> set[str]:
    """The ancestors and descendants of ``changed`` whose MRO has an unchanged member that
    shares a name with the change."""
    hits: dict[str, bool] = {}

    def meets(info: ClassInfo) -> bool:
        hit = hits.get(info.fq)
        if hit is None:
            if info is changed:
                hit = not change.touched.isdisjoint(change.kept)
            else:
                record = info.record
                hit = not (
                    change.touched.isdisjoint(record.mentions)
                    and change.touched.isdisjoint(record.self_refs)
                    and change.touched.isdisjoint(record.methods)
                    and change.touched.isdisjoint(record.attributes)
                )
            hits[info.fq] = hit
        return hit

    related: Iterable[ClassInfo] = (
        *(n for n in project.ancestors(changed) if isinstance(n, ClassInfo)),
        *project.descendants(changed),
    )
    return {
        info.fq
        for info in related
        if any(meets(node) for node in project.mro(info) if isinstance(node, ClassInfo))
    }
