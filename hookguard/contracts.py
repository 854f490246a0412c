"""Hook state contracts: the TOML format, its loader and its validation.

This module is shared by the static rules and the torch runtime, so it imports neither torch nor
libcst. A contract file holds ``[[hook]]`` tables; each names the class that declares a hook, the
hook's method, the old names it replaced and the state the hook must leave on the object::

    [[hook]]
    class = "package.module.KVCacheManagerV2"
    method = "_prepare_page_table_tensor"
    renamed_from = ["_build_pool_mapping_tensors"]

    [hook.fields.kv_cache_pool_mapping]
    dtype = "int32"
    device = "cpu"
    pinned = true
    shape = ["num_local_layers", 2]

See ``docs/contracts.md`` for every key. :func:`load_contracts` reports unknown keys, bad values
and bad expressions as :class:`ContractError` with the file and line they come from.
"""

from __future__ import annotations

import ast
import importlib
import os
import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

__all__ = [
    "DEVICES",
    "DTYPES",
    "TYPES",
    "VALUE_CHECKS",
    "ContractError",
    "FieldSpec",
    "HookContract",
    "WhenClause",
    "check_expression",
    "load_contracts",
    "parse_contracts",
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

#: Fixed values of ``device``; ``cuda:N`` is accepted as well.
DEVICES = frozenset({"cpu", "cuda", "meta", "any", "cuda-if-available"})

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


# --------------------------------------------------------------------------------------------
# Expressions: invariants, ``equals`` and shape dimensions
# --------------------------------------------------------------------------------------------

_EXPR_NODES: tuple[type[ast.AST], ...] = (
    ast.Expression,
    ast.BoolOp,
    ast.And,
    ast.Or,
    ast.BinOp,
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.FloorDiv,
    ast.Mod,
    ast.Pow,
    ast.BitAnd,
    ast.BitOr,
    ast.BitXor,
    ast.UnaryOp,
    ast.UAdd,
    ast.USub,
    ast.Not,
    ast.Invert,
    ast.Compare,
    ast.Eq,
    ast.NotEq,
    ast.Lt,
    ast.LtE,
    ast.Gt,
    ast.GtE,
    ast.In,
    ast.NotIn,
    ast.Is,
    ast.IsNot,
    ast.IfExp,
    ast.Call,
    ast.keyword,
    ast.Attribute,
    ast.Subscript,
    ast.Slice,
    ast.Tuple,
    ast.List,
    ast.Constant,
    ast.Name,
    ast.Load,
)

_DIM_NODES: tuple[type[ast.AST], ...] = (
    ast.Expression,
    ast.BinOp,
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.FloorDiv,
    ast.Mod,
    ast.Pow,
    ast.UnaryOp,
    ast.USub,
    ast.UAdd,
    ast.Constant,
    ast.Name,
    ast.Load,
)

#: Attribute names an expression may use (on tensors, lists, ``torch``).
EXPR_ATTRIBUTES = frozenset(
    {
        # tensor metadata
        "shape",
        "dtype",
        "device",
        "ndim",
        "T",
        "is_cuda",
        "size",
        "dim",
        "numel",
        "stride",
        "is_contiguous",
        "is_pinned",
        "element_size",
        "data_ptr",
        # tensor reductions and element-wise ops
        "all",
        "any",
        "sum",
        "prod",
        "max",
        "min",
        "amax",
        "amin",
        "abs",
        "eq",
        "ne",
        "lt",
        "le",
        "gt",
        "ge",
        "unique",
        "flatten",
        "reshape",
        "view",
        "diff",
        "cumsum",
        "isfinite",
        "isnan",
        "count_nonzero",
        "nonzero",
        "to",
        "long",
        "int",
        "float",
        "bool",
        "tolist",
        "item",
        "values",
        "indices",
        "keys",
        "items",
        "index",
        "count",
        "equal",
        "allclose",
        "arange",
        "zeros",
        "ones",
        "zeros_like",
        "ones_like",
        "full",
        "tensor",
        "stack",
        "cat",
        "where",
        "logical_and",
        "logical_or",
        "logical_not",
        "clamp",
        "div",
        "remainder",
        "bucketize",
        "searchsorted",
        "isin",
        "get",
        "cuda",
        "cpu",
        "current_device",
        "is_available",
        "type",
    }
    | DTYPES
)

#: Builtins available to expressions.
EXPR_BUILTINS = frozenset(
    {
        "len",
        "min",
        "max",
        "abs",
        "all",
        "any",
        "sum",
        "int",
        "float",
        "bool",
        "list",
        "tuple",
        "range",
        "sorted",
        "set",
        "isinstance",
        "round",
    }
)


def check_expression(text: str, *, dimension: bool = False) -> ast.Expression:
    """Parse ``text`` and check it uses only whitelisted syntax; raise ``ValueError`` if not.

    ``dimension=True`` allows only integer arithmetic over names (a shape dimension).
    """
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"cannot parse expression {text!r}: {exc.msg}") from None
    allowed = _DIM_NODES if dimension else _EXPR_NODES
    what = "shape dimension" if dimension else "expression"
    for node in ast.walk(tree):
        if not isinstance(node, allowed):
            raise ValueError(f"{what} {text!r} uses {type(node).__name__}, which is not allowed")
        if isinstance(node, ast.Name) and node.id.startswith("__"):
            raise ValueError(f"{what} {text!r} uses the name {node.id!r}, which is not allowed")
        if isinstance(node, ast.Attribute) and node.attr not in EXPR_ATTRIBUTES:
            raise ValueError(
                f"{what} {text!r} uses the attribute {node.attr!r}, which is not allowed "
                "(see docs/contracts.md for the allowed attributes)"
            )
        if isinstance(node, ast.Constant):
            if dimension and (not isinstance(node.value, int) or isinstance(node.value, bool)):
                raise ValueError(f"shape dimension {text!r} uses a non-integer constant")
            if not isinstance(node.value, int | float | str | bool | type(None)):
                raise ValueError(f"{what} {text!r} uses a {type(node.value).__name__} constant")
        if isinstance(node, ast.Call) and not isinstance(node.func, ast.Name | ast.Attribute):
            raise ValueError(f"{what} {text!r} calls something that is not a name or method")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id not in EXPR_BUILTINS
        ):
            raise ValueError(
                f"{what} {text!r} calls {node.func.id!r}; only {sorted(EXPR_BUILTINS)} "
                "and methods may be called"
            )
    return tree


# --------------------------------------------------------------------------------------------
# Line numbers: tomllib gives none, so find each table and key in the text
# --------------------------------------------------------------------------------------------

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(
    r"""^\s*((?:[A-Za-z0-9_\-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_\-]+|"[^"]*"|'[^']*'))*)\s*="""
)
_PART = re.compile(r"""\s*(?:([A-Za-z0-9_\-]+)|"([^"]*)"|'([^']*)')\s*""")

PathKey = tuple[str | int, ...]


def _split_key(text: str) -> list[str]:
    parts: list[str] = []
    for chunk in re.findall(r"""(?:[^."']+|"[^"]*"|'[^']*')+""", text):
        match = _PART.fullmatch(chunk)
        parts.append(
            (match.group(1) or match.group(2) or match.group(3) or "") if match else chunk.strip()
        )
    return parts


class _LineIndex:
    """Maps a path into the parsed document (``("hook", 0, "fields", "x", "dtype")``) to a line."""

    def __init__(self, text: str) -> None:
        self.lines: dict[PathKey, int] = {}
        counters: dict[PathKey, int] = {}
        current: PathKey = ()
        depth = 0  # open brackets/braces of a multi-line value
        in_multiline: str | None = None
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw
            if in_multiline is not None:
                if in_multiline in line:
                    in_multiline = None
                continue
            if depth == 0:
                header = _HEADER.match(line)
                if header:
                    is_array = header.group(1) == "[["
                    parts = _split_key(header.group(2))
                    path = self._resolve(parts, counters, is_array)
                    current = path
                    self.lines.setdefault(path, number)
                    continue
                key = _KEY.match(line)
                if key:
                    resolved = (*current, *_split_key(key.group(1)))
                    self.lines.setdefault(resolved, number)
                    for end in range(len(current) + 1, len(resolved)):
                        self.lines.setdefault(resolved[:end], number)
                    # inline tables: ``x = { dtype = "int32" }`` -> keys on the same line
                    rest = line[key.end() :]
                    for inner in re.finditer(r"([A-Za-z0-9_\-]+)\s*=", rest):
                        self.lines.setdefault((*resolved, inner.group(1)), number)
            stripped = _strip_strings(line)
            for quote in ('"""', "'''"):
                if line.count(quote) % 2 == 1:
                    in_multiline = quote
            depth += stripped.count("[") + stripped.count("{")
            depth -= stripped.count("]") + stripped.count("}")
            depth = max(depth, 0)

    def _resolve(self, parts: list[str], counters: dict[PathKey, int], is_array: bool) -> PathKey:
        path: list[str | int] = []
        for i, part in enumerate(parts):
            path.append(part)
            last = i == len(parts) - 1
            key = tuple(path)
            if last and is_array:
                index = counters.get(key, -1) + 1
                counters[key] = index
                path.append(index)
            elif key in counters:
                path.append(counters[key])
        return tuple(path)

    def line(self, path: PathKey) -> int:
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return 1


def _strip_strings(line: str) -> str:
    line = re.sub(r'"(?:[^"\\]|\\.)*"', '""', line)
    line = re.sub(r"'[^']*'", "''", line)
    return line.split("#", 1)[0]


# --------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------


def _toml_module() -> Any:
    return importlib.import_module("tomllib" if sys.version_info >= (3, 11) else "tomli")


class _Parser:
    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        self.index = _LineIndex(text)

    def error(self, where: PathKey, message: str) -> ContractError:
        return ContractError(self.path, self.index.line(where), message)

    def parse(self) -> list[HookContract]:
        toml = _toml_module()
        try:
            data: dict[str, Any] = toml.loads(self.text)
        except toml.TOMLDecodeError as exc:
            line = getattr(exc, "lineno", None)
            if line is None:
                found = re.search(r"line (\d+)", str(exc))
                line = int(found.group(1)) if found else 1
            message = getattr(exc, "msg", None) or re.sub(r"\s*\(at line.*\)$", "", str(exc))
            raise ContractError(self.path, int(line), f"invalid TOML: {message}") from None
        for key in data:
            if key != "hook":
                raise self.error(
                    (key,), f"unknown top-level key {key!r} (expected [[hook]] tables)"
                )
        hooks = data.get("hook", [])
        if not isinstance(hooks, list):
            raise self.error(("hook",), "'hook' must be an array of tables: write [[hook]]")
        contracts = [self.hook(("hook", i), table) for i, table in enumerate(hooks)]
        seen: dict[tuple[str, str], HookContract] = {}
        for contract in contracts:
            ident = (contract.cls, contract.method)
            if ident in seen:
                raise ContractError(
                    self.path,
                    contract.line,
                    f"duplicate contract for {contract.cls}.{contract.method} "
                    f"(first at line {seen[ident].line})",
                )
            seen[ident] = contract
        return contracts

    def _table(self, where: PathKey, value: object, what: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.error(where, f"{what} must be a table")
        return value

    def _unknown(
        self, where: PathKey, table: Mapping[str, Any], known: frozenset[str], what: str
    ) -> None:
        for key in table:
            if key not in known:
                raise self.error(
                    (*where, key),
                    f"unknown key {key!r} in {what} (expected one of {', '.join(sorted(known))})",
                )

    def _str(self, where: PathKey, value: object, what: str) -> str:
        if not isinstance(value, str):
            raise self.error(where, f"{what} must be a string, not {type(value).__name__}")
        return value

    def _ident(self, where: PathKey, value: object, what: str) -> str:
        text = self._str(where, value, what)
        if not _IDENT.match(text):
            raise self.error(where, f"{what} {text!r} is not a Python identifier")
        return text

    def _str_list(
        self, where: PathKey, value: object, what: str, *, ident: bool
    ) -> tuple[str, ...]:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            raise self.error(where, f"{what} must be a list of strings")
        check = self._ident if ident else self._str
        return tuple(check(where, item, what) for item in value)

    def _expressions(
        self, where: PathKey, value: object
    ) -> tuple[tuple[str, ...], tuple[int, ...]]:
        texts = self._str_list(where, value, "invariants", ident=False)
        line = self.index.line(where)
        # a multi-line array: find each string on its own line
        lines: list[int] = []
        text_lines = self.text.splitlines()
        cursor = line - 1
        for text in texts:
            found = line
            for number in range(cursor, len(text_lines)):
                if text in text_lines[number]:
                    found = number + 1
                    cursor = number
                    break
            lines.append(found)
        for text, at in zip(texts, lines, strict=True):
            try:
                check_expression(text)
            except ValueError as exc:
                raise ContractError(self.path, at, f"bad invariant: {exc}") from None
        return texts, tuple(lines)

    def hook(self, where: PathKey, raw: object) -> HookContract:
        table = self._table(where, raw, "[[hook]]")
        self._unknown(where, table, _HOOK_KEYS, "[[hook]]")
        for required in ("class", "method"):
            if required not in table:
                raise self.error(where, f"[[hook]] needs a {required!r} key")
        cls = self._str((*where, "class"), table["class"], "class")
        if "." not in cls or not all(_IDENT.match(part) for part in cls.split(".")):
            raise self.error(
                (*where, "class"),
                f"class {cls!r} must be a qualified name 'package.module.Class'",
            )
        method = self._ident((*where, "method"), table["method"], "method")
        renamed = self._str_list(
            (*where, "renamed_from"), table.get("renamed_from", []), "renamed_from", ident=True
        )
        if method in renamed:
            raise self.error(
                (*where, "renamed_from"), f"renamed_from lists the hook {method!r} itself"
            )
        fields = self.fields((*where, "fields"), table.get("fields", {}))
        when_raw = table.get("when", [])
        if not isinstance(when_raw, list):
            raise self.error(
                (*where, "when"), "'when' must be an array of tables: write [[hook.when]]"
            )
        when = tuple(self.when((*where, "when", i), item) for i, item in enumerate(when_raw))
        invariants, inv_lines = self._expressions(
            (*where, "invariants"), table.get("invariants", [])
        )
        return HookContract(
            cls=cls,
            method=method,
            renamed_from=renamed,
            fields=MappingProxyType(fields),
            when=when,
            invariants=invariants,
            path=self.path,
            line=self.index.line(where),
            invariant_lines=inv_lines,
        )

    def when(self, where: PathKey, raw: object) -> WhenClause:
        table = self._table(where, raw, "[[hook.when]]")
        self._unknown(where, table, _WHEN_KEYS, "[[hook.when]]")
        if "attr" not in table:
            raise self.error(where, "[[hook.when]] needs an 'attr' key")
        attr = self._ident((*where, "attr"), table["attr"], "attr")
        fields = self.fields((*where, "fields"), table.get("fields", {}))
        invariants, _ = self._expressions((*where, "invariants"), table.get("invariants", []))
        return WhenClause(
            attr=attr,
            fields=MappingProxyType(fields),
            line=self.index.line(where),
            invariants=invariants,
        )

    def fields(self, where: PathKey, raw: object) -> dict[str, FieldSpec]:
        table = self._table(where, raw, "fields")
        out: dict[str, FieldSpec] = {}
        for name, spec in table.items():
            if not _IDENT.match(name):
                raise self.error((*where, name), f"field name {name!r} is not a Python identifier")
            out[name] = self.field((*where, name), name, spec)
        return out

    def field(self, where: PathKey, name: str, raw: object) -> FieldSpec:
        table = self._table(where, raw, f"field {name!r}")
        self._unknown(where, table, _FIELD_KEYS, f"field {name!r}")

        def at(key: str) -> PathKey:
            return (*where, key)

        kind = table.get("type")
        if kind is not None:
            kind = self._str(at("type"), kind, "type")
            if kind not in TYPES:
                raise self.error(
                    at("type"),
                    f"unknown type {kind!r} (expected one of {', '.join(sorted(TYPES))})",
                )
        dtype = table.get("dtype")
        if dtype is not None:
            dtype = self._str(at("dtype"), dtype, "dtype")
            dtype = dtype.removeprefix("torch.")
            dtype = DTYPE_ALIASES.get(dtype, dtype)
            if dtype not in DTYPES:
                raise self.error(
                    at("dtype"),
                    f"unknown dtype {table['dtype']!r} (expected a torch dtype name such as "
                    "'int32')",
                )
        device = table.get("device")
        if device is not None:
            device = self._str(at("device"), device, "device")
            if device not in DEVICES and not re.fullmatch(r"cuda:\d+", device):
                raise self.error(
                    at("device"),
                    f"unknown device {device!r} (expected cpu, cuda, cuda:N, meta, "
                    "cuda-if-available or any)",
                )
        pinned = self._bool(at("pinned"), table.get("pinned"), "pinned")
        contiguous = self._bool(at("contiguous"), table.get("contiguous"), "contiguous")
        shape = self.shape(at("shape"), table["shape"]) if "shape" in table else None
        values = table.get("values")
        if values is not None:
            values = self._str(at("values"), values, "values")
            if values not in VALUE_CHECKS:
                raise self.error(
                    at("values"),
                    f"unknown value check {values!r} "
                    f"(expected one of {', '.join(sorted(VALUE_CHECKS))})",
                )
        value_range: tuple[float, float] | None = None
        if "range" in table:
            raw_range = table["range"]
            if (
                not isinstance(raw_range, list)
                or len(raw_range) != 2
                or not all(
                    isinstance(v, int | float) and not isinstance(v, bool) for v in raw_range
                )
                or raw_range[0] > raw_range[1]
            ):
                raise self.error(at("range"), "range must be [lo, hi] with numbers lo <= hi")
            value_range = (raw_range[0], raw_range[1])
        equals = table.get("equals")
        if equals is not None:
            equals = self._str(at("equals"), equals, "equals")
            try:
                check_expression(equals)
            except ValueError as exc:
                raise self.error(at("equals"), f"bad equals: {exc}") from None
        items = table.get("items")
        if items is not None:
            items = self._str(at("items"), items, "items")
            if items not in TYPES - {"tensor"}:
                raise self.error(at("items"), f"unknown item type {items!r}")
        addresses = table.get("addresses")
        if addresses is not None:
            addresses = self._str(at("addresses"), addresses, "addresses")
            if addresses not in ADDRESS_SPACES:
                raise self.error(
                    at("addresses"), f"unknown address space {addresses!r} (expected 'cuda')"
                )
        column = table.get("address_column", 0)
        if not isinstance(column, int) or isinstance(column, bool) or column < 0:
            raise self.error(at("address_column"), "address_column must be a non-negative integer")
        consumers = self._str_list(
            at("consumers"), table.get("consumers", []), "consumers", ident=True
        )
        spec = FieldSpec(
            name=name,
            type=kind,
            dtype=dtype,
            device=device,
            pinned=pinned,
            shape=shape,
            values=values,
            range=value_range,
            contiguous=contiguous,
            line=self.index.line(where),
            equals=equals,
            items=items,
            addresses=addresses,
            address_column=column,
            consumers=consumers,
        )
        if spec.kind not in (None, "tensor", "any") and any(
            table.get(key) is not None for key in _TENSOR_ONLY_KEYS
        ):
            raise self.error(where, f"field {name!r} has type {spec.kind!r} but tensor-only keys")
        if spec.kind is not None and spec.kind != "list" and items is not None:
            raise self.error(at("items"), "items applies to fields of type 'list' only")
        return spec

    def _bool(self, where: PathKey, value: object, what: str) -> bool | None:
        if value is None:
            return None
        if not isinstance(value, bool):
            raise self.error(where, f"{what} must be true or false")
        return value

    def shape(self, where: PathKey, raw: object) -> tuple[Dim, ...]:
        if not isinstance(raw, list):
            raise self.error(where, "shape must be a list of dimensions")
        dims: list[Dim] = []
        for dim in raw:
            if isinstance(dim, bool) or not isinstance(dim, int | str):
                raise self.error(where, f"shape dimension {dim!r} must be an int or a string")
            if isinstance(dim, int):
                if dim < 0:
                    raise self.error(where, f"shape dimension {dim} is negative")
                dims.append(dim)
                continue
            text = dim.strip()
            if text not in ("*", "..."):
                try:
                    check_expression(text, dimension=True)
                except ValueError as exc:
                    raise self.error(where, str(exc)) from None
            dims.append(text)
        if dims.count("...") > 1:
            raise self.error(where, "shape may contain '...' at most once")
        return tuple(dims)


def parse_contracts(text: str, path: str = "<string>") -> list[HookContract]:
    """Parse the text of one contract file."""
    return _Parser(path, text).parse()


def _files(path: Path) -> Iterator[Path]:
    if path.is_dir():
        yield from sorted(p for p in path.glob("*.toml") if p.is_file())
    else:
        yield path


def load_contracts(path: str | os.PathLike[str]) -> list[HookContract]:
    """Load a contract file, or every ``*.toml`` of a directory (sorted by name).

    Raises :class:`ContractError` naming the file and line of the first problem.
    """
    root = Path(path)
    if not root.exists():
        raise ContractError(str(root), 0, "no such contract file or directory")
    contracts: list[HookContract] = []
    seen: dict[tuple[str, str], HookContract] = {}
    for file in _files(root):
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ContractError(str(file), 0, f"cannot read contract file: {exc}") from None
        for contract in parse_contracts(text, str(file)):
            key = (contract.cls, contract.method)
            if key in seen:
                raise ContractError(
                    contract.path,
                    contract.line,
                    f"duplicate contract for {contract.cls}.{contract.method} "
                    f"(first at {seen[key].location})",
                )
            seen[key] = contract
            contracts.append(contract)
    return contracts
