"""What hookguard's runtime checks cost, against the hook itself and hand-written asserts.

    PYTHONPATH=. python benchmarks/runtime_overhead.py [--repeat N]

Uses the fixture manager ``FixedM3KVCacheManagerV2`` with SWA scratch reuse on (11 contract
fields: 6 pinned host tables, 4 CUDA staging tensors, 1 list) and prints a markdown table:

* the hook's own time (``_prepare_page_table_tensor``, uninstrumented);
* the metadata check (type, dtype, device, shape, pinned, contiguous) per hook call and per
  field, through ``enforce`` (wrapped hook minus bare hook) and through the compiled contract;
* the same checks written by hand as ``assert`` statements;
* value mode (``values``, ``range``, ``equals``, ``addresses``, invariants) against hand-written
  value asserts, which synchronise once per check;
* device synchronisations per call, counted with ``torch.cuda.set_sync_debug_mode("warn")``.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "fixtures" / "kv_cache"))

import torch  # noqa: E402
from kv_cache_fixture import FixedM3KVCacheManagerV2  # noqa: E402

from hookguard.contracts import load_contracts  # noqa: E402
from hookguard.runtime import enforce  # noqa: E402
from hookguard.runtime.checks import CompiledContract  # noqa: E402

CUDA = torch.cuda.is_available()


def timed(func: Callable[[], Any], repeat: int) -> float:
    """Median of 5 runs of ``repeat`` calls, in microseconds per call."""
    for _ in range(min(repeat, 50)):
        func()
    runs = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeat):
            func()
        runs.append((time.perf_counter() - start) / repeat * 1e6)
    return statistics.median(runs)


def syncs(func: Callable[[], Any]) -> int | None:
    """Device synchronisations during one call (None without CUDA)."""
    if not CUDA:
        return None
    torch.cuda.synchronize()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            func()
        finally:
            torch.cuda.set_sync_debug_mode("default")
    return sum("called a synchronizing" in str(w.message) for w in caught)


def hand_metadata(m: Any) -> None:
    """The contract's metadata checks, written by hand."""
    cap = m.index_mapper_capacity * m.max_beam_width
    dev = "cuda" if CUDA else "cpu"
    t = m.kv_cache_pool_pointers
    assert t.dtype == torch.int64 and t.device.type == "cpu" and t.shape == (m.num_pools, 2)
    assert not CUDA or t.is_pinned()
    t = m.kv_cache_pool_mapping
    assert t.dtype == torch.int32 and t.device.type == "cpu" and t.shape == (m.num_local_layers, 2)
    assert not CUDA or t.is_pinned()
    t = m.index_scales
    assert t.dtype == torch.int32 and t.device.type == "cpu" and t.shape == (m.num_pools,)
    assert not CUDA or t.is_pinned()
    t = m.kv_offset
    assert t.dtype == torch.int32 and t.device.type == "cpu" and t.shape == (m.num_pools,)
    assert not CUDA or t.is_pinned()
    s = m._index_scale_ints
    assert isinstance(s, list) and len(s) == m.num_pools and all(isinstance(i, int) for i in s)
    t = m.host_kv_cache_block_offsets
    assert t.dtype == torch.int32 and t.device.type == "cpu" and t.is_contiguous()
    assert t.shape == (m.num_pools, cap, 2, m.max_blocks_per_seq)
    assert not CUDA or t.is_pinned()
    t = m._device_kv_cache_block_offsets_input
    assert t.dtype == torch.int32 and t.device.type == dev
    assert t.shape == (m.num_pools, cap, 2, m.max_blocks_per_seq)
    t = m._device_copy_idx_staging
    assert t.dtype == torch.int64 and t.device.type == dev and t.shape == (cap,)
    t = m._device_attention_op_block_offsets_staging
    assert t.dtype == torch.int32 and t.device.type == dev
    assert t.shape == (m.num_attention_op_pools, cap, 2, m.max_blocks_per_seq)
    t = m._device_block_positions
    assert t.dtype == torch.int32 and t.device.type == dev and t.shape == (m.max_blocks_per_seq,)
    t = m._host_copy_idx_staging
    assert t.dtype == torch.int64 and t.device.type == "cpu" and t.shape == (cap,)
    assert not CUDA or t.is_pinned()


def hand_values(m: Any) -> None:
    """The contract's value checks, written by hand the usual way: one bool() per check."""
    p, mp = m.kv_cache_pool_pointers, m.kv_cache_pool_mapping
    assert bool((mp >= 0).all())
    assert bool((m.index_scales > 0).all())
    assert bool(((m.kv_offset >= 0) & (m.kv_offset <= 1)).all())
    assert m._index_scale_ints == m.index_scales.tolist()
    assert bool((m.host_kv_cache_block_offsets == 0).all())
    assert bool((m._device_copy_idx_staging == 0).all())
    positions = m._device_block_positions
    assert bool(
        (
            positions == torch.arange(len(positions), dtype=torch.int32, device=positions.device)
        ).all()
    )
    assert bool(mp[:, 0].max() < p.shape[0])
    assert bool((p[mp[:, 0].long(), 0] != 0).all())
    assert bool((p[:, 1] == 0).all())


class Prebuilt(FixedM3KVCacheManagerV2):
    """The fixture manager with a near-free hook: it re-assigns fields built once.

    Timing enforce() around this hook isolates hookguard's own cost from the hook's allocations.
    """

    def _prepare_page_table_tensor(self, index_mapper_capacity: int) -> None:
        template = self.__dict__.get("_template")
        if template is None:
            super()._prepare_page_table_tensor(index_mapper_capacity)
            self._template = {k: v for k, v in self.__dict__.items() if k in FIELDS}
            return
        for key, value in template.items():
            setattr(self, key, value)


FIELDS: set[str] = set()


def without_addresses(contract: Any) -> Any:
    fields = {n: dataclasses.replace(f, addresses=None) for n, f in contract.fields.items()}
    return dataclasses.replace(contract, fields=fields)


def best(func: Callable[[], Any], repeat: int, rounds: int = 3) -> float:
    return min(timed(func, repeat) for _ in range(rounds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2000)
    args = parser.parse_args()
    repeat = args.repeat
    contracts = load_contracts(ROOT / "contracts" / "kv_cache_fixture.toml")
    contract = contracts[0]
    FIELDS.update(f.name for f, _ in contract.all_fields())
    compiled = CompiledContract(contract)
    no_addr = CompiledContract(without_addresses(contract))
    n_fields = len(contract.all_fields())
    manager = FixedM3KVCacheManagerV2(enable_swa_scratch_reuse=True)
    cheap = Prebuilt(enable_swa_scratch_reuse=True)
    cap = manager.index_mapper_capacity
    call_args = {"index_mapper_capacity": cap}
    assert compiled.check(manager, call_args, values=True) == []
    assert compiled.check(cheap, call_args, values=True) == []

    def hook() -> None:
        manager._prepare_page_table_tensor(cap)

    def cheap_hook() -> None:
        cheap._prepare_page_table_tensor(cap)

    rows: list[tuple[str, float, str, str]] = []

    def row(name: str, micros: float, per_field: str, sync: int | None) -> None:
        rows.append((name, micros, per_field, "n/a" if sync is None else str(sync)))

    few = max(repeat // 10, 20)
    bare = best(hook, few)
    row("hook itself (_prepare_page_table_tensor, bare)", bare, "", syncs(hook))
    meta = best(lambda: compiled.check(manager, call_args), repeat)
    row(
        "hookguard metadata check (compiled contract)",
        meta,
        f"{meta / n_fields:.2f}",
        syncs(lambda: compiled.check(manager, call_args)),
    )
    hand = best(lambda: hand_metadata(manager), repeat)
    row(
        "hand-written metadata asserts",
        hand,
        f"{hand / n_fields:.2f}",
        syncs(lambda: hand_metadata(manager)),
    )
    cheap_bare = best(cheap_hook, repeat)
    with enforce(contracts) as enforcer:
        wrapped = best(hook, few)
        hook_syncs = syncs(hook)
        cheap_wrapped = best(cheap_hook, repeat)
        checks = enforcer.checks
    overhead = cheap_wrapped - cheap_bare
    row("hook under enforce() (metadata)", wrapped, "", hook_syncs)
    row(
        "enforce() overhead per hook call (wrapper + check)",
        overhead,
        f"{overhead / n_fields:.2f}",
        None,
    )
    values = best(lambda: compiled.check(manager, call_args, values=True), max(repeat // 4, 20))
    row(
        "hookguard value check (batched, with addresses)",
        values,
        "",
        syncs(lambda: compiled.check(manager, call_args, values=True)),
    )
    values_na = best(lambda: no_addr.check(manager, call_args, values=True), max(repeat // 4, 20))
    row(
        "hookguard value check (batched, without addresses)",
        values_na,
        "",
        syncs(lambda: no_addr.check(manager, call_args, values=True)),
    )
    hand_v = best(lambda: hand_values(manager), max(repeat // 4, 20))
    row(
        "hand-written value asserts (no address check)",
        hand_v,
        "",
        syncs(lambda: hand_values(manager)),
    )
    with enforce(contracts, values=True):
        wrapped_v = best(hook, few)
        hook_v_syncs = syncs(hook)
    row("hook under enforce(values=True)", wrapped_v, "", hook_v_syncs)

    device = torch.cuda.get_device_name() if CUDA else "CPU only (no CUDA device)"
    print(
        f"# hookguard runtime overhead: {device}, torch {torch.__version__}, "
        f"python {sys.version.split()[0]}"
    )
    host = sum(1 for f, _ in contract.all_fields() if f.device == "cpu")
    print(
        f"# contract: {n_fields} fields ({host} host tables, pinned where CUDA), "
        f"{len(contract.invariants)} invariants; {checks} checks ran under enforce()"
    )
    print()
    print("| what | µs per hook call | µs per field | device syncs per call |")
    print("|---|---:|---:|---:|")
    for name, micros, per_field, sync in rows:
        print(f"| {name} | {micros:.1f} | {per_field} | {sync} |")
    print()
    print(
        f"summary: metadata overhead {overhead / n_fields:.2f} µs/field under enforce "
        f"(check alone {meta / n_fields:.2f} µs/field, hand-written {hand / n_fields:.2f}); "
        f"syncs per hook call: metadata {hook_syncs}, values {hook_v_syncs} "
        f"(hand-written values: {syncs(lambda: hand_values(manager))})"
    )


if __name__ == "__main__":
    main()
