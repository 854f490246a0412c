"""The contract format's vocabulary and the parsed contract types.

Shared by the static rules and the torch runtime: imports neither torch nor libcst.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = [
    "ADDRESS_SPACES",
    "DEVICES",
    "DTYPES",
    "DTYPE_ALIASES",
    "TYPES",
    "VALUE_CHECKS",
    "ContractError",
    "Dim",
    "FieldSpec",
    "HookContract",
    "WhenClause",
]

#: Values of a field's ``type`` key. ``any`` accepts every value, ``None`` included.
TYPES = frozenset({"tensor", "int", "float", "bool", "str", "list", "dict", "any"})

#: torch dtype names a contract may use (``torch.<name>``).
DTYPES = frozenset(
    {
        "bool",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "int8",
        "int16",
        "int32",
        "int64",
        "float16",
        "bfloat16",
        "float32",
        "float64",
        "complex64",
        "complex128",
        "float8_e4m3fn",
        "float8_e4m3fnuz",
        "float8_e5m2",
        "float8_e5m2fnuz",
        "float8_e8m0fnu",
        "float4_e2m1fn_x2",
    }
)

#: Aliases accepted for ``dtype`` and normalised to the canonical name.
DTYPE_ALIASES: Mapping[str, str] = MappingProxyType(
    {
        "half": "float16",
        "float": "float32",
        "double": "float64",
        "long": "int64",
        "int": "int32",
        "short": "int16",
        "cfloat": "complex64",
        "cdouble": "complex128",
    }
)

#: Values of ``values``: an element-wise check on a tensor (or every item of a list).
VALUE_CHECKS = frozenset({"zeros", "nonzero", "nonneg", "positive", "finite"})

#: Fixed values of ``device``; ``cuda:N`` is accepted as well. ``cuda:current``: this process's
#: CUDA device (``LOCAL_RANK``'s or the current one); ``current``: that, or ``cpu`` without CUDA.
DEVICES = frozenset(
    {"cpu", "cuda", "meta", "any", "cuda-if-available", "cuda:current", "current"}
)

#: Values of ``addresses``: where the non-zero entries of a pointer column must point.
ADDRESS_SPACES = frozenset({"cuda"})

_HOOK_KEYS = frozenset({"class", "method", "renamed_from", "fields", "when", "invariants"})
_WHEN_KEYS = frozenset({"attr", "fields", "invariants"})
_FIELD_KEYS = frozenset(
    {
        "type",
        "dtype",
        "device",
        "pinned",
        "shape",
        "values",
        "range",
        "contiguous",
        "equals",
        "items",
        "addresses",
        "address_column",
        "consumers",
    }
)
_TENSOR_ONLY_KEYS = ("dtype", "device", "pinned", "contiguous", "addresses")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

Dim = int | str


class ContractError(Exception):
    """A contract file that cannot be used: ``str(e) == f"{path}:{line}: {message}"``."""

    def __init__(self, path: str, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}")
        self.path = path
        self.line = line
        self.message = message


@dataclass(frozen=True)
class FieldSpec:
    """What one attribute of the object must look like after the hook returns."""

    name: str
    type: str | None = None
    dtype: str | None = None
    device: str | None = None
    pinned: bool | None = None
    shape: tuple[Dim, ...] | None = None
    values: str | None = None
    range: tuple[float, float] | None = None
    contiguous: bool | None = None
    line: int = 0
    #: Expression the value must equal (``index_scales.tolist()``); value mode only.
    equals: str | None = None
    #: Element type of a ``list`` field (one of :data:`TYPES`).
    items: str | None = None
    #: ``"cuda"``: non-zero entries of the pointer column point into live CUDA allocations.
    addresses: str | None = None
    #: Index along dimension 1 that holds the pointers (default 0; 1-D tensors: all entries).
    address_column: int = 0
    #: Methods that read the field; a class that overrides all of them need not set it.
    consumers: tuple[str, ...] = ()

    @property
    def kind(self) -> str | None:
        """The effective type: ``type``, or ``"tensor"`` when a tensor-only key is given."""
        if self.type is not None:
            return self.type
        if any(getattr(self, key) not in (None, False) for key in _TENSOR_ONLY_KEYS):
            return "tensor"
        if self.pinned is False or self.contiguous is False:
            return "tensor"
        return None

    @property
    def has_value_checks(self) -> bool:
        return (
            self.values is not None
            or self.range is not None
            or self.equals is not None
            or self.addresses is not None
        )


@dataclass(frozen=True)
class WhenClause:
    """Fields (and invariants) required only while ``getattr(obj, attr)`` is truthy."""

    attr: str
    fields: Mapping[str, FieldSpec] = field(hash=False)
    line: int = 0
    invariants: tuple[str, ...] = ()


@dataclass(frozen=True)
class HookContract:
    """The state contract of one hook: ``cls.method`` and every override of it."""

    cls: str
    method: str
    renamed_from: tuple[str, ...]
    fields: Mapping[str, FieldSpec] = field(hash=False)
    when: tuple[WhenClause, ...] = ()
    invariants: tuple[str, ...] = ()
    path: str = "<string>"
    line: int = 0
    #: Line of each invariant (same order as :attr:`invariants`).
    invariant_lines: tuple[int, ...] = field(default=(), compare=False)

    @property
    def module(self) -> str:
        """Best guess at the module part of :attr:`cls` (everything before the last dot)."""
        return self.cls.rpartition(".")[0]

    @property
    def qualname(self) -> str:
        return self.cls.rpartition(".")[2]

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}"

    def all_fields(self) -> tuple[tuple[FieldSpec, str | None], ...]:
        """Every field with the attribute that makes it required (``None``: always)."""
        out: list[tuple[FieldSpec, str | None]] = [(spec, None) for spec in self.fields.values()]
        for clause in self.when:
            out.extend((spec, clause.attr) for spec in clause.fields.values())
        return tuple(out)

