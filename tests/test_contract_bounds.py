"""Issue 11, cases 4-6: a contract cannot stall hookguard, escape the expression namespace or
crash it. The reader runs in linear time; expressions are bounded in length, depth and size at
load time (a contract error naming file:line) and in the values they compute at run time."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from hookguard.contracts import ContractError, check_expression, load_contracts, parse_contracts

HOOK = '[[hook]]\nclass = "pkg.mod.Base"\nmethod = "setup"\n'


def _invariant(text: str) -> str:
    return HOOK + f"invariants = [{text!r}]\n"


@pytest.mark.parametrize("text", [
    "[" + " " * 12_000 + "\n",  # took minutes: a backtracking header regex
    "x = " + "a" * 12_000 + "\n",  # quadratic inline-key scan
    "[" + "a." * 6_000 + "\n",
    "a" + " . a" * 3_000 + "\n",
    '"' + 'a".' * 4_000 + "\n",
    "x = " + "[" * 12_000 + "\n",  # tomllib recursion
    HOOK + "[hook.fields.x]\n" + "y = { " + "a = 1, " * 2_000 + "}\n",
])
def test_hostile_contract_file_is_read_in_linear_time(text: str, tmp_path: Path) -> None:
    path = tmp_path / "contracts"
    path.mkdir()
    (path / "hostile.toml").write_text(text)
    started = time.perf_counter()
    with pytest.raises(ContractError) as error:
        load_contracts(path)
    assert time.perf_counter() - started < 2.0
    assert str(error.value).startswith(f"{path / 'hostile.toml'}:")
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("text", [
    "10**10**10",
    "2**2**40",
    "sum(range(10**15)) > 0",
    "[0]*(3*10**8)",
    "'a' * 10**9",
    "(10**40) * (10**40)",
    "range(0, 2**62, 1)",
    "len(list(range(2**40))) > 0",
    "[" + ", ".join(["[0]*10**6"] * 5) + "]",  # each allowed, together 5 million
    "('a' * 10) % x",  # '%' formatting: '%0999999999d' % 1 allocates a gigabyte
    "x - 2**300 == 0",
])
def test_literal_bombs_are_contract_errors_at_load_time(text: str) -> None:
    started = time.perf_counter()
    with pytest.raises(ContractError) as error:
        parse_contracts(_invariant(text), "c.toml")
    assert time.perf_counter() - started < 1.0
    assert str(error.value).startswith("c.toml:4: bad invariant:")
    assert "out of bounds" in str(error.value)


@pytest.mark.parametrize("text", [
    "2**10 == 1024",
    "len(self_list) * 2 <= 10**6",
    "sum(range(100)) == 4950",
    "[0] * 4 == [0, 0, 0, 0]",
    "x ** 2 >= 0",
    "max([1, 2], default=0) == 2",
])
def test_ordinary_expressions_still_load(text: str) -> None:
    (contract,) = parse_contracts(_invariant(text), "c.toml")
    assert contract.invariants == (text,)


@pytest.mark.parametrize("text", [
    "-" * 3_000 + "1",
    "(" * 300 + "x" + ")" * 300,  # the parser's own limit: a syntax error
    "x" + " + x" * 600,
    "not " * 100 + "x",
    "a" * 5_000,
    "[" * 100 + "]" * 100,
    "f(" * 100 + ")" * 100,
])
def test_deep_or_huge_expression_is_one_clear_error(text: str) -> None:
    """Case 6: a deeply nested expression crashed the load with RecursionError."""
    with pytest.raises(ContractError) as error:
        parse_contracts(_invariant(text), "c.toml")
    message = str(error.value)
    assert message.startswith("c.toml:4: bad invariant:"), message
    assert len(message) < 400


def test_deep_shape_dimension_is_one_clear_error() -> None:
    text = HOOK + '[hook.fields.x]\nshape = ["' + "-" * 3_000 + 'n"]\n'
    with pytest.raises(ContractError) as error:
        parse_contracts(text, "c.toml")
    assert str(error.value).startswith("c.toml:5:")


@pytest.mark.parametrize("dim", ["2**2**40", "n**k", "2**n", "n**65", "2**(1+1)"])
def test_dimension_powers_need_a_small_literal_exponent(dim: str) -> None:
    with pytest.raises(ValueError, match="power"):
        check_expression(dim, dimension=True)


@pytest.mark.parametrize("dim", ["n**2", "2**10 * n", "n * m // 2"])
def test_dimension_powers_within_bounds_load(dim: str) -> None:
    check_expression(dim, dimension=True)


@pytest.mark.parametrize("target", ["/dev/zero", "fifo"])
def test_contract_file_that_never_ends_is_one_error(target: str, tmp_path: Path) -> None:
    """A committed link to /dev/zero, or a FIFO, used to be read forever."""
    import os

    path = tmp_path / "contracts"
    path.mkdir()
    if target == "fifo":
        os.mkfifo(path / "a.toml")
    else:
        (path / "a.toml").symlink_to(target)
    started = time.perf_counter()
    with pytest.raises(ContractError) as error:
        load_contracts(path / "a.toml")
    assert time.perf_counter() - started < 2.0
    assert "not a regular file" in str(error.value)


def test_huge_contract_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.toml"
    path.write_text(HOOK + "# padding\n" * 500_000)
    with pytest.raises(ContractError, match="over 4194304 bytes"):
        load_contracts(path)
