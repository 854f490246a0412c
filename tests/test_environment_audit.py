"""``hookguard audit --python``: installed packages are part of the model, read, never imported
(issue 25, item 1).

A small framework is built as a real wheel, installed with pip into a real virtual environment
(``python -m venv``, ``pip install --no-index --no-deps``: no network), and a real git checkout
subclasses it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hookguard.cli import main
from tests.test_upgrade import make_checkout, write_wheel

FW = {
    "fw/__init__.py": """
        from .core import Base as Base
        open(__file__ + ".imported", "w").close()  # never run: the package is only read
    """,
    "fw/core.py": """
        from fw._root import Root


        class Base(Root):
            def run(self, x):
                return self.hook(x, new=1)
    """,
    "fw/_root.py": """
        class Root:
            def hook(self, x, new=None):
                return x
    """,
    "fw/broken.py": """
        class Thing:
            def run(self):
                self.hook(1, new=2)
        def (:
    """,
    # a .pth file whose import line would run at interpreter start-up: never run
    "fw_start.pth": "import os; open(os.path.join(os.path.dirname(os.__file__), "
                    "'..', 'fw-started'), 'w').close()\n",
}

# 2.0: the hook accepts the new keyword
FW_2 = {**FW, "fw/_root.py": """
    class Root:
        def hook(self, x, new=None):
            return x
"""}
FW_2["fw/core.py"] = """
    from fw._root import Root


    class Base(Root):
        def run(self, x):
            return self.hook(x)
"""

CHECKOUT = {
    "app/__init__.py": "",
    "app/mine.py": """
        import fw


        class Mine(fw.Base):
            def hook(self, x):
                return x


        class Tolerant(fw.Base):
            def hook(self, x, **kwargs):
                return x
    """,
}


def _install(venv: Path, wheel: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "--python", str(_python(venv)), "install",
                    "--no-index", "--no-deps", "--quiet", "--disable-pip-version-check",
                    str(wheel)], check=True, capture_output=True)


def _python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _site(venv: Path) -> Path:
    return next(venv.glob("lib/python*/site-packages"))


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtual environment with fw 1.0 installed by pip, from a wheel."""
    root = tmp_path_factory.mktemp("env")
    wheel = write_wheel(root / "dist", "fw", "1.0", FW)
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    _install(venv, wheel)
    (_site(venv).parent / "fw-started").unlink(missing_ok=True)  # (pip ran the interpreter)
    return venv


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No cache of the user's, no active virtual environment."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.delenv("HOOKGUARD_CACHE_DIR", raising=False)
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)


def audit(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, dict[str, Any]]:
    code = main(["audit", *map(str, args), "--format", "json"])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else {}


def by_class(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {".".join(f["symbol"].rsplit(".", 2)[-2:]): f for f in report["findings"]}


def test_an_override_the_frameworks_call_fails_is_an_error(
        tmp_path: Path, venv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    checkout = make_checkout(tmp_path / "down", CHECKOUT)
    code, report = audit(capsys, checkout, "--python", _python(venv))
    assert code == 1
    found = by_class(report)
    assert set(found) == {"Mine.hook"}  # **kwargs takes the keyword: not reported
    finding = found["Mine.hook"]
    assert finding["code"] == "HG002" and finding["severity"] == "error"
    assert finding["path"] == "app/mine.py" and finding["line"] == 5
    assert "cannot accept the call in Base.run (fw/core.py:6, installed fw 1.0)" in (
        finding["message"])
    assert "unexpected keyword argument 'new'" in finding["message"]
    # Reports point into the checkout only; the installed call site is evidence.
    assert all(not r["path"].startswith("fw/") for r in finding["related"])
    installed = finding["evidence"]["installed"]
    assert installed == [{
        "path": str(_site(venv) / "fw" / "core.py"), "module_path": "fw/core.py", "line": 6,
        "distribution": "fw", "version": "1.0", "message": installed[0]["message"]}]
    assert report["errors"] == []
    # Read as bytes: nothing of the package, nor of the environment, ran.
    assert not (_site(venv) / "fw" / "__init__.py.imported").exists()
    assert not (_site(venv).parent / "fw-started").exists()


def test_without_the_environment_the_base_is_unknown(
        tmp_path: Path, venv: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    checkout = make_checkout(tmp_path / "down", CHECKOUT)
    code, report = audit(capsys, checkout)
    assert (code, report["findings"]) == (0, [])
    # The active virtual environment is the default, and --no-environment turns it off.
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))
    code, report = audit(capsys, checkout)
    assert (code, set(by_class(report))) == (1, {"Mine.hook"})
    code, report = audit(capsys, checkout, "--no-environment")
    assert (code, report["findings"]) == (0, [])
    # A virtual environment's folder names it as well as its interpreter.
    monkeypatch.delenv("VIRTUAL_ENV")
    code, report = audit(capsys, checkout, "--python", venv)
    assert (code, set(by_class(report))) == (1, {"Mine.hook"})


def test_a_bad_python_is_a_usage_error(tmp_path: Path, venv: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    checkout = make_checkout(tmp_path / "down", CHECKOUT)
    assert main(["audit", str(checkout), "--python", str(tmp_path / "nope")]) == 2
    assert "--python" in capsys.readouterr().err
    assert main(["audit", str(checkout), "--python", str(_python(venv)),
                 "--no-environment"]) == 2


def test_a_warm_run_equals_a_cold_one(tmp_path: Path, venv: Path,
                                      capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    checkout = make_checkout(tmp_path / "down", CHECKOUT)
    cold = audit(capsys, checkout, "--python", _python(venv))
    records = tmp_path / "xdg-cache" / "hookguard" / "packages" / "records"
    assert [p.name for p in records.iterdir()] == ["fw-1.0"]  # outside the checkout
    assert cold[0] == 1
    warm = audit(capsys, checkout, "--python", _python(venv))  # the last result, reused
    assert warm == cold
    # The checkout's cache gone, the package records still cached: nothing installed is parsed.
    shutil.rmtree(checkout / ".hookguard_cache")

    def no_parse(*args: object, **kwargs: object) -> None:
        raise AssertionError("an installed file was parsed on a warm run")

    monkeypatch.setattr("hookguard.upgrade.environment.extract", no_parse)
    assert audit(capsys, checkout, "--python", _python(venv)) == cold
    monkeypatch.undo()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    # Without any cache: the same.
    assert audit(capsys, checkout, "--python", _python(venv), "--no-cache") == cold


def test_an_upgraded_package_is_seen_by_the_next_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The last result is reused only while the installed files it read are unchanged."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    _install(venv, write_wheel(tmp_path / "dist", "fw", "1.0", FW))
    checkout = make_checkout(tmp_path / "down", CHECKOUT)
    assert audit(capsys, checkout, "--python", _python(venv))[0] == 1
    _install(venv, write_wheel(tmp_path / "dist", "fw", "2.0", FW_2))
    code, report = audit(capsys, checkout, "--python", _python(venv))
    assert (code, report["findings"]) == (0, [])
    # An edit in place (an editable or patched install) is seen too.
    core = _site(venv) / "fw" / "core.py"
    core.write_text(core.read_text().replace("self.hook(x)", "self.hook(x, new=3)"))
    code, report = audit(capsys, checkout, "--python", _python(venv))
    assert (code, set(by_class(report))) == (1, {"Mine.hook"})
    assert "installed fw 2.0" in report["findings"][0]["message"]


def test_an_installed_file_with_a_syntax_error_is_a_note(
        tmp_path: Path, venv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    checkout = make_checkout(tmp_path / "down", {
        "app/__init__.py": "",
        "app/things.py": """
            from fw.broken import Thing


            class Mine(Thing):
                def hook(self, x):
                    return x
        """,
    })
    code, report = audit(capsys, checkout, "--python", _python(venv))
    assert (code, report["findings"], report["errors"]) == (0, [], [])
    broken = str(_site(venv) / "fw" / "broken.py")
    assert any(n.startswith(f"installed file {broken}:4 was not analysed") for n in
               report["notes"]), report["notes"]


def test_over_the_cap_the_bases_stay_unknown(
        tmp_path: Path, venv: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("hookguard.upgrade.environment.MAX_FILES", 1)
    checkout = make_checkout(tmp_path / "down", CHECKOUT)
    code, report = audit(capsys, checkout, "--python", _python(venv), "--no-cache")
    assert (code, report["findings"]) == (0, [])  # fw.core, where Base is, was not read
    assert any("stopped after 1 file," in n for n in report["notes"]), report["notes"]


def test_a_package_the_checkout_holds_itself_is_not_read(
        tmp_path: Path, venv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    checkout = make_checkout(tmp_path / "down", {
        **CHECKOUT,
        "fw/__init__.py": "class Base:\n    def run(self, x):\n        return x\n",
    })
    code, report = audit(capsys, checkout, "--python", _python(venv))
    assert (code, report["findings"]) == (0, [])


def test_import_hookguard_stays_torch_free() -> None:
    code = ("import sys, hookguard, hookguard.engine, hookguard.upgrade.environment; "
            "assert 'torch' not in sys.modules, 'torch imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_folders_of_a_venv_are_read_without_running_it(tmp_path: Path) -> None:
    """pyvenv.cfg and site-packages, .pth path lines (an import line is never run), an
    editable finder's MAPPING; a regular package wins over a namespace portion before it."""
    from hookguard.upgrade.environment import InstalledPackages, find_environment

    venv = tmp_path / "venv"
    site = venv / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /nowhere\nversion = 3.11.7\n")
    (venv / "bin").mkdir()
    (venv / "bin" / "python").write_text("#!/bin/sh\ntouch ran\n")  # never run
    extra, src = tmp_path / "extra", tmp_path / "src"
    (extra / "ns").mkdir(parents=True)
    (extra / "ns" / "mod.py").write_text("class Regular: pass\n")
    (extra / "ns" / "__init__.py").write_text("")
    (site / "ns").mkdir()
    (site / "ns" / "mod.py").write_text("class Portion: pass\n")
    (src / "mine").mkdir(parents=True)
    (src / "mine" / "__init__.py").write_text("class Mine: pass\n")
    (site / "a.pth").write_text(f"# comment\n{extra}\nimport os; os.system('touch ran')\n")
    (site / "__editable___mine_1_0_finder.py").write_text(
        f"import sys\nMAPPING: dict[str, str] = {{'mine': {str(src / 'mine')!r}}}\n"
        "raise SystemExit('never run')\n")
    env = find_environment(str(venv / "bin" / "python"))
    assert env.folders == (str(site), str(extra))
    assert env.editable == (("mine", str(src / "mine")),)
    packages = InstalledPackages(env, tmp_path / "checkout", 1 << 20, use_cache=False)
    found = packages._locate("ns.mod")
    assert found is not None and found.file == str(extra / "ns" / "mod.py")
    mine = packages._locate("mine")
    assert mine is not None and mine.file == str(src / "mine" / "__init__.py")
    assert mine.path == "mine/__init__.py" and mine.is_package
    assert not (tmp_path / "ran").exists() and not Path("ran").exists()
