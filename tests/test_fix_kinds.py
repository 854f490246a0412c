"""The fix kinds ruff users expect (issue 26): safe fixes by default, ``--unsafe-fixes`` for the
port of a renamed hook's new signature, ``--diff`` showing both, and ``--add-override``.

Real git repositories in temporary directories, the real command line in a subprocess, real
audits afterwards; nothing of hookguard is mocked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import GIT_ENV, GitRepo, load_fixture_builder

build = load_fixture_builder()

M3 = "trtllm_mini/attention_backend/sparse/minimax_m3/cache_manager.py"
M3_CLASS = "MiniMaxM3KVCacheManagerV2"
HELD = "fix held back as unsafe (use --unsafe-fixes)"


def hookguard(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hookguard", *args], cwd=cwd,
                          capture_output=True, text=True, check=False,
                          env={**os.environ, **GIT_ENV})


def snapshot(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text()
            for p in sorted(root.rglob("*.py")) if ".git" not in p.parts}


def audit(root: Path) -> list[dict[str, object]]:
    proc = hookguard(root, "audit", "--format", "json", "--no-cache")
    assert proc.returncode in (0, 1), proc.stderr
    found: list[dict[str, object]] = json.loads(proc.stdout)["findings"]
    return found


def errors_at(root: Path, path: str, symbol_part: str) -> list[dict[str, object]]:
    return [f for f in audit(root) if f["path"] == path and f["severity"] == "error"
            and symbol_part in str(f["symbol"])]


def run_python(root: Path, code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=root,
                          capture_output=True, text=True, check=False,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


# -- --unsafe-fixes on the demo ----------------------------------------------------------------
@pytest.fixture
def demo(tmp_path: Path) -> Path:
    root: Path = build.build_kvcache_repo(tmp_path / "demo")
    return root


def test_demo_without_the_flag_holds_the_port_back_and_counts_it(demo: Path) -> None:
    before = snapshot(demo)
    proc = hookguard(demo, "fix", "--no-cache")
    assert proc.returncode == 1
    assert f"{M3}:68: held back HG001 (unsafe fix, use --unsafe-fixes): renamed " in proc.stdout
    assert f"{M3}:92: fixed HG002: added keyword-only parameters" in proc.stdout
    assert f"hookguard fix: 1 fixed, 1 refused; changed 1 file; 1 {HELD}\n" in proc.stderr
    text = (demo / M3).read_text()
    assert "def _build_pool_mapping_tensors(self)" in text  # nothing unsafe applied
    assert "_prepare_page_table_tensor" not in text
    assert {k for k, v in snapshot(demo).items() if before[k] != v} == {M3}


def test_demo_unsafe_fix_ports_the_signature_and_the_audit_is_clean_there(demo: Path) -> None:
    proc = hookguard(demo, "fix", "--no-cache", "--unsafe-fixes")
    assert proc.returncode == 1, proc.stderr  # the removed hook of DeepSeek-V4 stays refused
    assert (
        f"{M3}:68: fixed HG001 (unsafe fix): renamed {M3_CLASS}._build_pool_mapping_tensors to "
        f"_prepare_page_table_tensor and 1 reference in {M3_CLASS}, with the signature of "
        "KVCacheManagerV2._prepare_page_table_tensor: "
        "_prepare_page_table_tensor(self, index_mapper_capacity=None), since "
        "KVCacheManagerV2.__init__ calls self._prepare_page_table_tensor(...)"
    ) in proc.stdout
    assert (f"index_mapper_capacity defaults to None: {M3_CLASS}._rebuild_after_resize calls "
            "it without one") in proc.stdout
    assert "hookguard fix: 2 fixed (1 unsafe), 1 refused; changed 1 file" in proc.stderr
    assert "held back" not in proc.stdout + proc.stderr
    text = (demo / M3).read_text()
    # Renamed, the base's parameter added (its own call passes none: it defaults to None),
    # the return annotation and the body kept, the class's own call renamed with it.
    assert ("    def _prepare_page_table_tensor(self, index_mapper_capacity=None) -> "
            "tuple[torch.Tensor, torch.Tensor]:\n"
            "        pointers = torch.zeros((self.num_pools, 2), dtype=torch.int64)\n") in text
    assert "= self._prepare_page_table_tensor()\n" in text
    assert "_build_pool_mapping_tensors" not in text
    # No error at the fixed overrides: the stale override is gone and the base's call binds.
    assert errors_at(demo, M3, "") == []
    # The override now runs and replaces the hook without super(); no contract declares the
    # new hook's state and inferred state is off by default: nothing new is reported.
    assert "now reported" not in proc.stderr, proc.stderr
    after = snapshot(demo)
    again = hookguard(demo, "fix", "--no-cache", "--unsafe-fixes")
    assert snapshot(demo) == after, again.stdout
    assert "fixed" not in again.stdout and "changed 0 files" in again.stderr


def test_demo_diff_shows_both_kinds_and_applies_only_the_safe_one(demo: Path) -> None:
    before = snapshot(demo)
    proc = hookguard(demo, "fix", "--no-cache", "--diff")
    assert proc.returncode == 1  # the safe fix would change a file
    assert snapshot(demo) == before
    at = proc.stdout.index("# unsafe fixes held back")
    patch, held = proc.stdout[:at], proc.stdout[at:]
    assert f"--- a/{M3}\n+++ b/{M3}\n" in patch
    assert "+        index_scale=None,\n" in patch  # the safe HG002 fix, applicable
    assert "_prepare_page_table_tensor" not in patch
    # The unsafe one follows, marked and commented out, on top of the safe one.
    assert f"# unsafe fix: {M3}:68 HG001: renamed {M3_CLASS}._build_pool_mapping_tensors" in held
    assert ("# -    def _build_pool_mapping_tensors(self) -> tuple[torch.Tensor, torch.Tensor]:\n"
            "# +    def _prepare_page_table_tensor(self, index_mapper_capacity=None) -> "
            "tuple[torch.Tensor, torch.Tensor]:\n") in held
    assert all(line.startswith("#") for line in held.splitlines())
    assert f"1 {HELD}" in proc.stderr
    assert f"{M3}:68: held back HG001 (unsafe fix, use --unsafe-fixes)" in proc.stderr
    # git applies the whole output as the patch of the safe fix alone: what plain fix writes.
    applied = subprocess.run(["git", "apply", "-"], cwd=demo, input=proc.stdout, text=True,
                             capture_output=True, check=False)
    assert applied.returncode == 0, applied.stderr
    patched = snapshot(demo)
    subprocess.run(["git", "checkout", "-q", "--", "."], cwd=demo, check=True)
    hookguard(demo, "fix", "--no-cache")
    assert snapshot(demo) == patched


def test_demo_diff_with_unsafe_fixes_marks_them_and_is_what_the_fix_writes(demo: Path) -> None:
    proc = hookguard(demo, "fix", "--no-cache", "--diff", "--unsafe-fixes")
    assert proc.returncode == 1
    assert proc.stdout.startswith(f"# unsafe fix: {M3}:68 HG001: renamed ")
    assert "# unsafe fixes held back" not in proc.stdout
    assert "+    def _prepare_page_table_tensor(self, index_mapper_capacity=None)" in proc.stdout
    assert "+        index_scale=None,\n" in proc.stdout
    assert f"{M3}:68: would fix HG001 (unsafe fix): renamed" in proc.stderr
    applied = subprocess.run(["git", "apply", "-"], cwd=demo, input=proc.stdout, text=True,
                             capture_output=True, check=False)
    assert applied.returncode == 0, applied.stderr
    patched = snapshot(demo)
    subprocess.run(["git", "checkout", "-q", "--", "."], cwd=demo, check=True)
    hookguard(demo, "fix", "--no-cache", "--unsafe-fixes")
    assert snapshot(demo) == patched


# -- --unsafe-fixes on small renamed hooks with new parameters ---------------------------------
BASE = """
class Base:
    def run(self):
        self.setup()

    def setup(self):
        self.ready = True
"""


def renamed(git_repo: Callable[..., GitRepo], child: str, new_base: str,
            extra: dict[str, str] | None = None) -> GitRepo:
    repo = git_repo()
    repo.commit("Add base", {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/child.py": child,
                             **(extra or {})})
    repo.commit("Rename setup to prepare", {"pkg/base.py": new_base})
    return repo


def test_new_parameters_are_ported_and_the_fixed_override_runs(
    git_repo: Callable[..., GitRepo]
) -> None:
    child = """
    from pkg.base import Base


    class Child(Base):
        def setup(self):
            self.ready = "child"

        def again(self):
            self.setup()
    """
    new_base = """
    class Base:
        def run(self):
            self.prepare(4, verbose=True)

        def prepare(self, size: int, *, verbose: bool = False) -> None:
            self.ready = size
    """
    repo = renamed(git_repo, child, new_base)
    held = hookguard(repo.root, "fix", "--no-cache")
    assert held.returncode == 1 and f"1 {HELD}" in held.stderr
    assert "def setup(self)" in (repo.root / "pkg/child.py").read_text()
    proc = hookguard(repo.root, "fix", "--no-cache", "--unsafe-fixes")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = (repo.root / "pkg/child.py").read_text()
    # ``size`` is new and Child.again passes none: None; ``verbose`` keeps the base's default
    # and its annotation (a builtin, the same in both files).
    assert "    def prepare(self, size=None, *, verbose: bool = False):\n" in text, text
    assert "        self.prepare()\n" in text
    assert audit(repo.root) == []
    out = run_python(repo.root, """
        from pkg.child import Child
        c = Child()
        c.run()
        print(c.ready)
        c.ready = None
        c.again()
        print(c.ready)
    """)
    assert out == "child\nchild\n"  # the override runs for the base's call and its own
    after = snapshot(repo.root)
    again = hookguard(repo.root, "fix", "--no-cache", "--unsafe-fixes")
    assert again.returncode == 0 and snapshot(repo.root) == after


def test_port_keeps_the_overrides_defaults_and_the_lists_layout(
    git_repo: Callable[..., GitRepo]
) -> None:
    child = """
    from collections import OrderedDict

    from pkg.base import Base


    class Child(Base):
        def setup(
            self,
            limit=10,  # the override's own default
        ):
            self.table = OrderedDict(limit=limit)
    """
    new_base = """
    from collections import OrderedDict

    MODE = "fast"


    class Base:
        def run(self):
            self.prepare(OrderedDict(), "slow")

        def prepare(self, table: OrderedDict, mode: str = MODE, *, limit: int = 5,
                    retries: int = 3, **options: object) -> None:
            self.table = table
    """
    repo = renamed(git_repo, child, new_base)
    proc = hookguard(repo.root, "fix", "--no-cache", "--unsafe-fixes")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = (repo.root / "pkg/child.py").read_text()
    # The list keeps the override's layout. ``table``'s annotation means the same here (the same
    # import); ``mode``'s default is a constant of the base's module, unknown here and never
    # read by the body: None, without the annotation it no longer fits; ``limit`` keeps the
    # override's default 10; ``retries`` and ``**options`` come as the base has them.
    assert ("    def prepare(\n"
            "        self,\n"
            "        table: OrderedDict,\n"
            "        mode=None,\n"
            "        *,\n"
            "        limit=10,\n"
            "        retries: int = 3,\n"
            "        **options: object,\n"
            "    ):\n"
            "        self.table = OrderedDict(limit=limit)\n") in text, text
    assert audit(repo.root) == []
    assert run_python(repo.root, """
        from pkg.child import Child
        c = Child()
        c.run()
        print(dict(c.table))
    """) == "{'limit': 10}\n"


REFUSALS = {
    # The override's body reads its parameter n; the base's hook has count instead.
    "body-uses-a-removed-parameter": (
        "def setup(self, n):\n        self.n = n\n",
        "def prepare(self, count):\n        pass\n", "self.prepare(count=3)",
        "its body uses its parameter n, which Base.prepare does not take (renamed or removed "
        "there)"),
    # The body reads the module's size; a parameter size would shadow it.
    "new-parameter-shadows-a-global": (
        "def setup(self):\n        self.size = size\n",
        "def prepare(self, size):\n        pass\n", "self.prepare(2)",
        "its body uses the name size, which the new parameter size would shadow"),
    # The base's own call passes more than its hook takes: nothing can bind it.
    "the-base-call-binds-nothing": (
        "def setup(self, mode=1):\n        self.mode = mode\n",
        "def prepare(self, a, mode=LOCAL):\n        pass\n", "self.prepare(1, 2, 3)",
        None),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_port_refusals_say_why(git_repo: Callable[..., GitRepo], case: str) -> None:
    child_def, base_def, call, reason = REFUSALS[case]
    child = ("from pkg.base import Base\n\nsize = 3\n\n\nclass Child(Base):\n"
             f"    {child_def}")
    new_base = f"LOCAL = 2\n\n\nclass Base:\n    def run(self):\n        {call}\n\n    {base_def}"
    repo = renamed(git_repo, child, new_base)
    before = (repo.root / "pkg/child.py").read_text()
    proc = hookguard(repo.root, "fix", "--no-cache", "--unsafe-fixes")
    assert proc.returncode == 1
    assert ("pkg/child.py:7: refused HG001: renaming would turn a dead override into a crash: "
            "Base.run calls self.prepare(...) (pkg/base.py:6), which Child.setup") in proc.stdout
    if reason is None:
        reason = ("Base.run calls self.prepare(...) (pkg/base.py:6), which the ported "
                  "prepare(self, a, mode=...) cannot accept (takes 2 positional arguments but "
                  "3 were given)")
    assert (f"; and its signature cannot be ported: {reason}; port it to prepare by hand"
            in proc.stdout), proc.stdout
    assert (repo.root / "pkg/child.py").read_text() == before
    # Refused, so not held back either: the same reason without the flag.
    plain = hookguard(repo.root, "fix", "--no-cache")
    assert f"cannot be ported: {reason}" in plain.stdout and HELD not in plain.stderr


def test_a_default_the_file_cannot_see_is_refused_where_the_body_reads_it(
    git_repo: Callable[..., GitRepo]
) -> None:
    child = """
    from pkg.base import Base


    class Child(Base):
        def setup(self, mode):
            self.mode = mode
    """
    new_base = """
    LOCAL = 2


    class Base:
        def run(self):
            self.prepare()

        def prepare(self, mode=LOCAL):
            pass
    """
    repo = renamed(git_repo, child, new_base)
    proc = hookguard(repo.root, "fix", "--no-cache", "--unsafe-fixes")
    assert proc.returncode == 1
    assert ("cannot be ported: the default of mode in Base.prepare (LOCAL) names what this "
            "file does not import the same way; port it to prepare by hand") in proc.stdout, (
                proc.stdout)


def test_positional_arguments_must_keep_their_parameter(
    git_repo: Callable[..., GitRepo]
) -> None:
    child = """
    from pkg.base import Base


    class Child(Base):
        def setup(self, a=0, b=0):
            self.pair = (a, b)

        def again(self):
            self.setup(1, 2)
    """
    new_base = """
    class Base:
        def run(self):
            self.prepare(1, 2, 3)

        def prepare(self, b, a, c):
            pass
    """
    repo = renamed(git_repo, child, new_base)
    proc = hookguard(repo.root, "fix", "--no-cache", "--unsafe-fixes")
    assert proc.returncode == 1
    assert ("Child.again passes positional arguments to self.setup (pkg/child.py:9), and "
            "Base.prepare(self, b, a, c) takes its parameters in another order") in proc.stdout


def test_a_subclass_override_the_port_cannot_carry_blocks_it(
    git_repo: Callable[..., GitRepo]
) -> None:
    child = """
    from pkg.base import Base


    class Child(Base):
        def setup(self):
            self.ready = 1


    class GrandChild(Child):
        def setup(self):
            self.ready = 2
    """
    new_base = BASE.replace("self.setup()", "self.prepare(1)").replace(
        "def setup(self)", "def prepare(self, n)")
    repo = renamed(git_repo, child, new_base)
    before = snapshot(repo.root)
    proc = hookguard(repo.root, "fix", "--no-cache", "--unsafe-fixes")
    assert proc.returncode == 1
    assert ("its subclass GrandChild overrides setup too, and GrandChild.setup(self) cannot "
            "accept the call in Base.run (pkg/base.py:3: takes 0 positional arguments but 1 "
            "were given)") in proc.stdout, proc.stdout
    assert snapshot(repo.root) == before


def test_port_carries_descendants_references(git_repo: Callable[..., GitRepo]) -> None:
    child = """
    from pkg.base import Base


    class Child(Base):
        def setup(self):
            self.ready = 1
    """
    grand = """
    from pkg.child import Child


    class GrandChild(Child):
        def reset(self):
            super().setup()
    """
    new_base = BASE.replace("self.setup()", "self.prepare(1)").replace(
        "def setup(self)", "def prepare(self, n)")
    repo = renamed(git_repo, child, new_base, {"pkg/grand.py": grand})
    proc = hookguard(repo.root, "fix", "--no-cache", "--unsafe-fixes")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "    def prepare(self, n=None):\n" in (repo.root / "pkg/child.py").read_text()
    assert "        super().prepare()\n" in (repo.root / "pkg/grand.py").read_text()
    assert "pkg/grand.py:4: fixed HG001 (unsafe fix): renamed 1 reference" in proc.stdout
    assert audit(repo.root) == []


# -- --add-override ----------------------------------------------------------------------------
FAMILY = {
    "pkg/__init__.py": "",
    "pkg/base.py": """
        import threading


        class Base:
            kind = "base"

            def __init__(self):
                self.ready = False

            def __call__(self):
                return self.step()

            def step(self):
                return 1

            @classmethod
            def make(cls):
                return cls()

            def __secret(self):
                return 0


        class Worker(threading.Thread):
            def run(self):
                pass
    """,
    "pkg/child.py": """
        \"\"\"The child.\"\"\"

        from typing import Any

        from pkg.base import Base


        class Child(Base):
            def __init__(self):
                super().__init__()

            def __call__(self):
                return 2

            def __repr__(self):
                return "Child()"

            def step(self):
                return 3

            @classmethod
            def make(cls):
                return cls()

            def kind(self):
                return "method"

            def __secret(self):
                return 4

            def own(self) -> Any:
                return None
    """,
}


def decorated(text: str) -> list[str]:
    """The methods ``@override`` decorates, in order."""
    lines = text.splitlines()
    out = []
    for index, line in enumerate(lines):
        if line.strip() in ("@override", "@typing_extensions.override", "@ov"):
            following = next(n for n in lines[index + 1:] if n.strip().startswith("def "))
            out.append(following.strip().split("(")[0][4:])
    return out


def family(git_repo: Callable[..., GitRepo], requires: str | None,
           files: dict[str, str] | None = None) -> GitRepo:
    repo = git_repo()
    tree = {**FAMILY, **(files or {})}
    if requires is not None:
        tree["pyproject.toml"] = f'[project]\nname = "x"\nrequires-python = "{requires}"\n'
    repo.commit("add", tree)
    return repo


def test_add_override_on_312_uses_typing_in_the_existing_import(
    git_repo: Callable[..., GitRepo]
) -> None:
    repo = family(git_repo, ">=3.12")
    before = audit(repo.root)
    proc = hookguard(repo.root, "fix", "--no-cache", "--add-override")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "@override from typing: requires-python = '>=3.12'" in proc.stderr
    text = (repo.root / "pkg/child.py").read_text()
    assert "from typing import Any, override\n" in text
    assert text.count("import") == 2  # one import, merged; nothing duplicated
    # __call__: a hook the family's base defines; step, make, kind (a class attribute there);
    # not __init__ (a constructor), __repr__ (only object has it), the name-mangled __secret,
    # nor own.
    assert decorated(text) == ["__call__", "step", "make", "kind"]
    assert "    @override\n    @classmethod\n    def make(cls):" in text
    base = (repo.root / "pkg/base.py").read_text()
    assert decorated(base) == ["run"]  # threading.Thread.run: a well-known base outside
    assert "import threading\nfrom typing import override\n" in base
    assert ("pkg/child.py:12: added @override: Child.__call__ (overrides Base.__call__); "
            "imported override from typing") in proc.stdout
    assert "added @override to 5 methods" in proc.stderr
    assert audit(repo.root) == before  # @override on real overrides proves nothing stale
    after = snapshot(repo.root)
    again = hookguard(repo.root, "fix", "--no-cache", "--add-override")
    assert again.returncode == 0 and snapshot(repo.root) == after
    assert "added @override to 0 methods" in again.stderr


def test_add_override_before_312_uses_typing_extensions(
    git_repo: Callable[..., GitRepo]
) -> None:
    repo = family(git_repo, ">=3.9, <4")
    proc = hookguard(repo.root, "fix", "--no-cache", "--add-override")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = (repo.root / "pkg/child.py").read_text()
    assert ("from typing import Any\n\nfrom typing_extensions import override\n\n"
            "from pkg.base import Base\n") in text, text
    assert decorated(text) == ["__call__", "step", "make", "kind"]
    assert text.count("typing_extensions") == 1
    after = snapshot(repo.root)
    hookguard(repo.root, "fix", "--no-cache", "--add-override")
    assert snapshot(repo.root) == after


def test_add_override_without_requires_python_follows_the_interpreter(
    git_repo: Callable[..., GitRepo]
) -> None:
    repo = family(git_repo, None)
    proc = hookguard(repo.root, "fix", "--no-cache", "--add-override")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    source = "typing" if sys.version_info >= (3, 12) else "typing_extensions"
    running = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert (f"@override from {source}: no readable pyproject.toml; the running Python is "
            f"{running}") in proc.stderr
    assert "import Any, override" in (repo.root / "pkg/child.py").read_text() or (
        "from typing_extensions import override" in (repo.root / "pkg/child.py").read_text())


def test_add_override_reuses_what_the_file_imports(git_repo: Callable[..., GitRepo]) -> None:
    aliased = textwrap.dedent(FAMILY["pkg/child.py"]).replace(
        "from typing import Any\n", "from typing import Any\n\nfrom typing_extensions import "
        "override as ov\n").replace("    def step(self):", "    @ov\n    def step(self):")
    fallback = """
        try:
            from typing import override
        except ImportError:
            from typing_extensions import override

        from pkg.base import Base


        class Other(Base):
            def step(self):
                return 5
    """
    module = """
        import typing_extensions

        from pkg.base import Base


        class Third(Base):
            def step(self):
                return 6
    """
    checking = """
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            from typing_extensions import override

        from pkg.base import Base


        class Fourth(Base):
            def step(self):
                return 7
    """
    repo = family(git_repo, ">=3.10", {"pkg/child.py": aliased, "pkg/fallback.py": fallback,
                                       "pkg/module.py": module, "pkg/checking.py": checking})
    proc = hookguard(repo.root, "fix", "--no-cache", "--add-override")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    child = (repo.root / "pkg/child.py").read_text()
    assert decorated(child) == ["__call__", "step", "make", "kind"]
    assert child.count("@ov\n") == 4 and "import override\n" not in child
    fallback_text = (repo.root / "pkg/fallback.py").read_text()
    assert fallback_text.count("import override") == 2 and "    @override\n    def step" in (
        fallback_text)
    assert "    @typing_extensions.override\n    def step" in (
        repo.root / "pkg/module.py").read_text()
    # Under TYPE_CHECKING the name does not exist when the class is created: a real import.
    checking_text = (repo.root / "pkg/checking.py").read_text()
    assert checking_text.count("from typing_extensions import override") == 2
    assert run_python(repo.root, "import pkg.checking, pkg.fallback, pkg.module, pkg.child\n"
                      "print(pkg.checking.Fourth.step.__override__)") == "True\n"
    after = snapshot(repo.root)
    hookguard(repo.root, "fix", "--no-cache", "--add-override")
    assert snapshot(repo.root) == after


def test_add_override_refuses_a_file_that_binds_the_name(
    git_repo: Callable[..., GitRepo]
) -> None:
    taken = """
        from pkg.base import Base


        def override(method):
            return method


        class Other(Base):
            def step(self):
                return 5
    """
    repo = family(git_repo, ">=3.12", {"pkg/taken.py": taken})
    proc = hookguard(repo.root, "fix", "--no-cache", "--add-override")
    assert proc.returncode == 1
    assert ("pkg/taken.py:9: refused @override: this file binds the name override to "
            "something else (defined in this file): add @override by hand") in proc.stdout
    assert "@override" not in (repo.root / "pkg/taken.py").read_text()
    assert decorated((repo.root / "pkg/child.py").read_text())  # the other files are done


def test_add_override_only_under_the_paths_given(git_repo: Callable[..., GitRepo]) -> None:
    repo = family(git_repo, ">=3.12")
    proc = hookguard(repo.root, "fix", "--no-cache", "--add-override", "pkg/child.py")
    assert proc.returncode == 0, proc.stderr
    assert decorated((repo.root / "pkg/child.py").read_text())
    assert "override" not in (repo.root / "pkg/base.py").read_text()


def test_add_override_with_a_port_decorates_the_renamed_override(
    git_repo: Callable[..., GitRepo]
) -> None:
    child = """
    from pkg.base import Base


    class Child(Base):
        def setup(self):
            self.ready = "child"
    """
    new_base = BASE.replace("self.setup()", "self.prepare(1)").replace(
        "def setup(self)", "def prepare(self, n)")
    repo = renamed(git_repo, child, new_base,
                   {"pyproject.toml": '[project]\nname = "x"\nrequires-python = ">=3.12"\n'})
    held = hookguard(repo.root, "fix", "--no-cache", "--add-override", "--diff")
    assert held.returncode == 0  # nothing safe to do: the port is held back, with its decorator
    assert "# +    @override\n# +    def prepare(self, n):\n" in held.stdout, held.stdout
    proc = hookguard(repo.root, "fix", "--no-cache", "--add-override", "--unsafe-fixes")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = (repo.root / "pkg/child.py").read_text()
    assert "from typing import override\n" in text
    assert "    @override\n    def prepare(self, n):\n" in text
    assert audit(repo.root) == []
    after = snapshot(repo.root)
    hookguard(repo.root, "fix", "--no-cache", "--add-override", "--unsafe-fixes")
    assert snapshot(repo.root) == after


def test_add_override_on_the_demo_changes_no_finding(demo: Path) -> None:
    before = {(f["rule"], f["symbol"]) for f in audit(demo)}
    proc = hookguard(demo, "fix", "--no-cache", "--add-override", "--select", "HG003")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "@override from typing_extensions: requires-python = '>=3.10'" in proc.stderr
    assert "the added imports need typing_extensions" in proc.stderr
    text = (demo / M3).read_text()
    assert "from typing_extensions import override\n" in text
    assert text.count("@override\n") == 3  # resize_pools, the HG002 one, update_resources
    assert {(f["rule"], f["symbol"]) for f in audit(demo)} == before
    after = snapshot(demo)
    hookguard(demo, "fix", "--no-cache", "--add-override", "--select", "HG003")
    assert snapshot(demo) == after


@pytest.mark.parametrize(("spec", "bound"), [
    (">=3.12", (3, 12)), ("~=3.12", (3, 12)), ("==3.13.*", (3, 13)), (">=3.9,<4", (3, 9)),
    (">3.11", (3, 11)), ("<4", (3, 0)), ("!=3.0.*, >= 3.10", (3, 10)), ("nonsense", None),
])
def test_requires_python_lower_bound(spec: str, bound: tuple[int, int] | None) -> None:
    from hookguard.commands.fix import python_lower_bound

    assert python_lower_bound(spec) == bound
