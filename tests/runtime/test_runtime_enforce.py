"""enforce() and verify() on the KV cache fixture family, with real torch tensors."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

import kv_cache_fixture as kvf
import pytest
import torch
from kv_cache_fixture.manager import KVCacheManagerV2
from runtime_support import CONTRACTS, FIXTURES, ROOT

import hookguard
from hookguard.contracts import HookContract, parse_contracts
from hookguard.runtime import (
    ContractViolation,
    ContractWarning,
    Enforcer,
    Violation,
    enforce,
    verify,
)

SCRATCH_FIELDS = [
    "_device_kv_cache_block_offsets_input",
    "_device_copy_idx_staging",
    "_device_attention_op_block_offsets_staging",
    "_device_block_positions",
    "_host_copy_idx_staging",
]

#: What each variant must yield, as (field, kind), with scratch reuse on.
EXPECTED: dict[type, list[tuple[str, str]]] = {
    kvf.KVCacheManagerV2: [],
    kvf.FixedM3KVCacheManagerV2: [],
    kvf.HalfFixedM3KVCacheManagerV2: [(name, "missing") for name in SCRATCH_FIELDS],
    kvf.WrongDtypeM3KVCacheManagerV2: [("kv_cache_pool_mapping", "dtype")],
    kvf.WrongDeviceM3KVCacheManagerV2: [("host_kv_cache_block_offsets", "device")],
}
CONSTRUCTIBLE = list(EXPECTED)


def kinds(violations: list[Violation] | tuple[Violation, ...]) -> list[tuple[str, str]]:
    return [(v.field, v.kind) for v in violations]


# -- enforce ------------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", CONSTRUCTIBLE, ids=lambda c: c.__name__)
def test_enforce_each_variant(cls: type, fixture_contracts: list[HookContract]) -> None:
    with enforce(fixture_contracts) as enforcer:
        if EXPECTED[cls]:
            with pytest.raises(ContractViolation) as info:
                cls(enable_swa_scratch_reuse=True)
            assert kinds(info.value.violations) == EXPECTED[cls]
        else:
            cls(enable_swa_scratch_reuse=True)
        assert enforcer.checks == 1


@pytest.mark.parametrize("cls", CONSTRUCTIBLE, ids=lambda c: c.__name__)
def test_enforce_with_values_adds_nothing_for_metadata_variants(
    cls: type, fixture_contracts: list[HookContract]
) -> None:
    with (
        enforce(fixture_contracts, mode="warn", values=True) as enforcer,
        warnings.catch_warnings(record=True),
    ):
        warnings.simplefilter("always")
        cls(enable_swa_scratch_reuse=True)
    found = [v for error in enforcer.history for v in error.violations]
    assert kinds(found) == EXPECTED[cls]


def test_half_fixed_conforms_without_scratch_reuse(fixture_contracts: list[HookContract]) -> None:
    with enforce(fixture_contracts):
        manager = kvf.HalfFixedM3KVCacheManagerV2(enable_swa_scratch_reuse=False)
    assert verify(manager, fixture_contracts, values=True) == []


def test_half_fixed_without_hookguard_fails_much_later() -> None:
    manager = kvf.HalfFixedM3KVCacheManagerV2(enable_swa_scratch_reuse=True)
    with pytest.raises(AttributeError, match="_host_copy_idx_staging"):
        manager.copy_batch_block_offsets([0, 1])


def test_stale_override_reported_when_the_base_hook_crashes(
    fixture_contracts: list[HookContract],
) -> None:
    # Without hookguard: the generic K+V code runs and its exact_div fires, a symptom only.
    with pytest.raises(AssertionError, match="exact_div"):
        kvf.StaleM3KVCacheManagerV2()
    with enforce(fixture_contracts), pytest.raises(ContractViolation) as info:
        kvf.StaleM3KVCacheManagerV2()
    error = info.value
    (violation,) = error.violations
    assert (violation.field, violation.kind) == ("_build_pool_mapping_tensors", "stale-override")
    assert violation.expected == "override _prepare_page_table_tensor"
    assert "StaleM3KVCacheManagerV2._build_pool_mapping_tensors" in violation.actual
    assert "minimax_m3.py:" in violation.actual
    assert "never runs" in str(error) and "_prepare_page_table_tensor" in str(error)
    assert isinstance(error.__cause__, AssertionError)
    assert "exact_div" in str(error.__cause__)
    # the implementation that ran is the base's hook
    assert error.implementation.endswith(
        f"manager.py:{KVCacheManagerV2._prepare_page_table_tensor.__code__.co_firstlineno}"
    )


def test_stale_override_reported_when_the_hook_succeeds(
    fixture_contracts: list[HookContract],
) -> None:
    class StaleButHarmless(KVCacheManagerV2):  # K+V layout: the generic code works
        def _build_pool_mapping_tensors(self) -> tuple[torch.Tensor, torch.Tensor]:
            raise NotImplementedError

    with enforce(fixture_contracts), pytest.raises(ContractViolation) as info:
        StaleButHarmless()
    assert kinds(info.value.violations) == [("_build_pool_mapping_tensors", "stale-override")]
    assert verify(object.__new__(StaleButHarmless), fixture_contracts)[0].kind == "stale-override"


def test_report_names_class_hook_implementation_and_metadata(
    fixture_contracts: list[HookContract],
) -> None:
    with enforce(fixture_contracts), pytest.raises(ContractViolation) as info:
        kvf.WrongDtypeM3KVCacheManagerV2()
    error = info.value
    text = error.plain
    cls = kvf.WrongDtypeM3KVCacheManagerV2
    hook = cls.__dict__["_prepare_page_table_tensor"]
    line = hook.__code__.co_firstlineno  # enforcement ended: the original is back
    assert (
        "kv_cache_fixture.minimax_m3.WrongDtypeM3KVCacheManagerV2._prepare_page_table_tensor"
        in text
    )
    assert f"minimax_m3.py:{line}" in text
    assert "contracts/kv_cache_fixture.toml:" in text
    pinned = " pinned" if torch.cuda.is_available() else ""
    assert (
        f"kv_cache_pool_mapping: expected int32[4, 2] cpu{pinned}, got int64[4, 2] cpu{pinned}"
        in text
    )
    (violation,) = error.violations
    assert (violation.expected, violation.actual) == ("int32", "int64")
    assert "tensor(" not in text  # metadata only, never a dump
    assert isinstance(error, AssertionError)
    assert hookguard.ContractViolation is ContractViolation


def test_rich_report_when_asked(fixture_contracts: list[HookContract]) -> None:
    (violation,) = verify(kvf.WrongDtypeM3KVCacheManagerV2.unprepared(), fixture_contracts)[:1]
    error = ContractViolation("a.B", "_hook", [violation], implementation="x.py:1", rich=True)
    assert "\x1b[" in str(error)
    assert "kv_cache_pool_pointers" in str(error)
    assert "\x1b[" not in error.plain


def test_outermost_call_is_checked_once_after_adjustments(
    fixture_contracts: list[HookContract],
) -> None:
    calls: list[str] = []

    class Adjusting(KVCacheManagerV2):
        def _prepare_page_table_tensor(self, index_mapper_capacity: int) -> None:
            super()._prepare_page_table_tensor(index_mapper_capacity)
            calls.append("after super")
            # breaks the contract inside super(), repairs it afterwards
            self.kv_cache_pool_mapping = self.kv_cache_pool_mapping.to(torch.int32)

    class BreaksAfterSuper(KVCacheManagerV2):
        def _prepare_page_table_tensor(self, index_mapper_capacity: int) -> None:
            super()._prepare_page_table_tensor(index_mapper_capacity)
            self.kv_offset = self.kv_offset.to(torch.int64)

    with enforce(fixture_contracts) as enforcer:
        Adjusting()
        assert enforcer.checks == 1
        assert calls == ["after super"]
        with pytest.raises(ContractViolation) as info:
            BreaksAfterSuper()
        assert enforcer.checks == 2
    # .to() copies into pageable memory: where CUDA makes pinning matter, that is reported too
    pinned = [("kv_offset", "pinned")] if torch.cuda.is_available() else []
    assert kinds(info.value.violations) == [("kv_offset", "dtype"), *pinned]
    assert "BreaksAfterSuper" in info.value.implementation or "test_runtime_enforce.py" in (
        info.value.implementation
    )


def test_subclass_defined_after_enforce_started(fixture_contracts: list[HookContract]) -> None:
    with enforce(fixture_contracts):

        class Late(kvf.FixedM3KVCacheManagerV2):
            def _prepare_page_table_tensor(self, index_mapper_capacity: int) -> None:
                super()._prepare_page_table_tensor(index_mapper_capacity)
                del self._index_scale_ints

        with pytest.raises(ContractViolation) as info:
            Late()
    assert kinds(info.value.violations) == [("_index_scale_ints", "missing")]
    assert "Late" in info.value.cls_name
    Late()  # uninstalled: no checks any more


def test_uninstall_restores_everything(fixture_contracts: list[HookContract]) -> None:
    before = {
        cls: dict(cls.__dict__)
        for cls in [KVCacheManagerV2, *EXPECTED, kvf.StaleM3KVCacheManagerV2]
    }
    enforcer = enforce(fixture_contracts)
    assert enforcer.installed
    assert (
        KVCacheManagerV2.__dict__["_prepare_page_table_tensor"]
        is not (before[KVCacheManagerV2]["_prepare_page_table_tensor"])
    )
    assert "__init_subclass__" in KVCacheManagerV2.__dict__
    enforcer.uninstall()
    for cls, namespace in before.items():
        assert dict(cls.__dict__) == namespace, cls
    kvf.WrongDtypeM3KVCacheManagerV2()  # no longer checked
    enforcer.uninstall()  # idempotent


def test_install_uninstall_pair_and_nesting(fixture_contracts: list[HookContract]) -> None:
    outer = Enforcer(fixture_contracts, mode="warn").install()
    inner = Enforcer(fixture_contracts).install()
    try:
        with pytest.raises(ContractViolation), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kvf.WrongDeviceM3KVCacheManagerV2()
    finally:
        outer.uninstall()  # out of order: the inner wrapper keeps working
    with pytest.raises(ContractViolation):
        kvf.WrongDeviceM3KVCacheManagerV2()
    inner.uninstall()
    kvf.WrongDeviceM3KVCacheManagerV2()


def test_warn_mode(fixture_contracts: list[HookContract]) -> None:
    seen: list[ContractViolation] = []
    with (
        enforce(fixture_contracts, mode="warn", on_violation=seen.append) as enforcer,
        pytest.warns(ContractWarning, match="kv_cache_pool_mapping"),
    ):
        manager = kvf.WrongDtypeM3KVCacheManagerV2()
    assert manager.kv_cache_pool_mapping.dtype == torch.int64
    assert seen == enforcer.history and len(seen) == 1


def test_hookguard_runtime_0_installs_nothing(
    fixture_contracts: list[HookContract], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOOKGUARD_RUNTIME", "0")
    before = dict(KVCacheManagerV2.__dict__)
    with enforce(fixture_contracts) as enforcer:
        assert dict(KVCacheManagerV2.__dict__) == before
        assert enforcer.installed is False
        kvf.WrongDtypeM3KVCacheManagerV2()
    assert enforcer.checks == 0
    # verify is an explicit call: it still works
    assert kinds(verify(kvf.WrongDtypeM3KVCacheManagerV2(), fixture_contracts)) == [
        ("kv_cache_pool_mapping", "dtype")
    ]


def test_enforce_accepts_a_path() -> None:
    with enforce(CONTRACTS / "kv_cache_fixture.toml"), pytest.raises(ContractViolation):
        kvf.WrongDtypeM3KVCacheManagerV2()


def test_class_imported_after_enforce(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "late_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "base.py").write_text(
        textwrap.dedent(
            """
            class Base:
                def __init__(self, n):
                    self.n = n
                    self._hook(n)

                def _hook(self, n):
                    self.table = [0] * n
            """
        )
    )
    (package / "sub.py").write_text(
        textwrap.dedent(
            """
            from late_pkg.base import Base

            class Sub(Base):
                def _hook(self, n):
                    self.table = [0] * (n + 1)
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    (contract,) = parse_contracts(
        '[[hook]]\nclass = "late_pkg.base.Base"\nmethod = "_hook"\n'
        '[hook.fields.table]\ntype = "list"\nshape = ["n"]\n'
    )
    with enforce([contract]):
        assert "late_pkg.base" not in sys.modules
        sub = importlib.import_module("late_pkg.sub")
        base = importlib.import_module("late_pkg.base")
        base.Base(3)
        with pytest.raises(ContractViolation) as info:
            sub.Sub(3)
    assert kinds(info.value.violations) == [("table", "shape")]
    assert info.value.violations[0].expected == "[n=3]"
    assert info.value.violations[0].actual == "[4]"
    for name in ("late_pkg.sub", "late_pkg.base", "late_pkg"):
        sys.modules.pop(name, None)


# -- verify -------------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", CONSTRUCTIBLE, ids=lambda c: c.__name__)
def test_verify_each_variant(cls: type, fixture_contracts: list[HookContract]) -> None:
    manager = cls(enable_swa_scratch_reuse=True)
    assert kinds(verify(manager, fixture_contracts)) == EXPECTED[cls]
    assert kinds(verify(manager, fixture_contracts, values=True)) == EXPECTED[cls]


def test_verify_stale_variant_with_the_unit_test_harness(
    fixture_contracts: list[HookContract],
) -> None:
    manager = kvf.StaleM3KVCacheManagerV2.unprepared()
    found = verify(manager, fixture_contracts)
    assert found[0].kind == "stale-override"
    assert [v.kind for v in found[1:]] == ["missing"] * 6  # the hook never ran
    # the hook itself still crashes in the generic formula
    with pytest.raises(AssertionError, match="exact_div"):
        manager._prepare_page_table_tensor(manager.index_mapper_capacity)


def test_verify_ignores_unrelated_objects(fixture_contracts: list[HookContract]) -> None:
    assert verify(object(), fixture_contracts) == []


def test_verify_shape_names_bind_across_fields() -> None:
    (contract,) = parse_contracts(
        '[[hook]]\nclass = "x.Y"\nmethod = "h"\n'
        '[hook.fields.a]\nshape = ["L", 2]\n'
        '[hook.fields.b]\nshape = ["L", "L * 2", "..."]\n'
        '[hook.fields.c]\nshape = ["*", "cap * 2"]\n'
    )

    class Y:
        pass

    Y.__module__, Y.__qualname__ = "x", "Y"
    obj = Y()
    obj.a = torch.zeros(3, 2)  # type: ignore[attr-defined]
    obj.b = torch.zeros(3, 6, 5, 5)  # type: ignore[attr-defined]
    obj.c = torch.zeros(1, 8)  # type: ignore[attr-defined]
    assert verify(obj, [contract], args={"cap": 4}) == []
    obj.b = torch.zeros(4, 8)  # type: ignore[attr-defined]
    (violation,) = verify(obj, [contract], args={"cap": 4})
    assert (violation.field, violation.kind) == ("b", "shape")
    assert violation.expected == "[L=3, L*2=6, ...]"
    assert violation.actual == "[4, 8]"
    (violation,) = verify(obj, [contract], args={"cap": 5})[1:]
    assert (violation.field, violation.expected, violation.actual) == (
        "c",
        "[*, cap*2=10]",
        "[1, 8]",
    )


# -- value checks -------------------------------------------------------------------------------


def _conforming() -> kvf.FixedM3KVCacheManagerV2:
    return kvf.FixedM3KVCacheManagerV2(enable_swa_scratch_reuse=True)


def test_values_zeros_positive_equals_invariants(fixture_contracts: list[HookContract]) -> None:
    manager = _conforming()
    assert verify(manager, fixture_contracts, values=True) == []
    manager.host_kv_cache_block_offsets[0, 1, 0, :3] = 7
    manager.index_scales[1] = 0
    manager._index_scale_ints[0] += 1
    manager.kv_cache_pool_mapping[2, 0] = 5  # a pool id past the pointer table
    assert verify(manager, fixture_contracts) == []  # metadata only: all fine
    found = verify(manager, fixture_contracts, values=True)
    by_field = {(v.field, v.kind): v for v in found}
    assert set(by_field) == {
        ("host_kv_cache_block_offsets", "value"),
        ("index_scales", "value"),
        ("_index_scale_ints", "value"),
        ("(invariant)", "invariant"),
    }
    assert by_field[("host_kv_cache_block_offsets", "value")].actual == "3 of 96 elements fail"
    assert by_field[("index_scales", "value")].expected == "all elements > 0"
    assert by_field[("_index_scale_ints", "value")].expected == "equals index_scales.tolist()"
    invariants = [v for v in found if v.kind == "invariant"]
    assert [v.expected for v in invariants] == [
        "kv_cache_pool_mapping[:, 0].max() < kv_cache_pool_pointers.shape[0]",
        "(kv_cache_pool_pointers[kv_cache_pool_mapping[:, 0].long(), 0] != 0).all()",
    ]
    assert invariants[1].actual.startswith("raised IndexError")  # pool 5 does not exist


def test_values_on_when_fields_and_range(fixture_contracts: list[HookContract]) -> None:
    manager = _conforming()
    manager._device_block_positions = manager._device_block_positions.flip(0)
    manager.kv_offset[0] = 2
    manager.kv_cache_pool_pointers[1, 1] = 1
    found = verify(manager, fixture_contracts, values=True)
    assert kinds(found) == [
        ("kv_offset", "value"),
        ("_device_block_positions", "value"),
        ("(invariant)", "invariant"),
    ]
    assert found[0].expected == "all elements in [0, 1]"
    assert found[1].condition == "enable_swa_scratch_reuse"
    assert found[2].expected == "(kv_cache_pool_pointers[:, 1] == 0).all()"


def test_values_mode_through_enforce(fixture_contracts: list[HookContract]) -> None:
    class ScalesOff(kvf.FixedM3KVCacheManagerV2):
        def _prepare_page_table_tensor(self, index_mapper_capacity: int) -> None:
            super()._prepare_page_table_tensor(index_mapper_capacity)
            self._index_scale_ints = [s + 1 for s in self._index_scale_ints]

    with enforce(fixture_contracts):
        ScalesOff()  # metadata only
    with enforce(fixture_contracts, values=True), pytest.raises(ContractViolation) as info:
        ScalesOff()
    assert kinds(info.value.violations) == [("_index_scale_ints", "value")]
    assert info.value.violations[0].expected == "equals index_scales.tolist()"


def test_consumers_make_a_field_optional() -> None:
    (contract,) = parse_contracts(
        '[[hook]]\nclass = "kv_cache_fixture.manager.KVCacheManagerV2"\n'
        'method = "_prepare_page_table_tensor"\n'
        '[hook.fields.index_scales]\ndtype = "int32"\n'
        'consumers = ["copy_batch_block_offsets", "get_batch_cache_indices_flat"]\n'
    )

    class SkipsScales(KVCacheManagerV2):
        def _prepare_page_table_tensor(self, index_mapper_capacity: int) -> None:
            super()._prepare_page_table_tensor(index_mapper_capacity)
            del self.index_scales

    class OwnsEveryConsumer(SkipsScales):
        def copy_batch_block_offsets(self, slots: list[int]) -> torch.Tensor:
            return torch.empty(0)

        def get_batch_cache_indices_flat(self, pool_id: int, block_ids: list[int]) -> list[int]:
            return []

    assert kinds(verify(SkipsScales(), [contract])) == [("index_scales", "missing")]
    assert verify(OwnsEveryConsumer(), [contract]) == []


def test_type_checks_for_python_values() -> None:
    (contract,) = parse_contracts(
        '[[hook]]\nclass = "x.Z"\nmethod = "h"\n'
        '[hook.fields.n]\ntype = "int"\n'
        '[hook.fields.flag]\ntype = "bool"\n'
        '[hook.fields.maybe]\ntype = "any"\n'
        '[hook.fields.ints]\ntype = "list"\nitems = "int"\n'
        '[hook.fields.t]\ntype = "tensor"\n'
    )

    class Z:
        pass

    Z.__module__, Z.__qualname__ = "x", "Z"
    obj: Any = Z()
    obj.n, obj.flag, obj.maybe, obj.ints, obj.t = 3, True, None, [1, 2], torch.zeros(1)
    assert verify(obj, [contract]) == []
    obj.n, obj.flag, obj.ints, obj.t = True, 1, [1, "2"], [0.0]
    found = verify(obj, [contract])
    assert [(v.field, v.kind, v.expected, v.actual) for v in found] == [
        ("n", "type", "int", "bool"),
        ("flag", "type", "bool", "int"),
        ("ints", "type", "list[int]", "item 1 is str"),
        ("t", "type", "tensor", "list"),
    ]
    del obj.maybe
    assert ("maybe", "missing") in kinds(verify(obj, [contract]))


def test_contracts_in_the_runtime_package_do_not_import_torch_eagerly() -> None:
    code = (
        "import sys; import hookguard.runtime.pytest_plugin, hookguard.runtime.violations;"
        "import hookguard.runtime; print('torch' in sys.modules)"
    )
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{FIXTURES}"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.strip() == "False"


def test_out_of_order_uninstall_leaves_no_wrappers(fixture_contracts: list[HookContract]) -> None:
    before = {cls: dict(cls.__dict__) for cls in [KVCacheManagerV2, *EXPECTED]}
    outer = enforce(fixture_contracts)
    inner = enforce(fixture_contracts)
    outer.uninstall()
    with pytest.raises(ContractViolation):  # inner still enforces, subclasses too
        type("Later", (kvf.WrongDtypeM3KVCacheManagerV2,), {})()
    inner.uninstall()
    for cls, namespace in before.items():
        assert dict(cls.__dict__) == namespace, cls


def test_contract_class_that_inherits_the_hook() -> None:
    class Declares:
        def __init__(self) -> None:
            self._hook()

        def _hook(self) -> None:
            self.ready = True

    class Named(Declares):  # the contract names this class; it does not define the hook
        pass

    class Broken(Named):
        def _hook(self) -> None:
            self.ready = None

    Named.__module__ = "inherits"
    Named.__qualname__ = "Named"
    (contract,) = parse_contracts(
        '[[hook]]\nclass = "inherits.Named"\nmethod = "_hook"\n[hook.fields.ready]\ntype = "bool"\n'
    )
    sys.modules["inherits"] = type(sys)("inherits")
    sys.modules["inherits"].Named = Named  # type: ignore[attr-defined]
    try:
        with enforce([contract]) as enforcer:
            Named()
            assert enforcer.checks == 1
            with pytest.raises(ContractViolation):
                Broken()
            Declares()  # above the contract's class: not checked
            assert enforcer.checks == 2
        assert "_hook" not in Named.__dict__
    finally:
        del sys.modules["inherits"]
