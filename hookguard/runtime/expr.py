"""Evaluate contract expressions (invariants, ``equals``, shape dimensions) in a closed namespace,
within bounds.

Every expression was checked against a whitelist of syntax and limits by
:func:`hookguard.contracts.check_expression` when the contract was loaded: no lambdas, no
comprehensions, no dunder names or attributes, only whitelisted attribute names and builtins,
bounded length, depth and literal sizes. Only such checked trees are compiled here, and they run
with no builtins but the whitelisted ones. Names resolve to the namespace given (fields, hook
arguments, bound dimensions, ``torch``), then to attributes of the object.

What depends on run-time values is bounded while it runs. Every operation that can allocate or
grow (binary and unary operators, comparisons, subscripts and every call) is compiled as a call of
a guard that refuses

* integers over :data:`~hookguard.contracts.expressions.MAX_INT_BITS` bits, sequences and ranges
  over their item limits, one by one and all of an evaluation together (:class:`ExpressionLimit`);
  a count or size is read as Python reads it (``__index__``: 0-d integer tensors, numpy
  integers, ``int`` subclasses), so none of them passes a limit an ``int`` would not;
* a tensor of over :data:`MAX_TENSOR_ITEMS` elements, and tensors of over
  :data:`MAX_TOTAL_TENSOR_ITEMS` together, unless it is no larger than a tensor it is made from
  that was read from the checked object (``(x + 1 > 0).all()`` on a large activation is not
  limited). The size is computed *before* the operation runs, from the arguments' shapes and
  values, by a rule for each torch function and tensor method an expression may call
  (:data:`SIZE_RULES`), and for operators, comparisons and subscripts (broadcasting, advanced
  indexing); a tensor the evaluation made from nothing (``torch.zeros(n)``) or grew
  (``torch.cat([x, x])``) is counted, and so is every tensor computed from one;
* a builtin iterating over more than :data:`MAX_ITERATED_TENSORS` rows of a tensor, and more
  than :data:`MAX_COMBINED_TENSORS` tensors compared, added or joined one by one (``sorted``,
  ``sum``, ``max``, ``in``, ``==`` of lists, ``cat``): each is a torch operation;
* calls of anything but the whitelisted builtins, the torch functions and tensor methods that
  have a size rule, and methods of built-in containers and numbers; and any function or method
  passed *as an argument* (``min(xs, key=obj.shell)``, ``key=hook``) (:class:`ExpressionRefused`);
* an evaluation that has run past :data:`MAX_SECONDS` (checked at each guarded operation).

An expression has no loops, so its time is bounded by its (bounded) size times the cost of its
(bounded) operations; the deadline reports the rest as a contract error rather than a hang.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import math
import operator
import time
import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import BuiltinFunctionType, CodeType, FunctionType, MethodType
from typing import Any

import torch

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

__all__ = [
    "MAX_COMBINED_TENSORS",
    "MAX_ITERATED_TENSORS",
    "MAX_SECONDS",
    "MAX_TENSOR_ITEMS",
    "MAX_TOTAL_TENSOR_ITEMS",
    "SIZE_RULES",
    "Expression",
    "ExpressionLimit",
    "ExpressionRefused",
    "Namespace",
    "data_shape",
]

#: Longest one evaluation may run before it is stopped with :class:`ExpressionLimit`.
MAX_SECONDS = 2.0
#: Most elements a tensor an expression makes may have (``torch.arange(n)``), unless it is no
#: larger than a tensor it was made from that the evaluation did not make.
MAX_TENSOR_ITEMS = 1 << 24
#: Most elements all tensors one evaluation makes may have together.
MAX_TOTAL_TENSOR_ITEMS = 4 * MAX_TENSOR_ITEMS
#: Most rows of a tensor a builtin may iterate over (``list(x)``, ``all(x)``): one tensor object
#: each, made where the deadline is not checked.
MAX_ITERATED_TENSORS = 100_000
#: Most tensors that may be compared, added or joined one by one (``sorted(x)``, ``sum(xs)``,
#: ``max(xs)``, ``t in xs``, ``xs == ys``, ``torch.cat(xs)``): a torch operation or a size to read
#: each, of microseconds, where the deadline is not checked.
MAX_COMBINED_TENSORS = 10_000

_T = torch.Tensor
_SAFE_BUILTINS: dict[str, Any] = {name: getattr(builtins, name) for name in EXPR_BUILTINS}
_SAFE_BUILTIN_IDS = frozenset(id(value) for value in _SAFE_BUILTINS.values())
_SAFE_OWNERS = (list, tuple, dict, str, bytes, int, float, bool, complex, set, frozenset, range)
_GUARD_PREFIX = "_hg_"


class ExpressionRefused(TypeError):
    """An expression tried to call something it may not, or to pass a function as a value."""


# Of the evaluation under way (approximate across threads: a bound only): its deadline, the
# sequence items and tensor elements it has created so far, and the tensors the limits counted,
# by id, while they live.
_deadline = [0.0]
_spent = [0, 0]
_counted: dict[int, weakref.ref[Any]] = {}
_SEQUENCES = (str, bytes, list, tuple)
_MATERIALIZING = frozenset({id(list), id(tuple), id(set), id(sorted), id(sum), id(min), id(max),
                            id(any), id(all)})
_PAIRWISE = frozenset({id(sorted), id(sum), id(min), id(max)})  # compare or add their items
# Values that hold no tensor: comparing them never allocates one.
_PLAIN = frozenset({int, float, bool, str, bytes, complex, type(None), torch.Size, torch.dtype,
                    torch.device})


def _tick() -> None:
    if time.monotonic() > _deadline[0]:
        raise ExpressionLimit(f"evaluation took over {MAX_SECONDS:g} s")


def _spend(items: int, tensor: bool = False) -> None:
    """Count what an evaluation creates: all its sequences and ranges together stay within
    :data:`MAX_TOTAL_ITEMS` items, its tensors within :data:`MAX_TOTAL_TENSOR_ITEMS`."""
    _spent[tensor] += items
    limit = MAX_TOTAL_TENSOR_ITEMS if tensor else MAX_TOTAL_ITEMS
    if _spent[tensor] > limit:
        raise ExpressionLimit(f"creates over {limit} {'elements' if tensor else 'items'} in all")


# -- sizes ----------------------------------------------------------------------------------


def _index(value: object, what: str) -> int:
    """An integer argument as Python and torch read it (``__index__``): ints, bools, 0-d integer
    tensors, numpy integers."""
    if type(value) is int:
        return value
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise ExpressionRefused(f"{what} {_short(value)} is not an integer") from None


def _short(value: object) -> str:
    text = repr(value) if isinstance(value, int | float | str) else type(value).__name__
    return text if len(text) <= 60 else text[:57] + "..."


def _numel(shape: Iterable[int]) -> int:
    count = 1
    for dim in shape:
        count *= max(int(dim), 0)
    return count


def _broadcast_numel(shapes: list[tuple[int, ...]]) -> int:
    """Elements of the result of broadcasting ``shapes``, or more: the largest size of each
    dimension, aligned from the right (shapes that do not broadcast are an error at run time)."""
    if len(shapes) == 1:
        return _numel(shapes[0])
    out: list[int] = []
    for shape in shapes:
        if len(shape) > len(out):
            out[:0] = [1] * (len(shape) - len(out))
        offset = len(out) - len(shape)
        for i, dim in enumerate(shape):
            if dim > out[offset + i]:
                out[offset + i] = dim
    return _numel(out)


def _is_counted(t: torch.Tensor) -> bool:
    """Whether the limits counted ``t`` (or the tensor it is a view of)."""
    if id(t) in _counted:
        return True
    base = t._base
    return base is not None and id(base) in _counted


def _sizes(values: Iterable[Any]) -> tuple[int, list[tuple[int, ...]]]:
    """The most elements of a tensor among ``values`` that the evaluation did not count (read
    from the object, or no larger than one that was), and the shapes of all tensors."""
    free = 0
    shapes: list[tuple[int, ...]] = []
    for value in values:
        if isinstance(value, _T):
            shapes.append(tuple(value.shape))
            if not (_counted and _is_counted(value)):
                free = max(free, value.numel())
    return free, shapes


def _is_sequence(value: object) -> bool:
    """What torch reads as a sequence when it makes a tensor from data."""
    kind = type(value)
    return (
        hasattr(kind, "__getitem__")
        and hasattr(kind, "__len__")
        and not isinstance(value, Mapping | str | bytes)
    )


def data_shape(value: object) -> tuple[int, ...]:
    """The shape of the tensor torch would make from ``value`` (``torch.tensor(value)``), found
    as torch finds it: from the length of each sequence and of its first item, never by walking
    all items (``[[0] * 1000] * 1000`` is a million elements from 2,000 items). A sequence of a
    type other than list, tuple, range, tensor and array is refused: its length is its own
    code's."""
    dims: list[int] = []
    while True:
        if isinstance(value, _T):
            dims.extend(value.shape)
            break
        if isinstance(value, list | tuple | range):
            dims.append(len(value))
            if not len(value):
                break
            if len(dims) > 64:
                raise ExpressionLimit("a sequence is nested over 64 levels deep")
            value = value[0]
            continue
        shape = getattr(value, "shape", None) if hasattr(type(value), "__array__") else None
        if isinstance(shape, tuple):  # a numpy array: torch reads its shape
            dims.extend(shape)
            break
        if _is_sequence(value):
            raise ExpressionRefused(
                f"makes a tensor from a {type(value).__name__}, whose size cannot be known "
                "in advance"
            )
        break
    return tuple(dims)


def _admit(out: int, free: int, what: str) -> bool:
    """Before an operation makes a tensor of ``out`` elements: no limit when no larger than
    ``free``, the largest tensor it reads that the evaluation did not count; else it is counted.
    Returns whether it was (its result is then counted too)."""
    if out <= free:
        return False
    if out > MAX_TENSOR_ITEMS:
        raise ExpressionLimit(f"{what} of {out} elements is over {MAX_TENSOR_ITEMS}")
    _spend(out, tensor=True)
    return True


def _record(result: object) -> None:
    """Note a counted result (its tensors, for tuples), so that what is computed from it is
    counted too, until it is freed."""
    for item in result if isinstance(result, tuple | list) else (result,):
        if isinstance(item, _T) and id(item) not in _counted:
            _counted[id(item)] = weakref.ref(item, _forget(id(item)))


def _forget(key: int) -> Callable[[object], None]:
    def forget(_: object) -> None:
        _counted.pop(key, None)  # freed: its id may be another tensor's

    return forget


# -- size rules of torch functions and tensor methods -----------------------------------------
# Each returns, before the call, the most elements of a tensor the call may make and the largest
# tensor argument the evaluation did not count; for a method, ``args`` starts with the tensor.

Rule = Callable[[tuple[Any, ...], dict[str, Any]], tuple[int, int]]


def _arg(args: tuple[Any, ...], kwargs: Mapping[str, Any], position: int, *names: str) -> Any:
    if len(args) > position:
        return args[position]
    for name in names:
        if name in kwargs:
            return kwargs[name]
    return None


def _same(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[int, int]:
    """No tensor larger than the largest tensor argument: reductions, element-wise functions of
    one tensor, conversions, reshapes, metadata."""
    free, shapes = _sizes((*args, *kwargs.values()))
    return max((_numel(s) for s in shapes), default=0), free


def _broadcast(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[int, int]:
    """Element-wise functions of several tensors: their shapes broadcast together."""
    free, shapes = _sizes((*args, *kwargs.values()))
    return (_broadcast_numel(shapes) if shapes else 1), free


def _nonzero(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[int, int]:
    """``nonzero``, ``where(cond)``: one index per dimension of each non-zero element; counted
    exactly (one pass, no allocation) when the bound from the shape is too large."""
    x = _arg(args, kwargs, 0, "input", "condition")
    if not isinstance(x, _T):
        return 1, 0  # torch refuses it
    free, _ = _sizes((x,))
    width = max(x.dim(), 1)
    out = x.numel() * width
    if out > max(free, MAX_TENSOR_ITEMS) and width > 1:
        out = int(torch.count_nonzero(x)) * width
    return out, free


def _where(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[int, int]:
    if len(args) + len(kwargs) == 1:
        return _nonzero(args, kwargs)
    return _broadcast(args, kwargs)


def _diff(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[int, int]:
    """``diff``: the input, with ``prepend`` and ``append`` joined to it."""
    x = _arg(args, kwargs, 0, "input")
    extra = [_arg(args, kwargs, 3, "prepend"), _arg(args, kwargs, 4, "append")]
    free, shapes = _sizes((x, *extra))
    return sum(_numel(s) for s in shapes), free


def _view(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[int, int]:
    """``view``: the same elements, or as many of another dtype as fit in the same bytes."""
    x = args[0]
    free, shapes = _sizes((x,))
    dtype = next((a for a in (*args[1:], *kwargs.values()) if isinstance(a, torch.dtype)), None)
    if dtype is None:
        return _numel(shapes[0]), free
    return x.numel() * x.element_size() // max(dtype.itemsize, 1), free


def _size_dims(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if "size" in kwargs:
        return kwargs["size"]
    if len(args) == 1 and isinstance(args[0], list | tuple):
        return args[0]
    return args


def _dims_numel(dims: Any) -> int:
    if not isinstance(dims, list | tuple):
        dims = (dims,)
    count = 1
    for dim in dims:
        count *= max(_index(dim, "a size"), 0)
    return count


def _factory(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[int, int]:
    """``zeros(2, 3)``, ``ones((2, 3))``, ``zeros(size=(t, 3))``: the product of the sizes."""
    return _dims_numel(_size_dims(args, kwargs)), 0


def _full(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[int, int]:
    return _dims_numel(_arg(args, kwargs, 0, "size")), 0


def _number(value: object) -> int | float:
    if isinstance(value, _T):
        if value.numel() != 1:
            raise ExpressionRefused("a range bound is a tensor of more than one element")
        value = value.item()
    if isinstance(value, int | float):
        return value
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        pass
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ExpressionRefused(f"a range bound {_short(value)} is not a number") from None


def _arange(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[int, int]:
    """``arange(end)``, ``arange(start, end[, step])``, by position or name."""
    if len(args) == 1 and "end" not in kwargs:
        bounds = {"start": kwargs.get("start", 0), "end": args[0]}
    else:
        bounds = dict(zip(("start", "end", "step"), args, strict=False))
    for name in ("start", "end", "step"):
        if name in kwargs:
            bounds[name] = kwargs[name]
    if "end" not in bounds:
        return 1, 0  # torch refuses it
    start, end = _number(bounds.get("start", 0)), _number(bounds["end"])
    step = _number(bounds.get("step", 1))
    if step == 0:
        return 1, 0
    if isinstance(start, int) and isinstance(end, int) and isinstance(step, int):
        return max(-((start - end) // step), 0), 0  # the ceiling of (end - start) / step
    span = (end - start) / step
    if not math.isfinite(span):
        raise ExpressionLimit("a range without end")
    return max(math.ceil(span), 0), 0


def _tensor(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[int, int]:
    """``tensor(data)``: the shape torch reads from the data."""
    data = _arg(args, kwargs, 0, "data")
    free, _ = _sizes((data,))
    return _numel(data_shape(data)), free


def _concat(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[int, int]:
    """``cat``, ``stack``: all their tensors' elements."""
    items = _arg(args, kwargs, 0, "tensors")
    if not isinstance(items, list | tuple):
        return 1, 0  # torch refuses it
    if len(items) > MAX_COMBINED_TENSORS:
        raise ExpressionLimit(f"joins {len(items)} tensors, over {MAX_COMBINED_TENSORS}")
    free, shapes = _sizes(items)
    return sum(_numel(s) for s in shapes), free


def _tolist(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[int, int]:
    """``tolist``: a Python object per element; of a tensor the evaluation made, a sequence
    within the item limits."""
    x = args[0]
    if _counted and _is_counted(x):
        if x.numel() > MAX_ITEMS:
            raise ExpressionLimit(f"tolist() of {x.numel()} elements is over {MAX_ITEMS} items")
        _spend(x.numel())
    return 0, 0


_SAME_NAMES = (
    # reductions and element-wise functions of one tensor
    "abs", "all", "any", "amax", "amin", "sum", "prod", "count_nonzero", "cumsum", "isfinite",
    "isnan", "logical_not", "unique", "equal",
    # of the first tensor's size: indices into the second (isin, bucketize, searchsorted)
    "isin", "bucketize", "searchsorted", "zeros_like", "ones_like",
    # conversions, moves and reshapes: as many elements
    "to", "type", "long", "int", "float", "bool", "bfloat16", "cpu", "cuda", "flatten",
    "reshape",
    # metadata: no tensor
    "numel", "dim", "size", "stride", "element_size", "data_ptr", "is_contiguous", "is_pinned",
    "item", "values", "indices", "current_device", "is_available",
)  # fmt: skip
_BROADCAST_NAMES = (
    "eq", "ne", "lt", "le", "gt", "ge", "div", "remainder", "logical_and", "logical_or",
    "clamp", "max", "min", "allclose",
)  # fmt: skip

#: The torch functions (``torch.<name>``, ``torch.cuda.<name>``) and tensor methods an
#: expression may call, each with the rule that computes, before the call, the most elements of
#: a tensor it may make. Anything else torch has is refused (``ExpressionRefused``).
SIZE_RULES: dict[str, Rule] = {
    **dict.fromkeys(_SAME_NAMES, _same),
    **dict.fromkeys(_BROADCAST_NAMES, _broadcast),
    "where": _where,
    "nonzero": _nonzero,
    "diff": _diff,
    "view": _view,
    "zeros": _factory,
    "ones": _factory,
    "full": _full,
    "arange": _arange,
    "tensor": _tensor,
    "cat": _concat,
    "stack": _concat,
    "tolist": _tolist,
}
# Rules whose result is never larger than the method's own tensor when no other tensor is
# passed: a tensor's method called so needs no check while the evaluation has counted nothing.
_SELF_BOUNDED = frozenset({_same, _broadcast, _where, _diff, _tolist})
_TORCH_FUNCTIONS: dict[int, tuple[str, Rule]] = {}
for _owner in (torch, torch.cuda):
    for _name, _rule in SIZE_RULES.items():
        _function = getattr(_owner, _name, None)
        if callable(_function) and not isinstance(_function, type):
            _TORCH_FUNCTIONS[id(_function)] = (f"{_owner.__name__}.{_name}", _rule)


def _torch_name(name: object) -> bool:
    return isinstance(name, str) and (name == "torch" or name.startswith("torch."))


def _torch_tensor(value: object) -> bool:
    return isinstance(value, _T) and _torch_name(type(value).__module__)


def _name_of(func: object) -> str:
    return str(getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or func)


def _refuse(func: object) -> ExpressionRefused:
    return ExpressionRefused(
        f"calls {_name_of(func)}, which is not a method of a tensor, a built-in container "
        "or number, nor a torch function with a size rule"
    )


def _no_functions(func: object, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    for index, value in enumerate((*args, *kwargs.values())):
        if callable(value) and not (func is isinstance and index == 1):
            raise ExpressionRefused(
                f"passes {_name_of(value)} to {_name_of(func)}: functions and methods cannot "
                "be passed as values"
            )


def _torch_call(
    func: Any, what: str, rule: Rule, args: tuple[Any, ...], kwargs: dict[str, Any],
    owner: object = None,
) -> Any:
    """A torch function or tensor method: its size rule first."""
    _no_functions(func, args, kwargs)
    if "out" in kwargs:
        raise ExpressionRefused(f"{what}(out=...) would write into a value")
    out, free = rule(args if owner is None else (owner, *args), kwargs)
    counted = _admit(out, free, what)
    result = func(*args, **kwargs)
    if counted:
        _record(result)
    _tick()
    return result


def _tensor_items(values: Iterable[Any], what: str) -> tuple[int, list[tuple[int, ...]]]:
    """The largest tensor the evaluation did not count and the shapes of all tensors held in
    ``values`` and the lists, tuples and dicts in them (those a comparison or a builtin may
    compare or add pairwise); at most :data:`MAX_COMBINED_TENSORS` of them."""
    free = 0
    shapes: list[tuple[int, ...]] = []
    stack = list(values)
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind in _PLAIN:
            continue
        if isinstance(value, _T):
            shapes.append(tuple(value.shape))
            if not (_counted and _is_counted(value)):
                free = max(free, value.numel())
            if len(shapes) > MAX_COMBINED_TENSORS:
                raise ExpressionLimit(f"{what} of over {MAX_COMBINED_TENSORS} tensors")
        elif kind is list or kind is tuple or kind is dict:
            items = value.values() if kind is dict else value
            if not set(map(type, items)) <= _PLAIN:  # the common case, at C speed
                stack.extend(items)
    return free, shapes


def _pairwise(values: Iterable[Any], what: str) -> bool:
    """Before tensors among ``values`` are compared or added pairwise (broadcasting): whether
    the result is counted."""
    free, shapes = _tensor_items(values, what)
    if not shapes:
        return False
    return _admit(_broadcast_numel(shapes), free, what)


def _builtin_call(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    _no_functions(func, args, kwargs)
    counted = False
    if func is range:
        try:
            ints = tuple(operator.index(a) for a in args)
        except TypeError:
            ints = None  # range() says why
        length = None if ints is None or kwargs else range_length(ints)
        if length is not None and length > MAX_ITEMS:
            raise ExpressionLimit(f"range of {length} items is over {MAX_ITEMS}")
    elif id(func) in _MATERIALIZING and args:
        first = args[0]
        if type(first) is range:
            _spend(len(first))
        elif isinstance(first, _T) and first.dim() and (len(args) == 1 or func is sum):
            limit = MAX_COMBINED_TENSORS if id(func) in _PAIRWISE else MAX_ITERATED_TENSORS
            if len(first) > limit:
                raise ExpressionLimit(
                    f"{func.__name__}() over {len(first)} tensors is over {limit}"
                )
            _spend(len(first))
        if id(func) in _PAIRWISE:
            if len(args) > 1 and func is not sum:  # max(a, b)
                items: tuple[Any, ...] = args
            else:  # max(xs), sum(xs, start)
                items = (*(first if isinstance(first, list | tuple) else ()), *args[1:])
            counted = _pairwise((*items, *kwargs.values()), f"{func.__name__}()")
    if func is sum and (len(args) > 1 or "start" in kwargs):
        start = args[1] if len(args) > 1 else kwargs["start"]
        if isinstance(start, list | tuple | str | bytes):
            raise ExpressionRefused("sum() of sequences is not allowed (it is quadratic)")
    elif func is round and len(args) > 1 and args[1] is not None:
        digits = _index(args[1], "round() digits")
        if abs(digits) > 1000:
            raise ExpressionLimit("round() to more than 1000 digits")
    if (func is abs or func is round) and args and isinstance(args[0], _T):
        free, shapes = _sizes(args[:1])
        counted = _admit(_numel(shapes[0]), free, f"{func.__name__}()")
    result = func(*args, **kwargs)
    if counted:
        _record(result)
    _tick()
    return result


def _hg_call(func: Any, *args: Any, **kwargs: Any) -> Any:
    _tick()
    if id(func) in _SAFE_BUILTIN_IDS:
        return _builtin_call(func, args, kwargs)
    kind = type(func)
    if kind is BuiltinFunctionType:
        owner = func.__self__
        if isinstance(owner, _T):  # a tensor's own C method (``x.max()``, ``m[:, 0].long()``)
            if not _torch_name(type(owner).__module__):
                raise _refuse(func)
            name = func.__name__
            rule = SIZE_RULES.get(name)
            if rule is None:
                raise _refuse(func)
            if (
                rule in _SELF_BOUNDED
                and not kwargs
                and not (_counted and _is_counted(owner))
                and not any(isinstance(a, _T) or callable(a) for a in args)
            ):
                # The common case: nothing larger than the tensor itself, nothing counted yet.
                result = func(*args)
                _tick()
                return result
            return _torch_call(func, f"Tensor.{name}", rule, args, kwargs, owner)
        found = _TORCH_FUNCTIONS.get(id(func))
        if found is not None:
            return _torch_call(func, found[0], found[1], args, kwargs)
        if owner is not None and (
            type(owner) in _SAFE_OWNERS
            or (isinstance(owner, tuple) and _torch_name(type(owner).__module__))  # torch.Size
        ):
            _no_functions(func, args, kwargs)  # list.index, dict.get, Size.numel
            counted = isinstance(owner, list | tuple) and _pairwise(
                (owner, *args), f"{type(owner).__name__}.{func.__name__}()"
            )  # xs.index(t), xs.count(t) compare t with each item
            result = func(*args, **kwargs)
            if counted:
                _record(result)
            _tick()
            return result
        raise _refuse(func)
    if kind is MethodType:  # Python methods of tensors (``x.unique()``)
        owner = func.__self__
        name = getattr(func.__func__, "__name__", "")
        rule = SIZE_RULES.get(name)
        if (
            rule is not None
            and _torch_tensor(owner)
            and getattr(type(owner), name, None) is func.__func__
        ):
            return _torch_call(func, f"Tensor.{name}", rule, args, kwargs, owner)
        raise _refuse(func)
    if kind is FunctionType:
        found = _TORCH_FUNCTIONS.get(id(func))
        if found is not None:
            return _torch_call(func, found[0], found[1], args, kwargs)
    raise _refuse(func)


# -- operators ------------------------------------------------------------------------------


def _operands(left: Any, right: Any, what: str) -> bool:
    """Before a binary operation: whether it makes a tensor the limits count."""
    lt, rt = isinstance(left, _T), isinstance(right, _T)
    if not (lt and rt):
        if not (lt or rt) or not _counted:
            return False  # no tensor, or one and a number: no larger than the tensor
        tensor = left if lt else right
        return _is_counted(tensor) and _admit(tensor.numel(), 0, what)
    if not _counted and left.shape == right.shape:
        return False
    free, shapes = _sizes((left, right))
    return _admit(_broadcast_numel(shapes), free, what)


def _hg_pow(left: Any, right: Any) -> Any:
    _tick()
    counted = _operands(left, right, "**")
    result = bounded_pow(left, right)
    if counted:
        _record(result)
    return result


def _hg_mul(left: Any, right: Any) -> Any:
    _tick()
    counted = _operands(left, right, "*")
    result = bounded_mul(left, right)
    if counted:
        _record(result)
    elif isinstance(result, _SEQUENCES):
        _spend(len(result))
    return result


def _hg_add(left: Any, right: Any) -> Any:
    _tick()
    counted = _operands(left, right, "+")
    result = bounded_add(left, right)
    if counted:
        _record(result)
    elif isinstance(result, _SEQUENCES):
        _spend(len(result))
    return result


def _hg_mod(left: Any, right: Any) -> Any:
    _tick()
    counted = _operands(left, right, "%")
    result = bounded_mod(left, right)
    if counted:
        _record(result)
    return result


_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Sub: operator.sub,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
}
_BINARY_OPS = tuple(_BINARY.values())
_BINARY_SYMBOLS = ("-", "/", "//", "&", "|", "^")
_BINARY_CODES = {kind: code for code, kind in enumerate(_BINARY)}


def _hg_binary(left: Any, right: Any, code: int) -> Any:
    _tick()
    op = _BINARY_OPS[code]
    if _operands(left, right, _BINARY_SYMBOLS[code]):
        result = op(left, right)
        _record(result)
        return result
    return op(left, right)


_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Invert: operator.invert,
}
_UNARY_OPS = tuple(_UNARY.values())
_UNARY_CODES = {kind: code for code, kind in enumerate(_UNARY)}


def _hg_unary(operand: Any, code: int) -> Any:
    op = _UNARY_OPS[code]
    if _counted and isinstance(operand, _T) and _is_counted(operand):
        _tick()
        _admit(operand.numel(), 0, "-+~"[code])
        result = op(operand)
        _record(result)
        return result
    return op(operand)


def _contains(container: Any, item: Any) -> bool:
    return item in container


def _not_contains(container: Any, item: Any) -> bool:
    return item not in container


# Comparisons by code; those from ``_IDENTITY`` on never allocate.
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: _contains(b, a),
    ast.NotIn: lambda a, b: _not_contains(b, a),
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
}
_COMPARE_OPS = tuple(_COMPARE.values())
_COMPARE_CODES = {kind: code for code, kind in enumerate(_COMPARE)}
_IDENTITY = _COMPARE_CODES[ast.Is]


_CONTAINERS = frozenset({list, tuple, dict})
_IN = _COMPARE_CODES[ast.In]


def _hg_cmp(left: Any, right: Any, code: int) -> Any:
    op = _COMPARE_OPS[code]
    lt, rt = type(left), type(right)
    if (lt in _PLAIN and rt in _PLAIN) or code >= _IDENTITY:
        return op(left, right)  # numbers, strings, identity: no tensor
    _tick()
    if lt in _CONTAINERS or rt in _CONTAINERS:
        # lists, tuples and dicts compare item by item, and ``t in xs`` compares t with each
        counted = _pairwise((left, right), "a comparison")
    else:
        counted = _operands(left, right, "a comparison")
        if code >= _IN and rt is range and isinstance(left, _T) and len(right) > (
            MAX_COMBINED_TENSORS
        ):
            raise ExpressionLimit(f"a tensor compared with over {MAX_COMBINED_TENSORS} numbers")
    result = op(left, right)
    if counted:
        _record(result)
    return result


class _Operand:
    """An operand of a chained comparison (``0 <= x.min() <= x.max() < n``): each comparison
    goes through :func:`_hg_cmp`, and later operands are evaluated only when the chain goes on,
    as in Python."""

    __slots__ = ("value",)
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> Any:
        return _hg_cmp(self.value, other.value, 0)  # type: ignore[attr-defined]

    def __ne__(self, other: object) -> Any:
        return _hg_cmp(self.value, other.value, 1)  # type: ignore[attr-defined]

    def __lt__(self, other: _Operand) -> Any:
        return _hg_cmp(self.value, other.value, 2)

    def __le__(self, other: _Operand) -> Any:
        return _hg_cmp(self.value, other.value, 3)

    def __gt__(self, other: _Operand) -> Any:
        return _hg_cmp(self.value, other.value, 4)

    def __ge__(self, other: _Operand) -> Any:
        return _hg_cmp(self.value, other.value, 5)

    def __contains__(self, item: _Operand) -> bool:
        return bool(_hg_cmp(item.value, self.value, 6))


def _hg_chain(left: Any, codes: tuple[int, ...], *rights: Any) -> Any:
    """A chained comparison with ``is`` in it (rare): its operands were all evaluated first."""
    result: Any = True
    for code, right in zip(codes, rights, strict=True):
        result = _hg_cmp(left, right, code)
        if not result:
            return result
        left = right
    return result


_BASIC_INDEX = frozenset({int, bool, slice, type(None), type(Ellipsis)})


def _as_tuple(index: object) -> bool:
    """Whether torch reads a sequence index (``x[[0, 1]]``) as several indices (as numpy did):
    a short one holding a tensor, sequence, slice, ``...`` or ``None``."""
    if isinstance(index, tuple):
        return True
    if isinstance(index, _T) or not _is_sequence(index):
        return False
    if len(index) >= 32:  # type: ignore[arg-type]
        return False
    return any(
        isinstance(item, _T | slice | str | bytes) or item is None or item is Ellipsis
        or _is_sequence(item)
        for item in index  # type: ignore[attr-defined]
    )


def _index_part(part: Any) -> Any:
    """A part of an index; a sequence as the tensor torch makes of it (bool or int64), within
    the limits."""
    kind = type(part)
    if kind in _BASIC_INDEX or isinstance(part, _T) or not (
        kind is list or kind is tuple or kind is range or _is_sequence(part)
    ):
        return part
    n = _numel(data_shape(part))
    _admit(n, 0, "an index")
    tensor = torch.tensor(part) if n else torch.zeros(0, dtype=torch.int64)
    return tensor if tensor.dtype in (torch.bool, torch.uint8, torch.int64) else tensor.long()


def _advanced_numel(shape: tuple[int, ...], parts: tuple[Any, ...]) -> int:
    """Elements of ``x[parts]`` for ``x`` of ``shape``, or more: the index tensors broadcast
    together (a mask as many as its elements), times the dimensions no index consumes (those
    of slices whole)."""
    spans: list[int] = []
    indices: list[tuple[int, ...]] = []
    ellipsis = -1
    for i, part in enumerate(parts):
        if isinstance(part, _T):
            if part.dtype in _MASKS:  # a mask: as many dimensions as it has
                spans.append(part.dim())
                indices.append((part.numel(),))
            else:
                spans.append(1)
                indices.append(tuple(part.shape))
        elif part is None or type(part) is bool:
            spans.append(0)  # a new dimension of size 1 (0 for False)
        elif part is Ellipsis:
            spans.append(0)
            if ellipsis < 0:
                ellipsis = i
        else:
            spans.append(1)  # an int or a slice
    out = _broadcast_numel(indices) if indices else 1
    ndim = len(shape)
    dim = 0
    for i, part in enumerate(parts):
        if i == ellipsis:
            end = ndim - sum(spans[i + 1 :])
            for d in range(dim, end):
                out *= max(shape[d], 0)  # the dimensions ``...`` stands for
            dim = max(dim, end)
        elif type(part) is slice and dim < ndim:
            out *= max(shape[dim], 0)
        dim += spans[i]
    for d in range(dim, ndim):
        out *= max(shape[d], 0)  # dimensions after the last index
    return out


_MASKS = (torch.bool, torch.uint8)


def _hg_item(value: Any, index: Any) -> Any:
    """``value[index]``: for a tensor with a sequence or tensor index, its size first."""
    if not isinstance(value, _T):
        return value[index]
    kind = type(index)
    if kind in _BASIC_INDEX or (kind is tuple and set(map(type, index)) <= _BASIC_INDEX):
        return value[index]  # a view: no larger than the tensor
    _tick()
    shape = tuple(value.shape)
    several = _as_tuple(index)
    parts = tuple(map(_index_part, index)) if several else (_index_part(index),)
    out = _advanced_numel(shape, parts)
    if several and kind is not tuple:
        # torch reads a short list holding sequences or slices as several indices, deprecated
        # for reading it as one index tensor: bounded both ways, and left to torch to read
        with contextlib.suppress(TypeError, ValueError, RuntimeError):  # torch cannot
            out = max(out, _advanced_numel(shape, (_index_part(index),)))
    else:
        index = parts  # the sequences as the tensors torch would make of them, made once
    free, _ = _sizes((value, *parts))
    counted = _admit(out, free, "indexing")
    result = value[index]
    if counted:
        _record(result)
    _tick()
    return result


def _hg_slice(lower: Any, upper: Any, step: Any) -> slice:
    return slice(lower, upper, step)


_GLOBALS: dict[str, Any] = {
    "__builtins__": _SAFE_BUILTINS,
    "_hg_call": _hg_call,
    "_hg_pow": _hg_pow,
    "_hg_mul": _hg_mul,
    "_hg_add": _hg_add,
    "_hg_mod": _hg_mod,
    "_hg_binary": _hg_binary,
    "_hg_unary": _hg_unary,
    "_hg_cmp": _hg_cmp,
    "_hg_chain": _hg_chain,
    "_hg_operand": _Operand,
    "_hg_item": _hg_item,
    "_hg_slice": _hg_slice,
}
_GUARDS: dict[type[ast.operator], str] = {
    ast.Pow: "_hg_pow",
    ast.Mult: "_hg_mul",
    ast.Add: "_hg_add",
    ast.Mod: "_hg_mod",
}


def _call(name: str, *args: ast.expr) -> ast.Call:
    return ast.Call(ast.Name(name, ast.Load()), list(args), [])


class _Guard(ast.NodeTransformer):
    """Rewrite ``a ** b`` as ``_hg_pow(a, b)`` (and the other binary operators), ``-a`` as
    ``_hg_unary(a, code)``, ``a < b`` as ``_hg_cmp(a, b, code)``, ``a[i]`` as ``_hg_item(a, i)``
    and ``f(x, k=y)`` as ``_hg_call(f, x, k=y)``."""

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        guard = _GUARDS.get(type(node.op))
        if guard is not None:
            call = _call(guard, node.left, node.right)
        else:
            code = ast.Constant(_BINARY_CODES[type(node.op)])
            call = _call("_hg_binary", node.left, node.right, code)
        return ast.copy_location(call, node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not) or isinstance(node.operand, ast.Constant):
            return node
        call = _call("_hg_unary", node.operand, ast.Constant(_UNARY_CODES[type(node.op)]))
        return ast.copy_location(call, node)

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        codes = [_COMPARE_CODES[type(op)] for op in node.ops]
        if len(codes) == 1:
            call = _call("_hg_cmp", node.left, node.comparators[0], ast.Constant(codes[0]))
        elif max(codes) >= _IDENTITY:
            consts = ast.Tuple([ast.Constant(c) for c in codes], ast.Load())
            call = _call("_hg_chain", node.left, consts, *node.comparators)
        else:
            return ast.copy_location(
                ast.Compare(
                    _call("_hg_operand", node.left),
                    node.ops,
                    [_call("_hg_operand", c) for c in node.comparators],
                ),
                node,
            )
        return ast.copy_location(call, node)

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        self.generic_visit(node)
        return ast.copy_location(_call("_hg_item", node.value, node.slice), node)

    def visit_Slice(self, node: ast.Slice) -> ast.AST:
        self.generic_visit(node)
        none = ast.Constant(None)
        return ast.copy_location(
            _call("_hg_slice", node.lower or none, node.upper or none, node.step or none), node
        )

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
            return _GLOBALS[key]  # the guards, never shadowed by a field (no exception: fast)
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
        _counted.clear()
        try:
            result = eval(self.code, _GLOBALS, namespace)
            if type(result) is list or type(result) is tuple:
                # a value ``equals`` makes a tensor of: ``[[[0] * 1000] * 1000] * 1000`` is a
                # billion elements from 3,000 items
                n = _numel(data_shape(result))
                if n > MAX_TENSOR_ITEMS:
                    raise ExpressionLimit(
                        f"the value is a sequence of {n} elements, over {MAX_TENSOR_ITEMS}"
                    )
            return result
        except (ExpressionLimit, ExpressionRefused) as exc:
            if not self.where:
                raise
            raise type(exc)(f"{self.where}: {exc}") from None  # a contract error: say where
        finally:
            _counted.clear()

    def __repr__(self) -> str:
        return f"Expression({self.text!r})"
