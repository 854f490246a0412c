"""Fuzzing what a checkout hands hookguard (issue 24): file names, contract files, cache files.

Each target of ``benchmarks/fuzz_inputs.py`` runs here at a small budget (the large run, 10,000
cases per target, is ``python benchmarks/fuzz_inputs.py``; its figures are in
docs/security.md): real checkouts in a temporary folder, real git, hookguard called in this
process. No case may crash, hang, write outside the checkout (a sibling folder, ``HOME`` and
``TMPDIR`` are compared before and after each case) or change a verdict (a warm run against
the cold one, a file's own finding, the well-named files' findings, a contract refused with
anything but one line naming its file and line); no report may hold a raw control character
from a file name. ``HOOKGUARD_INPUT_FUZZ_CASES`` sets the cases per target.

Each problem the fuzz found that is not fixed yet has a minimal reproducer below, marked
``xfail(strict=True, raises=AssertionError)``: it fails on its assertion today; once fixed it
passes, and the strict marker makes that a failure until the marker goes. While the fuzz
still meets such a problem, its target is an xfail naming it; any other problem fails.
"""

from __future__ import annotations

import hashlib
import hmac
import importlib.util
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import msgspec
import pytest

from hookguard.engine import Options, Workspace, audit
from hookguard.model.cache import CACHE_DIR_NAME, RecordCache
from hookguard.model.cache_secret import cache_key
from tests.conftest import GitRepo

ROOT = Path(__file__).resolve().parents[1]
BUDGET = {"names": 80, "contracts": 150, "cache": 80}  # 35-70 s in all on 2 cores
GATING = ("crash", "hang", "outside write", "verdict", "unescaped output")
# Problems the fuzz still meets, each with its reproducer test below (a fragment of the
# problem's signature, as fuzz_inputs.Tally.add records it).
KNOWN: dict[str, str] = {}


def driver() -> ModuleType:
    name = "hookguard_fuzz_inputs"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / "fuzz_inputs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("target", ["names", "contracts", "cache"])
def test_fuzz(target: str) -> None:
    """A small, fixed run of one target (seed 0)."""
    fuzz = driver()
    cases = int(os.environ.get("HOOKGUARD_INPUT_FUZZ_CASES", BUDGET[target]))
    tally = fuzz.fuzz(target, fuzz.Settings(cases=cases, seed=0, timeout=60.0,
                                            separators=True, signed_flips=True))
    assert tally.cases == cases
    assert not any("beyond the" in key for key in tally.outcomes), tally.report()
    problems = [p for p in tally.problems if p.kind in GATING]
    unknown = [p for p in problems if not any(k in p.signature for k in KNOWN)]
    assert not unknown, tally.report()
    if problems:
        tests = sorted({test for k, test in KNOWN.items()
                        if any(k in p.signature for p in problems)})
        pytest.xfail(f"known problems, reproduced by {', '.join(tests)}")


# -- reproducers of what the fuzz found --------------------------------------------------------
BASE = "class Base:\n    def run(self):\n        self.setup()\n\n    def setup(self):\n" \
    "        pass\n"
SUB = "from pkg.base import Base\n\n\nclass Sub(Base):\n    def setup(self):\n        pass\n"


@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A per-user cache key of the test's own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("HOOKGUARD_CACHE_KEY", raising=False)
    monkeypatch.delenv("HOOKGUARD_CACHE_DIR", raising=False)


def found(root: Path, use_cache: bool, **options: object) -> set[tuple[str, int, str]]:
    result = audit([root], Options(use_cache=use_cache, workers=1, **options))  # type: ignore[arg-type]
    return {(f.path, f.line, f.code) for f in result.findings}


def _renamed(repo: GitRepo) -> None:
    """``Base.setup`` renamed to ``prepare``, ``Sub.setup`` left behind: HG001 from history."""
    repo.commit("init", {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/sub.py": SUB})
    repo.commit("rename the hook", {"pkg/base.py": BASE.replace("setup", "prepare")})


@pytest.mark.parametrize("message", ["a\x1eb", "\x1e", "x\x1e0123456789abcdef\x1fy"])
def test_a_commit_subject_with_a_record_separator_hides_no_finding(
    git_repo: Callable[..., GitRepo], isolated: None, message: str
) -> None:
    """Found by the names target (random commit messages): until the walk's records were
    marked with a nonce, a commit whose subject held 0x1e (then the record separator of the
    history walk), between the rename and HEAD, made the stale override disappear, with
    --no-cache too (exit 0, 'All checks passed!')."""
    repo = git_repo()
    _renamed(repo)
    repo.git("commit", "-q", "--allow-empty", "-m", message)
    repo.git("commit", "-q", "--allow-empty", "-m", "next")
    assert found(repo.root, use_cache=False) == {("pkg/sub.py", 5, "HG001")}


@pytest.mark.parametrize("name", ["\x1ey.py", "a\x1e.py", "pkg/\x1e0\x1f1\x1f\x1fa.py"])
def test_a_file_name_with_a_record_separator_hides_no_finding(
    git_repo: Callable[..., GitRepo], isolated: None, name: str
) -> None:
    """A file whose name holds 0x1e, added by the commit that renames the hook, is part of
    that commit's record in the walk (``--raw -z`` lists it before ``pkg/base.py``): it must
    not cut the record and so hide the rename."""
    repo = git_repo()
    repo.commit("init", {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/sub.py": SUB})
    repo.commit("rename the hook", {"pkg/base.py": BASE.replace("setup", "prepare"),
                                    name: "x = 1\n"})
    assert found(repo.root, use_cache=False) == {("pkg/sub.py", 5, "HG001")}


DRIFT_BASE = ("class Base:\n    def run(self):\n        self.prepare(1, flag=True)\n\n"
              "    def prepare(self, x, flag=False):\n        pass\n")
DRIFT = "from pkg.base import Base\n\n\nclass W(Base):\n    def prepare(self):\n        pass\n"


@pytest.mark.parametrize("name", ["w\tx.py", "\t.py", "a\tpkg/base.py"])
def test_an_untracked_name_with_a_tab_is_audited(
    git_repo: Callable[..., GitRepo], isolated: None, name: str
) -> None:
    """Found by the names target: from 01486b3 to 9ae7493 an untracked file whose name held
    a tab was left out of the audit without a word (its drifted override unreported), or
    another path was read in its place; committed, the same file was reported."""
    repo = git_repo()
    repo.commit("init", {"pkg/__init__.py": "", "pkg/base.py": DRIFT_BASE})
    (repo.root / name).parent.mkdir(parents=True, exist_ok=True)
    (repo.root / name).write_text(DRIFT)
    assert found(repo.root, use_cache=False) == {(name, 5, "HG002")}


def test_sarif_shows_the_control_characters_of_names_escaped(
    git_repo: Callable[..., GitRepo], isolated: None
) -> None:
    """Found by the names target: every other format escapes them (printable(), or JSON's
    \\uXXXX); until report.escape.json_text, SARIF had them raw in messages, the symbol and
    the evidence paths. Escaped as JSON escapes, the names still decode to the exact names."""
    from hookguard.report.sarif import render_sarif

    repo = git_repo()
    drift = ("class Base:\n    def run(self):\n        self.prepare(1)\n\n"
             "    def prepare(self, x):\n        pass\n\n\nclass Good(Base):\n"
             "    def prepare(self):\n        pass\n")
    repo.commit("init", {"a\u202eb.py": drift, "c\x85d.py": "def broken(:\n"})
    result = audit([repo.root], Options(use_cache=False, workers=1))
    assert result.findings and result.errors
    text = render_sarif(result.findings, result.errors, result.root, result.notes)
    assert driver().raw_controls(text) == []
    uris = {loc["physicalLocation"]["artifactLocation"]["uri"]
            for res in json.loads(text)["runs"][0]["results"] for loc in res["locations"]}
    assert uris == {"a%E2%80%AEb.py"}  # (a URI: percent-encoded, the exact name)
    assert "a\u202eb.py" in json.loads(text)["runs"][0]["results"][0]["message"]["text"]


def _bend_signed_records(root: Path) -> None:
    """Change a parameter kind in every cached record that holds one, each shard signed
    again with the cache's key (its stamp and checksum right), and drop the index."""
    folder = root / CACHE_DIR_NAME
    stamp = RecordCache(folder, Workspace.open(root).config.digest(), root).stamp
    key = cache_key(root)
    bent = 0
    for shard in folder.glob("records-*.msgpack"):
        blob = shard.read_bytes()
        start = blob.index(b"\n") + 1 + 4
        body = blob[start + int.from_bytes(blob[start - 4:start], "big"):]
        if b"positional-or-keyword" not in body:
            continue
        body = body.replace(b"positional-or-keyword", b"positional-or-keywor`")
        mac = hmac.new(key, stamp.encode() + b"\0", hashlib.sha256)
        mac.update(body)
        header = msgspec.msgpack.encode([stamp, mac.digest(), len(body)])
        shard.write_bytes(blob[:start - 4] + len(header).to_bytes(4, "big") + header + body)
        bent += 1
    assert bent, "no record holds a parameter kind to change"
    for index in folder.glob("index-*.msgpack"):  # (no last state: every class is checked)
        index.unlink()


def test_a_signed_cache_body_that_does_not_decode_is_rebuilt(
    git_repo: Callable[..., GitRepo], isolated: None
) -> None:
    """Found by the cache target (a body changed, then signed again with the cache's key):
    only a holder of the key can write such a file (a bug, or a CI cache saved by a broken
    build), but the cache promises that a body that does not decode is rebuilt. Methods are
    decoded when a rule first reads them, so the run is made again without the cache's
    records (engine.rebuilding_bad_records), with a note; the next run uses the new cache."""
    repo = git_repo()
    _renamed(repo)
    cold = found(repo.root, use_cache=False)
    found(repo.root, use_cache=True)
    _bend_signed_records(repo.root)
    try:
        result = audit([repo.root], Options(use_cache=True, workers=1, reuse_results=False))
    except Exception as exc:  # (the failure this test is about)
        pytest.fail(f"{type(exc).__name__}: {exc}")
    assert {(f.path, f.line, f.code) for f in result.findings} == cold
    assert any("does not decode" in note and "rebuilt" in note for note in result.notes)
    again = audit([repo.root], Options(use_cache=True, workers=1, reuse_results=False))
    assert {(f.path, f.line, f.code) for f in again.findings} == cold
    assert not any("does not decode" in note for note in again.notes)


def test_check_on_a_signed_cache_body_that_does_not_decode_rebuilds_it(
    git_repo: Callable[..., GitRepo], isolated: None
) -> None:
    """The same bent cache under ``check --base``: its verdict is the cold one, with a note."""
    from hookguard.gate import run_gate

    repo = git_repo()
    repo.commit("init", {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/sub.py": SUB})
    repo.commit("rename the hook", {"pkg/base.py": BASE.replace("setup", "prepare")})

    def gate(use_cache: bool) -> tuple[set[tuple[str, int, str]], list[str]]:
        result = run_gate(repo.root, "HEAD~1", "HEAD", False,
                          Options(use_cache=use_cache, workers=1))
        return {(f.path, f.line, f.code) for f in result.findings}, result.notes

    cold, _ = gate(False)
    assert cold == {("pkg/sub.py", 5, "HG001")}
    gate(True)
    _bend_signed_records(repo.root)
    try:
        warm, notes = gate(True)
    except Exception as exc:  # (the failure this test is about)
        pytest.fail(f"{type(exc).__name__}: {exc}")
    assert warm == cold
    assert any("does not decode" in note and "rebuilt" in note for note in notes)
