"""Check hook contracts when the outermost call of a hook returns.

:class:`Enforcer` wraps each contract's hook (see :mod:`hookguard.runtime.instrument`). A set
of the objects whose hook is running makes the check run once, after the
outermost implementation returns, so a subclass that calls ``super()`` and then adjusts fields is
checked after its adjustments.

The check itself is the contract's generated function for the object's class
(:mod:`hookguard.runtime.codegen`): straight-line code that says pass or fail. Only when it says
fail (or for a call it does not cover: keyword arguments, a class with stale overrides) does the
exact checker run, which builds the report.

A contract that never matched a class (a wrong class or method name, a module never imported)
checks nothing: ``uninstall()`` says so, one :class:`UnmatchedContractWarning` per contract at
its ``file:line``, as pytest reports an unknown marker.
"""

from __future__ import annotations

import functools
import inspect
import os
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from hookguard.contracts import HookContract
from hookguard.runtime.checks import CompiledContract, source_location
from hookguard.runtime.codegen import Check, generate
from hookguard.runtime.distributed import rank_info, record_elastic_error
from hookguard.runtime.instrument import Instrumenter, Target, Unmatched, qualified
from hookguard.runtime.violations import ContractViolation, ContractWarning, Violation

__all__ = [
    "Enforcer",
    "UnmatchedContractWarning",
    "enforce",
    "runtime_enabled",
    "verify",
    "warn_unmatched",
]

_WRAPPED = "__hookguard_wrapped__"
_UNBUILT: Any = object()


def runtime_enabled() -> bool:
    """``False`` when the environment says ``HOOKGUARD_RUNTIME=0`` (or ``false``/``off``/``no``)."""
    return os.environ.get("HOOKGUARD_RUNTIME", "1").strip().lower() not in (
        "0",
        "false",
        "off",
        "no",
    )


class UnmatchedContractWarning(UserWarning):
    """A contract matched no class while it was enforced: it checked nothing."""


def warn_unmatched(unmatched: Iterable[Unmatched]) -> None:
    """One :class:`UnmatchedContractWarning` per contract, located at the contract's
    ``file:line`` (where a reader fixes it), as pytest locates an unknown marker's warning."""
    for item in unmatched:
        warnings.warn_explicit(
            UnmatchedContractWarning(f"hookguard: {item.text()}"),
            UnmatchedContractWarning,
            filename=item.contract.path,
            lineno=item.contract.line,
        )


class _Checked(Target):
    """A target with its compiled contract and the generated check of each class seen."""

    def __init__(self, contract: HookContract) -> None:
        super().__init__(contract)
        self.compiled = CompiledContract(contract)
        #: ids of the objects whose hook is running. One set for all threads: a hook running on
        #: the same object in two threads at once is checked when the first call returns.
        self.running: set[int] = set()
        #: class -> generated check (None: the exact checker runs every time)
        self.fast: dict[type, Check | None] = {}


class Enforcer(Instrumenter):
    """Checks hook contracts at runtime; a context manager and an install/uninstall pair.

    ``mode="raise"`` raises :class:`ContractViolation` from the hook call; ``mode="warn"``
    issues a :class:`ContractWarning` instead. ``values=True`` adds the value checks
    (``values``, ``range``, ``equals``, ``addresses``, invariants): one device-to-host transfer
    per hook call. Every violation found is also kept in :attr:`history`; ``on_violation`` is
    called with each :class:`ContractViolation` before it is raised or warned.

    Under torchelastic (``TORCHELASTIC_ERROR_FILE`` set), a violation raised in ``raise`` mode is
    also written to this worker's error file, as torch's ``@record`` writes an uncaught
    exception, so the launcher's failure summary names it as the root cause.

    ``uninstall()`` warns (:class:`UnmatchedContractWarning`) about each contract that matched
    no class meanwhile (:meth:`unmatched`); ``warn_unmatched=False`` leaves that to the caller
    (the pytest plugin reports them at the end of the session).
    """

    def __init__(
        self,
        contracts: Iterable[HookContract],
        *,
        mode: str = "raise",
        values: bool = False,
        on_violation: Callable[[ContractViolation], None] | None = None,
        warn_unmatched: bool = True,
    ) -> None:
        if mode not in ("raise", "warn"):
            raise ValueError(f"mode must be 'raise' or 'warn', not {mode!r}")
        self.mode = mode
        self.values = values
        self.on_violation = on_violation
        self.warn_unmatched = warn_unmatched
        self.history: list[ContractViolation] = []
        #: Contract checks run so far (one per outermost hook call).
        self.checks = 0
        super().__init__(contracts, enabled=runtime_enabled())

    def _target(self, contract: HookContract) -> Target:
        return _Checked(contract)

    def uninstall(self) -> None:
        """Restore every patched method; warn about each contract that matched no class."""
        if not self.installed:
            return
        unmatched = self.unmatched() if self.warn_unmatched else []
        super().uninstall()
        warn_unmatched(unmatched)

    def _wrap(self, target: _Checked, func: Callable[..., Any]) -> Callable[..., Any]:
        enforcer = self
        objects = target.running
        fast = target.fast
        unbuilt = _UNBUILT
        after_call = self._after_call
        after_failure = self._after_failure

        @functools.wraps(func)
        def hook(obj: Any, *args: Any, **kwargs: Any) -> Any:
            if not enforcer.installed:
                return func(obj, *args, **kwargs)
            key = id(obj)
            if key in objects:  # an inner call (super()): the outermost one checks
                return func(obj, *args, **kwargs)
            objects.add(key)
            try:
                result = func(obj, *args, **kwargs)
            except Exception as exc:
                objects.discard(key)
                after_failure(target, func, obj, exc)
                raise
            except BaseException:
                objects.discard(key)
                raise
            objects.discard(key)
            enforcer.checks += 1
            check = fast.get(obj.__class__, unbuilt)
            if check is unbuilt or check is None or kwargs or not check(obj, args):
                after_call(target, func, obj, args, kwargs)
            return result

        setattr(hook, _WRAPPED, self)
        return hook

    # -- checking --------------------------------------------------------------------------

    def _generated(self, target: _Checked, cls: type) -> Check | None:
        """Generate (once per class) the contract's check for objects of ``cls``."""
        params: tuple[str, ...] | None = None
        defaults: dict[str, Any] = {}
        if target.positional is not None:
            params, defaults = target.positional
        try:
            generated = generate(target.compiled, cls, target.base or cls, params, defaults)
        except Exception as exc:  # a generator bug must not break the hook: check exactly
            warnings.warn(
                f"hookguard: no generated check for {qualified(cls)} "
                f"({type(exc).__name__}: {exc}); using the exact checker",
                RuntimeWarning,
                stacklevel=2,
            )
            generated = None
        check = None
        if generated is not None:
            check = generated.full if self.values else generated.metadata
        target.fast[cls] = check
        return check

    def _after_call(
        self,
        target: _Checked,
        func: Callable[..., Any],
        obj: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> None:
        """The exact check: on a generated check's failure, or where none applies."""
        if obj.__class__ not in target.fast:
            check = self._generated(target, obj.__class__)
            if check is not None and not kwargs and check(obj, args):
                return
        bound: dict[str, Any] = {}
        fast = target.positional
        if not kwargs and fast is not None and len(args) <= len(fast[0]):
            # positional arguments only (no inspect.Signature.bind)
            names, defaults = fast
            bound = dict(defaults)
            bound.update(zip(names, args, strict=False))
        else:
            for sig in (target.signature, _signature(func)):
                if sig is None:
                    continue
                try:
                    bound = dict(sig.bind(obj, *args, **kwargs).arguments)
                    break
                except TypeError:
                    continue
            bound.pop(next(iter(bound), ""), None)  # self
        violations = target.compiled.check(obj, bound, values=self.values, base=target.base)
        if violations:
            self._report(target, type(obj), source_location(func), violations)

    def _after_failure(
        self, target: _Checked, func: Callable[..., Any], obj: Any, exc: Exception
    ) -> None:
        """The hook raised: if a stale override explains it, report that (chained)."""
        if isinstance(exc, ContractViolation):
            return
        stale = target.compiled.stale_overrides(type(obj), target.base or type(obj))
        if not stale:
            return
        note = f"the hook raised {type(exc).__name__}: {exc}"
        stale = [
            Violation(v.field, v.kind, v.expected, v.actual, detail=f"{v.detail}; {note}")
            for v in stale
        ]
        self._report(target, type(obj), source_location(func), stale, cause=exc)

    def _report(
        self,
        target: _Checked,
        cls: type,
        implementation: str,
        violations: list[Violation],
        cause: BaseException | None = None,
    ) -> None:
        info = rank_info()
        error = ContractViolation(
            qualified(cls),
            target.contract.method,
            violations,
            implementation=implementation,
            contract=target.contract.location,
            rank=info.rank,
            local_rank=info.local_rank,
            world_size=info.world_size,
            host=info.host,
        )
        self.history.append(error)
        if self.on_violation is not None:
            self.on_violation(error)
        if self.mode == "raise":
            try:
                raise error from cause
            except ContractViolation:
                record_elastic_error(error)
                raise
        warnings.warn(ContractWarning(str(error)), stacklevel=4)


@functools.lru_cache(maxsize=512)
def _signature(func: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(func)
    except (TypeError, ValueError):
        return None


def enforce(
    contracts: Iterable[HookContract] | str | os.PathLike[str],
    mode: str = "raise",
    *,
    values: bool = False,
    on_violation: Callable[[ContractViolation], None] | None = None,
) -> Enforcer:
    """Instrument the contracts' hooks now; use as ``with enforce(...):`` or call ``.uninstall()``.

    ``contracts`` is a list of :class:`HookContract` or a path for :func:`load_contracts`. With
    ``HOOKGUARD_RUNTIME=0`` in the environment nothing is installed.
    """
    if isinstance(contracts, str | os.PathLike):
        from hookguard.contracts import load_contracts

        contracts = load_contracts(contracts)
    return Enforcer(contracts, mode=mode, values=values, on_violation=on_violation).install()


def verify(
    obj: object,
    contracts: Iterable[HookContract] | str | os.PathLike[str],
    *,
    values: bool = False,
    args: dict[str, Any] | None = None,
) -> list[Violation]:
    """Every violation of the contracts that apply to ``obj``'s class; never raises for them.

    ``args`` stands in for the hook call's arguments (``{"index_mapper_capacity": 8}``); names
    not found there resolve to attributes of ``obj`` or bind on first use.
    """
    if isinstance(contracts, str | os.PathLike):
        from hookguard.contracts import load_contracts

        contracts = load_contracts(contracts)
    out: list[Violation] = []
    for contract in contracts:
        compiled = _compiled(contract)
        base = compiled.matches(type(obj))
        if base is None:
            continue
        out.extend(compiled.check(obj, args or {}, values=values, base=base))
    return out


@functools.lru_cache(maxsize=256)
def _compiled(contract: HookContract) -> CompiledContract:
    return CompiledContract(contract)
