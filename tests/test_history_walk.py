"""The history walk (``HistoryIndex._scan_many``): one ``git log --raw`` of the whole history,
each file followed back through its renames, and each version the commits that modified a
file asked about left read for its ``def`` statements. What it must find: every commit after
which fewer defs of a wanted name stand under a class (removed, renamed, moved to another
class), in the commit and under the path where it happened, on every branch, and nothing
from a different file that once had the same name; not a signature edited or a method moved
within its class."""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from hookguard.git import blobs
from hookguard.git.blobs import DefScan, close_readers, scan_defs
from hookguard.git.history import (
    _LOG_FORMAT,
    _SEPARATOR,
    HistoryIndex,
    _parse_commits,
    _Prefetch,
)
from hookguard.git.repo import BlobReader, GitError, Repo
from hookguard.model.cache import RecordCache
from hookguard.model.loader import PARALLEL_THRESHOLD, load_worktree
from tests.conftest import GitRepo


def _methods(name: str, *methods: str) -> str:
    body = "".join(f"    def {m}(self):\n        return {len(m)}\n\n" for m in methods)
    return f"class {name}:\n{body}"


def _found(repo: GitRepo, wanted: dict[str, set[str]], **settings: int) -> dict[
    str, list[tuple[str, str, str, str]]
]:
    """Each file's removals: (commit subject, old path, new path, name), newest first."""
    index = HistoryIndex(Repo(repo.root))
    removals = index._scan_many(wanted)
    if settings:  # the versions read in other batches, by other numbers of workers
        assert index._walk(wanted, **settings) == index._walk(wanted)
    return {path: [(r.subject, r.old_path, r.new_path, r.name) for r in found]
            for path, found in removals.items()}


def test_removals_on_the_main_line_through_renames(git_repo: Callable[..., GitRepo]) -> None:
    repo = git_repo()
    rest = [f"m{n}" for n in range(12)]  # enough unchanged text for git to see the rename
    repo.commit("root", {"pkg/base.py": _methods("Base", "a", "b", "c", *rest),
                         "pkg/other.py": _methods("Other", "a")})
    repo.commit("drop a", {"pkg/base.py": _methods("Base", "b", "c", *rest)})
    repo.git("mv", "pkg/base.py", "pkg/core.py")
    repo.commit("move base to core")
    repo.git("mv", "pkg/core.py", "pkg/engine.py")
    repo.write({"pkg/engine.py": _methods("Base", "c", *rest)})
    repo.commit("move core to engine, dropping b")
    repo.commit("drop c", {"pkg/engine.py": _methods("Base", *rest),
                           "pkg/other.py": _methods("Other")})
    got = _found(repo, {"pkg/engine.py": {"a", "b", "c", "zzz"}, "pkg/other.py": {"a"}})
    assert got["pkg/engine.py"] == [
        ("drop c", "pkg/engine.py", "pkg/engine.py", "c"),
        ("move core to engine, dropping b", "pkg/core.py", "pkg/engine.py", "b"),
        ("drop a", "pkg/base.py", "pkg/base.py", "a"),
    ]
    assert got["pkg/other.py"] == [("drop c", "pkg/other.py", "pkg/other.py", "a")]


def test_a_path_re_created_after_its_file_moved_away(git_repo: Callable[..., GitRepo]) -> None:
    repo = git_repo()
    repo.commit("root", {"pkg/x.py": _methods("X", "old", "kept")})
    repo.commit("X drops old", {"pkg/x.py": _methods("X", "kept")})
    repo.git("mv", "pkg/x.py", "pkg/y.py")
    repo.commit("move x to y")
    repo.commit("a new x", {"pkg/x.py": _methods("X", "fresh", "other")})
    repo.commit("new X drops fresh", {"pkg/x.py": _methods("X", "other")})
    got = _found(repo, {"pkg/x.py": {"old", "fresh"}, "pkg/y.py": {"old", "fresh"}})
    assert got["pkg/x.py"] == [("new X drops fresh", "pkg/x.py", "pkg/x.py", "fresh")]
    assert got["pkg/y.py"] == [("X drops old", "pkg/x.py", "pkg/x.py", "old")]


def test_an_imported_history_does_not_end_the_main_line(
    git_repo: Callable[..., GitRepo]
) -> None:
    """A root commit merged in later (an imported repository) creates the path on its own
    branch only: the main line's older removals still count."""
    repo = git_repo()
    repo.commit("root", {"pkg/base.py": _methods("Base", "a", "b")})
    repo.commit("drop a", {"pkg/base.py": _methods("Base", "b")})
    repo.git("checkout", "-q", "--orphan", "imported")
    repo.git("rm", "-rq", "--cached", ".")
    repo.commit("imported root", {"pkg/base.py": _methods("Base", "b", "imported")})
    repo.git("checkout", "-q", "-f", "main")
    repo.git("merge", "-q", "--allow-unrelated-histories", "-s", "ours", "--no-edit",
             "imported")
    repo.commit("drop b", {"pkg/base.py": _methods("Base")})
    got = _found(repo, {"pkg/base.py": {"a", "b", "imported"}})
    assert got["pkg/base.py"] == [("drop b", "pkg/base.py", "pkg/base.py", "b"),
                                  ("drop a", "pkg/base.py", "pkg/base.py", "a")]


def test_a_branch_merged_after_a_rename_is_read_under_the_old_name(
    git_repo: Callable[..., GitRepo]
) -> None:
    repo = git_repo()
    repo.commit("root", {"pkg/sets.py": _methods("Set", "reduce", "union", "x1", "x2", "x3")})
    repo.git("checkout", "-q", "-b", "side")
    repo.commit("side drops reduce", {"pkg/sets.py": _methods("Set", "union", "x1", "x2",
                                                              "x3")})
    repo.git("checkout", "-q", "main")
    repo.git("mv", "pkg/sets.py", "pkg/core_sets.py")
    repo.commit("move sets")
    repo.git("merge", "-q", "--no-edit", "side")
    assert "reduce" not in (repo.root / "pkg/core_sets.py").read_text()
    got = _found(repo, {"pkg/core_sets.py": {"reduce", "union"}})
    assert got["pkg/core_sets.py"] == [("side drops reduce", "pkg/sets.py", "pkg/sets.py",
                                        "reduce")]


@pytest.mark.parametrize("settings", [{"per_job": 1, "workers": 1},
                                      {"per_job": 2, "workers": 2},
                                      {"per_job": 1000, "workers": 2}])
def test_odd_paths_and_batching_change_nothing(
    git_repo: Callable[..., GitRepo], settings: dict[str, int]
) -> None:
    """Paths git would read as patterns, quoted in patch headers, or ambiguous there; files
    changed together; the walk's waves, path groups and workers of any size."""
    paths = ["pkg/[x].py", "pkg/x.py", "pkg/t\u00e9 st.py", "pkg/a b/c.py", "pkg/q\"uote.py",
             "pkg/a.py", "pkg/a-b.py", "pkg/a/b.py"]
    repo = git_repo()
    repo.commit("root", {p: _methods("C", "one", "two", "three") for p in paths})
    for n, path in enumerate(paths):
        repo.commit(f"edit {n}", {path: _methods("C", "two", "three", f"new{n}")})
    repo.commit("all at once", {p: _methods("C", "three") for p in paths})
    wanted = {p: {"one", "two"} for p in paths}
    expected = {path: [("all at once", path, path, "two"), (f"edit {n}", path, path, "one")]
                for n, path in enumerate(paths)}
    assert _found(repo, wanted) == expected
    assert _found(repo, wanted, **settings) == expected


def test_a_def_taken_from_its_class_counts_an_edited_one_does_not(
    git_repo: Callable[..., GitRepo]
) -> None:
    """A patch can pair a removed ``def`` line with the same line added to another class
    (the diff sees no change there); counting defs under each class cannot miss the move."""
    same = "    def hook(self):\n        return 1\n\n"
    repo = git_repo()
    repo.commit("root", {"pkg/a.py": f"class A:\n{same}\nclass B:\n    x = 1\n\n",
                         "pkg/b.py": _methods("C", "keep", "edit")})
    repo.commit("move hook from A to B", {"pkg/a.py": f"class A:\n    y = 2\n\nclass B:\n{same}"})
    repo.commit("edit a signature", {"pkg/b.py": _methods("C", "keep").replace(
        "class C:\n", "class C:\n    def edit(self, more):\n        return 4\n\n")})
    repo.commit("reorder", {"pkg/b.py": "class C:\n    def edit(self, more):\n        return 4\n"
                                        "\n    def keep(self):\n        return 4\n"})
    got = _found(repo, {"pkg/a.py": {"hook"}, "pkg/b.py": {"keep", "edit"}})
    assert got["pkg/a.py"] == [("move hook from A to B", "pkg/a.py", "pkg/a.py", "hook")]
    assert got["pkg/b.py"] == []
    index = HistoryIndex(Repo(repo.root))
    only_b = index._scan_many({"pkg/a.py": {"hook"}}, {"pkg/a.py": {"B": {"hook"}}})
    assert only_b["pkg/a.py"] == []  # B never lost it: not a removal for a question on B


def test_patch_settings_of_the_repository_change_nothing(
    git_repo: Callable[..., GitRepo]
) -> None:
    repo = git_repo()
    repo.commit("root", {"pkg/a.py": _methods("A", "one", "two"),
                         "pkg/b.py": _methods("B", "one", "two")})
    repo.git("mv", "pkg/b.py", "pkg/c.py")
    repo.write({"pkg/c.py": _methods("B", "two"), "pkg/a.py": _methods("A", "two")})
    repo.commit("move b, drop one")
    wanted = {"pkg/a.py": {"one"}, "pkg/c.py": {"one"}}
    expected = _found(repo, wanted)
    assert expected["pkg/c.py"] == [("move b, drop one", "pkg/b.py", "pkg/c.py", "one")]
    for setting in (("diff.algorithm", "histogram"), ("diff.renames", "false"),
                    ("diff.noprefix", "true"), ("diff.mnemonicPrefix", "true"),
                    ("core.quotePath", "false")):
        repo.git("config", *setting)
        assert _found(repo, wanted) == expected, setting


def test_git_records_streams_and_reports_failure(git_repo: Callable[..., GitRepo]) -> None:
    repo = git_repo()
    for n in range(3):
        repo.commit(f"c{n}", {"a.py": f"x = {n}\n"})
    records = list(Repo(repo.root).git_records("log", "--format=%x1e%H", separator=b"\x1e"))
    assert [r.strip() for r in records] == repo.git("log", "--format=%H").encode().split()
    with pytest.raises(Exception, match="no-such-revision"):
        list(Repo(repo.root).git_records("log", "no-such-revision", "--", separator=b"\x1e"))
    first = Repo(repo.root).git_records("log", "--format=%x1e%H", separator=b"\x1e")
    assert next(first).strip() == records[0].strip()
    first.close()  # stops the command; nothing left running or raised


_Read = tuple[str, str, bool, list[str]]  # old path, new path, created, removed names


def _parse_by_line(out: bytes, wanted: set[bytes]) -> list[tuple[str, list[_Read]]]:
    """The patch read one line at a time (how the walk was first read): the reference."""
    define = re.compile(rb"^-\s*(?:async\s+)?def\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(")
    header = re.compile(rb'^diff --git (?:a/(.*) b/(.*)|"a/(.*)" "b/(.*)")$')
    commits: list[tuple[str, list[_Read]]] = []
    for chunk in out.split(_SEPARATOR)[1:]:
        head, _, patch = chunk.partition(b"\n")
        if len(head.split(b"\x1f")) < 4:
            continue
        files: list[_Read] = []
        for line in patch.split(b"\n"):
            if line.startswith(b"diff --git"):
                match = header.match(line)
                if match and match.group(1) is not None:
                    files.append((match.group(1).decode(), match.group(2).decode(), False, []))
                elif match:
                    old, new = (codecs.escape_decode(match.group(n))[0].decode()
                                for n in (3, 4))
                    files.append((old, new, False, []))
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
    repo.commit("root", {"pkg/a.py": _methods("A", "a", "b", "c"),
                         "pkg/b.py": _methods("B", "x", "y")})
    repo.commit("edit", {"pkg/a.py": _methods("A", "c"), "pkg/b.py": _methods("B", "y")})
    out = Repo(repo.root).git("log", "-p", "-U0", "-M", "--no-color", _LOG_FORMAT)
    # Lines a reader could get wrong: whitespace of every kind inside the line (not across
    # it), a quoted header, a def that is only text, a header word inside a removed line.
    out += (b"\x1eabc\x1fabc\x1f1\x1fcrafted\n\ndiff --git a/p.py b/p.py\n"
            b"-\t async\t def \x0bspaced\r(self):\n-def\nsplit(self):\n-  # def commented(x):\n"
            b"- diff --git a/q.py b/q.py\n-new file mode\n"
            b'diff --git "a/t\\303\\251.py" "b/t\\303\\251.py"\nnew file mode 100644\n'
            b"-def after_quoted(self):\n\x1eshort\n"
            b"\x1edef\x1fdef\x1f2\x1fno blank line\ndiff --git a/r.py b/r.py\n-def first(x):"
            ).replace(b"\x1e", _SEPARATOR)
    names = {b"a", b"b", b"c", b"x", b"y", b"spaced", b"split", b"commented",
             b"after_quoted", b"first"}
    got = [(c.commit, [(f.old_path, f.new_path, f.created, list(f.removed)) for f in c.files])
           for c in _parse_commits(out, names)]
    assert got == _parse_by_line(out, names)
    assert dict(got)["abc"] == [("p.py", "p.py", False, ["spaced"]),
                                ("t\u00e9.py", "t\u00e9.py", True, ["after_quoted"])]
    assert dict(got)["def"] == [("r.py", "r.py", False, ["first"])]
    assert any(read[3] for _, files in got[:-2] for read in files)  # the history's removals


def test_a_shallow_clone_walks_what_it_has(git_repo: Callable[..., GitRepo],
                                          tmp_path: Path) -> None:
    repo = git_repo()
    repo.commit("root", {"pkg/a.py": _methods("A", "a", "b", "c")})
    repo.commit("drop a", {"pkg/a.py": _methods("A", "b", "c")})
    repo.commit("drop b", {"pkg/a.py": _methods("A", "c")})
    shallow = tmp_path / "shallow"
    GitRepo(tmp_path / "unused").git("clone", "-q", "--depth", "2",
                                     f"file://{repo.root}", str(shallow))
    index = HistoryIndex(Repo(shallow))
    found = index._scan_many({"pkg/a.py": {"a", "b"}})
    assert [(r.subject, r.name) for r in found["pkg/a.py"]] == [("drop b", "b")]
    assert not index.errors


def test_each_blob_streams_skips_the_large_and_names_the_missing(
    git_repo: Callable[..., GitRepo]
) -> None:
    repo = git_repo()
    files = {f"f{n}.py": f"x = {n}\n" * (n % 3 + 1) for n in range(3000)}  # many names
    files["big.py"] = "y = 1\n" * 5000
    repo.commit("many", files)
    git = Repo(repo.root)
    ids = [repo.git("rev-parse", f"HEAD:{name}").strip() for name in ("f0.py", "big.py")]
    names = [f"HEAD:{name}" for name in files] + ids + ["0" * 40]
    got = list(git.each_blob(names, max_size=1000))
    assert [name for name, _, _ in got] == names
    assert got[0][1] == b"x = 0\n" and got[1][1] == b"x = 1\n" * 2
    assert got[3000] == ("HEAD:big.py", None, 30000)  # read past, not kept
    assert got[-3][1] == b"x = 0\n" and got[-2][1] is None and got[-1] == ("0" * 40, None, -1)
    assert all(data == files[name[5:]].encode() for name, data, _ in got[:3000])


def test_one_blob_reader_serves_many_reads_and_a_stopped_one_is_not_reused(
    git_repo: Callable[..., GitRepo]
) -> None:
    repo = git_repo()
    repo.commit("root", {"a.py": "a = 1\n", "b.py": "b = 2\n" * 2000})
    ids = [repo.git("rev-parse", f"HEAD:{name}").strip() for name in ("a.py", "b.py")]
    reader = BlobReader(repo.root)
    try:
        first = list(reader.read(ids, max_size=100))
        second = list(reader.read([ids[1], "0" * 40, ids[0]], max_size=1 << 20))
        assert [data for _, data, _ in first] == [b"a = 1\n", None]
        assert [data for _, data, _ in second] == [b"b = 2\n" * 2000, None, b"a = 1\n"]
        assert reader.proc.poll() is None  # one git process served both
        stopped = reader.read(ids, max_size=1 << 20)
        next(stopped)
        stopped.close()  # the rest of git's answer is never read: out of step from here
        assert reader.broken
        with pytest.raises(GitError):
            list(reader.read(ids, max_size=1 << 20))
    finally:
        reader.close()
    assert reader.proc.poll() is not None


def test_scan_defs_keeps_one_reader_per_process_and_ends_it(
    git_repo: Callable[..., GitRepo]
) -> None:
    repo = git_repo()
    repo.commit("root", {"a.py": _methods("A", "one", "two")})
    blob = repo.git("rev-parse", "HEAD:a.py").strip()
    job = DefScan(str(repo.root), ((blob, 0),), (frozenset({b"one"}),), 1 << 20)
    try:
        assert scan_defs(job) == [(blob, {b"one": {b"A": 1}})]
        reader = blobs._READERS[str(repo.root)]
        assert scan_defs(job) == [(blob, {b"one": {b"A": 1}})]
        assert blobs._READERS[str(repo.root)] is reader  # kept for the next job
    finally:
        close_readers()
    assert str(repo.root) not in blobs._READERS and reader.proc.poll() is not None


def test_a_prefetched_walk_answers_alike_and_an_unused_one_is_stopped(
    git_repo: Callable[..., GitRepo], tmp_path: Path
) -> None:
    repo = git_repo()
    repo.commit("root", {"pkg/a.py": _methods("A", "one", "two")})
    repo.commit("drop one", {"pkg/a.py": _methods("A", "two")})
    plain = HistoryIndex(Repo(repo.root))._scan_many({"pkg/a.py": {"one", "two"}})
    index = HistoryIndex(Repo(repo.root))
    index.prefetch()
    assert index._prefetched is not None
    try:
        found = index._scan_many({"pkg/a.py": {"one", "two"}})
        assert index._prefetched is None  # taken by the walk
    finally:
        index.close()
    assert [(r.commit, r.name) for r in found["pkg/a.py"]] == [
        (r.commit, r.name) for r in plain["pkg/a.py"]] != []

    unused = HistoryIndex(Repo(repo.root))
    unused.prefetch()
    assert unused._prefetched is not None
    reading = unused._prefetched.thread
    unused.close()  # nothing asked: git is stopped, the thread ends
    assert not reading.is_alive() and unused._workers is None

    failing = _Prefetch(Repo(repo.root), ("log", "--no-such-option"))
    with pytest.raises(GitError):  # said, not waited for
        list(failing.records())

    store = RecordCache(tmp_path / "cache", "digest")
    store.put_history("lost:another HEAD:pkg/a.py", b"\x80")  # (an empty answer)
    stale = HistoryIndex(Repo(repo.root), store)
    stale.prefetch()  # answers of another HEAD answer nothing here: walk
    assert stale._prefetched is not None
    stale.close()
    store.put_history(f"lost:{Repo(repo.root).history_state()}:pkg/a.py", b"\x80")
    warm = HistoryIndex(Repo(repo.root), store)
    warm.prefetch()  # answers are stored: a warm run may need no walk at all
    assert warm._prefetched is None and warm._workers is None


def test_the_checkout_is_parsed_in_the_prefetched_walks_processes(
    git_repo: Callable[..., GitRepo]
) -> None:
    """A cold audit starts the walk before parsing, and parses in the walk's processes:
    the same records as a parse in this process, and the walk still answers after."""
    files = {f"pkg/m{n}.py": _methods(f"C{n}", "one", "two") for n in range(PARALLEL_THRESHOLD)}
    files["pkg/broken.py"] = "def broken(:\n"
    repo = git_repo()
    repo.commit("root", files)
    repo.commit("drop one", {"pkg/m0.py": _methods("C0", "two")})
    paths = sorted(files)
    alone, _ = load_worktree(repo.root, paths, None, 1 << 20, workers=1)

    index = HistoryIndex(Repo(repo.root))
    try:
        pool = index.prefetch(2)
        assert pool is not None and index._prefetched is not None
        parsed, stats = load_worktree(repo.root, paths, None, 1 << 20, workers=2, pool=pool)
        assert index._prefetched is not None  # the walk's output waits, unread
        found = index._scan_many({"pkg/m0.py": {"one"}})
    finally:
        index.close()
    assert stats.parsed == len(paths) and parsed == alone
    assert [r.error for r in parsed if r.error] == [r.error for r in alone if r.error] != []
    assert [r.name for r in found["pkg/m0.py"]] == ["one"]

    one_core = HistoryIndex(Repo(repo.root))
    try:
        assert one_core.prefetch(1) is None  # no processes: the parse stays in this one
        assert one_core._prefetched is not None
    finally:
        one_core.close()


def test_versions_over_the_size_limit_are_said_and_give_no_evidence(
    git_repo: Callable[..., GitRepo]
) -> None:
    repo = git_repo()
    padding = "\n".join(f"# {n}" for n in range(400)) + "\n"
    repo.commit("root", {"pkg/a.py": _methods("A", "one", "two") + padding,
                         "pkg/b.py": _methods("B", "one", "two")})
    repo.commit("drop one", {"pkg/a.py": _methods("A", "two") + padding,
                             "pkg/b.py": _methods("B", "two")})
    index = HistoryIndex(Repo(repo.root), max_size=2000)
    found = index._scan_many({"pkg/a.py": {"one"}, "pkg/b.py": {"one"}})
    assert found["pkg/a.py"] == [] and [r.name for r in found["pkg/b.py"]] == ["one"]
    assert index.errors == [next(e for e in index.errors if e.startswith(
        "pkg/a.py: history skips versions over max-file-size"))]
