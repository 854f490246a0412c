"""HG002 signature-drift."""

from __future__ import annotations

import ast
import re
import types
from collections import defaultdict
from collections.abc import Callable, Iterator
from functools import lru_cache, partial
from itertools import islice

from hookguard.findings import Finding, Location, Severity
from hookguard.hedges import Hedge, evidence_of
from hookguard.model.binding import BindResult, bind
from hookguard.model.project import ClassInfo, External, Node, Project
from hookguard.model.reach import is_test_file, probed
from hookguard.model.records import CallSite, MethodKind, MethodRecord, Param, ParamKind
from hookguard.rules.base import (
    PassedKeyword,
    Rule,
    RuleContext,
    base_hedge,
    call_guard,
    call_shape,
    is_class_private,
    is_dunder,
    is_test_double,
    never_collected,
)
from hookguard.rules.exits import always_exits

_CONSTRUCTORS = frozenset({"__init__", "__new__", "__init_subclass__", "__post_init__"})
# Decorators that leave the function's signature as it is (or that the model already reads):
# any other decorator may wrap the function in something that accepts other arguments.
_TRANSPARENT_DECORATORS = frozenset({
    "staticmethod", "classmethod", "property", "cached_property", "abstractproperty",
    "setter", "getter", "deleter", "abstractmethod", "abstractclassmethod",
    "abstractstaticmethod", "override", "overrides", "final", "no_type_check", "overload",
    "lru_cache", "cache", "wraps", "contextmanager", "asynccontextmanager", "no_grad",
    "inference_mode", "enable_grad", "deprecated",
})
CallsByName = dict[str, list[tuple[MethodRecord, CallSite]]]


class SignatureDrift(Rule):
    """
    ## What it does
    Binds every call that a base class makes to a hook through `self.`, `cls.` or `super()`
    against each override's signature, the way Python would at run time, and reports the
    overrides that would raise `TypeError`: surplus positional arguments, keywords the override
    does not accept, required parameters the call does not pass.

    With `structural = true` in `[tool.hookguard]`, it also warns about *structural* drift,
    where no call proves a failure yet: an override that drops or renames a parameter of the
    hook, changes the positional order, adds a required parameter, or changes the method kind
    (static, class method, property). Safe widening (new parameters with defaults, an added
    `**kwargs`) is never reported. It is off by default: on real code most of it is a parameter
    renamed where every caller passes it positionally, or dropped where `**kwargs` absorbs it.

    ## Why is this bad?
    The base class grows its hook (`num_blocks_per_seq=`), the subclass in another file keeps
    the old signature, and the first call in production raises `TypeError: got an unexpected
    keyword argument`. Nothing before that run notices.

    ## Example
    ```python
    class KVCacheManagerV2:
        def get_batch_cache_indices(self, request_ids):
            return self._get_batch_cache_indices_by_pool_id(
                request_ids, pool_id=0, num_blocks_per_seq=8, index_scale=1)

    class MiniMaxM3KVCacheManagerV2(KVCacheManagerV2):
        def _get_batch_cache_indices_by_pool_id(self, request_ids, *, pool_id=0): ...
    ```

    ## Use instead
    ```python
    class MiniMaxM3KVCacheManagerV2(KVCacheManagerV2):
        def _get_batch_cache_indices_by_pool_id(
            self, request_ids, *, pool_id=0, num_blocks_per_seq=None, index_scale=None): ...
    ```

    ## Severity
    An error where the failing call's receiver is proven to hold the class: `self`, `cls`,
    `super()`, `Base.hook(self, ...)` in the class's own line, a member the code constructs
    (`self.worker = DraftWorker()`) or a name narrowed by `isinstance` where the call is made.
    A member known only from its annotation (`worker: Worker`) may hold any subclass, or never
    this one: a warning that says so.

    ## Known limitations
    Calls are resolved by receiver for `self`, `cls`, `super()`, `Base.hook(self, ...)`, members
    whose class the code names (an annotation, a constructor call) and names narrowed by
    `isinstance`; calls through other variables are not bound. In `check` only, a keyword the
    change passes through any receiver to a hook the same change taught that keyword counts for
    the hook's family (see `docs/design.md`). Constructors (`__init__`, `__new__`) are not
    checked structurally.
    """

    code = "HG002"
    name = "signature-drift"
    severity = Severity.ERROR
    summary = "override cannot accept the calls its base makes (TypeError), or narrows the hook"
    autofix = (
        "`hookguard fix` adds the keyword arguments the base passes and the override lacks, as "
        "`name=None` (keyword-only when the base passes them by keyword), when the call-site "
        "evidence is unambiguous. It does not fix surplus positional arguments or missing "
        "required parameters. Unsafe when the override must act on the new arguments: the fix "
        "only makes the call succeed."
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        project = ctx.project
        calls = _CallIndex()
        members = _MemberCalls(project)
        for info in ctx.classes():
            if not any(isinstance(b, ClassInfo) for b in project.bases(info)):
                continue
            # Names the bases use on self: only those methods are hooks the bases can call.
            base_refs = project.inherited_refs(info)
            ancestors: list[ClassInfo] | None = None
            for method in info.record.methods.values():
                if method.skipped or method.raises_only or is_class_private(method.name):
                    continue  # a skipped test never runs; a lone ``raise`` disables the hook;
                    # nothing but its own class calls a private ``__name``
                is_hook = method.name in base_refs
                if is_hook and ancestors is None:
                    ancestors = [a for a in project.ancestors(info) if isinstance(a, ClassInfo)]
                found = (
                    self._proven(project, calls, info, ancestors, method,
                                 partial(ctx.live, info), lambda: ctx.references.attributes,
                                 ctx.added_calls, ctx.kept_guards,
                                 partial(_named, ctx, info), partial(_never_fitted, ctx),
                                 partial(_called_only_there, ctx))
                    if is_hook and ancestors is not None else None
                )
                if found is None and members.of(method.name):
                    found = self._composed(project, members, info, method, ctx.kept_guards,
                                           partial(_never_fitted, ctx))
                if (found is None or found.severity is Severity.WARNING) and (
                        ctx.passed_keywords):
                    # A keyword the change taught the hook is proof where the member's
                    # annotation alone is not.
                    found = self._passed_keyword(project, ctx.passed_keywords, info, method
                                                 ) or found
                if found is None and any(c.receiver == "super" for c in method.calls) and (
                        not _never_runs(ctx, info, method)):
                    found = self._super_calls(project, info, method)
                if found is None and is_hook and ctx.config.structural:
                    found = self._structural(project, info, method)
                if found is not None and found.severity is Severity.ERROR and (
                    is_test_double(project, info) or never_collected(project, info)
                ):
                    continue  # the tests pick what runs on it, or pytest never runs it
                if found is not None:
                    yield found

    # -- proven: a real call would raise TypeError ------------------------------------------
    def _proven(
        self,
        project: Project,
        calls: _CallIndex,
        info: ClassInfo,
        ancestors: list[ClassInfo],
        method: MethodRecord,
        live_methods: Callable[[], frozenset[str] | None],
        named_outside: Callable[[], frozenset[str]],
        added_calls: frozenset[tuple[str, str, str, tuple[object, ...]]] = frozenset(),
        kept_guards: frozenset[tuple[str, str, str, str]] = frozenset(),
        named: Callable[[str], bool] = lambda _: True,
        never_fitted: Callable[[ClassInfo, MethodRecord, list[tuple[ClassInfo, MethodRecord,
                                                                    CallSite]]], str | None]
        = lambda *_: None,
        alone: Callable[[ClassInfo, MethodRecord, list[tuple[ClassInfo, MethodRecord,
                                                             CallSite]]], bool]
        = lambda *_: False,
    ) -> Finding | None:
        if method.kind is MethodKind.PROPERTY:
            return None
        wrapper = _wrapping_decorator(method)
        failures: list[tuple[ClassInfo, MethodRecord, CallSite, BindResult]] = []
        for ancestor in ancestors:
            for caller, call in calls.of(ancestor).get(method.name, ()):
                if call.receiver == "super":
                    continue  # a super() call in an ancestor never reaches a subclass override
                result = bind(call, method, unbound=_unbound(call, method))
                if result.ok or not _caller_runs_for(project, info, ancestor, caller):
                    continue
                live = live_methods()
                if live is not None and caller.name not in live:
                    continue  # only methods this class replaces ever reach the caller
                if always_exits(project, info, call, live, named_outside()):
                    continue  # the caller returns before the call on every such instance
                if _raises_before(project, info, caller, call.line):
                    continue  # a step before it raises on every such instance
                added = (ancestor.fq, caller.name, call.name, call_shape(call)) in added_calls
                if _proves(project, info, ancestor, caller, call, method, added):
                    failures.append((ancestor, caller, call, result))
        if not failures:
            return None
        # An error needs one failing call that runs whenever its caller does: one under an
        # ``if`` on the instance's state, or past an early exit on it, runs only where that
        # state is so, which nothing shows for this class (first contact: a guard never true).
        judged = [(f, _guard_truth(project, info, f[2])) for f in failures]
        failures = [f for f, truth in judged if truth is not False]
        if not failures:
            return None  # each failing call sits behind a flag that is off for this class
        # (``check``: a change's call under a guard the base revision's call of the hook had,
        # in the same method, runs where that one ran, the override written to serve it; and
        # a call the change adds is written to run: its guard is the change's own intent)
        # (a call without a guard has the truth True)
        unguarded = [f for f, truth in judged if truth is True or (
            truth is None
            and ((f[0].fq, f[1].name, f[2].name, call_guard(f[2])) in kept_guards
                 or (f[0].fq, f[1].name, f[2].name, call_shape(f[2])) in added_calls))]
        guarded = None if unguarded else failures[0][2]
        failures = unguarded or failures
        # An error needs one failing call whose path from the override to the caller's class
        # is fully known: a base outside the checkout in between may replace the caller.
        proven = [f for f in failures if project.unknown_before(info, f[0], f[1].name) is None]
        hidden = (project.unknown_before(info, failures[0][0], failures[0][1].name)
                  if not proven else None)
        failures = proven or failures
        unexpected = list(dict.fromkeys(n for *_, r in failures for n in r.unexpected))
        first_class, first_caller, first_call, _ = failures[0]
        sites = [
            Location(cls.file.path, call.line, call.col,
                     f"{cls.name}.{caller.name} calls {method.name}: {result.describe()}")
            for cls, caller, call, result in failures
        ]
        problems = "; ".join(dict.fromkeys(r.describe() for *_, r in failures))
        by_keyword = all(
            name in call.keywords for _, _, call, r in failures for name in r.unexpected
        )
        fixable = bool(unexpected) and all(
            not (r.surplus_positional or r.missing or r.duplicated) for *_, r in failures
        )
        message = (
            f"{info.name}.{method.name}{_signature(method)} cannot accept the call in "
            f"{first_class.name}.{first_caller.name} ({first_class.file.path}:{first_call.line}): "
            f"{problems}; this raises TypeError at run time"
        )
        if unexpected and fixable:  # (keywords alone would not make the call fit otherwise)
            message += "; add " + ", ".join(f"{n}=None" for n in unexpected)
        weaker = _why_no_proof(project, info, method, first_class, first_caller, hidden,
                               wrapper)
        if weaker is not None and hidden is None and wrapper is None:
            return None  # a stub, an adapter or a factory of its own: nothing to act on
        if weaker is None and not named(first_caller.name) and _own_convention(
                project, info, method, first_class, first_caller):
            # Its author's own method of that name (called by its side with its own
            # arguments), and the caller a helper of the base for other subclasses: nothing to
            # act on (first contact: none of four such warnings was worth a maintainer's
            # time, rounds 5, 7 and 8).
            return None
        if weaker is None and guarded is not None:
            weaker = (Hedge.GUARD, f"the call runs only when {call_guard(guarded)}: nothing "
                                   f"shows that holds for a {info.name}")
        if weaker is None:
            triples = [(c, m, k) for c, m, k, _ in failures]
            unfitted = never_fitted(info, method, triples)
            if unfitted is not None and alone(info, method, triples):
                # Its own callers are gone: what the history calls a method of its own is
                # dead, or these calls are what runs it (Diamond's NetApp collectors, whose
                # ``get_schedule`` handing ``self.collect`` its arguments went in 2014: first
                # contact, round 39).
                weaker = (Hedge.ORPHANED, f"{unfitted}; but nothing else in the checkout "
                                          f"calls it: it is dead code, or this call raises")
            elif unfitted is not None:
                weaker = (Hedge.OWN_METHOD, unfitted)
        if weaker is not None:
            message += f" (warning only: {weaker[1]})"
        return self.finding(
            info,
            method,
            hook=method.name,
            message=message,
            severity=Severity.WARNING if weaker is not None else None,
            evidence={
                **evidence_of([weaker[0]] if weaker is not None else []),
                "kind": "proven",
                "missing": unexpected,
                "keyword_only": by_keyword,
                "fixable": fixable,
                "reason": None if fixable else "the calls need more than added keywords",
                "calls": _call_evidence(sites),
                "fix": "accept " + ", ".join(unexpected) if unexpected else "match the call",
            },
            related=sites,
        )

    # -- keywords a change passes through receivers the model does not type ----------------
    def _passed_keyword(
        self,
        project: Project,
        passed: tuple[PassedKeyword, ...],
        info: ClassInfo,
        method: MethodRecord,
    ) -> Finding | None:
        """The change taught a base's hook a keyword and passes it to that hook elsewhere
        (:class:`~hookguard.rules.base.PassedKeyword`); ``info``'s override cannot take it."""
        if method.kind is MethodKind.PROPERTY or method.takes_any_keyword:
            return None
        accepted = method.keyword_names
        ancestors = project.ancestors(info)
        failing = [
            p for p in passed
            if p.method == method.name and p.keyword not in accepted
            and (owner := project.classes.get(p.owner)) is not None and owner in ancestors
            and project.unknown_before(info, owner, method.name) is None
            and (p.declared is None or p.declared == info.fq or any(
                isinstance(a, ClassInfo) and a.fq == p.declared for a in ancestors))
        ]
        if not failing:
            return None
        first = failing[0]
        owner = project.classes[first.owner]
        missing = list(dict.fromkeys(p.keyword for p in failing))
        sites = [
            Location(p.path, p.line, p.col,
                     f"the change passes {p.keyword}= to {p.method}() here")
            for p in failing
        ]
        message = (
            f"{info.name}.{method.name}{_signature(method)} cannot accept "
            f"{', '.join(f'{k}=' for k in missing)}, which this change taught "
            f"{owner.name}.{method.name} to accept and passes to {method.name}() at "
            f"{first.path}:{first.line}; this raises TypeError when that call reaches a "
            f"{info.name}; add " + ", ".join(f"{k}=None" for k in missing)
        )
        wrapper = _wrapping_decorator(method)
        if wrapper is not None:
            message += f" (warning only: @{wrapper} may change what the override accepts)"
        return self.finding(
            info,
            method,
            hook=method.name,
            message=message,
            severity=Severity.WARNING if wrapper is not None else None,
            evidence={
                **evidence_of([Hedge.DECORATOR] if wrapper is not None else []),
                "kind": "passed-keyword",
                "missing": missing,
                "keyword_only": True,
                "fixable": True,
                "reason": None,
                "calls": _call_evidence(sites),
                "fix": "accept " + ", ".join(missing),
            },
            related=sites,
        )

    # -- calls through composition: ``self.policy.attention(...)`` --------------------------
    def _composed(
        self, project: Project, members: _MemberCalls, info: ClassInfo, method: MethodRecord,
        kept_guards: frozenset[tuple[str, str, str, str]] = frozenset(),
        never_fitted: Callable[[ClassInfo, MethodRecord, list[tuple[ClassInfo, MethodRecord,
                                                                    CallSite]]], str | None]
        = lambda *_: None,
    ) -> Finding | None:
        """A call another class makes on a member it holds as ``info``'s family, that
        ``info``'s override cannot accept while the held class's own method can."""
        if method.kind is MethodKind.PROPERTY:
            return None
        mro = project.mro(info)
        for holder, caller, call, held, exact in members.of(method.name):
            if exact:  # ``self.worker = DraftWorker()``: it runs what DraftWorker resolves to
                if _definer(project, held, method.name) is not info:
                    continue
                reference = project.defining_ancestor(info, method.name)
            else:  # ``worker: Worker``: any subclass of Worker may be behind it
                if held is info or held not in mro:
                    continue
                if _broad(project, held):
                    continue  # a framework's root (``Layer``): the code says nothing about which
                reference = _definer(project, held, method.name)
            if project.unknown_before(info, held, method.name) is not None or (
                    _wrapping_decorator(method)):
                continue
            result = bind(call, method)
            if result.ok:
                continue
            definition = (
                reference.method(method.name) if isinstance(reference, ClassInfo) else None)
            if definition is None or (_declares(definition) and not bind(call, definition).ok) or (
                    call.receiver == "typed" and definition.takes_any_keyword
                    and any(n not in definition.keyword_names for n in result.unexpected)):
                # (or it passes a keyword that method takes only through ``**kwargs``: one the
                # subclasses that name it take, addressed to them: neo's
                # ``spiketrain.load(load_waveforms=True)`` under ``isinstance(x, BaseProxy)``,
                # first contact, round 14)
                # The call fails for the method the member is declared with: it was written for
                # a narrower family than the declaration names (a T5 controller's call on a
                # generic wrapper), so it says nothing about this one.
                continue
            if any(o.name == call.name and o is not call and o.explicit_base == call.explicit_base
                   and bind(o, method).ok for o in caller.calls):
                continue
            if _paired_caller(project, info, holder, caller, call, method, held):
                continue
            site = Location(holder.file.path, call.line, call.col,
                            f"{holder.name}.{caller.name} calls self.{call.explicit_base}."
                            f"{call.name}: {result.describe()}")
            message = (
                f"{info.name}.{method.name}{_signature(method)} cannot accept the call in "
                f"{holder.name}.{caller.name} ({holder.file.path}:{call.line}), made on "
                f"self.{call.explicit_base}, a {held.name}: {result.describe()}; this raises "
                "TypeError at run time when it holds a " + info.name
            )
            fixable = bool(result.unexpected) and not (
                result.surplus_positional or result.missing or result.duplicated)
            if fixable:
                message += "; add " + ", ".join(f"{n}=None" for n in result.unexpected)
            # A proof needs the receiver's class: constructed into the member, or narrowed by
            # ``isinstance`` where the call is made. An annotation (``worker: Worker``) says any
            # subclass may be there, not that this one ever is: a warning that says so.
            annotated = call.receiver == "member" and not exact
            if annotated:
                message += (f" (self.{call.explicit_base} is known only from its annotation as "
                            f"a {held.name}: nothing shows it ever holds a {info.name})")
            alternatives = (members.constructed(holder, call.explicit_base)
                            if exact and call.explicit_base else [])
            branched = len({c.fq for c in alternatives}) > 1
            if branched:
                # ``if use_sde: self.dist = SDE(...) else: self.dist = Gaussian(...)``: the call
                # may sit on the other class's path (first-contact round 2).
                names = ", ".join(dict.fromkeys(c.name for c in alternatives))
                message += (f" (self.{call.explicit_base} is assigned one of {names} on different "
                            f"paths: nothing shows this call's path holds a {info.name})")
            if call.receiver == "typed" and call.branch and "isinstance(" in call.branch:
                call = call._replace(branch=None)  # the ``isinstance`` test is the proof
            guard = call_guard(call) if _guard_truth(project, holder, call) is not True else ""
            if (holder.fq, caller.name, call.name, guard) in kept_guards:
                guard = ""  # the base revision's call had it: this one runs where that ran
            if guard and not (annotated or branched):
                message += (f" (the call runs only when {guard}: nothing shows that holds "
                            f"for a {info.name})")
            unfitted = None if annotated or branched or guard else never_fitted(
                info, method, [(holder, caller, call)])
            if unfitted is not None:
                message += f" (warning only: {unfitted})"
            return self.finding(
                info, method, hook=method.name, message=message,
                severity=(Severity.WARNING if annotated or branched or guard or unfitted
                          else None),
                evidence={
                    **evidence_of([hedge for hedge, held in (
                        (Hedge.ANNOTATION, annotated), (Hedge.BRANCHED, branched),
                        (Hedge.GUARD, bool(guard)), (Hedge.OWN_METHOD, unfitted is not None))
                        if held]),
                    "kind": ("annotated-member" if annotated else "branched-member" if branched
                             else "proven-member"),
                    "missing": list(result.unexpected),
                    "keyword_only": all(n in call.keywords for n in result.unexpected),
                    "fixable": fixable,
                    "reason": None if fixable else "the call needs more than added keywords",
                    "calls": _call_evidence([site]),
                    "fix": "accept " + ", ".join(result.unexpected) if result.unexpected
                    else "match the call",
                },
                related=[site],
            )
        return None

    # -- super() calls the parent implementation cannot accept -------------------------------
    def _super_calls(
        self, project: Project, info: ClassInfo, method: MethodRecord
    ) -> Finding | None:
        for call in method.calls:
            if call.receiver != "super":
                continue
            parent = _super_target(project, info, call)
            target = parent.method(call.name) if isinstance(parent, ClassInfo) else None
            if target is None or target.kind is MethodKind.PROPERTY or _wrapping_decorator(
                target
            ):
                continue
            # ``super().f(cls, ...)`` in a class method, or ``super().__init__(obj, ...)`` in
            # ``__new__`` (a static method without the decorator: ``super()`` is bound to the
            # class there), reaches a plain ``f`` unbound.
            unbound = (method.kind in (MethodKind.CLASS, MethodKind.STATIC)
                       or method.name == "__new__") and target.kind is MethodKind.PLAIN
            result = bind(call, target, unbound=unbound)
            if result.ok or _rewritten(project, parent, call.name) or _chain_ends(
                    project, info, parent, call.name):
                continue  # (the line's walks asked only of a call that does not fit)
            assert isinstance(parent, ClassInfo)
            return self.finding(
                info,
                method,
                hook=call.name,
                message=(
                    f"super().{call.name}(...) in {info.name}.{method.name} (line {call.line}) "
                    f"does not fit {parent.name}.{call.name}{_signature(target)}: "
                    f"{result.describe()}; this raises TypeError at run time"
                ),
                evidence={"kind": "proven-super", "missing": [], "fixable": False,
                          "reason": "the call, not the override, must change"},
                related=[Location(parent.file.path, target.def_line, target.col,
                                  f"{parent.name}.{call.name}")],
            )
        return None

    # -- structural: the override narrows the hook ------------------------------------------
    def _structural(
        self, project: Project, info: ClassInfo, method: MethodRecord
    ) -> Finding | None:
        if method.name in _CONSTRUCTORS or (is_dunder(method.name) and method.name != "__call__"):
            return None
        if method.name.startswith("test"):
            return None
        ancestor = project.defining_ancestor(info, method.name)
        if not isinstance(ancestor, ClassInfo):
            return None
        base = ancestor.method(method.name)
        if base is None:
            return None
        problems = structural_differences(base, method)
        if not problems:
            return None
        return self.finding(
            info,
            method,
            hook=method.name,
            severity=Severity.WARNING,
            message=(
                f"{info.name}.{method.name}{_signature(method)} narrows "
                f"{ancestor.name}.{method.name}{_signature(base)}: {'; '.join(problems)}"
            ),
            evidence={"kind": "structural", "ancestor": ancestor.fq, "problems": problems,
                      "missing": [], "fixable": False,
                      "reason": "structural drift needs a decision about the hook's meaning"},
            related=[Location(ancestor.file.path, base.def_line, base.col,
                              f"{ancestor.name}.{method.name}")],
        )


def structural_differences(base: MethodRecord, override: MethodRecord) -> list[str]:
    """How ``override`` narrows ``base``'s signature (safe widening is never listed)."""
    return list(_differences(base.kind, base.bound_params, override.kind, override.bound_params))


@lru_cache(maxsize=65536)
def _differences(
    base_kind: MethodKind,
    base_bound: tuple[Param, ...],
    kind: MethodKind,
    bound: tuple[Param, ...],
) -> tuple[str, ...]:
    problems: list[str] = []
    if all(p.kind in (ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD) for p in base_bound) and (
        base_bound
    ):
        return ()  # ``hook(self, *args, **kwargs)``: the base promises no signature to keep
    if base_kind is not kind:
        problems.append(f"it is a {kind.value} method, the hook a {base_kind.value} one")
        return tuple(problems)
    if base_kind is MethodKind.PROPERTY:
        return tuple(problems)
    base_params = [p for p in base_bound
                   if p.kind not in (ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD)]
    params = {p.name: p for p in bound}
    var_keyword = any(p.kind is ParamKind.VAR_KEYWORD for p in bound)
    var_positional = any(p.kind is ParamKind.VAR_POSITIONAL for p in bound)
    base_positional = [p.name for p in base_params if p.kind is not ParamKind.KEYWORD_ONLY]
    positional = [p.name for p in bound
                  if p.kind in (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD)]
    for index, param in enumerate(base_params):
        if param.name in params:
            continue
        if param.kind is ParamKind.KEYWORD_ONLY:
            if not var_keyword:
                problems.append(f"drops keyword-only parameter '{param.name}'")
        elif param.kind is ParamKind.POSITIONAL_ONLY:
            if index >= len(positional) and not var_positional:
                problems.append(f"drops positional parameter '{param.name}'")
        elif not (var_keyword and (var_positional or index < len(positional))):
            renamed = positional[index] if index < len(positional) else None
            if renamed and renamed not in {p.name for p in base_params}:
                problems.append(f"renames parameter '{param.name}' to '{renamed}'")
            else:
                problems.append(f"drops parameter '{param.name}'")
    common = [n for n in positional if n in base_positional]
    if common != [n for n in base_positional if n in common]:
        problems.append("changes the order of positional parameters")
    base_names = {p.name for p in base_params}
    for param in bound:
        if (
            param.name not in base_names
            and not param.has_default
            and param.kind not in (ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD)
            and not any(problems_mention(problems, param.name))
        ):
            problems.append(f"adds required parameter '{param.name}'")
    return tuple(problems)


def problems_mention(problems: list[str], name: str) -> Iterator[bool]:
    return (f"'{name}'" in p for p in problems)


def _signature(method: MethodRecord) -> str:
    return method.signature()[len(method.name):]


def _placeholder(method: MethodRecord) -> bool:
    """An abstract or ``raise NotImplementedError`` hook: a declaration only, whose signature
    says nothing about what its callers pass (``def merge(self, *args): raise ...``)."""
    return method.is_abstract or method.raises_only


def _shapeless(method: MethodRecord) -> bool:
    """Whether the hook's definition states no call shape: it takes any positional arguments
    and requires none beyond the instance (``def forward(self, *args)``, ``def on_event(self,
    *args, **kwargs): pass``), so only its callers say what an override is passed."""
    params = method.params[1:] if method.kind is not MethodKind.STATIC else method.params
    return any(p.kind is ParamKind.VAR_POSITIONAL for p in params) and not any(
        p.kind in (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD,
                   ParamKind.KEYWORD_ONLY) and not p.has_default for p in params)


def _declares(method: MethodRecord) -> bool:
    """Whether ``method``'s signature is an interface callers are held to: a concrete method,
    or an abstract one that spells its parameters out (``def merge(self, *args): raise ...``
    declares nothing)."""
    return not _placeholder(method) or not any(
        p.kind in (ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD) for p in method.params)


def _unbound(call: CallSite, method: MethodRecord) -> bool:
    """``cls.f(...)`` on a plain method ``f``: the function itself, ``self`` not bound."""
    return call.receiver == "cls" and method.kind is MethodKind.PLAIN


_SELF_NAME = re.compile(r"\bself\.(\w+)")
_MODE_CHECK = re.compile(r"\b(?:is_scripting|is_tracing|is_compiling|TYPE_CHECKING)\b")


def _proves(
    project: Project,
    info: ClassInfo,
    ancestor: ClassInfo,
    caller: MethodRecord,
    call: CallSite,
    override: MethodRecord,
    added: bool = False,
) -> bool:
    """Whether ``call``, which ``override`` cannot accept, proves a ``TypeError`` for ``info``.

    It does not when the caller picks between call shapes and another of its calls fits (the
    shapes belong to different subclass families, or to TorchScript and eager mode); when the
    hook's own definition states no call shape (:func:`_shapeless`) and another method of the
    base's line calls it, the same way, in a shape the override takes (the base's methods
    serve different subclass families: cogdl's ``BaseModel.predict`` passes ``(x,
    edge_index)`` and its ``graph_classification_loss`` passes ``(batch)`` to a ``forward(self,
    *args)`` placeholder; first contact, round 30); when the call does not fit the hook
    ``ancestor`` itself resolves to either (a dead or broken caller, not drift); or when its
    ``if`` reads a flag the subclass side sets (``_USE_BASE = False``). A call the change
    under review adds is written to run, whatever other shapes there are.
    """
    if any(
        other.name == call.name and other is not call and other.receiver == call.receiver
        and bind(other, override, unbound=_unbound(other, override)).ok
        for other in caller.calls
    ):
        return False
    own: Node | None = ancestor
    if call.name not in ancestor.record.methods:
        own = project.defining_ancestor(ancestor, call.name)
    definition = own.method(call.name) if isinstance(own, ClassInfo) else None
    if not added and (definition is None or _shapeless(definition)) and any(
        other.name == call.name and other.receiver == call.receiver
        and bind(other, override, unbound=_unbound(other, override)).ok
        for node in project.mro(ancestor) if isinstance(node, ClassInfo)
        for method in node.record.methods.values() if method is not caller
        for other in method.calls
    ):
        return False
    if isinstance(own, ClassInfo):
        # A base definition a decorator may wrap (``@return_future`` adds the callback) says
        # nothing about what its callers pass; an override wrapped the same way has its shape.
        wrapper = _wrapping_decorator(definition) if definition is not None else None
        if wrapper is not None and _wrapping_decorator(override) == wrapper:
            return False
        if definition is not None and wrapper is None and _declares(definition) and not (
            added or bind(call, definition, unbound=_unbound(call, definition)).ok
        ):
            # the call fails for the base's own hook (a concrete one, or a placeholder that
            # spells its parameters out: neo's ``_rescale_event_timestamp``, first contact
            # round 14): a broken caller, not drift; unless the change under review wrote
            # it: then it breaks every class, this one included
            return False
    if call.condition:
        if any(_MODE_CHECK.search(part) and not part.startswith("not ")
               for part in call.condition.split(" and ")):
            return False  # only when TorchScript-scripted, traced, compiled or type-checked
        if probed(call.condition):
            return False  # only for objects with a feature some lack (``getattr(cfg, "x", [])``)
        flags = set(_SELF_NAME.findall(call.condition))
        for node in project.mro(info):
            if node is ancestor:
                break
            if isinstance(node, ClassInfo) and flags & node.record.attributes:
                return False  # a class attribute the subclass side sets (``_USE_BASE = False``)
    return True


def _raises_before(
    project: Project, info: ClassInfo, caller: MethodRecord, line: int, depth: int = 3
) -> bool:
    """Whether, for an instance of ``info``, ``caller`` makes an unguarded ``self`` call before
    ``line`` that always raises: it reaches a method whose body is a lone ``raise`` (a
    validation hook the subclass turns into a refusal), directly or through up to ``depth``
    methods that make such a call first (``with self.fix_params(...)`` calling
    ``self._validate_can_fix_params(...)``, statsmodels, round 2)."""
    mro = project.mro(info)
    for step in caller.calls:
        if (step.receiver not in ("self", "cls") or step.line >= line or call_guard(step)
                or step.name == caller.name):
            continue
        target: MethodRecord | None = None
        for node in mro:
            if isinstance(node, External):
                break  # it may be defined outside the checkout
            if node.defines(step.name):
                target = node.method(step.name)
                break
        if target is None or target.kind is MethodKind.PROPERTY or target.is_async:
            continue
        if target.raises_only and not target.is_abstract and not target.placeholder:
            return True  # (a lone ``raise NotImplementedError`` is a placeholder, no refusal)
        if depth > 1 and _raises_before(project, info, target, target.end_line + 1, depth - 1):
            return True
    return False


def _guard_truth(project: Project, info: ClassInfo, call: CallSite) -> bool | None:
    """Whether ``call``'s guard (:func:`_guard`) holds for every instance of ``info``: True or
    False where it reads only class attributes bound once to a literal (``_USE_BASE = True``)
    that no method rebinds on the instance, joined by ``not``/``and``/``or``; None otherwise."""
    guard = call_guard(call)
    if not guard:
        return True
    try:
        tree = ast.parse(guard, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    mro = project.mro(info)

    def flag(name: str) -> bool | None:
        for node in mro:
            if not isinstance(node, ClassInfo):
                return None  # a base outside the checkout may bind it
            record = node.record
            if any(a.attr == name for m in record.methods.values() for a in m.self_assigns):
                return None  # set on the instance at run time
        for node in mro:
            assert isinstance(node, ClassInfo)
            if name in node.record.flags:
                return node.record.flags[name]
            if name in node.record.attributes or name in node.record.methods:
                return None
        return None

    def truth(node: ast.expr) -> bool | None:
        if isinstance(node, ast.Constant):
            return bool(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner = truth(node.operand)
            return None if inner is None else not inner
        if isinstance(node, ast.BoolOp):
            values = [truth(v) for v in node.values]
            stop = isinstance(node.op, ast.Or)  # (the value that decides: True for or)
            if stop in values:
                return stop
            return None if None in values else not stop
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and (
                node.value.id in ("self", "cls")):
            return flag(node.attr)
        return None

    return truth(tree)


def _call_evidence(sites: list[Location]) -> list[dict[str, object]]:
    """The failing call sites as a finding's ``evidence["calls"]``."""
    return [{"path": loc.path, "line": loc.line, "column": loc.column, "message": loc.message}
            for loc in sites]


def _wrapping_decorator(method: MethodRecord) -> str | None:
    """The first decorator of ``method`` that may change the signature callers bind against."""
    for decorator in method.decorators:
        if decorator.rsplit(".", 1)[-1] not in _TRANSPARENT_DECORATORS:
            return decorator
    return None


def _super_target(project: Project, info: ClassInfo, call: CallSite) -> ClassInfo | None:
    """The class a ``super().name`` (or ``super(X, self).name``) call in ``info`` reaches."""
    mro = project.mro(info)
    if call.explicit_base is None:
        start: Node = info
    else:
        start = project.resolve_name(info.file, call.explicit_base, scope=info.record.qualname)
        if not isinstance(start, ClassInfo) or start not in mro:
            return None  # cannot tell where the lookup starts: say nothing
    for node in mro[mro.index(start) + 1 :]:
        if isinstance(node, ClassInfo) and node.defines(call.name):
            return node
        if isinstance(node, External) and node.may_define(call.name):
            return None
    return None


def _why_no_proof(
    project: Project,
    info: ClassInfo,
    method: MethodRecord,
    ancestor: ClassInfo,
    caller: MethodRecord,
    hidden: External | None,
    wrapper: str | None,
) -> tuple[Hedge, str] | None:
    """Why a failing call of the base is no proof of a ``TypeError`` for ``info`` (the hedge
    and its words), if it is not: something hookguard cannot see decides whether that call
    ever reaches the override."""
    if hidden is not None:
        return (base_hedge(hidden), f"{hidden.name}, outside the checkout, comes first in the "
                                    f"method resolution order and may replace {caller.name}")
    rebinder = _rebinder(project, info, method.name)
    if rebinder is not None:
        return (Hedge.SETATTR,
                f"{rebinder.name} replaces methods on the instance at run time (setattr), so "
                f"what {caller.name} calls may be an adapter, not this method")
    if wrapper is not None:
        return Hedge.DECORATOR, f"@{wrapper} may wrap it in a function that accepts other arguments"
    stub = _skips_base_constructor(project, info, ancestor)
    if stub is not None:
        return (Hedge.OWN_METHOD, f"{stub}.__init__ never runs the base constructor, so it may "
                                  "never be used as a full instance of the base")
    if caller.kind not in (MethodKind.CLASS, MethodKind.STATIC) or _runs_through_super(
        project, info, ancestor, caller
    ):
        return None  # only an alternate constructor is chosen by code hookguard cannot see
    own = _own_call(project, info, method, ancestor)  # the subclass side's own factory
    if own is not None:
        return (Hedge.OWN_METHOD, f"{own} calls it with the arguments it takes: "
                                  f"{ancestor.name}.{caller.name} may never run for it")
    return None


def _own_call(
    project: Project, info: ClassInfo, method: MethodRecord, ancestor: ClassInfo
) -> str | None:
    """``Class.method`` of the subclass side (``info``'s MRO before ``ancestor``) that calls
    the hook ``method`` on ``self``/``cls`` with arguments it takes, if any."""
    for node in project.mro(info):
        if node is ancestor:
            break
        if not isinstance(node, ClassInfo):
            continue
        for own in node.record.methods.values():
            if own is method:
                continue
            for call in own.calls:
                if (call.name == method.name and call.receiver in ("self", "cls")
                        and bind(call, method, unbound=_unbound(call, method)).ok):
                    return f"{node.name}.{own.name}"
    return None


_DRIFT_HISTORY = 500  # commits read, newest first, for the history of an override and its callers


def _never_fitted(
    ctx: RuleContext, info: ClassInfo, method: MethodRecord,
    failures: list[tuple[ClassInfo, MethodRecord, CallSite]],
) -> str | None:
    """Why the history disproves a drift, or None where it does not.

    It does when, in every version of the override since it was written, the classes that
    make the failing calls were there too and none of their calls of the hook made the same
    way (on ``self``, or on the same member) bound to it: no call of theirs ever fitted it,
    so it is a method of the subclass's own, written to other arguments, that their calls
    may never reach (yt-dlp's ``run_ffmpeg(path, out_path, codec, more_opts)`` beside the
    base's three-argument calls, scapy's ``RRP_Client.bind(self)``: first contact, rounds 11
    and 13). A call that once fitted, and a later commit broke (the base began passing a
    keyword, the override gained a required parameter), is a drift; so is any pair whose
    history is out of reach (no git, a caller outside the checkout, a class older than the
    history read, a base family restructured meanwhile): no evidence, no disproof. Each
    file is followed through its renames (keras 3's metrics came from ``keras_core``,
    sympy's ``fortran.py`` was ``fcode.py``, gluonts' MQF2 left the nursery). A change
    under review (``check``, ``upgrade``) is its own history."""
    history = ctx.history
    if ctx.reviewing or history is None:
        return None
    holders = list({holder.fq: holder for holder, _, _ in failures}.values())
    ways = {(call.receiver, call.explicit_base) for _, _, call in failures}
    wanted: dict[str, set[str]] = {}
    for node in (*holders, info):
        wanted.setdefault(node.file.path, set()).add(node.record.qualname)
    def scan(follow: bool) -> tuple[str, int, bool]:
        """How the versions end, newest first: "fit" (a call fitted: a drift), "later" (the
        callers' classes came later: calls before them are unknown) or "end"; the number of
        the oldest version read with the override; and whether an older version of its file
        lacked it (its birth is in the history read)."""
        read = had = 0
        born = False
        for version in history.past_classes(wanted, _DRIFT_HISTORY, follow=follow,
                                            naming=method.name):
            read += 1
            classes = version.get(info.file.path)
            old_class = classes.get(info.record.qualname) if classes is not None else None
            old_method = old_class.methods.get(method.name) if old_class else None
            if old_method is None:
                born = born or (bool(had) and classes is not None)
                continue
            had = read
            old_holders = [version.get(h.file.path, {}).get(h.record.qualname)
                           for h in holders]
            if any(old is None for old in old_holders):
                return "later", had, born
            if any(call.name == method.name and (call.receiver, call.explicit_base) in ways
                   and bind(call, old_method, unbound=_unbound(call, old_method)).ok
                   for old in old_holders if old is not None
                   for caller in old.methods.values() for call in caller.calls):
                return "fit", had, born
        return "end", had, born

    # The files' own paths first (one plain ``git log``); followed through renames only
    # where that history does not show the override's birth and its file came by a rename
    # (the rest of its life, and its callers', under other paths: keras 3, asteroid's
    # recipes), or where the callers' classes are missing from older versions of their
    # paths (gluonts).
    ending, had, born = scan(follow=False)
    if ending == "later" or (ending == "end" and had and not born and had < _DRIFT_HISTORY
                             and history.moved_in(info.file.path)):
        ending, had, born = scan(follow=True)
    if ending != "end" or not had or had == _DRIFT_HISTORY:
        return None  # a drift, callers younger than the override, no committed version, or
        # one older than the history read
    return (f"no call of {method.name} by {', '.join(h.name for h in holders)} ever fitted "
            f"{info.name}.{method.name} in the history of both (since it was written): it is a "
            "method of its own, written to other arguments, that those calls may never reach")


def _called_only_there(
    ctx: RuleContext, info: ClassInfo, method: MethodRecord,
    failures: list[tuple[ClassInfo, MethodRecord, CallSite]],
) -> bool:
    """Whether nothing in the checkout can call ``method`` but the failing ``failures``: no
    code outside tests names it on another object (``collector.collect()``) or by a string,
    no class of ``info``'s line hands it on as a value or calls it on ``self`` elsewhere, and
    no base outside the checkout may call it. A test's class, a dunder (Python calls those)
    and a constructor (called by the class's name) never qualify."""
    name, project, refs = method.name, ctx.project, ctx.references
    if is_dunder(name) or is_test_file(info.file.path) or (
        name in refs.code_attributes or name in refs.strings
        or name.startswith(refs.prefix_tuple)
        or project.unknown_before(info, None, name) is not None
    ):
        return False
    failing = {(holder.fq, caller.name, call.line, call.col) for holder, caller, call in failures}
    line = project.mro(info)
    for other in project.classes.values():
        if name not in other.record.self_refs or not (
                other in line or info in project.mro(other)):
            continue
        if name in other.record.handed:
            return False
        own = [(other.fq, caller.name, call.line, call.col)
               for caller in other.record.methods.values() for call in caller.calls
               if call.name == name]
        if not own or any(site not in failing for site in own):
            return False  # a call that may fit, or a use of it the records do not show
    return True


def _rebinder(project: Project, start: ClassInfo, name: str) -> ClassInfo | None:
    """The first class of ``start``'s line that sets ``name`` on its class or instances at
    run time (``setattr(self, <computed name>, ...)``, ``self.name = ...``, ``cls.name =
    ...``), if any: what a call of ``name`` reaches may take other arguments than its
    ``def`` says."""
    for node in project.mro(start):
        if isinstance(node, ClassInfo) and (node.record.rebinds or any(
                a.attr == name for m in node.record.methods.values() for a in m.self_assigns)):
            return node
    return None


def _rewritten(project: Project, parent: Node | None, name: str) -> bool:
    """Whether a class of ``parent``'s line sets ``name`` at run time (:func:`_rebinder`;
    ``cls.__init__ = wrap(cls.__init__)`` in ``__init_subclass__``: avalanche's
    ``BaseTemplate`` maps legacy positional arguments onto keywords for every subclass, first
    contact round 38): ``super().name(...)`` reaches a wrapper, as under a decorator."""
    return isinstance(parent, ClassInfo) and _rebinder(project, parent, name) is not None


#: Bases whose ``__init__`` ends the ``super()`` chain of a concrete subclass: the one
#: ``typing`` gives a protocol calls no further ``__init__``.
_CHAIN_ENDS = frozenset({"typing.Protocol", "typing_extensions.Protocol"})


def _chain_ends(project: Project, info: ClassInfo, parent: Node | None, name: str) -> bool:
    """Whether ``super().__init__(...)`` in ``info`` stops before ``parent``: a protocol
    base comes between them in the MRO (avalanche's ``BaseSGDTemplate``, first contact round
    38)."""
    if name != "__init__":
        return False
    for node in project.mro(info)[1:]:
        if node is parent:
            return False
        if isinstance(node, External) and node.name in _CHAIN_ENDS:
            return True
    return False


def _never_runs(ctx: RuleContext, info: ClassInfo, method: MethodRecord) -> bool:
    """Whether nothing runs ``method``: a dunder-shaped name Python's data model does not
    call (``__ini__``, a misspelled ``__init__``: anemoi-core, first contact round 36) that
    no code names, on ``self`` in the class's line or anywhere else."""
    name = method.name
    if not is_dunder(name) or name in _DATA_MODEL:
        return False
    refs = ctx.references
    return not (refs.names(name) or ctx.family_self_refs(info, name))


def _data_model() -> frozenset[str]:
    """The dunder names Python itself calls: those of the built-in types, plus the protocol
    methods no built-in type has."""
    kinds: tuple[type, ...] = (
        object, type, int, float, complex, bool, str, bytes, bytearray, list, tuple, dict,
        set, frozenset, range, slice, memoryview, property, staticmethod, classmethod,
        BaseException, types.FunctionType, types.ModuleType, types.GeneratorType,
        types.CoroutineType, types.AsyncGeneratorType, types.MethodType)
    names = {n for kind in kinds for n in dir(kind) if is_dunder(n)}
    names.update({
        "__enter__", "__exit__", "__aenter__", "__aexit__", "__aiter__", "__anext__",
        "__await__", "__call__", "__del__", "__get__", "__set__", "__delete__",
        "__set_name__", "__getattr__", "__missing__", "__prepare__", "__instancecheck__",
        "__subclasscheck__", "__mro_entries__", "__class_getitem__", "__post_init__",
        "__getstate__", "__setstate__", "__getnewargs__", "__getnewargs_ex__", "__copy__",
        "__deepcopy__", "__fspath__", "__length_hint__", "__index__", "__bytes__",
        "__buffer__", "__release_buffer__", "__matmul__", "__rmatmul__", "__imatmul__",
        "__init_subclass__", "__subclasshook__"})
    return frozenset(names)


_DATA_MODEL = _data_model()


def _named(ctx: RuleContext, info: ClassInfo, name: str) -> bool:
    """Whether code outside the class and outside tests names ``name`` in a way that may
    reach ``info`` (a test calling it on this class would fail by itself: glances' tests call
    ``get_alert_log`` on the plugins that use it)."""
    refs = ctx.references
    return (name in refs.code_attributes or name in refs.strings
            or name.startswith(refs.prefix_tuple) or refs.typed_reaches(name, info))


def _own_convention(
    project: Project, info: ClassInfo, method: MethodRecord, ancestor: ClassInfo,
    caller: MethodRecord,
) -> bool:
    """Whether the failing call may never reach ``info``'s override: the subclass side calls
    the hook on ``self`` itself, with arguments the override takes (its own method of that
    name, a Liskov breach rather than a drift), while nothing in its line calls the base's
    caller and nothing outside names it (the caller asks this only then): a helper of the base
    for other subclasses (glances' ``get_alert_log``: first contact, round 5)."""
    for node in project.mro(info):
        if not isinstance(node, ClassInfo):
            continue
        for own in node.record.methods.values():
            uses = [c for c in own.calls
                    if c.name == caller.name and c.receiver in ("self", "cls", "super")]
            if any(not call_guard(c) for c in uses) or (
                    caller.name in own.self_reads and not uses):  # (passed as a value)
                return False  # the line reaches the base's caller itself: it runs for it
        # (a call of it under a guard on data, glances' 'if ....get("log") is True', shows
        # no more than the failing call under one would)
    return _own_call(project, info, method, ancestor) is not None


def _runs_through_super(
    project: Project, info: ClassInfo, ancestor: ClassInfo, caller: MethodRecord
) -> bool:
    """Whether the subclass side replaces ``caller`` and calls the base's through super()."""
    for node in project.mro(info):
        if node is ancestor:
            return False
        if isinstance(node, ClassInfo):
            own = node.method(caller.name)
            if own is not None and any(c.name == caller.name and c.receiver in (
                    "super", "explicit") for c in own.calls):
                return True
    return False


def _skips_base_constructor(project: Project, info: ClassInfo, ancestor: ClassInfo) -> str | None:
    """The class before ``ancestor`` in ``info``'s MRO whose ``__init__`` runs no constructor
    on the way to ``ancestor`` (a test stub, a stand-in that calls ``nn.Module.__init__``
    instead), if any."""
    mro = project.mro(info)
    for node in mro:
        if node is ancestor:
            return None
        if isinstance(node, ClassInfo):
            init = node.method("__init__")
            if init is None:
                continue
            for call in init.calls:
                if call.name != "__init__":
                    continue
                if call.receiver == "super":
                    return None
                if call.receiver == "explicit" and call.explicit_base is not None:
                    target = project.resolve_name(node.file, call.explicit_base,
                                                  scope=node.record.qualname)
                    if isinstance(target, ClassInfo) and ancestor in project.mro(target):
                        return None
            return node.name
    return None


def _paired_caller(
    project: Project, info: ClassInfo, holder: ClassInfo, caller: MethodRecord,
    call: CallSite, override: MethodRecord, held: ClassInfo,
) -> bool:
    """Whether a subclass of ``holder`` replaces ``caller`` with one that calls the hook, with
    arguments ``override`` accepts, on the same member or on a receiver it declares narrower,
    as ``info``'s family (a VLM controller passing the image arguments a VLM wrapper takes):
    the families come in pairs, so the base pair's call says nothing about this override."""
    line = {n.fq for n in project.mro(info) if isinstance(n, ClassInfo)} - {held.fq}
    for sub in project.descendants(holder):
        replacement = sub.method(caller.name)
        if replacement is None:
            continue
        for c in replacement.calls:
            if c.name != call.name or c.receiver != call.receiver or not bind(c, override).ok:
                continue
            if c.explicit_base == call.explicit_base:
                return True  # the replacement calls the same member the way this override takes
            written = None
            if c.receiver == "typed":
                written, scope = c.explicit_base, sub
            elif c.receiver == "member" and c.explicit_base is not None:
                scope = next((n for n in project.mro(sub) if isinstance(n, ClassInfo)
                              and c.explicit_base in n.record.members), sub)
                written = scope.record.members.get(c.explicit_base)
            if written is None:
                continue
            narrower = project.resolve_name(scope.file, written.removesuffix("()"),
                                            scope=scope.record.qualname)
            if isinstance(narrower, ClassInfo) and narrower.fq in line:
                return True
    return False


_BROAD = 40  # a held class with more subclasses than this is a framework's root class


def _broad(project: Project, held: ClassInfo) -> bool:
    """Whether ``held`` has so many subclasses (``keras.Layer``, ``nn.Module`` wrappers) that
    naming it tells nothing about which of them a member or a narrowed name holds."""
    return next(islice(project.descendants(held), _BROAD, None), None) is not None


def _definer(project: Project, info: ClassInfo, name: str) -> ClassInfo | None:
    """The class whose ``name`` an instance of ``info`` runs (``info`` itself included)."""
    if info.defines(name):
        return info
    found = project.defining_ancestor(info, name)
    return found if isinstance(found, ClassInfo) else None


MemberCall = tuple[ClassInfo, MethodRecord, CallSite, ClassInfo, bool]


class _MemberCalls:
    """Calls on members whose class the code names (``self.policy.attention(...)`` with
    ``policy: Policy``, or ``x.merge(...)`` under ``isinstance(x, Layer)``), by callee name:
    (holder, caller, call, held class, exactly that class).

    Built per callee name on first use, from the classes whose methods call that name on a
    member or a narrowed name (known from the records without decoding the methods); only those
    classes' lines have their members resolved, and only their methods are decoded.
    """

    def __init__(self, project: Project) -> None:
        self._project = project
        self._by_name: dict[str, list[MemberCall]] = {}
        self._calls: dict[str, list[tuple[MethodRecord, CallSite]]] = {}
        self._held: dict[str, dict[str, tuple[ClassInfo, bool]]] = {}  # a class's own members
        self._types: dict[str, dict[str, tuple[ClassInfo, bool]]] = {}  # members, by holder
        # (holder, member) -> every class some path constructs into it, when they differ
        self._built: dict[tuple[str, str], list[ClassInfo]] = {}
        # name -> the classes whose methods call it on a member or a narrowed name
        self._mentioning: dict[str, list[ClassInfo]] = {}
        for info in project.classes.values():
            for name in _mentioned(info):
                self._mentioning.setdefault(name, []).append(info)

    def constructed(self, holder: ClassInfo, member: str) -> list[ClassInfo]:
        """The classes some path of ``holder``'s line constructs into ``self.<member>``, when
        there are several (empty otherwise)."""
        self._types_of(holder)
        return next((self._built[(n.fq, member)] for n in self._project.mro(holder)
                     if isinstance(n, ClassInfo) and (n.fq, member) in self._built), [])

    def _held_of(self, info: ClassInfo) -> dict[str, tuple[ClassInfo, bool]]:
        """The members ``info`` itself declares or constructs, resolved to classes."""
        held = self._held.get(info.fq)
        if held is None:
            held = self._held[info.fq] = {}
            project = self._project
            for attr, written in info.record.members.items():
                node = project.resolve_name(info.file, written.removesuffix("()"),
                                            scope=info.record.qualname)
                if isinstance(node, ClassInfo):
                    held[attr] = (node, written.endswith("()"))
            for attr, classes in info.record.constructed.items():
                nodes = [project.resolve_name(info.file, c.removesuffix("()"),
                                              scope=info.record.qualname)
                         for c in classes]
                built = [n for n in nodes if isinstance(n, ClassInfo)]
                if built:
                    self._built[(info.fq, attr)] = built
                    held.setdefault(attr, (built[0], True))
        return held

    def _types_of(self, info: ClassInfo) -> dict[str, tuple[ClassInfo, bool]]:
        """The members ``info``'s line declares, the nearest declaration winning."""
        types = self._types.get(info.fq)
        if types is None:
            types = self._types[info.fq] = {}
            for node in reversed(self._project.mro(info)):
                if isinstance(node, ClassInfo) and (
                        node.record.members or node.record.constructed):
                    types.update(self._held_of(node))
        return types

    def of(self, name: str) -> list[MemberCall]:
        found = self._by_name.get(name)
        if found is not None:
            return found
        found = self._by_name[name] = []
        mentioning = self._mentioning.get(name)
        if not mentioning:
            return found
        project = self._project
        # Classes declaring members first, then the subclasses that inherit them: the order
        # the calls are cited in.
        holders = sorted((info for info in mentioning if self._types_of(info)),
                         key=lambda info: not self._held_of(info))
        for info in holders:
            types = self._types_of(info)
            for caller, call in self._calls_of(info):
                if call.name == name and call.receiver == "member" and (
                    call.explicit_base in types
                ):
                    held_class, exact = types[call.explicit_base]
                    built = next((self._built[(n.fq, call.explicit_base)]
                                  for n in project.mro(info) if isinstance(n, ClassInfo)
                                  and (n.fq, call.explicit_base) in self._built), None)
                    if built is None:
                        found.append((info, caller, call, held_class, exact))
                    else:  # each constructor some path runs: exactly that class on that path
                        found.extend((info, caller, call, c, True) for c in built)
        for info in mentioning:
            if not info.record.narrows:
                continue
            for caller, call in self._calls_of(info):
                if call.name == name and call.receiver == "typed" and (
                    call.explicit_base is not None
                ):
                    node = project.resolve_name(info.file, call.explicit_base,
                                                scope=info.record.qualname)
                    if isinstance(node, ClassInfo):
                        found.append((info, caller, call, node, False))
        return found

    def _calls_of(self, info: ClassInfo) -> list[tuple[MethodRecord, CallSite]]:
        """``info``'s calls on members and narrowed names, read once."""
        calls = self._calls.get(info.fq)
        if calls is None:
            calls = self._calls[info.fq] = [
                (caller, call) for caller in info.record.methods.values()
                for call in caller.calls if call.receiver in ("member", "typed")
            ]
        return calls


def _mentioned(info: ClassInfo) -> frozenset[str]:
    """The names ``info``'s methods call on members or narrowed names (known without decoding
    them)."""
    return info.record.member_calls


class _CallIndex:
    """A class's ``self``/``cls``/``super()`` calls by callee name, built on first use: a gate
    run that checks one family never indexes the rest of the checkout."""

    def __init__(self) -> None:
        self._by_class: dict[str, CallsByName] = {}

    def of(self, info: ClassInfo) -> CallsByName:
        index = self._by_class.get(info.fq)
        if index is None:
            index = defaultdict(list)
            for method in info.record.methods.values():
                for call in method.calls:
                    if call.receiver in ("self", "cls", "super"):
                        index[call.name].append((method, call))
            self._by_class[info.fq] = index
        return index


def _caller_runs_for(
    project: Project, info: ClassInfo, ancestor: ClassInfo, caller: MethodRecord
) -> bool:
    """Whether ``ancestor.caller`` still runs for instances of ``info``.

    It does not when a class before ``ancestor`` in the MRO replaces it without ``super()``:
    each replacement on the way must pass the call on (holoviews' ``DonutPlot._init_glyphs``
    calls ``super()``, but the ``CompositeElementPlot._init_glyphs`` it reaches does not:
    first contact, round 11).
    """
    for node in project.mro(info):
        if node is ancestor:
            return True
        if isinstance(node, ClassInfo):
            replacement = node.method(caller.name)
            if replacement is not None and not any(
                    c.name == caller.name and c.receiver in ("super", "explicit")
                    for c in replacement.calls):
                return False
    return True
