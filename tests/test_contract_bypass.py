"""HG003 contract-bypass: declared contracts, inference, conditions and consumer exemptions."""

from __future__ import annotations

from pathlib import Path

from hookguard.engine import Options, audit
from hookguard.findings import Finding, Severity
from tests.conftest import load_fixture_builder, write_tree

build = load_fixture_builder()
M3 = "trtllm_mini.attention_backend.sparse.minimax_m3.cache_manager.MiniMaxM3KVCacheManagerV2"
CSA2 = "trtllm_mini.attention_backend.csa2.CSA2CacheManager"
SCRATCH = {"_device_kv_cache_block_offsets_input", "_device_copy_idx_staging",
           "_device_attention_op_block_offsets_staging", "_device_block_positions"}
CONTRACT = """
[[hook]]
class = "trtllm_mini.pyexecutor.kv_cache_manager_v2.KVCacheManagerV2"
method = "_prepare_page_table_tensor"
renamed_from = ["_build_pool_mapping_tensors"]

[hook.fields.kv_cache_pool_pointers]
dtype = "int64"

[hook.fields.index_scales]
dtype = "int32"

[hook.fields.kv_offset]
dtype = "int32"

[[hook.when]]
attr = "enable_swa_scratch_reuse"
[hook.when.fields._device_copy_idx_staging]
dtype = "int64"
device = "cuda"
"""


def bypass(root: Path, contracts: tuple[str, ...] = (), inferred: bool = True
           ) -> dict[str, Finding]:
    """HG003's findings in ``root``, with inferred state on (``inferred-state = true``) unless
    ``inferred`` is False."""
    pyproject = root / "pyproject.toml"
    text = pyproject.read_text() if pyproject.exists() else ""
    if inferred and "[tool.hookguard]" not in text:
        pyproject.write_text(text + "\n[tool.hookguard]\ninferred-state = true\n")
    result = audit([root], Options(use_cache=False, select=("contract-bypass",),
                                   contracts=contracts))
    return {f.symbol: f for f in result.findings}


def test_half_fixed_m3_by_inference(tmp_path: Path) -> None:
    repo = build.build_kvcache_repo(tmp_path / "kv", stage="half_fixed")
    found = bypass(repo)
    assert set(found) == {f"{M3}._prepare_page_table_tensor"}
    finding = found[f"{M3}._prepare_page_table_tensor"]
    missing = {m["field"]: m for m in finding.evidence["missing"]}
    assert set(missing) >= SCRATCH
    assert all(missing[f]["set_by"] == ["_prepare_swa_scratch_copy_tensors"] for f in SCRATCH)
    assert all(missing[f]["condition"] == "self.enable_swa_scratch_reuse" for f in SCRATCH)
    assert missing["_device_copy_idx_staging"]["read_by_base"] is True
    assert finding.severity is Severity.WARNING  # no contract: a warning
    assert "self._prepare_swa_scratch_copy_tensors(...)" in finding.message
    assert "when self.enable_swa_scratch_reuse" in finding.message


def test_half_fixed_m3_with_declared_contract(tmp_path: Path) -> None:
    repo = build.build_kvcache_repo(tmp_path / "kv", stage="half_fixed")
    (tmp_path / "contract.toml").write_text(CONTRACT)
    found = bypass(repo, contracts=(str(tmp_path / "contract.toml"),))
    finding = found[f"{M3}._prepare_page_table_tensor"]
    assert finding.evidence["kind"] == "contract"
    assert [m["field"] for m in finding.evidence["missing"]] == ["_device_copy_idx_staging"]
    assert finding.evidence["missing"][0]["condition"] == "self.enable_swa_scratch_reuse"
    assert finding.evidence["missing"][0]["set_by"] == ["_prepare_swa_scratch_copy_tensors"]
    # CSA2 skips index_scales and kv_offset but overrides every reader of both.
    assert f"{CSA2}._prepare_page_table_tensor" not in found


def test_fixed_stage_and_super_callers_are_silent(tmp_path: Path) -> None:
    repo = build.build_kvcache_repo(tmp_path / "kv", stage="fixed")
    (tmp_path / "contract.toml").write_text(CONTRACT)
    assert bypass(repo) == {}
    assert bypass(repo, contracts=(str(tmp_path / "contract.toml"),)) == {}


BASE = """
class Base:
    def __init__(self):
        self.setup(4)

    def setup(self, n):
        self.table = [0] * n
        self.scale = 1
        if self.fast:
            self._make_staging(n)

    def _make_staging(self, n):
        self.staging = [0] * n

    def lookup(self, i):
        return self.table[i] * self.scale

    def copy(self):
        return list(self.staging)
"""


def test_inference_rules(tmp_path: Path) -> None:
    write_tree(tmp_path, {"base.py": BASE, "subs.py": """
        from base import Base

        class CallsSuper(Base):
            def setup(self, n):
                super().setup(n)
                self.table.append(1)

        class SetsEverything(Base):
            def setup(self, n):
                self.table, self.scale = [1] * n, 2
                if self.fast:
                    self._make_staging(n)

        class ExplicitBase(Base):
            def setup(self, n):
                Base.setup(self, n)

        class SkipsStaging(Base):
            def setup(self, n):
                self.table = [1] * n
                self.scale = 2

        class SkipsScaleButOverridesReader(Base):
            def setup(self, n):
                self.table = [1] * n
                self._make_staging(n)

            def lookup(self, i):
                return self.table[i]
    """})
    found = bypass(tmp_path)
    assert set(found) == {"subs.SkipsStaging.setup"}
    (missing,) = found["subs.SkipsStaging.setup"].evidence["missing"]
    assert missing == {"field": "staging", "set_by": ["_make_staging"],
                       "condition": "self.fast", "read_by_base": True}


def test_unread_inferred_field_is_not_reported(tmp_path: Path) -> None:
    source = """
        class Base:
            def setup(self):
                self.cache = {}
            {reader}

        class Child(Base):
            def setup(self):
                self.ready = True
    """
    write_tree(tmp_path, {"mod.py": source.replace("{reader}", "")})
    assert bypass(tmp_path) == {}  # nothing is known to read cache: nothing to act on
    reader = "def lookup(self, key):\n                return self.cache[key]"
    write_tree(tmp_path, {"mod.py": source.replace("{reader}", reader)})
    (finding,) = bypass(tmp_path).values()
    assert finding.severity is Severity.WARNING


def test_guarded_readers_and_lazy_fields_do_not_count(tmp_path: Path) -> None:
    write_tree(tmp_path, {"mod.py": """
        class Base:
            def offload(self, gpu=0):
                self._device = gpu
                self._hooks = []

            def free(self):
                if not hasattr(self, "_hooks") or not self._hooks:
                    return
                return getattr(self, "_device", "cuda")

            def output(self):
                if self.cached is None:
                    self.cached = self.compute()
                return self.cached

            def compute(self):
                return 1

            def test_output(self):
                self.output()

        class Replacing(Base):
            def offload(self, gpu=0):
                self._gpu = gpu

            def test_output(self):
                pass
    """})
    # Every reader guards its field (hasattr/getattr with a default) or sets it first: there is
    # no reader left to fail, so nothing is reported.
    assert bypass(tmp_path) == {}


def test_constructor_initialised_fields_readers_that_set_first_and_disabled_hooks(
    tmp_path: Path,
) -> None:
    write_tree(tmp_path, {"mod.py": """
        class Base:
            def __init__(self):
                self._avg = None
                self._count = 0

            def setup(self):
                self._avg = 1.0
                self._count += 1
                self._hooks = []
                self._scale = 2.0

            def step(self):
                if self._avg is None:
                    return
                return self._avg * self._count * self._scale

            def offload(self):
                self._hooks = []
                self._hooks.append(1)

        class Replaced(Base):
            def setup(self):
                self._ready = True

        class Disabled(Base):
            def setup(self):
                raise RuntimeError("not supported")
    """})
    found = bypass(tmp_path)
    assert set(found) == {"mod.Replaced.setup"}
    missing = {m["field"]: m for m in found["mod.Replaced.setup"].evidence["missing"]}
    # _avg is set by __init__; _hooks is set by its only reader first; _count is a counter
    # __init__ starts: left at 0 it may be wrong, but reading it cannot fail.
    assert set(missing) == {"_scale"} and missing["_scale"]["read_by_base"] is True
    assert found["mod.Replaced.setup"].severity is Severity.WARNING


def test_fields_set_by_the_base_constructor_through_super_init(tmp_path: Path) -> None:
    write_tree(tmp_path, {"mod.py": """
        class DDP:
            def __init__(self, backend=None):
                self._averager = None
                self._backend = backend

            def setup(self):
                self._averager = object()
                self._backend = "nccl"

            def step(self):
                if self._averager is None:
                    return None
                return self._backend

        class XLA(DDP):
            def __init__(self):
                super().__init__(backend="xla")

            def setup(self):
                pass

        class Lazy:
            cache = None  # a class-level default: always present

            def setup(self):
                self.cache = {}

            def get(self):
                return self.cache

        class NoSetup(Lazy):
            def setup(self):
                pass
    """})
    assert bypass(tmp_path) == {}


# -- issue 23: an error only from a contract; constructors chained other than super().__init__() --
CHAINED_BASE = """
class Base:
    def __init__(self):
        self.setup()

    def setup(self):
        self.table = {}

    def lookup(self, key):
        return self.table[key]
"""
SETUP_CONTRACT = """
[[hook]]
class = "pkg.base.Base"
method = "setup"

[hook.fields.table]
type = "dict"
"""


def test_inferred_state_is_a_warning_and_a_contract_makes_it_an_error(tmp_path: Path) -> None:
    child = "from pkg.base import Base\n\nclass Child(Base):\n    def setup(self):\n        pass\n"
    child = child.replace("pass", "self.other = 1")
    files = {"pkg/__init__.py": "", "pkg/base.py": CHAINED_BASE, "pkg/child.py": child}
    (inferred,) = bypass(write_tree(tmp_path / "a", files)).values()
    assert inferred.severity is Severity.WARNING
    assert "no contract declares this hook's fields" in inferred.message
    # Off by default: inferred state is opt-in (first contact: one such warning in five was
    # worth a maintainer's time); a contract still makes the error.
    assert bypass(write_tree(tmp_path / "c", files), inferred=False) == {}
    declared_root = write_tree(tmp_path / "b", {**files, "contracts/base.toml": SETUP_CONTRACT})
    (declared,) = bypass(declared_root, inferred=False).values()
    assert declared.severity is Severity.ERROR and declared.evidence["kind"] == "contract"


def test_fields_set_by_a_constructor_chained_by_name_are_set(tmp_path: Path) -> None:
    """``Base.__init__(self)``, ``mod.Base.__init__(self)`` and ``super(Cls, self).__init__()``
    run the base constructor as ``super().__init__()`` does: the fields it sets are set, and an
    override that replaces a hook without them is no bypass of those (issue 23, shape 2)."""
    contract = SETUP_CONTRACT.replace('method = "setup"', 'method = "prepare"')
    base = CHAINED_BASE.replace(
        "    def lookup", "    def prepare(self):\n        self.table = {}\n\n    def lookup")
    chains = {
        "by_name": ("from pkg.base import Base", "Base.__init__(self)"),
        "by_module": ("import pkg.base", "pkg.base.Base.__init__(self)"),
        "two_arg_super": ("from pkg.base import Base", "super(Child, self).__init__()"),
    }
    for name, (imports, chain) in chains.items():
        base_name = "pkg.base.Base" if name == "by_module" else "Base"
        child = (f"{imports}\n\nclass Child({base_name}):\n    def __init__(self):\n"
                 f"        {chain}\n\n    def prepare(self):\n        self.other = 1\n")
        root = write_tree(tmp_path / name, {"pkg/__init__.py": "", "pkg/base.py": base,
                                            "pkg/child.py": child,
                                            "contracts/base.toml": contract})
        assert bypass(root) == {}, name
    # Without the chain, the constructor's fields are not set: the contract's error fires.
    child = ("from pkg.base import Base\n\nclass Child(Base):\n    def __init__(self):\n"
             "        self.ready = True\n\n    def prepare(self):\n        self.other = 1\n")
    root = write_tree(tmp_path / "unchained", {"pkg/__init__.py": "", "pkg/base.py": base,
                                               "pkg/child.py": child,
                                               "contracts/base.toml": contract})
    (finding,) = bypass(root).values()
    assert finding.severity is Severity.ERROR
