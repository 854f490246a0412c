"""Why a finding is only a warning (its *hedges*: the proofs it lacks), and which warnings are
reported by default.

A rule that cannot prove a finding says which proof is missing. Some missing proofs leave the
finding likely: the one thing hookguard could not read decides it (a base outside the
checkout), or the one thing it could not type (the receiver of a member call that may still
reach a dead override), or either way it points at something to change (``orphaned``: a
method no call of its base ever fitted, with no other caller left, is dead code or the
failing call is what runs it). Others leave it unlikely: hookguard read the code that decides the
case and could not evaluate it, and that code is how the project keeps the case from arising
(a guard the class may never meet, an annotation broader than the class, a decorator, a
lookup by name that may still call the override), or the history shows the override was
written for other calls. Those are held back: reported only with ``--all-warnings``; so is
a warning about a dead override that does nothing of its own (``hollow``): whatever else it
lacks, nothing is lost while it does not run.

This module is the whitelist (``docs/design.md``, "What a warning claims"); rules tag each
warning with its hedges, and the commands drop, before any report, a warning with a hedge
that is not on it. A warning without hedges (a severity the configuration lowered, an
opt-in rule setting such as ``structural``) is always reported.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from enum import Enum

from hookguard.findings import Finding, Severity

#: The key of :attr:`Finding.evidence` that lists a warning's hedges (their values).
EVIDENCE_KEY = "hedges"


class Hedge(str, Enum):
    """One missing proof. The value is what reports and ``evidence["hedges"]`` show."""

    # -- the case is decided by what hookguard cannot read or type: reported ---------------
    EXTERNAL_BASE = "external-base"  # a named base outside the checkout may define the name
    OTHER_RECEIVERS = "other-receivers"  # a member use elsewhere, on a receiver not typed
    # no call ever fitted it (as ``own-method``), and nothing else in the checkout calls it:
    # dead code, or the failing call is the one that runs it
    ORPHANED = "orphaned"
    # -- hookguard read what decides the case and could not evaluate it: held back --------
    UNRESOLVED_BASE = "unresolved-base"  # a base expression the model could not resolve
    BY_NAME = "by-name"  # ``getattr``/``hasattr`` with the name, a fallback lookup
    COMPUTED_NAME = "computed-name"  # a lookup by a computed name the name matches
    SETATTR = "setattr"  # methods set on the class line by ``setattr`` at run time
    API_METHOD = "api-method"  # the base never called it on ``self``: an API, not a hook
    SELF_CALLED = "self-called"  # the class family calls the name on ``self``
    ANNOTATION = "annotation"  # a receiver known only from an annotation broader than it
    BRANCHED = "branched"  # a member assigned different classes on different paths
    GUARD = "guard"  # the call runs only under a condition not shown to hold
    DECORATOR = "decorator"  # a decorator may change what the override accepts
    OWN_METHOD = "own-method"  # history: no call ever fitted it, a method of its own
    UNLOADABLE = "unloadable"  # its file imports a module of the checkout a commit deleted
    # not a missing proof but a missing loss: the dead override does nothing of its own (a
    # no-op, a lone ``raise``, a constant, a field, a forward to another object's method)
    HOLLOW = "hollow"

    @property
    def reported(self) -> bool:
        """Whether a warning with this hedge is reported without ``--all-warnings``."""
        return self in REPORTED


#: The whitelist: hedges whose warnings are reported by default.
REPORTED = frozenset({Hedge.EXTERNAL_BASE, Hedge.OTHER_RECEIVERS, Hedge.ORPHANED})
_BY_VALUE = {h.value: h for h in Hedge}


def evidence_of(hedges: Iterable[Hedge]) -> dict[str, object]:
    """The evidence entry for a warning with ``hedges`` (nothing for none)."""
    values = list(dict.fromkeys(h.value for h in hedges))
    return {EVIDENCE_KEY: values} if values else {}


def hedges_of(finding: Finding) -> list[Hedge]:
    """The hedges a warning carries; unknown values (a newer cache, a hand-made finding) are
    read as held back, never as reported."""
    raw = finding.evidence.get(EVIDENCE_KEY, ())
    if not isinstance(raw, (list, tuple)):
        return [Hedge.UNRESOLVED_BASE]
    return [_BY_VALUE.get(str(v), Hedge.UNRESOLVED_BASE) for v in raw]


def held_back(finding: Finding) -> bool:
    """Whether ``finding`` is a warning that only ``--all-warnings`` reports."""
    return finding.severity is Severity.WARNING and not all(
        h.reported for h in hedges_of(finding))


#: The key of :attr:`Finding.evidence` that says why a warning's file cannot load.
UNLOADABLE_KEY = "unloadable"


def mark_unloadable(findings: Sequence[Finding], reasons: Mapping[str, str]) -> list[Finding]:
    """``findings``, each hedged warning in a file of ``reasons`` (path -> why it cannot load,
    :func:`hookguard.model.loadable.unloadable`) given the ``unloadable`` hedge, held back.
    Errors keep their level (their proof holds whether the class loads or not), and so do
    warnings without hedges (a level the configuration chose)."""
    marked = []
    for finding in findings:
        reason = reasons.get(finding.path)
        hedges = hedges_of(finding) if finding.severity is Severity.WARNING else []
        if reason is None or not hedges or Hedge.UNLOADABLE in hedges:
            marked.append(finding)
            continue
        evidence = {**finding.evidence, UNLOADABLE_KEY: reason,
                    **evidence_of([*hedges, Hedge.UNLOADABLE])}
        marked.append(replace(finding, evidence=evidence,
                              message=f"{finding.message} (its file cannot load: {reason})"))
    return marked


def needs_loading(findings: Iterable[Finding]) -> set[str]:
    """The files of the hedged warnings among ``findings``: where :func:`mark_unloadable`
    may act, so the only files whose imports are worth asking git about."""
    return {f.path for f in findings if f.severity is Severity.WARNING and hedges_of(f)}


def reported(findings: Sequence[Finding], all_warnings: bool) -> tuple[list[Finding], int]:
    """The findings to report, and how many warnings were held back."""
    if all_warnings:
        return list(findings), 0
    shown = [f for f in findings if not held_back(f)]
    return shown, len(findings) - len(shown)
