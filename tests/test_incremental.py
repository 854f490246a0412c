"""A warm audit after an edit re-checks only the classes the edit can affect, and always reports
exactly what a from-scratch audit reports."""

from __future__ import annotations

import importlib.util
import json
import random
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from hookguard.engine import AuditResult, Options, audit
from tests.conftest import ROOT, GitRepo, load_fixture_builder


def _findings(result: AuditResult) -> list[str]:
    return [json.dumps(f.to_json(), sort_keys=True) for f in result.findings]


def _warm_and_scratch(root: Path) -> tuple[AuditResult, AuditResult]:
    warm = audit([root], Options())
    scratch = audit([root], Options(use_cache=False))
    assert _findings(warm) == _findings(scratch)
    return warm, scratch


BASE = """
class Base:
    def run(self, x):
        self.prepare(x)
        self.finish()

    def prepare(self, x):
        self.table = x

    def finish(self):
        self.done = True
"""

FILES = {
    "pkg/__init__.py": "",
    "pkg/base.py": BASE,
    "pkg/a.py": """
        from pkg.base import Base


        class A(Base):
            def prepare(self, x):
                self.table = x
        """,
    "pkg/b.py": """
        from pkg.base import Base


        class B(Base):
            def finish(self):
                self.done = True
        """,
    "pkg/c.py": """
        from pkg.base import Base


        class C(Base):
            def helper(self):
                return 1
        """,
}


@pytest.fixture
def family(git_repo: Callable[..., GitRepo]) -> GitRepo:
    repo = git_repo()
    # (HG003's inferred state on: the family's hook state has no contract)
    repo.commit("family", {**FILES, "pyproject.toml": "[tool.hookguard]\ninferred-state = true\n"})
    first = audit([repo.root], Options())
    assert first.rechecked is None and first.findings == []
    return repo


def _append(repo: GitRepo, path: str, text: str) -> None:
    with (repo.root / path).open("a") as handle:
        handle.write(text)


def test_a_new_base_method_nothing_names_rechecks_only_its_own_file(family: GitRepo) -> None:
    _append(family, "pkg/base.py", "\n    def unrelated(self, value=None):\n        return value\n")
    warm, _ = _warm_and_scratch(family.root)
    assert warm.rechecked == 1  # Base itself


def test_an_edit_to_an_unrelated_subclass_rechecks_that_class(family: GitRepo) -> None:
    _append(family, "pkg/c.py", "\n    def other(self):\n        return 2\n")
    warm, _ = _warm_and_scratch(family.root)
    assert warm.rechecked == 1  # C


def test_a_new_keyword_at_the_base_call_site_reaches_the_override(family: GitRepo) -> None:
    base = family.root / "pkg/base.py"
    base.write_text(base.read_text().replace("self.prepare(x)", "self.prepare(x, device=None)")
                    .replace("def prepare(self, x)", "def prepare(self, x, device=None)"))
    warm, _ = _warm_and_scratch(family.root)
    assert warm.rechecked is not None
    assert [(f.code, f.symbol) for f in warm.findings] == [("HG002", "pkg.a.A.prepare")]
    # ... and when the base stops passing it, the finding goes away again.
    base.write_text(base.read_text().replace("self.prepare(x, device=None)", "self.prepare(x)"))
    warm, _ = _warm_and_scratch(family.root)
    assert warm.findings == []


def test_lines_moved_in_a_base_recheck_only_findings_that_point_there(family: GitRepo) -> None:
    base = family.root / "pkg/base.py"
    base.write_text("# a comment\n" + base.read_text())
    warm, _ = _warm_and_scratch(family.root)
    assert warm.rechecked == 1  # every member moved, none changed: only Base itself
    base.write_text(base.read_text().replace("self.prepare(x)", "self.prepare(x, device=None)")
                    .replace("def prepare(self, x)", "def prepare(self, x, device=None)"))
    warm, _ = _warm_and_scratch(family.root)
    [finding] = warm.findings
    assert finding.related[0].path == "pkg/base.py"
    line = finding.related[0].line
    base.write_text("# another\n# and another\n" + base.read_text())
    warm, _ = _warm_and_scratch(family.root)
    assert warm.rechecked == 2  # Base, and A: its finding points into base.py
    assert warm.findings[0].related[0].line == line + 2


def test_state_set_in_a_helper_reaches_the_override_that_skips_it(family: GitRepo) -> None:
    # The base hook now sets more state through a helper: B's re-implementation skips it.
    base = family.root / "pkg/base.py"
    base.write_text(base.read_text().replace(
        "        self.done = True\n",
        "        self.done = True\n        self._flush_buffers()\n\n"
        "    def _flush_buffers(self):\n        self.buffers = []\n\n"
        "    def drain(self):\n        return len(self.buffers)\n",
    ))
    warm, _ = _warm_and_scratch(family.root)
    assert ("HG003", "pkg.b.B.finish") in [(f.code, f.symbol) for f in warm.findings]


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(("pkg/base.py", "class Base:", "import os\n\n\nclass Base:"), id="import"),
        pytest.param(("pkg/a.py", "class A(Base):", "class A(Base, object):"), id="bases"),
        pytest.param(("pkg/d.py", None, "from pkg.c import C\n\n\nclass D(C):\n    pass\n"),
                     id="new-file"),
        pytest.param(("pkg/b.py", "class B(Base):", "class B(Base:"), id="syntax-error"),
    ],
)
def test_changes_to_the_class_graph_check_everything(
    family: GitRepo, change: tuple[str, str | None, str]
) -> None:
    path, old, new = change
    target = family.root / path
    target.write_text(target.read_text().replace(old, new) if old else new)
    warm, scratch = _warm_and_scratch(family.root)
    assert warm.rechecked is None
    assert [e.path for e in warm.errors] == [e.path for e in scratch.errors]


def test_a_new_commit_checks_everything(family: GitRepo) -> None:
    _append(family, "pkg/c.py", "\n    def other(self):\n        return 2\n")
    family.commit("more")
    warm, _ = _warm_and_scratch(family.root)
    assert warm.rechecked is None  # history evidence depends on HEAD


def test_the_incident_fixes_give_the_same_findings_as_a_fresh_audit(tmp_path: Path) -> None:
    build = load_fixture_builder()
    root = build.build_kvcache_repo(tmp_path / "kv", stage="incident")
    incident = audit([root], Options())
    assert {f.code for f in incident.findings} >= {"HG001", "HG002"}
    for stage in ("half_fixed", "fixed"):
        for path in sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py")):
            if ".hookguard_cache" in path:
                continue
            try:
                text = build.kvcache_file_source(path, stage)
            except (KeyError, FileNotFoundError, ValueError):
                continue
            if text != (root / path).read_text():
                (root / path).write_text(text)
        warm, _ = _warm_and_scratch(root)
        assert warm.project is not None and warm.rechecked is not None
        assert warm.rechecked < len(warm.project.classes)


# -- random edits on a generated checkout -----------------------------------------------------

def _synth() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hookguard_bench_synth",
                                                  ROOT / "benchmarks" / "synth.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


_DEF = re.compile(r"    def (\w+)\(self")


def _random_edit(path: Path, rng: random.Random, step: int) -> str:
    """One plausible edit of a module: a new, renamed, widened or narrowed method, a changed
    body, a new ``super()`` call, field or by-name lookup, or a new import."""
    lines = path.read_text().splitlines()
    defs = [i for i, line in enumerate(lines) if _DEF.match(line)]
    fields = sorted(set(re.findall(r"self\.(\w+)", "\n".join(lines)))) or ["x"]
    kinds = ["add", "widen", "narrow", "rename", "drop", "super", "assign", "body", "getattr",
             "import"] if defs else ["getattr", "import"]
    kind = rng.choice(kinds)
    at = rng.choice(defs) if defs else 0
    name = _DEF.match(lines[at]).group(1) if defs else "run"  # type: ignore[union-attr]
    if kind == "add":
        body = rng.choice(["return x", f"self.{rng.choice(fields)} = x", f"return self.{name}(x)"])
        lines[at:at] = [f"    def _edit_{step}(self, x=None):", f"        {body}", ""]
    elif kind == "widen" and "**" not in lines[at]:
        lines[at] = re.sub(r"\)( ->[^:]*)?:$", r", extra=None)\1:", lines[at])
    elif kind == "narrow":
        lines[at] = lines[at].replace("(self", "(self, extra", 1)
    elif kind == "rename":
        lines[at] = lines[at].replace(f"def {name}(", f"def {name}_v2(", 1)
    elif kind == "drop":
        sets = [i for i, line in enumerate(lines) if line.strip().startswith("self.")]
        if sets:
            i = rng.choice(sets)
            lines[i] = lines[i][: len(lines[i]) - len(lines[i].lstrip())] + "pass"
    elif kind == "super":
        lines.insert(at + 1, f"        super().{name}()")
    elif kind == "assign":
        lines.insert(at + 1, f"        self.{rng.choice([*fields, 'fresh_field'])} = None")
    elif kind == "body":
        lines.insert(at + 1, f"        _unused = {step}")
    elif kind == "getattr":
        lines.append(f'_edit_{step} = getattr(object, "{name}", None)')
    else:
        lines.insert(2, "import json as _edit_json")
    path.write_text("\n".join(lines) + "\n")
    return kind


def test_random_edits_give_the_same_findings_as_a_fresh_audit(tmp_path: Path) -> None:
    root = _synth().generate(tmp_path / "synth", 60, 7)
    audit([root], Options())
    modules = sorted(p for p in (root / "synth").rglob("*.py"))
    bases = [p for p in modules if p.parent.name == "core"]
    rng = random.Random(11)
    incremental = 0
    for step in range(12):
        picks = [rng.choice(bases)] if rng.random() < 0.6 else rng.sample(modules, 2)
        kinds = [_random_edit(p, rng, step) for p in picks]
        warm = audit([root], Options())
        scratch = audit([root], Options(use_cache=False))
        assert _findings(warm) == _findings(scratch), (step, kinds, picks)
        incremental += warm.rechecked is not None
    assert incremental >= 6  # most edits leave the class graph alone


def test_what_history_could_not_answer_is_still_said_after_an_edit(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = git_repo()
    base = "class Base:\n    def run(self):\n        self.setup()\n\n    def setup(self):\n" \
           "        pass\n"
    repo.commit("base", {"pkg/__init__.py": "", "pkg/base.py": base,
                         "pkg/child.py": "from pkg.base import Base\n\n\nclass Child(Base):\n"
                                         "    def setup(self):\n        pass\n"})
    old_blob = repo.git("rev-parse", "HEAD:pkg/base.py").strip()
    repo.commit("Rename setup to prepare", {"pkg/base.py": base.replace("setup", "prepare")})
    # A broken clone: the old version of base.py is gone, so its history cannot be read.
    (repo.root / ".git" / "objects" / old_blob[:2] / old_blob[2:]).unlink()
    first = audit([repo.root], Options())
    lost = [n for n in first.notes if "history unavailable" in n]
    assert lost
    _append(repo, "pkg/__init__.py", "# edited\n")
    warm = audit([repo.root], Options())
    assert warm.rechecked == 0
    assert [n for n in warm.notes if "history unavailable" in n] == lost


def test_a_finding_pointing_into_a_non_ascii_path_moves_with_it(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = git_repo()
    base = "class Base:\n    def run(self, x):\n        self.hook(x, 1)\n\n" \
           "    def hook(self, x, y):\n        self.v = x\n"
    repo.commit("base", {"pkg/__init__.py": "", "pkg/basé.py": base,
                         "pkg/d.py": "from pkg.basé import Base\n\n\nclass D(Base):\n"
                                     "    def hook(self, x):\n        self.v = x\n"})
    audit([repo.root], Options())
    (repo.root / "pkg/basé.py").write_text("# a comment\n# another\n\n" + base)
    warm, _ = _warm_and_scratch(repo.root)
    assert warm.rechecked == 2 and warm.findings[0].related[0].line == 6


CONTRACT = """
[[hook]]
class = "pkg.base.Base"
method = "setup"

[hook.fields.pool]
type = "list"

[hook.fields.scale]
type = "float"
"""


def test_a_contract_field_set_by_a_new_mixin_member_is_seen(
    git_repo: Callable[..., GitRepo],
) -> None:
    # ``scale`` is a name only the contract gives: no member connects it to D by the code.
    repo = git_repo()
    repo.commit("family", {
        "pkg/__init__.py": "",
        "contracts/hooks.toml": CONTRACT,
        "pkg/base.py": """
            def init_scale(obj):
                obj.scale = 1.0


            class Base:
                def setup(self):
                    self.pool = []
                    init_scale(self)
            """,
        "pkg/mixin.py": "class Mixin:\n    def describe(self):\n        return 'mixin'\n",
        "pkg/d.py": """
            from pkg.base import Base
            from pkg.mixin import Mixin


            class D(Mixin, Base):
                def setup(self):
                    self.pool = [1]
            """,
    })
    first = audit([repo.root], Options())
    assert ("HG003", "pkg.d.D.setup") in [(f.code, f.symbol) for f in first.findings]
    repo.write({"pkg/mixin.py": """
        class Mixin:
            def describe(self):
                return "mixin"

            def configure(self):
                self.scale = 2.0
        """})
    warm, _ = _warm_and_scratch(repo.root)
    assert warm.rechecked is not None
    assert ("HG003", "pkg.d.D.setup") not in [(f.code, f.symbol) for f in warm.findings]


def test_deepening_a_shallow_clone_is_a_new_history(
    git_repo: Callable[..., GitRepo], tmp_path: Path
) -> None:
    origin = git_repo("origin")
    base = "class Base:\n    def run(self):\n        self.hook()\n\n    def hook(self):\n" \
           "        self.value = 1\n"
    # D overrides the hook from the first commit: its lines are older than the rename whatever
    # the clock says (a method written after the rename would be a new method reusing a name).
    origin.commit("c1", {"pkg/__init__.py": "", "pkg/base.py": base,
                         "pkg/other.py": "class Other:\n    def go(self):\n        return 1\n",
                         "pkg/d.py": "from pkg.base import Base\n\n\nclass D(Base):\n"
                                     "    def hook(self):\n        self.value = 2\n"})
    origin.commit("Rename hook to new_hook", {"pkg/base.py": base.replace("hook", "new_hook")})
    origin.commit("Other", {"pkg/other.py": "class Other:\n    def go(self):\n        return 3\n"})
    clone = tmp_path / "clone"
    origin.git("clone", "-q", "--depth", "1", f"file://{origin.root}", str(clone))
    assert audit([clone], Options()).findings == []  # the rename is beyond the boundary
    subprocess.run(["git", "fetch", "-q", "--unshallow"], cwd=clone, check=True)
    (clone / "pkg/other.py").write_text("class Other:\n    def go(self):\n        return 2\n")
    warm, _ = _warm_and_scratch(clone)
    assert [(f.code, f.symbol) for f in warm.findings] == [("HG001", "pkg.d.D.hook")]
