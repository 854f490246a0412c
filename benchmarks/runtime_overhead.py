"""What hookguard's runtime checks cost, against the hook itself and hand-written asserts.

    PYTHONPATH=. python benchmarks/runtime_overhead.py [--repeat N]

Uses the fixture manager ``FixedM3KVCacheManagerV2`` with SWA scratch reuse on (11 contract
fields: 6 pinned host tables, 4 CUDA staging tensors, 1 list) and prints a markdown table:

* the hook's own time (``_prepare_page_table_tensor``, uninstrumented);
* the metadata check (type, dtype, device, shape, pinned, contiguous) per hook call and per
  field: the generated check, the exact checker, and through ``enforce`` (wrapped hook minus
  bare hook); the wrapper alone, on a contract without fields;
* the same checks written by hand as ``assert`` statements;
* value mode (``values``, ``range``, ``equals``, ``addresses``, invariants) against hand-written
  value asserts, which synchronise once per check;
* device synchronisations per call, counted with ``torch.cuda.set_sync_debug_mode("warn")``,
  and 200 enforced hook calls in metadata mode under ``set_sync_debug_mode("error")``;
* on CUDA, the kernels and host-device copies of one value check, counted by torch's profiler.
"""

from __future__ import annotations

import argparse
import builtins
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

from hookguard.contracts import HookContract, load_contracts  # noqa: E402
from hookguard.runtime import enforce  # noqa: E402
from hookguard.runtime.checks import CompiledContract  # noqa: E402
from hookguard.runtime.codegen import generate  # noqa: E402

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


def launches(func: Callable[[], Any]) -> str:
    """CUDA kernels and memory copies of one call (after a first call), from torch's profiler."""
    if not CUDA:
        return "n/a (no CUDA)"
    try:
        from torch.autograd import DeviceType
        from torch.profiler import ProfilerActivity, profile

        func()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            func()
            torch.cuda.synchronize()
        names = [e.name for e in prof.events() if e.device_type == DeviceType.CUDA]
    except Exception as exc:  # a profiler that cannot run here: say so, measure the rest
        return f"n/a ({type(exc).__name__}: {exc})"
    copies = sum(1 for n in names if n.lower().startswith("memcpy"))
    sets = sum(1 for n in names if n.lower().startswith("memset"))
    return f"{len(names) - copies - sets} kernels, {copies} copies"


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


def paired(
    func: Callable[[], Any],
    contracts: Any,
    repeat: int,
    rounds: int = 7,
    bare_func: Callable[[], Any] | None = None,
) -> tuple[float, float]:
    """(bare, enforced) µs per call of ``func``, interleaved round by round; the best of each.

    ``bare_func`` (default ``func``) is what runs without enforcement.
    """
    bare: list[float] = []
    wrapped: list[float] = []
    for _ in range(rounds):
        bare.append(timed(bare_func or func, repeat))
        with enforce(contracts):
            wrapped.append(timed(func, repeat))
    return min(bare), min(wrapped)


class Plain:
    """A class whose contract has no fields: what the enforce() wrapper alone costs."""

    def hook(self, n: int) -> None:
        self.n = n


def no_sync_proof(func: Callable[[], Any], calls: int) -> str:
    """Run ``calls`` calls under set_sync_debug_mode("error"): any synchronisation raises."""
    if not CUDA:
        return "n/a (no CUDA)"
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        for _ in range(calls):
            func()
    finally:
        torch.cuda.set_sync_debug_mode("default")
    return f"0 ({calls} calls under set_sync_debug_mode('error'))"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2000)
    args = parser.parse_args()
    repeat = args.repeat
    warnings.filterwarnings("ignore", message="Synchronization debug mode")
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
    positional = (cap,)
    assert compiled.check(manager, call_args, values=True) == []
    assert compiled.check(cheap, call_args, values=True) == []
    base = compiled.matches(type(manager))
    assert base is not None
    params = ("index_mapper_capacity",)
    generated = generate(compiled, type(manager), base, params, {})
    generated_na = generate(no_addr, type(manager), base, params, {})
    assert generated is not None and generated_na is not None
    assert generated.metadata(manager, positional) and generated.full(manager, positional)

    def hook() -> None:
        manager._prepare_page_table_tensor(cap)

    def cheap_hook() -> None:
        cheap._prepare_page_table_tensor(cap)

    rows: list[tuple[str, float, str, str]] = []

    def row(name: str, micros: float, per_field: str, sync: int | str | None) -> None:
        rows.append((name, micros, per_field, "n/a" if sync is None else str(sync)))

    few = max(repeat // 10, 20)
    bare = best(hook, few)
    row("hook itself (_prepare_page_table_tensor, bare)", bare, "", syncs(hook))
    meta = best(lambda: generated.metadata(manager, positional), repeat)
    row(
        "hookguard metadata check (generated for the class)",
        meta,
        f"{meta / n_fields:.2f}",
        syncs(lambda: generated.metadata(manager, positional)),
    )
    exact = best(lambda: compiled.check(manager, call_args), max(repeat // 4, 20))
    row(
        "hookguard exact checker (builds the report; runs on failure)",
        exact,
        f"{exact / n_fields:.2f}",
        syncs(lambda: compiled.check(manager, call_args)),
    )
    hand = best(lambda: hand_metadata(manager), repeat)
    row(
        "hand-written metadata asserts",
        hand,
        f"{hand / n_fields:.2f}",
        syncs(lambda: hand_metadata(manager)),
    )
    plain = Plain()
    empty = HookContract(cls=f"{__name__}.Plain", method="hook", renamed_from=(), fields={})

    def plain_hook() -> None:
        plain.hook(3)

    plain_bare, plain_wrapped = paired(plain_hook, [empty], repeat * 5)
    wrapper = plain_wrapped - plain_bare
    row("enforce() wrapper, contract without fields (wrapped - bare)", wrapper, "", None)
    cheap_bare, cheap_wrapped = paired(cheap_hook, contracts, repeat)
    cheap_check = generate(compiled, Prebuilt, base, params, {})
    assert cheap_check is not None

    def hook_then_check() -> None:  # the same work as an enforced call, without the wrapper
        cheap._prepare_page_table_tensor(cap)
        cheap_check.metadata(cheap, positional)

    composed, composed_wrapped = paired(cheap_hook, contracts, repeat, bare_func=hook_then_check)
    with enforce(contracts) as enforcer:
        wrapped = best(hook, few)
        hook_syncs = syncs(hook)
        proof = no_sync_proof(hook, 200)
        checks = enforcer.checks
    overhead = cheap_wrapped - cheap_bare
    fixed = composed_wrapped - composed
    row("hook under enforce() (metadata)", wrapped, "", hook_syncs)
    row(
        "enforce() overhead per hook call (wrapper + check)",
        overhead,
        f"{overhead / n_fields:.2f}",
        proof,
    )
    row("enforce() fixed overhead (enforced - bare hook then generated check)", fixed, "", None)
    full = best(lambda: generated.full(manager, positional), max(repeat // 4, 20))
    row(
        "hookguard metadata + value checks (generated, fused, with addresses)",
        full,
        "",
        syncs(lambda: generated.full(manager, positional)),
    )
    full_na = best(lambda: generated_na.full(manager, positional), max(repeat // 4, 20))
    row(
        "hookguard metadata + value checks (generated, fused, without addresses)",
        full_na,
        "",
        syncs(lambda: generated_na.full(manager, positional)),
    )
    expressions = [f.equals for f in no_addr.all_fields() if f.equals is not None]
    expressions += list(no_addr.invariants)
    inlined = generated_na.source.count("elif _invariant_bad(")
    inlined += generated_na.source.count("elif _equals_bad(")
    names: dict[str, Any] = {"torch": torch, **call_args}
    names.update({f.name: getattr(manager, f.name) for f in no_addr.all_fields()})
    # a plain dict of names, as the generated check passes them (no Namespace lookups)
    plain_names = dict(names, max_blocks_per_seq=manager.max_blocks_per_seq)
    evaluated = best(lambda: [e(plain_names) for e in expressions], max(repeat // 4, 20))
    row(
        f"the contract's {len(expressions)} expressions by the bounded evaluator (expr.py; "
        f"the exact checker's way, the generated check's fallback: it inlines "
        f"{inlined} of {len(expressions)})",
        evaluated,
        "",
        None,
    )
    # For comparison only (never used to check): the same expressions without the evaluator's
    # bounds, i.e. what the hand-written asserts pay for the same operations.
    plain_codes = [compile(e.text.strip(), "<plain>", "eval") for e in expressions]
    plain_globals = {"__builtins__": builtins}
    unbounded = best(
        lambda: [eval(c, plain_globals, plain_names) for c in plain_codes],
        max(repeat // 4, 20),
    )
    row(
        f"(the same {len(expressions)} expressions by plain eval, without bounds: comparison)",
        unbounded,
        "",
        None,
    )
    values_exact = best(
        lambda: no_addr.check(manager, call_args, values=True), max(repeat // 4, 20)
    )
    row(
        "hookguard exact checker with values (without addresses)",
        values_exact,
        "",
        syncs(lambda: no_addr.check(manager, call_args, values=True)),
    )
    hand_v = best(lambda: hand_values(manager), max(repeat // 4, 20))
    hand_v_syncs = syncs(lambda: hand_values(manager))
    row("hand-written value asserts (no address check)", hand_v, "", hand_v_syncs)
    fused_launches = launches(lambda: generated_na.full(manager, positional))
    hand_launches = launches(lambda: hand_values(manager))
    hand_all = best(lambda: (hand_metadata(manager), hand_values(manager)), max(repeat // 4, 20))
    row("hand-written metadata + value asserts", hand_all, "", hand_v_syncs)
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
    values_only = full_na - meta
    goals = [
        ("metadata <= 1.5 x hand-written per field", meta / hand, 1.5),
        ("enforce() fixed overhead < 1 us", fixed, 1.0),
        ("enforce() wrapper without fields < 1 us", wrapper, 1.0),
        ("value mode <= 1.0 x hand-written (metadata + values)", full_na / hand_all, 1.0),
        ("value checks alone <= 1.0 x hand-written values", values_only / hand_v, 1.0),
    ]
    print(
        f"summary: metadata {meta / n_fields:.2f} µs/field generated vs "
        f"{hand / n_fields:.2f} hand-written ({meta / hand:.2f} x); enforce() fixed overhead "
        f"{fixed:.2f} µs; wrapper alone {wrapper:.2f} µs; value mode {full_na:.1f} µs vs "
        f"{hand_all:.1f} hand-written ({full_na / hand_all:.2f} x; values alone "
        f"{values_only:.1f} vs {hand_v:.1f}, {values_only / hand_v:.2f} x; expressions inlined: "
        f"{inlined} of {len(expressions)}); syncs per hook call: "
        f"metadata {hook_syncs}, values {hook_v_syncs} (hand-written values: {hand_v_syncs}); "
        f"CUDA work of one value check: generated {fused_launches}, hand-written {hand_launches}"
    )
    for name, value, limit in goals:
        verdict = "met" if value < limit or (limit == 1.5 and value <= limit) else "NOT met"
        print(f"goal: {name}: {value:.2f} ({verdict})")


if __name__ == "__main__":
    main()
