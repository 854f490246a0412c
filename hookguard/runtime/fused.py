"""What generated value checks call: pass or fail, with one host transfer per hook call.

Short 1-d host tensors (up to :data:`SMALL` elements) are read as Python lists, without a torch
operation; other host tensors are checked with one torch reduction on the host (a count, a
minimum, ``aminmax``; ``torch.equal`` for ``equals``). A check of a CUDA tensor leaves one
boolean on its device ("bad") in ``flags``; :func:`flags_bad` ORs them there and copies the
result to the host once: the one synchronisation of the call. Each function returns ``True``
when the value is known to be bad (or the case is one the exact checker must judge).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any

import torch

from hookguard.runtime.expr import Expression, Namespace

__all__ = [
    "SMALL",
    "addresses_bad",
    "compare_bad",
    "equals_bad",
    "flags_bad",
    "invariant_bad",
    "range_bad",
    "result_bad",
    "values_bad",
]

#: Host tensors up to this many elements are checked as Python lists (cheaper than torch ops).
SMALL = 256


def _host_items(value: torch.Tensor) -> list[Any]:
    """The elements of a 0-d or 1-d host tensor as a list."""
    items: Any = value.tolist()
    return items if isinstance(items, list) else [items]


def _scalars(value: object) -> list[Any] | None:
    if isinstance(value, bool | numbers.Number):
        return [value]
    if isinstance(value, list | tuple):
        return [v for v in value if isinstance(v, numbers.Number)]
    return None


_PY_BAD: dict[str, Callable[[Any], bool]] = {
    "zeros": lambda v: v != 0,
    "nonzero": lambda v: v == 0,
    "nonneg": lambda v: v < 0,
    "positive": lambda v: v <= 0,
    "finite": lambda v: isinstance(v, float) and not math.isfinite(v),
}
_INT_BAD: dict[str, Callable[[list[Any]], bool]] = {  # non-empty lists of ints or bools
    "zeros": any,
    "nonzero": lambda items: not all(items),
    "nonneg": lambda items: min(items) < 0,
    "positive": lambda items: min(items) <= 0,
}
_DEVICE_BAD: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "zeros": lambda t: t.any(),
    "nonzero": lambda t: (t == 0).any(),
    "nonneg": lambda t: (t < 0).any(),
    "positive": lambda t: (t <= 0).any(),
    "finite": lambda t: torch.isfinite(t).logical_not().any(),
}


def values_bad(value: object, check: str, flags: list[torch.Tensor]) -> bool:
    """``values = check``: True when known bad on the host; CUDA results go to ``flags``."""
    if isinstance(value, torch.Tensor):
        if value.is_meta:
            return False
        if check == "finite" and not (value.is_floating_point() or value.is_complex()):
            return False
        if value.is_cpu:
            count = value.numel()
            if not count or value.is_complex():
                return bool(count) and bool(_DEVICE_BAD[check](value).item())
            exact = not value.is_floating_point()  # no NaN: min, max, any and counts are exact
            if value.dim() <= 1 and count <= SMALL:  # a short list: no torch operation
                items = _host_items(value)
                if exact:
                    return _INT_BAD[check](items)
                test = _PY_BAD[check]
                return any(test(v) for v in items)
            if check == "zeros":
                return bool(value.count_nonzero().item())
            if exact and check == "nonzero":
                return int(value.count_nonzero().item()) != count
            if exact and check in ("nonneg", "positive"):
                low = value.min().item()
                return bool(low < 0 if check == "nonneg" else low <= 0)
            return bool(_DEVICE_BAD[check](value).item())
        flags.append(_DEVICE_BAD[check](value))
        return False
    scalars = _scalars(value)
    if scalars is None:
        return False
    test = _PY_BAD[check]
    return any(test(v) for v in scalars)


def range_bad(value: object, lo: float, hi: float, flags: list[torch.Tensor]) -> bool:
    if isinstance(value, torch.Tensor):
        if value.is_meta:
            return False
        if value.is_cpu:
            count = value.numel()
            exact = not (value.is_floating_point() or value.is_complex())  # no NaN
            if count and exact:
                if value.dim() <= 1 and count <= SMALL:
                    items = _host_items(value)
                    return bool(min(items) < lo or max(items) > hi)
                low, high = torch.aminmax(value)
                return bool(low.item() < lo or high.item() > hi)
            return bool(((value < lo) | (value > hi)).any().item())
        flags.append(((value < lo) | (value > hi)).any())
        return False
    scalars = _scalars(value)
    return scalars is not None and any(not lo <= v <= hi for v in scalars)


def equals_bad(
    value: object, expr: Expression, namespace: Namespace, flags: list[torch.Tensor]
) -> bool:
    try:
        expected = expr(namespace)
    except (NameError, KeyError):
        return False  # the exact checker skips it too
    except Exception:
        return True  # the exact checker reports it
    return compare_bad(value, expected, flags)


def compare_bad(value: object, expected: object, flags: list[torch.Tensor]) -> bool:
    """``equals``, once its expression has been evaluated (by the evaluator or inlined)."""
    if isinstance(value, torch.Tensor):
        if value.is_meta:
            return False
        if not isinstance(expected, torch.Tensor):
            other = torch.as_tensor(expected, device=value.device)
        elif (
            expected.is_cuda == value.is_cuda
            and expected.get_device() == value.get_device()
            and not expected.is_meta
        ):
            other = expected  # already where the value is (no .to() call)
        else:
            other = expected.to(value.device)
        if other.shape != value.shape:
            return True
        if value.is_cpu:
            if other.dtype == value.dtype and other.is_cpu:
                return not torch.equal(value, other)  # one host operation; NaN is unequal
            return bool((value != other).any().item())
        flags.append((value != other).any())
        return False
    if isinstance(expected, torch.Tensor):
        expected = expected.tolist()
    if isinstance(value, tuple):
        value = list(value)
    if isinstance(expected, tuple):
        expected = list(expected)
    return bool(value != expected)


def addresses_bad(value: object, column: int) -> bool:
    from hookguard.runtime import cuda_memory

    if not isinstance(value, torch.Tensor) or value.is_meta or not cuda_memory.can_check():
        return False
    if not value.is_cpu:
        return True  # a device-side pointer table: let the exact checker batch it
    pointers = value
    if value.dim() >= 2:
        pointers = value.select(1, min(column, value.shape[1] - 1))
    return bool(cuda_memory.dead_pointers(pointers.reshape(-1).tolist()))


def invariant_bad(expr: Expression, namespace: Namespace, flags: list[torch.Tensor]) -> bool:
    try:
        result = expr(namespace)
    except (NameError, KeyError):
        return False
    except Exception:
        return True
    return result_bad(result, flags)


def result_bad(result: object, flags: list[torch.Tensor]) -> bool:
    """An invariant, once evaluated: false, or a tensor not all true."""
    if isinstance(result, torch.Tensor):
        if result.is_cpu:
            return not bool((result if result.dim() == 0 else result.all()).item())
        if result.is_meta:
            return True
        if result.dim() == 0 and result.dtype is torch.bool:
            flags.append(result.logical_not())  # already reduced (``(...).all()``): one kernel
        else:
            flags.append(result.bool().all().logical_not())
        return False
    return not result


def _any_bad(flags: list[torch.Tensor]) -> bool:
    """The OR of one device's flags, copied to the host as one scalar (``.item()``, the fast
    copy; ``.tolist()`` of a stacked tensor costs about twice as much on an H200)."""
    if len(flags) == 1:
        return bool(flags[0].item())
    if len(flags) == 2:
        return bool(torch.logical_or(flags[0], flags[1]).item())
    return bool(torch.stack(flags).any().item())


def flags_bad(flags: list[torch.Tensor]) -> bool:
    """One host transfer per device of every CUDA result: the synchronisation of the call."""
    index = flags[0].get_device()
    if all(f.get_device() == index for f in flags):
        return _any_bad(flags)
    groups: dict[int, list[torch.Tensor]] = {}
    for flag in flags:
        groups.setdefault(flag.get_device(), []).append(flag)
    return any(_any_bad(group) for group in groups.values())
