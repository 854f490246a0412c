"""The persistent record cache: reuse, invalidation, corruption, foreign files, --no-cache."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from hookguard.engine import Options, audit
from hookguard.model.cache import CACHE_DIR_NAME
from tests.conftest import write_tree

STALE = ("from typing_extensions import override\nclass Base: ...\nclass Child(Base):\n"
         "    @override\n    def gone(self): ...\n")


@pytest.fixture(autouse=True)
def private_key_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))


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
def test_corrupt_cache_is_rebuilt_with_a_warning(tmp_path: Path, name: str) -> None:
    root = write_tree(tmp_path / "repo", {"a.py": STALE, "b.py": "class X: ...\n"})
    audit([root])
    files = list((root / CACHE_DIR_NAME).glob(f"{name}-*.pickle"))
    assert files
    for cache_file in files:
        cache_file.write_bytes(cache_file.read_bytes()[:-10] + b"garbage!!!")
    (root / "b.py").write_text("class X:\n    pass\n")  # the records file is read only now
    result = audit([root])
    assert any("corrupt" in note for note in result.notes)
    assert [f.symbol for f in result.findings] == ["a.Child.gone"]
    assert not any("corrupt" in note for note in audit([root]).notes)  # rewritten


@pytest.mark.parametrize("name", ["index", "records"])
def test_planted_cache_is_never_unpickled(tmp_path: Path, name: str) -> None:
    """A cache file committed by a pull request must not run code in the gate."""
    root = write_tree(tmp_path / "repo", {"a.py": STALE})
    audit([root])
    files = list((root / CACHE_DIR_NAME).glob(f"{name}-*.pickle"))
    assert files
    marker = tmp_path / "pwned"

    class Exploit:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            return (marker.write_text, ("ran",))

    payload = pickle.dumps(Exploit())
    for cache_file in files:
        cache_file.write_bytes(b"HOOKGUARD-CACHE-1\n" + b"\0" * 32 + payload)
    (root / "a.py").write_text(STALE + "\n")
    result = audit([root])
    assert not marker.exists()
    assert any("corrupt or was not written by this user" in note for note in result.notes)


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
