"""Multi-process jobs: this process's device, the rank in reports, the elastic error file, torchrun.

The torchrun tests start real jobs of 2 processes (``python -m torch.distributed.run``): gloo on
the CPU everywhere (CI included), NCCL on a machine with at least 2 GPUs.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import kv_cache_fixture as kvf
import pytest
import torch
from runtime_support import CUDA_REASON, ROOT

from hookguard.contracts import ContractError, HookContract, parse_contracts
from hookguard.runtime import ContractViolation, enforce, verify
from hookguard.runtime.distributed import local_rank_device, rank_info
from hookguard.runtime.fields import device_rule

JOB = ROOT / "fixtures" / "multigpu" / "tp_job.py"
TWO_GPUS = torch.cuda.is_available() and torch.cuda.device_count() >= 2
TWO_GPUS_REASON = "needs 2 CUDA devices (runs on the nvidia-h200-x2 device machine)"


def staging_contract(device: str) -> list[HookContract]:
    return parse_contracts(
        f"""
[[hook]]
class = "kv_cache_fixture.manager.KVCacheManagerV2"
method = "_prepare_page_table_tensor"
[[hook.when]]
attr = "enable_swa_scratch_reuse"
[hook.when.fields._device_copy_idx_staging]
dtype = "int64"
device = "{device}"
"""
    )


# -- device spellings ---------------------------------------------------------------------------


def test_current_and_cuda_current_are_accepted_and_typos_are_not() -> None:
    for spelling in ("current", "cuda:current"):
        [contract] = staging_contract(spelling)
        [clause] = contract.when
        assert clause.fields["_device_copy_idx_staging"].device == spelling
    with pytest.raises(ContractError, match="unknown device 'cuda:curent'"):
        staging_contract("cuda:curent")


@pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU meaning of 'current'")
def test_current_is_the_cpu_without_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCAL_RANK", "1")
    rule = device_rule("current")
    assert rule is not None and (rule.type, rule.current) == ("cpu", False)
    assert local_rank_device() is None
    manager = kvf.FixedM3KVCacheManagerV2(enable_swa_scratch_reuse=True)
    assert verify(manager, staging_contract("current")) == []
    manager._device_copy_idx_staging = manager._device_copy_idx_staging.to("meta")
    [found] = verify(manager, staging_contract("current"))
    assert (found.kind, found.expected, found.actual) == ("device", "cpu", "meta")


@pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU meaning of 'cuda:current'")
def test_cuda_current_rejects_cpu_tensors_without_cuda() -> None:
    manager = kvf.FixedM3KVCacheManagerV2(enable_swa_scratch_reuse=True)
    [found] = verify(manager, staging_contract("cuda:current"))
    assert (found.field, found.kind, found.actual) == ("_device_copy_idx_staging", "device", "cpu")


@pytest.mark.skipif(not torch.cuda.is_available(), reason=CUDA_REASON)
def test_cuda_current_is_the_current_device_without_local_rank(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    manager = kvf.FixedM3KVCacheManagerV2(enable_swa_scratch_reuse=True)
    assert verify(manager, staging_contract("cuda:current")) == []
    assert verify(manager, staging_contract("current")) == []
    manager._device_copy_idx_staging = manager._device_copy_idx_staging.cpu()
    [found] = verify(manager, staging_contract("cuda:current"))
    current = torch.cuda.current_device()
    expected = ("device", f"cuda:{current} (current)", "cpu")
    assert (found.kind, found.expected, found.actual) == expected


@pytest.mark.skipif(not TWO_GPUS, reason=TWO_GPUS_REASON)
def test_cuda_current_follows_local_rank(monkeypatch: pytest.MonkeyPatch) -> None:
    manager = kvf.FixedM3KVCacheManagerV2(enable_swa_scratch_reuse=True, device="cuda:0")
    manager._device_copy_idx_staging = manager._device_copy_idx_staging.to("cuda:0")
    monkeypatch.setenv("LOCAL_RANK", "0")
    assert verify(manager, staging_contract("cuda:current")) == []
    monkeypatch.setenv("LOCAL_RANK", "1")  # rank 1's device is cuda:1, whatever is current
    [found] = verify(manager, staging_contract("cuda:current"))
    assert (found.kind, found.expected, found.actual) == ("device", "cuda:1 (current)", "cuda:0")
    assert verify(manager, staging_contract("cuda")) == []  # "cuda" cannot tell


# -- the rank in reports ------------------------------------------------------------------------


def test_a_violation_carries_rank_local_rank_and_host(
    monkeypatch: pytest.MonkeyPatch, fixture_contracts: list[HookContract]
) -> None:
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("LOCAL_RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "4")
    with enforce(fixture_contracts), pytest.raises(ContractViolation) as caught:
        kvf.WrongDtypeM3KVCacheManagerV2()
    error = caught.value
    host = socket.gethostname()
    assert (error.rank, error.local_rank, error.world_size, error.host) == (3, 1, 4, host)
    assert f"  process: rank 3 of 4 (local rank 1), host {host}\n" in str(error)
    again = pickle.loads(pickle.dumps(error))
    assert (again.rank, again.local_rank, again.world_size, again.host) == (3, 1, 4, host)
    assert again.plain == error.plain


def test_outside_a_job_the_report_has_no_process_line(
    monkeypatch: pytest.MonkeyPatch, fixture_contracts: list[HookContract]
) -> None:
    for name in ("RANK", "LOCAL_RANK", "WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)
    assert rank_info().rank is None
    with enforce(fixture_contracts), pytest.raises(ContractViolation) as caught:
        kvf.WrongDtypeM3KVCacheManagerV2()
    assert caught.value.rank is None and caught.value.host == socket.gethostname()
    assert "process:" not in str(caught.value)


# -- torchelastic's error file ------------------------------------------------------------------


def test_a_raised_violation_is_written_to_the_elastic_error_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixture_contracts: list[HookContract]
) -> None:
    path = tmp_path / "attempt_0" / "1" / "error.json"
    monkeypatch.setenv("TORCHELASTIC_ERROR_FILE", str(path))
    with enforce(fixture_contracts), pytest.raises(ContractViolation):
        kvf.WrongDtypeM3KVCacheManagerV2()
    data = json.loads(path.read_text())
    message = data["message"]
    assert message["message"].startswith(
        "ContractViolation: hook contract violated: "
        "kv_cache_fixture.minimax_m3.WrongDtypeM3KVCacheManagerV2._prepare_page_table_tensor"
    )
    assert "kv_cache_pool_mapping: expected int32[4, 2]" in message["message"]
    assert "Traceback (most recent call last)" in message["extraInfo"]["py_callstack"]
    assert message["extraInfo"]["timestamp"].isdigit()


def test_the_first_error_stays_and_warn_mode_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixture_contracts: list[HookContract]
) -> None:
    path = tmp_path / "error.json"
    monkeypatch.setenv("TORCHELASTIC_ERROR_FILE", str(path))
    with enforce(fixture_contracts, mode="warn"), pytest.warns(UserWarning):
        kvf.WrongDtypeM3KVCacheManagerV2()
    assert not path.exists()
    path.write_text('{"message": "an earlier failure"}')
    with enforce(fixture_contracts), pytest.raises(ContractViolation):
        kvf.WrongDtypeM3KVCacheManagerV2()
    assert json.loads(path.read_text()) == {"message": "an earlier failure"}


# -- torchrun: 2 processes ----------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def torchrun(variant: str, *, gpus: bool, extra: tuple[str, ...] = ()) -> tuple[int, str, float]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("TORCHELASTIC_ERROR_FILE", None)
    for name in ("RANK", "LOCAL_RANK", "WORLD_SIZE"):
        env.pop(name, None)
    if not gpus:
        env["CUDA_VISIBLE_DEVICES"] = ""  # gloo on the CPU, also on a machine with GPUs
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node=2",
        "--master_addr=127.0.0.1",
        f"--master_port={free_port()}",
        "--monitor_interval=0.1",
        str(JOB),
        variant,
        *extra,
    ]
    started = time.perf_counter()
    done = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=240, check=False
    )
    return done.returncode, done.stdout + done.stderr, time.perf_counter() - started


def check_failed_job(code: int, output: str, seconds: float) -> None:
    assert code != 0, output
    root_cause = output[output.index("Root Cause (first observed failure)") :]
    assert re.search(r"rank\s*: 1 \(local_rank: 1\)", root_cause), output
    assert (
        "ContractViolation: hook contract violated: "
        "multigpu_fixture.Rank0StagingManager._prepare_page_table_tensor"
    ) in root_cause
    assert "process: rank 1 of 2 (local rank 1)" in root_cause
    assert re.search(r"_device_copy_idx_staging: expected int64\[3\] \S+", root_cause)
    # rank 0's staging is on its own device: it passed and waited in the all-reduce
    assert "rank 0: Rank0StagingManager passed its contract" in output
    assert "rank 1: Rank0StagingManager passed" not in output
    assert "process: rank 0" not in output
    stopped = r"rank\s*: 0 \(local_rank: 0\)\n\s*exitcode\s*: -15"  # SIGTERM from torchrun
    assert re.search(stopped, output), output
    print(f"torchrun job failed as it should in {seconds:.1f} s")


def test_torchrun_gloo_rank0_staging_fails_on_rank1_only() -> None:
    code, output, seconds = torchrun("rank0", gpus=False)
    check_failed_job(code, output, seconds)
    assert "expected int64[3] cpu, got int64[3] meta (device)" in output
    assert seconds < 120, f"the job took {seconds:.1f} s to fail"


def test_torchrun_without_record_the_error_file_is_hookguards() -> None:
    # an entry point without @record: only hookguard writes the error file torchrun reads
    code, output, seconds = torchrun("rank0", gpus=False, extra=("--without-record",))
    check_failed_job(code, output, seconds)
    root_cause = output[output.index("Root Cause (first observed failure)") :]
    assert "error_file: <N/A>" not in root_cause
    assert 'raise error from cause' in root_cause  # the traceback hookguard recorded


def test_torchrun_gloo_fixed_managers_pass() -> None:
    code, output, _ = torchrun("fixed", gpus=False)
    assert code == 0, output
    for rank in (0, 1):
        assert f"rank {rank}: FixedShardedManager passed its contract (1 check" in output
        assert f"rank {rank}: all-reduce gave 2" in output


@pytest.mark.skipif(not TWO_GPUS, reason=TWO_GPUS_REASON)
def test_torchrun_nccl_rank0_staging_fails_on_rank1_only() -> None:
    code, output, seconds = torchrun("rank0", gpus=True)
    check_failed_job(code, output, seconds)
    assert "expected int64[3] cuda:1 (current), got int64[3] cuda:0 (device)" in output
    assert "staging on cuda:0" in output  # rank 0's cuda:0 is its own device
    assert seconds < 120, f"the job took {seconds:.1f} s to fail"


@pytest.mark.skipif(not TWO_GPUS, reason=TWO_GPUS_REASON)
def test_torchrun_nccl_fixed_managers_pass() -> None:
    code, output, _ = torchrun("fixed", gpus=True)
    assert code == 0, output
    assert "rank 0: FixedShardedManager passed its contract (1 check, staging on cuda:0" in output
    assert "rank 1: FixedShardedManager passed its contract (1 check, staging on cuda:1" in output
    assert "rank 1: all-reduce gave 2" in output


def test_the_rank_comes_from_an_initialised_process_group_without_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixture_contracts: list[HookContract]
) -> None:
    import torch.distributed as dist

    for name in ("RANK", "LOCAL_RANK", "WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)
    store = dist.FileStore(str(tmp_path / "store"), 1)
    dist.init_process_group("gloo", store=store, rank=0, world_size=1)
    try:
        with enforce(fixture_contracts), pytest.raises(ContractViolation) as caught:
            kvf.WrongDtypeM3KVCacheManagerV2()
    finally:
        dist.destroy_process_group()
    assert (caught.value.rank, caught.value.world_size, caught.value.local_rank) == (0, 1, None)
    assert "  process: rank 0 of 1, host " in str(caught.value)


def test_the_runtime_adds_no_collective_operation() -> None:
    collectives = re.compile(
        r"\b(all_reduce|all_gather\w*|reduce_scatter\w*|broadcast\w*|barrier|monitored_barrier|"
        r"gather|scatter|send|recv|isend|irecv|all_to_all\w*|new_group|TCPStore|FileStore)\s*\("
    )
    runtime = ROOT / "hookguard" / "runtime"
    found = [
        f"{path.name}: {match.group(0)}"
        for path in sorted(runtime.glob("*.py"))
        for match in collectives.finditer(path.read_text())
    ]
    assert found == []
