"""The patch walk writes a commit's patch a few paths at a time (``HistoryIndex._log_patches``):
joined again it must be the same bytes as one ``git log -p -U0 -M -- <paths>``, whatever the
commits did to the paths (renames, type changes, a file turned directory, files of several
path groups in one commit) and whatever the user's diff settings."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from hookguard.git.history import _LOG_FORMAT, HistoryIndex, _parse_commits
from hookguard.git.repo import Repo
from tests.conftest import GitRepo

# Paths whose sorted order and git's tree order could disagree if either were got wrong.
ORDERED = ["pkg/a-b.py", "pkg/a.b/c.py", "pkg/a.py", "pkg/a/b.py", "pkg/a0.py", "pkg/z.py"]


class _Recording(Repo):
    """A real repository that notes the git subcommands it runs."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.commands: list[str] = []

    def git(self, *args: str, input_: bytes | None = None) -> bytes:
        self.commands.append(args[0])
        return super().git(*args, input_=input_)


def _methods(name: str, *methods: str) -> str:
    body = "".join(f"    def {m}(self):\n        return {len(m)}\n\n" for m in methods)
    return f"class {name}:\n{body}"


def _history(repo: GitRepo) -> None:
    repo.commit("root", {path: _methods("C" + str(n), "a", "b") for n, path in
                         enumerate(ORDERED)})
    repo.commit("every path at once", {path: _methods("C" + str(n), "a", "c") for n, path in
                                       enumerate(ORDERED)})
    repo.git("mv", "pkg/z.py", "pkg/y.py")
    repo.commit("rename z to y, inside the paths")
    (repo.root / "pkg/a0.py").unlink()
    repo.commit("a0 moves out of the paths", {"other/a0.py": _methods("C4", "a", "c")})
    (repo.root / "pkg/a.py").unlink()
    repo.commit("a.py becomes a directory", {"pkg/a.py/inner.py": _methods("In", "x")})
    repo.commit("change under the directory", {"pkg/a.py/inner.py": _methods("In", "y")})
    repo.git("checkout", "-q", "-b", "side")
    repo.commit("side edit", {"pkg/a-b.py": _methods("C0", "side")})
    repo.git("checkout", "-q", "main")
    repo.commit("main edit", {"pkg/a/b.py": _methods("C3", "main"),
                              "pkg/a.b/c.py": _methods("C1", "main")})
    repo.git("merge", "-q", "--no-edit", "side")
    (repo.root / "pkg/y.py").unlink()
    os.symlink("a-b.py", repo.root / "pkg/y.py")
    repo.commit("y becomes a link")
    repo.commit("a deletion and an unrelated addition",
                {"pkg/new.py": _methods("New", "n")})
    (repo.root / "pkg/new.py").unlink()
    repo.commit("drop new.py", {"pkg/a-b.py": _methods("C0", "last")})


def _single(repo: Repo, paths: Sequence[str]) -> bytes:
    return repo.git("log", "-p", "-U0", "-M", "--no-color", "--no-ext-diff", _LOG_FORMAT,
                    "--", *paths)


PATHS = [*ORDERED, "pkg/y.py", "pkg/new.py"]


@pytest.mark.parametrize("settings", [(), ("diff.algorithm", "histogram"),
                                      ("diff.renames", "false")])
def test_patches_by_path_group_join_to_the_single_log(
    git_repo: Callable[..., GitRepo], settings: tuple[str, ...]
) -> None:
    repo = git_repo()
    _history(repo)
    if settings:
        repo.git("config", *settings)
    index = HistoryIndex(Repo(repo.root))
    whole = _single(index.repo, PATHS)
    assert b"rename from pkg/z.py" in whole and b"new file mode 120000" in whole
    assert b"pkg/a.py/inner.py" in whole and whole.count(b"\x1e") == 12
    for chunk_size in (1, 3, 1000):
        for group_size in (1, 2, 100):
            for workers in (1, 2):
                got = index._log_patches(PATHS, chunk_size=chunk_size, workers=workers,
                                         group_size=group_size)
                assert got == whole, (chunk_size, group_size, workers)


def test_only_odd_commits_are_written_with_every_path(git_repo: Callable[..., GitRepo]) -> None:
    repo = git_repo()
    _history(repo)
    recording = _Recording(repo.root)
    index = HistoryIndex(recording)
    recording.commands.clear()
    index._log_patches(PATHS, chunk_size=1000, workers=1, group_size=1)
    # One raw listing, then one patch process per path changed in a plain way, and one for
    # the commits that renamed, retyped or reshaped a path (with the whole pathspec).
    assert recording.commands.count("diff-tree") == 1
    assert recording.commands.count("log") == 1 + len(ORDERED) + 1


def test_a_path_git_would_read_as_a_pattern_takes_the_single_log(
    git_repo: Callable[..., GitRepo]
) -> None:
    repo = git_repo()
    repo.commit("one", {"pkg/[x].py": _methods("A", "a"), "pkg/x.py": _methods("B", "a")})
    repo.commit("two", {"pkg/[x].py": _methods("A", "b"), "pkg/x.py": _methods("B", "b")})
    recording = _Recording(repo.root)
    index = HistoryIndex(recording)
    paths = ["pkg/[x].py"]
    whole = _single(recording, paths)
    assert b"pkg/x.py" in whole  # git read the brackets as a pattern
    recording.commands.clear()
    assert index._log_patches(paths, chunk_size=1, workers=2) == whole
    assert recording.commands == ["log"]


_Read = tuple[str, str, bool, list[str]]  # old path, new path, created, removed names


def _parse_by_line(out: bytes, wanted: set[bytes]) -> list[tuple[str, list[_Read]]]:
    """The patch read one line at a time (how the walk was first read): the reference."""
    define = re.compile(rb"^-\s*(?:async\s+)?def\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(")
    header = re.compile(rb"^diff --git a/(.*) b/(.*)$")
    commits: list[tuple[str, list[_Read]]] = []
    for chunk in out.split(b"\x1e")[1:]:
        head, _, patch = chunk.partition(b"\n")
        if len(head.split(b"\x1f")) < 4:
            continue
        files: list[_Read] = []
        for line in patch.split(b"\n"):
            if line.startswith(b"diff --git"):
                match = header.match(line)
                if match:
                    files.append((match.group(1).decode(), match.group(2).decode(), False, []))
            elif line.startswith(b"new file mode") and files:
                files[-1] = (files[-1][0], files[-1][1], True, files[-1][3])
            elif (found := define.match(line)) and files:
                name = found.group(1).decode()
                if found.group(1) in wanted and name not in files[-1][3]:
                    files[-1][3].append(name)
        commits.append((head.split(b"\x1f")[0].decode(), files))
    return commits


def test_patch_reading_agrees_with_reading_line_by_line(
    git_repo: Callable[..., GitRepo]
) -> None:
    repo = git_repo()
    _history(repo)
    out = _single(Repo(repo.root), PATHS)
    # Lines a reader could get wrong: whitespace of every kind inside the line (not across
    # it), a quoted header, a def that is only text, a header word inside a removed line.
    out += (b"\x1eabc\x1fabc\x1f1\x1fcrafted\n\ndiff --git a/p.py b/p.py\n"
            b"-\t async\t def \x0bspaced\r(self):\n-def\nsplit(self):\n-  # def commented(x):\n"
            b"- diff --git a/q.py b/q.py\n-new file mode\n"
            b'diff --git "a/t\\303\\251.py" "b/t\\303\\251.py"\nnew file mode 100644\n'
            b"-def after_quoted(self):\n\x1eshort\n"
            b"\x1edef\x1fdef\x1f2\x1fno blank line\ndiff --git a/r.py b/r.py\n-def first(x):")
    names = {b"a", b"b", b"c", b"x", b"y", b"main", b"side", b"last", b"n", b"spaced",
             b"split", b"commented", b"after_quoted", b"first"}
    got = [(c.commit, [(f.old_path, f.new_path, f.created, list(f.removed)) for f in c.files])
           for c in _parse_commits(out, names)]
    assert got == _parse_by_line(out, names)
    assert dict(got)["abc"] == [("p.py", "p.py", True, ["spaced", "after_quoted"])]
    assert dict(got)["def"] == [("r.py", "r.py", False, ["first"])]
    assert any(read[3] for _, files in got[:-2] for read in files)  # the history's removals


def test_pathspec_settings_in_the_environment_take_the_single_log(
    git_repo: Callable[..., GitRepo], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = git_repo()
    _history(repo)
    recording = _Recording(repo.root)
    index = HistoryIndex(recording)
    recording.commands.clear()
    monkeypatch.setenv("GIT_ICASE_PATHSPECS", "1")  # git would match PKG/Z.PY to pkg/z.py
    assert index._log_patches(PATHS, chunk_size=1, workers=2) == _single(recording, PATHS)
    assert recording.commands == ["log", "log"]
    monkeypatch.delenv("GIT_ICASE_PATHSPECS")
    recording.commands.clear()
    index._log_patches(PATHS, chunk_size=1000, workers=1)
    assert "diff-tree" in recording.commands
