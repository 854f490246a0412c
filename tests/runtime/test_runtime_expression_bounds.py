"""Issue 11, cases 4 and 5 at run time: a contract expression cannot call methods of the checked
object (``key=shell``, ``key=hook``), nor hang or exhaust memory on values it reads from it."""

from __future__ import annotations

import time
from typing import Any

import pytest
import torch

from hookguard.contracts import ContractError, parse_contracts
from hookguard.runtime import verify
from hookguard.runtime.expr import Expression, ExpressionLimit, ExpressionRefused, Namespace


class Manager:
    def __init__(self) -> None:
        self.calls: list[str] = []
        self.n = 10**15
        self.million = 10**6
        self.pages = torch.arange(6)

    def shell(self, *args: Any) -> str:
        self.calls.append("shell")
        return "a"

    def _private(self, *args: Any) -> str:
        self.calls.append("_private")
        return "a"

    def setup(self, *args: Any) -> str:
        self.calls.append("setup")
        return "a"


Manager.__module__, Manager.__qualname__ = "pkg.mod", "Manager"


def _contract(invariant: str) -> str:
    return (f'[[hook]]\nclass = "pkg.mod.Manager"\nmethod = "setup"\n'
            f"invariants = [{invariant!r}]\n")


@pytest.mark.parametrize("invariant", [
    "min(['a'], key=shell) == 'a'",
    "max(['a'], key=_private) == 'a'",
    "sorted(['a'], key=setup) == ['a']",  # the hook itself: re-entered the hook
    "min(['a'], default=0, key=shell) == 'a'",
])
def test_methods_of_the_object_are_never_called_through_arguments(invariant: str) -> None:
    obj = Manager()
    (violation,) = verify(obj, parse_contracts(_contract(invariant), "c.toml"), values=True)
    assert obj.calls == []
    assert "ExpressionRefused" in violation.actual and "cannot be passed" in violation.actual


@pytest.mark.parametrize("invariant", [
    "sum(range(n)) > 0",
    "len([0] * n) > 0",
    "2 ** n > 0",
    "torch.arange(n).numel() > 0",
    "torch.zeros(n, n).numel() > 0",
    "len('a' * n) > 0",
    "len([[0] * million, [0] * million, [0] * million, [0] * million, [0] * million]) == 5",
    "torch.zeros(million * 16).numel() + torch.zeros(million * 16).numel() "
    "+ torch.zeros(million * 16).numel() + torch.zeros(million * 16).numel() "
    "+ torch.zeros(million * 16).numel() > 0",
])
def test_values_read_from_the_object_cannot_hang_or_exhaust_memory(invariant: str) -> None:
    obj = Manager()
    started = time.perf_counter()
    (violation,) = verify(obj, parse_contracts(_contract(invariant), "c.toml"), values=True)
    assert time.perf_counter() - started < 2.0
    assert "ExpressionLimit" in violation.actual
    assert "c.toml:4: " in violation.actual  # the contract error names the invariant's line


def test_shape_dimension_bomb_is_a_contract_error_not_a_hang() -> None:
    """Case 4: ``2**2**40`` as a shape dimension hung enforcement in metadata mode."""
    text = ('[[hook]]\nclass = "pkg.mod.Manager"\nmethod = "setup"\n'
            '[hook.fields.pages]\nshape = ["2**2**40"]\n')
    started = time.perf_counter()
    with pytest.raises(ContractError) as error:
        parse_contracts(text, "c.toml")
    assert time.perf_counter() - started < 1.0
    assert str(error.value).startswith("c.toml:5:")


def test_guarded_expressions_still_compute() -> None:
    obj = Manager()
    namespace = Namespace({"torch": torch}, obj)
    assert bool(Expression("pages.sum() == 15")(namespace))
    assert Expression("sum(range(10)) * 2 ** 3 + 7 % 4")(namespace) == 363
    assert Expression("sorted([3, 1, 2]) == [1, 2, 3]")(namespace)
    assert Expression("isinstance(n, int) and len(pages.tolist()) == 6")(namespace)
    assert Expression("torch.arange(6).eq(pages).all()")(namespace)
    with pytest.raises(ExpressionRefused):
        Expression("len([1], key=shell)")(namespace)
    with pytest.raises(ExpressionLimit):
        Expression("[0] * n")(namespace)


def test_tensor_methods_take_the_fast_path_and_functions_are_still_refused() -> None:
    """``x.max()`` and friends skip the generic checks; a function passed to one still fails."""
    names = Namespace({"x": torch.arange(6).reshape(2, 3)})
    assert Expression("x[:, 0].long().max() < x.shape[0] * 3")(names)
    with pytest.raises(ExpressionRefused):
        Expression("x.max(abs)")(names)
    with pytest.raises(ExpressionRefused):
        Expression("x.sum(dim=abs)")(names)
