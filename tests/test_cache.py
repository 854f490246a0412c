"""The persistent record cache: reuse, invalidation, corruption, planted and unsafe files,
--no-cache (issue 11, cases 1-3)."""

from __future__ import annotations

import hashlib
import hmac
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from hookguard.engine import Options, audit
from hookguard.model.cache import CACHE_DIR_NAME
from hookguard.model.cache_secret import key_file
from tests.conftest import forge_cache_file, write_tree

STALE = ("from typing_extensions import override\nclass Base: ...\nclass Child(Base):\n"
         "    @override\n    def gone(self): ...\n")


pytestmark = pytest.mark.usefixtures("private_key_dir")


def _cache_notes(notes: list[str]) -> list[str]:
    return [n for n in notes if "cache" in n]


def test_second_run_is_served_from_cache(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {"a.py": STALE, "b.py": "class X: ...\n"})
    first = audit([root])
    assert (first.stats.parsed, first.stats.cached) == (2, 0)
    assert (root / CACHE_DIR_NAME / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f")
    second = audit([root])
    assert (second.stats.parsed, second.stats.cached) == (0, 2)
    assert [f.symbol for f in second.findings] == [f.symbol for f in first.findings]
    (root / "b.py").write_text("class X:\n    pass\n")
    third = audit([root])
    assert (third.stats.parsed, third.stats.cached) == (1, 1)


def test_no_cache_neither_reads_nor_writes(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {"a.py": STALE})
    audit([root], Options(use_cache=False))
    assert not (root / CACHE_DIR_NAME).exists()


@pytest.mark.parametrize("name", ["index", "records"])
def test_corrupt_cache_is_rebuilt_with_one_note(tmp_path: Path, name: str) -> None:
    root = write_tree(tmp_path / "repo", {f"m{i}.py": f"class X{i}: ...\n" for i in range(40)})
    (root / "a.py").write_text(STALE)
    audit([root])
    files = list((root / CACHE_DIR_NAME).glob(f"{name}-*.msgpack"))
    assert len(files) > (1 if name == "records" else 0)
    for cache_file in files:
        cache_file.write_bytes(cache_file.read_bytes()[:-10] + b"garbage!!!")
    (root / "m1.py").write_text("class X1:\n    pass\n")  # the records file is read only now
    result = audit([root])
    notes = _cache_notes(result.notes)
    assert len(notes) == 1 and "corrupt" in notes[0] and "rebuilding" in notes[0], notes
    assert [f.symbol for f in result.findings] == ["a.Child.gone"]
    (root / "m1.py").write_text("class X1:\n    pass\n\n")
    assert not _cache_notes(audit([root]).notes)  # rewritten


def _exploit(marker: Path) -> bytes:
    class Exploit:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            return (marker.write_text, ("ran",))

    return pickle.dumps(Exploit())


@pytest.mark.parametrize("name", ["index", "records"])
def test_planted_pickle_never_runs(tmp_path: Path, name: str) -> None:
    """A pickle planted where the cache lives must not run, whatever its header: not even
    signed with the empty key a full disk used to leave behind (issue 11, case 1)."""
    root = write_tree(tmp_path / "repo", {"a.py": STALE})
    audit([root])
    cache = root / CACHE_DIR_NAME
    files = list(cache.glob(f"{name}-*"))
    assert files
    marker = tmp_path / "pwned"
    payload = _exploit(marker)
    key_dir = tmp_path / "xdg" / "hookguard"
    key_dir.mkdir(parents=True, exist_ok=True)
    (key_dir / "cache-key").write_bytes(b"")  # what a full disk left
    signed = hmac.new(b"", payload, hashlib.sha256).digest()
    for cache_file in files:
        stem = cache_file.name.rsplit(".", 1)[0]
        for suffix in (".msgpack", ".pickle"):
            (cache / (stem + suffix)).write_bytes(b"HOOKGUARD-CACHE-1\n" + signed + payload)
    (root / "a.py").write_text(STALE + "\n")
    result = audit([root])
    assert not marker.exists()
    assert [f.symbol for f in result.findings] == ["a.Child.gone"]
    assert len(_cache_notes(result.notes)) == 1
    assert not list(cache.glob("*.pickle"))  # files of the old format are removed


def test_wellformed_file_of_the_wrong_shape_is_rebuilt(tmp_path: Path) -> None:
    """A file with the right header and stamp whose body does not decode into the record types
    is rebuilt: decoding is typed, nothing but records comes out of it."""
    import msgspec

    root = write_tree(tmp_path / "repo", {"a.py": STALE})
    audit([root])
    (index,) = (root / CACHE_DIR_NAME).glob("index-*.msgpack")
    body = msgspec.msgpack.encode({"__reduce__": ["os.system", "touch pwned"]})
    forge_cache_file(index, body, key_file().read_bytes())  # signed with the real key
    result = audit([root])
    assert [f.symbol for f in result.findings] == ["a.Child.gone"]
    (note,) = _cache_notes(result.notes)
    assert "does not decode" in note


def test_unchanged_checkout_reuses_the_whole_result(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {"a.py": STALE, "b.py": "class X: ...\n"})
    first = audit([root])
    assert first.project is not None
    second = audit([root])
    assert second.project is None  # answered from the cache: no records loaded, no rules run
    assert [f.fingerprint for f in second.findings] == [f.fingerprint for f in first.findings]
    # Any input change runs the rules again: a file, the contracts, the options.
    assert audit([root], Options(select=("HG001",))).project is not None
    (root / "b.py").write_text("from typing_extensions import override\nclass Y(X):\n"
                               "    @override\n    def gone(self): ...\nclass X: ...\n")
    third = audit([root])
    assert third.project is not None and len(third.findings) == 2


def test_foreign_version_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_tree(tmp_path / "repo", {"a.py": STALE})
    audit([root])
    import hookguard.model.cache as cache_module

    monkeypatch.setattr(cache_module, "__version__", "9.9.9")
    result = audit([root])
    assert any("cache from hookguard 0.1.0" in note for note in result.notes)
    assert result.stats.parsed == 1


def test_history_answers_are_cached_per_file_content(tmp_path: Path) -> None:
    from tests.conftest import GitRepo

    repo = GitRepo(tmp_path / "repo")
    base = "class Base:\n    def run(self):\n        self.setup()\n\n    def setup(self):\n" \
           "        pass\n"
    child = "from pkg.base import Base\n\nclass Child(Base):\n    def setup(self):\n" \
            "        pass\n"
    repo.commit("base", {"pkg/__init__.py": "", "pkg/base.py": base, "pkg/child.py": child})
    repo.commit("Rename setup to prepare", {"pkg/base.py": base.replace("setup", "prepare")})
    first = audit([repo.root])
    assert first.git_logs >= 1 and [f.evidence["new"] for f in first.findings] == ["prepare"]
    second = audit([repo.root])
    assert second.git_logs == 0
    assert [f.evidence["commit"] for f in second.findings] == [
        f.evidence["commit"] for f in first.findings]
    # An edit elsewhere re-checks nothing here and asks git nothing.
    (repo.root / "pkg/__init__.py").write_text("# edited\n")
    third = audit([repo.root])
    assert third.git_logs == 0 and third.rechecked == 0
    assert [f.symbol for f in third.findings] == [f.symbol for f in first.findings]
    # An edit of the base file re-checks the subclass whose finding points into it, and git is
    # asked again: answers are keyed by the file's content.
    renamed = base.replace("setup", "prepare")
    (repo.root / "pkg/base.py").write_text(renamed + "\n# edited\n")
    fourth = audit([repo.root])
    assert fourth.git_logs >= 1 and fourth.rechecked == 2


# -- issue 11, case 2: the cache never writes outside the checkout ------------------------------
def test_cache_symlink_out_of_the_checkout_is_refused(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {"a.py": STALE})
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / CACHE_DIR_NAME).symlink_to(outside)
    result = audit([root])
    assert [f.symbol for f in result.findings] == ["a.Child.gone"]
    assert list(outside.iterdir()) == []
    (note,) = _cache_notes(result.notes)
    assert "symbolic link" in note and "not used" in note


def test_cache_symlink_to_the_checkout_does_not_overwrite_gitignore(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {"a.py": STALE, ".gitignore": "build/\n"})
    (root / CACHE_DIR_NAME).symlink_to(".")
    before = sorted(p.name for p in root.iterdir())
    audit([root])
    assert (root / ".gitignore").read_text() == "build/\n"
    assert sorted(p.name for p in root.iterdir()) == before


def test_planted_links_inside_the_cache_are_not_followed(tmp_path: Path) -> None:
    """A committed CACHEDIR.TAG or .gitignore link, or an index that is a FIFO, neither
    redirects a write nor hangs the run."""
    root = write_tree(tmp_path / "repo", {"a.py": STALE})
    cache = root / CACHE_DIR_NAME
    cache.mkdir()
    victim = tmp_path / "victim"
    (cache / "CACHEDIR.TAG").symlink_to(victim)
    (cache / ".gitignore").symlink_to(victim)
    audit([root])
    assert not victim.exists()
    (index,) = cache.glob("index-*.msgpack")
    index.unlink()
    os.mkfifo(index)
    code = ("from pathlib import Path; from hookguard.engine import audit; "
            f"print(len(audit([Path({str(root)!r})]).findings))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.strip() == "1", out.stderr


def test_cache_tracked_by_git_is_not_trusted(tmp_path: Path) -> None:
    """A cache folder committed to the checkout could hold false records: never read."""
    from tests.conftest import GitRepo

    repo = GitRepo(tmp_path / "repo")
    repo.commit("code", {"a.py": STALE})
    audit([repo.root])
    repo.git("add", "-f", CACHE_DIR_NAME)
    repo.git("commit", "-q", "-m", "commit the cache")
    result = audit([repo.root])
    (note,) = _cache_notes(result.notes)
    assert "tracked by git" in note
    assert result.stats.parsed == 1 and [f.symbol for f in result.findings] == ["a.Child.gone"]


def test_cache_committed_as_a_submodule_is_not_trusted(tmp_path: Path) -> None:
    """A gitlink at ``.hookguard_cache`` (a submodule holding a cache) is tracked too: the
    index holds the folder's own name, not names under it (issue 24)."""
    from tests.conftest import GitRepo

    repo = GitRepo(tmp_path / "repo")
    repo.commit("code", {"a.py": STALE})
    audit([repo.root])
    inner = GitRepo(repo.root / CACHE_DIR_NAME)  # the cache folder, made a repository
    inner.git("add", "-f", "-A")
    inner.commit("a cache")
    repo.git("add", CACHE_DIR_NAME)  # a gitlink (mode 160000)
    assert repo.git("ls-files", "-s", CACHE_DIR_NAME).startswith("160000 ")
    repo.git("commit", "-q", "-m", "commit the cache as a submodule")
    result = audit([repo.root])
    (note,) = _cache_notes(result.notes)
    assert "tracked by git" in note
    assert result.stats.parsed == 1 and [f.symbol for f in result.findings] == ["a.Child.gone"]


# -- issue 11, case 3: results a changing file cannot poison ------------------------------------
FIXED = STALE.replace("def gone", "def gon_")  # same size; ``@override`` of a missing name


def test_file_changed_between_hash_and_parse_is_not_cached_under_the_old_key(
    tmp_path: Path,
) -> None:
    from hookguard.model.cache import RecordCache
    from hookguard.model.loader import content_keys, load_worktree

    root = write_tree(tmp_path / "repo", {"a.py": STALE})
    cache = RecordCache(root / CACHE_DIR_NAME, "test")
    keys = content_keys(root, ["a.py"], cache)
    (root / "a.py").write_text("class Base: ...\n")  # edited after hashing, before parsing
    records, _ = load_worktree(root, ["a.py"], cache, 2**20, keys=keys)
    assert [c.name for c in records[0].classes] == ["Base"]
    assert records[0].content_key != keys["a.py"]
    cache.save()
    cache = RecordCache(root / CACHE_DIR_NAME, "test")
    assert cache.get((str(keys["a.py"]), "a.py", "a")) is None


def test_file_gone_during_the_run_is_not_cached(tmp_path: Path) -> None:
    from hookguard.model.cache import RecordCache
    from hookguard.model.loader import content_keys, load_worktree

    root = write_tree(tmp_path / "repo", {"a.py": STALE})
    cache = RecordCache(root / CACHE_DIR_NAME, "test")
    keys = content_keys(root, ["a.py"], cache)
    (root / "a.py").unlink()
    records, _ = load_worktree(root, ["a.py"], cache, 2**20, keys=keys)
    assert records[0].error is not None
    cache.save()
    (root / "a.py").write_text(STALE)
    cache = RecordCache(root / CACHE_DIR_NAME, "test")
    assert cache.get((str(keys["a.py"]), "a.py", "a")) is None
    assert [f.symbol for f in audit([root]).findings] == ["a.Child.gone"]


def test_same_size_edit_restored_with_touch_r_is_seen(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {"a.py": STALE})
    old = 1_600_000_000_000_000_000  # an mtime well in the past: not "racy"
    os.utime(root / "a.py", ns=(old, old))
    assert [f.symbol for f in audit([root]).findings] == ["a.Child.gone"]
    assert [f.symbol for f in audit([root]).findings] == ["a.Child.gone"]
    assert len(FIXED) == len(STALE)
    (root / "a.py").write_text(FIXED)
    os.utime(root / "a.py", ns=(old, old))  # ``touch -r``: same size, same mtime
    result = audit([root])
    assert [f.symbol for f in result.findings] == ["a.Child.gon_"]


def test_concurrent_rewrites_leave_no_wrong_answer_behind(tmp_path: Path) -> None:
    """A file rewritten while audits run: once the writer stops, the cached answer is the
    uncached one."""
    import threading

    root = write_tree(tmp_path / "repo", {"a.py": STALE, "b.py": "class X: ...\n"})
    stop = threading.Event()
    contents = [STALE, "class Base: ...\n", FIXED, ""]

    def writer() -> None:
        i = 0
        while not stop.is_set():
            (root / "a.py").write_text(contents[i % len(contents)])
            i += 1

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        for _ in range(12):
            audit([root])
    finally:
        stop.set()
        thread.join()
    for content in contents:
        (root / "a.py").write_text(content)
        cached = audit([root])
        fresh = audit([root], Options(use_cache=False))
        assert [f.symbol for f in cached.findings] == [f.symbol for f in fresh.findings]
        assert [e.message for e in cached.errors] == [e.message for e in fresh.errors]


def test_cache_copied_to_another_checkout_is_reused(tmp_path: Path) -> None:
    """The cache holds only data keyed by content: copied to another clone (other inodes,
    other times, as a CI cache restore does), its records serve without a note."""
    import shutil

    from tests.conftest import GitRepo

    repo = GitRepo(tmp_path / "repo")
    repo.commit("code", {"a.py": STALE, "b.py": "class X: ...\n"})
    first = audit([repo.root])
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo.root), str(clone)], check=True)
    shutil.copytree(repo.root / CACHE_DIR_NAME, clone / CACHE_DIR_NAME)
    result = audit([clone])
    assert (result.stats.parsed, result.stats.cached) == (0, 2)
    assert not _cache_notes(result.notes)
    assert [f.fingerprint for f in result.findings] == [f.fingerprint for f in first.findings]


# -- issue 24, item 2: the secret the cache is signed with ----------------------------------------
def test_the_key_file_is_made_once_private_and_whole(tmp_path: Path) -> None:
    from hookguard.model.cache_secret import cache_key

    root = write_tree(tmp_path / "repo", {"a.py": STALE})
    first = cache_key(root)
    file = key_file()
    assert file.is_relative_to(tmp_path / "xdg") and file.read_bytes() == first
    assert len(first) == 32 and (file.stat().st_mode & 0o077) == 0
    assert cache_key(root) == first
    file.write_bytes(b"")  # what a full disk left: replaced, never used as an empty key
    assert cache_key(root) not in (b"", first) and len(file.read_bytes()) == 32


def test_a_key_inside_the_checkout_is_refused(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """``HOME`` (or ``XDG_CACHE_HOME``) pointed into the checkout: the checkout could carry the
    key, so it signs nothing, and the run is a cold one."""
    root = write_tree(tmp_path / "repo", {"a.py": STALE})
    monkeypatch.setenv("XDG_CACHE_HOME", str(root / "xdg"))
    result = audit([root])
    (note,) = _cache_notes(result.notes)
    assert "inside the checkout" in note
    assert not (root / CACHE_DIR_NAME).exists()
    assert [f.symbol for f in result.findings] == ["a.Child.gone"]


def test_a_passed_secret_signs_instead_of_the_key_file(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_tree(tmp_path / "repo", {"a.py": STALE})
    monkeypatch.setenv("HOOKGUARD_CACHE_KEY", "one")
    audit([root])
    assert not key_file().exists()
    assert audit([root]).project is None  # the same secret: the last result is reused
    monkeypatch.setenv("HOOKGUARD_CACHE_KEY", "two")
    other = audit([root])
    assert other.project is not None and other.stats.parsed == 1  # nothing verified: cold
    assert [f.symbol for f in other.findings] == ["a.Child.gone"]
