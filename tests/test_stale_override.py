"""HG001 stale-override: every evidence kind, with cases that must fire and must not."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from hookguard.engine import Options, audit
from hookguard.findings import Finding, Severity
from hookguard.git.history import HistoryIndex
from hookguard.git.repo import Repo
from tests.conftest import GitRepo, load_fixture_builder, write_tree

build = load_fixture_builder()


def stale(findings: list[Finding]) -> dict[str, Finding]:
    return {f.symbol: f for f in findings if f.rule == "stale-override"}


def run(root: Path, **options: object) -> list[Finding]:
    return audit([root], Options(use_cache=False, **options)).findings  # type: ignore[arg-type]


# -- the incident ------------------------------------------------------------------------------
def test_incident_reports_m3_override_with_rename_commit(tmp_path: Path) -> None:
    repo = build.build_kvcache_repo(tmp_path / "kv")
    found = stale(run(repo))
    m3 = found["trtllm_mini.attention_backend.sparse.minimax_m3.cache_manager."
               "MiniMaxM3KVCacheManagerV2._build_pool_mapping_tensors"]
    expected = next(e for e in build.expected_findings("incident")
                    if e["rule"] == "HG001" and "MiniMax" in str(e["qualname"]))
    assert (m3.path, m3.line) == (expected["path"], expected["line"])
    assert m3.severity is Severity.ERROR
    assert m3.evidence["kind"] == "history"
    assert m3.evidence["new"] == "_prepare_page_table_tensor"
    assert m3.evidence["subject"] == "Move page-table construction into _prepare_page_table_tensor"
    sha = GitRepo.__new__(GitRepo)
    sha.root = repo
    assert m3.evidence["commit"] == sha.git("rev-parse", "HEAD").strip()
    assert "_prepare_page_table_tensor" in m3.message and m3.evidence["short"] in m3.message
    assert m3.evidence["chain"][-1].endswith("pyexecutor.kv_cache_manager_v2.KVCacheManagerV2")


def test_incident_matches_expected_table_exactly(tmp_path: Path) -> None:
    for stage in build.STAGES:
        repo = build.build_kvcache_repo(tmp_path / stage, stage=stage)
        got = {(f.path, f.line) for f in run(repo, select=("stale-override",))
               if f.severity is Severity.ERROR}
        want = {(e["path"], e["line"]) for e in build.expected_findings(stage)
                if e["rule"] == "HG001"}
        assert got == want, stage
        silent = {(e["path"], e["line"]) for e in build.must_not_report(stage)}
        assert not got & silent


def test_import_forms_repo_fires_exactly_where_expected(tmp_path: Path) -> None:
    repo = build.build_import_forms_repo(tmp_path / "forms")
    got = {(f.path, f.line) for f in run(repo)}
    want = {(e["path"], e["line"]) for e in build.expected_import_forms()}
    assert got == want


# -- evidence kinds ----------------------------------------------------------------------------
BASE_V1 = """
class Base:
    def run(self):
        self.setup()
        self.teardown()

    def setup(self):
        pass

    def teardown(self):
        pass
"""
BASE_V2_RENAMED = """
class Base:
    def run(self):
        self.prepare()
        self.teardown()

    def prepare(self):
        pass

    def teardown(self):
        pass
"""


def test_history_rename_fires_and_names_new_hook(git_repo: Callable[..., GitRepo]) -> None:
    repo = git_repo()
    repo.commit("base", {"pkg/__init__.py": "", "pkg/base.py": BASE_V1,
                         "pkg/child.py": "from pkg.base import Base\n\nclass Child(Base):\n"
                                         "    def setup(self):\n        self.ready = True\n"})
    sha = repo.commit("Rename setup to prepare", {"pkg/base.py": BASE_V2_RENAMED})
    (finding,) = stale(run(repo.root)).values()
    assert finding.symbol == "pkg.child.Child.setup"
    assert finding.evidence["new"] == "prepare"
    assert finding.evidence["commit"] == sha
    assert finding.hook == "prepare"


def test_history_removed_hook_fires_when_nothing_calls_it(
    git_repo: Callable[..., GitRepo]
) -> None:
    repo = git_repo()
    repo.commit("base", {"pkg/__init__.py": "", "pkg/base.py": BASE_V1,
                         "pkg/child.py": "from pkg.base import Base\n\nclass Child(Base):\n"
                                         "    def teardown(self):\n        pass\n"})
    repo.commit("Drop teardown", {"pkg/base.py": "class Base:\n    def run(self):\n"
                                                 "        self.setup()\n\n"
                                                 "    def setup(self):\n        pass\n"})
    (finding,) = stale(run(repo.root)).values()
    assert finding.evidence["kind"] == "history"
    assert finding.evidence["new"] is None
    assert "removed" in finding.message


def test_removed_hook_still_called_by_subclass_is_its_helper(
    git_repo: Callable[..., GitRepo]
) -> None:
    repo = git_repo()
    child = ("from pkg.base import Base\n\nclass Child(Base):\n"
             "    def teardown(self):\n        pass\n\n"
             "    def close(self):\n        self.teardown()\n")
    repo.commit("base", {"pkg/__init__.py": "", "pkg/base.py": BASE_V1, "pkg/child.py": child})
    repo.commit("Drop teardown", {"pkg/base.py": "class Base:\n    def run(self):\n"
                                                 "        pass\n"})
    assert stale(run(repo.root)) == {}


def test_renamed_hook_still_called_by_subclass_is_still_stale(
    git_repo: Callable[..., GitRepo]
) -> None:
    repo = git_repo()
    child = ("from pkg.base import Base\n\nclass Child(Base):\n"
             "    def setup(self):\n        pass\n\n"
             "    def reset(self):\n        self.setup()\n")
    repo.commit("base", {"pkg/__init__.py": "", "pkg/base.py": BASE_V1, "pkg/child.py": child})
    repo.commit("Rename setup to prepare", {"pkg/base.py": BASE_V2_RENAMED})
    (finding,) = stale(run(repo.root)).values()
    assert finding.severity is Severity.ERROR
    assert finding.evidence["still_called_by"] == ["pkg.child.Child"]


def test_migrated_subclass_keeping_old_name_as_helper_is_silent(
    git_repo: Callable[..., GitRepo]
) -> None:
    repo = git_repo()
    child = ("from pkg.base import Base\n\nclass Child(Base):\n"
             "    def prepare(self):\n        self.setup()\n\n"
             "    def setup(self):\n        pass\n")
    repo.commit("base", {"pkg/__init__.py": "", "pkg/base.py": BASE_V1, "pkg/child.py": child})
    repo.commit("Rename setup to prepare", {"pkg/base.py": BASE_V2_RENAMED})
    assert stale(run(repo.root)) == {}


def test_sibling_self_call_does_not_make_a_method_live(
    git_repo: Callable[..., GitRepo]
) -> None:
    repo = git_repo()
    files = {
        "pkg/__init__.py": "",
        "pkg/base.py": BASE_V1,
        "pkg/a.py": "from pkg.base import Base\n\nclass A(Base):\n"
                    "    def teardown(self):\n        pass\n",
        "pkg/b.py": "from pkg.base import Base\n\nclass B(Base):\n"
                    "    def teardown(self):\n        pass\n\n"
                    "    def close(self):\n        self.teardown()\n",
    }
    repo.commit("base", files)
    repo.commit("Drop teardown", {"pkg/base.py": "class Base:\n    def run(self):\n        pass\n"})
    assert set(stale(run(repo.root))) == {"pkg.a.A.teardown"}


@pytest.mark.parametrize(
    ("lookup", "severity"),
    [
        ('getattr(obj, "setup")()', Severity.WARNING),
        ('hasattr(obj, "setup")', Severity.WARNING),
        ('getattr(obj, f"set{x}")()', Severity.WARNING),
        ("obj.unrelated()", Severity.ERROR),
    ],
)
def test_renamed_hook_found_by_name_from_outside_is_a_warning(
    git_repo: Callable[..., GitRepo], lookup: str, severity: Severity
) -> None:
    repo = git_repo()
    child = "from pkg.base import Base\n\nclass Child(Base):\n    def setup(self):\n        pass\n"
    repo.commit("base", {"pkg/__init__.py": "", "pkg/base.py": BASE_V1, "pkg/child.py": child,
                         "pkg/use.py": f"def use(obj, x):\n    {lookup}\n"})
    repo.commit("Rename setup to prepare", {"pkg/base.py": BASE_V2_RENAMED})
    (finding,) = stale(run(repo.root)).values()
    assert finding.severity is severity


def test_override_decorator_evidence(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "base.py": "class Base:\n    def hook(self): ...\n",
        "child.py": """
            from typing_extensions import override
            from typing import override as typing_override
            import overrides
            from base import Base

            class Good(Base):
                @override
                def hook(self): ...

            class Bad(Base):
                @override
                def hoook(self): ...

            class Bad2(Base):
                @typing_override
                def hook2(self): ...

            class Bad3(Base):
                @overrides.overrides
                def hook3(self): ...

            class NoDecorator(Base):
                def other(self): ...
        """,
    })
    found = stale(run(tmp_path))
    assert set(found) == {"child.Bad.hoook", "child.Bad2.hook2", "child.Bad3.hook3"}
    assert "not a note" not in found["child.Bad.hoook"].message
    assert found["child.Bad.hoook"].evidence["kind"] == "override-decorator"


def test_override_decorator_with_external_base_is_trusted(tmp_path: Path) -> None:
    write_tree(tmp_path, {"model.py": """
        import torch.nn as nn
        from typing_extensions import override

        class Tiny(nn.Module):
            @override
            def forward(self, x):
                return x
    """})
    assert stale(run(tmp_path)) == {}


def test_contract_renamed_from_evidence(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/base.py": BASE_V2_RENAMED,
        "pkg/child.py": "from pkg.base import Base\n\nclass Child(Base):\n"
                        "    def setup(self):\n        pass\n",
        "hooks/base.toml": '[[hook]]\nclass = "pkg.base.Base"\nmethod = "prepare"\n'
                           'renamed_from = ["setup"]\n',
    })
    (finding,) = stale(run(tmp_path, contracts=("hooks/base.toml",))).values()
    assert finding.evidence["kind"] == "contract"
    assert finding.evidence["new"] == "prepare"
    assert "hooks/base.toml" in str(finding.evidence["contract"])
    # The same contract naming an unrelated class says nothing about Child.
    (tmp_path / "hooks/base.toml").write_text(
        '[[hook]]\nclass = "pkg.other.Base"\nmethod = "prepare"\nrenamed_from = ["setup"]\n'
    )
    assert stale(run(tmp_path, contracts=("hooks/base.toml",))) == {}


def test_base_hook_as_property_or_class_attribute_is_defined(tmp_path: Path) -> None:
    write_tree(tmp_path, {"mod.py": """
        from typing_extensions import override

        class Base:
            on_event = None

            @property
            def size(self):
                return 1

        class Child(Base):
            @override
            def on_event(self): ...

            @property
            @override
            def size(self):
                return 2
    """})
    assert stale(run(tmp_path)) == {}


def test_mixins_and_diamond_use_c3(tmp_path: Path) -> None:
    write_tree(tmp_path, {"mod.py": """
        from typing_extensions import override

        class Root:
            def a(self): ...

        class Left(Root): ...

        class Mixin:
            def b(self): ...

        class Right(Root, Mixin): ...

        class Leaf(Left, Right):
            @override
            def a(self): ...

            @override
            def b(self): ...

            @override
            def c(self): ...
    """})
    assert set(stale(run(tmp_path))) == {"mod.Leaf.c"}


def test_function_local_subclass(tmp_path: Path) -> None:
    write_tree(tmp_path, {"mod.py": """
        from typing_extensions import override

        class Base:
            def hook(self): ...

        def factory():
            class Local(Base):
                @override
                def hook(self): ...

                @override
                def gone(self): ...
            return Local
    """})
    assert set(stale(run(tmp_path))) == {"mod.factory.<locals>.Local.gone"}


def test_suppression_comment(tmp_path: Path) -> None:
    write_tree(tmp_path, {"mod.py": """
        from typing_extensions import override

        class Base: ...

        class A(Base):
            @override  # hookguard: ignore[stale-override]
            def one(self): ...

            @override
            def two(self): ...  # hookguard: ignore[HG001]

            @override
            def three(self): ...  # hookguard: ignore[signature-drift]
    """})
    assert set(stale(run(tmp_path))) == {"mod.A.three"}


def test_computed_name_lookup_on_self_only_covers_that_family(tmp_path: Path) -> None:
    write_tree(tmp_path, {"mod.py": """
        from typing_extensions import override

        class Dispatcher:
            def dispatch(self, event):
                return getattr(self, f"on_{event}", None)

        class Logging(Dispatcher):
            @override
            def on_start(self): ...

        class Unrelated:
            pass

        class Child(Unrelated):
            @override
            def on_step(self): ...
    """})
    found = stale(run(tmp_path))
    # Logging.on_start is found by Dispatcher's computed lookup: a warning, not an error.
    assert found["mod.Logging.on_start"].severity is Severity.WARNING
    assert found["mod.Child.on_step"].severity is Severity.ERROR


# -- lessons from real checkouts (docs/validation.md) ----------------------------------------
def test_removed_api_method_the_base_never_called_is_not_stale(
    git_repo: Callable[..., GitRepo]
) -> None:
    repo = git_repo()
    base = "class Pipe:\n    def run(self):\n        pass\n\n    def enable_tiling(self):\n" \
           "        pass\n"
    child = "from pkg.base import Pipe\n\nclass MyPipe(Pipe):\n    def enable_tiling(self):\n" \
            "        pass\n"
    repo.commit("base", {"pkg/__init__.py": "", "pkg/base.py": base, "pkg/child.py": child})
    repo.commit("Drop enable_tiling", {"pkg/base.py": "class Pipe:\n    def run(self):\n"
                                                      "        pass\n"})
    assert stale(run(repo.root)) == {}


def test_method_written_after_the_hook_was_removed_reuses_the_name(
    git_repo: Callable[..., GitRepo]
) -> None:
    repo = git_repo()
    repo.commit("base", {"pkg/__init__.py": "", "pkg/base.py": BASE_V1,
                         "pkg/child.py": "from pkg.base import Base\n\nclass Child(Base):\n"
                                         "    pass\n"})
    repo.commit("Drop teardown", {"pkg/base.py": BASE_V1.replace(
        "        self.teardown()\n", "").replace("    def teardown(self):\n        pass\n", "")})
    os.environ["GIT_COMMITTER_DATE"] = time.strftime("%Y-%m-%dT%H:%M:%S",
                                                     time.gmtime(time.time() + 3600))
    try:
        repo.commit("Add a close helper named teardown", {
            "pkg/child.py": "from pkg.base import Base\n\nclass Child(Base):\n"
                            "    def teardown(self):\n        pass\n"})
    finally:
        del os.environ["GIT_COMMITTER_DATE"]
    assert stale(run(repo.root)) == {}


def test_a_method_the_removing_change_moved_down_into_a_subclass_is_not_stale(
    git_repo: Callable[..., GitRepo]
) -> None:
    repo = git_repo()
    base = ("class Poly:\n    def add(self, other):\n        return self.unify(other)\n\n"
            "    def unify(self, other):\n        return self, other\n")
    child = "from pkg.base import Poly\n\nclass Sparse(Poly):\n    def unify(self, other):\n" \
            "        return other, self\n"
    repo.commit("poly", {"pkg/__init__.py": "", "pkg/base.py": base, "pkg/sparse.py": child})
    # One commit renames the hook and moves the old method down into a new subclass.
    repo.commit("Add a Python subclass", {
        "pkg/base.py": base.replace("unify", "unify_poly"),
        "pkg/python.py": "from pkg.base import Poly\n\nclass PythonPoly(Poly):\n"
                         "    def unify(self, other):\n        return self, other\n",
    })
    # Sparse's override predates the change: still stale. PythonPoly's was written by it.
    assert list(stale(run(repo.root))) == ["pkg.sparse.Sparse.unify"]


def test_a_class_the_change_itself_added_to_a_file(git_repo: Callable[..., GitRepo]) -> None:
    repo = git_repo()
    repo.commit("base", {"pkg/__init__.py": "", "pkg/base.py": "class Poly:\n    pass\n"})
    added = repo.commit("Add a subclass in the same file", {
        "pkg/base.py": "class Poly:\n    pass\n\n\nclass PythonPoly(Poly):\n    pass\n"})
    renamed = repo.commit("Rename it", {
        "pkg/base.py": "class Poly:\n    pass\n\n\nclass DensePoly(Poly):\n    pass\n"})
    history = HistoryIndex(Repo(repo.root))
    assert history.class_added_by("pkg/base.py", "PythonPoly", added)
    assert not history.class_added_by("pkg/base.py", "Poly", added)  # there before
    assert history.class_added_by("pkg/base.py", "DensePoly", renamed)  # named anew
    assert not history.class_added_by("pkg/base.py", "PythonPoly", renamed)  # gone by then
    assert not history.class_added_by("pkg/other.py", "PythonPoly", added)  # no such file


def test_test_methods_run_by_their_own_name(git_repo: Callable[..., GitRepo]) -> None:
    repo = git_repo()
    base = "class Mixin:\n    def run(self):\n        self.test_old()\n\n" \
           "    def test_old(self):\n        pass\n"
    child = "from pkg.base import Mixin\n\nclass TestThing(Mixin):\n" \
            "    def test_old(self):\n        pass\n"
    repo.commit("base", {"pkg/__init__.py": "", "pkg/base.py": base, "pkg/child.py": child})
    repo.commit("Rename test_old", {"pkg/base.py": base.replace("test_old", "test_new")})
    assert stale(run(repo.root)) == {}  # a test runner collects TestThing.test_old itself
    # The same name on a class no runner collects is a dead override.
    repo.commit("Not a test class", {"pkg/child.py": child.replace("TestThing", "Thing")})
    assert list(stale(run(repo.root))) == ["pkg.child.Thing.test_old"]


def test_base_still_calling_the_name_on_self_keeps_it_live(
    git_repo: Callable[..., GitRepo]
) -> None:
    repo = git_repo()
    child = "from pkg.base import Base\n\nclass Child(Base):\n    def setup(self):\n" \
            "        pass\n"
    repo.commit("base", {"pkg/__init__.py": "", "pkg/base.py": BASE_V1, "pkg/child.py": child})
    renamed = BASE_V2_RENAMED.replace("        self.teardown()\n",
                                      "        self.teardown()\n        getattr(self, 'setup',"
                                      " None)\n")
    repo.commit("Rename setup to prepare, keep optional setup", {"pkg/base.py": renamed})
    assert stale(run(repo.root)) == {}


def test_variable_getattr_makes_file_literals_live(git_repo: Callable[..., GitRepo]) -> None:
    repo = git_repo()
    child = "from pkg.base import Base\n\nclass Child(Base):\n    def setup(self):\n" \
            "        pass\n"
    check = "def legacy(model, val):\n    name = 'setup' if val else 'other'\n" \
            "    return getattr(model, name, None)\n"
    repo.commit("base", {"pkg/__init__.py": "", "pkg/base.py": BASE_V1, "pkg/child.py": child,
                         "pkg/check.py": check})
    repo.commit("Rename setup to prepare", {"pkg/base.py": BASE_V2_RENAMED})
    (finding,) = stale(run(repo.root)).values()
    assert finding.severity is Severity.WARNING


def test_pairing_is_one_to_one(git_repo: Callable[..., GitRepo]) -> None:
    repo = git_repo()
    base = ("class Base:\n    def run(self):\n        self.a()\n        self.b()\n\n"
            "    def a(self):\n        return 1\n\n    def b(self):\n        return 2\n")
    child = ("from pkg.base import Base\n\nclass Child(Base):\n    def a(self):\n"
             "        return 10\n\n    def b(self):\n        return 20\n")
    repo.commit("base", {"pkg/__init__.py": "", "pkg/base.py": base, "pkg/child.py": child})
    repo.commit("Replace a and b with setup", {"pkg/base.py": (
        "class Base:\n    def run(self):\n        self.setup()\n\n"
        "    def setup(self):\n        return 1\n")})
    found = stale(run(repo.root))
    news = [f.evidence["new"] for f in found.values()]
    assert sorted(news, key=str) == sorted(["setup", None], key=str)


def test_hook_called_from_another_file_counts_as_a_hook(git_repo: Callable[..., GitRepo]) -> None:
    repo = git_repo()
    policy = "class Policy:\n    def get_qkv(self):\n        return 1\n"
    engine = "class Engine:\n    def run(self):\n        return self.policy.get_qkv()\n"
    child = "from pkg.policy import Policy\n\nclass GPTPolicy(Policy):\n" \
            "    def get_qkv(self):\n        return 2\n"
    repo.commit("base", {"pkg/__init__.py": "", "pkg/policy.py": policy,
                         "pkg/engine.py": engine, "pkg/child.py": child})
    repo.commit("Drop get_qkv", {
        "pkg/policy.py": "class Policy:\n    pass\n",
        "pkg/engine.py": "class Engine:\n    def run(self):\n        return 0\n"})
    (finding,) = stale(run(repo.root)).values()
    assert finding.symbol == "pkg.child.GPTPolicy.get_qkv"
    assert finding.severity is Severity.ERROR and finding.evidence["new"] is None


def test_history_of_a_moved_base_survives_a_new_file_at_its_old_name(
    git_repo: Callable[..., GitRepo],
) -> None:
    # a.py's Base renamed hook -> new_hook, then a.py moved to b.py, then a new, unrelated a.py.
    repo = git_repo()
    base = "class Base:\n    def run(self):\n        self.hook()\n\n    def hook(self):\n" \
           "        self.value = 1\n"
    # D overrides the hook from the start: its lines are older than the rename (a method
    # written after the hook had gone would be a new method reusing the name, not stale).
    subclass = "from pkg.{} import Base\n\n\nclass D(Base):\n    def hook(self):\n" \
               "        self.value = 2\n"
    repo.commit("base", {"pkg/__init__.py": "", "pkg/a.py": base,
                         "pkg/d.py": subclass.format("a")})
    repo.commit("Rename hook to new_hook", {"pkg/a.py": base.replace("hook", "new_hook")})
    repo.git("mv", "pkg/a.py", "pkg/b.py")
    repo.commit("Move a.py to b.py", {"pkg/d.py": subclass.format("b")})
    other = "class Other:\n    def go(self):\n        self.step()\n\n    def step(self):\n" \
            "        pass\n"
    # E's extra method makes the new a.py's history asked about in the same walk as b.py's.
    user = "from pkg.a import Other\n\n\nclass E(Other):\n    def step(self):\n        pass\n\n" \
           "    def extra(self):\n        pass\n"
    repo.commit("New a.py", {"pkg/a.py": other, "pkg/e.py": user})
    found = stale(run(repo.root))
    assert list(found) == ["pkg.d.D.hook"]
    assert found["pkg.d.D.hook"].evidence["new"] == "new_hook"
    # The same answer when the new a.py is not asked about at all.
    repo.write({"pkg/e.py": "from pkg.a import Other\n\n\nclass E(Other):\n"
                            "    def step(self):\n        pass\n"})
    assert list(stale(run(repo.root))) == ["pkg.d.D.hook"]


def test_a_prefix_dispatch_through_a_variable_keeps_the_family_alive(
    git_repo: Callable[..., GitRepo],
) -> None:
    v1 = ("class Expr:\n"
          "    def expand(self, **hints):\n"
          "        return self._eval_expand_func(**hints)\n\n"
          "    def _eval_expand_func(self, **hints):\n"
          "        return self\n")
    v2 = ("def expand_hint(expr, hint, **hints):\n"
          "    hint = '_eval_expand_' + hint\n"
          "    return getattr(expr, hint)(**hints)\n\n\n"
          "class Expr:\n"
          "    def expand(self, **hints):\n"
          "        return [expand_hint(self, h) for h in hints]\n")
    repo = git_repo()
    repo.commit("expr", {"pkg/__init__.py": "", "pkg/expr.py": v1,
                         "pkg/gamma.py": "from pkg.expr import Expr\n\n\nclass Gamma(Expr):\n"
                                         "    def _eval_expand_func(self, **hints):\n"
                                         "        return 1\n"})
    repo.commit("Expand hints are looked up by name", {"pkg/expr.py": v2})
    # '_eval_expand_' + hint reaches Gamma._eval_expand_func: the removed base method was
    # replaced by a dispatch by name, and the override is not dead.
    assert stale(run(repo.root)) == {}
    repo.commit("Without the dispatch", {"pkg/expr.py": v2.replace("'_eval_expand_' + hint",
                                                                   "hint")})
    assert list(stale(run(repo.root))) == ["pkg.gamma.Gamma._eval_expand_func"]


def test_lines_written_on_top_of_the_change_in_the_same_second(
    git_repo: Callable[..., GitRepo]
) -> None:
    repo = git_repo()
    os.environ["GIT_COMMITTER_DATE"] = "2023-09-23T16:40:27"  # a rebased series: one second
    try:
        before = repo.commit("older, same second", {"pkg/a.py": "def old():\n    return 1\n"})
        change = repo.commit("the change", {"pkg/b.py": "x = 1\n"})
        after = repo.commit("on top of it", {"pkg/c.py": "def new():\n    return 2\n"})
    finally:
        del os.environ["GIT_COMMITTER_DATE"]
    when = int(repo.git("log", "-1", "--format=%ct", change).strip())
    history = HistoryIndex(Repo(repo.root))
    assert history.written_after("pkg/c.py", 1, 2, when, change)  # descends from the change
    assert not history.written_after("pkg/a.py", 1, 2, when, change)  # older, same second
    assert history.written_after("pkg/b.py", 1, 1, when, change)  # the change itself
    assert before != after
