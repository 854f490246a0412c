"""History evidence made cheaper must answer exactly as before: the split ``git log`` walk, the
outline that rules old versions out before full extraction, and the batch of old versions."""

from __future__ import annotations

import ast
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from hookguard.git.blobs import PARALLEL_THRESHOLD, BlobJob, classes_of, def_pairs
from hookguard.git.history import HistoryIndex, _Workers
from hookguard.git.repo import Repo
from hookguard.model.extract import extract
from tests.conftest import GitRepo

BASE = """
class Base:
    def run(self):
        self.setup()
        self.step()

    def setup(self):
        pass

    def step(self):
        pass

    def close(self):
        pass


class Other:
    def setup(self):
        pass
"""


def _history(repo: GitRepo) -> None:
    """Removals, a rename of the base's file, a side branch merged back, a Python 2 file in
    the history, and a copy of a file: what the walk and the outline must agree on."""
    repo.commit("base", {"pkg/__init__.py": "", "pkg/base.py": BASE,
                         "pkg/old.py": "print 'python 2'\nclass Base:\n    def close(self):\n"
                                       "        pass\n"})
    repo.commit("Other loses setup", {"pkg/base.py": BASE.replace(
        "class Other:\n    def setup(self):\n        pass\n", "class Other:\n    pass\n")})
    repo.git("mv", "pkg/base.py", "pkg/core.py")
    repo.commit("Move base.py to core.py")
    repo.git("checkout", "-q", "-b", "side")
    core = (repo.root / "pkg/core.py").read_text()
    repo.commit("Side: drop close", {"pkg/core.py": core.replace(
        "    def close(self):\n        pass\n", "")})
    repo.git("checkout", "-q", "main")
    repo.commit("Main: rename step to advance", {"pkg/core.py": core.replace(
        "step", "advance"), "pkg/old.py": "print 'still python 2'\n"})
    repo.git("merge", "-q", "--no-edit", "side")
    repo.commit("Copy core.py", {"pkg/copy.py": (repo.root / "pkg/core.py").read_text()})


def test_the_walk_finds_what_a_walk_per_file_finds(git_repo: Callable[..., GitRepo]) -> None:
    """Against ``git log --follow -p`` of each file alone (the fallback), on a history with a
    rename, a side branch merged back and a Python 2 file; a copy is its own file. (No
    signature is edited and no method moved here: there the readings differ by design, see
    tests/test_history_walk.py.)"""
    repo = git_repo()
    _history(repo)
    index = HistoryIndex(Repo(repo.root))
    names = {"setup", "step", "close", "advance", "never"}
    paths = ["pkg/core.py", "pkg/old.py", "pkg/copy.py"]
    together = index._scan_many({path: names for path in paths})
    for path in paths[:2]:
        alone = index._scan(path, names)
        assert sorted(together[path], key=repr) == sorted(alone, key=repr), path
    assert {r.name for r in together["pkg/core.py"]} == {"setup", "step", "close"}
    assert together["pkg/copy.py"] == []  # created by a copy: core.py's past is not its own
    assert index._scan_many({"no/such/file.py": names}) == {"no/such/file.py": []}


SOURCES = {
    "compound": """
        import typing
        from typing import overload

        class A:
            if typing.TYPE_CHECKING:
                def typed(self): ...
            try:
                def tried(self): ...
            except ImportError:
                def handled(self): ...
            with open("x") as f:
                def within(self): ...
            for _ in ():
                def looped(self): ...
            @overload
            def over(self, x: int) -> int: ...
            def over(self, x): ...
            def outer(self):
                def inner(): ...
                class Local:
                    def local_method(self): ...
            class Nested:
                async def nested(self): ...

        def function():
            class InFunction:
                def method(self): ...

        if typing.TYPE_CHECKING:
            class OnlyTyped:
                def typed_only(self): ...
    """,
    "match": """
        class M:
            match 1:
                case 1:
                    def matched(self): ...
    """,
}


def test_outline_holds_every_method_extraction_sees() -> None:
    for name, source in SOURCES.items():
        text = textwrap.dedent(source)
        pairs = def_pairs(ast.parse(text))
        record = extract(f"{name}.py", name, False, text.encode())
        methods = {(c.name, m) for c in record.classes for m in c.methods}
        assert methods <= pairs, name
    assert ("M", "matched") in def_pairs(ast.parse(textwrap.dedent(SOURCES["match"])))
    pairs = def_pairs(ast.parse(textwrap.dedent(SOURCES["compound"])))
    assert ("A", "tried") in pairs and ("InFunction", "method") in pairs
    assert ("A", "inner") not in pairs and ("Local", "local_method") in pairs
    assert ("A", "within") in pairs and ("Nested", "nested") in pairs
    assert not any(method == "function" for _, method in pairs)


def test_outline_only_rules_out() -> None:
    data = textwrap.dedent(SOURCES["compound"]).encode()
    full = classes_of(BlobJob("x.py", "x", False, data))
    assert full is not None and "tried" in full["A"].methods
    assert classes_of(BlobJob("x.py", "x", False, data, frozenset({("A", "gone")}))) is None
    assert classes_of(BlobJob("x.py", "x", False, data,
                              frozenset({("Other", "tried")}))) is None
    # One probe present: the full classes, the same as without probes.
    assert classes_of(BlobJob("x.py", "x", False, data,
                              frozenset({("A", "gone"), ("A", "tried")}))) == full
    # The outline is a superset: a def it sees but extraction drops still parses fully.
    assert "within" not in full["A"].methods
    assert classes_of(BlobJob("x.py", "x", False, data, frozenset({("A", "within")}))) == full
    # The text scan pairs a def nested in a method with the class too (a superset), so such
    # a probe is settled by extraction, which answers the same: not a method of A.
    inner = classes_of(BlobJob("x.py", "x", False, data, frozenset({("A", "inner")})))
    assert inner == full and "inner" not in full["A"].methods
    # Where the scan gives up (a form feed), the ast outline still rules it out.
    fed = data + b"\x0c\n"
    assert classes_of(BlobJob("x.py", "x", False, fed, frozenset({("A", "inner")}))) is None
    # What ``ast`` cannot parse goes to extraction, which decides (here: no classes).
    python2 = b"print 'x'\nclass A:\n    def gone(self):\n        pass\n"
    assert classes_of(BlobJob("p.py", "p", False, python2, frozenset({("A", "gone")}))) == {}


def _reference(repo: Repo, path: str, wanted: dict[str, set[str]], module: str,
               index: HistoryIndex) -> dict[tuple[str, str], tuple[str, str | None]]:
    """What a class lost, by full extraction of every old version (no outline, no batch)."""
    found: dict[tuple[str, str], tuple[str, str | None]] = {}
    for removal in index._scan(path, set().union(*wanted.values())):
        blobs = repo.read_blobs([f"{removal.commit}^:{removal.old_path}",
                                 f"{removal.commit}:{removal.new_path}"])
        before, after = (
            {c.qualname: c for c in extract(s, module, False, blobs[s]).classes}
            if s in blobs else {}
            for s in (f"{removal.commit}^:{removal.old_path}",
                      f"{removal.commit}:{removal.new_path}")
        )
        for qualname, names in wanted.items():
            key = (qualname, removal.name)
            if removal.name not in names or key in found:
                continue
            old, new = before.get(qualname), after.get(qualname)
            if old and new and removal.name in old.methods and removal.name not in new.methods:
                found[key] = (removal.commit, None)
    return found


def test_batch_answers_as_full_extraction(git_repo: Callable[..., GitRepo]) -> None:
    repo = git_repo()
    _history(repo)
    index = HistoryIndex(Repo(repo.root))
    wanted = {"pkg/core.py": {"Base": {"setup", "step", "close", "never"},
                              "Other": {"setup"}},
              "pkg/old.py": {"Base": {"close"}}}
    requests = [(path, names, path[:-3].replace("/", "."), False, "")
                for path, names in wanted.items()]
    answers = index.lost_methods_many(requests)
    for path, names in wanted.items():
        expected = _reference(index.repo, path, names, path[:-3].replace("/", "."), index)
        got = {key: (change.commit, None) for key, change in answers[path].items()}
        assert got == expected, path
    core = answers["pkg/core.py"]
    assert core[("Base", "step")].new == "advance"
    assert core[("Other", "setup")].subject == "Other loses setup"
    assert ("Base", "never") not in core
    assert index.blobs_parsed > 0


def test_copy_answers_nothing_and_single_file_path_agrees(
    git_repo: Callable[..., GitRepo]
) -> None:
    repo = git_repo()
    _history(repo)
    index = HistoryIndex(Repo(repo.root))
    wanted = {"Base": {"setup", "step", "close"}, "Other": {"setup"}}
    batch = index.lost_methods_many([("pkg/core.py", wanted, "pkg.core", False, "")])
    alone = HistoryIndex(Repo(repo.root)).lost_methods("pkg/core.py", wanted, "pkg.core", False)
    assert batch["pkg/core.py"] == alone
    assert Path(repo.root / "pkg/copy.py").exists()


def test_worker_processes_answer_as_this_process() -> None:
    data = textwrap.dedent(SOURCES["compound"]).encode()
    python2 = b"print 'x'\nclass A:\n    def tried(self):\n        pass\n"
    jobs = [BlobJob(f"v{i}.py", "x", False, data if i % 3 else python2,
                    frozenset({("A", "tried" if i % 2 else "gone")}))
            for i in range(2 * PARALLEL_THRESHOLD)]
    here = [classes_of(job) for job in jobs]
    workers = _Workers(2)
    try:
        assert workers.map(classes_of, jobs) == here
        assert workers.pool is not None  # (really in worker processes)
        assert workers.map(classes_of, jobs[:3]) == here[:3]  # a few: in this process
    finally:
        workers.close()
    assert any(result is None for result in here) and any(result for result in here)


def test_past_classes_cut_out_each_class_and_agree_with_whole_file_parses(
    git_repo: Callable[..., GitRepo],
) -> None:
    """Each version's class, cut out of the file and parsed alone, is the class a parse of
    the whole version gives; versions come newest first; a class cut short by a line at
    column 0 inside it (a string's continuation) is read from the whole file instead."""
    repo = git_repo()
    header = "import os\n\n\n"
    repo.commit("one", {"pkg/a.py": header + BASE})
    repo.commit("two", {"pkg/a.py": header + BASE.replace("def step(self):",
                                                          "def step(self, n):")})
    odd = header + BASE.replace(
        "    def close(self):\n        pass\n",
        '    def close(self):\n        return """\nat column 0\n"""\n')
    repo.commit("three", {"pkg/a.py": odd, "pkg/b.py": "class Base:\n    pass\n"})
    history = HistoryIndex(Repo(repo.root))
    versions = list(history.past_classes({"pkg/a.py": {"Base", "Other"}}, limit=10))
    assert len(versions) == 3
    steps = [[p.name for p in v["pkg/a.py"]["Base"].methods["step"].params] for v in versions]
    assert steps == [["self"], ["self", "n"], ["self"]]
    assert "close" in versions[0]["pkg/a.py"]["Base"].methods  # read from the whole file
    for version, text in zip(versions, [odd, None, header + BASE], strict=True):
        if text is None:
            continue
        whole = classes_of(BlobJob("a.py", "", False, text.encode()))
        assert whole is not None
        for name in ("Base", "Other"):
            assert version["pkg/a.py"][name].methods.keys() == whole[name].methods.keys()
    newest = next(iter(history.past_classes({"pkg/a.py": {"Base"}}, limit=1)))
    assert newest["pkg/a.py"].keys() == {"Base"}
    assert list(history.past_classes({"no/such.py": {"Base"}})) == []


@pytest.mark.skipif(sys.version_info >= (3, 12),
                    reason="`type X = ...` parses natively from Python 3.12: nothing to repair")
def test_past_classes_repair_newer_grammar_only_in_versions_recent_enough_to_hold_it(
    git_repo: Callable[..., GitRepo], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A version read whole (its class head twice at column 0: no cut) that this Python
    cannot parse is repaired as newer Python only where its commit is recent enough to use
    any (``newer_grammar_possible``, as the HG001 history reads): a 2015 version stays
    unreadable, a version of today is read."""
    source = ("type Alias = int\n\n\nclass Base:\n    def step(self):\n        pass\n\n\n"
              "class Base:\n    def step(self, n):\n        pass\n")
    repo = git_repo()
    monkeypatch.setenv("GIT_AUTHOR_DATE", "@1420070400 +0000")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "@1420070400 +0000")
    repo.commit("in 2015", {"pkg/old.py": source})
    monkeypatch.delenv("GIT_AUTHOR_DATE")
    monkeypatch.delenv("GIT_COMMITTER_DATE")
    repo.commit("today", {"pkg/new.py": source})
    history = HistoryIndex(Repo(repo.root))
    for path, expected in (("pkg/old.py", set()), ("pkg/new.py", {"Base"})):
        (version,) = history.past_classes({path: {"Base"}}, limit=10, naming="step")
        assert set(version[path]) == expected


def test_a_class_cut_to_the_methods_naming_a_hook_reads_as_the_whole_class_does() -> None:
    """``methods_naming`` keeps the class head and the blocks that name the word (with their
    decorators); what it keeps parses to the same methods, calls and parameters."""
    from hookguard.git.blobs import class_segment, methods_naming

    text = textwrap.dedent('''
        class Printer(Base):
            """Prints."""

            order = None

            @staticmethod
            def _print_Add(expr, order=None):
                return str(expr)

            def _print_RootOf(self, expr):
                return self._print_Add(expr.expr,
                                       order="lex")

            def _print_Mul(self, expr):
                return "*"
    ''').encode()
    segment = class_segment(text, "Printer")
    assert segment is not None
    reduced = methods_naming(segment, "_print_Add")
    assert reduced is not None and b"_print_Mul" not in reduced and b"order = None" not in reduced
    whole = classes_of(BlobJob("a.py", "", False, text))
    cut = classes_of(BlobJob("a.py", "", False, reduced))
    assert whole is not None and cut is not None
    assert cut["Printer"].methods.keys() == {"_print_Add", "_print_RootOf"}
    for name in cut["Printer"].methods:
        assert cut["Printer"].methods[name].params == whole["Printer"].methods[name].params
        assert [c._replace(line=0) for c in cut["Printer"].methods[name].calls] == [
            c._replace(line=0) for c in whole["Printer"].methods[name].calls]  # (lines move)
        assert cut["Printer"].methods[name].kind == whole["Printer"].methods[name].kind
    assert methods_naming(b"class Empty:\n    x = 1\n", "x") is None  # no method: no body known


def test_a_file_followed_through_renames_only_where_one_was_moved_there(
        git_repo: Callable[..., GitRepo]) -> None:
    """``past_classes(follow=True)`` follows with ``git log --follow`` only the files some
    commit moved into place; for the rest the plain log is the same list, and the timeline
    must name each file at each commit exactly as ``--follow`` of every file does."""
    repo = git_repo()
    repo.commit("one", {"pkg/__init__.py": "", "pkg/stay.py": BASE, "pkg/gone.py": BASE,
                        "pkg/old.py": BASE})
    repo.commit("two", {"pkg/stay.py": BASE + "\n# two\n", "pkg/old.py": BASE + "\n# 2\n"})
    repo.git("mv", "pkg/old.py", "pkg/new.py")
    repo.commit("move old.py to new.py")
    repo.git("rm", "-q", "pkg/gone.py")
    repo.commit("remove gone.py")
    repo.git("mv", "pkg/stay.py", "pkg/gone.py")  # gone.py: added plainly, later moved in
    repo.commit("move stay.py to gone.py")
    repo.commit("three", {"pkg/new.py": BASE + "\n# 3\n", "pkg/gone.py": BASE + "\n# 3\n",
                          "pkg/other.py": "class Unlike:\n    pass\n"})
    index = HistoryIndex(Repo(repo.root))
    assert index.moved_in("pkg/new.py") and index.moved_in("pkg/new.py", ever=True)
    assert (index.moved_in("pkg/gone.py"), index.moved_in("pkg/gone.py", ever=True)) == (
        False, True)
    assert not index.moved_in("pkg/other.py", ever=True)

    paths = ["pkg/new.py", "pkg/gone.py", "pkg/other.py"]
    every: dict[str, dict[str, str]] = {}  # what --follow of each file names at each commit
    for path in paths:
        out = repo.git("log", "--follow", "--name-only", "--format=@%H", "--", path)
        for record in out.split("@")[1:]:
            commit, *names = [line for line in record.splitlines() if line]
            every.setdefault(commit, {})[path] = names[0]
    timeline = index._timeline(paths, 60, True)
    assert [commit for commit, _ in timeline] == repo.git(
        "log", "--format=%H", "--", *{n for names in every.values() for n in names.values()}
    ).split()
    for commit, where in timeline:
        for path, name in every.get(commit, {}).items():
            assert where.get(path, path) == name
    names_at_first = dict(timeline[-1][1])
    assert names_at_first.get("pkg/new.py") == "pkg/old.py"
    assert names_at_first.get("pkg/gone.py") == "pkg/stay.py"
