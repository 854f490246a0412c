"""Fuzzing contract expressions (issue 11, cases 4-6): whatever a contract says, loading it and
evaluating it stay within time and memory bounds, and it never calls a method of the checked
object it was not meant to.

Expressions are drawn from a grammar over the whitelisted syntax with hostile ingredients: huge
literals and values, deep nesting, ``range``/repetition/allocation bombs, methods of the
checked object passed as ``key=``, and (issue 24) dimensions and counts that are tensors or
other ``__index__`` objects in the allocating torch functions and tensor methods the evaluator
allows: factories, ``cat``/``stack`` of repeated fields, broadcasting of a column against a
row, advanced indexing, ``nonzero``, ``view`` to a smaller dtype. The budget is
``HOOKGUARD_FUZZ_EXAMPLES`` (default 150,
derandomized: CI runs the same examples every time); ``benchmarks/fuzz_expressions.py`` runs a
large random budget and reports the worst time and memory seen.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import time
import tracemalloc
from typing import Any

import pytest

pytest.importorskip("hypothesis")
torch = pytest.importorskip("torch")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from hookguard.runtime.expr import MAX_SECONDS, Expression, Namespace  # noqa: E402

EXAMPLES = int(os.environ.get("HOOKGUARD_FUZZ_EXAMPLES", "150"))
RANDOM = os.environ.get("HOOKGUARD_FUZZ_RANDOM") == "1"
REPORT = os.environ.get("HOOKGUARD_FUZZ_REPORT")
# CPU seconds of this process (wall time on a busy machine measures the machine):
LOAD_SECONDS = 1.0  # loading one expression (parse, whitelist, limits, constant folding)
EVAL_SECONDS = MAX_SECONDS + 1.0  # the deadline, plus the one operation that may overrun it
PYTHON_HEAP_MIB = 256  # peak Python allocations while loading and evaluating one expression
RSS_GROWTH_MIB = 1024  # growth of the process's peak RSS over the whole run (torch included)


class Index:
    """A count that is not an int: Python and torch read it through ``__index__``."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __index__(self) -> int:
        return self.n


class Checked:
    """The object a contract checks; its methods must never run from an expression."""

    def __init__(self) -> None:
        self.x = torch.arange(12).reshape(3, 4)
        self.t = torch.tensor(200_000)  # a tensor-valued dimension: t * t is 4e10
        self.i = Index(10**6)
        self.col = torch.ones(100_000, 1)  # broadcast against row: 1e10 elements
        self.row = torch.ones(1, 100_000)
        self.flags = torch.ones(5, dtype=torch.bool)
        self.n = 10**15
        self.k = 40
        self.items = [1, 2, 3]
        self.name = "kv"
        self.table = {"a": 1}
        self.calls: list[str] = []

    def shell(self, *args: Any, **kwargs: Any) -> int:
        self.calls.append("shell")
        return 0

    def _private(self, *args: Any, **kwargs: Any) -> int:
        self.calls.append("_private")
        return 0

    def hook(self, *args: Any, **kwargs: Any) -> int:
        self.calls.append("hook")
        return 0


NAMES = ["x", "flags", "n", "k", "items", "name", "table", "shell", "_private", "hook", "torch",
         "t", "i", "col", "row"]
LITERALS = ["0", "1", "2", "3", "-1", "10", "40", "64", "1000", "10**6", "10**9", "10**15",
            "2**40", "2**64", "10**100", "0.5", "1e308", "'a'", "'%999999999d'", "None", "True",
            "[0]", "[1, 2]", "()", "(1,)", "(t, t)", "[t, i]", "[row] * 1000", "(col, row)",
            "[0] * 100000"]
BUILTINS = ["len", "min", "max", "abs", "all", "any", "sum", "int", "float", "bool", "list",
            "tuple", "range", "sorted", "set", "round", "isinstance"]
METHODS = ["sum", "all", "any", "max", "min", "numel", "tolist", "flatten", "unique",
           "cumsum", "item", "count", "index", "get", "keys", "items", "reshape", "size",
           "to", "long", "eq", "abs", "values", "view", "nonzero", "diff", "clamp", "where",
           "float", "bool", "logical_and", "div", "ge"]
TORCH = ["arange", "zeros", "ones", "full", "tensor", "stack", "cat", "where", "int32",
         "float32", "bool", "nonzero", "clamp", "isin", "zeros_like", "ones_like", "diff",
         "unique", "max", "eq", "logical_or", "allclose", "remainder", "count_nonzero"]
BINARY = ["+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "==", "!=", "<", "<=", ">", ">=",
          " and ", " or ", " in ", " not in ", " is "]

# Well-typed allocations with sizes from the object (tensors, __index__ objects, ints): most are
# over the limits, some within them.
TENSORS = ["x", "flags", "col", "row", "x.flatten()", "torch.arange(k)", "row[0]"]
DIMS = ["t", "i", "k", "n", "1000", "t * t", "2 ** 24", "10**6", "-1", "k * 1000", "t // 4"]
allocations = st.one_of(
    st.tuples(st.sampled_from(["zeros", "ones", "arange"]),
              st.lists(st.sampled_from(DIMS), min_size=1, max_size=3)).map(
        lambda t: f"torch.{t[0]}({', '.join(t[1])})"),
    st.lists(st.sampled_from(DIMS), min_size=1, max_size=3).map(
        lambda dims: f"torch.full(({', '.join(dims)},), 1)"),
    st.tuples(st.sampled_from(["cat", "stack"]), st.sampled_from(TENSORS),
              st.sampled_from(DIMS)).map(lambda t: f"torch.{t[0]}([{t[1]}] * {t[2]})"),
    st.tuples(st.sampled_from(TENSORS), st.sampled_from(["+", "-", "*", "==", "<", "&", "/"]),
              st.sampled_from(TENSORS)).map(lambda t: f"({t[0]}[:, None] {t[1]} {t[2]})"),
    st.tuples(st.sampled_from(TENSORS), st.sampled_from(DIMS)).map(
        lambda t: f"{t[0]}[[0] * {t[1]}]"),
    st.tuples(st.sampled_from(TENSORS), st.sampled_from(
        ["nonzero()", "view(torch.bool)", "unique()", "tolist()", "diff(prepend=row[0])",
         "max(col)", "where(flags[0], row)"])).map(lambda t: f"{t[0]}.{t[1]}"),
)
atoms = st.sampled_from(LITERALS) | st.sampled_from(NAMES) | allocations


def _compound(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    args = st.lists(inner, max_size=3).map(", ".join)
    keyword = st.tuples(st.sampled_from(["key", "default", "start", "dtype", "size", "end",
                                         "min", "prepend", "out"]), inner).map(
        lambda kv: f"{kv[0]}={kv[1]}")
    call_args = st.tuples(args, st.lists(keyword, max_size=1)).map(
        lambda t: ", ".join(filter(None, [t[0], *t[1]])))
    return st.one_of(
        st.tuples(inner, st.sampled_from(BINARY), inner).map(lambda t: f"({t[0]}{t[1]}{t[2]})"),
        st.tuples(st.sampled_from(["-", "not ", "~"]), inner).map(lambda t: f"{t[0]}({t[1]})"),
        st.tuples(st.sampled_from(BUILTINS), call_args).map(lambda t: f"{t[0]}({t[1]})"),
        st.tuples(inner, st.sampled_from(METHODS), call_args).map(
            lambda t: f"({t[0]}).{t[1]}({t[2]})"),
        st.tuples(st.sampled_from(TORCH), call_args).map(lambda t: f"torch.{t[0]}({t[1]})"),
        st.tuples(inner, inner).map(lambda t: f"({t[0]})[{t[1]}]"),
        st.tuples(inner, inner, inner).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})"),
        st.lists(inner, max_size=4).map(lambda items: f"[{', '.join(items)}]"),
    )


expressions = st.recursive(atoms, _compound, max_leaves=24) | st.tuples(
    st.sampled_from(["-", "not ", "(", "[", "abs("]), st.integers(1, 3000)
).map(lambda t: t[0] * t[1] + "1" + {"(": ")", "[": "]", "abs(": ")"}.get(t[0], "") * t[1])

_worst: dict[str, Any] = {"examples": 0, "loaded": 0, "load_s": 0.0, "eval_s": 0.0,
                          "heap_mib": 0.0, "slowest_load": "", "slowest_eval": "", "outcomes": {}}
_rss_start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@settings(max_examples=EXAMPLES, deadline=None, derandomize=not RANDOM,
          suppress_health_check=list(HealthCheck), database=None)
@given(expressions)
def test_any_expression_is_bounded_and_calls_nothing_it_should_not(text: str) -> None:
    obj = Checked()
    gc.disable()  # as in the CLI; a collection of hypothesis's own objects is not the loader's
    tracemalloc.start()
    try:
        # Loading is pure Python in this thread: its CPU time (the process's would count torch's
        # worker threads, still spinning after an earlier example's tensor operation).
        started = time.thread_time()
        try:
            expression = Expression(text)
        except ValueError:
            expression = None
        load_s = time.thread_time() - started
        started = time.process_time()
        if expression is not None:
            # A failing expression is a violation the run reports: only the bounds matter.
            try:
                expression(Namespace({"torch": torch}, obj))
                outcome = "computed"
            except Exception as exc:
                outcome = type(exc).__name__
        eval_s = time.process_time() - started
        heap = tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()
        gc.enable()
    _worst["examples"] += 1
    _worst["loaded"] += expression is not None
    if expression is not None:  # ExpressionLimit, ExpressionRefused, TypeError, computed, ...
        _worst["outcomes"][outcome] = _worst["outcomes"].get(outcome, 0) + 1
    if load_s > _worst["load_s"]:
        _worst["load_s"], _worst["slowest_load"] = load_s, text[:300]
    if eval_s > _worst["eval_s"]:
        _worst["eval_s"], _worst["slowest_eval"] = eval_s, text[:300]
    _worst["heap_mib"] = max(_worst["heap_mib"], heap)
    assert load_s < LOAD_SECONDS, text
    assert eval_s < EVAL_SECONDS, text
    assert heap < PYTHON_HEAP_MIB, text
    assert obj.calls == [], text
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    assert rss - _rss_start < RSS_GROWTH_MIB, text


def test_zz_report_the_worst_case() -> None:
    """Writes what the fuzz run saw (``HOOKGUARD_FUZZ_REPORT``), for the benchmark."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    _worst["rss_growth_mib"] = rss - _rss_start
    if REPORT:
        with open(REPORT, "w") as handle:
            json.dump(_worst, handle, indent=2)
    assert _worst["examples"] >= min(EXAMPLES, 1)
