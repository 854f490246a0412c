"""The pytest plugin in a subprocess (pytester): --hookguard-contracts and the fixture."""

from __future__ import annotations

import os
import re
import textwrap

import pytest
from runtime_support import CONTRACTS, FIXTURES, ROOT

# The plugin is an entry point once hookguard is installed; on a bare checkout (PYTHONPATH=.) it
# is not. Block the entry point and load the module by name: the same in both cases.
PLUGIN = ("-p", "no:hookguard", "-p", "hookguard.runtime.pytest_plugin")
CONTRACT = str(CONTRACTS / "kv_cache_fixture.toml")

TESTS = textwrap.dedent(
    """
    import pytest
    import kv_cache_fixture as kvf

    # defined while test modules are imported: enforcement must already be on
    class LocalBroken(kvf.FixedM3KVCacheManagerV2):
        def _prepare_page_table_tensor(self, index_mapper_capacity):
            super()._prepare_page_table_tensor(index_mapper_capacity)
            self.index_scales = self.index_scales.float()

    def test_fixed():
        kvf.FixedM3KVCacheManagerV2(enable_swa_scratch_reuse=True)

    def test_base():
        kvf.KVCacheManagerV2(enable_swa_scratch_reuse=True)

    def test_wrong_dtype():
        kvf.WrongDtypeM3KVCacheManagerV2()

    def test_wrong_device():
        kvf.WrongDeviceM3KVCacheManagerV2()

    def test_half_fixed():
        kvf.HalfFixedM3KVCacheManagerV2(enable_swa_scratch_reuse=True)

    def test_stale():
        kvf.StaleM3KVCacheManagerV2()

    def test_local_subclass():
        LocalBroken()

    def test_swallowed():
        try:
            kvf.WrongDtypeM3KVCacheManagerV2()
        except Exception:
            pass

    @pytest.fixture
    def broken_manager():
        return kvf.HalfFixedM3KVCacheManagerV2(enable_swa_scratch_reuse=True)

    def test_fixture_setup(broken_manager):
        pass
    """
)

FAILING = {
    "test_wrong_dtype": "kv_cache_pool_mapping: expected int32[4, 2]",
    "test_wrong_device": "host_kv_cache_block_offsets: expected int32[2, 3, 2, 8] cpu",
    "test_half_fixed": "_device_copy_idx_staging: missing",
    "test_stale": "StaleM3KVCacheManagerV2._build_pool_mapping_tensors",
    "test_local_subclass": "index_scales: expected int32[2]",
    "test_swallowed": "kv_cache_pool_mapping: expected int32[4, 2]",
}


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), str(FIXTURES)]))
    monkeypatch.delenv("HOOKGUARD_RUNTIME", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")


def test_contracts_enforced_for_the_whole_run(pytester: pytest.Pytester, env: None) -> None:
    pytester.makepyfile(test_managers=TESTS)
    result = pytester.runpytest_subprocess(*PLUGIN, f"--hookguard-contracts={CONTRACT}", "-rfE")
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed") == 2, result.stdout.str()
    assert outcomes.get("failed") == len(FAILING)
    assert outcomes.get("errors", outcomes.get("error")) == 1
    text = result.stdout.str()
    for test, words in FAILING.items():
        assert f"FAILED test_managers.py::{test}" in text
        assert words in text, test
    assert "ERROR test_managers.py::test_fixture_setup" in text
    assert "hookguard: 1 hook contract enforced" in text
    assert "hookguard: 7 hook contract violations\n" in text  # the contract matched its class
    assert "matched no class" not in text and "UnmatchedContractWarning" not in text
    summary = text[text.index("hookguard: hook contract violations") :]
    assert (
        "test_managers.py::test_wrong_dtype: kv_cache_fixture.minimax_m3."
        "WrongDtypeM3KVCacheManagerV2._prepare_page_table_tensor at "
    ) in summary
    assert re.search(
        r"test_wrong_dtype: \S+ at \S*minimax_m3\.py:\d+\n"
        r"    kv_cache_pool_mapping: expected int32\[4, 2\] cpu.*, got int64\[4, 2\] .*\(dtype\)\n",
        summary,
    ), summary
    assert "test_managers.py::test_swallowed: " in summary  # swallowed by the code, still listed
    assert "test_managers.py::test_fixture_setup (setup): " in summary
    assert "    _device_copy_idx_staging: missing, expected int64[3]" in summary
    assert "test_fixed" not in summary and "test_base" not in summary
    assert (
        "hook contract violated: kv_cache_fixture.minimax_m3.WrongDtypeM3KVCacheManagerV2" in text
    )
    assert "implementation that ran:" in text and "minimax_m3.py:" in text


def test_without_the_option_nothing_is_enforced(pytester: pytest.Pytester, env: None) -> None:
    pytester.makepyfile(test_managers=TESTS.replace("def test_stale", "def _stale"))
    result = pytester.runpytest_subprocess(*PLUGIN)
    result.assert_outcomes(passed=len(FAILING) + 2, errors=0)
    text = result.stdout.str()
    # not "hookguard" alone: the checkout's own path may contain it (issue 13, item 1)
    assert "hookguard:" not in text and "hook contract" not in text


def test_ini_option(pytester: pytest.Pytester, env: None) -> None:
    pytester.makeini(f"[pytest]\nhookguard_contracts = {CONTRACT}\n")
    pytester.makepyfile(
        test_one="import kv_cache_fixture as k\n"
        "def test_x():\n    k.WrongDtypeM3KVCacheManagerV2()\n"
    )
    result = pytester.runpytest_subprocess(*PLUGIN)
    result.assert_outcomes(failed=1)


def test_warn_mode_and_values(pytester: pytest.Pytester, env: None) -> None:
    pytester.makepyfile(
        test_warn=textwrap.dedent(
            """
            import kv_cache_fixture as kvf

            class ScalesOff(kvf.FixedM3KVCacheManagerV2):
                def _prepare_page_table_tensor(self, index_mapper_capacity):
                    super()._prepare_page_table_tensor(index_mapper_capacity)
                    self._index_scale_ints = [0] * self.num_pools

            def test_dtype_warns():
                kvf.WrongDtypeM3KVCacheManagerV2()

            def test_values_warn():
                ScalesOff()
            """
        )
    )
    args = (*PLUGIN, f"--hookguard-contracts={CONTRACT}", "--hookguard-mode", "warn")
    result = pytester.runpytest_subprocess(*args, "--hookguard-values", "-W", "always")
    result.assert_outcomes(passed=2)
    text = result.stdout.str()
    assert "ContractWarning" in text
    assert "_index_scale_ints: value check failed: expected equals index_scales.tolist()" in text
    result = pytester.runpytest_subprocess(*args, "-W", "always")
    assert "_index_scale_ints" not in result.stdout.str()  # values are opt-in


def test_hookguard_runtime_0(
    pytester: pytest.Pytester, env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOOKGUARD_RUNTIME", "0")
    pytester.makepyfile(test_managers=TESTS)
    result = pytester.runpytest_subprocess(*PLUGIN, f"--hookguard-contracts={CONTRACT}")
    # only the stale variant fails, with its own exact_div AssertionError
    result.assert_outcomes(passed=len(FAILING) + 2, failed=1)
    assert "exact_div" in result.stdout.str()
    assert "HOOKGUARD_RUNTIME=0" in result.stdout.str()


def test_bad_contract_is_a_usage_error(pytester: pytest.Pytester, env: None) -> None:
    bad = pytester.makefile(
        ".toml",
        bad='[[hook]]\nclass = "a.B"\nmethod = "h"\nfields = 3\n'
        '[[hook]]\nclass = "a.C"\nmethod = "h"\n[hook.fields.x]\ndtype = "i32"\n',
    )
    result = pytester.runpytest_subprocess(*PLUGIN, f"--hookguard-contracts={bad}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"hookguard: {bad}:4: fields must be a table" in result.stderr.str()


def test_hookguard_contracts_fixture(pytester: pytest.Pytester, env: None) -> None:
    pytester.makepyfile(
        test_fixture=textwrap.dedent(
            f"""
            import pytest
            import kv_cache_fixture as kvf
            from hookguard import ContractViolation

            @pytest.mark.hookguard_allow_violations
            def test_verify(hookguard_contracts):
                assert [c.method for c in hookguard_contracts.contracts] == [
                    "_prepare_page_table_tensor"]
                manager = kvf.WrongDtypeM3KVCacheManagerV2.unprepared()
                with pytest.raises(ContractViolation):  # enforced for the whole run
                    manager._prepare_page_table_tensor(manager.index_mapper_capacity)
                found = hookguard_contracts.verify(manager)
                assert [(v.field, v.kind) for v in found] == [("kv_cache_pool_mapping", "dtype")]
                with pytest.raises(ContractViolation):
                    hookguard_contracts.check(manager)
                hookguard_contracts.check(kvf.FixedM3KVCacheManagerV2())

            def test_load(hookguard_contracts):
                hookguard_contracts.contracts = []
                hookguard_contracts.load({CONTRACT!r})
                assert hookguard_contracts.verify(kvf.FixedM3KVCacheManagerV2()) == []
            """
        )
    )
    result = pytester.runpytest_subprocess(*PLUGIN, f"--hookguard-contracts={CONTRACT}")
    result.assert_outcomes(passed=2)
    assert "hookguard: 1 hook contract violation\n" in result.stdout.str() + "\n"
