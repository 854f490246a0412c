"""The contract loader: the shipped files, line numbers and every kind of malformed contract."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from runtime_support import CONTRACTS, ROOT

from hookguard.contracts import (
    ContractError,
    FieldSpec,
    HookContract,
    check_expression,
    load_contracts,
    parse_contracts,
)

GOOD = """\
[[hook]]
class = "pkg.mod.Base"
method = "_hook"
renamed_from = ["_old_hook"]

[hook.fields.mapping]
type = "tensor"
dtype = "int32"
device = "cpu"
pinned = true
shape = ["num_local_layers", 2]

[[hook.when]]
attr = "enable_x"
[hook.when.fields.staging]
dtype = "int64"
device = "cuda"
shape = ["capacity * beam"]
"""


def _error(text: str, tmp_path: Path, name: str = "c.toml") -> ContractError:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ContractError) as info:
        load_contracts(path)
    return info.value


def test_parses_the_spec_example() -> None:
    (contract,) = parse_contracts(GOOD, "example.toml")
    assert contract.cls == "pkg.mod.Base"
    assert contract.module == "pkg.mod"
    assert contract.method == "_hook"
    assert contract.renamed_from == ("_old_hook",)
    assert contract.line == 1
    mapping = contract.fields["mapping"]
    assert mapping == FieldSpec(
        name="mapping",
        type="tensor",
        dtype="int32",
        device="cpu",
        pinned=True,
        shape=("num_local_layers", 2),
        values=None,
        range=None,
        contiguous=None,
        line=6,
    )
    (clause,) = contract.when
    assert clause.attr == "enable_x"
    assert clause.line == 13
    assert clause.fields["staging"].shape == ("capacity * beam",)
    assert clause.fields["staging"].kind == "tensor"  # implied by dtype
    assert clause.fields["staging"].line == 15
    assert [(f.name, cond) for f, cond in contract.all_fields()] == [
        ("mapping", None),
        ("staging", "enable_x"),
    ]


def test_shipped_contracts_load() -> None:
    contracts = load_contracts(CONTRACTS)
    classes = {c.cls for c in contracts}
    assert classes == {
        "kv_cache_fixture.manager.KVCacheManagerV2",
        "tensorrt_llm._torch.pyexecutor.kv_cache_manager_v2.KVCacheManagerV2",
    }
    for contract in contracts:
        assert contract.method == "_prepare_page_table_tensor"
        assert contract.renamed_from == ("_build_pool_mapping_tensors",)
        names = {f.name for f, _ in contract.all_fields()}
        assert {
            "kv_cache_pool_pointers",
            "kv_cache_pool_mapping",
            "index_scales",
            "kv_offset",
            "_index_scale_ints",
            "host_kv_cache_block_offsets",
            "_device_copy_idx_staging",
        } <= names
        assert all(f.line > contract.line for f, _ in contract.all_fields())
        assert isinstance(hash(contract), int)


def test_directory_loads_toml_files_sorted(tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text(GOOD.replace("pkg.mod.Base", "pkg.mod.B"))
    (tmp_path / "a.toml").write_text(GOOD.replace("pkg.mod.Base", "pkg.mod.A"))
    (tmp_path / "notes.txt").write_text("not a contract")
    assert [c.cls for c in load_contracts(tmp_path)] == ["pkg.mod.A", "pkg.mod.B"]
    assert load_contracts(tmp_path)[0].path == str(tmp_path / "a.toml")


def test_unknown_key_in_field_names_file_and_line(tmp_path: Path) -> None:
    text = GOOD.replace("pinned = true\n", "pinned = true\npined = false\n")
    error = _error(text, tmp_path)
    assert error.path == str(tmp_path / "c.toml")
    assert error.line == 11
    assert "unknown key 'pined'" in error.message
    assert str(error) == f"{tmp_path / 'c.toml'}:11: {error.message}"


def test_unknown_key_in_hook_and_when(tmp_path: Path) -> None:
    error = _error(GOOD.replace('method = "_hook"\n', 'method = "_hook"\nmehtod = "x"\n'), tmp_path)
    assert (error.line, "unknown key 'mehtod'" in error.message) == (4, True)
    error = _error(GOOD.replace('attr = "enable_x"\n', 'attr = "enable_x"\nattrs = 1\n'), tmp_path)
    assert (error.line, "unknown key 'attrs'" in error.message) == (15, True)
    error = _error("version = 2\n" + GOOD, tmp_path)
    assert error.line == 1 and "unknown top-level key 'version'" in error.message


def test_bad_dtype(tmp_path: Path) -> None:
    error = _error(GOOD.replace('dtype = "int64"', 'dtype = "int46"'), tmp_path)
    assert error.line == 16
    assert "unknown dtype 'int46'" in error.message


def test_dtype_aliases_are_normalised() -> None:
    (contract,) = parse_contracts(GOOD.replace('dtype = "int32"', 'dtype = "torch.long"'))
    assert contract.fields["mapping"].dtype == "int64"


@pytest.mark.parametrize(
    ("expression", "words"),
    [
        ("__import__('os').system('true')", "__import__"),
        ("kv.__class__", "__class__"),
        ("(lambda: 1)", "Lambda"),
        ("[x for x in kv]", "ListComp"),
        ("open('f')", "'open'"),
        ("kv.storage()", "'storage'"),
        ("a +", "cannot parse"),
    ],
)
def test_bad_invariant_expressions(tmp_path: Path, expression: str, words: str) -> None:
    text = GOOD.replace(
        'renamed_from = ["_old_hook"]\n',
        'renamed_from = ["_old_hook"]\ninvariants = [\n    "mapping.shape[0] > 0",\n'
        f"    {expression!r},\n]\n",
    )
    error = _error(text, tmp_path)
    assert error.line == 7  # the bad item of the multi-line array
    assert "bad invariant" in error.message
    assert words in error.message


def test_bad_shape_dimension_and_equals(tmp_path: Path) -> None:
    error = _error(GOOD.replace('["capacity * beam"]', '["capacity * beam.x"]'), tmp_path)
    assert error.line == 18 and "Attribute" in error.message
    error = _error(GOOD.replace('["num_local_layers", 2]', '["num_local_layers", 2.5]'), tmp_path)
    assert error.line == 11 and "must be an int or a string" in error.message
    error = _error(GOOD.replace('["num_local_layers", 2]', '["...", 2, "..."]'), tmp_path)
    assert error.line == 11 and "'...' at most once" in error.message
    text = GOOD.replace("pinned = true\n", 'pinned = true\nequals = "exec(1)"\n')
    error = _error(text, tmp_path)
    assert error.line == 11 and "bad equals" in error.message


def test_other_bad_values(tmp_path: Path) -> None:
    cases = {
        'device = "gpu"': ("unknown device 'gpu'", 9),
        'pinned = "yes"': ("pinned must be true or false", 10),
        'type = "tensr"': ("unknown type 'tensr'", 7),
    }
    for bad, (words, line) in cases.items():
        key = bad.split(" = ")[0]
        original = next(x for x in GOOD.splitlines() if x.startswith(key + " ="))
        error = _error(GOOD.replace(original, bad, 1), tmp_path)
        assert words in error.message, bad
        assert error.line == line, bad
    error = _error(GOOD.replace("pinned = true\n", 'pinned = true\nvalues = "small"\n'), tmp_path)
    assert "unknown value check 'small'" in error.message and error.line == 11
    error = _error(GOOD.replace("pinned = true\n", "pinned = true\nrange = [3, 1]\n"), tmp_path)
    assert "range must be [lo, hi]" in error.message and error.line == 11
    error = _error(GOOD.replace('class = "pkg.mod.Base"', 'class = "Base"'), tmp_path)
    assert "qualified name" in error.message and error.line == 2
    error = _error(GOOD.replace('method = "_hook"\n', ""), tmp_path)
    assert "needs a 'method' key" in error.message and error.line == 1
    error = _error(
        GOOD.replace('renamed_from = ["_old_hook"]', 'renamed_from = ["_hook"]'), tmp_path
    )
    assert "lists the hook" in error.message and error.line == 4


def test_toml_syntax_error_has_its_line(tmp_path: Path) -> None:
    error = _error(GOOD.replace('device = "cpu"', 'device = "cpu'), tmp_path)
    assert error.line == 9
    assert "invalid TOML" in error.message


def test_duplicate_contracts_across_files(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text(GOOD)
    (tmp_path / "b.toml").write_text("\n\n" + GOOD)
    with pytest.raises(ContractError) as info:
        load_contracts(tmp_path)
    assert info.value.path == str(tmp_path / "b.toml")
    assert info.value.line == 3
    assert "duplicate contract for pkg.mod.Base._hook" in info.value.message


def test_missing_path() -> None:
    with pytest.raises(ContractError, match="no such contract file"):
        load_contracts("/nonexistent/contracts")


def test_inline_tables_get_lines() -> None:
    text = (
        '[[hook]]\nclass = "a.B"\nmethod = "h"\n\n[hook.fields]\n'
        'x = { dtype = "int32", shape = [2] }\ny = { type = "list", items = "int" }\n'
    )
    (contract,) = parse_contracts(text)
    assert contract.fields["x"].line == 6
    assert contract.fields["y"].line == 7
    assert isinstance(contract, HookContract)


def test_check_expression_allows_the_documented_forms() -> None:
    for text in (
        "kv_cache_pool_mapping[:, 0].max() < kv_cache_pool_pointers.shape[0]",
        "(p[m[:, 0].long(), 0] != 0).all()",
        "index_scales.tolist()",
        "torch.arange(n, dtype=torch.int32, device=x.device)",
        "len(a) == num_pools and all(a)",
    ):
        check_expression(text)
    check_expression("a * b // 2 + 1", dimension=True)
    with pytest.raises(ValueError):
        check_expression("a.shape[0]", dimension=True)


def test_loading_imports_neither_torch_nor_libcst() -> None:
    code = (
        "import sys; from hookguard.contracts import load_contracts; "
        f"load_contracts({str(CONTRACTS)!r}); "
        "import hookguard.runtime, hookguard.runtime.pytest_plugin, hookguard.runtime.violations; "
        "print(sorted(m for m in ('torch', 'libcst') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert out.stdout.strip() == "[]"
