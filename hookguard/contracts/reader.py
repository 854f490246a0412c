"""Reading contract files: TOML in, :class:`HookContract` out, every problem a
:class:`ContractError` naming the file and line.

Everything here runs in time linear in the file. One pass refuses a dotted key of over
:data:`MAX_KEY_PARTS` parts (tomllib's time grows with the square of a key's length); then the
TOML is parsed (a file that is not TOML never reaches the rest), and the line of each table and
key is found by a scanner that reads each character once, with no backtracking regular
expression. The text is split into lines once, and each array of invariants is read once for
the line of each of its strings (searching the lines after the array for each string, in a
text split again for each hook, made 10,000 hooks take 38-59 s).
"""

from __future__ import annotations

import importlib
import os
import re
import stat
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from hookguard.contracts.expressions import check_expression
from hookguard.contracts.schema import (
    _FIELD_KEYS,
    _HOOK_KEYS,
    _IDENT,
    _TENSOR_ONLY_KEYS,
    _WHEN_KEYS,
    ADDRESS_SPACES,
    DEVICES,
    DTYPE_ALIASES,
    DTYPES,
    TYPES,
    VALUE_CHECKS,
    ContractError,
    Dim,
    FieldSpec,
    HookContract,
    WhenClause,
)

__all__ = ["load_contracts", "parse_contracts"]

PathKey = tuple[str | int, ...]
#: Largest contract file read (the bundled ones are a few KB).
MAX_CONTRACT_BYTES = 4 << 20
#: Most parts a dotted key or table name may have (the format's deepest is 4:
#: ``[hook.when.fields.name]``). tomllib's time grows with the square of a key's parts.
MAX_KEY_PARTS = 16
_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_SPACE = " \t"


# --------------------------------------------------------------------------------------------
# Line numbers: tomllib gives none, so find each table and key in the text, in linear time
# --------------------------------------------------------------------------------------------


def _skip_space(line: str, i: int) -> int:
    n = len(line)
    while i < n and line[i] in _SPACE:
        i += 1
    return i


def _scan_key(line: str, i: int) -> tuple[list[str], int] | None:
    """A dotted key starting at ``line[i]`` (bare or quoted parts): its parts and the index
    after it, or None. Reads each character once."""
    parts: list[str] = []
    n = len(line)
    while True:
        i = _skip_space(line, i)
        if i >= n:
            return None
        char = line[i]
        if char in _BARE:
            start = i
            while i < n and line[i] in _BARE:
                i += 1
            parts.append(line[start:i])
        elif char == '"':
            start = i = i + 1
            while i < n and line[i] != '"':
                i += 2 if line[i] == "\\" else 1
            if i >= n:
                return None
            parts.append(line[start:i])
            i += 1
        elif char == "'":
            end = line.find("'", i + 1)
            if end < 0:
                return None
            parts.append(line[i + 1 : end])
            i = end + 1
        else:
            return None
        i = _skip_space(line, i)
        if i < n and line[i] == ".":
            i += 1
            continue
        return parts, i


def _inline_keys(rest: str) -> Iterator[tuple[str, int]]:
    """Bare keys followed by ``=`` in the rest of a line (``{ dtype = "int32", ... }``),
    outside strings, each with the index after its ``=``."""
    i, n = 0, len(rest)
    while i < n:
        char = rest[i]
        if char in "\"'":
            end = i + 1
            while end < n and rest[end] != char:
                end += 2 if char == '"' and rest[end] == "\\" else 1
            i = end + 1
        elif char in _BARE:
            start = i
            while i < n and rest[i] in _BARE:
                i += 1
            after = _skip_space(rest, i)
            if after < n and rest[after] == "=" and not rest.startswith("==", after):
                yield rest[start:i], after + 1
        elif char == "#":
            return
        else:
            i += 1


def _structure(line: str) -> tuple[int, str | None]:
    """Brackets opened minus closed outside strings and comments, and the triple quote that
    stays open at the end of the line (if any). One pass."""
    depth = 0
    i, n = 0, len(line)
    while i < n:
        char = line[i]
        if char in "\"'":
            triple = line.startswith(char * 3, i)
            quote = char * 3 if triple else char
            end = line.find(quote, i + len(quote)) if char == "'" or triple else -2
            if end == -2:  # a basic string: skip escapes
                end = i + 1
                while end < n and line[end] != '"':
                    end += 2 if line[end] == "\\" else 1
                end = end if end < n else -1
            if end < 0:
                return depth, quote if triple else None
            i = end + len(quote)
            continue
        if char == "#":
            break
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        i += 1
    return depth, None


# What the key-length check looks at: string and comment starts, a key's dots, and what ends
# a key (one character each: a class, never a backtracking pattern).
_KEY_TOKENS = re.compile(r"""["'#\n=,\[\]{}.]""")
_BASIC_TOKENS = re.compile(r'["\\\n]')
_LITERAL_TOKENS = re.compile(r"['\n]")


def _long_key(text: str) -> int | None:
    """The line of the first dotted key (or table name) of more than :data:`MAX_KEY_PARTS`
    parts, or None: one pass over the text, before tomllib sees it.

    Dots are counted outside strings and comments, from the last ``=``, ``,``, bracket, brace
    or line end: only a key's dots can add up (a float has one), whatever the text holds."""
    dots = 0
    pos, n = 0, len(text)
    while True:
        found = _KEY_TOKENS.search(text, pos)
        if found is None:
            return None
        i = found.start()
        char = text[i]
        if char == ".":
            dots += 1
            if dots >= MAX_KEY_PARTS:
                return text.count("\n", 0, i) + 1
            pos = i + 1
        elif char == "#":
            end = text.find("\n", i)
            pos = n if end < 0 else end
        elif char in "\"'":
            pos = _string_end(text, i, char)
        else:
            dots = 0
            pos = i + 1


def _string_end(text: str, i: int, quote: str) -> int:
    """The index after the string starting at ``text[i]``: after its closing quotes (a
    multi-line string's with the up to two quotes that end its text), at the line end for a
    one-line string that does not close there, at the end of the text for a multi-line one."""
    n = len(text)
    if text.startswith(quote * 3, i):
        end = text.find(quote * 3, i + 3) if quote == "'" else _basic_close(text, i + 3)
        if end < 0:
            return n
        end += 3
        extra = 0
        while extra < 2 and text.startswith(quote, end):
            end, extra = end + 1, extra + 1
        return end
    tokens = _LITERAL_TOKENS if quote == "'" else _BASIC_TOKENS
    pos = i + 1
    while True:
        found = tokens.search(text, pos)
        if found is None:
            return n
        j = found.start()
        if text[j] == "\\":
            pos = j + 2
        elif text[j] == "\n":
            return j  # (not TOML: tomllib says so)
        else:
            return j + 1


def _basic_close(text: str, pos: int) -> int:
    """Where the closing ``\"\"\"`` of a multi-line basic string is, reading from ``pos``
    (escapes skipped), or -1."""
    while True:
        found = _BASIC_TOKENS.search(text, pos)
        if found is None:
            return -1
        j = found.start()
        if text[j] == "\\":
            pos = j + 2
        elif text.startswith('"""', j):
            return j
        else:
            pos = j + 1


class _LineIndex:
    """Maps a path into the parsed document (``("hook", 0, "fields", "x", "dtype")``) to a line."""

    def __init__(self, text: str) -> None:
        self.lines: dict[PathKey, int] = {}
        #: Where the value of a key given with ``=`` starts: (line index from 0, column).
        self.values: dict[PathKey, tuple[int, int]] = {}
        self.text_lines = text.splitlines()
        counters: dict[PathKey, int] = {}
        current: PathKey = ()
        depth = 0  # open brackets/braces of a multi-line value
        in_multiline: str | None = None
        for number, line in enumerate(self.text_lines, start=1):
            if in_multiline is not None:
                if in_multiline in line:
                    in_multiline = None
                continue
            if depth == 0:
                start = _skip_space(line, 0)
                if line.startswith("[", start):
                    is_array = line.startswith("[[", start)
                    key = _scan_key(line, start + (2 if is_array else 1))
                    if key is not None:
                        path = self._resolve(key[0], counters, is_array)
                        current = path
                        self.lines.setdefault(path, number)
                        continue
                key = _scan_key(line, start)
                if key is not None and key[1] < len(line) and line[key[1]] == "=":
                    resolved = (*current, *key[0])
                    self.lines.setdefault(resolved, number)
                    self.values.setdefault(resolved, (number - 1, key[1] + 1))
                    for end in range(len(current) + 1, len(resolved)):
                        self.lines.setdefault(resolved[:end], number)
                    # inline tables: ``x = { dtype = "int32" }`` -> keys on the same line
                    for inner, at in _inline_keys(line[key[1] + 1 :]):
                        self.lines.setdefault((*resolved, inner), number)
                        self.values.setdefault((*resolved, inner), (number - 1, key[1] + 1 + at))
            opened, in_multiline = _structure(line)
            depth = max(depth + opened, 0)

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

    def string_lines(self, path: PathKey) -> list[int] | None:
        """The line each string of the value at ``path`` (a string, or an array of them)
        starts on, in order; None when the value's place is not known. Reads the value's text
        once."""
        start = self.values.get(path)
        return None if start is None else _string_lines(self.text_lines, *start)


def _string_lines(lines: list[str], row: int, col: int) -> list[int]:
    """The line of each string in the value starting at ``lines[row][col]``: one string, or
    an array (of arrays) of them, read up to where it ends, each character once."""
    found: list[int] = []
    depth = 0
    while row < len(lines):
        line = lines[row]
        i, n = col, len(line)
        while i < n:
            char = line[i]
            if char == "#":
                break
            if char == "[":
                depth += 1
            elif char == "]":
                depth -= 1
                if depth <= 0:
                    return found
            elif char in "\"'":
                found.append(row + 1)
                if line.startswith(char * 3, i):
                    row, i = _after_multiline(lines, row, i + 3, char)
                    line, n = (lines[row], len(lines[row])) if row < len(lines) else ("", 0)
                elif char == '"':
                    i += 1
                    while i < n and line[i] != '"':
                        i += 2 if line[i] == "\\" else 1
                    i += 1
                else:
                    end = line.find("'", i + 1)
                    i = n if end < 0 else end + 1
                if depth <= 0:
                    return found
                continue
            i += 1
        row, col = row + 1, 0
    return found


def _after_multiline(lines: list[str], row: int, i: int, quote: str) -> tuple[int, int]:
    """Where a multi-line string whose text starts at ``lines[row][i]`` ends: the row and the
    index after its closing quotes (with up to two more quotes, which belong to the text)."""
    close = quote * 3
    while row < len(lines):
        line = lines[row]
        if quote == "'":
            end = line.find(close, i)
        else:  # skip escapes: ``\"""`` does not close a basic string
            end, n = -1, len(line)
            while i < n:
                if line[i] == "\\":
                    i += 2
                elif line.startswith(close, i):
                    end = i
                    break
                else:
                    i += 1
        if end >= 0:
            end += 3
            extra = 0
            while extra < 2 and line.startswith(quote, end):
                end, extra = end + 1, extra + 1
            return row, end
        row, i = row + 1, 0
    return row, 0


# --------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------


def _toml_module() -> Any:
    return importlib.import_module("tomllib" if sys.version_info >= (3, 11) else "tomli")


class _Parser:
    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        self._index: _LineIndex | None = None

    @property
    def index(self) -> _LineIndex:
        if self._index is None:  # built only for a file that is valid TOML
            self._index = _LineIndex(self.text)
        return self._index

    def error(self, where: PathKey, message: str) -> ContractError:
        return ContractError(self.path, self.index.line(where), message)

    def parse(self) -> list[HookContract]:
        toml = _toml_module()
        long_key = _long_key(self.text)
        if long_key is not None:
            raise ContractError(self.path, long_key,
                                f"invalid TOML: a key of over {MAX_KEY_PARTS} dotted parts")
        try:
            data: dict[str, Any] = toml.loads(self.text)
        except toml.TOMLDecodeError as exc:
            line = getattr(exc, "lineno", None)
            if line is None:
                found = re.search(r"line (\d+)", str(exc))
                line = int(found.group(1)) if found else 1
            message = getattr(exc, "msg", None) or re.sub(r"\s*\(at line.*\)$", "", str(exc))
            raise ContractError(self.path, int(line), f"invalid TOML: {message}") from None
        except RecursionError:
            raise ContractError(self.path, 1, "invalid TOML: arrays or tables nested too deeply"
                                ) from None
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
        if not texts:
            return texts, ()
        # a multi-line array: each string on its own line, found by reading the array once
        found = self.index.string_lines(where)
        lines = tuple(found) if found is not None and len(found) == len(texts) else (
            (self.index.line(where),) * len(texts))
        for text, at in zip(texts, lines, strict=True):
            try:
                check_expression(text)
            except ValueError as exc:
                raise ContractError(self.path, at, f"bad invariant: {exc}") from None
        return texts, lines

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
                    f"unknown device {device!r} (expected cpu, cuda, cuda:N, cuda:current, "
                    "current, meta, cuda-if-available or any)",
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


def _read_contract(file: Path) -> str:
    """The text of a contract file: a regular file (a link to a device or a FIFO would never
    end) of at most :data:`MAX_CONTRACT_BYTES`, in UTF-8."""
    try:
        fd = os.open(file, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ContractError(str(file), 0, f"cannot read contract file: {exc.strerror or exc}"
                            ) from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ContractError(str(file), 0, "cannot read contract file: not a regular file")
        data = handle.read(MAX_CONTRACT_BYTES + 1)
    if len(data) > MAX_CONTRACT_BYTES:
        raise ContractError(str(file), 0, f"contract file is over {MAX_CONTRACT_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ContractError(str(file), 0, f"cannot read contract file: {exc}") from None


def load_contracts(path: str | os.PathLike[str]) -> list[HookContract]:
    """Load a contract file, or every ``*.toml`` of a directory (sorted by name).

    Raises :class:`ContractError` naming the file and line of the first problem.
    """
    root = Path(path)
    if not root.exists():
        raise ContractError(str(root), 0, "no such contract file or directory")
    return parse_contract_files((str(file), _read_contract(file)) for file in _files(root))


def parse_contract_files(files: Iterable[tuple[str, str]]) -> list[HookContract]:
    """The contracts of several files, given as ``(path, text)`` pairs: one file of a folder
    on disk, or a blob of a git tree. A hook declared twice is a :class:`ContractError`."""
    contracts: list[HookContract] = []
    seen: dict[tuple[str, str], HookContract] = {}
    for path, text in files:
        for contract in parse_contracts(text, path):
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
