"""``contracts record``: contracts written from passing runs, enforced on the fixture family."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

import kv_cache_fixture as kvf
import pytest
import torch
from runtime_support import FIXTURES

from hookguard.contracts import HookContract, parse_contracts
from hookguard.runtime import ContractViolation, enforce, verify
from hookguard.runtime.record import RecordError, record

HOOK = "kv_cache_fixture.manager.KVCacheManagerV2._prepare_page_table_tensor"
CONFIGS = "kv_cache_fixture.configs:build_configurations"


@pytest.fixture(scope="module")
def recorded_text() -> str:
    return record(HOOK, [CONFIGS], paths=[FIXTURES]).toml()


@pytest.fixture
def recorded(recorded_text: str) -> list[HookContract]:
    return parse_contracts(recorded_text, "recorded.toml")


def fields_of(contract: HookContract) -> dict[str, tuple[str | None, Any]]:
    return {spec.name: (when, spec) for spec, when in contract.all_fields()}


@pytest.mark.parametrize("scratch", [False, True])
@pytest.mark.parametrize("cls", [kvf.KVCacheManagerV2, kvf.FixedM3KVCacheManagerV2])
def test_recorded_contract_passes_the_base_and_the_fixed_subclass(
    cls: type, scratch: bool, recorded: list[HookContract]
) -> None:
    with enforce(recorded) as enforcer:
        manager = cls(enable_swa_scratch_reuse=scratch, num_pools=3, num_local_layers=7)
    assert enforcer.checks == 1
    assert verify(manager, recorded) == []


@pytest.mark.parametrize(
    ("cls", "expected"),
    [
        (kvf.HalfFixedM3KVCacheManagerV2, ("_device_kv_cache_block_offsets_input", "missing")),
        (kvf.WrongDtypeM3KVCacheManagerV2, ("kv_cache_pool_mapping", "dtype")),
        (kvf.WrongDeviceM3KVCacheManagerV2, ("host_kv_cache_block_offsets", "device")),
    ],
    ids=lambda x: getattr(x, "__name__", ""),
)
def test_recorded_contract_fails_the_broken_subclasses(
    cls: type, expected: tuple[str, str], recorded: list[HookContract]
) -> None:
    with enforce(recorded), pytest.raises(ContractViolation) as caught:
        cls(enable_swa_scratch_reuse=True)
    assert (caught.value.violations[0].field, caught.value.violations[0].kind) == expected


def test_the_stale_subclass_fails_through_the_base_hook(recorded: list[HookContract]) -> None:
    # renamed_from is not recorded: the dead override leaves the generic base code to run,
    # whose own assertion fails (the hand-written contract names the stale override instead)
    with enforce(recorded), pytest.raises(AssertionError, match="exact_div"):
        kvf.StaleM3KVCacheManagerV2()


def test_recorded_matches_the_hand_written_contract_field_for_field(
    recorded: list[HookContract], fixture_contracts: list[HookContract]
) -> None:
    mine, theirs = fields_of(recorded[0]), fields_of(fixture_contracts[0])
    assert list(mine) == list(theirs)
    for name, (when, spec) in theirs.items():
        got_when, got = mine[name]
        assert got_when == when, name
        assert got.dtype == spec.dtype, name
        assert got.shape == spec.shape, name
        assert got.type == spec.type and got.items == spec.items, name
        # the differences, explained in docs/contracts.md:
        if spec.device == "current":  # this process's device, observed as such
            assert got.device == ("cuda:current" if torch.cuda.is_available() else "cpu")
        else:
            assert got.device == spec.device, name
        if spec.kind == "tensor":  # pinning is observable only with CUDA; contiguity always
            on_host = spec.device == "cpu"
            assert got.pinned == (spec.pinned if on_host and torch.cuda.is_available() else None)
            assert got.contiguous is True
    assert recorded[0].renamed_from == () and recorded[0].invariants == ()


def test_ambiguous_choices_are_commented(recorded_text: str) -> None:
    assert (
        "# dimension 0: num_attention_op_pools chosen (most words shared with the field, then "
        "fewest words); also fit in every call: num_pools"
    ) in recorded_text
    assert 'attr = "enable_swa_scratch_reuse"  # truthy in exactly the 3 of 5 calls' in (
        recorded_text
    )
    assert "# Recorded: type, dtype, device, pinned, contiguous, shape." in recorded_text


def test_one_configuration_gives_literals_and_says_so() -> None:
    text = record(HOOK, ["kv_cache_fixture.configs:build_one"], paths=[FIXTURES]).toml()
    (contract,) = parse_contracts(text)
    assert contract.fields["kv_cache_pool_pointers"].shape == (2, 2)
    assert "# Few calls: sizes that never varied are literals" in text
    assert "2 in every call; also equal to num_attention_op_pools, num_pools every time" in text


def test_a_pytest_node_id_is_a_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    test_file = tmp_path / "test_build.py"
    test_file.write_text(
        textwrap.dedent(
            """
            import pytest
            import kv_cache_fixture as kvf

            @pytest.mark.parametrize("pools", [1, 2, 5])
            def test_build(pools):
                kvf.FixedM3KVCacheManagerV2(num_pools=pools, num_local_layers=2 * pools + 1)
            """
        )
    )
    monkeypatch.chdir(tmp_path)
    recording = record(HOOK, [f"{test_file}::test_build"], paths=[FIXTURES])
    assert len(recording.calls) == 3
    classes = {c.cls for c in recording.calls}
    assert classes == {"kv_cache_fixture.minimax_m3.FixedM3KVCacheManagerV2"}
    (contract,) = parse_contracts(recording.toml())
    assert contract.cls == "kv_cache_fixture.manager.KVCacheManagerV2"
    assert contract.fields["kv_cache_pool_mapping"].shape == ("num_local_layers", 2)
    assert contract.fields["index_scales"].shape == ("num_pools",)


def test_a_failing_run_records_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "test_bad.py").write_text("def test_bad():\n    assert False\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(RecordError, match="pytest exited 1; recording needs a passing run"):
        record(HOOK, ["test_bad.py::test_bad"], paths=[FIXTURES])
    with pytest.raises(RecordError, match=r"expected package\.module\.Class\.method"):
        record("Class.method", [CONFIGS])
    with pytest.raises(RecordError, match="cannot import no_such_module"):
        record(HOOK, ["no_such_module:main"])
    with pytest.raises(RecordError, match="the commands never called it"):
        record(HOOK, ["kv_cache_fixture.manager:default_device"], paths=[FIXTURES])


SYNTHETIC = """
class Base:
    def __init__(self, n, flag):
        self.n = n
        self.flag = flag
        self.hook(n)

    def hook(self, n):
        self.table = [0.0] * (2 * n)
        self.name = "x" * n
        self.handle = object()
        if n % 2:
            self.odd_only = n  # set exactly while flag is truthy
        if n == 2:
            self.rare = 1  # no attribute says when


class Adjusting(Base):
    def hook(self, n):
        super().hook(n)
        self.table = self.table + [1.0]  # set after super(): the outermost return counts


def run():
    for n in (1, 2, 3, 4):
        Adjusting(n, flag=bool(n % 2))
"""


def test_outermost_return_relations_and_what_is_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "synthetic_record.py").write_text(SYNTHETIC)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "synthetic_record", raising=False)
    recording = record("synthetic_record.Base.hook", ["synthetic_record:run"])
    assert len(recording.calls) == 4  # once per object, at the outermost return
    text = recording.toml()
    (contract,) = parse_contracts(text)
    assert contract.fields["table"].shape == ("*",)  # 2n + 1: no exact relation of the kinds
    assert "varied (3, 5, 7, 9) with no exact relation" in text
    assert contract.fields["table"].items == "float"
    assert contract.fields["name"].type == "str" and contract.fields["name"].shape == ("n",)
    assert contract.fields["handle"].type is None
    assert "# a object: only its presence (not None) is checked" in text
    [clause] = contract.when  # odd_only: set exactly while flag (n % 2) was truthy
    assert clause.attr == "flag" and list(clause.fields) == ["odd_only"]
    assert "# rare: set in 1 of 4 calls, and no attribute was truthy in exactly those" in text
    assert "rare" not in contract.fields


# -- the command line ---------------------------------------------------------------------------


def test_the_cli_writes_the_recorded_contract(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from hookguard.cli import main

    monkeypatch.chdir(tmp_path)  # -o writes inside the checkout only (test_write_safety.py)
    out = tmp_path / "recorded.toml"
    code = main(["contracts", "record", HOOK, CONFIGS, "--path", str(FIXTURES), "-o", str(out)])
    assert code == 0
    (contract,) = parse_contracts(out.read_text(), str(out))
    assert contract.fields["index_scales"].shape == ("num_pools",)
    err = capsys.readouterr().err
    assert f"hookguard: recorded 5 calls of {HOOK} into {out}" in err


def test_the_cli_prints_to_stdout_and_fails_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from hookguard.cli import main

    assert main(["contracts", "record", HOOK, CONFIGS, "--path", str(FIXTURES)]) == 0
    out = capsys.readouterr().out
    assert parse_contracts(out)[0].method == "_prepare_page_table_tensor"
    assert main(["contracts", "record", "Nope.hook", CONFIGS]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "hookguard: error: contracts record: Nope.hook: expected package.module.Class.method"
    ]
    (tmp_path / "test_bad.py").write_text("def test_bad():\n    assert False\n")
    monkeypatch.chdir(tmp_path)
    assert main(["contracts", "record", HOOK, "test_bad.py", "--path", str(FIXTURES)]) == 2
    err = capsys.readouterr().err
    assert "recording needs a passing run" in err.strip().splitlines()[-1]


def test_recording_needs_nothing_of_the_static_checker(tmp_path: Path) -> None:
    """The GPU machines have torch and pytest but not msgspec or libcst: recording works there."""
    import os
    import subprocess

    root = str(Path(__file__).resolve().parents[2])  # the checkout, wherever hookguard runs from
    path = os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])])
    script = textwrap.dedent(f"""
        import sys
        sys.modules["msgspec"] = None  # an import of either now raises ImportError
        sys.modules["libcst"] = None
        from hookguard.cli import main
        sys.exit(main(["contracts", "record", {HOOK!r}, {CONFIGS!r},
                       "--path", {str(FIXTURES)!r}, "-o", {str(tmp_path / "c.toml")!r}]))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=tmp_path, timeout=300, env={**os.environ, "PYTHONPATH": path})
    assert done.returncode == 0, done.stderr
    (contract,) = parse_contracts((tmp_path / "c.toml").read_text())
    assert contract.method == "_prepare_page_table_tensor"
