"""Contract expressions written into a generated check as plain Python, where that is exact.

The bounded evaluator (:mod:`hookguard.runtime.expr`) runs every call of an expression through a
guard, because a contract file is input: the guard refuses calls of anything but tensors' methods,
containers and torch functions, and bounds what a call may allocate. For most expressions of a
contract there is nothing left for the guard to decide at run time: a tensor's own method called
without arguments (``m[:, 0].max()``, ``.long()``, ``.all()``, ``.tolist()``), subscripts with
literal indices or one tensor, comparisons, and ``torch.arange(n, dtype=..., device=t.device)``
with an ``int`` size. :func:`inline` writes such an expression as Python source over the locals of
the generated check, with the run-time conditions under which it computes exactly what the
evaluator would:

* each tensor field it reads is exactly a ``torch.Tensor`` (``x.__class__ is torch.Tensor``;
  the evaluator's fast path admits subclasses only through its generic checks) with no instance
  attribute that could shadow a method (``not x.__dict__``), and the methods called are
  ``torch.Tensor``'s own C methods (checked when the check is generated);
* each other name holds an ``int`` in the names the evaluator would see;
* an ``arange`` size is at most :data:`~hookguard.runtime.expr.MAX_TENSOR_ITEMS`, the
  evaluator's limit.

When a condition does not hold the generated check calls the evaluator, as before. Anything
outside this subset (other calls, ``+ * ** %``, builtins, names of other kinds) is never inlined.
The inlined subset has no loop and no call that can grow, so the evaluator's deadline has nothing
to stop there.

An ``arange`` (or any subtree) that depends only on ints, dtypes and a tensor's *device* is
computed once per distinct value of those and kept (at most :data:`MEMO_ENTRIES` results of up to
:data:`MEMO_ITEMS` elements per expression): the generated check then compares against it without
allocating, or launching a kernel to fill it, on every call. The kept tensor is only ever read.
"""

from __future__ import annotations

import ast
import inspect
import keyword
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MethodDescriptorType
from typing import Any

import torch

from hookguard.runtime.expr import MAX_TENSOR_ITEMS, Expression

__all__ = ["MEMO_ENTRIES", "MEMO_ITEMS", "Inlined", "inline", "memo_put"]

#: Most results kept per memoised subexpression.
MEMO_ENTRIES = 8
#: Largest result (elements) that is kept.
MEMO_ITEMS = 1 << 16

# Static kinds of subexpressions.
TENSOR, SIZE, INT, FLOAT, DTYPE = "tensor", "size", "int", "float", "dtype"
DEVICE, PY, BOOL, TORCH = "device", "py", "bool", "torch"
_SCALARS = (INT, FLOAT, BOOL)

# A tensor's methods, called without arguments, by the kind of what they return. All are
# C methods of torch.Tensor that read the tensor and allocate at most its own size.
_TENSOR_METHODS: dict[str, str] = {
    **{name: TENSOR for name in (
        "all", "any", "max", "min", "amax", "amin", "sum", "abs", "long", "int", "float",
        "bool", "flatten", "count_nonzero", "isfinite", "isnan", "logical_not",
    )},
    "tolist": PY,
    "item": PY,
    "numel": INT,
    "dim": INT,
}  # fmt: skip
_TENSOR_ATTRS = {"shape": SIZE, "dtype": DTYPE, "device": DEVICE, "ndim": INT}
_COMPARE = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
_BITWISE = {ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^"}


def memo_put(cache: dict[Any, Any], key: Any, value: Any) -> Any:
    """Keep ``value`` under ``key`` when there is room and it is small; return it."""
    if len(cache) < MEMO_ENTRIES and value.numel() <= MEMO_ITEMS:
        cache[key] = value
    return value


@dataclass
class Inlined:
    """An expression as source: ``reads`` run first, then when every one of ``guards`` holds,
    ``lines`` (memoised parts) and ``source`` compute what the evaluator would."""

    source: str
    kind: str
    reads: list[str] = field(default_factory=list)
    guards: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)


class _NotInline(Exception):
    pass


def _ident(name: str) -> bool:
    return (
        name.isidentifier()
        and not keyword.iskeyword(name)
        and not name.startswith("__")
        and not name.startswith("_hg_")
    )


def _int_literal(node: ast.AST) -> int | None:
    """A literal int, ``-1`` included."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    return None


class _Inliner:
    def __init__(
        self, tensors: Mapping[str, str], const: Callable[[str, Any], str], tag: str
    ) -> None:
        self.tensors = tensors  # field name -> local, for tensor fields set on this path
        self.const = const
        self.tag = tag  # unique per expression within the generated function
        self.out = Inlined("", PY)
        self.seen: dict[str, tuple[str, str]] = {}
        self.allocations = 0

    # -- leaves ---------------------------------------------------------------------------

    def name(self, node: ast.Name) -> tuple[str, str]:
        name = node.id
        if not _ident(name):
            raise _NotInline(name)
        known = self.seen.get(name)
        if known is not None:
            return known
        if name in self.tensors:
            local = self.tensors[name]
            # not a subclass, and no instance attribute shadowing one of its methods
            self.out.guards.append(f"{local}.__class__ is _T and not {local}.__dict__")
            result = (local, TENSOR)
        elif name == "torch":  # the module, unless a field or argument took the name
            self.out.guards.append("names.get('torch') is _torch")
            result = ("_torch", TORCH)
        else:
            local = f"v{self.tag}_{len(self.seen)}"
            self.out.reads.append(f"{local} = names.get({name!r}, _nope)")
            self.out.guards.append(f"{local}.__class__ is int")
            result = (local, INT)
        self.seen[name] = result
        return result

    def constant(self, value: object) -> tuple[str, str]:
        if type(value) is int or type(value) is bool:
            return repr(value), (BOOL if type(value) is bool else INT)
        if type(value) is float:
            return self.const("_c", value), FLOAT
        raise _NotInline(repr(value))

    # -- expressions ----------------------------------------------------------------------

    def expr(self, node: ast.AST) -> tuple[str, str]:
        if isinstance(node, ast.Name):
            return self.name(node)
        literal = _int_literal(node)
        if literal is not None:
            return f"({literal!r})", INT
        if isinstance(node, ast.Constant):
            return self.constant(node.value)
        if isinstance(node, ast.Attribute):
            return self.attribute(node)
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, ast.BinOp) and type(node.op) in _BITWISE:
            left, lk = self.expr(node.left)
            right, rk = self.expr(node.right)
            kinds = {lk, rk}
            if TENSOR not in kinds or not kinds <= {TENSOR, INT, BOOL}:
                raise _NotInline("bitwise")
            return f"({left} {_BITWISE[type(node.op)]} {right})", TENSOR
        if isinstance(node, ast.UnaryOp):
            operand, kind = self.expr(node.operand)
            if isinstance(node.op, ast.Not) and kind == BOOL:
                return f"(not {operand})", BOOL
            if isinstance(node.op, ast.Invert) and kind == TENSOR:
                return f"(~{operand})", TENSOR
            raise _NotInline("unary")
        if isinstance(node, ast.BoolOp):
            parts = [self.expr(v) for v in node.values]
            if any(kind != BOOL for _, kind in parts):
                raise _NotInline("boolop")  # `and` of tensors would call bool() on them
            op = " and " if isinstance(node.op, ast.And) else " or "
            return f"({op.join(s for s, _ in parts)})", BOOL
        raise _NotInline(type(node).__name__)

    def attribute(self, node: ast.Attribute) -> tuple[str, str]:
        value, kind = self.expr(node.value)
        if kind == TORCH:
            dtype = getattr(torch, node.attr, None)
            if not isinstance(dtype, torch.dtype):
                raise _NotInline(node.attr)
            return self.const("_dt", dtype), DTYPE
        if kind == TENSOR and node.attr in _TENSOR_ATTRS:
            return f"{value}.{node.attr}", _TENSOR_ATTRS[node.attr]  # metadata only
        raise _NotInline(node.attr)

    def index(self, node: ast.AST, tensors: list[str]) -> str:
        if isinstance(node, ast.Slice):
            parts = []
            for part in (node.lower, node.upper, node.step):
                literal = None if part is None else _int_literal(part)
                if part is not None and literal is None:
                    raise _NotInline("slice")
                parts.append("" if literal is None else repr(literal))
            return ":".join(parts) if node.step is not None else ":".join(parts[:2])
        literal = _int_literal(node)
        if literal is not None:
            return repr(literal)
        source, kind = self.expr(node)
        if kind != TENSOR:
            raise _NotInline("index")
        tensors.append(source)
        return source

    def subscript(self, node: ast.Subscript) -> tuple[str, str]:
        value, kind = self.expr(node.value)
        if kind == SIZE:
            literal = _int_literal(node.slice)
            if literal is None:
                raise _NotInline("size index")
            return f"{value}[{literal!r}]", INT
        if kind != TENSOR:
            raise _NotInline("subscript")
        is_tuple = isinstance(node.slice, ast.Tuple)
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        tensors: list[str] = []
        parts = [self.index(item, tensors) for item in items]
        if len(tensors) > 1:
            raise _NotInline("two tensor indices")  # they would broadcast against each other
        inner = ", ".join(parts) + ("," if is_tuple and len(parts) == 1 else "")
        return f"{value}[{inner}]", TENSOR

    def compare(self, node: ast.Compare) -> tuple[str, str]:
        if len(node.ops) != 1 or type(node.ops[0]) not in _COMPARE:
            raise _NotInline("compare")
        left, lk = self.expr(node.left)
        right, rk = self.expr(node.comparators[0])
        op = _COMPARE[type(node.ops[0])]
        kinds = {lk, rk}
        if TENSOR in kinds:
            if not kinds <= {TENSOR, *_SCALARS}:
                raise _NotInline("compare kinds")
            return f"({left} {op} {right})", TENSOR
        if kinds <= {PY, *_SCALARS} or (
            op in ("==", "!=") and kinds <= {PY, SIZE, DTYPE, DEVICE, *_SCALARS}
        ):
            # Python values: numbers, what tolist() and item() return, sizes, devices
            return f"({left} {op} {right})", BOOL if kinds <= set(_SCALARS) else PY
        raise _NotInline("compare kinds")

    def call(self, node: ast.Call) -> tuple[str, str]:
        func = node.func
        if not isinstance(func, ast.Attribute):
            raise _NotInline("call")
        value, kind = self.expr(func.value)
        if kind == TORCH and func.attr == "arange":
            return self.arange(node)
        if kind != TENSOR or func.attr not in _TENSOR_METHODS or node.args or node.keywords:
            raise _NotInline(func.attr)
        method = inspect.getattr_static(torch.Tensor, func.attr, None)
        if not isinstance(method, MethodDescriptorType):
            raise _NotInline(func.attr)  # torch.Tensor's method was replaced in this process
        return f"{value}.{func.attr}()", _TENSOR_METHODS[func.attr]

    def arange(self, node: ast.Call) -> tuple[str, str]:
        """``torch.arange(n, dtype=..., device=...)``: an int size within the evaluator's
        allocation limit; kept per (size, device) when the device is given."""
        self.allocations += 1
        if len(node.args) != 1 or self.allocations > 1:
            raise _NotInline("arange")
        arg = node.args[0]
        literal = _int_literal(arg)
        key: list[str] = []
        if literal is not None:
            if not 0 <= literal <= MAX_TENSOR_ITEMS:
                raise _NotInline("arange size")
            size = repr(literal)
        elif isinstance(arg, ast.Name):
            size, kind = self.name(arg)
            if kind != INT:
                raise _NotInline("arange size")
            self.out.guards.append(f"{size} <= {MAX_TENSOR_ITEMS}")
            key.append(size)
        else:
            raise _NotInline("arange size")
        keywords = []
        device = False
        for item in node.keywords:
            if item.arg == "dtype":
                source, kind = self.expr(item.value)
                if kind != DTYPE:
                    raise _NotInline("dtype")
            elif item.arg == "device":
                device = True
                if isinstance(item.value, ast.Constant) and type(item.value.value) is str:
                    source = self.const("_s", item.value.value)
                else:
                    source, kind = self.expr(item.value)
                    if kind != DEVICE:
                        raise _NotInline("device")
                    key.append(source)
            else:
                raise _NotInline(f"arange {item.arg}")
            keywords.append(f"{item.arg}={source}")
        call = f"_arange({', '.join([size, *keywords])})"
        if not device:
            return call, TENSOR  # the default device may change: made on every call
        memo = self.const("_memo", {})
        k, m = f"k{self.tag}", f"m{self.tag}"
        self.out.lines += [
            f"{k} = ({', '.join(key)},)" if key else f"{k} = ()",
            f"{m} = {memo}.get({k})",
            f"if {m} is None:",
            f"    {m} = _memo_put({memo}, {k}, {call})",
        ]
        return m, TENSOR


def inline(
    expr: Expression,
    tensors: Mapping[str, str],
    const: Callable[[str, Any], str],
    tag: str,
) -> Inlined | None:
    """``expr`` as source over the generated check's locals, or ``None`` when it must run
    through the evaluator. ``tensors`` maps the names of tensor fields set on this path to their
    locals; ``const`` registers a constant and returns its name; ``tag`` makes locals unique."""
    inliner = _Inliner(tensors, const, tag)
    try:
        tree = ast.parse(expr.text.strip(), mode="eval")
        source, kind = inliner.expr(tree.body)
    except (_NotInline, SyntaxError, RecursionError):
        return None
    inliner.out.source = source
    inliner.out.kind = kind
    return inliner.out
