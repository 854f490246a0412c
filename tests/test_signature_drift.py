"""HG002 signature-drift: proven TypeErrors and structural narrowing."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hookguard.engine import Options, audit
from hookguard.findings import Finding, Severity
from hookguard.model.binding import bind
from hookguard.model.extract import extract
from tests.conftest import load_fixture_builder, write_tree

build = load_fixture_builder()
M3 = "trtllm_mini.attention_backend.sparse.minimax_m3.cache_manager.MiniMaxM3KVCacheManagerV2"


def drift(root: Path) -> dict[str, Finding]:
    result = audit([root], Options(use_cache=False, select=("signature-drift",)))
    return {f.symbol: f for f in result.findings}


def test_incident_drift_names_both_parameters_and_the_call_site(tmp_path: Path) -> None:
    repo = build.build_kvcache_repo(tmp_path / "kv")
    found = drift(repo)
    finding = found[f"{M3}._get_batch_cache_indices_by_pool_id"]
    assert finding.severity is Severity.ERROR
    assert finding.evidence["missing"] == ["num_blocks_per_seq", "index_scale"]
    assert finding.evidence["keyword_only"] is True and finding.evidence["fixable"] is True
    (site,) = finding.related
    assert site.path == "trtllm_mini/pyexecutor/kv_cache_manager_v2.py"
    source = (repo / site.path).read_text().splitlines()[site.line - 1]
    assert "self._get_batch_cache_indices_by_pool_id(" in source
    assert "'num_blocks_per_seq'" in finding.message and "'index_scale'" in finding.message
    assert len([f for f in found.values() if f.severity is Severity.ERROR]) == 1


def test_predicted_type_error_is_real(tmp_path: Path) -> None:
    """Import the fixture and make the base's call: Python raises what the rule predicted."""
    pytest.importorskip("torch")
    repo = build.build_kvcache_repo(tmp_path / "kv")
    finding = drift(repo)[f"{M3}._get_batch_cache_indices_by_pool_id"]
    script = textwrap.dedent("""
        from trtllm_mini.attention_backend.sparse.minimax_m3.cache_manager import (
            MiniMaxM3KVCacheManagerV2 as M3)
        manager = object.__new__(M3)  # the unit-test harness the real code base uses
        manager.max_blocks_per_seq = 8
        manager._index_scale_ints = [1]
        try:
            manager.get_batch_cache_indices([0], pool_id=0)
        except TypeError as exc:
            print(exc)
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=repo, capture_output=True,
                          text=True, check=True)
    assert "unexpected keyword argument" in proc.stdout
    assert any(f"'{name}'" in proc.stdout for name in finding.evidence["missing"])


@pytest.mark.parametrize(
    "override",
    [
        "def fetch(self, ids, *, pool_id=0, **kwargs): ...",
        "def fetch(self, ids, *, pool_id=0, num_blocks=None, scale=None): ...",
        "def fetch(self, ids, pool_id=0, num_blocks=None, scale=None, extra=None): ...",
        "def fetch(self, *args, **kwargs): ...",
    ],
)
def test_accepting_overrides_are_silent(tmp_path: Path, override: str) -> None:
    write_tree(tmp_path, {"mod.py": f"""
        class Base:
            def run(self, ids):
                return self.fetch(ids, pool_id=0, num_blocks=4, scale=2)

            def fetch(self, ids, *, pool_id=0, num_blocks=None, scale=None): ...

        class Child(Base):
            {override}
    """})
    assert drift(tmp_path) == {}


@pytest.mark.parametrize(
    ("override", "problem"),
    [
        ("def fetch(self): ...", "takes 0 positional arguments but 1 were given"),
        ("def fetch(self, ids, extra): ...", "missing required 'extra'"),
        ("def fetch(self, ids, *, pool_id=0): ...", "unexpected keyword argument 'num_blocks'"),
        ("@staticmethod\n    def fetch(ids, pool_id=0): ...", "'num_blocks'"),
    ],
)
def test_breaking_overrides_fire(tmp_path: Path, override: str, problem: str) -> None:
    (tmp_path / "mod.py").write_text(
        "class Base:\n"
        "    def run(self, ids):\n"
        "        return self.fetch(ids, pool_id=0, num_blocks=4)\n\n"
        "    def fetch(self, ids, *, pool_id=0, num_blocks=None): ...\n\n"
        f"class Child(Base):\n    {override}\n"
    )
    (finding,) = drift(tmp_path).values()
    assert finding.severity is Severity.ERROR and problem in finding.message


STRUCTURAL = "[tool.hookguard]\nstructural = true\n"


def test_caller_replaced_without_super_does_not_bind(tmp_path: Path) -> None:
    write_tree(tmp_path, {"pyproject.toml": STRUCTURAL, "mod.py": """
        class Base:
            def run(self, ids):
                return self.fetch(ids, scale=2)

            def fetch(self, ids, scale=1): ...

        class Child(Base):
            def run(self, ids):
                return self.fetch(ids)

            def fetch(self, ids): ...
    """})
    assert {f.evidence["kind"] for f in drift(tmp_path).values()} == {"structural"}


def test_super_call_with_arguments_the_parent_rejects(tmp_path: Path) -> None:
    write_tree(tmp_path, {"mod.py": """
        class Base:
            def hook(self, a): ...

        class Child(Base):
            def hook(self, a, b=None):
                super().hook(a, b)
    """})
    (finding,) = drift(tmp_path).values()
    assert finding.symbol == "mod.Child.hook"
    assert finding.evidence["kind"] == "proven-super"
    assert "takes 1 positional argument but 2 were given" in finding.message


@pytest.mark.parametrize(
    ("base", "override", "expected"),
    [
        ("def h(self, a, *, key=None)", "def h(self, a)", "drops keyword-only parameter 'key'"),
        ("def h(self, a, b)", "def h(self, a, c)", "renames parameter 'b' to 'c'"),
        ("def h(self, a, b)", "def h(self, b, a)", "changes the order"),
        ("def h(self, a)", "def h(self, a, b)", "adds required parameter 'b'"),
        ("def h(self, a)", "@staticmethod\n    def h(a)", "static method"),
        ("def h(self, a)", "@property\n    def h(self)", "property method"),
    ],
)
def test_structural_drift_warns(tmp_path: Path, base: str, override: str, expected: str) -> None:
    source = (
        "class Base:\n    " + base + ": ...\n\n"
        "    def use(self):\n        return self.h  # a hook: the base looks it up on self\n\n"
        "class Child(Base):\n    " + override + ": ...\n"
    )
    (tmp_path / "mod.py").write_text(source)
    assert drift(tmp_path) == {}  # structural drift is opt-in: no call proves a failure
    (tmp_path / "pyproject.toml").write_text(STRUCTURAL)
    (finding,) = drift(tmp_path).values()
    assert finding.severity is Severity.WARNING
    assert expected in finding.message
    # The same narrowing of a method no base calls is no hook drift.
    (tmp_path / "mod.py").write_text(source.replace("return self.h", "return None"))
    assert drift(tmp_path) == {}


@pytest.mark.parametrize(
    "override",
    ["def h(self, a, b=None)", "def h(self, a, **kwargs)", "def h(self, a, *args, **kw)",
     "def h(self, a, *, extra=1)"],
)
def test_safe_widening_is_never_reported(tmp_path: Path, override: str) -> None:
    (tmp_path / "pyproject.toml").write_text(STRUCTURAL)
    (tmp_path / "mod.py").write_text(
        f"class Base:\n    def h(self, a): ...\n\nclass Child(Base):\n    {override}: ...\n"
    )
    assert drift(tmp_path) == {}


def test_bind_matches_python_on_examples() -> None:
    """The binder agrees with CPython on a table of call shapes and signatures."""
    signatures = ["(self, a, b=1)", "(self, a, /, b, *, c)", "(self, *args, c=1)",
                  "(self, a, **kw)", "(self, *, c, d=2)"]
    calls = ["o.m(1)", "o.m(1, 2)", "o.m(1, 2, 3)", "o.m(a=1)", "o.m(1, b=2)", "o.m(1, c=3)",
             "o.m(1, 2, c=3)", "o.m(c=1)", "o.m(c=1, d=2)", "o.m(1, a=1)", "o.m(1, z=0)"]
    for signature in signatures:
        for call in calls:
            source = (
                f"class C:\n    def m{signature}: pass\n\n"
                f"    def caller(self):\n        self.{call[2:]}\n"
            )
            record = extract("t.py", "t", False, source.encode())
            method = record.classes[0].methods["m"]
            (site,) = record.classes[0].methods["caller"].calls
            namespace: dict[str, object] = {}
            exec(f"class C:\n    def m{signature}: pass\n", namespace)
            obj = namespace["C"]()  # type: ignore[operator]
            try:
                eval(call, {"o": obj})
                python_ok = True
            except TypeError:
                python_ok = False
            assert bind(site, method).ok is python_ok, (signature, call)


def test_lessons_from_real_checkouts(tmp_path: Path) -> None:
    write_tree(tmp_path, {"mod.py": """
        import pytest

        class Usage:
            def __init__(self, started=0, completed=0): ...

        class EpochWise(Usage):
            def __init__(self): ...

        class RunningEpochWise(EpochWise):
            def __init__(self):
                super(EpochWise, self).__init__(started=0, completed=2)  # reaches Usage

        class BadTwoArg(EpochWise):
            def __init__(self):
                super(EpochWise, self).__init__(unknown=1)

        class Tests:
            def run(self):
                self.check(1)

            def check(self, fixture):
                pass

        class SkippedTests(Tests):
            @pytest.mark.skip("n/a")
            def check(self):
                super().check()

        class Disabled(Tests):
            def check(self):
                raise NotImplementedError("use run_all()")

        class Generic:
            def use(self):
                return self.handle

            def handle(self, *args, **kwargs): ...

        class Narrow(Generic):
            def handle(self, a, b): ...

        def factory():
            class Local(Tests):
                def check(self):
                    pass
            return Local
    """})
    found = drift(tmp_path)
    assert set(found) == {"mod.BadTwoArg.__init__", "mod.factory.<locals>.Local.check"}
    assert "'unknown'" in found["mod.BadTwoArg.__init__"].message
    # A function-local subclass is as reachable as any other: Tests.run still calls check(1).
    assert found["mod.factory.<locals>.Local.check"].severity is Severity.ERROR
