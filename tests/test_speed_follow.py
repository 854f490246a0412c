"""The history criterion's timeline follows a file through its renames with plain logs of its
names, one rename source read with ``git log --follow -n1`` at the commit that created the
name (not ``git log --follow`` of the whole history): it must name each file at each commit
exactly as ``git log --follow`` of that file does, through a chain of renames, a side branch
merged across one, and a file re-created under a name, then moved there."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hookguard.git.history import HistoryIndex
from hookguard.git.repo import Repo
from tests.conftest import GitRepo

BODY = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(12))


def _follow(repo: GitRepo, path: str) -> dict[str, str]:
    """What ``git log --follow`` of ``path`` names it at each commit it lists."""
    names: dict[str, str] = {}
    out = repo.git("log", "--follow", "--name-only", "--format=@%H", "--", path)
    for record in out.split("@")[1:]:
        commit, *listed = [line for line in record.splitlines() if line]
        names[commit] = listed[0]
    return names


def _history(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Commits a second apart (git's order is by date): ``a.py`` renamed to ``b.py``, then
    to ``c.py`` while a side branch edited ``b.py`` (merged after the rename), ``x.py``
    removed, re-created plainly, removed again and ``keep.py`` moved there."""
    clock = iter(range(1_700_000_000, 1_700_001_000, 10))
    commits: dict[str, str] = {}

    def commit(message: str, files: dict[str, str] | None = None) -> None:
        stamp = f"@{next(clock)} +0000"
        monkeypatch.setenv("GIT_AUTHOR_DATE", stamp)
        monkeypatch.setenv("GIT_COMMITTER_DATE", stamp)
        commits[message] = repo.commit(message, files)

    commit("one", {"pkg/__init__.py": "", "pkg/a.py": BODY, "pkg/x.py": BODY,
                   "pkg/keep.py": "# keep\n" + BODY, "pkg/other.py": "X = 1\n"})
    commit("edit a", {"pkg/a.py": BODY + "A = 1\n"})
    repo.git("mv", "pkg/a.py", "pkg/b.py")
    commit("a to b", {"pkg/b.py": BODY + "A = 2\n"})
    repo.git("checkout", "-q", "-b", "side")
    commit("side edits b", {"pkg/b.py": "# side\n" + BODY + "A = 2\n"})
    repo.git("checkout", "-q", "main")
    repo.git("mv", "pkg/b.py", "pkg/c.py")
    commit("b to c")
    commit("edit c", {"pkg/c.py": BODY + "A = 2\nC = 3\n"})
    stamp = f"@{next(clock)} +0000"
    monkeypatch.setenv("GIT_AUTHOR_DATE", stamp)
    monkeypatch.setenv("GIT_COMMITTER_DATE", stamp)
    repo.git("merge", "-q", "--no-edit", "side")
    commits["merge side"] = repo.git("rev-parse", "HEAD").strip()
    repo.git("rm", "-q", "pkg/x.py")
    commit("remove x")
    commit("x anew", {"pkg/x.py": "Y = 2\n"})
    repo.git("rm", "-q", "pkg/x.py")
    commit("remove x again")
    repo.git("mv", "pkg/keep.py", "pkg/x.py")
    commit("keep to x")
    commit("edit all", {"pkg/c.py": "# all\n" + BODY + "A = 2\nC = 3\n",
                        "pkg/x.py": "# keep\n" + BODY + "# all\n", "pkg/other.py": "X = 2\n"})
    return commits


def test_the_timeline_names_each_file_as_git_log_follow_does(
    git_repo: Callable[..., GitRepo], monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo = git_repo()
    commits = _history(repo, monkeypatch)
    paths = ["pkg/c.py", "pkg/x.py", "pkg/other.py"]
    followed = {path: _follow(repo, path) for path in paths}
    # the chain and the re-created file, as --follow names them
    assert followed["pkg/c.py"][commits["one"]] == "pkg/a.py"
    assert followed["pkg/c.py"][commits["side edits b"]] == "pkg/b.py"
    assert followed["pkg/x.py"][commits["one"]] == "pkg/keep.py"
    assert commits["x anew"] not in followed["pkg/x.py"]

    index = HistoryIndex(Repo(repo.root))
    timeline = index._timeline(paths, 60, True)
    names = {name for path in paths for name in followed[path].values()}
    assert [commit for commit, _ in timeline] == repo.git(
        "log", "--format=%H", "--", *sorted(names)).split()
    for commit, where in timeline:
        for path in paths:
            if commit in followed[path]:
                assert where.get(path, path) == followed[path][commit], (commit, path)
    assert timeline[-1][1] == {"pkg/c.py": "pkg/a.py", "pkg/x.py": "pkg/keep.py"}
    # the plain timeline: the paths as they are, the same commits as their plain log
    plain = index._timeline(paths, 60, False)
    assert [c for c, _ in plain] == repo.git("log", "--format=%H", "--", *paths).split()
    assert all(not where for _, where in plain)


def test_a_limit_cuts_the_followed_timeline_as_the_plain_log_of_the_names(
    git_repo: Callable[..., GitRepo], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With fewer commits asked than the history holds, the timeline is still the newest of
    the names' log, and each name the one ``--follow`` gives."""
    repo = git_repo()
    _history(repo, monkeypatch)
    followed = _follow(repo, "pkg/c.py")
    index = HistoryIndex(Repo(repo.root))
    for limit in range(1, 9):
        timeline = index._timeline(["pkg/c.py"], limit, True)
        assert len(timeline) == limit
        for commit, where in timeline:
            if commit in followed:
                assert where.get("pkg/c.py", "pkg/c.py") == followed[commit]
