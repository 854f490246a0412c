"""Contract fields compiled for checking: torch dtypes looked up, devices and dimensions parsed.

Shared by the exact checker (:mod:`hookguard.runtime.checks`), the generated fast checks
(:mod:`hookguard.runtime.codegen`) and the value checks (:mod:`hookguard.runtime.values`).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from hookguard.contracts import Dim, FieldSpec
from hookguard.runtime.describe import cuda_available
from hookguard.runtime.distributed import current_cuda_index, known_cuda_index
from hookguard.runtime.expr import Expression

__all__ = [
    "MISSING",
    "PY_TYPES",
    "DeviceRule",
    "Env",
    "FieldCheck",
    "compile_field",
    "expected_meta",
    "render_shape",
    "shape_of",
]

MISSING = object()
PY_TYPES: dict[str, Callable[[Any], bool]] = {
    "int": lambda v: isinstance(v, numbers.Integral) and not isinstance(v, bool),
    "float": lambda v: isinstance(v, numbers.Real) and not isinstance(v, bool),
    "bool": lambda v: isinstance(v, bool),
    "str": lambda v: isinstance(v, str),
    "list": lambda v: isinstance(v, list | tuple),
    "dict": lambda v: isinstance(v, Mapping),
    "tensor": lambda v: isinstance(v, torch.Tensor),
    "any": lambda v: True,
}


@dataclass(frozen=True)
class DeviceRule:
    """Where a tensor must live: a device type, maybe an index, maybe *this process's* device."""

    type: str
    index: int | None = None
    current: bool = False  # cuda:current: the index is this process's device, read at check time
    label: str = ""

    def accepts(self, device: torch.device) -> bool:
        if device.type != self.type:
            return False
        if self.current:
            return device.index == current_cuda_index()
        return self.index is None or device.index == self.index

    def expected(self) -> str:
        """``cpu``, ``cuda:1`` or, for this process's device, ``cuda:1 (current)``."""
        if self.current:
            index = known_cuda_index()
            return f"cuda:{index} (current)" if index is not None else self.label
        return self.label


def device_rule(spelling: str | None) -> DeviceRule | None:
    """The rule for a contract's ``device`` (``None``: any device)."""
    if spelling is None or spelling == "any":
        return None
    if spelling == "cuda-if-available":
        spelling = "cuda" if cuda_available() else "cpu"
    if spelling == "current":
        spelling = "cuda:current" if cuda_available() else "cpu"
    if spelling == "cuda:current":
        return DeviceRule("cuda", current=True, label=spelling)
    kind, _, index = spelling.partition(":")
    return DeviceRule(kind, int(index) if index else None, label=spelling)


@dataclass(frozen=True)
class DimSpec:
    text: str
    literal: int | None = None  # an int dimension
    wildcard: bool = False  # "*"
    ellipsis: bool = False  # "..."
    name: str | None = None  # a bare name
    expr: Expression | None = None  # arithmetic over names


def _compile_dim(dim: Dim) -> DimSpec:
    if isinstance(dim, int):
        return DimSpec(str(dim), literal=dim)
    if dim == "*":
        return DimSpec(dim, wildcard=True)
    if dim == "...":
        return DimSpec(dim, ellipsis=True)
    if dim.isidentifier():
        return DimSpec(dim, name=dim)
    return DimSpec(dim.replace(" ", ""), expr=Expression(dim, dimension=True))


@dataclass(frozen=True)
class FieldCheck:
    spec: FieldSpec
    condition: str | None
    kind: str | None
    is_type: Callable[[Any], bool] | None
    dtype: Any  # torch.dtype | None
    device: DeviceRule | None  # None: any device
    shape: tuple[DimSpec, ...] | None
    equals: Expression | None
    items: Callable[[Any], bool] | None
    split: int | None  # index of "..." in shape

    @property
    def name(self) -> str:
        return self.spec.name


def compile_field(spec: FieldSpec, condition: str | None) -> FieldCheck:
    kind = spec.kind
    return FieldCheck(
        spec=spec,
        condition=condition,
        kind=kind,
        is_type=PY_TYPES.get(kind) if kind else None,
        dtype=getattr(torch, spec.dtype, None) if spec.dtype else None,
        device=device_rule(spec.device),
        shape=tuple(_compile_dim(d) for d in spec.shape) if spec.shape is not None else None,
        equals=Expression(spec.equals) if spec.equals else None,
        items=PY_TYPES.get(spec.items) if spec.items else None,
        split=spec.shape.index("...") if spec.shape is not None and "..." in spec.shape else None,
    )


def as_int(value: object) -> int | None:
    if type(value) is int:
        return value
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    return None


class Env(dict[str, "int | None"]):
    """Dimension names of one check: hook arguments, then integer attributes of the object.

    Resolved names (and non-``None`` values of dimension expressions) are cached for the check.
    """

    __slots__ = ("args", "obj")

    def __init__(self, args: Mapping[str, Any], obj: object) -> None:
        super().__init__()
        self.args = args
        self.obj = obj

    def __missing__(self, name: str) -> int | None:
        if name in self.args:
            found = as_int(self.args[name])
        else:
            try:
                found = as_int(getattr(self.obj, name, None))
            except Exception:
                found = None
        self[name] = found
        return found


def resolve(name: str, env: Env, bound: Mapping[str, int]) -> int | None:
    found = env[name]
    return found if found is not None else bound.get(name)


def eval_dim(expr: Expression, env: Env, bound: Mapping[str, int]) -> int | None:
    cached = env.get(expr.text)
    if cached is not None:
        return cached
    names: dict[str, int] = {}
    for name in expr.names:
        known = resolve(name, env, bound)
        if known is None:
            return None
        names[name] = known
    try:
        value = as_int(expr(names))
    except ArithmeticError:
        return None
    if value is not None and not any(name in bound for name in expr.names):
        env[expr.text] = value
    return value


def shape_of(value: object) -> tuple[int, ...] | None:
    if isinstance(value, torch.Tensor):
        return tuple(value.shape)
    if isinstance(value, list | tuple | str | Mapping):
        return (len(value),)
    return None


def fmt_shape(shape: Sequence[int]) -> str:
    return f"[{', '.join(str(d) for d in shape)}]"


def render_shape(
    dims: Sequence[DimSpec],
    env: Env,
    bound: Mapping[str, int],
    *,
    symbolic: bool = True,
) -> str:
    """``[num_pools=2, 2]`` (symbolic) or ``[2, 2]``; unresolved names stay names."""
    parts: list[str] = []
    for dim in dims:
        if dim.literal is not None or dim.wildcard or dim.ellipsis:
            parts.append(dim.text)
            continue
        known = (
            resolve(dim.name, env, bound)
            if dim.name is not None
            else eval_dim(dim.expr, env, bound)  # type: ignore[arg-type]
        )
        if known is None:
            parts.append(dim.text)
        else:
            parts.append(f"{dim.text}={known}" if symbolic else str(known))
    return f"[{', '.join(parts)}]"


def expected_meta(spec: FieldCheck, env: Env, bound: Mapping[str, int]) -> str:
    s = spec.spec
    kind = spec.kind
    shape = render_shape(spec.shape, env, bound, symbolic=False) if spec.shape is not None else ""
    if kind == "tensor" or (kind is None and spec.dtype is not None):
        text = (s.dtype or "tensor") + (shape or "")
        if spec.device is not None:
            text += f" {spec.device.expected()}"
        if s.pinned and cuda_available():
            text += " pinned"
        if s.contiguous:
            text += " contiguous"
        return text
    if kind is None:
        return f"a value{' of size ' + shape if shape else ''} (not None)"
    if kind == "list" and s.items:
        kind = f"list[{s.items}]"
    return kind + (f" of len {shape}" if shape else "")
