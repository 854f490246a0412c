"""``hookguard fix``: real files, real git repositories, real libcst parses; nothing mocked."""

from __future__ import annotations

import argparse
import ast
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hookguard.commands.fix import run_fix
from hookguard.engine import Options, audit
from hookguard.findings import Finding, Severity
from hookguard.fix import fix_findings
from tests.conftest import ROOT, GitRepo, load_fixture_builder, write_tree

build = load_fixture_builder()

M3 = "trtllm_mini/attention_backend/sparse/minimax_m3/cache_manager.py"
M3_CLASS = "trtllm_mini.attention_backend.sparse.minimax_m3.cache_manager.MiniMaxM3KVCacheManagerV2"


def fix(root: Path, *, diff: bool = False, contracts: tuple[str, ...] = ()) -> int:
    args = argparse.Namespace(paths=[root], diff=diff, no_cache=True, contracts=list(contracts))
    return run_fix(args)


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*.py"))
        if ".git" not in p.parts
    }


def stale(root: Path, **options: object) -> dict[str, Finding]:
    result = audit([root], Options(use_cache=False, **options))  # type: ignore[arg-type]
    return {f.symbol: f for f in result.findings if f.rule == "stale-override"}


# -- the incident ------------------------------------------------------------------------------
def test_incident_rename_is_held_back_because_the_base_calls_the_hook_with_an_argument(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Renaming the M3 override to ``_prepare_page_table_tensor(self)`` would make the base's
    ``self._prepare_page_table_tensor(capacity)`` call raise TypeError: a dead override would
    become a crash. Only a port of the base's signature fixes it, an unsafe fix: ``fix`` holds
    it back and says why; only the HG002 keywords are added (``tests/test_fix_kinds.py``
    applies the port under ``--unsafe-fixes``)."""
    repo = build.build_kvcache_repo(tmp_path / "kv")
    before = snapshot(repo)
    code = fix(repo)
    captured = capsys.readouterr()
    out = captured.out
    assert code == 1
    assert (
        f"{M3}:68: held back HG001 (unsafe fix, use --unsafe-fixes): renamed "
        "MiniMaxM3KVCacheManagerV2._build_pool_mapping_tensors to _prepare_page_table_tensor "
        "and 1 reference in MiniMaxM3KVCacheManagerV2, with the signature of "
        "KVCacheManagerV2._prepare_page_table_tensor: "
        "_prepare_page_table_tensor(self, index_mapper_capacity=None), since "
        "KVCacheManagerV2.__init__ calls self._prepare_page_table_tensor(...) "
        "(trtllm_mini/pyexecutor/kv_cache_manager_v2.py:115), which "
        "MiniMaxM3KVCacheManagerV2._build_pool_mapping_tensors(self) cannot accept (takes 0 "
        "positional arguments but 1 were given)"
    ) in out
    assert "1 fix held back as unsafe (use --unsafe-fixes)" in captured.err
    assert (
        "trtllm_mini/attention_backend/sparse/deepseek_v4/cache_manager.py:39: refused HG001: "
        "the hook was removed, not renamed: delete the method or move its logic"
    ) in out

    after = snapshot(repo)
    text = after[M3].decode()
    assert "def _build_pool_mapping_tensors(self)" in text
    assert "def _prepare_page_table_tensor" not in text
    # The only change: the keyword parameters of the HG002 fix.
    assert text.replace("        num_blocks_per_seq=None,\n        index_scale=None,\n", "") == (
        before[M3].decode()
    )
    assert {k for k in after if after[k] != before[k]} == {M3}
    # The fix introduced nothing: no HG002 or HG003 on a renamed override.
    result = audit([repo], Options(use_cache=False))
    assert not [f for f in result.findings if f.symbol == f"{M3_CLASS}._prepare_page_table_tensor"]
    assert f"{M3_CLASS}._build_pool_mapping_tensors" in stale(repo)

    # A second run changes nothing.
    fix(repo)
    assert snapshot(repo) == after


def test_incident_diff_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = build.build_kvcache_repo(tmp_path / "kv")
    before = snapshot(repo)
    fix(repo, diff=True)
    captured = capsys.readouterr()
    assert snapshot(repo) == before
    assert not list(repo.rglob("*.hgfix"))
    assert f"--- a/{M3}\n+++ b/{M3}\n" in captured.out
    assert "+        num_blocks_per_seq=None,\n" in captured.out
    assert "_prepare_page_table_tensor(self)" not in captured.out
    # The status lines go to stderr, so stdout is a clean patch.
    assert "would fix HG002" in captured.err and "would fix" not in captured.out
    applied = subprocess.run(
        ["git", "apply", "--check", "-"], cwd=repo, input=captured.out, text=True,
        capture_output=True,
    )
    assert applied.returncode == 0, applied.stderr


def cli_has_fix() -> bool:
    from hookguard.cli import build_parser

    try:
        build_parser().parse_args(["fix", "--diff"])
    except SystemExit:
        return False
    return True


@pytest.mark.skipif(not cli_has_fix(), reason="the fix subcommand is not wired into the cli yet")
def test_cli_fix_then_clean_second_run(tmp_path: Path) -> None:
    repo = build.build_kvcache_repo(tmp_path / "kv")

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "hookguard.cli", "fix", *args], cwd=repo,
                              capture_output=True, text=True)

    before = snapshot(repo)
    dry = cli("--diff", "--no-cache")
    assert dry.returncode == 1, dry.stderr  # it would change a file
    assert "+        num_blocks_per_seq=None,\n" in dry.stdout
    assert snapshot(repo) == before
    first = cli()
    assert first.returncode == 1, first.stderr  # a refusal, an unsafe fix held back
    assert f"{M3}:92: fixed HG002: added keyword-only parameters" in first.stdout
    after = snapshot(repo)
    assert after[M3] != before[M3]
    second = cli()
    assert "fixed" not in second.stdout
    assert snapshot(repo) == after
    # Nothing left that --diff would change: exit 0, though a finding stays refused and the
    # unsafe fix held back is shown, commented out.
    nothing = cli("--diff")
    assert nothing.returncode == 0, nothing.stderr
    assert nothing.stdout and all(line.startswith("#") for line in nothing.stdout.splitlines())


# -- refusals ----------------------------------------------------------------------------------
BASE_V1 = """
class Base:
    def run(self):
        try:
            self.setup()
        except RuntimeError:
            self.on_error()
        self.teardown()

    def setup(self):
        self.started = True

    def teardown(self):
        self.closed = {"at": "teardown"}

    def on_error(self):
        raise RuntimeError("failed")
"""
BASE_V2 = """
class Base:
    def run(self):
        self.prepare()
        self.finish()

    def prepare(self):
        self.started = True

    def finish(self):
        self.closed = {"at": "teardown"}
"""
CHILD = """
from pkg.base import Base


class Child(Base):
    def setup(self):  # keep this comment
        self.ready = True

    def teardown(self):
        self.ready = False

    def on_error(self):
        pass

    def again(self):
        self.teardown()
        super().teardown()
"""


def renamed_repo(root: Path) -> GitRepo:
    repo = GitRepo(root)
    repo.commit("base", {"pkg/__init__.py": "", "pkg/base.py": BASE_V1, "pkg/child.py": CHILD})
    repo.commit("Rename setup/teardown to prepare/finish, drop on_error",
                {"pkg/base.py": BASE_V2})
    return repo


def test_refusals_do_not_stop_other_fixes(tmp_path: Path) -> None:
    repo = renamed_repo(tmp_path / "r")
    findings = audit([repo.root], Options(use_cache=False)).findings
    assert {f.symbol.rsplit(".", 1)[1] for f in findings} == {"setup", "teardown", "on_error"}
    # The class gains the new name after the audit: that rename is refused; the others go on.
    child = repo.root / "pkg/child.py"
    child.write_text(child.read_text() + "\n    def prepare(self):\n        pass\n")
    report = fix_findings(repo.root, findings)
    lines = [o.render() for o in report.outcomes]
    assert lines == [
        "pkg/child.py:5: refused HG001: Child already defines prepare; merge by hand",
        "pkg/child.py:8: fixed HG001: renamed Child.teardown to finish and 2 references in Child",
        "pkg/child.py:11: refused HG001: the hook was removed, not renamed: delete the method "
        "or move its logic",
    ]
    text = child.read_text()
    assert "    def setup(self):  # keep this comment\n" in text
    assert "    def finish(self):\n" in text
    assert "        self.finish()\n        super().finish()\n" in text
    assert "teardown" not in text


GRAND = """
from pkg.child import Child


class Grand(Child):
    def setup(self):  # overrides Child.setup, so it is stale too once Child's is renamed
        super().setup()

    def close(self):
        self.setup()


class Leaf(Grand):
    def reset(self):
        return self.setup()
"""


def test_rename_carries_descendants_along(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.commit("base", {"pkg/__init__.py": "", "pkg/base.py": BASE_V1, "pkg/child.py": CHILD,
                         "pkg/grand.py": GRAND})
    repo.commit("Rename", {"pkg/base.py": BASE_V2})
    result = audit([repo.root], Options(use_cache=False))
    findings = [f for f in result.findings if f.symbol.endswith(".setup")]
    # Grand.setup overrides Child.setup, itself stale: a link of the chain, which follows the
    # first link's fix (planned with it, never on its own).
    assert [f.symbol for f in findings] == ["pkg.child.Child.setup", "pkg.grand.Grand.setup"]
    assert findings[1].evidence["overrides"] == "pkg.child.Child.setup"
    (alone,) = fix_findings(repo.root, findings[1:], project=result.project,
                            write=False).outcomes
    assert alone.status == "refused" and "fix that one" in alone.message
    # Without the project model the fixer cannot see the subclasses: it refuses.
    (outcome,) = fix_findings(repo.root, findings, write=False).outcomes
    assert outcome.status == "refused"
    assert "Grand, Leaf also call self.setup" in outcome.message
    # With it, the subclass's override and every descendant's references follow.
    report = fix_findings(repo.root, findings, project=result.project)
    assert [o.render() for o in report.outcomes] == [
        "pkg/child.py:5: fixed HG001: renamed Child.setup to prepare",
        "pkg/grand.py:5: fixed HG001: renamed Grand.setup to prepare and 2 references in Grand: "
        "it overrides Child.setup, renamed with it",
        "pkg/grand.py:12: fixed HG001: renamed 1 reference to Child.setup in Leaf to prepare",
    ]
    assert (repo.root / "pkg/grand.py").read_text() == GRAND.lstrip("\n").replace(
        "setup", "prepare"
    ).replace("Child.prepare", "Child.setup")
    assert not [s for s in stale(repo.root) if s.endswith((".setup", ".prepare"))]


def test_a_descendant_that_cannot_follow_blocks_the_whole_rename(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    grand = GRAND.replace("    def close(self):", "    prepare = None\n\n    def close(self):")
    repo.commit("base", {"pkg/__init__.py": "", "pkg/base.py": BASE_V1, "pkg/child.py": CHILD,
                         "pkg/grand.py": grand})
    repo.commit("Rename", {"pkg/base.py": BASE_V2})
    before = snapshot(repo.root)
    result = audit([repo.root], Options(use_cache=False))
    findings = [f for f in result.findings if f.symbol.endswith(".setup")]
    report = fix_findings(repo.root, findings, project=result.project)
    assert [o.render() for o in report.outcomes] == [
        "pkg/child.py:5: refused HG001: its subclass Grand (pkg/grand.py:5) cannot follow the "
        "rename: Grand already defines prepare; merge by hand",
    ]
    assert snapshot(repo.root) == before


def hand_finding(path: str, line: int, symbol: str, rule: str, **evidence: object) -> Finding:
    return Finding(
        rule=rule, code="HG001" if rule == "stale-override" else "HG002",
        severity=Severity.ERROR, path=path, line=line, column=5, symbol=symbol,
        hook=symbol.rsplit(".", 1)[1], message="", evidence=dict(evidence),
    )


def test_ambiguous_renames_are_refused(tmp_path: Path) -> None:
    write_tree(tmp_path, {"m.py": """
        class C(Base):
            def a(self):
                pass

            def b(self):
                pass

            @property
            def p(self):
                return 1

            @p.setter
            def p(self, value):
                pass

            alias = a
        """})
    findings = [
        hand_finding("m.py", 2, "m.C.a", "stale-override", old="a", new="z"),
        hand_finding("m.py", 5, "m.C.b", "stale-override", old="b", new="z"),
        hand_finding("m.py", 9, "m.C.p", "stale-override", old="p", new="q"),
        hand_finding("m.py", 7, "m.C.b", "stale-override", old="b", new="y"),
    ]
    before = (tmp_path / "m.py").read_bytes()
    report = fix_findings(tmp_path, findings)
    reasons = [o.message for o in report.outcomes]
    assert all(o.status == "refused" for o in report.outcomes), reasons
    assert "C's body uses the name a outside its methods" in reasons[0]
    assert "a and b in C would both become z" in reasons[1]
    assert "no def b at line 7" in reasons[2]
    assert "C defines p 2 times" in reasons[3]
    assert (tmp_path / "m.py").read_bytes() == before


def test_rename_updates_only_the_classs_own_references(tmp_path: Path) -> None:
    source = textwrap.dedent("""
        class C(Base):
            def old(this, x):  # the override
                return super(C, this).old(x)

            @classmethod
            def make(cls):
                return cls.old, getattr(cls, "old"), hasattr(cls, 'old'), C.old

            def inner(self):
                def closure():
                    return self.old(1)

                class Nested:
                    def old(self):
                        return self.old

                return closure, Nested, other.old, self.older, getattr(self, name)


        class D(Base):
            def use(self):
                return self.old(2)
        """).lstrip()
    (tmp_path / "m.py").write_text(source)
    finding = hand_finding("m.py", 2, "m.C.old", "stale-override", old="old", new="new")
    (outcome,) = fix_findings(tmp_path, [finding]).outcomes
    assert outcome.message == "renamed C.old to new and 6 references in C"
    expected = (
        source.replace("def old(this", "def new(this")
        .replace("super(C, this).old", "super(C, this).new")
        .replace("""cls.old, getattr(cls, "old"), hasattr(cls, 'old'), C.old""",
                 """cls.new, getattr(cls, "new"), hasattr(cls, 'new'), C.new""")
        .replace("return self.old(1)", "return self.new(1)")
    )
    assert (tmp_path / "m.py").read_text() == expected


# -- the fixed code runs ----------------------------------------------------------------------
def test_fixed_code_imports_and_the_override_runs(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    base_v1 = """
        class Base:
            def run(self):
                self.flag = "base"
                self.old_hook()
                return self.flag

            def old_hook(self):
                pass
        """
    base_v2 = base_v1.replace("old_hook", "new_hook")
    child = """
        from pkg.base import Base


        class Child(Base):
            # The override the rename left behind.
            def old_hook(self):
                self.flag = "child"
        """
    repo.commit("base", {"pkg/__init__.py": "", "pkg/base.py": base_v1, "pkg/child.py": child})
    repo.commit("Rename old_hook to new_hook", {"pkg/base.py": base_v2})
    check = "import pkg.child; print(pkg.child.Child().run())"
    ran = subprocess.run([sys.executable, "-c", check], cwd=repo.root, capture_output=True,
                         text=True, check=True)
    assert ran.stdout == "base\n"  # the bug: the override never runs
    assert fix(repo.root) == 0
    ran = subprocess.run([sys.executable, "-c", check], cwd=repo.root, capture_output=True,
                         text=True, check=True)
    assert ran.stdout == "child\n"
    assert "    # The override the rename left behind.\n    def new_hook(self):\n" in (
        repo.root / "pkg/child.py"
    ).read_text()
    assert stale(repo.root) == {}


def test_write_keeps_mode_newlines_and_encoding(tmp_path: Path) -> None:
    write_tree(tmp_path, {"hooks.toml": """
        [[hook]]
        class = "base.Base"
        method = "new"
        renamed_from = ["old"]
        """, "base.py": "class Base:\n    def new(self):\n        pass\n"})
    source = (
        "# -*- coding: latin-1 -*-\r\nfrom base import Base\r\n\r\n"
        "class C(Base):\r\n    def old(self):\r\n        return 'caf\xe9'\r\n"
    ).encode("latin-1")
    path = tmp_path / "c.py"
    path.write_bytes(source)
    path.chmod(0o640)
    assert fix(tmp_path, contracts=("hooks.toml",)) == 0
    assert path.read_bytes() == source.replace(b"def old(", b"def new(")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["base.py", "c.py", "hooks.toml"]


def test_libcst_is_not_imported_by_audit() -> None:
    code = (
        "import sys, hookguard, hookguard.cli, hookguard.engine;"
        "hookguard.engine.audit([hookguard.cli.Path('fixtures/repos/import_forms')],"
        " hookguard.engine.Options(use_cache=False));"
        "assert 'libcst' not in sys.modules, 'libcst imported'"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


# -- signature drift ---------------------------------------------------------------------------
PARAM_CASES = [
    # (signature, keyword_only, expected)
    ("def h(self):", True, "def h(self, *, x=None, y=None):"),
    ("def h(self, **kw):", False, "def h(self, x=None, y=None, **kw):"),
    ("def h(self, a):", True, "def h(self, a, *, x=None, y=None):"),
    ("def h(self, a):", False, "def h(self, a, x=None, y=None):"),
    ("def h(self, a, **kw):", True, "def h(self, a, *, x=None, y=None, **kw):"),
    ("def h(self, a, *args, b=1, **kw):", True,
     "def h(self, a, *args, b=1, x=None, y=None, **kw):"),
    ("def h(self, a, *, b=1):", False, "def h(self, a, *, b=1, x=None, y=None):"),
    ("def h(self, /, a):", True, "def h(self, /, a, *, x=None, y=None):"),
    ("def h(self, a, x=0):", True, "def h(self, a, x=0, *, y=None):"),
    (
        "def h(\n        self,\n        a,  # the a\n    ) -> int:",
        True,
        "def h(\n        self,\n        a,  # the a\n        *,\n        x=None,\n"
        "        y=None,\n    ) -> int:",
    ),
    (
        "def h(\n        self,\n        *,\n        b: int = 0,\n    ):",
        True,
        "def h(\n        self,\n        *,\n        b: int = 0,\n        x=None,\n"
        "        y=None,\n    ):",
    ),
    (
        "def h(\n        self,\n        a\n    ):",
        False,
        "def h(\n        self,\n        a,\n        x=None,\n        y=None\n    ):",
    ),
    (
        "def h(self,\n          a,\n          **kw):",
        True,
        "def h(self,\n          a,\n          *,\n          x=None,\n          y=None,\n"
        "          **kw):",
    ),
]


@pytest.mark.parametrize(("signature", "keyword_only", "expected"), PARAM_CASES)
def test_missing_keywords_are_added_in_the_lists_layout(
    tmp_path: Path, signature: str, keyword_only: bool, expected: str
) -> None:
    body = "\n        return 1\n"
    source = f"class C(Base):\n    {signature}{body}"
    path = tmp_path / "m.py"
    path.write_text(source)
    finding = hand_finding("m.py", 2, "m.C.h", "signature-drift", missing=["x", "y"],
                           keyword_only=keyword_only, fixable=True)
    report = fix_findings(tmp_path, [finding])
    (outcome,) = report.outcomes
    assert outcome.status == "fixed", outcome.message
    assert path.read_text() == f"class C(Base):\n    {expected}{body}"
    ast.parse(path.read_text())
    # Idempotent: the same finding again changes nothing.
    again = fix_findings(tmp_path, [finding])
    assert [o.status for o in again.outcomes] == ["unchanged"]
    assert not any(f.changed for f in again.files)


def test_drift_refusals(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("class C(Base):\n    def h(self, x, /):\n        pass\n")
    findings = [
        hand_finding("m.py", 2, "m.C.h", "signature-drift", missing=["x"], keyword_only=True,
                     fixable=True),
        hand_finding("m.py", 2, "m.C.h", "signature-drift", missing=["y"], fixable=False,
                     reason="surplus positional arguments at the call"),
    ]
    findings[1].column = 9  # a distinct finding at the same def
    report = fix_findings(tmp_path, findings[:1])
    assert "takes x positional-only" in report.outcomes[0].message
    report = fix_findings(tmp_path, findings[1:])
    assert report.outcomes[0].render() == (
        "m.py:2: refused HG002: surplus positional arguments at the call"
    )
    assert path.read_text() == "class C(Base):\n    def h(self, x, /):\n        pass\n"


# -- properties --------------------------------------------------------------------------------
names = st.from_regex(r"[a-z][a-z0-9]{0,6}", fullmatch=True).filter(
    lambda s: s not in {"self", "super", "getattr", "none", "true", "false"}
    and not __import__("keyword").iskeyword(s)
)


@st.composite
def hierarchies(draw: st.DrawFn) -> tuple[dict[str, str], str, str]:
    """A base whose hook ``old`` was renamed to ``new`` (a contract says so), and subclasses,
    some nested, some chained, overriding ``old`` and using it through ``self``, ``super()`` and
    ``getattr``, with comments and unrelated methods."""
    old, new = draw(st.lists(names, min_size=2, max_size=2, unique=True))
    others = draw(st.lists(names.filter(lambda s: s not in {old, new}), max_size=3, unique=True))
    base = f"class Base:\n    def run(self):\n        return self.{new}()\n\n"
    base += f"    def {new}(self, *args, **kwargs):\n        return 'base'\n"
    lines = ["from mod import Base", ""]
    classes = [f"K{i}" for i in range(draw(st.integers(1, 4)))]
    for i, cls in enumerate(classes):
        parent = "Base" if i == 0 or draw(st.booleans()) else classes[i - 1]
        ind = ""
        if i > 0 and draw(st.booleans()):
            ind = "    "
            lines += [f"class Outer{i}:", "    x = 1  # outer"]
        lines.append(f"{ind}class {cls}({parent}):  # {cls} comment")
        if parent == "Base" or draw(st.booleans()):
            comment = draw(st.sampled_from(["", "  # stale", "  # type: ignore"]))
            lines.append(f"{ind}    def {old}(self, *a, **kw):{comment}")
            lines.append(f"{ind}        return {cls!r}")
        for other in others:
            use = draw(st.sampled_from(
                [f"self.{old}()", f"super().{old}()", "1", f"getattr(self, {old!r})"]
            ))
            lines += [f"{ind}    def {other}(self):", f"{ind}        return {use}"]
        lines += [f"{ind}    pass", ""]
    return {"mod.py": base, "sub.py": "\n".join(lines) + "\n"}, old, new


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=hierarchies())
def test_property_fix_reparses_and_is_idempotent(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[dict[str, str], str, str]
) -> None:
    files, old, new = case
    root = tmp_path_factory.mktemp("prop")
    for path, text in files.items():
        (root / path).write_text(text)
    (root / "hooks.toml").write_text(
        f'[[hook]]\nclass = "mod.Base"\nmethod = "{new}"\nrenamed_from = ["{old}"]\n'
    )
    options = Options(use_cache=False, contracts=("hooks.toml",))
    result = audit([root], options)
    first = fix_findings(root, result.findings, project=result.project)
    once = (root / "sub.py").read_bytes()
    ast.parse(once)
    assert (root / "mod.py").read_text() == files["mod.py"]
    # What was not fixed was refused, with a reason; everything else audits clean.
    left = {(f.path, f.line) for f in audit([root], options).findings}
    assert left == {(o.path, o.line) for o in first.refused}
    assert all(o.message for o in first.refused)
    result = audit([root], options)
    second = fix_findings(root, result.findings, project=result.project)
    assert (root / "sub.py").read_bytes() == once
    assert not second.fixed


signature_parts = st.fixed_dictionaries({
    "posonly": st.integers(0, 2),
    "params": st.integers(0, 3),
    "star": st.sampled_from(["", "*", "*args"]),
    "kwonly": st.integers(0, 2),
    "kwargs": st.booleans(),
    "multiline": st.booleans(),
    "trailing": st.booleans(),
    "keyword_only": st.booleans(),
    "missing": st.lists(st.sampled_from(["x", "y", "p1", "k0"]), min_size=1, max_size=3,
                        unique=True),
})


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=signature_parts)
def test_property_added_parameters_parse_and_are_idempotent(
    tmp_path_factory: pytest.TempPathFactory, parts: dict[str, object]
) -> None:
    params = ["self"] + [f"q{i}" for i in range(int(parts["posonly"]))]  # type: ignore[call-overload]
    if int(parts["posonly"]):  # type: ignore[call-overload]
        params.append("/")
    params += [f"p{i}" for i in range(int(parts["params"]))]  # type: ignore[call-overload]
    star = str(parts["star"]) or ("*" if int(parts["kwonly"]) else "")  # type: ignore[call-overload]
    kwonly = max(int(parts["kwonly"]), star == "*")  # type: ignore[call-overload]
    if star:
        params.append(star)
        params += [f"k{i}=0" for i in range(kwonly)]
    if parts["kwargs"]:
        params.append("**kw")
    if parts["multiline"]:
        inner = "".join(f"\n        {p}," for p in params)
        if not parts["trailing"]:
            inner = inner[:-1]
        signature = f"def h({inner}\n    ):"
    else:
        signature = f"def h({', '.join(params)}{', ' if parts['trailing'] else ''}):"
    root = tmp_path_factory.mktemp("sig")
    path = root / "m.py"
    path.write_text(f"class C(Base):\n    {signature}\n        pass\n")
    finding = hand_finding("m.py", 2, "m.C.h", "signature-drift", missing=parts["missing"],
                           keyword_only=parts["keyword_only"], fixable=True)
    report = fix_findings(root, [finding])
    text = path.read_text()
    tree = ast.parse(text)
    func = tree.body[0].body[0]  # type: ignore[attr-defined]
    accepted = {a.arg for a in (*func.args.args, *func.args.kwonlyargs)}
    posonly = {a.arg for a in func.args.posonlyargs}
    for name in parts["missing"]:  # type: ignore[attr-defined]
        assert name in accepted or name in posonly
    if report.outcomes[0].status == "fixed" and (parts["keyword_only"] or star):
        assert {str(n) for n in parts["missing"]} <= (  # type: ignore[attr-defined]
            {a.arg for a in func.args.kwonlyargs} | {a.arg for a in func.args.args}
        )
    fix_findings(root, [finding])
    assert path.read_text() == text
