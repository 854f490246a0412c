"""Generated checks against the exact checker: generated code passes only what the exact one does.

``generate()`` writes straight-line code per class that says pass or fail; the exact checker
builds the report. These tests hold the two together on the fixture family, on one-field
mutations of a conforming manager (metadata and values), and on random contracts and values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import kv_cache_fixture as kvf
import pytest
import torch
from kv_cache_fixture.manager import KVCacheManagerV2

from hookguard.contracts import HookContract, parse_contracts
from hookguard.runtime import ContractViolation, enforce
from hookguard.runtime.checks import CompiledContract
from hookguard.runtime.codegen import FastCheck, generate

PARAMS = ("index_mapper_capacity",)


def generated(contract: HookContract, obj: object) -> tuple[CompiledContract, FastCheck]:
    compiled = CompiledContract(contract)
    base = compiled.matches(type(obj))
    assert base is not None
    fast = generate(compiled, type(obj), base, PARAMS, {})
    assert fast is not None
    return compiled, fast


def agree(contract: HookContract, obj: Any, *, values: bool) -> bool:
    """The generated verdict, asserted equal to the exact checker's."""
    compiled, fast = generated(contract, obj)
    args = (obj.index_mapper_capacity,)
    verdict = (fast.full if values else fast.metadata)(obj, args)
    exact = compiled.check(obj, {"index_mapper_capacity": args[0]}, values=values)
    assert verdict == (exact == []), exact
    return verdict


VARIANTS = [
    kvf.KVCacheManagerV2,
    kvf.FixedM3KVCacheManagerV2,
    kvf.HalfFixedM3KVCacheManagerV2,
    kvf.WrongDtypeM3KVCacheManagerV2,
    kvf.WrongDeviceM3KVCacheManagerV2,
]


@pytest.mark.parametrize("scratch", [False, True])
@pytest.mark.parametrize("cls", VARIANTS, ids=lambda c: c.__name__)
def test_generated_agrees_on_the_fixture_family(
    cls: type, scratch: bool, fixture_contracts: list[HookContract]
) -> None:
    manager = cls(enable_swa_scratch_reuse=scratch)
    good = cls in (kvf.KVCacheManagerV2, kvf.FixedM3KVCacheManagerV2) or (
        cls is kvf.HalfFixedM3KVCacheManagerV2 and not scratch
    )
    assert agree(fixture_contracts[0], manager, values=False) is good
    assert agree(fixture_contracts[0], manager, values=True) is good


def set_to(name: str, value: Callable[[Any], Any]) -> Callable[[Any], None]:
    def mutate(m: Any) -> None:
        setattr(m, name, value(getattr(m, name)))

    return mutate


MUTATIONS: dict[str, Callable[[Any], None]] = {
    "dtype": set_to("kv_cache_pool_mapping", lambda t: t.long()),
    "device": set_to("host_kv_cache_block_offsets", lambda t: t.to("meta")),
    "when-field device": set_to("_device_copy_idx_staging", lambda t: t.to("meta")),
    "shape, literal dim": set_to("kv_cache_pool_pointers", lambda t: torch.zeros(2, 3).long()),
    "shape, named dim": set_to("index_scales", lambda t: torch.ones(3, dtype=torch.int32)),
    "shape, expression dim": set_to(
        "_host_copy_idx_staging", lambda t: torch.zeros(t.numel() + 1, dtype=torch.int64)
    ),
    "rank": set_to("kv_offset", lambda t: t.reshape(1, -1)),
    "contiguity": set_to("host_kv_cache_block_offsets", lambda t: t.transpose(0, 3)),
    "missing": lambda m: delattr(m, "kv_offset"),
    "None": set_to("index_scales", lambda t: None),
    "type": set_to("kv_cache_pool_mapping", lambda t: t.tolist()),
    "list item type": set_to("_index_scale_ints", lambda v: [float(x) for x in v]),
    "list length": set_to("_index_scale_ints", lambda v: [*v, 1]),
    "list of the wrong kind": set_to("_index_scale_ints", lambda v: tuple(v)),
}
# in place, so host tables stay pinned where CUDA is available
VALUE_MUTATIONS: dict[str, Callable[[Any], None]] = {
    "values nonneg": lambda m: m.kv_cache_pool_mapping.sub_(5),
    "values positive": lambda m: m.index_scales.zero_(),
    "range": lambda m: m.kv_offset.add_(1),
    "values zeros (host)": lambda m: m.host_kv_cache_block_offsets.add_(1),
    "values zeros (when field)": lambda m: m._device_copy_idx_staging.add_(1),
    "equals (list)": set_to("_index_scale_ints", lambda v: [x + 1 for x in v]),
    "equals (tensor)": lambda m: m._device_block_positions.copy_(m._device_block_positions.flip(0)),
    "invariant": lambda m: m.kv_cache_pool_pointers.zero_(),
}


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_every_metadata_mutation_fails_both_ways(
    name: str, fixture_contracts: list[HookContract]
) -> None:
    manager = kvf.FixedM3KVCacheManagerV2(enable_swa_scratch_reuse=True)
    assert agree(fixture_contracts[0], manager, values=False)
    MUTATIONS[name](manager)
    # "list of the wrong kind": a tuple is a list to the contract (documented), so it passes
    expected = name == "list of the wrong kind"
    assert agree(fixture_contracts[0], manager, values=False) is expected
    assert agree(fixture_contracts[0], manager, values=True) is expected


@pytest.mark.parametrize("name", list(VALUE_MUTATIONS))
def test_every_value_mutation_fails_in_value_mode_only(
    name: str, fixture_contracts: list[HookContract]
) -> None:
    manager = kvf.FixedM3KVCacheManagerV2(enable_swa_scratch_reuse=True)
    assert agree(fixture_contracts[0], manager, values=True)
    VALUE_MUTATIONS[name](manager)
    assert agree(fixture_contracts[0], manager, values=False)
    assert not agree(fixture_contracts[0], manager, values=True)


def test_large_host_tensors_take_the_torch_path(fixture_contracts: list[HookContract]) -> None:
    manager = kvf.FixedM3KVCacheManagerV2(enable_swa_scratch_reuse=True, max_seq_len=4000)
    assert manager.host_kv_cache_block_offsets.numel() > 256
    assert agree(fixture_contracts[0], manager, values=True)
    manager.host_kv_cache_block_offsets[1, 0, 1, 7] = 3
    assert not agree(fixture_contracts[0], manager, values=True)


def test_classes_with_stale_overrides_get_no_generated_check(
    fixture_contracts: list[HookContract],
) -> None:
    compiled = CompiledContract(fixture_contracts[0])
    stale = kvf.StaleM3KVCacheManagerV2
    assert generate(compiled, stale, KVCacheManagerV2, PARAMS, {}) is None
    fixed = generate(compiled, kvf.FixedM3KVCacheManagerV2, KVCacheManagerV2, PARAMS, {})
    assert fixed is not None
    assert "for " not in fixed.source.replace("for x in f_4", "")  # no loop over fields


def test_keyword_calls_and_extra_arguments_take_the_exact_path(
    fixture_contracts: list[HookContract],
) -> None:
    manager = kvf.WrongDtypeM3KVCacheManagerV2()
    with enforce(fixture_contracts) as enforcer:
        with pytest.raises(ContractViolation, match="kv_cache_pool_mapping"):
            manager._prepare_page_table_tensor(index_mapper_capacity=manager.index_mapper_capacity)
        good = kvf.FixedM3KVCacheManagerV2()
        good._prepare_page_table_tensor(index_mapper_capacity=good.index_mapper_capacity)
        good._prepare_page_table_tensor(good.index_mapper_capacity)
        assert enforcer.checks == 4  # two constructions, two calls


class Box:
    def hook(self, n: int, m: int = 2) -> None:
        pass


Box.__module__, Box.__qualname__ = "gen_props", "Box"

SYNTHETIC = """
[[hook]]
class = "gen_props.Box"
method = "hook"
[hook.fields.t]
dtype = "float32"
shape = ["L", "*", "n * m", "..."]
[hook.fields.u]
shape = ["L"]
[hook.fields.k]
type = "int"
[hook.fields.xs]
type = "list"
items = "float"
shape = ["m + 1"]
[hook.fields.d]
type = "dict"
[hook.fields.anything]
type = "any"
dtype = "int64"
"""


def box(**values: Any) -> Box:
    obj = Box()
    defaults: dict[str, Any] = {
        "t": torch.zeros(3, 1, 6),
        "u": [1, 2, 3],
        "k": 4,
        "xs": [0.5, 1.5, 2.5],
        "d": {},
        "anything": None,
    }
    defaults.update(values)
    for key, value in defaults.items():
        if value is not ...:
            setattr(obj, key, value)
    return obj


BOXES: dict[str, tuple[dict[str, Any], bool]] = {
    "conforms": ({}, True),
    "bound name disagrees": ({"u": [1, 2]}, False),
    "bound name agrees, trailing dims": ({"t": torch.zeros(2, 5, 6, 7, 8), "u": "ab"}, True),
    "expression dim": ({"t": torch.zeros(3, 1, 5)}, False),
    "too few dims": ({"t": torch.zeros(3, 1)}, False),
    "int is not bool": ({"k": True}, False),
    "list items": ({"xs": ["1", 2.0, 3.0]}, False),
    "an int is a float item": ({"xs": [1, 2.0, 3.0]}, True),
    "list length": ({"xs": [1.0]}, False),
    "dict": ({"d": []}, False),
    "any: None is fine": ({"anything": None}, True),
    "any: a tensor of the dtype": ({"anything": torch.zeros(2, dtype=torch.int64)}, True),
    "any: a tensor of another dtype": ({"anything": torch.zeros(2)}, False),
    "any: a string": ({"anything": "x"}, True),
    "missing": ({"k": ...}, False),
    "wrong dtype": ({"t": torch.zeros(3, 1, 6, dtype=torch.float64)}, False),
}


@pytest.mark.parametrize("case", list(BOXES))
def test_synthetic_contract_kinds_and_dimensions(case: str) -> None:
    (contract,) = parse_contracts(SYNTHETIC)
    values, good = BOXES[case]
    obj = box(**values)
    compiled = CompiledContract(contract)
    fast = generate(compiled, Box, Box, ("n", "m"), {"m": 2})
    assert fast is not None
    assert fast.metadata(obj, (3,)) is good
    assert (compiled.check(obj, {"n": 3, "m": 2}) == []) is good
    assert fast.metadata(obj, (3, 2)) is good  # m given, equal to its default
    assert fast.metadata(obj, (3, 2, 1)) is False  # more arguments than the hook takes


def test_generated_source_holds_no_contract_text_but_names() -> None:
    (contract,) = parse_contracts(SYNTHETIC)
    fast = generate(CompiledContract(contract), Box, Box, ("n", "m"), {"m": 2})
    assert fast is not None
    assert "_b_mul(n_n, n_m)" in fast.source  # the dimension expression, over generated locals
    assert "float32" not in fast.source  # the dtype is a constant passed by reference


class Values:
    def hook(self) -> None:
        pass


Values.__module__, Values.__qualname__ = "gen_props", "Values"

VALUE_CHECKS = """
[[hook]]
class = "gen_props.Values"
method = "hook"
[hook.fields.zeros]
values = "zeros"
[hook.fields.nonzero]
values = "nonzero"
[hook.fields.nonneg]
values = "nonneg"
[hook.fields.positive]
values = "positive"
[hook.fields.finite]
values = "finite"
[hook.fields.ranged]
range = [-1, 2]
"""
NAN, INF = float("nan"), float("inf")
SAMPLES: list[Any] = [
    torch.tensor([], dtype=torch.int32),
    torch.tensor([0, 0]),
    torch.tensor([[0, 3], [1, 2]], dtype=torch.int32),
    torch.tensor([-1, 2]),
    torch.tensor([True, False]),
    torch.tensor([0.0, -0.0]),
    torch.tensor([NAN, 1.0]),
    torch.tensor([NAN, -1.0]),
    torch.tensor([INF, 0.5]),
    torch.tensor([[1.5, 2.0]], dtype=torch.float64),
    torch.tensor([[0, -2], [1, 1]]),  # 2-d integers: one host reduction, not a list
    torch.tensor([[NAN, -1.0]]),
    torch.zeros(300, dtype=torch.int64),  # over SMALL: torch on the host
    torch.arange(300) - 1,
    [0, 1, 2],
    3,
]


@pytest.mark.parametrize("sample", range(len(SAMPLES)))
def test_fused_value_checks_pass_only_what_the_exact_checker_passes(sample: int) -> None:
    (contract,) = parse_contracts(VALUE_CHECKS)
    compiled = CompiledContract(contract)
    fast = generate(compiled, Values, Values, (), {})
    assert fast is not None
    conforming = {"zeros": 0, "nonzero": 1, "nonneg": 0, "positive": 1, "finite": 1.0, "ranged": 0}
    value = SAMPLES[sample]
    for name in conforming:
        obj: Any = Values()
        for other, good in conforming.items():
            setattr(obj, other, good)
        assert fast.full(obj, ())
        setattr(obj, name, value)
        exact = compiled.check(obj, {}, values=True)
        assert fast.full(obj, ()) == (exact == []), (name, exact)


def test_dimension_arithmetic_runs_within_the_evaluators_bounds() -> None:
    (contract,) = parse_contracts(
        '[[hook]]\nclass = "gen_props.Box"\nmethod = "hook"\n'
        '[hook.fields.t]\nshape = ["n * m ** 2"]\n'
    )
    compiled = CompiledContract(contract)
    fast = generate(compiled, Box, Box, ("n", "m"), {})
    assert fast is not None and "_b_mul(n_n, _b_pow(n_m, 2))" in fast.source
    obj: Any = Box()
    obj.t = torch.zeros(18)
    assert fast.metadata(obj, (2, 3))
    assert not fast.metadata(obj, (2, 4))
    huge = 1 << 200  # n * m ** 2 is over the evaluator's 256 bits: refused, not computed
    assert not fast.metadata(obj, (huge, huge))
    assert compiled.check(obj, {"n": huge, "m": huge}) == []  # an unknown size is not checked
