"""A contract that matches no class checks nothing, and says so (issue 26, item 4).

Under ``pytest --hookguard-contracts`` a contract naming a class or a method that does not exist
used to end the session with ``0 hook contract violations``, as if it had found nothing wrong.
Now each one is a warning at the contract's ``file:line`` naming the ``class.method`` it names,
as pytest reports an unknown marker; ``enforce()`` warns the same way when it is uninstalled.
The tests build real managers (torch tensors) so that the matched contract really runs.
"""

from __future__ import annotations

import os
import textwrap
import warnings
from pathlib import Path

import pytest
from runtime_support import CONTRACTS, FIXTURES, ROOT

from hookguard.contracts import load_contracts

PLUGIN = ("-p", "no:hookguard", "-p", "hookguard.runtime.pytest_plugin")
MATCHED = (CONTRACTS / "kv_cache_fixture.toml").read_text()
WRONG = textwrap.dedent(
    """
    [[hook]]
    class = "kv_cache_fixture.manager.KVCacheManagerV3"
    method = "_prepare_page_table_tensor"
    [hook.fields.kv_cache_pool_mapping]
    dtype = "int32"

    [[hook]]
    class = "kv_cache_fixture.manager.KVCacheManagerV2"
    method = "_prepare_page_table_tensors"
    [hook.fields.kv_cache_pool_mapping]
    dtype = "int32"
    """
)
TESTS = textwrap.dedent(
    """
    import kv_cache_fixture as kvf

    def test_fixed():
        manager = kvf.FixedM3KVCacheManagerV2(enable_swa_scratch_reuse=True)
        assert manager.kv_cache_pool_mapping.dtype.is_floating_point is False
    """
)


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), str(FIXTURES)]))
    monkeypatch.delenv("HOOKGUARD_RUNTIME", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")


def _contracts(pytester: pytest.Pytester, wrong: bool = True) -> Path:
    folder = pytester.mkdir("contracts")
    (folder / "kv.toml").write_text(MATCHED)
    if wrong:
        (folder / "wrong.toml").write_text(WRONG)
    return folder


def test_unmatched_contracts_are_reported(pytester: pytest.Pytester, env: None) -> None:
    folder = _contracts(pytester)
    pytester.makepyfile(test_managers=TESTS)
    result = pytester.runpytest_subprocess(*PLUGIN, f"--hookguard-contracts={folder}")
    result.assert_outcomes(passed=1, warnings=2)
    assert result.ret == pytest.ExitCode.OK
    text = result.stdout.str()
    assert "warnings summary" in text
    wrong = folder / "wrong.toml"
    # the nonexistent class: located at its contract, with the module's close names
    assert (f"{wrong}:2: UnmatchedContractWarning: hookguard: contract for "
            "kv_cache_fixture.manager.KVCacheManagerV3._prepare_page_table_tensor matched no "
            "class: module kv_cache_fixture.manager has no KVCacheManagerV3 (did you mean "
            "KVCacheManagerV2?)") in text, text
    # the nonexistent method of a real class
    assert (f"{wrong}:8: UnmatchedContractWarning: hookguard: contract for "
            "kv_cache_fixture.manager.KVCacheManagerV2._prepare_page_table_tensors matched no "
            "class: kv_cache_fixture.manager.KVCacheManagerV2 has no method "
            "_prepare_page_table_tensors (did you mean _prepare_page_table_tensor or "
            "_prepare_swa_scratch_copy_tensors?)") in text
    # the matched contract is enforced and not reported
    assert "kv.toml" not in text
    assert ("hookguard: 0 hook contract violations; 2 contracts matched no class and checked "
            "nothing (see the warnings summary)") in text


def test_matched_contract_alone_reports_nothing(pytester: pytest.Pytester, env: None) -> None:
    folder = _contracts(pytester, wrong=False)
    pytester.makepyfile(test_managers=TESTS + textwrap.dedent(
        """
        def test_broken():
            kvf.WrongDtypeM3KVCacheManagerV2()
        """))
    result = pytester.runpytest_subprocess(*PLUGIN, f"--hookguard-contracts={folder}")
    result.assert_outcomes(passed=1, failed=1)  # enforced: the wrong dtype fails
    text = result.stdout.str()
    assert "UnmatchedContractWarning" not in text and "matched no class" not in text
    assert "hookguard: 1 hook contract violation\n" in text + "\n"


def test_module_never_imported(pytester: pytest.Pytester, env: None) -> None:
    """A contract whose module no test imports checks nothing either; the reason says which."""
    folder = _contracts(pytester, wrong=False)
    pytester.makepyfile(test_other="def test_x():\n    assert True\n")
    result = pytester.runpytest_subprocess(*PLUGIN, f"--hookguard-contracts={folder}")
    result.assert_outcomes(passed=1, warnings=1)
    assert ("kv_cache_fixture.manager.KVCacheManagerV2._prepare_page_table_tensor matched no "
            "class: module kv_cache_fixture.manager was not imported while it was enforced"
            ) in result.stdout.str()


def test_warning_filter_error_fails_the_session(pytester: pytest.Pytester, env: None) -> None:
    """As ``--strict-markers`` for markers: the filter makes an unmatched contract fail."""
    folder = _contracts(pytester)
    pytester.makepyfile(test_managers=TESTS)
    result = pytester.runpytest_subprocess(
        *PLUGIN, f"--hookguard-contracts={folder}",
        "-W", "error::hookguard.runtime.enforcer.UnmatchedContractWarning")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    text = result.stdout.str()
    assert "INTERNALERROR" not in text + result.stderr.str()
    assert "hookguard: contracts that matched no class (errors)" in text
    assert "ERROR " + str(folder / "wrong.toml") + ":2: contract for " in text
    assert "2 contracts matched no class and checked nothing\n" in text


def test_enforce_warns_when_uninstalled(tmp_path: Path) -> None:
    """``enforce()`` outside pytest: each unmatched contract warns at uninstall, at its line."""
    from kv_cache_fixture import FixedM3KVCacheManagerV2, WrongDtypeM3KVCacheManagerV2

    from hookguard import ContractViolation
    from hookguard.runtime.enforcer import UnmatchedContractWarning, enforce

    (tmp_path / "kv.toml").write_text(MATCHED)
    (tmp_path / "wrong.toml").write_text(WRONG)
    contracts = load_contracts(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with enforce(contracts) as enforcer:
            FixedM3KVCacheManagerV2()
            with pytest.raises(ContractViolation):  # the matched contract is enforced
                WrongDtypeM3KVCacheManagerV2()
            assert len(enforcer.unmatched()) == 2
            assert not [w for w in caught if w.category is UnmatchedContractWarning]
    found = [w for w in caught if w.category is UnmatchedContractWarning]
    assert [(Path(w.filename).name, w.lineno) for w in found] == [("wrong.toml", 2),
                                                                 ("wrong.toml", 8)]
    messages = [str(w.message) for w in found]
    assert "KVCacheManagerV3._prepare_page_table_tensor matched no class" in messages[0]
    assert "has no method _prepare_page_table_tensors" in messages[1]
    assert not any("kv.toml" in m for m in messages)


def test_enforce_all_matched_is_silent() -> None:
    from kv_cache_fixture import FixedM3KVCacheManagerV2

    from hookguard.runtime.enforcer import enforce

    contracts = load_contracts(CONTRACTS / "kv_cache_fixture.toml")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with enforce(contracts):
            FixedM3KVCacheManagerV2()
    assert not [w for w in caught if "matched no class" in str(w.message)]


def test_warn_unmatched_off_and_disabled_runtime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hookguard.runtime.enforcer import Enforcer, enforce

    (tmp_path / "wrong.toml").write_text(WRONG)
    contracts = load_contracts(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        quiet = Enforcer(contracts, warn_unmatched=False).install()
        assert len(quiet.unmatched()) == 2
        quiet.uninstall()
        monkeypatch.setenv("HOOKGUARD_RUNTIME", "0")
        with enforce(contracts) as off:  # nothing installed, nothing meant to match
            assert off.unmatched() == []
    assert not [w for w in caught if "matched no class" in str(w.message)]
