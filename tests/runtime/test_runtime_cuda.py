"""CUDA-only: no device sync for metadata checks, one for value checks, pinning, live pointers."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import kv_cache_fixture as kvf
import pytest
import torch
from kv_cache_fixture.manager import KVCacheManagerV2
from runtime_support import CUDA_REASON

from hookguard.contracts import HookContract
from hookguard.runtime import ContractViolation, enforce, verify
from hookguard.runtime.checks import CompiledContract

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason=CUDA_REASON)


@pytest.fixture(autouse=True)
def _sync_mode_reset() -> Iterator[None]:
    yield
    torch.cuda.set_sync_debug_mode("default")


def count_syncs(func: Callable[[], Any]) -> int:
    torch.cuda.synchronize()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            func()
        finally:
            torch.cuda.set_sync_debug_mode("default")
    return sum("called a synchronizing" in str(w.message) for w in caught)


def test_fixture_runs_on_the_device(fixture_contracts: list[HookContract]) -> None:
    manager = kvf.FixedM3KVCacheManagerV2(enable_swa_scratch_reuse=True)
    assert manager.impl.pools[0].is_cuda
    assert manager.kv_cache_pool_pointers.is_pinned()
    assert manager._device_copy_idx_staging.is_cuda
    pointers = manager.kv_cache_pool_pointers[:, 0].tolist()
    assert pointers == [pool.data_ptr() for pool in manager.impl.pools]
    assert verify(manager, fixture_contracts, values=True) == []


def test_metadata_enforcement_never_synchronises(fixture_contracts: list[HookContract]) -> None:
    manager = kvf.FixedM3KVCacheManagerV2(enable_swa_scratch_reuse=True)
    broken = kvf.WrongDeviceM3KVCacheManagerV2(enable_swa_scratch_reuse=True)
    compiled = CompiledContract(fixture_contracts[0])
    args = {"index_mapper_capacity": manager.index_mapper_capacity}
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    assert compiled.check(manager, args) == []
    assert verify(manager, fixture_contracts) == []
    found = verify(broken, fixture_contracts)  # building the report does not sync either
    assert [(v.field, v.kind, v.actual) for v in found] == [
        ("host_kv_cache_block_offsets", "device", "cuda:0"),
    ]
    with enforce(fixture_contracts) as enforcer:
        manager._prepare_page_table_tensor(manager.index_mapper_capacity)
        assert enforcer.checks == 1
    torch.cuda.set_sync_debug_mode("default")


def test_value_checks_synchronise_once_per_hook_call(
    fixture_contracts: list[HookContract],
) -> None:
    manager = kvf.FixedM3KVCacheManagerV2(enable_swa_scratch_reuse=True)
    cap = manager.index_mapper_capacity

    def hook() -> None:
        manager._prepare_page_table_tensor(cap)

    bare = count_syncs(hook)
    with enforce(fixture_contracts):
        assert count_syncs(hook) == bare
    with enforce(fixture_contracts, values=True):
        assert count_syncs(hook) == bare + 1
    assert bare == 0
    # and a failing value check is found through that one transfer
    manager._device_copy_idx_staging[2] = 1
    manager._device_block_positions[0] = 5
    compiled = CompiledContract(fixture_contracts[0])
    found: list[Any] = []
    assert (
        count_syncs(
            lambda: found.extend(
                compiled.check(manager, {"index_mapper_capacity": cap}, values=True)
            )
        )
        == 1
    )
    assert [(v.field, v.actual) for v in found] == [
        ("_device_copy_idx_staging", "1 of 3 elements fail"),
        ("_device_block_positions", "1 of 8 elements fail"),
    ]


def test_unpinned_host_table_is_reported(fixture_contracts: list[HookContract]) -> None:
    class Unpinned(kvf.FixedM3KVCacheManagerV2):
        def _prepare_page_table_tensor(self, index_mapper_capacity: int) -> None:
            super()._prepare_page_table_tensor(index_mapper_capacity)
            self.kv_offset = self.kv_offset.clone()  # pageable copy

    with enforce(fixture_contracts), pytest.raises(ContractViolation) as info:
        Unpinned()
    (violation,) = info.value.violations
    assert (violation.field, violation.kind) == ("kv_offset", "pinned")
    assert violation.expected_meta == "int32[2] cpu pinned"
    assert violation.actual_meta == "int32[2] cpu"


def test_wrong_device_variant_on_cuda(fixture_contracts: list[HookContract]) -> None:
    with enforce(fixture_contracts), pytest.raises(ContractViolation) as info:
        kvf.WrongDeviceM3KVCacheManagerV2()
    (violation,) = info.value.violations
    assert violation.actual_meta == "int32[2, 3, 2, 8] cuda:0"
    assert "int32[2, 3, 2, 8] cpu pinned contiguous" in str(info.value)


def test_pointer_column_must_hold_live_cuda_allocations(
    fixture_contracts: list[HookContract],
) -> None:
    manager = kvf.FixedM3KVCacheManagerV2()
    assert verify(manager, fixture_contracts, values=True) == []
    freed = torch.empty(1 << 20, dtype=torch.uint8, device="cuda")
    dead = freed.data_ptr()
    del freed  # back to the caching allocator: still mapped, no longer allocated
    host = torch.empty(16, dtype=torch.uint8, pin_memory=True)
    manager.kv_cache_pool_pointers[0, 0] = dead
    manager.kv_cache_pool_pointers[1, 0] = host.data_ptr()
    (violation,) = verify(manager, fixture_contracts, values=True)
    assert (violation.field, violation.kind) == ("kv_cache_pool_pointers", "value")
    assert violation.actual.startswith("2 of 2 pointers dead")
    assert "freed block of the PyTorch caching allocator" in violation.actual
    assert "not a CUDA device allocation" in violation.actual
    manager.kv_cache_pool_pointers[0, 0] = 0  # an unused pool may have 0 ...
    manager.kv_cache_pool_pointers[1, 0] = manager.impl.pools[1].data_ptr()
    found = verify(manager, fixture_contracts, values=True)
    # ... but pool 0 is used by layers 0 and 2: the invariant catches it
    assert [(v.kind, v.expected) for v in found] == [
        ("invariant", "(kv_cache_pool_pointers[kv_cache_pool_mapping[:, 0].long(), 0] != 0).all()")
    ]


def test_every_variant_on_cuda_through_enforce(fixture_contracts: list[HookContract]) -> None:
    expected = {
        KVCacheManagerV2: [],
        kvf.FixedM3KVCacheManagerV2: [],
        kvf.HalfFixedM3KVCacheManagerV2: ["missing"] * 5,
        kvf.WrongDtypeM3KVCacheManagerV2: ["dtype"],
        kvf.WrongDeviceM3KVCacheManagerV2: ["device"],
    }
    for cls, kinds in expected.items():
        with (
            enforce(fixture_contracts, mode="warn", values=True) as enforcer,
            warnings.catch_warnings(),
        ):
            warnings.simplefilter("ignore")
            cls(enable_swa_scratch_reuse=True)
        assert [v.kind for e in enforcer.history for v in e.violations] == kinds, cls
    with enforce(fixture_contracts), pytest.raises(ContractViolation) as info:
        kvf.StaleM3KVCacheManagerV2()
    assert [v.kind for v in info.value.violations] == ["stale-override"]


def test_generated_checks_on_cuda_sync_never_for_metadata_once_for_values(
    fixture_contracts: list[HookContract],
) -> None:
    from hookguard.runtime.codegen import generate

    manager = kvf.FixedM3KVCacheManagerV2(enable_swa_scratch_reuse=True)
    compiled = CompiledContract(fixture_contracts[0])
    fast = generate(
        compiled, type(manager), KVCacheManagerV2, ("index_mapper_capacity",), {}
    )
    assert fast is not None
    args = (manager.index_mapper_capacity,)
    assert "is_pinned()" in fast.source and "is_cuda" in fast.source
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    assert fast.metadata(manager, args)
    torch.cuda.set_sync_debug_mode("default")
    assert count_syncs(lambda: fast.full(manager, args)) == 1
    assert count_syncs(lambda: hand_written_values(manager)) == 2
    manager._device_copy_idx_staging[1] = 7  # a CUDA value: found through the one transfer
    assert count_syncs(lambda: fast.full(manager, args)) == 1
    assert not fast.full(manager, args)
    assert fast.metadata(manager, args)
    manager.kv_offset = manager.kv_offset.clone()  # no longer pinned
    assert not fast.metadata(manager, args)


def hand_written_values(manager: Any) -> None:
    """The usual way: one bool() per CUDA check."""
    assert bool((manager._device_copy_idx_staging == 0).all())
    positions = manager._device_block_positions
    assert bool((positions == torch.arange(len(positions), device=positions.device)).all())


class Staged:
    def hook(self) -> None:
        pass


Staged.__module__, Staged.__qualname__ = "cuda_props", "Staged"


@pytest.mark.parametrize("count", [1, 2, 3, 4])
def test_cuda_value_flags_any_number_one_transfer(count: int) -> None:
    from hookguard.contracts import parse_contracts
    from hookguard.runtime.codegen import generate

    names = [f"t{i}" for i in range(count)]
    text = '[[hook]]\nclass = "cuda_props.Staged"\nmethod = "hook"\n' + "".join(
        f'[hook.fields.{name}]\ndevice = "cuda"\nvalues = "zeros"\n' for name in names
    )
    (contract,) = parse_contracts(text)
    compiled = CompiledContract(contract)
    fast = generate(compiled, Staged, Staged, (), {})
    assert fast is not None
    obj: Any = Staged()
    for name in names:
        setattr(obj, name, torch.zeros(5, device="cuda"))
    assert count_syncs(lambda: fast.full(obj, ())) == 1
    assert fast.full(obj, ()) and compiled.check(obj, {}, values=True) == []
    getattr(obj, names[-1])[3] = 1.0  # the last flag
    assert not fast.full(obj, ())
    [violation] = compiled.check(obj, {}, values=True)
    assert (violation.field, violation.actual) == (names[-1], "1 of 5 elements fail")


class Positions:
    def hook(self) -> None:
        pass


Positions.__module__, Positions.__qualname__ = "cuda_props", "Positions"


def test_inlined_expressions_on_cuda_one_transfer() -> None:
    """Invariants and an arange ``equals`` written inline (the arange kept after the first call):
    still one transfer per call, and the exact checker's verdicts."""
    from hookguard.contracts import parse_contracts
    from hookguard.runtime.codegen import generate

    (contract,) = parse_contracts(
        '[[hook]]\nclass = "cuda_props.Positions"\nmethod = "hook"\n'
        'invariants = ["(t == 0).all()", "t.max() < 5", "(t >= 0) & (t < 9)"]\n'
        '[hook.fields.t]\ndtype = "int64"\ndevice = "cuda"\n'
        '[hook.fields.pos]\ndtype = "int32"\ndevice = "cuda"\n'
        'equals = "torch.arange(n, dtype=torch.int32, device=pos.device)"\n'
    )
    compiled = CompiledContract(contract)
    fast = generate(compiled, Positions, Positions, (), {})
    assert fast is not None
    assert fast.source.count("elif _invariant_bad(") == 3 and "elif _equals_bad(" in fast.source
    obj: Any = Positions()
    obj.n, obj.t = 6, torch.zeros(6, dtype=torch.int64, device="cuda")
    obj.pos = torch.arange(6, dtype=torch.int32, device="cuda")
    for _ in range(2):  # the first call makes the arange, the second finds it kept
        assert count_syncs(lambda: fast.full(obj, ())) == 1
        assert fast.full(obj, ()) and compiled.check(obj, {}, values=True) == []
    obj.t[2] = 7
    assert not fast.full(obj, ())
    failing = [v.expected for v in compiled.check(obj, {}, values=True)]
    assert failing == ["(t == 0).all()", "t.max() < 5"]
    obj.t[2] = 0
    obj.pos = obj.pos.flip(0)
    assert not fast.full(obj, ())
    assert [v.field for v in compiled.check(obj, {}, values=True)] == ["pos"]
    obj.pos, obj.n = torch.arange(7, dtype=torch.int32, device="cuda"), 7  # another size
    assert fast.full(obj, ())
