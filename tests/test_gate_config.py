"""``hookguard check`` takes its rules from the base (issue 24, item 3).

A pull request's own pyproject.toml used to be able to turn the gate off: ``ignore = ["HG001"]``
beside the rename that HG001 catches gave "no new findings", exit 0. Now the base revision's
``[tool.hookguard]`` (read through git) is what both trees are checked with, and a change whose
pyproject.toml checks less than its merge base's is an error at that file's line (exit 1).
Every case runs the real ``check`` on a real repository.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo

BASE = """\
class Manager:
    def __init__(self):
        self.build_tables()

    def build_tables(self):
        self.tables = []

    def close(self):
        pass
"""
RENAMED = BASE.replace("build_tables", "prepare_tables")
CHILD = """\
from core.manager import Manager


class SparseManager(Manager):
    def build_tables(self):
        self.tables = [1, 2, 3]
"""
FILES = {
    "core/__init__.py": "",
    "core/manager.py": BASE,
    "plugins/__init__.py": "",
    "plugins/sparse.py": CHILD,
    "vendored/legacy.py": "def old():\n    return 1\n",
    "checks/manager.toml": '[[hook]]\nclass = "core.manager.Manager"\nmethod = "close"\n',
}
PROJECT = '[project]\nname = "demo"\nversion = "1.0"\n\n'
STALE = "plugins.sparse.SparseManager.build_tables"


def pyproject(settings: str | None) -> str:
    """A pyproject.toml with a [project] table and, unless None, these hookguard settings."""
    return PROJECT if settings is None else PROJECT + "[tool.hookguard]\n" + settings + "\n"


def hookguard(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hookguard", *args], cwd=cwd,
                          capture_output=True, text=True, check=False)


def check(repo: GitRepo, *args: str) -> tuple[int, dict[str, Any], str]:
    """``check --format json`` (``--base HEAD~1`` unless args say otherwise): exit code,
    the report, stderr."""
    where = list(args) or ["--base", "HEAD~1"]
    proc = hookguard(repo.root, "check", *where, "--format", "json", "--no-cache")
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def make_repo(
    git_repo: Callable[..., GitRepo],
    base: str | None,
    head: str | None,
    *,
    rename: bool = True,
    base_file: bool = True,
    head_file: bool = True,
) -> GitRepo:
    """A base commit with ``base`` settings, then a change with ``head`` settings that renames
    ``build_tables`` (stale override in an untouched file: HG001) or, with ``rename=False``,
    touches an unrelated file. ``*_file=False``: no pyproject.toml on that side."""
    repo = git_repo()
    files = dict(FILES)
    if base_file:
        files["pyproject.toml"] = pyproject(base)
    repo.commit("Base", files)
    change = {"core/manager.py": RENAMED} if rename else {"core/util.py": "X = 1\n"}
    if head_file:
        change["pyproject.toml"] = pyproject(head)
    else:
        (repo.root / "pyproject.toml").unlink(missing_ok=True)
    repo.commit("Change", change)
    return repo


def line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if line.startswith(needle))


def config_errors(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in report["errors"] if e["path"] == "pyproject.toml"]


def symbols(report: dict[str, Any]) -> set[str]:
    return {f"{f['code']} {f['severity']} {f['symbol']}" for f in report["findings"]}


# -- must fire -----------------------------------------------------------------------------------
WEAKER = [
    # (base settings, head settings, the key reported, the line it starts with, words in it)
    ("", 'ignore = ["HG001"]', "ignore", "ignore", "turns off HG001 (stale-override)"),
    ("", 'ignore = ["stale-override"]', "ignore", "ignore", "turns off HG001"),
    ("", 'select = ["HG002"]', "select", "select", "turns off HG001 (stale-override), HG003"),
    ('select = ["HG001", "HG002"]', 'select = ["HG002"]', "select", "select", "turns off HG001"),
    ("", 'severity = { stale-override = "warning" }', "severity", "severity",
     "lowers HG001 (stale-override) from the rule's own levels to warning"),
    ('severity = { HG001 = "error" }', "", "severity", "[tool.hookguard]",
     "lowers HG001 (stale-override) from error to the rule's own levels"),
    ("", '[tool.hookguard.severity]\nHG001 = "off"', "severity", "[tool.hookguard.severity]",
     "turns off HG001"),
    ('exclude = ["vendored"]', 'exclude = ["vendored", "plugins"]', "exclude", "exclude",
     "adds 'plugins', which the base checks (2 files no longer checked: plugins/__init__.py, "
     "plugins/sparse.py)"),
    ('exclude = ["vendored"]', 'exclude = ["vendored", "*/sparse.py"]', "exclude", "exclude",
     "adds '*/sparse.py'"),
    ("", 'exclude = ["not-written-yet"]', "exclude", "exclude", "adds 'not-written-yet'"),
    ('roots = ["core", "plugins"]', 'roots = ["core"]', "roots", "roots",
     "narrows the roots to 'core', leaving out 'plugins', which the base checks"),
    ("", 'roots = ["core"]', "roots", "roots",
     "narrows the roots from the whole checkout to 'core' (3 files no longer checked"),
    ("", 'include = ["core"]', "include", "include", "limits the files to 'core'"),
    ('include = ["core", "plugins"]', 'include = ["core"]', "include", "include",
     "drops 'plugins'"),
    ('contracts = ["checks/manager.toml"]', "", "contracts", "[tool.hookguard]",
     "drops 'checks/manager.toml'"),
    ("history = true", "history = false", "history", "history", "turns off history evidence"),
    ("structural = true", "", "structural", "[tool.hookguard]", "structural drift"),
    ("", "max-file-size = 1000", "max-file-size", "max-file-size",
     "lowers the limit from 4194304 to 1000 bytes"),
    ("max_file_size = 9000000", "max_file_size = 8000000", "max-file-size", "max_file_size",
     "lowers the limit"),
    ("", 'duck-protocols = ["build_tables"]', "duck-protocols", "duck-protocols",
     "adds 'build_tables'"),
    ("", 'module-aliases = { plugins = "core" }', "module-aliases", "module-aliases",
     "changes how modules resolve (plugins = 'core')"),
]


@pytest.mark.parametrize(("base", "head", "key", "starts", "words"), WEAKER,
                         ids=[f"{c[2]}:{c[1] or 'removed'}" for c in WEAKER])
def test_a_weaker_head_config_is_an_error_and_is_not_applied(
    git_repo: Callable[..., GitRepo], base: str, head: str, key: str, starts: str, words: str
) -> None:
    repo = make_repo(git_repo, base, head)
    code, report, stderr = check(repo)
    assert code == 1
    (error,) = config_errors(report)
    assert error["line"] == line_of(pyproject(head), starts), error
    assert error["message"].startswith(f"the change weakens the gate: '{key}' "), error
    assert words in error["message"], error["message"]
    assert "checked with the base's settings" in error["message"]
    # The base's settings ran: the rename's stale override is still reported, as an error.
    assert f"HG001 error {STALE}" in symbols(report)
    assert "1 gate setting weakened or invalid in the change's pyproject.toml" in stderr


def test_the_issue_case_a_pull_request_that_ignores_the_rule_it_breaks(
    git_repo: Callable[..., GitRepo],
) -> None:
    """The reproduction from issue 24: no hookguard settings in the base, the pull request
    renames a hook and ignores HG001. It said "no new findings", exit 0."""
    repo = make_repo(git_repo, None, 'ignore = ["HG001"]')
    plain = hookguard(repo.root, "check", "--base", "HEAD~1", "--no-cache")
    assert plain.returncode == 1
    line = line_of(pyproject('ignore = ["HG001"]'), "ignore")
    assert f"pyproject.toml:{line}: input problem: the change weakens the gate: 'ignore' " \
           "turns off HG001 (stale-override)" in plain.stdout, plain.stdout
    assert "plugins/sparse.py:5:5: HG001 [error]" in plain.stdout
    assert "no new findings" not in plain.stderr
    github = hookguard(repo.root, "check", "--base", "HEAD~1", "--no-cache", "--format", "github")
    assert f"::error file=pyproject.toml,line={line}," in github.stdout
    assert hookguard(repo.root, "check", "--base", "HEAD~1", "--no-cache",
                     "--exit-zero").returncode == 0


def test_several_weakenings_each_name_their_line(git_repo: Callable[..., GitRepo]) -> None:
    head = 'ignore = ["HG002"]\nexclude = ["plugins"]\nstructural = false\nhistory = false'
    repo = make_repo(git_repo, "structural = true", head, rename=False)
    code, report, stderr = check(repo)
    assert code == 1 and report["findings"] == []
    text = pyproject(head)
    assert sorted((e["line"], e["message"].split("'")[1]) for e in config_errors(report)) == [
        (line_of(text, "ignore"), "ignore"), (line_of(text, "exclude"), "exclude"),
        (line_of(text, "structural"), "structural"), (line_of(text, "history"), "history")]
    assert "4 gate settings weakened" in stderr


def test_a_base_without_config_has_the_defaults(git_repo: Callable[..., GitRepo]) -> None:
    """The base has no pyproject.toml: the head's new one may only strengthen the defaults."""
    weaker = make_repo(git_repo, None, 'exclude = ["plugins"]', base_file=False)
    code, report, _ = check(weaker)
    assert code == 1 and [e["line"] for e in config_errors(report)] == [6]
    assert f"HG001 error {STALE}" in symbols(report)


def test_a_head_that_deletes_the_config_is_compared_with_the_defaults(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = make_repo(git_repo, 'structural = true\nexclude = ["vendored"]', None,
                     rename=False, head_file=False)
    code, report, _ = check(repo)
    assert code == 1
    ((error),) = config_errors(report)
    assert error["line"] == 1 and "'structural' turns off" in error["message"]


@pytest.mark.parametrize("head", [
    "[tool.hookguard\nignore = ['HG001']",  # TOML syntax
    "ignore = ['HG001'",  # TOML syntax, inside the table
    "ignore = ['HG0001']",  # an unknown rule
    "rots = ['core']",  # an unknown key
    "history = 'no'",  # a wrong type
])
def test_an_invalid_head_config_is_reported_and_the_base_is_used(
    git_repo: Callable[..., GitRepo], head: str
) -> None:
    repo = make_repo(git_repo, 'exclude = ["vendored"]', head)
    code, report, _ = check(repo)
    assert code == 1  # never 2: the change's file is input, not the gate's usage
    (error,) = config_errors(report)
    assert error["message"].startswith("the change's [tool.hookguard] is invalid: ")
    assert error["message"].endswith("; checked with the base's settings")
    assert 5 <= error["line"] <= 7, error
    assert f"HG001 error {STALE}" in symbols(report)


def test_an_invalid_base_config_gives_a_note_and_the_defaults(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = make_repo(git_repo, "rots = ['core']", "rots = ['core']")
    proc = hookguard(repo.root, "check", "--base", "HEAD~1", "--no-cache")
    assert proc.returncode == 1, proc.stderr  # the finding; not 2
    assert "HG001 [error]" in proc.stdout
    assert "invalid [tool.hookguard] settings (line 6: unknown key 'rots'" in proc.stdout
    assert "the gate runs with the defaults" in proc.stdout


# -- must not fire -------------------------------------------------------------------------------
SAME_OR_STRONGER = [
    ('exclude = ["vendored"]', 'exclude = ["vendored"]'),
    ('exclude = ["vendored"]', '# the vendored copy\nexclude = [\n  "vendored",\n]'),
    ('exclude = ["vendored"]', 'exclude = "vendored/"'),
    ('exclude = ["vendored"]', 'exclude = ["vendored", "vendored/old"]'),  # already left out
    ('roots = ["core", "plugins"]', 'roots = ["core", "plugins"]\nexclude = ["vendored"]'),
    ('exclude = ["vendored", "plugins"]', 'exclude = ["vendored"]'),
    ('roots = ["core"]', 'roots = ["core", "plugins"]'),
    ('roots = ["core"]', ""),
    ('roots = ["core", "plugins"]', 'roots = ["."]'),
    ('include = ["core"]', 'include = ["core", "plugins"]'),
    ('include = ["core"]', 'include = ["core/"]'),
    ('roots = ["core"]', 'roots = ["core"]\ninclude = ["core"]'),
    ('select = ["HG001"]', 'select = ["HG001", "HG002"]'),
    ('select = ["HG001"]', 'select = ["stale-override"]'),
    ('select = ["HG001"]', ""),
    ('ignore = ["HG002", "HG003"]', 'ignore = ["HG003"]'),
    ('severity = { HG001 = "warning" }', ""),
    ('severity = { HG001 = "warning" }', 'severity = { stale-override = "error" }'),
    ("", 'severity = { HG002 = "error" }'),
    ('severity = { HG002 = "off" }', 'severity = { HG002 = "warning" }'),
    ("history = false", ""),
    ("", "structural = true"),
    ("max-file-size = 1000", "max_file_size = 1000"),
    ("", "max-file-size = 99999999"),
    ('duck-protocols = ["quack", "honk"]', 'duck-protocols = ["quack"]'),
    ('module-aliases = { plugins = "core" }', 'module-aliases = { "plugins" = "core" }'),
    ("", 'contracts = ["checks/manager.toml"]'),
    ('contracts = ["checks/manager.toml"]', 'contracts = ["./checks/manager.toml"]'),
]


@pytest.mark.parametrize(("base", "head"), SAME_OR_STRONGER,
                         ids=[f"{b or 'defaults'} -> {h or 'defaults'}"
                              for b, h in SAME_OR_STRONGER])
def test_a_same_or_stronger_head_config_is_silent(
    git_repo: Callable[..., GitRepo], base: str, head: str
) -> None:
    repo = make_repo(git_repo, base, head, rename=False)
    code, report, stderr = check(repo)
    assert (code, report["errors"], report["findings"]) == (0, [], []), report
    assert "gate setting" not in stderr and "no new findings" in stderr


def test_unrelated_pyproject_edits_are_silent(git_repo: Callable[..., GitRepo]) -> None:
    repo = git_repo()
    settings = '[tool.hookguard]\nexclude = ["vendored"]\n'
    repo.commit("Base", {**FILES, "pyproject.toml": PROJECT + settings})
    bumped = PROJECT.replace('"1.0"', '"1.1"') + '[tool.ruff]\nselect = ["E"]\n\n' + settings
    repo.commit("Release 1.1", {"pyproject.toml": bumped, "core/util.py": "X = 1\n"})
    code, report, _ = check(repo)
    assert (code, report["errors"], report["findings"]) == (0, [], [])
    # Adding a pyproject.toml without hookguard settings to a base that has none.
    other = git_repo("other")
    other.commit("Base", FILES)
    other.commit("Packaging", {"pyproject.toml": PROJECT})
    code, report, _ = check(other)
    assert (code, report["errors"]) == (0, [])


def test_a_new_config_that_only_strengthens_the_defaults_is_silent(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = make_repo(git_repo, None, 'structural = true\nseverity = { HG002 = "error" }',
                     rename=False, base_file=False)
    code, report, _ = check(repo)
    assert (code, report["errors"], report["findings"]) == (0, [], [])


# -- where the settings come from ------------------------------------------------------------
def test_the_work_tree_pyproject_is_never_read(git_repo: Callable[..., GitRepo]) -> None:
    repo = make_repo(git_repo, 'exclude = ["vendored"]', 'exclude = ["vendored"]')
    (repo.root / "pyproject.toml").write_text(pyproject('ignore = ["HG001"]'))
    code, report, _ = check(repo)
    assert code == 1 and config_errors(report) == []  # the commits' files are the same
    assert f"HG001 error {STALE}" in symbols(report)
    (repo.root / "pyproject.toml").write_text("[tool.hookguard\nbroken")
    code, report, _ = check(repo)
    assert code == 1 and config_errors(report) == []  # not exit 2: the file is not read


def test_the_rules_come_from_the_base_branch_tip(git_repo: Callable[..., GitRepo]) -> None:
    """A branch behind main: main's newer settings are the rules, and the branch, which never
    touched pyproject.toml, is not blamed for lacking them."""
    repo = git_repo()
    repo.commit("Base", {**FILES, "pyproject.toml": pyproject("structural = true")})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("Rename build_tables", {"core/manager.py": RENAMED})
    repo.git("checkout", "-q", "main")
    repo.commit("Main stops checking stale overrides",
                {"pyproject.toml": pyproject('ignore = ["HG001"]')})
    repo.git("checkout", "-q", "feature")
    code, report, _ = check(repo, "--base", "main")
    assert (code, report["errors"], report["findings"]) == (0, [], [])
    # Compared with main's older settings, the branch's own edit still counts.
    repo.commit("Drop structural", {"pyproject.toml": pyproject("")})
    code, report, _ = check(repo, "--base", "main")
    assert code == 1
    ((error),) = config_errors(report)
    assert "'structural' turns off" in error["message"]


def test_staged_follows_the_same_rule(git_repo: Callable[..., GitRepo]) -> None:
    repo = git_repo()
    repo.commit("Base", {**FILES, "pyproject.toml": pyproject('exclude = ["vendored"]')})
    repo.write({"core/manager.py": RENAMED,
                "pyproject.toml": pyproject('exclude = ["vendored", "plugins"]')})
    repo.git("add", "core/manager.py")
    # Only the rename is staged: the work tree's pyproject.toml is not what gets committed.
    code, report, _ = check(repo, "--staged")
    assert code == 1 and config_errors(report) == []
    assert f"HG001 error {STALE}" in symbols(report)
    repo.git("add", "pyproject.toml")
    code, report, _ = check(repo, "--staged")
    assert code == 1
    (error,) = config_errors(report)
    assert error["line"] == line_of(pyproject('exclude = ["vendored", "plugins"]'), "exclude")
    assert "'exclude' adds 'plugins'" in error["message"]
    assert f"HG001 error {STALE}" in symbols(report)  # plugins/ was still checked
    # A broken staged file: reported, HEAD's settings used.
    repo.write({"pyproject.toml": "[tool.hookguard\n"})
    repo.git("add", "pyproject.toml")
    code, report, _ = check(repo, "--staged")
    assert code == 1 and "is invalid" in config_errors(report)[0]["message"]
    assert f"HG001 error {STALE}" in symbols(report)
