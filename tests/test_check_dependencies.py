"""``check --base`` runs the upgrade check for each dependency the change moves (issue 25,
item 4): real git repositories whose requirements.txt, constraints file, pyproject.toml,
uv.lock, poetry.lock or Pipfile.lock bump a package built as two real wheels in a temporary
folder, fetched by ``pip download`` from that folder (``PIP_FIND_LINKS``, ``PIP_NO_INDEX``):
no network. Then the parsers, on real file contents of each format."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from hookguard.cli import main
from hookguard.upgrade.dependencies import external_tops, guessed_imports
from hookguard.upgrade.pins import (
    MAX_BYTES,
    MAX_TEXT_BYTES,
    MAX_TOTAL,
    Pin,
    compare,
    is_manifest,
    parse_file,
    parse_pipfile_lock,
    parse_poetry_lock,
    parse_pyproject,
    parse_requirements,
    parse_uv_lock,
    read_pins,
)
from tests.conftest import GitRepo
from tests.test_upgrade import FW_NEW, FW_OLD, write_wheel

# -- the set-up ------------------------------------------------------------------------------

APP = {
    "app/__init__.py": "",
    "app/trainers.py": """
        from fw import Trainer

        class CustomTrainer(Trainer):
            def compute_loss(self, inputs, return_outputs=False):
                return 1
    """,
}
# An override that survives the bump: it takes any keyword.
APP_SAFE = {
    "app/__init__.py": "",
    "app/trainers.py": """
        from fw import Trainer

        class CustomTrainer(Trainer):
            def compute_loss(self, inputs, return_outputs=False, **kwargs):
                return 1
    """,
}
OTHER = {"other/__init__.py": "class Thing:\n    def run(self):\n        return self.go()\n"
                              "    def go(self):\n        pass\n"}


@pytest.fixture
def dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Wheels of fw 1.0 and 2.0 and of other 1.0 and 2.0 in a folder pip reads instead of an
    index; the package cache and the record cache in the temporary folder."""
    folder = tmp_path / "dist"
    write_wheel(folder, "fw", "1.0", FW_OLD)
    write_wheel(folder, "fw", "2.0", FW_NEW)
    write_wheel(folder, "other", "1.0", OTHER)
    write_wheel(folder, "other", "2.0", OTHER)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.delenv("HOOKGUARD_CACHE_DIR", raising=False)
    monkeypatch.setenv("PIP_FIND_LINKS", str(folder))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    for name in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL"):
        monkeypatch.delenv(name, raising=False)
    return folder


def cached(tmp_path: Path) -> list[str]:
    """The wheels in the package cache (what was downloaded)."""
    folder = tmp_path / "xdg-cache" / "hookguard" / "packages"
    return sorted(p.name for p in folder.glob("*.whl")) if folder.is_dir() else []


def change(tmp_path: Path, base: Mapping[str, str], head: Mapping[str, str]) -> GitRepo:
    """A repository: ``base`` committed on main, ``head`` on the branch bump."""
    repo = GitRepo(tmp_path / "repo")
    repo.commit("base", base)
    repo.git("checkout", "-q", "-b", "bump")
    repo.commit("bump", head)
    return repo


def check(repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
          *extra: str) -> tuple[int, dict[str, Any], str]:
    """``hookguard check --base main --format json``: (exit code, report, stderr)."""
    monkeypatch.chdir(repo.root)
    code = main(["check", "--base", "main", "--no-cache", "--format", "json", *extra])
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


def errors_of(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["severity"] == "error"]


def _call_line() -> int:
    return FW_NEW["fw/core/trainer.py"].splitlines().index(
        "                return self.compute_loss(inputs, num_items_in_batch=num_items_in_batch)")


def _assert_fires(code: int, report: dict[str, Any], where: str) -> None:
    assert code == 1
    found = errors_of(report)
    assert len(found) == 1, report["findings"]
    finding = found[0]
    assert finding["code"] == "HG002" and finding["path"] == "app/trainers.py"
    assert finding["line"] == 4
    # The override, and the framework's call site in the new version.
    assert finding["message"].startswith(
        "CustomTrainer.compute_loss cannot accept the call in Trainer.training_step "
        f"(fw/core/trainer.py:{_call_line()}, 2.0): unexpected keyword num_items_in_batch")
    assert finding["message"].endswith(f"[fw 1.0 -> 2.0, {where}]")
    dependency = finding["evidence"]["dependency"]
    assert (dependency["package"], dependency["from"], dependency["to"]) == ("fw", "1.0", "2.0")
    assert dependency["where"] == [where]
    assert finding["evidence"]["kind"] == "upgrade"
    [moved] = report["dependencies"]
    assert moved["status"] == "checked" and moved["findings"] == 1
    assert moved["upgrade"]["subclasses"] == ["app.trainers.CustomTrainer"]


# -- each kind of file: a bump that breaks an override fires ---------------------------------

UV_LOCK = """\
version = 1
requires-python = ">=3.10"

[[package]]
name = "app"
version = "0.1.0"
source = {{ editable = "." }}
dependencies = [
    {{ name = "fw" }},
]

[package.metadata]
requires-dist = [{{ name = "fw", specifier = ">=1.0" }}]

[[package]]
name = "fw"
version = "{version}"
source = {{ registry = "https://pypi.org/simple" }}
wheels = [
    {{ url = "https://files.example/fw-{version}-py3-none-any.whl", hash = "sha256:00", size = 1 }},
]
"""

POETRY_LOCK = """\
# This file is automatically @generated by Poetry 1.8.3 and should not be changed by hand.

[[package]]
name = "fw"
version = "{version}"
description = "A framework"
optional = false
python-versions = ">=3.8"
files = [
    {{file = "fw-{version}-py3-none-any.whl", hash = "sha256:00"}},
]

[metadata]
lock-version = "2.0"
python-versions = "^3.10"
content-hash = "0"
"""

PIPFILE_LOCK = """\
{{
    "_meta": {{
        "hash": {{"sha256": "00"}},
        "pipfile-spec": 6,
        "requires": {{"python_version": "3.11"}},
        "sources": [{{"name": "pypi", "url": "https://pypi.org/simple", "verify_ssl": true}}]
    }},
    "default": {{
        "fw": {{
            "hashes": ["sha256:00"],
            "index": "pypi",
            "version": "=={version}"
        }}
    }},
    "develop": {{}}
}}
"""

PYPROJECT = """\
[project]
name = "app"
version = "0.1.0"
dependencies = [
    "fw=={version}",
]
"""

POETRY_PYPROJECT = """\
[tool.poetry]
name = "app"
version = "0.1.0"

[tool.poetry.dependencies]
python = "^3.10"
fw = "{version}"
"""

FILES: dict[str, tuple[Callable[[str], dict[str, str]], str]] = {
    "requirements.txt": (lambda v: {"requirements.txt": f"fw=={v}\n"}, "requirements.txt:1"),
    "constraints": (lambda v: {"requirements/base.txt": "-c ../constraints.txt\nfw\n",
                               "constraints.txt": f"# pinned\nfw=={v}\n"}, "constraints.txt:2"),
    "pyproject.toml": (lambda v: {"pyproject.toml": PYPROJECT.format(version=v)},
                       "pyproject.toml:5"),
    "poetry pyproject": (lambda v: {"pyproject.toml": POETRY_PYPROJECT.format(version=v)},
                         "pyproject.toml:7"),
    "uv.lock": (lambda v: {"uv.lock": UV_LOCK.format(version=v)}, "uv.lock:16"),
    "poetry.lock": (lambda v: {"poetry.lock": POETRY_LOCK.format(version=v)}, "poetry.lock:4"),
    "Pipfile.lock": (lambda v: {"Pipfile.lock": PIPFILE_LOCK.format(version=v)},
                     "Pipfile.lock:9"),
}


@pytest.mark.parametrize("kind", list(FILES))
def test_a_bump_that_breaks_an_override_fails_the_gate(
        kind: str, tmp_path: Path, dist: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    files, where = FILES[kind]
    repo = change(tmp_path, {**APP, **files("1.0")}, files("2.0"))
    code, report, err = check(repo, capsys, monkeypatch)
    _assert_fires(code, report, where)
    assert "1 new error" in err
    assert any(n.startswith(f"dependency fw 1.0 -> 2.0 ({where}): checked the overrides of 1 "
                            "class: 1 finding") for n in report["notes"])
    assert cached(tmp_path) == ["fw-1.0-py3-none-any.whl", "fw-2.0-py3-none-any.whl"]


def test_plain_and_sarif_output_name_the_override_and_the_call_site(
        tmp_path: Path, dist: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    repo = change(tmp_path, {**APP, "requirements.txt": "fw==1.0\n"},
                  {"requirements.txt": "fw==2.0\n"})
    monkeypatch.chdir(repo.root)
    assert main(["check", "--base", "main", "--no-cache", "--format", "plain"]) == 1
    out = capsys.readouterr().out
    assert (f"app/trainers.py:4:5: HG002 [error] CustomTrainer.compute_loss cannot accept the "
            f"call in Trainer.training_step (fw/core/trainer.py:{_call_line()}, 2.0)") in out
    assert main(["check", "--base", "main", "--no-cache", "--format", "sarif"]) == 1
    sarif = json.loads(capsys.readouterr().out)
    [result] = sarif["runs"][0]["results"]
    assert result["ruleId"] == "HG002" and "fw 1.0 -> 2.0" in result["message"]["text"]


def test_a_bump_a_package_names_differently_is_found_by_its_wheel(
        tmp_path: Path, dist: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The distribution fw-dist provides the import package fw: no pinned name claims fw, so
    the changed package's new wheel is read to learn its import names."""
    write_wheel(dist, "fw_dist", "1.0", FW_OLD)
    write_wheel(dist, "fw_dist", "2.0", FW_NEW)
    repo = change(tmp_path, {**APP, "requirements.txt": "fw-dist==1.0\nother==1.0\n"},
                  {"requirements.txt": "fw-dist==2.0\nother==2.0\n"})
    code, report, _ = check(repo, capsys, monkeypatch)
    assert code == 1
    [finding] = errors_of(report)
    assert finding["message"].endswith("[fw-dist 1.0 -> 2.0, requirements.txt:1]")
    statuses = {d["package"]: d["status"] for d in report["dependencies"]}
    assert statuses == {"fw-dist": "checked", "other": "not subclassed"}


# -- what must not error ---------------------------------------------------------------------


def test_a_bump_that_breaks_nothing_passes(
        tmp_path: Path, dist: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    repo = change(tmp_path, {**APP_SAFE, "requirements.txt": "fw==1.0\n"},
                  {"requirements.txt": "fw==2.0\n"})
    code, report, err = check(repo, capsys, monkeypatch)
    assert code == 0, report
    assert errors_of(report) == []
    assert report["dependencies"][0]["status"] == "checked"
    assert "no new findings" in err
    assert any("dependency fw 1.0 -> 2.0 (requirements.txt:1): checked the overrides of 1 "
               "class: 0 findings" in n for n in report["notes"])


def test_an_unpinned_range_is_a_note_and_nothing_is_downloaded(
        tmp_path: Path, dist: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    repo = change(tmp_path, {**APP, "requirements.txt": "fw>=1.0\n"},
                  {"requirements.txt": "fw>=2.0,<3\n"})
    code, report, _ = check(repo, capsys, monkeypatch)
    assert code == 0
    assert report["findings"] == [] and report["errors"] == []
    [note] = [n for n in report["notes"] if n.startswith("fw:")]
    assert note.startswith("fw: requirements.txt:1 requires >=2.0,<3 (was >=1.0), no exact "
                           "version: which version is installed cannot be known from it")
    assert cached(tmp_path) == []


def test_a_package_nobody_subclasses_is_not_downloaded(
        tmp_path: Path, dist: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    repo = change(tmp_path, {**APP, "requirements.txt": "fw==1.0\nother==1.0\n"},
                  {"requirements.txt": "fw==1.0\nother==2.0\n"})
    code, report, _ = check(repo, capsys, monkeypatch)
    assert code == 0
    assert report["findings"] == [] and report["errors"] == []
    [moved] = report["dependencies"]
    assert (moved["package"], moved["status"]) == ("other", "not subclassed")
    assert ("dependency other 1.0 -> 2.0 (requirements.txt:2): no class of the checkout "
            "subclasses a class of it; not checked") in report["notes"]
    assert cached(tmp_path) == []


def test_a_package_whose_import_names_cannot_be_read_is_a_note(
        tmp_path: Path, dist: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The checkout subclasses a class of fw, which no pinned name provides; the moved package
    gone-dist has no wheel to read its import names from: a note says what is not known."""
    repo = change(tmp_path, {**APP, "requirements.txt": "gone-dist==1.0\n"},
                  {"requirements.txt": "gone-dist==2.0\n"})
    code, report, _ = check(repo, capsys, monkeypatch)
    assert code == 0 and report["errors"] == []
    [moved] = report["dependencies"]
    assert moved["status"] == "unknown"
    [note] = [n for n in report["notes"] if n.startswith("dependency gone-dist")]
    assert note.startswith("dependency gone-dist 1.0 -> 2.0 (requirements.txt:1): could not tell "
                           "whether the checkout subclasses it: its import names cannot be read "
                           "(pip download gone-dist==2.0 failed")
    assert note.endswith("the checkout subclasses classes of fw, which no pinned name provides")


def test_a_malformed_lock_file_is_a_note(
        tmp_path: Path, dist: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    repo = change(tmp_path, {**APP, "uv.lock": UV_LOCK.format(version="1.0"),
                             "Pipfile.lock": PIPFILE_LOCK.format(version="1.0")},
                  {"uv.lock": UV_LOCK.format(version="2.0").replace("[[package]]\nname = \"fw\"",
                                                                    "[[package]\nname = \"fw\""),
                   "Pipfile.lock": '{"default": {"fw": {"version": "==2.0"},}}'})
    code, report, _ = check(repo, capsys, monkeypatch)
    assert code == 0, report
    assert report["findings"] == [] and report["errors"] == []
    notes = report["notes"]
    assert any(n.startswith("uv.lock:15: invalid TOML (") for n in notes), notes
    assert any(n.startswith("Pipfile.lock:1: invalid JSON (") for n in notes), notes


def test_a_version_that_cannot_be_downloaded_fails_and_says_so(
        tmp_path: Path, dist: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    repo = change(tmp_path, {**APP, "requirements.txt": "fw==1.0\n"},
                  {"requirements.txt": "fw==3.0\n"})
    code, report, err = check(repo, capsys, monkeypatch)
    assert code == 1  # never a silent pass
    [problem] = report["errors"]
    assert problem["path"] == "requirements.txt" and problem["line"] == 1
    assert problem["message"].startswith("dependency not checked: fw 1.0 -> 3.0: pip download "
                                         "fw==3.0 failed")
    assert "\n" not in problem["message"]
    assert report["dependencies"][0]["status"] == "not checked"
    assert "1 dependency change not checked" in err
    # --exit-zero and --no-dependencies are the ways out.
    code, _, _ = check(repo, capsys, monkeypatch, "--exit-zero")
    assert code == 0


def test_no_dependencies_turns_it_off(
        tmp_path: Path, dist: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    repo = change(tmp_path, {**APP, "requirements.txt": "fw==1.0\n"},
                  {"requirements.txt": "fw==2.0\n"})
    code, report, _ = check(repo, capsys, monkeypatch, "--no-dependencies")
    assert code == 0 and report["findings"] == [] and "dependencies" not in report
    assert cached(tmp_path) == []


def test_no_dependency_change_costs_nothing(
        tmp_path: Path, dist: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    repo = change(tmp_path, {**APP, "requirements.txt": "fw==1.0\n"},
                  {"app/more.py": "X = 1\n"})
    code, report, _ = check(repo, capsys, monkeypatch)
    assert code == 0 and report["dependencies"] == [] and report["notes"] == []
    assert cached(tmp_path) == []


def test_help_names_the_opt_out(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--no-dependencies" in out and "uv.lock" in out


# -- parsing: real file contents -------------------------------------------------------------


def _pins(pins: list[Pin]) -> list[tuple[str, str | None, int]]:
    return [(p.name, p.version, p.line) for p in pins]


def test_requirements_files_as_pip_compile_and_people_write_them() -> None:
    text = (
        "#\n"
        "# This file is autogenerated by pip-compile with Python 3.11\n"
        "#    pip-compile --generate-hashes requirements.in\n"
        "#\n"
        "--index-url https://pypi.org/simple\n"
        "-r base.txt\n"
        "--constraint=constraints.txt\n"
        "-cother-constraints.txt\n"
        "certifi==2024.8.30 \\\n"
        "    --hash=sha256:922820b53db7a7257ffbda3f597266d435245903d80737e34f8a45ff3e3230d8\n"
        "    # via requests\n"
        "Django[argon2]==4.2.16 ; python_version >= \"3.10\"  # pinned by hand\n"
        "torch===2.1.0+cu118\n"
        "numpy>=1.24,<2\n"
        "requests\n"
        "ruamel.yaml.clib==0.2.8\n"
        "wild==1.*\n"
        "-e ./vendored/pkg\n"
        "./local-pkg\n"
        "thing @ https://example.com/thing-1.0.tar.gz\n"
        "git+https://github.com/x/y.git#egg=y\n"
        "bad requirement line\n"
        "sneaky==${VERSION}\n"
    )
    pins, includes, notes = parse_requirements("requirements.txt", text)
    assert _pins(pins) == [
        ("certifi", "2024.8.30", 9), ("django", "4.2.16", 12), ("torch", "2.1.0+cu118", 13),
        ("numpy", None, 14), ("requests", None, 15), ("ruamel-yaml-clib", "0.2.8", 16),
        ("wild", None, 17)]
    assert pins[1].shown == "Django" and pins[3].spec == ">=1.24,<2"
    assert includes == [("base.txt", 6), ("constraints.txt", 7), ("other-constraints.txt", 8)]
    assert notes == ["requirements.txt:22: not a requirement: 'bad requirement line'",
                     "requirements.txt:23: an environment variable in a requirement: not read"]


def test_includes_are_followed_inside_the_tree_only() -> None:
    files = {
        "requirements.txt": b"-r requirements/base.txt\n-c ../../etc/passwd\n"
                            b"-r https://x/r.txt\n-r missing.txt\n",
        "requirements/base.txt": b"-r ../requirements.txt\n-c pins.in\nfw\n",
        "requirements/pins.in": b"fw==1.0\n",
    }
    out = read_pins(["requirements.txt", "requirements/base.txt"],
                    dict.fromkeys(files, "0"), lambda paths: {p: files[p] for p in paths})
    assert _pins(out.pins) == [("fw", None, 3), ("fw", "1.0", 1)]
    assert out.pins[1].path == "requirements/pins.in"
    assert sorted(out.files) == sorted(files)
    assert out.notes == [
        "requirements.txt:2: ../../etc/passwd is outside the repository or a URL: not read",
        "requirements.txt:3: https://x/r.txt is outside the repository or a URL: not read",
        "requirements.txt:4: missing.txt is not in the tree: not read"]


def test_an_include_chain_is_bounded() -> None:
    files = {f"r{i}.txt": f"-r r{i + 1}.txt\n".encode() for i in range(40)}
    files["r40.txt"] = b"fw==1.0\n"
    out = read_pins(["r0.txt"], dict.fromkeys(files, "0"),
                    lambda paths: {p: files[p] for p in paths})
    assert out.pins == []
    assert any("includes nested over 16 deep" in n for n in out.notes)


def test_a_file_over_the_limit_or_not_utf8_is_a_note() -> None:
    big = b"fw==1.0\n" * ((MAX_TEXT_BYTES // 8) + 1)
    files: dict[str, bytes | None] = {
        "requirements.txt": None, "uv.lock": b"\xff\xfe", "a/requirements.txt": big,
        "b/uv.lock": b"#" * len(big)}  # (a lock file may be larger)
    out = read_pins(list(files), dict.fromkeys(files, "0"),
                    lambda paths: {p: files[p] for p in paths})
    assert out.notes == [
        f"requirements.txt: over {MAX_TEXT_BYTES >> 20} MiB or unreadable: not read",
        "uv.lock:1: not UTF-8: not read",
        f"a/requirements.txt: over {MAX_TEXT_BYTES >> 20} MiB or unreadable: not read"]
    assert out.pins == [] and len(big) < MAX_BYTES
    # At most MAX_TOTAL bytes of one tree's files are read.
    many = {f"{i}/uv.lock": b"#" * (MAX_BYTES - 1) for i in range(MAX_TOTAL // MAX_BYTES + 1)}
    out = read_pins(list(many), dict.fromkeys(many, "0"),
                    lambda paths: {p: many[p] for p in paths})
    assert out.notes == [f"{MAX_TOTAL // MAX_BYTES}/uv.lock: over {MAX_TOTAL >> 20} MiB of "
                         "requirement and lock files in all: not read"]


def test_pyproject_pep621_dependency_groups_and_poetry() -> None:
    text = """\
[build-system]
requires = ["setuptools>=68"]

[project]
name = "app"
dependencies = [
    "transformers==4.45.2",
    "torch>=2.1",
    "accelerate[deepspeed]==0.34.2; sys_platform == 'linux'",
    "local @ file:///tmp/local",
]

[project.optional-dependencies]
lightning = ["lightning==2.4.0"]

[dependency-groups]
test = ["pytest==8.3.3", {include-group = "lint"}]
lint = ["ruff>=0.6"]

[tool.uv]
constraint-dependencies = ["numpy==1.26.4"]

[tool.poetry.dependencies]
python = "^3.10"
Django = "4.2.16"
celery = "^5.3"
redis = {version = "==5.0.8", extras = ["hiredis"]}
mine = {path = "../mine"}
multi = [
    {version = "1.0", python = "<3.11"},
    {version = "2.0", python = ">=3.11"},
]

[tool.poetry.group.dev.dependencies]
black = "24.8.0"
"""
    pins, notes = parse_pyproject("pyproject.toml", text)
    assert notes == []
    assert _pins(pins) == [
        ("transformers", "4.45.2", 7), ("torch", None, 8), ("accelerate", "0.34.2", 9),
        ("lightning", "2.4.0", 14), ("pytest", "8.3.3", 17), ("ruff", None, 18),
        ("numpy", "1.26.4", 21), ("django", "4.2.16", 25), ("celery", None, 26),
        ("redis", "5.0.8", 27), ("multi", "1.0", 29), ("multi", "2.0", 29),
        ("black", "24.8.0", 35)]
    assert pins[0].key != pins[3].key  # (per table: a pin is compared with its own table's)


def test_uv_lock() -> None:
    text = """\
version = 1
revision = 1
requires-python = ">=3.10"
resolution-markers = [
    "python_full_version >= '3.12'",
    "python_full_version < '3.12'",
]

[[package]]
name = "app"
version = "0.1.0"
source = { editable = "." }
dependencies = [
    { name = "numpy", version = "1.26.4", source = { registry = "https://pypi.org/simple" }, marker = "python_full_version < '3.12'" },
    { name = "numpy", version = "2.1.1", source = { registry = "https://pypi.org/simple" }, marker = "python_full_version >= '3.12'" },
]

[[package]]
name = "certifi"
version = "2024.8.30"
source = { registry = "https://pypi.org/simple" }
sdist = { url = "https://files.pythonhosted.org/packages/b0/ee/certifi-2024.8.30.tar.gz", hash = "sha256:bec941d2aa8195e248a60b31ff9f0558284cf01a52591ceda73ea9afffd69fd9", size = 168507 }

[[package]]
name = "numpy"
version = "1.26.4"
source = { registry = "https://pypi.org/simple" }
resolution-markers = [
    "python_full_version < '3.12'",
]

[[package]]
name = "numpy"
version = "2.1.1"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "from-git"
version = "0.3.0"
source = { git = "https://github.com/x/from-git?rev=main#abc" }
"""  # noqa: E501
    pins, notes = parse_uv_lock("uv.lock", text)
    assert notes == []
    assert _pins(pins) == [("certifi", "2024.8.30", 19), ("numpy", "1.26.4", 25),
                           ("numpy", "2.1.1", 33)]


def test_poetry_lock() -> None:
    text = """\
# This file is automatically @generated by Poetry 1.8.3 and should not be changed by hand.

[[package]]
name = "certifi"
version = "2024.8.30"
description = "Python package for providing Mozilla's CA Bundle."
optional = false
python-versions = ">=3.6"
files = [
    {file = "certifi-2024.8.30-py3-none-any.whl", hash = "sha256:922820b53db7a7257ffbda3f597266d435245903d80737e34f8a45ff3e3230d8"},
]

[[package]]
name = "requests"
version = "2.32.3"
description = "Python HTTP for Humans."
optional = false
python-versions = ">=3.8"
files = []

[package.dependencies]
certifi = ">=2017.4.17"

[package.extras]
socks = ["PySocks (>=1.5.6,!=1.5.7)"]

[[package]]
name = "internal"
version = "1.2.0"
description = ""
optional = false
python-versions = "*"
files = []

[package.source]
type = "legacy"
url = "https://pypi.internal/simple"
reference = "internal"

[[package]]
name = "mine"
version = "0.1.0"
description = ""
optional = false
python-versions = "*"
files = []
develop = true

[package.source]
type = "directory"
url = "../mine"

[metadata]
lock-version = "2.0"
python-versions = "^3.10"
content-hash = "8f1b4a0b"
"""  # noqa: E501
    pins, notes = parse_poetry_lock("poetry.lock", text)
    assert notes == []
    assert _pins(pins) == [("certifi", "2024.8.30", 4), ("requests", "2.32.3", 14),
                           ("internal", "1.2.0", 28)]


def test_pipfile_lock() -> None:
    text = """\
{
    "_meta": {
        "hash": {
            "sha256": "6d9b0d3ba5b3bb04c0d56e2b0f3e9b9f1e8f4dbd0b1b7b0b0c1b1f0e0c1e1f0e"
        },
        "pipfile-spec": 6,
        "requires": {
            "python_version": "3.11"
        },
        "sources": [
            {
                "name": "pypi",
                "url": "https://pypi.org/simple",
                "verify_ssl": true
            }
        ]
    },
    "default": {
        "certifi": {
            "hashes": [
                "sha256:922820b53db7a7257ffbda3f597266d435245903d80737e34f8a45ff3e3230d8"
            ],
            "index": "pypi",
            "markers": "python_version >= '3.6'",
            "version": "==2024.8.30"
        },
        "mine": {
            "editable": true,
            "path": "."
        }
    },
    "develop": {
        "pytest": {
            "hashes": [],
            "index": "pypi",
            "version": "==8.3.3"
        }
    }
}
"""
    pins, notes = parse_pipfile_lock("Pipfile.lock", text)
    assert notes == []
    assert _pins(pins) == [("certifi", "2024.8.30", 19), ("pytest", "8.3.3", 33)]


@pytest.mark.parametrize(("path", "data", "note"), [
    ("uv.lock", b'version = 1\n\n[[package]\nname = "x"\n',
     "uv.lock:3: invalid TOML (Expected ']]' at the end of an array declaration): not read"),
    ("poetry.lock", b"[[package]]\nname = 'x'\nversion = \n",
     "poetry.lock:3: invalid TOML (Invalid value): not read"),
    ("pyproject.toml", b"[project]\ndependencies = " + b"[" * 5000 + b"\n",
     None),
    ("pyproject.toml", b"[project]\n" + b"a." * 40 + b"b = 1\n",
     "pyproject.toml:2: a key of over 16 dotted parts: not read"),
    ("Pipfile.lock", b"[" * 100000 + b"]" * 100000, "Pipfile.lock:1: invalid JSON: not read"),
    ("Pipfile.lock", b'{"default": {"x": {"version": "==1"}}, }',
     "Pipfile.lock:1: invalid JSON (Expecting property name enclosed in double quotes): "
     "not read"),
    ("Pipfile.lock", b"[1, 2]", "Pipfile.lock:1: not a Pipfile.lock (no object at the top): "
                                "not read"),
    ("uv.lock", b"package = 3\n", None),
    ("uv.lock", b'[[package]]\nname = 3\nversion = "1"\n',
     "uv.lock: a [[package]] with the name '3': left out"),
    ("poetry.lock", b'[[package]]\nname = "x"\nversion = ["1"]\n',
     "poetry.lock:2: x has no version: left out"),
])
def test_malformed_files_are_one_note_naming_file_and_line(
        path: str, data: bytes, note: str | None) -> None:
    pins, includes, notes = parse_file(path, data)
    assert pins == [] and includes == []
    if note is None:
        assert len(notes) <= 1 and all(n.startswith(f"{path}:") for n in notes)
    else:
        assert notes == [note]


def test_which_files_are_read() -> None:
    assert all(is_manifest(p) for p in (
        "requirements.txt", "requirements-dev.txt", "dev-requirements.txt", "ci/constraints.txt",
        "requirements/base.txt", "pyproject.toml", "sub/uv.lock", "poetry.lock",
        "Pipfile.lock"))
    assert not any(is_manifest(p) for p in (
        "README.txt", "requirements.in", "Pipfile", "node_modules/x/requirements.txt",
        ".venv/lib/requirements.txt", "setup.cfg"))


# -- comparing two trees ---------------------------------------------------------------------


def _pin(name: str, version: str | None, path: str = "requirements.txt", line: int = 1,
         key: str = "requirements;", spec: str | None = None) -> Pin:
    return Pin(name, name, version, spec or (f"=={version}" if version else "any version"),
               path, line, key)


def test_compare_pairs_versions_by_file_and_marker() -> None:
    base = [_pin("fw", "1.0"), _pin("numpy", "1.26.4", "uv.lock", 5, "lock.1"),
            _pin("numpy", "2.0.0", "uv.lock", 9, "lock.2"), _pin("same", "1.0"),
            _pin("Moved", "3.0", "requirements.txt")]
    head = [_pin("fw", "2.0", line=3), _pin("numpy", "1.26.4", "uv.lock", 5, "lock.1"),
            _pin("numpy", "2.1.1", "uv.lock", 9, "lock.2"), _pin("same", "1.0.0"),
            _pin("Moved", "3.0", "uv.lock", 2, "lock.1"), _pin("new", "1.0")]
    result = compare(base, head)
    assert [(c.name, c.old, c.new, c.where) for c in result.changes] == [
        ("fw", "1.0", "2.0", ("requirements.txt:3",)),
        ("numpy", "2.0.0", "2.1.1", ("uv.lock:9",))]
    assert result.added == ["new"] and result.unpinned == []


def test_compare_notes_a_requirement_changed_without_a_pin() -> None:
    base = [_pin("fw", "1.0"), _pin("loose", None, spec=">=1")]
    head = [_pin("fw", None, spec=">=1.0"), _pin("loose", None, spec=">=2")]
    result = compare(base, head)
    assert result.changes == []
    assert [n.split(",")[0] for n in result.unpinned] == [
        "fw: requirements.txt:1 requires >=1.0 (was ==1.0)",
        "loose: requirements.txt:1 requires >=2 (was >=1)"]
    # A range beside a lock file's pin: the lock file says which version, and no note.
    locked = compare([*base, _pin("fw", "1.0", "uv.lock", key="lock.1")],
                     [*head, _pin("fw", "2.0", "uv.lock", key="lock.1")])
    assert [(c.name, c.old, c.new) for c in locked.changes] == [("fw", "1.0", "2.0")]
    assert [n.split(":")[0] for n in locked.unpinned] == ["loose"]


def test_import_names_guessed_from_a_distribution_name() -> None:
    assert guessed_imports("typing-extensions") == ("typing_extensions",)
    assert guessed_imports("PyYAML") == ("yaml", "_yaml")
    assert guessed_imports("python-dateutil") == ("dateutil",)
    assert guessed_imports("Flask_SQLAlchemy") == ("flask_sqlalchemy",)


def test_external_tops_leave_out_the_standard_library(tmp_path: Path) -> None:
    from hookguard.model.loader import load_worktree
    from hookguard.model.project import Project

    (tmp_path / "m.py").write_text(
        "import abc, enum\nimport torch.nn\nfrom fw import Trainer\n"
        "class A(abc.ABC): pass\nclass B(enum.Enum): pass\nclass C(torch.nn.Module): pass\n"
        "class D(Trainer): pass\nclass E(Exception): pass\n")
    records, _ = load_worktree(tmp_path, ["m.py"], None, 1 << 20)
    assert external_tops(Project.build(records, {})) == {"torch", "fw"}


def test_the_documented_dependency_workflow(
        tmp_path: Path, dist: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/ci.md's Dependabot/Renovate workflow: it runs on a change to any file the check
    reads, and its command, as written, fails a bump that breaks an override, with an
    annotation on the override."""
    import fnmatch
    import re
    import shlex

    import yaml

    from tests.conftest import ROOT

    text = (ROOT / "docs" / "ci.md").read_text()
    blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", text, re.S)]
    (workflow,) = [b for b in blocks if isinstance(b, dict)
                   and b.get("name") == "hookguard dependencies"]
    paths = workflow[True]["pull_request"]["paths"]  # YAML reads "on" as True
    for kind in FILES.values():
        for path in kind[0]("1.0"):
            assert any(fnmatch.fnmatch(f"x/{path}", p.replace("**/", "*/")) for p in paths), path
    (job,) = workflow["jobs"].values()
    assert job["steps"][0]["with"]["fetch-depth"] == 0
    (command,) = [s["run"].strip() for s in job["steps"]
                  if s.get("run", "").strip().startswith("hookguard ")]
    argv = shlex.split(command.replace('"origin/${{ github.base_ref }}"', "main"))
    repo = change(tmp_path, {**APP, "uv.lock": UV_LOCK.format(version="1.0")},
                  {"uv.lock": UV_LOCK.format(version="2.0")})
    monkeypatch.chdir(repo.root)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert main([*argv[1:], "--no-cache"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("::error file=app/trainers.py,line=4")
    assert "fw 1.0 -> 2.0, uv.lock:16" in out
