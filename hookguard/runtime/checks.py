"""Check an object against a hook contract. Imports torch (the runtime half only).

A contract is compiled once into a :class:`CompiledContract`: torch dtypes looked up, shape
dimensions and expressions parsed. Checking then has two parts:

* metadata (type, dtype, device, shape, pinning, contiguity): host-side properties of the
  tensors, never a device synchronisation;
* values (``values``, ``range``, ``equals``, ``addresses``, invariants), opt-in: every check
  yields an int64 count of failing elements computed where the tensor lives; the counts of each
  CUDA device are concatenated and copied to the host once (one synchronisation per hook call).
"""

from __future__ import annotations

import functools
import inspect
import numbers
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from hookguard.contracts import Dim, FieldSpec, HookContract
from hookguard.runtime.expr import Expression, Namespace
from hookguard.runtime.violations import Violation

__all__ = [
    "CompiledContract",
    "compile_contract",
    "describe",
    "source_location",
]

_MISSING = object()
_PY_TYPES: dict[str, Callable[[Any], bool]] = {
    "int": lambda v: isinstance(v, numbers.Integral) and not isinstance(v, bool),
    "float": lambda v: isinstance(v, numbers.Real) and not isinstance(v, bool),
    "bool": lambda v: isinstance(v, bool),
    "str": lambda v: isinstance(v, str),
    "list": lambda v: isinstance(v, list | tuple),
    "dict": lambda v: isinstance(v, Mapping),
    "tensor": lambda v: isinstance(v, torch.Tensor),
    "any": lambda v: True,
}


@functools.cache
def cuda_available() -> bool:
    return bool(torch.cuda.is_available())


def source_location(func: object) -> str:
    """``file:line`` of a function (or ``?``)."""
    func = inspect.unwrap(func)  # type: ignore[arg-type]
    code = getattr(func, "__code__", None)
    if code is None:
        return "?"
    return f"{_display_path(code.co_filename)}:{code.co_firstlineno}"


def _display_path(path: str) -> str:
    """``path`` relative to the working directory when it lies below it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return path if relative.startswith(os.pardir) else relative


def describe(value: object) -> str:
    """Compact metadata of a value: ``int32[4, 2] cpu pinned``; never the tensor's contents."""
    if isinstance(value, torch.Tensor):
        dtype = str(value.dtype).removeprefix("torch.")
        text = f"{dtype}[{', '.join(str(d) for d in value.shape)}] {value.device}"
        if value.device.type == "cpu" and cuda_available() and value.is_pinned():
            text += " pinned"
        if value.device.type != "meta" and not value.is_contiguous():
            text += " non-contiguous"
        return text
    if value is None:
        return "None"
    if isinstance(value, list | tuple):
        return f"{type(value).__name__}[len={len(value)}]"
    if isinstance(value, Mapping):
        return f"{type(value).__name__}[len={len(value)}]"
    if isinstance(value, bool | numbers.Number):
        return f"{type(value).__name__} {value!r}"
    if isinstance(value, str):
        return f"str[len={len(value)}]"
    return type(value).__name__


# --------------------------------------------------------------------------------------------
# Compiled form
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Dim:
    text: str
    literal: int | None = None  # an int dimension
    wildcard: bool = False  # "*"
    ellipsis: bool = False  # "..."
    name: str | None = None  # a bare name
    expr: Expression | None = None  # arithmetic over names


def _compile_dim(dim: Dim) -> _Dim:
    if isinstance(dim, int):
        return _Dim(str(dim), literal=dim)
    if dim == "*":
        return _Dim(dim, wildcard=True)
    if dim == "...":
        return _Dim(dim, ellipsis=True)
    if dim.isidentifier():
        return _Dim(dim, name=dim)
    return _Dim(dim.replace(" ", ""), expr=Expression(dim, dimension=True))


@dataclass(frozen=True)
class _Field:
    spec: FieldSpec
    condition: str | None
    kind: str | None
    is_type: Callable[[Any], bool] | None
    dtype: Any  # torch.dtype | None
    device_type: str | None  # None: any device
    device_index: int | None
    device_label: str | None
    shape: tuple[_Dim, ...] | None
    equals: Expression | None
    items: Callable[[Any], bool] | None
    split: int | None  # index of "..." in shape

    @property
    def name(self) -> str:
        return self.spec.name


def _compile_field(spec: FieldSpec, condition: str | None) -> _Field:
    device_type: str | None = None
    device_index: int | None = None
    label = spec.device
    if spec.device == "cuda-if-available":
        label = "cuda" if cuda_available() else "cpu"
    if label and label != "any":
        device_type, _, index = label.partition(":")
        device_index = int(index) if index else None
    kind = spec.kind
    return _Field(
        spec=spec,
        condition=condition,
        kind=kind,
        is_type=_PY_TYPES.get(kind) if kind else None,
        dtype=getattr(torch, spec.dtype, None) if spec.dtype else None,
        device_type=device_type,
        device_index=device_index,
        device_label=label if label != "any" else None,
        shape=tuple(_compile_dim(d) for d in spec.shape) if spec.shape is not None else None,
        equals=Expression(spec.equals) if spec.equals else None,
        items=_PY_TYPES.get(spec.items) if spec.items else None,
        split=spec.shape.index("...") if spec.shape is not None and "..." in spec.shape else None,
    )


class _Report:
    """Failures of one field, gathered before they become :class:`Violation` objects."""

    __slots__ = ("field", "kinds", "value")

    def __init__(self, field: _Field, value: object) -> None:
        self.field = field
        self.value = value
        self.kinds: list[tuple[str, str, str]] = []  # (kind, expected, actual)


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


class CompiledContract:
    """A :class:`HookContract` prepared for fast checks of many objects."""

    def __init__(self, contract: HookContract) -> None:
        self.contract = contract
        self.fields: tuple[_Field, ...] = tuple(
            _compile_field(spec, None) for spec in contract.fields.values()
        )
        self.when: tuple[tuple[str, tuple[_Field, ...], tuple[Expression, ...]], ...] = tuple(
            (
                clause.attr,
                tuple(_compile_field(spec, clause.attr) for spec in clause.fields.values()),
                tuple(Expression(text) for text in clause.invariants),
            )
            for clause in contract.when
        )
        self.invariants = tuple(Expression(text) for text in contract.invariants)
        self.has_values = (
            bool(self.invariants)
            or any(f.spec.has_value_checks for f in self.all_fields())
            or any(inv for _, _, inv in self.when)
        )

    def all_fields(self) -> tuple[_Field, ...]:
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

    def _overridden(self, cls: type, base: type, method: str) -> bool:
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
        active: list[_Field] = list(self.fields)
        invariants: list[Expression] = list(self.invariants)
        for attr, fields, clause_invariants in self.when:
            if getattr(obj, attr, False):
                active.extend(fields)
                invariants.extend(clause_invariants)
        bound: dict[str, int] = {}
        env = _Env(args, obj)
        reports: list[_Report] = []
        present: dict[str, object] = {}
        deferred: list[tuple[_Report, tuple[int, ...]]] = []
        for spec in active:
            if spec.spec.consumers and all(
                self._overridden(cls, base, c) for c in spec.spec.consumers
            ):
                continue
            try:
                value = getattr(obj, spec.name, _MISSING)
            except Exception:  # a property that raises: the field is not usable
                value = _MISSING
            report = _Report(spec, value)
            if value is _MISSING or (value is None and spec.kind != "any"):
                report.kinds.append(("missing", _expected_meta(spec, env, bound), "missing"))
                reports.append(report)
                continue
            present[spec.name] = value
            self._check_metadata(report, value)
            if spec.shape is not None:
                actual_shape = _shape_of(value)
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
                self._check_values(obj, active, invariants, present, failed, args, bound)
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
            if spec.device_type is not None and (
                device.type != spec.device_type
                or (spec.device_index is not None and device.index != spec.device_index)
            ):
                report.kinds.append(("device", spec.device_label or "", str(device)))
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
        env: _Env,
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
                report.kinds.append(("shape", _render_shape(dims, env, bound), _fmt(actual)))
                return
            pairs = list(zip(dims, actual, strict=True))
        else:
            head, tail = dims[:split], dims[split + 1 :]
            if len(actual) < len(head) + len(tail):
                report.kinds.append(("shape", _render_shape(dims, env, bound), _fmt(actual)))
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
                known = _resolve(dim.name, env, bound)
                if known is None:
                    if first:
                        bound[dim.name] = size
                        continue
                    continue
                if known != size:
                    break
                continue
            assert dim.expr is not None
            expected = _eval_dim(dim.expr, env, bound)
            if expected is None:
                wait = True
                continue
            if expected != size:
                break
        else:
            if wait and first and deferred is not None:
                deferred.append((report, actual))
            return
        report.kinds.append(("shape", _render_shape(dims, env, bound), _fmt(actual)))

    # ----------------------------------------------------------------------------------------

    def _check_values(
        self,
        obj: object,
        active: Sequence[_Field],
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


# --------------------------------------------------------------------------------------------
# Helpers: dimensions
# --------------------------------------------------------------------------------------------


def _as_int(value: object) -> int | None:
    if type(value) is int:
        return value
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    return None


class _Env(dict[str, "int | None"]):
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
            found = _as_int(self.args[name])
        else:
            try:
                found = _as_int(getattr(self.obj, name, None))
            except Exception:
                found = None
        self[name] = found
        return found


def _resolve(name: str, env: _Env, bound: Mapping[str, int]) -> int | None:
    found = env[name]
    return found if found is not None else bound.get(name)


def _eval_dim(expr: Expression, env: _Env, bound: Mapping[str, int]) -> int | None:
    cached = env.get(expr.text)
    if cached is not None:
        return cached
    names: dict[str, int] = {}
    for name in expr.names:
        known = _resolve(name, env, bound)
        if known is None:
            return None
        names[name] = known
    try:
        value = _as_int(expr(names))
    except ArithmeticError:
        return None
    if value is not None and not any(name in bound for name in expr.names):
        env[expr.text] = value
    return value


def _shape_of(value: object) -> tuple[int, ...] | None:
    if isinstance(value, torch.Tensor):
        return tuple(value.shape)
    if isinstance(value, list | tuple | str | Mapping):
        return (len(value),)
    return None


def _fmt(shape: Sequence[int]) -> str:
    return f"[{', '.join(str(d) for d in shape)}]"


def _render_shape(
    dims: Sequence[_Dim],
    env: _Env,
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
            _resolve(dim.name, env, bound)
            if dim.name is not None
            else _eval_dim(dim.expr, env, bound)  # type: ignore[arg-type]
        )
        if known is None:
            parts.append(dim.text)
        else:
            parts.append(f"{dim.text}={known}" if symbolic else str(known))
    return f"[{', '.join(parts)}]"


def _expected_meta(spec: _Field, env: _Env, bound: Mapping[str, int]) -> str:
    s = spec.spec
    kind = spec.kind
    shape = _render_shape(spec.shape, env, bound, symbolic=False) if spec.shape is not None else ""
    if kind == "tensor" or (kind is None and spec.dtype is not None):
        text = (s.dtype or "tensor") + (shape or "")
        if spec.device_label:
            text += f" {spec.device_label}"
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


def _to_violations(report: _Report, env: _Env, bound: Mapping[str, int]) -> list[Violation]:
    spec = report.field
    expected_meta = _expected_meta(spec, env, bound)
    actual_meta = "missing" if report.value is _MISSING else describe(report.value)
    return [
        Violation(
            field=spec.name,
            kind=kind,
            expected=expected,
            actual=actual,
            expected_meta=expected_meta,
            actual_meta=actual_meta,
            condition=spec.condition,
        )
        for kind, expected, actual in report.kinds
    ]


# --------------------------------------------------------------------------------------------
# Helpers: values, batched per device
# --------------------------------------------------------------------------------------------


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
_VALUE_WORDS = {
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


def _value_check(batch: _Batch, spec: _Field, value: object, check: str) -> None:
    pending = _Pending(spec.name, "value", _VALUE_WORDS[check], spec.condition, _numel(value))
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
    spec: _Field,
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


def _equals_check(batch: _Batch, spec: _Field, value: object, namespace: Namespace) -> None:
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
                    f"equals {text} (shape {_fmt(other.shape)})",
                    f"shape {_fmt(value.shape)}",
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


def _address_check(batch: _Batch, spec: _Field, value: torch.Tensor) -> None:
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


def compile_contract(contract: HookContract) -> CompiledContract:
    return CompiledContract(contract)
