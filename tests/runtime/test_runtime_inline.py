"""Contract expressions written inline into generated checks, against the exact checker.

``hookguard.runtime.inline`` writes an expression as plain Python when every operation in it is
one the evaluator's guards never refuse, under run-time conditions (exact tensors, int names,
the allocation limit) that make it compute what the evaluator would; otherwise the generated
check calls the evaluator. These tests hold the generated verdict to the exact checker's on
expressions of both kinds, on objects that pass and fail them, and on objects that break the
conditions (a tensor subclass, a float size, an argument named ``torch``, a size over the limit).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import torch

from hookguard.contracts import parse_contracts
from hookguard.runtime.checks import CompiledContract
from hookguard.runtime.codegen import FastCheck, generate
from hookguard.runtime.expr import MAX_TENSOR_ITEMS
from hookguard.runtime.inline import MEMO_ENTRIES, MEMO_ITEMS, inline


class Pools:
    def hook(self, n: int) -> None:
        pass


Pools.__module__, Pools.__qualname__ = "inline_props", "Pools"

FIELDS = """
[hook.fields.p]
dtype = "int64"
shape = ["P", 2]
[hook.fields.m]
dtype = "int32"
shape = ["L", 2]
[hook.fields.pos]
dtype = "int32"
[hook.fields.k]
type = "int"
"""

# Each is inlined (asserted below); values that make each true and false are among SAMPLES.
INLINED = [
    "m[:, 0].max() < p.shape[0]",
    "(p[m[:, 0].long(), 0] != 0).all()",
    "(p[:, 1] == 0).all()",
    "p[-1, 0] >= 0",
    "((m >= 0) & (m < 4)).all()",
    "~(m < 0).any()",
    "m.numel() == 8 and p.ndim == 2",
    "p.dtype == torch.int64",
    "m[1:3, ::2].sum() >= 0",
    "m.float().abs().amax() <= 2.5",
    "pos.count_nonzero() > 0",
    "pos.tolist() == m[:, 1].tolist()",
    "m[0, 0].item() < k",
    "(pos == torch.arange(n, dtype=torch.int32, device=pos.device)).all()",
    "(pos[:2] == torch.arange(2, dtype=torch.int32, device='cpu')).all()",
    "torch.arange(k).sum() == 3",
]
# The evaluator's: a call with arguments, a builtin, a growing operation, an allocation other
# than arange, two tensor indices, an arange of a computed size.
EVALUATED = [
    "m.min(0).values.min() >= 0",
    "len(pos) == n",
    "(p + 1 > 0).all()",
    "torch.zeros(k).sum() == k - 3",
    "(p[m[:, 0].long(), m[:, 0].long() * 0] != 0).all()",
    "torch.arange(k + 1).sum() > 0",
]


def pools(**values: Any) -> Pools:
    obj = Pools()
    obj.p = torch.tensor([[5, 0], [7, 0], [9, 0]])
    obj.m = torch.tensor([[0, 0], [1, 1], [2, 2], [0, 3]], dtype=torch.int32)
    obj.pos = torch.arange(4, dtype=torch.int32)
    obj.k = 3
    for key, value in values.items():
        setattr(obj, key, value)
    return obj


SAMPLES: dict[str, Pools] = {
    "conforms": pools(),
    "pool id past the table": pools(m=torch.tensor([[3, 0]] * 4, dtype=torch.int32)),
    "a used pool at address 0": pools(p=torch.tensor([[0, 0], [7, 0], [9, 0]])),
    "column 1 set": pools(p=torch.tensor([[5, 1], [7, 0], [9, 0]])),
    "negative ids": pools(m=torch.tensor([[0, -1], [1, 1], [-2, 2], [0, 3]], dtype=torch.int32)),
    "three layers": pools(m=torch.tensor([[0, 0], [1, 1], [2, 2]], dtype=torch.int32)),
    "three positions": pools(pos=torch.arange(3, dtype=torch.int32)),
    "positions shuffled": pools(pos=torch.tensor([1, 0, 2, 3], dtype=torch.int32)),
    "positions all zero": pools(pos=torch.zeros(4, dtype=torch.int32)),
    "k too small": pools(k=0),
    "last address negative": pools(p=torch.tensor([[5, 0], [7, 0], [-9, 0]])),
}


def contract_for(text: str, *, equals: bool = False) -> CompiledContract:
    if equals:
        body = FIELDS.replace(
            "[hook.fields.pos]\n", f"[hook.fields.pos]\nequals = {json.dumps(text)}\n"
        )
        invariants = "[]"
    else:
        body, invariants = FIELDS, json.dumps([text])
    (contract,) = parse_contracts(
        f'[[hook]]\nclass = "inline_props.Pools"\nmethod = "hook"\ninvariants = {invariants}\n'
        + body
    )
    return CompiledContract(contract)


def fast_for(compiled: CompiledContract, params: tuple[str, ...] = ("n",)) -> FastCheck:
    fast = generate(compiled, Pools, Pools, params, {})
    assert fast is not None
    return fast


def verdicts(compiled: CompiledContract, fast: FastCheck, obj: Pools, n: int) -> tuple[bool, bool]:
    generated = fast.full(obj, (n,))
    exact = compiled.check(obj, {"n": n}, values=True)
    assert generated == (exact == []), exact
    return generated, exact == []


def is_inlined(text: str) -> bool:
    compiled = contract_for(text)
    tensors = {"p": "f_0", "m": "f_1", "pos": "f_2"}
    return inline(compiled.invariants[0], tensors, lambda prefix, value: "_c", "0") is not None


@pytest.mark.parametrize("text", INLINED + EVALUATED)
def test_generated_verdict_is_the_exact_checkers_on_every_sample(text: str) -> None:
    assert is_inlined(text) is (text in INLINED)
    compiled = contract_for(text)
    fast = fast_for(compiled)
    outcomes = {verdicts(compiled, fast, obj, 4)[0] for obj in SAMPLES.values()}
    assert outcomes == {True, False} or text in ("p.dtype == torch.int64",)


def test_inlined_expressions_keep_the_evaluator_only_as_their_fallback() -> None:
    for text in INLINED:
        fast = fast_for(contract_for(text))
        assert "elif _invariant_bad(" in fast.source, text
        assert "    if _invariant_bad(" not in fast.source, text
    for text in EVALUATED:
        assert "    if _invariant_bad(" in fast_for(contract_for(text)).source, text


@pytest.mark.parametrize("case", ["tensor subclass", "float size", "bool size", "over the limit"])
def test_broken_conditions_fall_back_to_the_evaluator(case: str) -> None:
    text = "(pos == torch.arange(n, dtype=torch.int32, device=pos.device)).all()"
    compiled = contract_for(text)
    fast = fast_for(compiled)
    obj, n = pools(), 4
    if case == "tensor subclass":

        class Marked(torch.Tensor):
            pass

        obj.pos = torch.arange(4, dtype=torch.int32).as_subclass(Marked)
    n = {"float size": 4.0, "bool size": True, "over the limit": MAX_TENSOR_ITEMS + 1}.get(case, n)
    verdicts(compiled, fast, obj, n)  # over the limit: refused by the evaluator, never allocated


def test_an_argument_named_torch_is_what_the_expression_sees() -> None:
    text = "(pos == torch.arange(n, dtype=torch.int32, device=pos.device)).all()"
    assert is_inlined(text)
    compiled = contract_for(text)
    fast = fast_for(compiled, ("n", "torch"))
    exact = compiled.check(pools(), {"n": 4, "torch": 7}, values=True)
    assert [v.kind for v in exact] == ["invariant"] and "AttributeError" in exact[0].actual
    assert fast.full(pools(), (4, 7)) is False
    assert fast.full(pools(), (4,)) is True


def test_arange_results_are_kept_per_size_and_device_and_stay_exact() -> None:
    text = "torch.arange(n, dtype=torch.int32, device=pos.device)"
    compiled = contract_for(text, equals=True)
    fast = fast_for(compiled)
    memos = [
        v for k, v in fast.full.__globals__.items() if isinstance(v, dict) and k[:5] == "_memo"
    ]
    assert len(memos) == 1 and memos[0] == {}
    big = MEMO_ITEMS + 1  # computed and compared, not kept
    assert verdicts(compiled, fast, pools(pos=torch.arange(big, dtype=torch.int32)), big)[0]
    assert memos[0] == {}
    for n in [3, 4, 5, 3, 6, 7, 8, 9, 10, 11, 12, 4]:
        good = pools(pos=torch.arange(n, dtype=torch.int32))
        assert verdicts(compiled, fast, good, n) == (True, True)
        bad = pools(pos=torch.arange(n, dtype=torch.int32).flip(0))
        assert verdicts(compiled, fast, bad, n) == (False, False)
        assert verdicts(compiled, fast, good, n + 1) == (False, False)  # another size, key
    assert len(memos[0]) == MEMO_ENTRIES
    for (size, device), kept in memos[0].items():  # only ever read
        assert torch.equal(kept, torch.arange(size, dtype=torch.int32, device=device))


def test_a_method_shadowed_on_the_tensor_is_the_evaluators_to_judge() -> None:
    text = "m.max() < 4"
    assert is_inlined(text)
    compiled = contract_for(text)
    fast = fast_for(compiled)
    obj = pools()
    assert verdicts(compiled, fast, obj, 4) == (True, True)
    obj.m.max = lambda: torch.tensor(0)  # an instance attribute: the evaluator refuses the call
    [violation] = compiled.check(obj, {"n": 4}, values=True)
    assert "ExpressionRefused" in violation.actual
    assert fast.full(obj, (4,)) is False


def test_a_replaced_tensor_method_is_never_inlined(monkeypatch: pytest.MonkeyPatch) -> None:
    assert is_inlined("m.amax() < 4")
    monkeypatch.setattr(torch.Tensor, "amax", lambda self: torch.tensor(0))
    assert not is_inlined("m.amax() < 4")
