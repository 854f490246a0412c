"""Loading a change's two trees: what no cache holds is read and parsed in one pass, each blob
the trees share once, and each tree gets the records it would get alone."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from hookguard.git.repo import Repo
from hookguard.model.loader import PARALLEL_THRESHOLD, load_trees
from tests.conftest import GitRepo


def _files(version: int, count: int) -> dict[str, str]:
    files = {"pkg/__init__.py": "",
             "pkg/base.py": "class Base:\n    def hook(self):\n        pass\n"}
    for n in range(count):
        body = f"    def step{n}(self):\n        return {n if n % 3 else version}\n"
        files[f"pkg/mod{n}.py"] = f"from pkg.base import Base\n\n\nclass C{n}(Base):\n{body}"
    return files


def test_two_trees_load_in_one_pass(git_repo: Callable[..., GitRepo]) -> None:
    count = PARALLEL_THRESHOLD  # enough for the pool: the same answers in worker processes
    repo = git_repo()
    repo.commit("base", _files(1, count))
    repo.commit("head", _files(2, count))
    git = Repo(repo.root)
    trees = [[(e.path, e.blob) for e in git.ls_tree(rev)] for rev in ("HEAD~1", "HEAD")]
    asked: list[str] = []

    def read(shas: Sequence[str]) -> dict[str, bytes]:
        asked.extend(shas)
        return git.read_blobs(shas)

    for workers in (1, 2):
        asked.clear()
        (base, base_stats), (head, head_stats) = load_trees(trees, read, None, 1 << 20, workers)
        alone = [load_trees([tree], git.read_blobs, None, 1 << 20, 1)[0][0] for tree in trees]
        assert base == alone[0] and head == alone[1]
        assert len(asked) == len(set(asked)) == len({sha for tree in trees for _, sha in tree})
        changed = sum(1 for n in range(count) if n % 3 == 0)
        assert (base_stats.parsed, base_stats.cached) == (count + 2, 0)
        assert (head_stats.parsed, head_stats.cached) == (changed, count + 2 - changed)
        shared = {r.path: r for r in base}
        assert all(shared[r.path] is r for r in head if r.content_key
                   == shared[r.path].content_key)  # one record for a shared blob
        assert {r.path for r in head if r.classes and r.classes[0].methods} == {
            f"pkg/mod{n}.py" for n in range(count)} | {"pkg/base.py"}


def test_the_checked_out_head_is_read_in_place_and_only_where_it_is_the_blob(
    git_repo: Callable[..., GitRepo], tmp_path: Path
) -> None:
    count = PARALLEL_THRESHOLD
    repo = git_repo()
    repo.commit("base", _files(1, count))
    repo.commit("head", _files(2, count))
    git = Repo(repo.root)
    trees = [[(e.path, e.blob) for e in git.ls_tree(rev)] for rev in ("HEAD~1", "HEAD")]
    # The work tree strays from the head: an edit not committed, a file turned into a link
    # to one outside, a file gone.
    (repo.root / "pkg/mod0.py").write_text("class Edited:\n    pass\n")
    outside = tmp_path / "outside.py"
    outside.write_text((repo.root / "pkg/mod1.py").read_text())
    (repo.root / "pkg/mod1.py").unlink()
    (repo.root / "pkg/mod1.py").symlink_to(outside)
    (repo.root / "pkg/mod2.py").unlink()
    asked: list[str] = []

    def read(shas: Sequence[str]) -> dict[str, bytes]:
        asked.extend(shas)
        return git.read_blobs(shas)

    expected = load_trees(trees, git.read_blobs, None, 1 << 20, 2)
    for workers in (1, 2):
        asked.clear()
        got = load_trees(trees, read, None, 1 << 20, workers, worktree=(repo.root, 1))
        assert got == expected
        head = {path: sha for path, sha in trees[1]}
        base_only = {sha for path, sha in trees[0] if head.get(path) != sha}
        strays = {head[f"pkg/mod{n}.py"] for n in range(3)}
        assert set(asked) == base_only | strays  # the rest came from the work tree
    assert {c.name for r in got[1][0] if r.path == "pkg/mod0.py" for c in r.classes} == {"C0"}
