"""Loading a change's two trees: what no cache holds is read and parsed in one pass, each blob
the trees share once, and each tree gets the records it would get alone."""

from __future__ import annotations

from collections.abc import Callable, Sequence

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
