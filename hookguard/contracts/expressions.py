"""Contract expressions (invariants, ``equals``, shape dimensions): the syntax whitelist and
the size limits, checked when a contract is loaded.

An expression is hostile input: it comes from a file in the checkout. :func:`check_expression`
accepts only whitelisted syntax, within limits on its length, nesting depth and size, and folds
its constant parts under the same limits that bound evaluation (:func:`bounded_pow`,
:func:`bounded_mul`, :func:`bounded_add`, :func:`bounded_mod`, :data:`MAX_ITEMS`), so
``10**10**10``, ``sum(range(10**15))`` or ``[0]*(3*10**8)`` are contract errors at load time,
naming the file and line. What depends on run-time values is bounded by
:mod:`hookguard.runtime.expr` with the same helpers.
"""

from __future__ import annotations

import ast
import operator
from typing import Any

from hookguard.contracts.schema import DTYPES

__all__ = [
    "EXPR_ATTRIBUTES",
    "EXPR_BUILTINS",
    "MAX_DEPTH",
    "MAX_EXPRESSION_LENGTH",
    "MAX_INT_BITS",
    "MAX_ITEMS",
    "MAX_NODES",
    "MAX_TOTAL_ITEMS",
    "ExpressionLimit",
    "bounded_add",
    "bounded_mod",
    "bounded_mul",
    "bounded_pow",
    "check_expression",
    "range_length",
]

#: Longest expression text accepted.
MAX_EXPRESSION_LENGTH = 2000
#: Deepest nesting of the syntax tree (``((((x))))`` counts the operations, not parentheses).
MAX_DEPTH = 48
#: Most nodes in one expression's syntax tree.
MAX_NODES = 500
#: Largest integer an expression may compute, in bits (a 64-bit size times a 64-bit size fits).
MAX_INT_BITS = 256
#: Most items a ``range``, a repeated sequence or a torch allocation may have.
MAX_ITEMS = 1_000_000
#: Most items the sequences and ranges one evaluation creates may have together.
MAX_TOTAL_ITEMS = 4 * MAX_ITEMS
#: Largest literal exponent a shape dimension may use (``2**k`` for a literal ``k``).
MAX_DIM_EXPONENT = 64


class ExpressionLimit(ArithmeticError):
    """An expression went past a size, nesting or time limit (an arithmetic error, like
    ``OverflowError``: the value it would compute is out of range)."""


def bounded_pow(base: Any, exponent: Any) -> Any:
    """``base ** exponent``, refused when the integer result would exceed :data:`MAX_INT_BITS`."""
    if (
        isinstance(base, int)  # int subclasses too (an ``IntEnum`` field): they compute as ints
        and isinstance(exponent, int)
        and exponent > 1
        and abs(base) > 1
        and (abs(base).bit_length() - 1) * exponent > MAX_INT_BITS
    ):
        raise ExpressionLimit(
            f"{base} ** {exponent} is larger than {MAX_INT_BITS} bits"
        )
    return base**exponent


def bounded_mul(left: Any, right: Any) -> Any:
    """``left * right``, refused when integers exceed :data:`MAX_INT_BITS` or a repeated
    sequence exceeds :data:`MAX_ITEMS` items."""
    if isinstance(left, int) and isinstance(right, int):
        if left.bit_length() + right.bit_length() > MAX_INT_BITS + 1:
            raise ExpressionLimit(f"a product is larger than {MAX_INT_BITS} bits")
    elif isinstance(left, _REPEATABLE) or isinstance(right, _REPEATABLE):
        seq, count = (left, right) if isinstance(left, _REPEATABLE) else (right, left)
        # Python repeats a sequence by any count with ``__index__``: a 0-d integer tensor, a
        # numpy integer, an ``int`` subclass.
        times = _as_count(count)
        if times is not None and len(seq) * times > MAX_ITEMS:
            raise ExpressionLimit(
                f"repeating {type(seq).__name__} of {len(seq)} items {times} times is over "
                f"{MAX_ITEMS} items"
            )
    return left * right


_REPEATABLE = (str, bytes, list, tuple)


def _as_count(value: Any) -> int | None:
    """``value`` as a repetition count, when it is one (``__index__``)."""
    if isinstance(value, int):
        return int(value)
    if isinstance(value, _REPEATABLE) or not hasattr(type(value), "__index__"):
        return None
    try:
        return operator.index(value)
    except (TypeError, ValueError, RuntimeError):
        return None  # a tensor of several elements: not a count


def bounded_add(left: Any, right: Any) -> Any:
    """``left + right``, refused when integers exceed :data:`MAX_INT_BITS` or a joined
    sequence exceeds :data:`MAX_ITEMS` items."""
    if (
        isinstance(left, str | bytes | list | tuple)
        and isinstance(right, str | bytes | list | tuple)
        and len(left) + len(right) > MAX_ITEMS
    ):
        raise ExpressionLimit(f"joining sequences of over {MAX_ITEMS} items")
    value = left + right
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise ExpressionLimit(f"a sum is larger than {MAX_INT_BITS} bits")
    return value


def bounded_mod(left: Any, right: Any) -> Any:
    """``left % right``; ``%`` string formatting (``'%0999999999d' % 1``) is refused."""
    if isinstance(left, str | bytes):
        raise ExpressionLimit("'%' formatting of strings is not allowed in expressions")
    return left % right


def range_length(args: tuple[Any, ...]) -> int | None:
    """How many items ``range(*args)`` has, when the arguments are integers (anything with
    ``__index__``, as ``range`` reads them)."""
    if not args or len(args) > 3:
        return None
    try:
        ints = [a if isinstance(a, int) else operator.index(a) for a in args]
    except (TypeError, ValueError, RuntimeError):
        return None  # range() says why
    try:
        return len(range(*ints))
    except (ValueError, OverflowError):
        return MAX_ITEMS + 1  # zero step or longer than the C type: refused either way


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
    """Parse ``text`` and check it uses only whitelisted syntax within the limits; raise
    ``ValueError`` if not.

    ``dimension=True`` allows only integer arithmetic over names (a shape dimension), with
    literal exponents up to :data:`MAX_DIM_EXPONENT` (shape dimensions are also compiled into
    generated checks, where no run-time guard applies).
    """
    what = "shape dimension" if dimension else "expression"
    source = text.strip()
    if len(source) > MAX_EXPRESSION_LENGTH:
        raise ValueError(
            f"{what} is {len(source)} characters long (limit {MAX_EXPRESSION_LENGTH})"
        )
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"cannot parse {what} {_short(text)}: {exc.msg}") from None
    except (RecursionError, MemoryError):
        raise ValueError(f"{what} {_short(text)} is nested too deeply") from None
    _check_shape(tree, what, text)
    allowed = _DIM_NODES if dimension else _EXPR_NODES
    for node in ast.walk(tree):
        if not isinstance(node, allowed):
            raise ValueError(f"{what} {text!r} uses {type(node).__name__}, which is not allowed")
        if isinstance(node, ast.Name) and node.id.startswith(("__", "_hg_")):
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
            if type(node.value) is int and node.value.bit_length() > MAX_INT_BITS:
                raise ValueError(f"{what} {_short(text)} uses an integer over {MAX_INT_BITS} bits")
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
        if dimension and isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            exponent = node.right
            if not (
                isinstance(exponent, ast.Constant)
                and type(exponent.value) is int
                and 0 <= exponent.value <= MAX_DIM_EXPONENT
            ):
                raise ValueError(
                    f"shape dimension {_short(text)} raises to a power that is not a literal "
                    f"from 0 to {MAX_DIM_EXPONENT}"
                )
    try:
        _Folder().fold(tree.body)
    except ExpressionLimit as exc:
        raise ValueError(f"{what} {_short(text)} is out of bounds: {exc}") from None
    return tree


def _short(text: str) -> str:
    text = text.strip()
    return repr(text if len(text) <= 80 else text[:77] + "...")


def _check_shape(tree: ast.AST, what: str, text: str) -> None:
    """Depth and size limits, without recursion."""
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    nodes = 0
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if depth > MAX_DEPTH:
            raise ValueError(f"{what} {_short(text)} is nested deeper than {MAX_DEPTH} levels")
        if nodes > MAX_NODES:
            raise ValueError(f"{what} {_short(text)} has more than {MAX_NODES} parts")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


class _Unknown:
    """A value only known at run time."""


_UNKNOWN = _Unknown()


class _Seq:
    """A string, list or tuple known only by its length: folding never builds one."""

    __slots__ = ("is_str", "length")

    def __init__(self, length: int, is_str: bool = False) -> None:
        self.length = length
        self.is_str = is_str


class _Folder:
    """Computes the literal parts of an expression under the evaluation limits, keeping only
    numbers and the lengths of sequences, so folding itself never allocates much; the items
    all repetitions and joins would create together are bounded by :data:`MAX_TOTAL_ITEMS`."""

    def __init__(self) -> None:
        self.items = 0

    def spend(self, length: int, is_str: bool) -> _Seq:
        self.items += length
        if self.items > MAX_TOTAL_ITEMS:
            raise ExpressionLimit(f"sequences of over {MAX_TOTAL_ITEMS} items in all")
        return _Seq(length, is_str)

    def fold(self, node: ast.AST) -> Any:
        """The value of ``node`` where literals decide it (a number or a :class:`_Seq`),
        else ``_UNKNOWN``. The depth is bounded by :func:`_check_shape`."""
        if isinstance(node, ast.Constant):
            value = node.value
            return _Seq(len(value), True) if isinstance(value, str) else value
        if isinstance(node, ast.List | ast.Tuple):
            for item in node.elts:
                self.fold(item)
            return _Seq(len(node.elts))
        if isinstance(node, ast.UnaryOp):
            operand = self.fold(node.operand)
            if type(operand) in (int, float) and isinstance(node.op, ast.USub | ast.UAdd):
                return -operand if isinstance(node.op, ast.USub) else operand
            return _UNKNOWN
        if isinstance(node, ast.BinOp):
            return self.binary(node.op, self.fold(node.left), self.fold(node.right))
        if isinstance(node, ast.Call):
            args = [self.fold(arg) for arg in node.args]
            for keyword in node.keywords:
                self.fold(keyword.value)
            if isinstance(node.func, ast.Name) and node.func.id == "range":
                numbers = tuple(a for a in args if type(a) in (int, bool))
                length = range_length(numbers) if len(numbers) == len(args) else None
                if length is not None and length > MAX_ITEMS:
                    raise ExpressionLimit(f"range of {length} items is over {MAX_ITEMS}")
            else:
                self.fold(node.func)
            return _UNKNOWN
        for child in ast.iter_child_nodes(node):
            self.fold(child)
        return _UNKNOWN

    def binary(self, op: ast.operator, left: Any, right: Any) -> Any:
        if left is _UNKNOWN or right is _UNKNOWN:
            if isinstance(op, ast.Mod) and isinstance(left, _Seq) and left.is_str:
                raise ExpressionLimit("'%' formatting of strings is not allowed in expressions")
            return _UNKNOWN
        numbers = type(left) in (int, float, bool) and type(right) in (int, float, bool)
        if isinstance(op, ast.Mult) and not numbers:
            seq, count = (left, right) if isinstance(left, _Seq) else (right, left)
            if isinstance(seq, _Seq) and type(count) in (int, bool):
                if seq.length * count > MAX_ITEMS:
                    raise ExpressionLimit(f"repeating a sequence of {seq.length} items {count} "
                                          f"times is over {MAX_ITEMS} items")
                return self.spend(max(seq.length * count, 0), seq.is_str)
            return _UNKNOWN
        if isinstance(op, ast.Add) and isinstance(left, _Seq) and isinstance(right, _Seq):
            if left.length + right.length > MAX_ITEMS:
                raise ExpressionLimit(f"joining sequences of over {MAX_ITEMS} items")
            return self.spend(left.length + right.length, left.is_str and right.is_str)
        if isinstance(op, ast.Mod) and isinstance(left, _Seq) and left.is_str:
            raise ExpressionLimit("'%' formatting of strings is not allowed in expressions")
        if not numbers:
            return _UNKNOWN
        try:
            if isinstance(op, ast.Pow):
                return bounded_pow(left, right)
            if isinstance(op, ast.Mult):
                return bounded_mul(left, right)
            if isinstance(op, ast.Add):
                return bounded_add(left, right)
            if isinstance(op, ast.Sub):
                return bounded_add(left, -right)
            if isinstance(op, ast.Mod):
                return left % right
        except ExpressionLimit:
            raise
        except (ArithmeticError, ValueError):  # 1 % 0, 0.0 ** -1: an error when it runs
            return _UNKNOWN
        return _UNKNOWN
