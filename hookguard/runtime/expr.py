"""Evaluate contract expressions (invariants, ``equals``, shape dimensions) in a closed namespace,
within bounds.

Every expression was checked against a whitelist of syntax and limits by
:func:`hookguard.contracts.check_expression` when the contract was loaded: no lambdas, no
comprehensions, no dunder names or attributes, only whitelisted attribute names and builtins,
bounded length, depth and literal sizes. Only such checked trees are compiled here, and they run
with no builtins but the whitelisted ones. Names resolve to the namespace given (fields, hook
arguments, bound dimensions, ``torch``), then to attributes of the object.

What depends on run-time values is bounded while it runs: the operations that can grow without
limit (``**``, ``*``, ``+``, ``%`` and every call) are compiled as calls of guards that refuse

* integers over :data:`~hookguard.contracts.expressions.MAX_INT_BITS` bits, sequences, ranges
  and torch allocations over their item limits, one by one and all of an evaluation together
  (:class:`ExpressionLimit`);
* calls of anything but the whitelisted builtins, methods of tensors, built-in containers and
  numbers, and torch functions; and any function or method passed *as an argument*
  (``min(xs, key=obj.shell)``, ``key=hook``) (:class:`ExpressionRefused`);
* an evaluation that has run past :data:`MAX_SECONDS` (checked at each guarded operation).

An expression has no loops, so its time is bounded by its (bounded) size times the cost of its
(bounded) operations; the deadline reports the rest as a contract error rather than a hang.
"""

from __future__ import annotations

import ast
import builtins
import math
import time
import warnings
from collections.abc import Iterator, Mapping
from types import BuiltinFunctionType, CodeType, FunctionType, MethodType, ModuleType
from typing import Any

from hookguard.contracts import EXPR_BUILTINS, ExpressionLimit, check_expression
from hookguard.contracts.expressions import (
    MAX_ITEMS,
    MAX_TOTAL_ITEMS,
    bounded_add,
    bounded_mod,
    bounded_mul,
    bounded_pow,
    range_length,
)

__all__ = ["MAX_SECONDS", "Expression", "ExpressionLimit", "ExpressionRefused", "Namespace"]

#: Longest one evaluation may run before it is stopped with :class:`ExpressionLimit`.
MAX_SECONDS = 2.0
#: Most elements a torch allocation in an expression may have (``torch.arange(n)``).
MAX_TENSOR_ITEMS = 1 << 24
#: Most elements all torch allocations of one evaluation may have together.
MAX_TOTAL_TENSOR_ITEMS = 4 * MAX_TENSOR_ITEMS

_SAFE_BUILTINS: dict[str, Any] = {name: getattr(builtins, name) for name in EXPR_BUILTINS}
_SAFE_BUILTIN_IDS = frozenset(id(value) for value in _SAFE_BUILTINS.values())
_SAFE_OWNERS = (list, tuple, dict, str, bytes, int, float, bool, complex, set, frozenset, range)
_ALLOCATING = frozenset({"zeros", "ones", "full", "empty", "arange"})
_GUARD_PREFIX = "_hg_"


class ExpressionRefused(TypeError):
    """An expression tried to call something it may not, or to pass a function as a value."""


# Of the evaluation under way (approximate across threads: a bound only): its deadline, and
# the sequence items and tensor elements it has created so far.
_deadline = [0.0]
_spent = [0, 0]
_SEQUENCES = (str, bytes, list, tuple)
_MATERIALIZING = frozenset({id(list), id(tuple), id(set), id(sorted), id(sum), id(min), id(max),
                            id(any), id(all)})


def _tick() -> None:
    if time.monotonic() > _deadline[0]:
        raise ExpressionLimit(f"evaluation took over {MAX_SECONDS:g} s")


def _spend(items: int, tensor: bool = False) -> None:
    """Count what an evaluation creates: all its sequences and ranges together stay within
    :data:`MAX_TOTAL_ITEMS` items, its torch allocations within :data:`MAX_TOTAL_TENSOR_ITEMS`."""
    _spent[tensor] += items
    limit = MAX_TOTAL_TENSOR_ITEMS if tensor else MAX_TOTAL_ITEMS
    if _spent[tensor] > limit:
        raise ExpressionLimit(f"creates over {limit} {'elements' if tensor else 'items'} in all")


def _torch_name(name: object) -> bool:
    return isinstance(name, str) and (name == "torch" or name.startswith("torch."))


def _safe_owner(owner: object) -> bool:
    kind = type(owner)
    return kind in _SAFE_OWNERS or _torch_name(kind.__module__)


def _callable_allowed(func: object) -> bool:
    if id(func) in _SAFE_BUILTIN_IDS:
        return True
    kind = type(func)
    if kind is BuiltinFunctionType:  # C functions and methods
        owner = getattr(func, "__self__", None)
        if owner is None or isinstance(owner, ModuleType):
            return _torch_name(getattr(func, "__module__", None)) or (
                isinstance(owner, ModuleType) and _torch_name(owner.__name__)
            )
        return _safe_owner(owner)
    if kind is MethodType:  # Python methods: torch's own, on torch objects
        assert isinstance(func, MethodType)
        return _torch_name(getattr(func.__func__, "__module__", None)) and _safe_owner(
            func.__self__
        )
    if kind is FunctionType:
        return _torch_name(getattr(func, "__module__", None))
    return False


def _name_of(func: object) -> str:
    return str(getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or func)


def _elements(args: tuple[Any, ...]) -> int | None:
    """Elements of a torch allocation from its size arguments (``zeros(2, 3)``,
    ``zeros((2, 3))``, ``full((2, 3), v)``)."""
    dims = args[0] if args and isinstance(args[0], list | tuple) else args
    count = 1
    for dim in dims:
        if type(dim) is not int:
            break
        count *= max(dim, 0)
        if count > MAX_TENSOR_ITEMS:
            return count
    return count


def _arange_length(args: tuple[Any, ...]) -> int:
    numbers = [a for a in args if type(a) in (int, float)]
    if len(numbers) != len(args) or not numbers or len(numbers) > 3:
        return 0  # tensors or other types: torch decides
    start, end, step = (0, numbers[0], 1) if len(numbers) == 1 else (*numbers[:2], 1)
    if len(numbers) == 3:
        step = numbers[2]
    if step == 0:
        return 0
    span = (end - start) / step
    return math.ceil(span) if span > 0 else 0


def _hg_call(func: Any, *args: Any, **kwargs: Any) -> Any:
    _tick()
    if (
        type(func) is BuiltinFunctionType
        and not kwargs
        and _torch_name(type(getattr(func, "__self__", None)).__module__)
        and not any(callable(a) for a in args)
    ):
        # A tensor's own C method (``x.max()``, ``m[:, 0].long()``): always allowed, and none
        # of the range, sum, round or allocation checks below is about one; the common case.
        result = func(*args)
        _tick()
        return result
    if not _callable_allowed(func):
        raise ExpressionRefused(
            f"calls {_name_of(func)}, which is not a method of a tensor, a built-in container "
            "or number, nor a torch function"
        )
    for index, value in enumerate((*args, *kwargs.values())):
        if callable(value) and not (func is isinstance and index == 1):
            raise ExpressionRefused(
                f"passes {_name_of(value)} to {_name_of(func)}: functions and methods cannot "
                "be passed as values"
            )
    if func is range:
        length = range_length(args)
        if length is not None and length > MAX_ITEMS:
            raise ExpressionLimit(f"range of {length} items is over {MAX_ITEMS}")
    if id(func) in _MATERIALIZING and args and type(args[0]) is range:
        _spend(len(args[0]))
    if func is sum and (len(args) > 1 or "start" in kwargs):
        start = args[1] if len(args) > 1 else kwargs["start"]
        if isinstance(start, list | tuple | str | bytes):
            raise ExpressionRefused("sum() of sequences is not allowed (it is quadratic)")
    elif func is round and len(args) > 1 and type(args[1]) is int and abs(args[1]) > 1000:
        raise ExpressionLimit("round() to more than 1000 digits")
    elif _torch_name(getattr(func, "__module__", None)) and getattr(
        func, "__name__", None
    ) in _ALLOCATING:
        count = _arange_length(args) if func.__name__ == "arange" else _elements(args)
        if count is not None and count > MAX_TENSOR_ITEMS:
            raise ExpressionLimit(
                f"torch.{func.__name__} of {count} elements is over {MAX_TENSOR_ITEMS}"
            )
        _spend(count or 0, tensor=True)
    result = func(*args, **kwargs)
    _tick()
    return result


def _hg_pow(left: Any, right: Any) -> Any:
    _tick()
    return bounded_pow(left, right)


def _hg_mul(left: Any, right: Any) -> Any:
    _tick()
    result = bounded_mul(left, right)
    if isinstance(result, _SEQUENCES):
        _spend(len(result))
    return result


def _hg_add(left: Any, right: Any) -> Any:
    _tick()
    result = bounded_add(left, right)
    if isinstance(result, _SEQUENCES):
        _spend(len(result))
    return result


def _hg_mod(left: Any, right: Any) -> Any:
    _tick()
    return bounded_mod(left, right)


_GUARDS: dict[type[ast.operator], str] = {
    ast.Pow: "_hg_pow",
    ast.Mult: "_hg_mul",
    ast.Add: "_hg_add",
    ast.Mod: "_hg_mod",
}
_GLOBALS: dict[str, Any] = {
    "__builtins__": _SAFE_BUILTINS,
    "_hg_call": _hg_call,
    "_hg_pow": _hg_pow,
    "_hg_mul": _hg_mul,
    "_hg_add": _hg_add,
    "_hg_mod": _hg_mod,
}


class _Guard(ast.NodeTransformer):
    """Rewrite ``a ** b`` as ``_hg_pow(a, b)`` (and ``*``, ``+``, ``%``), and ``f(x, k=y)`` as
    ``_hg_call(f, x, k=y)``."""

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        guard = _GUARDS.get(type(node.op))
        if guard is None:
            return node
        call = ast.Call(ast.Name(guard, ast.Load()), [node.left, node.right], [])
        return ast.copy_location(call, node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        call = ast.Call(ast.Name("_hg_call", ast.Load()), [node.func, *node.args],
                        node.keywords)
        return ast.copy_location(call, node)


class Namespace(Mapping[str, Any]):
    """Names for an expression: explicit ``names`` first, then attributes of ``obj``."""

    __slots__ = ("names", "obj")

    def __init__(self, names: Mapping[str, Any], obj: object = None) -> None:
        self.names = names
        self.obj = obj

    def __getitem__(self, key: str) -> Any:
        if key.startswith(_GUARD_PREFIX):
            raise KeyError(key)  # the guards, never shadowed by a field
        if key in self.names:
            return self.names[key]
        if key in _SAFE_BUILTINS:
            raise KeyError(key)  # fall through to the restricted builtins
        if self.obj is not None and not key.startswith("__"):
            try:
                return getattr(self.obj, key)
            except AttributeError:
                pass
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


class Expression:
    """A checked, compiled contract expression, evaluated within bounds."""

    __slots__ = ("code", "names", "text", "where")

    def __init__(self, text: str, *, dimension: bool = False, where: str = "") -> None:
        tree = check_expression(text, dimension=dimension)
        self.text = text
        self.where = where  # ``path:line`` of the expression in its contract, when known
        label = f"<contract expression {text.strip()[:200]!r}>"
        # The names the expression mentions (fields, dimensions, attributes), before guarding.
        with warnings.catch_warnings():  # e.g. "'a'['b']": an error when it runs
            warnings.simplefilter("ignore", SyntaxWarning)
            self.names: tuple[str, ...] = compile(tree, label, "eval").co_names
            guarded = ast.fix_missing_locations(_Guard().visit(tree))
            self.code: CodeType = compile(guarded, label, "eval")

    def __call__(self, namespace: Mapping[str, Any]) -> Any:
        # The tree passed the syntax whitelist and limits, its growing operations and calls go
        # through the guards, and it runs with the restricted builtins.
        _deadline[0] = time.monotonic() + MAX_SECONDS
        _spent[0] = _spent[1] = 0
        try:
            return eval(self.code, _GLOBALS, namespace)
        except (ExpressionLimit, ExpressionRefused) as exc:
            if not self.where:
                raise
            raise type(exc)(f"{self.where}: {exc}") from None  # a contract error: say where

    def __repr__(self) -> str:
        return f"Expression({self.text!r})"
