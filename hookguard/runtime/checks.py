"""The exact check of an object against a hook contract: every violation, with its message.

A contract is compiled once into a :class:`CompiledContract` (fields in
:mod:`hookguard.runtime.fields`). :meth:`CompiledContract.check` interprets it field by field and
reports every failing property; it is the reference the generated fast checks
(:mod:`hookguard.runtime.codegen`) are tested against, and what builds the report once a fast
check says an object fails. Metadata (type, dtype, device, shape, pinning, contiguity) is read on
the host, never a device synchronisation; value checks live in :mod:`hookguard.runtime.values`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from hookguard.contracts import HookContract
from hookguard.runtime.describe import cuda_available, describe, source_location
from hookguard.runtime.expr import Expression
from hookguard.runtime.fields import (
    MISSING,
    Env,
    FieldCheck,
    compile_field,
    eval_dim,
    expected_meta,
    fmt_shape,
    render_shape,
    resolve,
    shape_of,
)
from hookguard.runtime.values import check_values
from hookguard.runtime.violations import Violation

__all__ = [
    "CompiledContract",
    "compile_contract",
    "cuda_available",
    "describe",
    "source_location",
]


class _Report:
    """Failures of one field, gathered before they become :class:`Violation` objects."""

    __slots__ = ("field", "kinds", "value")

    def __init__(self, field: FieldCheck, value: object) -> None:
        self.field = field
        self.value = value
        self.kinds: list[tuple[str, str, str]] = []  # (kind, expected, actual)


class CompiledContract:
    """A :class:`HookContract` prepared for fast checks of many objects."""

    def __init__(self, contract: HookContract) -> None:
        self.contract = contract
        self.fields: tuple[FieldCheck, ...] = tuple(
            compile_field(spec, None) for spec in contract.fields.values()
        )
        self.when: tuple[tuple[str, tuple[FieldCheck, ...], tuple[Expression, ...]], ...] = tuple(
            (
                clause.attr,
                tuple(compile_field(spec, clause.attr) for spec in clause.fields.values()),
                tuple(Expression(text, where=f"{contract.path}:{clause.line}")
                      for text in clause.invariants),
            )
            for clause in contract.when
        )
        lines = (*contract.invariant_lines, *[contract.line] * len(contract.invariants))
        self.invariants = tuple(Expression(text, where=f"{contract.path}:{line}")
                                for text, line in zip(contract.invariants, lines, strict=False))
        self.has_values = (
            bool(self.invariants)
            or any(f.spec.has_value_checks for f in self.all_fields())
            or any(inv for _, _, inv in self.when)
        )

    def all_fields(self) -> tuple[FieldCheck, ...]:
        out = list(self.fields)
        for _, fields, _ in self.when:
            out.extend(fields)
        return tuple(out)

    # ----------------------------------------------------------------------------------------

    def matches(self, cls: type) -> type | None:
        """The class in ``cls.__mro__`` named by the contract, if any."""
        target = self.contract.cls
        for klass in cls.__mro__:
            if f"{klass.__module__}.{klass.__qualname__}" == target:
                return klass
        return None

    def stale_overrides(self, cls: type, base: type) -> list[Violation]:
        """Methods of ``cls`` (below ``base``) still named by ``renamed_from``."""
        out: list[Violation] = []
        if not self.contract.renamed_from:
            return out
        mro = cls.__mro__
        below = mro[: mro.index(base)] if base in mro else mro
        for old in self.contract.renamed_from:
            for klass in below:
                if old in klass.__dict__:
                    where = source_location(klass.__dict__[old])
                    out.append(
                        Violation(
                            field=old,
                            kind="stale-override",
                            expected=f"override {self.contract.method}",
                            actual=f"{klass.__qualname__}.{old} at {where}",
                            detail=(
                                f"{klass.__qualname__}.{old} ({where}) never runs: "
                                f"{base.__qualname__} replaced {old} with the hook "
                                f"{self.contract.method}; move the override there"
                            ),
                        )
                    )
                    break
        return out

    def overridden(self, cls: type, base: type, method: str) -> bool:
        mro = cls.__mro__
        if base not in mro:
            return False
        return any(method in klass.__dict__ for klass in mro[: mro.index(base)])

    # ----------------------------------------------------------------------------------------

    def check(
        self,
        obj: object,
        args: Mapping[str, Any] | None = None,
        *,
        values: bool = False,
        base: type | None = None,
    ) -> list[Violation]:
        """Every violation of the contract by ``obj`` (after a hook call with ``args``)."""
        cls = type(obj)
        if base is None:
            base = self.matches(cls) or cls
        violations = self.stale_overrides(cls, base)
        args = args or {}
        active: list[FieldCheck] = list(self.fields)
        invariants: list[Expression] = list(self.invariants)
        for attr, fields, clause_invariants in self.when:
            if getattr(obj, attr, False):
                active.extend(fields)
                invariants.extend(clause_invariants)
        bound: dict[str, int] = {}
        env = Env(args, obj)
        reports: list[_Report] = []
        present: dict[str, object] = {}
        deferred: list[tuple[_Report, tuple[int, ...]]] = []
        for spec in active:
            if spec.spec.consumers and all(
                self.overridden(cls, base, c) for c in spec.spec.consumers
            ):
                continue
            try:
                value = getattr(obj, spec.name, MISSING)
            except Exception:  # a property that raises: the field is not usable
                value = MISSING
            report = _Report(spec, value)
            if value is MISSING or (value is None and spec.kind != "any"):
                report.kinds.append(("missing", expected_meta(spec, env, bound), "missing"))
                reports.append(report)
                continue
            present[spec.name] = value
            self._check_metadata(report, value)
            if spec.shape is not None:
                actual_shape = shape_of(value)
                if actual_shape is not None:
                    self._check_shape(report, actual_shape, env, bound, deferred, first=True)
            if report.kinds:
                reports.append(report)
        for report, actual_shape in deferred:
            self._check_shape(report, actual_shape, env, bound, None, first=False)
            if report.kinds and report not in reports:
                reports.append(report)
        for report in reports:
            violations.extend(_to_violations(report, env, bound))
        if values:
            failed = {r.field.name for r in reports}
            violations.extend(
                check_values(obj, active, invariants, present, failed, args, bound)
            )
        return violations

    def _check_metadata(self, report: _Report, value: object) -> None:
        spec = report.field
        if isinstance(value, torch.Tensor):
            if spec.kind not in (None, "tensor", "any"):
                report.kinds.append(("type", spec.kind or "", "tensor"))
                return
            if spec.dtype is not None and value.dtype != spec.dtype:
                report.kinds.append(
                    ("dtype", str(spec.dtype)[6:], str(value.dtype).removeprefix("torch."))
                )
            device = value.device
            if spec.device is not None and not spec.device.accepts(device):
                report.kinds.append(("device", spec.device.expected(), str(device)))
            s = spec.spec
            if (
                s.pinned is not None
                and device.type == "cpu"
                and cuda_available()
                and value.is_pinned() != s.pinned
            ):
                report.kinds.append(
                    (
                        "pinned",
                        "pinned" if s.pinned else "not pinned",
                        "not pinned" if s.pinned else "pinned",
                    )
                )
            if (
                s.contiguous is not None
                and device.type != "meta"
                and value.is_contiguous() != s.contiguous
            ):
                report.kinds.append(
                    (
                        "contiguous",
                        "contiguous" if s.contiguous else "non-contiguous",
                        "non-contiguous" if s.contiguous else "contiguous",
                    )
                )
            return
        if spec.is_type is not None and not spec.is_type(value):
            report.kinds.append(("type", spec.kind or "", type(value).__name__))
            return
        if spec.is_type is None and spec.dtype is not None:
            report.kinds.append(("type", "tensor", type(value).__name__))
            return
        if spec.items is not None and isinstance(value, list | tuple):
            bad = [i for i, item in enumerate(value) if not spec.items(item)]
            if bad:
                item = value[bad[0]]
                report.kinds.append(
                    ("type", f"list[{spec.spec.items}]", f"item {bad[0]} is {type(item).__name__}")
                )

    def _check_shape(
        self,
        report: _Report,
        actual: tuple[int, ...],
        env: Env,
        bound: dict[str, int],
        deferred: list[tuple[_Report, tuple[int, ...]]] | None,
        *,
        first: bool,
    ) -> None:
        dims = report.field.shape
        assert dims is not None
        split = report.field.split
        if split is None:
            if len(actual) != len(dims):
                report.kinds.append(("shape", render_shape(dims, env, bound), fmt_shape(actual)))
                return
            pairs = list(zip(dims, actual, strict=True))
        else:
            head, tail = dims[:split], dims[split + 1 :]
            if len(actual) < len(head) + len(tail):
                report.kinds.append(("shape", render_shape(dims, env, bound), fmt_shape(actual)))
                return
            pairs = list(zip(head, actual[: len(head)], strict=True))
            if tail:
                pairs += list(zip(tail, actual[len(actual) - len(tail) :], strict=True))
        wait = False
        for dim, size in pairs:
            if dim.wildcard:
                continue
            if dim.literal is not None:
                if size != dim.literal:
                    break
                continue
            if dim.name is not None:
                known = resolve(dim.name, env, bound)
                if known is None:
                    if first:
                        bound[dim.name] = size
                        continue
                    continue
                if known != size:
                    break
                continue
            assert dim.expr is not None
            expected = eval_dim(dim.expr, env, bound)
            if expected is None:
                wait = True
                continue
            if expected != size:
                break
        else:
            if wait and first and deferred is not None:
                deferred.append((report, actual))
            return
        report.kinds.append(("shape", render_shape(dims, env, bound), fmt_shape(actual)))


def _to_violations(report: _Report, env: Env, bound: Mapping[str, int]) -> list[Violation]:
    spec = report.field
    whole = expected_meta(spec, env, bound)
    actual_meta = "missing" if report.value is MISSING else describe(report.value)
    return [
        Violation(
            field=spec.name,
            kind=kind,
            expected=expected,
            actual=actual,
            expected_meta=whole,
            actual_meta=actual_meta,
            condition=spec.condition,
        )
        for kind, expected, actual in report.kinds
    ]


def compile_contract(contract: HookContract) -> CompiledContract:
    return CompiledContract(contract)
