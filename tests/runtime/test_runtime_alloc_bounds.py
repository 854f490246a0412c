"""Issue 24, item 6 at run time: the evaluator's dimension and allocation bounds hold for
tensor-valued dimensions (and anything with ``__index__``) and for every allocating operation an
expression may run: each torch function and tensor method it may call has a size rule, computed
before the call, and operators, comparisons and subscripts on tensors are bounded the same way.

The hostile expressions run in a child process whose address space is capped at 3 GiB: each
would allocate from 1.6 GB to terabytes if the bound were computed after the call (or not at
all), so a guard that let one through fails with torch's allocation error, not an
``ExpressionLimit``, and cannot take the machine down. The child also reports its peak RSS.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
import torch

from hookguard.contracts import EXPR_ATTRIBUTES, check_expression
from hookguard.runtime.expr import (
    _SAFE_BUILTINS,
    _TORCH_FUNCTIONS,
    MAX_TENSOR_ITEMS,
    SIZE_RULES,
    Expression,
    ExpressionLimit,
    ExpressionRefused,
    Namespace,
)

ROOT = Path(__file__).resolve().parents[2]

# The object the hostile expressions read: small values that make huge tensors.
OBJECT = """
import torch

class Index:
    def __init__(self, n):
        self.n = n

    def __index__(self):
        return self.n


class Count(int):
    pass


class Checked:
    def __init__(self):
        self.t = torch.tensor(200_000)          # a 0-d integer tensor: a tensor-valued dimension
        self.big = torch.tensor(10**6)
        self.half = torch.tensor(0.5)
        self.i = Index(10**6)                   # anything with __index__ (numpy integers too)
        self.c = Count(10**6)                   # an int subclass (an IntEnum field)
        self.neg = Index(-10**9)
        self.huge = Index(10**10)
        self.x = torch.arange(100_000)
        self.row = torch.ones(1, 100_000)
        self.col = torch.ones(100_000, 1)
"""

# Each makes (or would make) far more than MAX_TENSOR_ITEMS elements, or more items than the
# sequence limits, before the operation that the guard refuses has run.
HOSTILE = [
    # the three of issue 24: a tensor dimension, cat, arange of a tensor
    "torch.zeros(t, 20000).numel() > 0",  # 4e9 elements, 16 GB
    "torch.cat([x] * 100000).numel() > 0",  # 1e10
    "torch.cat([row, row, row, row, row] * 100).numel() > 0",  # 5e7
    "torch.arange(t * t).numel() > 0",  # 4e10
    # every size form and integer kind
    "torch.zeros((t, t)).numel() > 0",
    "torch.zeros(size=(t, t)).numel() > 0",
    "torch.zeros([t, big]).numel() > 0",
    "torch.ones(i, i).numel() > 0",
    "torch.ones(c, c).numel() > 0",
    "torch.ones(torch.tensor([200000]), t).numel() > 0",
    "torch.full((t, t), 1).numel() > 0",
    "torch.full(size=(i, 100), fill_value=1).numel() > 0",
    "torch.arange(big * big).numel() > 0",
    "torch.arange(end=t * t).numel() > 0",
    "torch.arange(0, t, half * 1e-6).numel() > 0",
    "torch.arange(0, 1, 1e-12).numel() > 0",
    "torch.tensor([[[0] * 1000] * 1000] * 1000).numel() > 0",  # 1e9 from 3,000 items
    "torch.tensor(range(t * t)).numel() > 0",
    "torch.stack([x] * 100000).numel() > 0",
    "torch.stack((col,) * 1000).numel() > 0",
    # broadcasting, by every operator, comparison and element-wise function
    "(col + row).sum() > 0",
    "(col - row).sum() > 0",
    "(col * row).sum() > 0",
    "(col / row).sum() > 0",
    "(col // row).sum() > 0",
    "(col % row).sum() > 0",
    "(col ** row).sum() > 0",
    "(col.bool() & row.bool()).sum() > 0",
    "(col.bool() | row.bool()).sum() > 0",
    "(col.bool() ^ row.bool()).sum() > 0",
    "(col == row).sum() > 0",
    "(col < row).sum() > 0",
    "0 <= (col >= row).sum() < 1",
    "col.max(row).sum() > 0",
    "col.eq(row).sum() > 0",
    "col.div(row).sum() > 0",
    "torch.where(col > 0, col, row).sum() > 0",
    "torch.clamp(col, min=row).sum() > 0",
    "torch.logical_and(col, row).sum() > 0",
    "torch.allclose(col, row)",
    "col in row",
    # Python containers and builtins compare or add tensors pairwise
    "[col] == [row]",
    "col in [row]",
    "max(col, row) is not None",
    "sum([col, row]).sum() > 0",
    "sorted([col, row]) is not None",
    "[row].index(col) >= 0",
    "(row,).count(col) >= 0",
    # advanced indexing grows
    "row[[0] * 1000000].sum() > 0",
    "row[[0] * 100000, :].sum() > 0",
    "row[torch.zeros(100000, dtype=torch.long)].sum() > 0",
    "col[:, [0] * 1000000].sum() > 0",
    # nonzero of a dense tensor has one index per dimension of each element
    "torch.ones(4096, 4096).nonzero().numel() >= 0",
    "torch.zeros(2 ** 21, dtype=torch.complex128).view(torch.bool).numel() > 0",  # 16 x
    # what the evaluation made is counted, and so is everything made from it
    "(torch.zeros(4096, 4096) + 0, torch.zeros(4096, 4096) + 0, -torch.zeros(4096, 4096), "
    "torch.zeros(4096, 4096).long(), torch.zeros(4096, 4096).abs()) is not None",
    "torch.zeros(4000, 4000).sum() + torch.zeros(4000, 4000).sum() + torch.zeros(4000, 4000)"
    ".sum() + torch.zeros(4000, 4000).sum() + torch.zeros(4000, 4000).sum() > 0",
    # sequences and ranges repeated by counts of any integer kind
    "len([0] * t * t) > 0",
    "len([0] * big * big) > 0",
    "len('a' * huge) > 0",
    "len([0] * huge) > 0",
    "len((0,) * c * c) > 0",
    "len(list(range(t * t))) > 0",
    "c ** c > 0",
    "round(5, neg) == 0",
    # iterating a tensor one element at a time
    "sorted(x) is not None",
    "sum(x) > 0",
    "len(list(torch.arange(t))) > 0",  # 200,000 tensor objects
    # a value that ``equals`` would make a tensor of
    "[[[0] * 1000] * 1000] * 1000",
]

CHILD = textwrap.dedent("""
    import json, os, resource, sys, time
    import torch
    # 3 GiB of address space beyond what torch itself maps (a CUDA build maps many GiB of it
    # when imported, so a limit set before the import would stop the import, not the test)
    mapped = int(open("/proc/self/statm").read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    resource.setrlimit(resource.RLIMIT_AS, (mapped + (3 << 30), mapped + (3 << 30)))
    from hookguard.runtime.expr import Expression, Namespace
    exec(sys.argv[1])
    out = []
    for text in json.loads(sys.argv[2]):
        started = time.perf_counter()
        try:
            Expression(text)(Namespace({"torch": torch}, Checked()))
            error = ["", ""]
        except Exception as exc:
            error = [type(exc).__name__, str(exc)]
        out.append([text, *error, time.perf_counter() - started])
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"results": out, "rss_mib": rss}))
""")


@pytest.fixture(scope="module")
def hostile_run() -> dict[str, Any]:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, OBJECT, json.dumps(HOSTILE)],
        capture_output=True, text=True, timeout=300, cwd=ROOT, env=env, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize("index", range(len(HOSTILE)), ids=[t[:60] for t in HOSTILE])
def test_hostile_expression_is_refused_before_it_allocates(
    hostile_run: dict[str, Any], index: int
) -> None:
    text, kind, message, seconds = hostile_run["results"][index]
    assert text == HOSTILE[index]
    assert kind == "ExpressionLimit", f"{text}: {kind}: {message}"
    assert seconds < 1.5, text


def test_the_hostile_run_stays_small(hostile_run: dict[str, Any]) -> None:
    """All of them in one process: the peak RSS is torch's own plus the few tensors within the
    limits that the cumulative cases made (4 x 2**24 float32 elements: 256 MiB)."""
    assert hostile_run["rss_mib"] < 1024


# -- what stays allowed ---------------------------------------------------------------------


class Index:
    def __init__(self, n: int) -> None:
        self.n = n

    def __index__(self) -> int:
        return self.n


def _eval(text: str, **names: Any) -> Any:
    return Expression(text)(Namespace({"torch": torch, **names}))


@pytest.mark.parametrize(("text", "expected"), [
    ("torch.zeros(t, 3).shape == (2, 3)", True),
    ("torch.zeros((t, 3)).shape == (2, 3)", True),
    ("torch.zeros(size=(t, i)).shape == (2, 4)", True),
    ("torch.ones(torch.tensor([2]), 2).sum() == 4", True),
    ("torch.full((t, i), 7).sum() == 56", True),
    ("torch.full(size=(i,), fill_value=1).sum() == 4", True),
    ("torch.arange(t).tolist() == [0, 1]", True),
    ("torch.arange(end=t + 2).tolist() == [0, 1, 2, 3]", True),
    ("torch.arange(1, t + 2, 2).tolist() == [1, 3]", True),
    ("torch.arange(0, 1, 0.25).numel() == 4", True),
    ("torch.arange(t * 0.5).tolist() == [0.0]", True),
    ("torch.tensor([[1, 2], [3, 4]]).sum() == 10", True),
    ("torch.cat([v, v]).numel() == 8", True),
    ("torch.stack((v, v, v)).shape == (3, 4)", True),
    ("torch.where(v > 1)[0].tolist() == [2, 3]", True),
    ("v.nonzero().flatten().tolist() == [1, 2, 3]", True),
    ("len([0] * t) == 2 and len('ab' * i) == 8", True),
    ("list(range(i)) == [0, 1, 2, 3]", True),
    ("round(1234, -t) == 1200", True),
    ("(v[:, None] == v).sum() == 4", True),
    ("v[[0, 0, 1]].tolist() == [0.0, 0.0, 1.0]", True),
    ("m[[0, 1], [1, 0]].tolist() == [1, 2]", True),
    ("m[m > 1].tolist() == [2, 3]", True),
    ("m[None, [True, False]].shape == (1, 1, 2)", True),
    ("0 <= v.min() <= v.max() < 4", True),
    ("0 <= v.min() < -1", False),
    ("1 in v and 7 not in v", True),
    ("sorted([3, 1, 2]) == [1, 2, 3] and max(v.tolist()) == 3.0", True),
])  # fmt: skip
def test_bounded_calls_still_compute(text: str, expected: bool) -> None:
    v = torch.arange(4.0)
    m = torch.arange(4).reshape(2, 2)
    assert bool(_eval(text, t=torch.tensor(2), i=Index(4), v=v, m=m)) is expected


def test_tensors_no_larger_than_the_objects_are_not_limited() -> None:
    """The limits are on what an expression makes, not on the object: element-wise work on a
    field of more than MAX_TENSOR_ITEMS elements still runs, and what is computed from it too."""
    big = torch.zeros(MAX_TENSOR_ITEMS + 7, dtype=torch.uint8)
    assert bool(_eval("(big + 1 > 0).all() and (big == big).all() and big[big != 0].numel() == 0",
                      big=big))
    assert bool(_eval("torch.cat([big]).numel() == big.numel()", big=big))
    with pytest.raises(ExpressionLimit, match=r"torch\.cat"):
        _eval("torch.cat([big, big]).numel() > 0", big=big)  # twice the field: made, so limited


def test_nonzero_is_counted_exactly_when_the_shape_bound_is_too_large() -> None:
    sparse = torch.zeros(4096, 4097, dtype=torch.bool)  # 2 x 16.8M indices at most: too many
    sparse[1, 2] = sparse[4000, 7] = True
    assert _eval("sparse.nonzero().tolist()", sparse=sparse) == [[1, 2], [4000, 7]]
    assert _eval("len(torch.where(sparse)[0])", sparse=sparse) == 2


def test_methods_of_torch_modules_and_out_arguments_are_refused() -> None:
    """``proj.bfloat16()`` on a field holding a torch module converted its parameters before:
    only tensors' methods with a size rule are called. ``out=`` would write into a value."""

    class Model:
        def __init__(self) -> None:
            self.proj = torch.nn.Linear(2, 2)

    model = Model()
    with pytest.raises(ExpressionRefused, match=r"Module\.bfloat16"):
        Expression("proj.bfloat16() is not None")(Namespace({"torch": torch}, model))
    assert model.proj.weight.dtype == torch.float32
    with pytest.raises(ExpressionRefused, match="out="):
        _eval("torch.abs(v, out=v)", v=torch.ones(2))
    with pytest.raises(ExpressionRefused):
        _eval("v.index(0, 0)", v=torch.ones(2))  # torch.Tensor.index: first-class dims


def test_every_whitelisted_torch_callable_has_a_size_rule() -> None:
    """The load-time attribute whitelist and the run-time size rules agree: a torch function or
    tensor method an expression can name is either bounded by a rule or refused at run time."""
    refused = {"index"}  # Tensor.index (functorch dims): not a rule, refused
    for name in EXPR_ATTRIBUTES:
        for owner in (torch, torch.cuda):
            function = getattr(owner, name, None)
            if callable(function) and not isinstance(function, type):
                assert id(function) in _TORCH_FUNCTIONS, f"{owner.__name__}.{name}"
        if callable(getattr(torch.Tensor, name, None)):
            assert name in SIZE_RULES or name in refused, f"Tensor.{name}"
    assert set(SIZE_RULES) <= EXPR_ATTRIBUTES  # no rule for a name a contract cannot write


def test_guards_do_not_change_what_an_expression_computes() -> None:
    """The guarded code against the same tree compiled plainly, on values within the limits:
    chained comparisons (evaluated lazily), subscripts, slices, sequence indices."""
    names = {"v": torch.arange(4.0), "m": torch.arange(6).reshape(2, 3), "t": torch.tensor(2),
             "xs": [1, 2, 3], "torch": torch}
    texts = [
        "0 <= v.min() <= v.max() < 4", "1 < 0 < missing", "v[1:3].tolist()", "m[:, ::2]",
        "m[[0, 1], [2, 0]]", "m[[[0, 1], [1, 0]]]", "m[(0, 1),]", "m[None, 0]",
        "m[m > 2]", "xs[t]", "xs[1:][::-1]", "-v + ~m[0]", "(v - 1) / 2 // 1 % 3",
        "m & 3 | 4 ^ 1", "[v.sum()] == [v.sum()]", "2 in xs", "v in [v]", "t is not None",
        "1 < 2 is not None",
    ]
    for text in texts:
        plain = compile(check_expression(text), "<plain>", "eval")
        try:
            want: Any = eval(plain, {"__builtins__": _SAFE_BUILTINS}, Namespace(names))
        except Exception as exc:
            want = type(exc)
        try:
            got: Any = Expression(text)(Namespace(names))
        except Exception as exc:
            got = type(exc)
        if isinstance(want, torch.Tensor):
            assert isinstance(got, torch.Tensor) and torch.equal(got, want), text
        else:
            assert got == want, text


def test_a_guard_error_names_the_contract_line() -> None:
    from hookguard.contracts import parse_contracts
    from hookguard.runtime import verify

    class Manager:
        def __init__(self) -> None:
            self.t = torch.tensor(MAX_TENSOR_ITEMS + 1)  # one element over: 64 MiB if it ran

        def setup(self) -> None:
            pass

    Manager.__module__, Manager.__qualname__ = "pkg.mod", "Manager"
    text = ('[[hook]]\nclass = "pkg.mod.Manager"\nmethod = "setup"\n'
            'invariants = ["torch.zeros(t, 1).numel() > 0"]\n')
    started = time.perf_counter()
    (violation,) = verify(Manager(), parse_contracts(text, "c.toml"), values=True)
    assert time.perf_counter() - started < 2.0
    assert "ExpressionLimit" in violation.actual and "c.toml:4: " in violation.actual


def test_numpy_integers_and_arrays_are_read_as_torch_reads_them() -> None:
    np = pytest.importorskip("numpy")
    assert _eval("torch.zeros(n, 3).shape == (2, 3)", n=np.int64(2))
    assert _eval("torch.tensor(a).numel() == 6", a=np.zeros((2, 3)))
    with pytest.raises(ExpressionLimit):
        _eval("torch.zeros(n, n).numel() > 0", n=np.int64(200_000))
    with pytest.raises(ExpressionLimit):
        _eval("len([0] * n) > 0", n=np.int64(10**7))


def test_an_equals_value_is_bounded_before_it_becomes_a_tensor() -> None:
    """``equals`` makes a tensor of its value to compare: a nested list of shared rows is a
    billion elements from 3,000 items."""
    from hookguard.contracts import parse_contracts
    from hookguard.runtime import verify

    class Holder:
        def __init__(self) -> None:
            self.pos = torch.zeros(3)

        def setup(self) -> None:
            pass

    Holder.__module__, Holder.__qualname__ = "pkg.mod", "Holder"
    text = ('[[hook]]\nclass = "pkg.mod.Holder"\nmethod = "setup"\n[hook.fields.pos]\n'
            'equals = "[[[0] * 1000] * 1000] * 1000"\n')
    (violation,) = verify(Holder(), parse_contracts(text, "c.toml"), values=True)
    assert "ExpressionLimit" in violation.actual
