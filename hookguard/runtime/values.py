"""Value checks (``values``, ``range``, ``equals``, ``addresses``, invariants): the exact path.

Every check yields an int64 count of failing elements computed where the tensor lives; the
counts of each CUDA device are concatenated and copied to the host once (one synchronisation per
hook call). Host tensors are read directly. This path builds the report; the generated fast path
(:mod:`hookguard.runtime.codegen`) only decides pass or fail.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from hookguard.runtime.expr import Expression, Namespace
from hookguard.runtime.fields import FieldCheck, fmt_shape
from hookguard.runtime.violations import Violation

__all__ = ["VALUE_WORDS", "check_values"]


@dataclass(frozen=True)
class _Pending:
    """A value check whose count of failing elements is still on its device."""

    field: str
    kind: str
    expected: str
    condition: str | None
    total: int
    fmt: Callable[[list[int]], str] | None = None  # for multi-element results (addresses)
    width: int = 1


def check_values(
    obj: object,
    active: Sequence[FieldCheck],
    invariants: Sequence[Expression],
    present: Mapping[str, object],
    failed: set[str],
    args: Mapping[str, Any],
    bound: Mapping[str, int],
) -> list[Violation]:
    batch = _Batch()
    names: dict[str, Any] = {"torch": torch, **bound, **args, **present}
    namespace = Namespace(names, obj)
    for spec in active:
        if spec.name not in present or spec.name in failed:
            continue
        value = present[spec.name]
        s = spec.spec
        if s.values is not None:
            batch.next()
            _value_check(batch, spec, value, s.values)
        if s.range is not None:
            batch.next()
            _range_check(batch, spec, value, s.range)
        if spec.equals is not None:
            batch.next()
            _equals_check(batch, spec, value, namespace)
        if s.addresses is not None and isinstance(value, torch.Tensor):
            batch.next()
            _address_check(batch, spec, value)
    for expr in invariants:
        batch.next()
        if any(n in failed for n in expr.names):
            continue
        try:
            result = expr(namespace)
        except Exception as exc:
            if isinstance(exc, NameError | KeyError):
                continue  # refers to a field that is absent: reported as missing
            batch.emit(
                Violation(
                    field="(invariant)",
                    kind="invariant",
                    expected=expr.text,
                    actual=f"raised {type(exc).__name__}: {exc}",
                )
            )
            continue
        pending = _Pending("(invariant)", "invariant", expr.text, None, 1)
        if isinstance(result, torch.Tensor):
            batch.add(pending, (~result.bool().all()).to(torch.int64).reshape(1))
        elif not result:
            batch.emit(_violation(pending, [1]))
    return batch.resolve()


def _violation(pending: _Pending, counts: list[int]) -> Violation:
    if pending.fmt is not None:
        actual = pending.fmt(counts)
    elif pending.kind == "invariant":
        actual = "false"
    else:
        actual = f"{counts[0]} of {pending.total} elements fail"
    return Violation(
        field=pending.field,
        kind=pending.kind,
        expected=pending.expected,
        actual=actual,
        condition=pending.condition,
    )


class _Batch:
    """int64 results per device; one host transfer per device when resolved."""

    def __init__(self) -> None:
        self.items: dict[torch.device, list[tuple[int, _Pending, torch.Tensor]]] = {}
        self.done: list[tuple[int, Violation]] = []
        self.seq = 0  # the check being computed: results keep the contract's order

    def next(self) -> None:
        self.seq += 1

    def add(self, pending: _Pending, counts: torch.Tensor) -> None:
        self.items.setdefault(counts.device, []).append((self.seq, pending, counts))

    def emit(self, violation: Violation) -> None:
        self.done.append((self.seq, violation))

    def resolve(self) -> list[Violation]:
        out = self.done
        for device, items in self.items.items():
            if device.type == "meta":
                continue
            if device.type == "cpu":
                host: list[int] = []  # host tensors: read directly, nothing to transfer
                for _, _, c in items:
                    host.extend(c.tolist())
            else:
                flat = torch.cat([c.to(torch.int64) for _, _, c in items])
                host = flat.cpu().tolist()  # the one synchronisation for this device
            offset = 0
            for seq, pending, counts in items:
                n = counts.numel()
                chunk = host[offset : offset + n]
                offset += n
                if pending.fmt is not None:
                    message = pending.fmt(chunk)
                    if message:
                        violation = Violation(
                            pending.field,
                            pending.kind,
                            pending.expected,
                            message,
                            condition=pending.condition,
                        )
                        out.append((seq, violation))
                elif chunk[0]:
                    out.append((seq, _violation(pending, chunk)))
        out.sort(key=lambda item: item[0])
        return [violation for _, violation in out]


_VALUE_TESTS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "zeros": lambda t: t != 0,
    "nonzero": lambda t: t == 0,
    "nonneg": lambda t: t < 0,
    "positive": lambda t: t <= 0,
    "finite": lambda t: ~torch.isfinite(t),
}
_PY_VALUE_TESTS: dict[str, Callable[[Any], bool]] = {
    "zeros": lambda v: v != 0,
    "nonzero": lambda v: v == 0,
    "nonneg": lambda v: v < 0,
    "positive": lambda v: v <= 0,
    "finite": lambda v: isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))),
}
VALUE_WORDS = {
    "zeros": "all elements zero",
    "nonzero": "no element zero",
    "nonneg": "all elements >= 0",
    "positive": "all elements > 0",
    "finite": "all elements finite",
}


def _scalars(value: object) -> list[Any] | None:
    if isinstance(value, bool):
        return [value]
    if isinstance(value, numbers.Number):
        return [value]
    if isinstance(value, list | tuple):
        return [v for v in value if isinstance(v, numbers.Number)]
    return None


def _value_check(batch: _Batch, spec: FieldCheck, value: object, check: str) -> None:
    pending = _Pending(spec.name, "value", VALUE_WORDS[check], spec.condition, _numel(value))
    if isinstance(value, torch.Tensor):
        if value.device.type == "meta":
            return
        if check == "finite" and not (value.is_floating_point() or value.is_complex()):
            return
        batch.add(pending, torch.count_nonzero(_VALUE_TESTS[check](value)).reshape(1))
        return
    items = _scalars(value)
    if items is not None:
        bad = sum(1 for v in items if _PY_VALUE_TESTS[check](v))
        if bad:
            batch.emit(_violation(pending, [bad]))


def _range_check(
    batch: _Batch,
    spec: FieldCheck,
    value: object,
    bounds: tuple[float, float],
) -> None:
    lo, hi = bounds
    pending = _Pending(
        spec.name, "value", f"all elements in [{lo}, {hi}]", spec.condition, _numel(value)
    )
    if isinstance(value, torch.Tensor):
        if value.device.type == "meta":
            return
        batch.add(pending, torch.count_nonzero((value < lo) | (value > hi)).reshape(1))
        return
    items = _scalars(value)
    if items is not None:
        bad = sum(1 for v in items if not lo <= v <= hi)
        if bad:
            batch.emit(_violation(pending, [bad]))


def _equals_check(batch: _Batch, spec: FieldCheck, value: object, namespace: Namespace) -> None:
    assert spec.equals is not None
    text = spec.equals.text
    try:
        expected = spec.equals(namespace)
    except (NameError, KeyError):
        return
    except Exception as exc:
        batch.emit(
            Violation(
                spec.name,
                "value",
                f"equals {text}",
                f"{text} raised {type(exc).__name__}: {exc}",
                condition=spec.condition,
            )
        )
        return
    if isinstance(value, torch.Tensor):
        if value.device.type == "meta":
            return
        other = (
            expected.to(value.device)
            if isinstance(expected, torch.Tensor)
            else torch.as_tensor(expected, device=value.device)
        )
        if tuple(other.shape) != tuple(value.shape):
            batch.emit(
                Violation(
                    spec.name,
                    "value",
                    f"equals {text} (shape {fmt_shape(other.shape)})",
                    f"shape {fmt_shape(value.shape)}",
                    condition=spec.condition,
                )
            )
            return
        pending = _Pending(spec.name, "value", f"equals {text}", spec.condition, value.numel())
        batch.add(pending, torch.count_nonzero(value != other).reshape(1))
        return
    if isinstance(expected, torch.Tensor):
        expected = expected.tolist()
    if isinstance(value, tuple):
        value = list(value)
    if isinstance(expected, tuple):
        expected = list(expected)
    if value != expected:
        batch.emit(
            Violation(spec.name, "value", f"equals {text}", _short(value), condition=spec.condition)
        )


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _numel(value: object) -> int:
    if isinstance(value, torch.Tensor):
        return int(value.numel())
    if isinstance(value, list | tuple):
        return len(value)
    return 1


def _address_check(batch: _Batch, spec: FieldCheck, value: torch.Tensor) -> None:
    """Non-zero entries of the pointer column must point into live CUDA allocations."""
    from hookguard.runtime import cuda_memory

    if value.device.type == "meta" or not cuda_memory.can_check():
        return
    column = value
    if value.dim() >= 2:
        column = value.select(1, min(spec.spec.address_column, value.shape[1] - 1))
    pointers = column.reshape(-1).to(torch.int64)
    name = spec.name

    def fmt(host: list[int]) -> str:
        bad = cuda_memory.dead_pointers(host)
        if not bad:
            return ""
        shown = ", ".join(f"{hex(p)} ({why})" for p, why in bad[:3])
        more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
        return f"{len(bad)} of {len(host)} pointers dead: {shown}{more}"

    pending = _Pending(
        name,
        "value",
        "non-zero pointers into live CUDA allocations",
        spec.condition,
        pointers.numel(),
        fmt=fmt,
        width=pointers.numel(),
    )
    batch.add(pending, pointers)
