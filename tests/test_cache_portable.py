"""A cache CI can carry (issue 12, item 2): a cache restored into a fresh clone at another path,
under another user home, with the secret the workflow passes in (``HOOKGUARD_CACHE_KEY``), gives
the same findings and is really used; a damaged one, one signed with another secret or none, and
a forged record are ignored with one note and never trusted (issue 24, item 2).

Each test is the CI flow itself: a real upstream repository (a base hook, overrides, a history
with a file rename), a first clone where hookguard fills the cache, and a fresh clone elsewhere,
run with another ``HOME``, into which that cache folder is copied, as ``actions/cache`` restores
it. What the cache answered is read from the line ``HOOKGUARD_CACHE_STATS=1`` prints.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hookguard.model.cache import _MAGIC, CACHE_DIR_NAME
from tests.conftest import GitRepo, forge_cache_file

PYPROJECT = '[project]\nname = "shop"\n\n[tool.hookguard]\nexclude = ["docs"]\n'
BASE = """
class Manager:
    def __init__(self):
        self.build_tables()
        self.warm_up(1)

    def build_tables(self):
        self.tables = []

    def warm_up(self, rounds):
        self.rounds = rounds
"""
RENAMED = BASE.replace("build_tables", "prepare_tables")
CHILD = """
from core.manager import Manager


class SparseManager(Manager):
    def build_tables(self):
        self.tables = [1, 2, 3]
"""
OTHER = """
from core.manager import Manager


class DenseManager(Manager):
    def warm_up(self, rounds):
        self.rounds = rounds * 2
"""
OLD_HOOK = """
class Reader:
    def read(self):
        self.load_header()

    def load_header(self):
        self.header = b""
"""
CONTRACT = """
[[hook]]
class = "core.manager.Manager"
method = "warm_up"
renamed_from = ["prime"]
"""
FILLER = {f"pkg/mod{i}.py": f"class Thing{i}:\n    def run(self):\n        return {i}\n"
          for i in range(12)}


def upstream_repo(root: Path) -> GitRepo:
    """main: a manager with two hooks and a reader whose file is later moved and whose hook is
    later renamed (history evidence for ``audit``); feature: renames ``build_tables``."""
    repo = GitRepo(root)
    repo.commit("Add manager", {
        "pyproject.toml": PYPROJECT, "core/__init__.py": "", "core/manager.py": BASE,
        "plugins/__init__.py": "", "plugins/sparse.py": CHILD, "plugins/dense.py": OTHER,
        "contracts/manager.toml": CONTRACT,  # read from the checkout: part of the result's key
        "io_old/__init__.py": "", "io_old/reader.py": OLD_HOOK,
        "io_old/csv_reader.py": ("from io_old.reader import Reader\n\n\nclass CsvReader(Reader):\n"
                                 "    def load_header(self):\n        self.header = b'a,b'\n"),
        **FILLER,
    })
    repo.git("mv", "io_old", "readers")  # a rename in the history
    (repo.root / "readers/csv_reader.py").write_text(
        (repo.root / "readers/csv_reader.py").read_text().replace("io_old", "readers"))
    repo.commit("Move io_old to readers")
    repo.commit("Rename load_header to read_header", {
        "readers/reader.py": OLD_HOOK.replace("load_header", "read_header")})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("Rename build_tables to prepare_tables", {"core/manager.py": RENAMED})
    repo.git("checkout", "-q", "main")
    return repo


def clone(upstream: GitRepo, where: Path, branch: str = "feature") -> Path:
    subprocess.run(["git", "clone", "-q", str(upstream.root), str(where)], check=True)
    subprocess.run(["git", "checkout", "-q", branch], cwd=where, check=True)
    return where


SECRET = "the workflow's secret"


def hookguard(cwd: Path, home: Path, *args: str, secret: str | None = SECRET
              ) -> subprocess.CompletedProcess[str]:
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HOOKGUARD_", "XDG_"))}
    env.update(HOME=str(home), USER=home.name, HOOKGUARD_CACHE_STATS="1")
    if secret is not None:
        env["HOOKGUARD_CACHE_KEY"] = secret
    return subprocess.run([sys.executable, "-m", "hookguard", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, check=False)


STATS = re.compile(
    r"^hookguard: cache: records (\d+) hit, (\d+) missed, (\d+) stored; file stats (\d+) hit, "
    r"(\d+) missed; history answers (\d+) hit, (\d+) missed; last result ([a-z ]+)$", re.M)


def stats(proc: subprocess.CompletedProcess[str]) -> dict[str, int | str]:
    (found,) = STATS.findall(proc.stderr)
    names = ("records_hit", "records_missed", "stored", "stats_hit", "stats_missed",
             "history_hit", "history_missed")
    return {**dict(zip(names, map(int, found[:7]), strict=True)), "result": found[7]}


def report(proc: subprocess.CompletedProcess[str]) -> dict[str, object]:
    out: dict[str, object] = json.loads(proc.stdout)
    return out


def restore(source: Path, target: Path) -> None:
    """What ``actions/cache`` does: the folder's files, written anew (new inodes and times)."""
    shutil.copytree(source / CACHE_DIR_NAME, target / CACHE_DIR_NAME)


@pytest.fixture
def upstream(tmp_path: Path) -> GitRepo:
    return upstream_repo(tmp_path / "upstream")


def test_check_in_a_fresh_clone_uses_the_restored_cache(upstream: GitRepo, tmp_path: Path) -> None:
    first = clone(upstream, tmp_path / "runner1" / "work" / "shop")
    filled = hookguard(first, tmp_path / "home1", "check", "--base", "origin/main",
                       "--format", "json")
    assert filled.returncode == 1, filled.stderr
    assert stats(filled)["records_hit"] == 0 and stats(filled)["stored"] > 0
    fresh = clone(upstream, tmp_path / "elsewhere" / "ci" / "checkout")
    restore(first, fresh)
    warm = hookguard(fresh, tmp_path / "home2", "check", "--base", "origin/main",
                     "--format", "json")
    assert warm.returncode == 1, warm.stderr
    assert report(warm) == report(filled)
    (finding,) = report(warm)["findings"]  # type: ignore[misc]
    assert finding["symbol"] == "plugins.sparse.SparseManager.build_tables"
    counts = stats(warm)
    assert counts["records_missed"] == 0 and counts["stored"] == 0, counts
    assert counts["records_hit"] == stats(filled)["stored"]  # both trees, each blob once
    assert report(warm)["notes"] == report(filled)["notes"]
    # The same run without the cache: the cache changed nothing.
    cold = hookguard(fresh, tmp_path / "home2", "check", "--base", "origin/main",
                     "--format", "json", "--no-cache")
    assert report(cold)["findings"] == report(warm)["findings"]


def test_a_one_file_pull_request_parses_one_file(upstream: GitRepo, tmp_path: Path) -> None:
    # The cache main's last run saved; a pull request on top changes one more file.
    main_run = clone(upstream, tmp_path / "a" / "shop", branch="main")
    # On main, the last push renamed load_header: one new error there.
    assert hookguard(main_run, tmp_path / "h1", "check", "--base", "HEAD~1").returncode == 1
    upstream.git("checkout", "-q", "-b", "tweak")
    upstream.commit("Dense managers warm up three times", {
        "plugins/dense.py": OTHER.replace("rounds * 2", "rounds * 3")})
    upstream.git("checkout", "-q", "main")
    fresh = clone(upstream, tmp_path / "b" / "c" / "shop", branch="tweak")
    restore(main_run, fresh)
    warm = hookguard(fresh, tmp_path / "h2", "check", "--base", "origin/main")
    assert warm.returncode == 0, warm.stdout + warm.stderr
    counts = stats(warm)
    assert (counts["records_missed"], counts["stored"]) == (1, 1), counts
    assert counts["records_hit"] == len(FILLER) + 8  # every file of the base tree


def test_audit_in_a_fresh_clone_reuses_records_history_and_result(
    upstream: GitRepo, tmp_path: Path
) -> None:
    first = clone(upstream, tmp_path / "one" / "shop", branch="main")
    cold = hookguard(first, tmp_path / "home1", "audit", "--format", "json")
    assert cold.returncode == 1, cold.stderr
    symbols = [f["symbol"] for f in report(cold)["findings"]]  # type: ignore[attr-defined]
    assert symbols == ["readers.csv_reader.CsvReader.load_header"]  # history: across the move
    (finding,) = report(cold)["findings"]  # type: ignore[misc]
    assert finding["evidence"]["subject"] == "Rename load_header to read_header"
    assert stats(cold)["history_missed"] > 0
    fresh = clone(upstream, tmp_path / "two" / "other" / "shop", branch="main")
    restore(first, fresh)
    warm = hookguard(fresh, tmp_path / "home2", "audit", "--format", "json")
    assert report(warm) == report(cold)
    counts = stats(warm)
    assert counts["result"] == "reused", counts  # nothing path- or user-dependent in its key
    assert counts["stats_hit"] == 0  # new inodes and times: every file hashed, none trusted
    # A one-file edit in the fresh clone: records and history answers come from the cache (the
    # stale override's class is re-checked, and asks for its base file's history again).
    csv = fresh / "readers" / "csv_reader.py"
    csv.write_text(csv.read_text().replace("b'a,b'", "b'a,b,c'"))
    edited = hookguard(fresh, tmp_path / "home2", "audit", "--format", "json")
    counts = stats(edited)
    assert (counts["records_missed"], counts["stored"]) == (1, 1), counts
    assert counts["history_hit"] > 0 and counts["history_missed"] == 0, counts
    assert counts["result"] == "not reused"
    scratch = hookguard(fresh, tmp_path / "home2", "audit", "--format", "json", "--no-cache")
    assert report(edited) == report(scratch)


def _flip(file: Path) -> None:
    data = bytearray(file.read_bytes())
    data[-3] ^= 0x55
    file.write_bytes(bytes(data))


def _secret_key() -> bytes:
    return hashlib.sha256(b"hookguard cache key\0" + SECRET.encode()).digest()


def _truncate(file: Path) -> None:
    file.write_bytes(file.read_bytes()[: len(_MAGIC) + 9])


def _wrong_types(file: Path) -> None:
    """A body with a correct size and checksum that is not records: a string, not a list."""
    import msgspec

    body = msgspec.msgpack.encode("__import__('os').system('touch pwned')")
    forge_cache_file(file, body, _secret_key())


def _other_build(file: Path) -> None:
    data = file.read_bytes()
    file.write_bytes(data.replace(b"0.1.0:", b"9.9.9:", 1))


@pytest.mark.parametrize("damage", [_flip, _truncate, _wrong_types, _other_build])
def test_a_damaged_restored_cache_is_ignored_with_one_note(
    upstream: GitRepo, tmp_path: Path, damage: object
) -> None:
    assert callable(damage)
    first = clone(upstream, tmp_path / "one" / "shop")
    filled = hookguard(first, tmp_path / "h1", "check", "--base", "origin/main",
                       "--format", "json")
    fresh = clone(upstream, tmp_path / "two" / "shop")
    restore(first, fresh)
    shards = sorted((fresh / CACHE_DIR_NAME).glob("records-*.msgpack"))
    assert len(shards) > 3
    for shard in shards:
        damage(shard)
    warm = hookguard(fresh, tmp_path / "h2", "check", "--base", "origin/main",
                     "--format", "json")
    assert warm.returncode == 1, warm.stderr
    notes = [n for n in report(warm)["notes"] if "cache" in n]  # type: ignore[attr-defined]
    assert len(notes) == 1 and notes[0].endswith("; rebuilding"), notes
    assert "\n" not in notes[0]
    assert report(warm)["findings"] == report(filled)["findings"]
    counts = stats(warm)
    assert counts["records_hit"] == 0 and counts["stored"] == stats(filled)["stored"], counts
    assert not (fresh / "pwned").exists()
    again = hookguard(fresh, tmp_path / "h2", "check", "--base", "origin/main",
                      "--format", "json")
    assert not [n for n in report(again)["notes"] if "cache" in n]  # type: ignore[attr-defined]
    assert stats(again)["records_missed"] == 0


def test_check_never_reads_the_index_an_audit_left(upstream: GitRepo, tmp_path: Path) -> None:
    """A push audits the whole checkout and leaves an index (stats, history answers, the last
    result); a pull request's ``check`` restores it but has no question for it: it is not even
    read (a damaged one gets no note there), while an audit still reads and doubts it."""
    main_run = clone(upstream, tmp_path / "one" / "shop", branch="main")
    assert hookguard(main_run, tmp_path / "h1", "audit").returncode == 1
    (index,) = (main_run / CACHE_DIR_NAME).glob("index-*.msgpack")
    fresh = clone(upstream, tmp_path / "two" / "shop")
    restore(main_run, fresh)
    _flip(fresh / CACHE_DIR_NAME / index.name)
    checked = hookguard(fresh, tmp_path / "h2", "check", "--base", "origin/main",
                        "--format", "json")
    assert not [n for n in report(checked)["notes"] if "cache" in n]  # type: ignore[attr-defined]
    assert stats(checked)["records_hit"] > 0
    (finding,) = report(checked)["findings"]  # type: ignore[misc]
    assert finding["symbol"] == "plugins.sparse.SparseManager.build_tables"
    audited = hookguard(fresh, tmp_path / "h2", "audit", "--format", "json")
    notes = [n for n in report(audited)["notes"] if "cache" in n]  # type: ignore[attr-defined]
    assert len(notes) == 1 and index.name in notes[0] and "not signed" in notes[0], notes


@pytest.mark.parametrize("secret", [None, "another secret"])
def test_a_cache_restored_without_the_secret_is_never_used(
    upstream: GitRepo, tmp_path: Path, secret: str | None
) -> None:
    """A pull request from a fork gets no secret (``None``): what it restores is rebuilt, and
    the verdict is the cold one."""
    first = clone(upstream, tmp_path / "one" / "shop")
    filled = hookguard(first, tmp_path / "h1", "check", "--base", "origin/main",
                       "--format", "json")
    fresh = clone(upstream, tmp_path / "two" / "shop")
    restore(first, fresh)
    warm = hookguard(fresh, tmp_path / "h2", "check", "--base", "origin/main",
                     "--format", "json", secret=secret)
    assert warm.returncode == 1, warm.stderr
    assert report(warm)["findings"] == report(filled)["findings"]
    assert stats(warm)["records_hit"] == 0
    (note,) = [n for n in report(warm)["notes"] if "cache" in n]  # type: ignore[attr-defined]
    assert "not signed with this machine's cache key" in note


def _forge_sparse_record(cache: Path, key: bytes) -> int:
    """Replace the record of every version of plugins/sparse.py in the cache by the record of a
    class that overrides nothing, under the real file's blob id; sign with ``key``."""
    import msgspec

    from hookguard.model import wire
    from hookguard.model.extract import extract

    forged = extract("plugins/sparse.py", "plugins.sparse", False,
                     b"class SparseManager:\n    pass\n")
    count = 0
    for shard in cache.glob("records-*.msgpack"):
        data = shard.read_bytes()
        start = len(_MAGIC) + 4
        end = start + int.from_bytes(data[len(_MAGIC):start], "big")
        entries = msgspec.msgpack.decode(data[end:])
        for entry in entries:
            if entry[1] == "plugins/sparse.py":
                forged.content_key = entry[0]
                entry[3] = msgspec.msgpack.decode(wire.ENCODER.encode(wire.to_wire(forged)))
                count += 1
        forge_cache_file(shard, msgspec.msgpack.encode(entries), key)
    return count


@pytest.mark.parametrize("command", ["check", "audit"])
def test_a_forged_record_under_a_real_blob_id_cannot_change_the_verdict(
    upstream: GitRepo, tmp_path: Path, command: str
) -> None:
    """The forgery a public blob id makes possible: the record of the broken override's file,
    replaced by one without the override. Signed with the workflow's secret it would be read
    (and hide the error: the first half shows the test can tell); signed with anything a pull
    request can know, it is rebuilt."""
    args = ["check", "--base", "origin/main"] if command == "check" else ["audit"]
    first = clone(upstream, tmp_path / "one" / "shop")
    filled = hookguard(first, tmp_path / "h1", *args, "--format", "json")
    assert filled.returncode == 1 and report(filled)["findings"]

    with_secret = clone(upstream, tmp_path / "two" / "shop")
    restore(first, with_secret)
    assert _forge_sparse_record(with_secret / CACHE_DIR_NAME, _secret_key()) > 0
    for index in (with_secret / CACHE_DIR_NAME).glob("index-*.msgpack"):
        index.unlink()  # (no stored result or state: the records are what is read)
    fooled = hookguard(with_secret, tmp_path / "h2", *args, "--format", "json")
    assert report(fooled)["findings"] != report(filled)["findings"]

    forged = clone(upstream, tmp_path / "three" / "shop")
    restore(first, forged)
    _forge_sparse_record(forged / CACHE_DIR_NAME, hashlib.sha256(b"public data").digest())
    for index in (forged / CACHE_DIR_NAME).glob("index-*.msgpack"):
        index.unlink()
    warm = hookguard(forged, tmp_path / "h3", *args, "--format", "json")
    assert warm.returncode == 1, warm.stderr
    assert report(warm)["findings"] == report(filled)["findings"]
