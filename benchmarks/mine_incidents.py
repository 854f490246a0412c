"""Propose candidate hook incidents (and traps) from a repository's git history.

    python benchmarks/mine_incidents.py REPO [--rev REV] [--since DATE] [--max-commits N]
                                             [--grep RE] [--paths PATHSPEC ...] [--traps]
                                             [--limit N] [--composition] [--outside]
                                             [--no-dispatch]
    python benchmarks/mine_incidents.py REPO --fixes      # later fixes of stale overrides
    python benchmarks/mine_incidents.py REPO --messages   # fix-like commit messages
    python benchmarks/mine_incidents.py REPO --rev C --shape NAME   # every def NAME at C
    python benchmarks/mine_incidents.py REPO --snapshots 30 --paths PKG/  # overrides left behind

A tool for people: every candidate it prints must be verified by reading both versions of the
files (``git show C^:path`` and ``git show C:path``) before it goes into
``benchmarks/quality/incidents.toml``. It never imports or runs the code it reads: it reads
``git log -p`` text and parses single files with ``ast``. Class relations are found by name
(``class X(Base)`` text), a heuristic that over-reports on purpose; ``--paths`` restricts the
walk to commits touching the base classes' files, which is much faster on large histories.

The miners:

* **def removed** (``renamed`` / ``removed``): a commit deletes an indented ``def NAME`` from a
  class whose file called ``self.NAME`` before, while after the commit a class that inherits
  from it (by name) still defines ``NAME``, or a text file naming the class shows one. A
  ``def`` added in the same file is shown as the probable new name. Defs moved to another file
  of the commit, or still defined by the class, are skipped. With ``--traps``, a removal whose
  overrides all went in the same commit is printed as a *trap* candidate.
* **call changed** (``new-argument`` / ``dropped-parameter``): in a file the commit changed, a
  ``self.NAME(...)`` or ``cls.NAME(...)`` (classmethod hooks) call shape (positional count,
  keyword names) appears that the previous version of the file did not have, and after the
  commit a subclass (by name) of the calling class defines ``NAME`` in a way that cannot bind
  it: too few positional parameters, a missing keyword, or a required parameter the call does
  not fill, with no ``*args``/``**kwargs``.
* **composition** (``--composition``): the same for ``receiver.NAME(...)`` calls whose receiver
  is not ``self``, ``cls`` or ``super()`` (``self.chat_template.messages2prompt(p, tools=t)``).
  The receiver's class is not known, so the family of classes defining ``NAME`` is read: a
  ``def NAME`` that cannot bind the new shape is reported when an in-repo ancestor's
  ``def NAME`` can (the family was updated, that subclass was not). Slower: every changed file
  with a member call is parsed twice.
* **dispatch** (``dispatch-removed`` / ``dispatch-new-argument`` / ``dispatch-trap``): a
  framework calls a hook by name on objects it does not own: ``for cb in self.callbacks:
  cb.NAME(...)`` (or a comprehension), ``self._call_callback_hooks("NAME", ...)`` (a call of a
  function whose name reads like a dispatcher with the hook's name as a string) or
  ``getattr(obj, "NAME")``. A changed file that stops dispatching a name, while a class of the
  hook's family (the classes, by name, that define it and inherit it from none of the others,
  such as ``Callback``) still defines it after the commit, is a ``dispatch-removed``; the other
  reads of the name left in the checkout are counted, to be read (a caller elsewhere, or a
  validator that refuses the name). Every family override gone in the same commit is a
  ``dispatch-trap``. A dispatch whose call shape is new (a loop call's whole shape, a string
  dispatch's keywords and positionals past the name) is a ``dispatch-new-argument`` where a
  family definition took an old shape and cannot take the new one. Only files whose changed
  lines read like dispatch (``getattr(``, callback, plugin, handler, ``for x in``...) are parsed.
* **places**: every override shown is tagged with where it lives when that is one of the
  places check mode was weakest at (issue 23): ``[tests]``, ``[examples]``, ``[docs]``,
  ``[recipes]`` (a folder of its path, or a ``test_*.py`` file) and ``[local]`` (its class is
  defined inside a function, ``<locals>`` in hookguard's names). ``--outside`` prints only
  candidates with such an override, and the dispatch miner's.
* **fixes** (``--fixes``): a commit renames a subclass method to a name its ancestor defines,
  where the ancestor used to define the old name: the later fix of a stale override; the
  introducing commit is the last one that touched ``def OLD(`` in the ancestor's file. Also a
  commit that widens a subclass's ``def NAME`` (a parameter, ``*args`` or ``**kwargs`` added)
  to accept what an ancestor's ``def NAME`` already did, or failing that a sibling's (a class
  sharing one of its three nearest ancestors: the base itself may lag, as with an abstract
  executor) (``fix-of-drift``): the later fix of a new-argument break. Keywords the old def's
  ``**kwargs`` absorbed, positionals its ``*args`` absorbed, and parameters renamed in place
  are no fix. The introducing commit shown is the last one before the fix whose diff of that
  relative's file adds or removes the parameter's name: a guess, to be checked (the break may
  come from a caller in another file). This found most of the 2026-12 additions.
* **left behind** (``--snapshots N --paths PKG``): no commit walk; at N first-parent snapshots,
  methods of tests/examples/docs or function-local classes that subclass (by name) a class under
  PKG, that no in-package ancestor and no package file defines or assigns, while an ancestor's
  file once had ``def NAME(`` (its ``git log -S`` is shown). It sees a removal whatever the
  commit says or how the dispatch went (a ``hasattr`` probe dropped, a per-class dispatch
  replaced by a fixed table), but only overrides that survived to a snapshot: 5 of issue 23's
  round-3 incidents came from it, none from the commit walk.
* **messages** (``--messages``): commits whose message reads like the later fix of such a break
  ("override never called", "rename ... in subclass"), to be traced back with ``git log -S``.

What it cannot see, and the verification must: the receiver's class in a call through
composition (``--composition`` guesses it from the family), dispatch by a computed name
(``getattr(obj, "visit_" + kind)``, hook tables; the dispatch miner reads only literal names),
``hasattr`` guards, class-qualified calls, reachability (whether the subclass overrides the
caller too, whether the object is ever registered), and compatibility shims that inspect
signatures or validators that refuse a leftover name.
"""

from __future__ import annotations

import argparse
import ast
import functools
import io
import re
import subprocess
import sys
import tarfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

DEF_LINE = re.compile(r"^(?P<indent>\s+)(async\s+)?def\s+(?P<name>\w+)\s*\(")
SELF_CALL = re.compile(r"\b(?:self|cls)\.(?P<name>\w+)\(")
MEMBER_CALL = re.compile(r"(?<!\bself)(?<!\bcls)(?<!super\(\))\.(?P<name>[A-Za-z_]\w*)\(")
FIX_MESSAGES = (
    r"never (been )?called|not (being )?called|wasn't called|isn't called|"
    r"was not called|is not called|never (run|invoked)|not invoked|"
    r"stale override|override.{0,40}(renamed|removed|ignored|no longer)|"
    r"rename.{0,40}(in|of) (the )?subclass|subclass.{0,40}(old name|renamed)|"
    r"unexpected keyword argument|takes \d+ positional arguments? but"
)
MAX_DEFINITIONS = 80
# Changed lines that may dispatch a hook by name over registered objects (the AST decides).
DISPATCH_LINE = re.compile(
    r"getattr\(|hook|callback|plugin|handler|listener|observer|extension|tracker|reporter|"
    r"checker|middleware|subscriber|\bfor\s+\w+\s+in\b",
    re.IGNORECASE,
)
# A function that calls a hook named by a string argument: trainer._call_callback_hooks("on_x").
DISPATCHER = re.compile(r"call|hook|dispatch|fire|emit|notify|trigger|invoke|run", re.IGNORECASE)
OUTSIDE = re.compile(r" \[[^\]]*(tests|examples|docs|recipes|local)[^\]]*\]$")
HOOK_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{2,}$")
# Where an override that the package's own tests and CI rarely exercise lives.
PLACES = {
    "tests": "tests",
    "test": "tests",
    "testing": "tests",
    "examples": "examples",
    "example": "examples",
    "docs": "docs",
    "doc": "docs",
    "recipes": "recipes",
}
SKIP_NAMES = frozenset(
    {"__init__", "setUp", "tearDown", "__repr__", "__str__", "__eq__", "__hash__"}
)


@dataclass
class FileDiff:
    """What one commit did to one ``.py`` file, read from ``git log -p -U0``."""

    path: str
    removed_defs: list[tuple[str, int]] = field(default_factory=list)  # (name, old line)
    added_defs: list[tuple[str, int]] = field(default_factory=list)  # (name, new line)
    removed_calls: list[str] = field(default_factory=list)  # whole removed lines calling self.X(
    added_calls: list[tuple[str, int]] = field(default_factory=list)  # (line text, new line)
    member_calls: list[str] = field(default_factory=list)  # changed lines calling other.X(
    dispatch_lines: int = 0  # changed lines that may dispatch by name (DISPATCH_LINE)


@dataclass
class Commit:
    sha: str
    subject: str
    files: list[FileDiff] = field(default_factory=list)

    def touched(self) -> set[str]:
        return {f.path for f in self.files}


@dataclass
class Candidate:
    kind: str  # renamed | removed | new-argument | dropped-parameter | trap
    sha: str
    subject: str
    base: str  # path::name as it was before the commit
    detail: str
    overrides: list[str]  # path:line of definitions left with the old shape

    def render(self) -> str:
        lines = [f"{self.kind:17} {self.sha[:12]} {self.subject[:70]}", f"  base: {self.base}"]
        lines.append(f"  {self.detail}")
        lines.extend(f"  left: {where}" for where in self.overrides[:8])
        if len(self.overrides) > 8:
            lines.append(f"  ... {len(self.overrides) - 8} more")
        return "\n".join(lines)


def git(repo: str, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", repo, *args], capture_output=True, text=True, errors="replace", check=False
    )
    return done.stdout


def commits(
    repo: str,
    rev: str,
    since: str | None,
    max_commits: int | None,
    paths: list[str] | None = None,
    grep: str | None = None,
) -> Iterator[Commit]:
    """Stream non-merge commits with their zero-context ``.py`` diffs (``paths``: pathspecs
    that select the commits, e.g. the base classes' files; the diff still covers every file;
    ``grep``: an extended regular expression the commit message must match, any case)."""
    args = ["log", "--no-merges", "-p", "-U0", "--no-renames", "--format=\x01%H %s", rev]
    if grep:
        args += ["-i", "-E", f"--grep={grep}"]
    if since:
        args.append(f"--since={since}")
    if max_commits:
        args.append(f"-n{max_commits}")
    if paths:
        args += ["--full-diff", "--", *paths]
    else:
        args += ["--", "*.py"]
    proc = subprocess.Popen(
        ["git", "-C", repo, *args], stdout=subprocess.PIPE, text=True, errors="replace"
    )
    assert proc.stdout is not None
    current: Commit | None = None
    diff: FileDiff | None = None
    old_line = new_line = 0
    for raw in proc.stdout:
        line = raw.rstrip("\n")
        if line.startswith("\x01"):
            if current is not None:
                yield current
            sha, _, subject = line[1:].partition(" ")
            current, diff = Commit(sha, subject), None
        elif current is None:
            continue
        elif line.startswith("diff --git "):
            path = line.split(" b/", 1)[-1]
            diff = FileDiff(path) if path.endswith(".py") else None
            if diff is not None:
                current.files.append(diff)
        elif line.startswith("@@") and diff is not None:
            match = re.match(r"@@ -(?P<old>\d+)(?:,\d+)? \+(?P<new>\d+)", line)
            if match:
                old_line, new_line = int(match["old"]), int(match["new"])
        elif diff is None or line.startswith(("---", "+++")):
            continue
        elif line.startswith("-"):
            record(diff, line[1:], old_line, removed=True)
            old_line += 1
        elif line.startswith("+"):
            record(diff, line[1:], new_line, removed=False)
            new_line += 1
    if current is not None:
        yield current
    proc.wait()


def record(diff: FileDiff, text: str, line: int, *, removed: bool) -> None:
    match = DEF_LINE.match(text)
    if match and match["name"] not in SKIP_NAMES:
        (diff.removed_defs if removed else diff.added_defs).append((match["name"], line))
    if SELF_CALL.search(text):
        if removed:
            diff.removed_calls.append(text.strip())
        else:
            diff.added_calls.append((text.strip(), line))
    if MEMBER_CALL.search(text):
        diff.member_calls.append(text.strip())
    if DISPATCH_LINE.search(text):
        diff.dispatch_lines += 1


def definitions(repo: str, rev: str, name: str) -> list[tuple[str, int]]:
    """Every indented ``def name(`` at ``rev`` (``.py``, ``.rst``, ``.md`` files): (path, line)."""
    out = git(
        repo,
        "grep",
        "-n",
        "-E",
        rf"^\s+(async\s+)?def {name}\s*\(",
        rev,
        "--",
        "*.py",
        "*.rst",
        "*.md",
        "*.txt",
    )
    found = []
    for row in out.splitlines():
        parts = row.split(":", 3)  # rev:path:line:text
        if len(parts) == 4 and parts[2].isdigit():
            found.append((parts[1], int(parts[2])))
    return found


_SOURCES: dict[tuple[str, str], str] = {}


def source(repo: str, rev: str, path: str) -> str:
    if (rev, path) not in _SOURCES:
        if len(_SOURCES) > 256:
            _SOURCES.clear()
        _SOURCES[rev, path] = git(repo, "show", f"{rev}:{path}")
    return _SOURCES[rev, path]


def calls_self(repo: str, rev: str, path: str, name: str) -> bool:
    """Does ``path`` at ``rev`` read ``self.name`` anywhere (a call, or a property read)?"""
    return re.search(rf"\bself\.{name}\b", source(repo, rev, path)) is not None


@functools.lru_cache(maxsize=512)
def parse(repo: str, rev: str, path: str) -> ast.Module | None:
    if not path.endswith(".py"):
        return None
    try:
        return ast.parse(source(repo, rev, path))
    except (SyntaxError, ValueError):
        return None


def enclosing_class(tree: ast.Module | None, line: int) -> ast.ClassDef | None:
    """The innermost class whose body holds a ``def`` starting at ``line``."""
    found = None
    for node in ast.walk(tree) if tree is not None else ():
        if (
            isinstance(node, ast.ClassDef)
            and node.lineno <= line <= (node.end_lineno or 0)
            and any(
                isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                and line in (item.lineno, *(d.lineno for d in item.decorator_list))
                for item in node.body
            )
        ):
            found = node
    return found


def class_at(tree: ast.Module | None, line: int) -> ast.ClassDef | None:
    """The innermost class whose source spans ``line``."""
    found = None
    for node in ast.walk(tree) if tree is not None else ():
        if (
            isinstance(node, ast.ClassDef)
            and node.lineno <= line <= (node.end_lineno or 0)
            and (found is None or node.lineno >= found.lineno)
        ):
            found = node
    return found


def base_names(node: ast.ClassDef) -> list[str]:
    names = []
    for base in node.bases:
        if isinstance(base, ast.Subscript):
            base = base.value
        if isinstance(base, ast.Name):
            names.append(base.id)
        elif isinstance(base, ast.Attribute):
            names.append(base.attr)
    return names


@functools.lru_cache(maxsize=4096)
def classes_named(repo: str, rev: str, name: str) -> tuple[tuple[str, ast.ClassDef], ...]:
    """Every class called ``name`` at ``rev``, with its path (by name: a heuristic, not a model)."""
    found: list[tuple[str, ast.ClassDef]] = []
    out = git(repo, "grep", "-n", "-E", rf"^\s*class {name}\b", rev, "--", "*.py")
    for row in out.splitlines()[:20]:
        parts = row.split(":", 3)
        if len(parts) == 4 and parts[2].isdigit():
            for node in ast.walk(parse(repo, rev, parts[1]) or ast.Module([], [])):
                if isinstance(node, ast.ClassDef) and node.lineno == int(parts[2]):
                    found.append((parts[1], node))
    return tuple(found)


def bases_of(repo: str, rev: str, name: str) -> list[str]:
    return [base for _, node in classes_named(repo, rev, name) for base in base_names(node)]


def methods(node: ast.ClassDef) -> set[str]:
    return {
        item.name for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
    }


def ancestors(repo: str, rev: str, node: ast.ClassDef) -> Iterator[tuple[str, ast.ClassDef]]:
    """In-repo ancestors of ``node`` found by name, nearest first (8 levels at most)."""
    frontier, seen = base_names(node), {node.name}
    for _ in range(8):
        following: list[str] = []
        for name in frontier:
            if name in seen:
                continue
            seen.add(name)
            for path, found in classes_named(repo, rev, name):
                yield path, found
                following.extend(base_names(found))
        frontier = following


def inherits(repo: str, rev: str, start: list[str], target: str) -> list[str] | None:
    """A chain of class names from ``start`` up to ``target`` (breadth first, 8 levels)."""
    frontier = [[name] for name in start]
    seen: set[str] = set()
    for _ in range(8):
        following: list[list[str]] = []
        for chain in frontier:
            if chain[-1] == target:
                return chain
            if chain[-1] in seen or chain[-1] in {"object", "Module", "ABC", "Generic"}:
                continue
            seen.add(chain[-1])
            following.extend([*chain, up] for up in bases_of(repo, rev, chain[-1]))
        frontier = following
    return None


def overrides(repo: str, rev: str, name: str, owner: str, touched: set[str]) -> list[str]:
    """``def name`` at ``rev`` in classes that inherit (by name) from ``owner``, or in text files
    naming ``owner``: 'path:line chain', marked when the commit did not touch the file."""
    found: list[str] = []
    candidates = definitions(repo, rev, name)
    if len(candidates) > MAX_DEFINITIONS:
        return found
    for path, at in candidates:
        if path.endswith(".py"):
            sub = enclosing_class(parse(repo, rev, path), at)
            if sub is None or sub.name == owner:
                continue
            chain = inherits(repo, rev, base_names(sub), owner)
            if chain is None:
                continue
            shown = " < ".join([sub.name, *chain])
        elif re.search(rf"\b{owner}\b", source(repo, rev, path)):
            shown = f"(text naming {owner})"
        else:
            continue
        untouched = "" if path in touched else " (file untouched)"
        found.append(f"{path}:{at} {shown}{untouched}{place_tag(repo, rev, path, at)}")
    return found


def place(repo: str, rev: str, path: str, line: int) -> list[str]:
    """Where a definition lives, of the places issue 23 names: ``tests``, ``examples``, ``docs``,
    ``recipes`` (by a folder of its path, or a ``test_*.py`` name) and ``local`` (its class is
    defined inside a function)."""
    found = place_of(path)
    tree = parse(repo, rev, path)
    owner = enclosing_class(tree, line)
    if owner is not None and is_local(tree, owner):
        found.append("local")
    return found


def place_of(path: str) -> list[str]:
    """The places of issue 23 that a path's folders (or its ``test_*.py`` name) name."""
    parts = path.split("/")
    found = sorted({PLACES[part] for part in parts[:-1] if part in PLACES})
    if not found and re.match(r"(test_.*|.*_test|conftest)\.py$", parts[-1]):
        found.append("tests")
    return found


def place_tag(repo: str, rev: str, path: str, line: int) -> str:
    where = place(repo, rev, path, line)
    return f" [{', '.join(where)}]" if where else ""


def is_local(tree: ast.Module | None, node: ast.ClassDef) -> bool:
    """Is ``node`` defined inside a function (a class the function builds each time it runs)?"""
    return any(
        isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef))
        and func.lineno < node.lineno
        and (node.end_lineno or 0) <= (func.end_lineno or 0)
        for func in (ast.walk(tree) if tree is not None else ())
    )


def still_defined(repo: str, rev: str, path: str, owner: str, name: str) -> bool:
    """Does class ``owner`` in ``path`` at ``rev`` still define ``name`` (a duplicate removed)?"""
    tree = parse(repo, rev, path)
    return any(
        isinstance(node, ast.ClassDef) and node.name == owner and name in methods(node)
        for node in (ast.walk(tree) if tree is not None else ())
    )


def mine_removed(repo: str, commit: Commit) -> Iterator[Candidate]:
    """Hooks deleted from a class that called them; overrides left behind, or (a trap) every
    override removed or renamed in the same commit."""
    kept = {name for diff in commit.files for name, _ in diff.added_defs}  # moves count as kept
    for diff in commit.files:
        gone = {old for old, _ in diff.removed_defs}
        renamed_to = sorted({new for new, _ in diff.added_defs if new not in gone})
        for name, line in diff.removed_defs:
            if name in kept or not calls_self(repo, f"{commit.sha}^", diff.path, name):
                continue
            owner = enclosing_class(parse(repo, f"{commit.sha}^", diff.path), line)
            if owner is None or still_defined(repo, commit.sha, diff.path, owner.name, name):
                continue
            left = overrides(repo, commit.sha, name, owner.name, commit.touched())
            if left:
                kind = "renamed" if renamed_to else "removed"
            else:
                left = overrides(repo, f"{commit.sha}^", name, owner.name, commit.touched())
                if not left:
                    continue  # no override before or after: neither an incident nor a trap
                kind = "trap"
                left = [f"(before) {where}" for where in left]
            detail = f"def {name} removed at old line {line}"
            if renamed_to:
                detail += f"; defs added in the same file: {', '.join(renamed_to[:5])}"
            base = f"{diff.path}::{owner.name}.{name}"
            yield Candidate(kind, commit.sha, commit.subject, base, detail, left)


@dataclass(frozen=True)
class Dispatch:
    """One place a module calls a hook by name on objects it does not own."""

    how: str  # loop (for cb in xs: cb.NAME(...)) | string (f("NAME", ...)) | getattr
    shape: tuple[int, frozenset[str]] | None  # of the hook's call (string: after the name)
    line: int


def dispatched(tree: ast.Module | None) -> dict[str, list[Dispatch]]:
    """The hook names a module dispatches by name: ``for cb in self.callbacks: cb.NAME(...)``
    (and comprehensions), ``self._call_callback_hooks("NAME", ...)`` (a call of a function
    whose name reads like a dispatcher, with the hook's name as a string argument) and
    ``getattr(obj, "NAME")``."""
    found: dict[str, list[Dispatch]] = {}

    def add(name: str, how: str, shape: tuple[int, frozenset[str]] | None, line: int) -> None:
        if HOOK_NAME.match(name) and not name.startswith("__") and name not in SKIP_NAMES:
            found.setdefault(name, []).append(Dispatch(how, shape, line))

    for node in ast.walk(tree) if tree is not None else ():
        scope: list[ast.AST] = []
        if isinstance(node, (ast.For, ast.AsyncFor)):
            targets, scope = [node.target], list(node.body)
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            targets, scope = [g.target for g in node.generators], [node.elt]
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            strings = [
                (i, a.value)
                for i, a in enumerate(node.args)
                if isinstance(a, ast.Constant) and isinstance(a.value, str)
            ]
            if called == "getattr" and len(strings) == 1 and strings[0][0] == 1:
                add(strings[0][1], "getattr", None, node.lineno)
            elif called != "getattr" and DISPATCHER.search(called) and strings:
                at, name = strings[0]
                rest = node.args[at + 1 :]
                shape = None
                if not any(isinstance(a, ast.Starred) for a in rest) and all(
                    k.arg for k in node.keywords
                ):
                    shape = (len(rest), frozenset(k.arg for k in node.keywords if k.arg))
                add(name, "string", shape, node.lineno)
            continue
        else:
            continue
        names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        for stmt in scope:
            for sub in ast.walk(stmt):
                if (
                    isinstance(sub, ast.Call)
                    and isinstance(sub.func, ast.Attribute)
                    and isinstance(sub.func.value, ast.Name)
                    and sub.func.value.id in names
                ):
                    add(sub.func.attr, "loop", call_shape(sub), sub.lineno)
    return found


def hook_family(repo: str, rev: str, name: str) -> list[str]:
    """The classes (by name) that define ``name`` at ``rev`` and inherit it from none of the
    others: the declarations of the hook (``Callback.on_x``), at most 6."""
    owners: dict[str, ast.ClassDef] = {}
    for path, at in definitions(repo, rev, name)[:MAX_DEFINITIONS]:
        owner = enclosing_class(parse(repo, rev, path), at)
        if owner is not None:
            owners.setdefault(owner.name, owner)
    roots = [
        cls
        for cls, node in owners.items()
        if not any(up.name in owners for _, up in ancestors(repo, rev, node))
    ]
    return sorted(roots)[:6]


def family_defs(
    repo: str, rev: str, name: str, roots: list[str], touched: set[str]
) -> list[tuple[str, int, ast.ClassDef, str]]:
    """``def name`` at ``rev`` in classes that inherit (by name) from one of ``roots``, or in any
    class when there are no roots (duck-typed plugins): (path, line, class, 'shown')."""
    found = []
    candidates = definitions(repo, rev, name)
    if len(candidates) > MAX_DEFINITIONS:
        return found
    for path, at in candidates:
        if not path.endswith(".py"):
            continue
        sub = enclosing_class(parse(repo, rev, path), at)
        if sub is None or sub.name in roots:
            continue
        chain = None
        for root in roots:
            chain = inherits(repo, rev, base_names(sub), root)
            if chain is not None:
                break
        if roots and chain is None:
            continue
        shown = " < ".join([sub.name, *(chain or ["(duck-typed)"])])
        untouched = "" if path in touched else " (file untouched)"
        found.append((path, at, sub, f"{path}:{at} {shown}{untouched}"))
    return found


def references(repo: str, rev: str, name: str) -> list[tuple[str, str]]:
    """Where ``name`` is still read at ``rev`` other than by a ``def``: member reads and string
    literals, ('path:line', text) (a caller left, or a validator that refuses the name)."""
    out = git(repo, "grep", "-n", "-E", rf"\.{name}\b|[\"']{name}[\"']", rev, "--", "*.py")
    found = []
    for row in out.splitlines():
        parts = row.split(":", 3)
        if len(parts) == 4 and not re.match(rf"\s*(async\s+)?def {name}\b", parts[3]):
            found.append((f"{parts[1]}:{parts[2]}", parts[3]))
    return found


def still_called(name: str, refs: list[tuple[str, str]]) -> str:
    """A reference outside tests that still calls ``name`` (``x.name(``) or dispatches it by
    name (``_call_hook("name", ...)``), not a mere check (getattr, hasattr, a validator)."""
    for where, text in refs:
        if "tests" in place_of(where.split(":")[0]):
            continue
        if re.search(rf"\.{name}\(", text) or (
            re.search(
                rf"(call|dispatch|fire|emit|notify|trigger|invoke|run)\w*\([^)]*[\"']{name}[\"']",
                text,
                re.I,
            )
            and not re.search(r"getattr|hasattr|callable|is_overridden", text)
        ):
            return where
    return ""


def mine_dispatch(repo: str, commit: Commit) -> Iterator[Candidate]:
    """Hooks a framework calls by name on every registered object (callbacks, plugins,
    handlers): a name the changed file stopped dispatching while a class of the hook's family
    (by name) still defines it (``dispatch-removed``; every such override gone in the same
    commit: ``dispatch-trap``), or a dispatch whose call gained an argument that a family
    member's definition cannot take (``dispatch-new-argument``)."""
    touched = commit.touched()
    changed = [diff for diff in commit.files if diff.dispatch_lines]
    after_all = {diff.path: dispatched(parse(repo, commit.sha, diff.path)) for diff in changed}
    still = {name for names in after_all.values() for name in names}  # moved, not removed
    for diff in changed:
        before = dispatched(parse(repo, f"{commit.sha}^", diff.path))
        if not before:
            continue
        after = after_all[diff.path]
        for name in sorted(before):
            first = before[name][0]
            if name not in still:
                roots = hook_family(repo, f"{commit.sha}^", name)
                if not roots:
                    continue  # no class ever declared the name: not a hook
                left = family_defs(repo, commit.sha, name, roots, touched)
                refs = [
                    r for r in references(repo, commit.sha, name) if r[0].split(":")[0] != diff.path
                ]
                caller = still_called(name, refs)
                if caller:
                    continue  # still called elsewhere (another loop's dispatch): not removed
                refs = [where for where, _ in refs]
                detail = (
                    f"{first.how} dispatch of {name!r} at old line {first.line} gone; "
                    f"declared by {', '.join(roots)}; other reads after: {len(refs)} "
                    f"{' '.join(refs[:3])}"
                )
                base = f"{diff.path}::{name}"
                if left:
                    shown = [w + place_tag(repo, commit.sha, p, at) for p, at, _, w in left]
                    yield Candidate(
                        "dispatch-removed", commit.sha, commit.subject, base, detail, shown
                    )
                else:
                    old = family_defs(repo, f"{commit.sha}^", name, roots, touched)
                    if old:
                        shown = [f"(before) {w}" for _, _, _, w in old]
                        yield Candidate(
                            "dispatch-trap", commit.sha, commit.subject, base, detail, shown
                        )
                continue
            if name in after:
                yield from dispatch_drift(repo, commit, diff.path, name, before[name], after[name])


def dispatch_drift(
    repo: str,
    commit: Commit,
    path: str,
    name: str,
    before: list[Dispatch],
    after: list[Dispatch],
) -> Iterator[Candidate]:
    """A dispatch of ``name`` whose call shape is new: definitions of the family that took an
    old shape and cannot take the new one. A string dispatch's shape leaves out what the
    dispatcher adds itself, so only the keywords and positionals it gained are compared."""
    old_shapes = {d.shape for d in before if d.shape is not None}
    fresh = [d for d in after if d.shape is not None and d.shape not in old_shapes]
    if not fresh or not old_shapes:
        return
    roots = hook_family(repo, commit.sha, name)
    if not roots:
        return
    members = family_defs(repo, commit.sha, name, roots, commit.touched())
    for new in fresh:
        left = []
        for member_path, at, _, shown in members:
            func = function_at(repo, commit.sha, member_path, at)
            if func is None:
                continue
            if new.how == "loop":
                why = cannot_bind(func, new.shape) if new.shape else ""
                if why and any(not cannot_bind(func, s) for s in old_shapes):
                    left.append(f"{shown}: {why}{place_tag(repo, commit.sha, member_path, at)}")
                continue
            gained_kw = set(new.shape[1]) - set().union(*(s[1] for s in old_shapes))
            gained_pos = new.shape[0] - max(s[0] for s in old_shapes)
            taken = accepted(func)
            why = ""
            if gained_kw - taken and "**" not in taken:
                why = f"no parameter {', '.join(sorted(gained_kw - taken))}"
            elif gained_pos > 0 and "*" not in taken and not func.args.defaults:
                why = f"the call passes {gained_pos} more positional"
            if why:
                left.append(f"{shown}: {why}{place_tag(repo, commit.sha, member_path, at)}")
        if left:
            detail = (
                f"{new.how} dispatch of {name!r} at line {new.line}: "
                f"{sorted(old_shapes, key=str)} -> {new.shape}; declared by {', '.join(roots)}"
            )
            yield Candidate(
                "dispatch-new-argument", commit.sha, commit.subject, f"{path}::{name}", detail, left
            )
            return


def mine_fixes(repo: str, commit: Commit) -> Iterator[Candidate]:
    """Commits that rename a method of a subclass to a name its ancestor defines, where the old
    name is no longer defined by any ancestor: the later fix of a stale override. The
    introducing commit is the last one that removed ``def old`` from that ancestor's file."""
    for diff in commit.files:
        added = {name for name, _ in diff.added_defs}
        removed = {name for name, _ in diff.removed_defs}
        if not (removed - added) or not (added - removed):
            continue
        tree = parse(repo, f"{commit.sha}^", diff.path)
        for old, line in diff.removed_defs:
            if old in added:
                continue
            owner = enclosing_class(tree, line)
            if owner is None:
                continue
            for path, ancestor in ancestors(repo, f"{commit.sha}^", owner):
                new_names = (added - removed) & methods(ancestor)
                if len(new_names) != 1 or old in methods(ancestor):
                    continue
                introduced = git(
                    repo,
                    "log",
                    "-n1",
                    "--format=%H %s",
                    f"-Sdef {old}(",
                    f"{commit.sha}^",
                    "--",
                    path,
                ).strip()
                if not introduced:
                    continue  # the ancestor never defined the old name: not a rename it made
                yield Candidate(
                    "fix-of-stale",
                    commit.sha,
                    commit.subject,
                    f"{path}::{ancestor.name}.{'/'.join(sorted(new_names))}",
                    f"{diff.path}::{owner.name}.{old} renamed; introduced by: {introduced[:90]}",
                    [],
                )
                break


def accepted(func: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The parameter names a def accepts, with ``*`` and ``**`` for its catch-alls."""
    args = func.args
    names = {p.arg for p in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    if args.vararg is not None:
        names.add("*")
    if args.kwarg is not None:
        names.add("**")
    return names


def arity(func: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """How many named parameters a def has, ``self``/``cls`` left out."""
    args = func.args
    names = [p.arg for p in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    return len([n for n in names if n not in ("self", "cls")])


def mine_widened(repo: str, commit: Commit) -> Iterator[Candidate]:
    """Commits that widen a subclass's ``def NAME`` (a parameter, ``*args`` or ``**kwargs``
    added) to accept what an ancestor's ``def NAME`` already accepted: the later fix of an
    override left with the old shape when the family's call started passing more. The
    introducing commit is the last one before the fix that changed the ancestor's file where
    the added parameter appears (``git log -S``)."""
    for diff in commit.files:
        if not diff.removed_defs or not diff.added_defs:
            continue
        before = parse(repo, f"{commit.sha}^", diff.path)
        after = parse(repo, commit.sha, diff.path)
        old_lines: dict[tuple[str, str], int] = {}  # (class, def) -> line before the commit
        for name, line in diff.removed_defs:
            owner = enclosing_class(before, line)
            if owner is not None:
                old_lines.setdefault((owner.name, name), line)
        for name, new_line in diff.added_defs:
            new_owner = enclosing_class(after, new_line)
            if new_owner is None or (new_owner.name, name) not in old_lines:
                continue
            old_line = old_lines.pop((new_owner.name, name))
            old_func = function_at(repo, f"{commit.sha}^", diff.path, old_line)
            new_func = function_at(repo, commit.sha, diff.path, new_line)
            if old_func is None or new_func is None:
                continue
            gained = accepted(new_func) - accepted(old_func) - {"self", "cls"}
            if "**" in accepted(old_func):
                gained &= {"*"}  # a keyword the old def's **kwargs absorbed never failed to bind
            if "*" in accepted(old_func):  # nor did a positional its *args absorbed
                gained &= {p.arg for p in new_func.args.kwonlyargs} | {"**"}
            if not gained & {"*", "**"} and arity(new_func) <= arity(old_func):
                continue  # a parameter renamed in place, or a staticmethod made a classmethod
            owner = enclosing_class(before, old_line)
            if not gained or owner is None:
                continue
            found = updated_relative(repo, f"{commit.sha}^", owner, name, gained)
            if found is None:
                continue
            path, relative, shared = found
            needle = {"*": "*args", "**": "**kwargs"}.get(shared[0], shared[0])
            introduced = git(
                repo, "log", "-n1", "--format=%H %s", f"-S{needle}", f"{commit.sha}^", "--", path
            ).strip()
            yield Candidate(
                "fix-of-drift",
                commit.sha,
                commit.subject,
                f"{path}::{relative}.{name}",
                f"{diff.path}::{owner.name}.{name} gained {', '.join(shared)}; "
                f"introduced by: {introduced[:90] or '?'}",
                [],
            )


def updated_relative(
    repo: str, rev: str, owner: ast.ClassDef, name: str, gained: set[str]
) -> tuple[str, str, list[str]] | None:
    """A class related to ``owner`` whose ``def name`` already accepted some of ``gained`` at
    ``rev``: an ancestor first, else a sibling (a class sharing one of ``owner``'s three
    nearest ancestors, its family updated while ``owner`` was not). (path, class, shared)."""
    lineage = list(ancestors(repo, rev, owner))
    for path, ancestor in lineage:
        defs = [
            item
            for item in ancestor.body
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == name
        ]
        if defs and gained & accepted(defs[0]):
            return path, ancestor.name, sorted(gained & accepted(defs[0]))
    nearest = [ancestor.name for _, ancestor in lineage[:3]]
    if not nearest:
        return None
    candidates = definitions(repo, rev, name)
    if len(candidates) > MAX_DEFINITIONS:
        return None
    for path, at in candidates:
        func = function_at(repo, rev, path, at)
        sibling = enclosing_class(parse(repo, rev, path), at)
        if func is None or sibling is None or sibling.name == owner.name:
            continue
        shared = gained & accepted(func)
        if shared and any(inherits(repo, rev, base_names(sibling), up) for up in nearest):
            return path, sibling.name, sorted(shared)
    return None


def cannot_bind(
    func: ast.FunctionDef | ast.AsyncFunctionDef, shape: tuple[int, frozenset[str]]
) -> str:
    """Why a call of ``shape`` (self not counted) fails against ``func``, or '' when it binds."""
    positional, keywords = shape
    args = func.args
    params = [*args.posonlyargs, *args.args]
    is_static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in func.decorator_list)
    if not is_static:
        params = params[1:]
    names = [p.arg for p in params] + [p.arg for p in args.kwonlyargs]
    if positional > len(params) and args.vararg is None:
        return f"takes {len(params)} positional, call passes {positional}"
    missing = sorted(k for k in keywords if k not in names)
    if missing and args.kwarg is None:
        return f"no parameter {', '.join(missing)}"
    required = len(params) - len(args.defaults)
    filled = positional + sum(1 for p in params[positional:required] if p.arg in keywords)
    if filled < required:
        return f"requires {required} positional, call fills {filled}"
    return ""


def function_at(
    repo: str, rev: str, path: str, line: int
) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    tree = parse(repo, rev, path)
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and line in (
            node.lineno,
            *(d.lineno for d in node.decorator_list),
        ):
            return node
    return None


def call_shape(node: ast.Call) -> tuple[int, frozenset[str]] | None:
    """(positional count, keyword names) of a call, or None when ``*args``/``**kwargs`` hide it."""
    if any(isinstance(a, ast.Starred) for a in node.args) or any(
        k.arg is None for k in node.keywords
    ):
        return None
    return len(node.args), frozenset(k.arg for k in node.keywords if k.arg)


def is_own_receiver(value: ast.expr) -> bool:
    """``self.x(...)``, ``cls.x(...)`` or ``super().x(...)``: a call on the caller's own family."""
    if isinstance(value, ast.Name):
        return value.id in ("self", "cls")
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "super"
    )


def self_call_shapes(tree: ast.Module | None) -> dict[str, dict[tuple[int, frozenset[str]], int]]:
    """Every ``self.name(...)`` or ``cls.name(...)`` call in a module: name -> {(positional count,
    keywords): line}. Calls with ``*args`` or ``**kwargs`` are left out (their shape is unknown)."""
    found: dict[str, dict[tuple[int, frozenset[str]], int]] = {}
    for node in ast.walk(tree) if tree is not None else ():
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in ("self", "cls")
        ):
            continue
        shape = call_shape(node)
        if shape is not None:
            found.setdefault(node.func.attr, {}).setdefault(shape, node.lineno)
    return found


def member_call_shapes(
    tree: ast.Module | None,
) -> dict[str, dict[tuple[int, frozenset[str]], int]]:
    """Every ``<receiver>.name(...)`` call whose receiver is not ``self``, ``cls`` or ``super()``
    (a call through composition: ``self.policy.attention(...)``, ``template.render(...)``)."""
    found: dict[str, dict[tuple[int, frozenset[str]], int]] = {}
    for node in ast.walk(tree) if tree is not None else ():
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if is_own_receiver(node.func.value):
            continue
        shape = call_shape(node)
        if shape is not None:
            found.setdefault(node.func.attr, {}).setdefault(shape, node.lineno)
    return found


def mine_calls(repo: str, commit: Commit) -> Iterator[Candidate]:
    """Calls ``self.name(...)`` whose shape is new in a file the commit changed, compared over
    the whole file before and after (so calls spread over several lines count too)."""
    for diff in commit.files:
        names = {
            match["name"]
            for text in (*diff.removed_calls, *(t for t, _ in diff.added_calls))
            for match in SELF_CALL.finditer(text)
        } - SKIP_NAMES
        if not names:
            continue
        head_tree = parse(repo, commit.sha, diff.path)
        before_all = self_call_shapes(parse(repo, f"{commit.sha}^", diff.path))
        after_all = self_call_shapes(head_tree)
        for name in sorted(names):
            before = set(before_all.get(name, {}))
            fresh = {
                shape: at for shape, at in after_all.get(name, {}).items() if shape not in before
            }
            if not fresh:
                continue
            found = definitions(repo, commit.sha, name)
            if len(found) > MAX_DEFINITIONS:
                continue  # a name this common (forward, setup) costs minutes and rarely pays
            for shape, line in fresh.items():
                caller = class_at(head_tree, line)
                if caller is None:
                    continue
                left = []
                for path, at in found:
                    func = function_at(repo, commit.sha, path, at)
                    why = cannot_bind(func, shape) if func is not None else ""
                    sub = enclosing_class(parse(repo, commit.sha, path), at)
                    if not why or sub is None or sub.name == caller.name:
                        continue
                    chain = inherits(repo, commit.sha, base_names(sub), caller.name)
                    if chain is not None:
                        untouched = "" if path in commit.touched() else " (file untouched)"
                        shown = " < ".join([sub.name, *chain])
                        left.append(f"{path}:{at} {shown}: {why}{untouched}")
                if left:
                    smallest = min((p + len(k) for p, k in before), default=0)
                    kind = "new-argument" if sum_shape(shape) > smallest else "dropped-parameter"
                    detail = (
                        f"self.{name}(...) at line {line}: {sorted(before, key=str)} -> {shape}"
                    )
                    base = f"{diff.path}::{caller.name}.{name}"
                    yield Candidate(kind, commit.sha, commit.subject, base, detail, left)
                    break


def mine_members(repo: str, commit: Commit) -> Iterator[Candidate]:
    """Calls ``<receiver>.name(...)`` through composition whose shape is new in a file the commit
    changed, where the receiver's class is unknown to the miner: the family of classes defining
    ``name`` is read instead. A definition that cannot bind the new shape is reported when an
    in-repo ancestor's definition of ``name`` can (the family was updated, this class was not)."""
    for diff in commit.files:
        names = {
            match["name"] for text in diff.member_calls for match in MEMBER_CALL.finditer(text)
        } - SKIP_NAMES
        names = {name for name in names if not name.startswith("__")}
        if not names:
            continue
        before_all = member_call_shapes(parse(repo, f"{commit.sha}^", diff.path))
        after_all = member_call_shapes(parse(repo, commit.sha, diff.path))
        for name in sorted(names):
            before = set(before_all.get(name, {}))
            fresh = {
                shape: at for shape, at in after_all.get(name, {}).items() if shape not in before
            }
            if not fresh:
                continue
            found = definitions(repo, commit.sha, name)
            if not 2 <= len(found) <= MAX_DEFINITIONS:
                continue
            for shape, line in fresh.items():
                candidate = family_left_behind(repo, commit, name, shape, found)
                if candidate is None:
                    continue
                base, left = candidate
                smallest = min((p + len(k) for p, k in before), default=0)
                kind = "new-argument" if sum_shape(shape) > smallest else "dropped-parameter"
                detail = (
                    f"<receiver>.{name}(...) at {diff.path}:{line}: "
                    f"{sorted(before, key=str)} -> {shape}"
                )
                yield Candidate(kind, commit.sha, commit.subject, base, detail, left)
                break


def family_left_behind(
    repo: str,
    commit: Commit,
    name: str,
    shape: tuple[int, frozenset[str]],
    found: list[tuple[str, int]],
) -> tuple[str, list[str]] | None:
    """For a call shape of ``name``: the ancestor whose ``def name`` binds it ('path::Class.name')
    and the subclasses' definitions that cannot, or None when there is no such split."""
    binds: dict[str, str] = {}  # class name -> path
    fails: list[tuple[str, int, ast.ClassDef, str]] = []
    for path, at in found:
        func = function_at(repo, commit.sha, path, at)
        owner = enclosing_class(parse(repo, commit.sha, path), at)
        if func is None or owner is None:
            continue
        why = cannot_bind(func, shape)
        if why:
            fails.append((path, at, owner, why))
        else:
            binds.setdefault(owner.name, path)
    if not fails or not binds:
        return None
    left: list[str] = []
    base = ""
    for path, at, owner, why in fails:
        for ancestor, ancestor_path in binds.items():
            if ancestor == owner.name:
                continue
            chain = inherits(repo, commit.sha, base_names(owner), ancestor)
            if chain is None:
                continue
            untouched = "" if path in commit.touched() else " (file untouched)"
            left.append(f"{path}:{at} {' < '.join([owner.name, *chain])}: {why}{untouched}")
            base = base or f"{ancestor_path}::{ancestor}.{name}"
            break
    return (base, left) if left else None


def sum_shape(shape: tuple[int, frozenset[str]]) -> int:
    return shape[0] + len(shape[1])


Classes = dict[str, list[tuple[str, list[str], dict[str, int], bool]]]


def snapshot_classes(repo: str, rev: str) -> tuple[Classes, dict[str, str]]:
    """Every class at ``rev`` by name: (path, base names, methods, defined in a function), read
    from one ``git archive`` stream; and the text of each ``.py`` file."""
    archive = subprocess.run(["git", "-C", repo, "archive", rev], capture_output=True, check=True)
    found: Classes = {}
    texts: dict[str, str] = {}
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        for member in tar:
            handle = tar.extractfile(member) if member.name.endswith(".py") else None
            if handle is None:
                continue
            texts[member.name] = handle.read().decode("utf-8", "replace")
            try:
                tree = ast.parse(texts[member.name])
            except (SyntaxError, ValueError, RecursionError):
                continue
            stack: list[tuple[ast.AST, bool]] = [(tree, False)]
            while stack:
                node, local = stack.pop()
                for child in ast.iter_child_nodes(node):
                    if isinstance(child, ast.ClassDef):
                        own = {
                            f.name: f.lineno
                            for f in child.body
                            if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
                        }
                        entry = (member.name, base_names(child), own, local)
                        found.setdefault(child.name, []).append(entry)
                    inner = local or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
                    stack.append((child, inner))
    return found, texts


def lineage(
    found: Classes, name: str, in_package: Callable[[str], bool], done: set[tuple[str, str]]
) -> Iterator[tuple[str, dict[str, int]]]:
    """The in-package classes named ``name`` and their ancestors, by name: (path, methods)."""
    for path, bases, own, _ in found.get(name, []):
        if in_package(path) and (name, path) not in done:
            done.add((name, path))
            yield path, own
            for base in bases:
                yield from lineage(found, base, in_package, done)


def mine_snapshots(repo: str, count: int, packages: list[str]) -> Iterator[str]:
    """Overrides left behind, seen at ``count`` first-parent snapshots: a method of a class in
    tests/examples/docs (or a function-local class) that subclasses, by name, a class under
    ``packages``, which no in-package ancestor and no package file defines or assigns at that
    snapshot, while an ancestor's file once had ``def NAME(`` (its ``git log -S`` is shown: the
    removing or renaming commit is one of those). Finds stale overrides whatever the removing
    commit's message or shape (a dropped ``hasattr`` probe, a dispatch replaced by a table)."""
    revs = git(repo, "rev-list", "--first-parent", "HEAD").split()
    seen: set[tuple[str, str, str]] = set()
    skip = {"setUp", "tearDown", "setUpClass", "tearDownClass", "setup_method", "teardown_method"}

    def in_package(path: str) -> bool:
        return path.startswith(tuple(packages)) and not place_of(path)

    for rev in dict.fromkeys(revs[len(revs) * k // count] for k in range(count)):
        found, texts = snapshot_classes(repo, rev)
        package_text = "\n".join(t for p, t in texts.items() if in_package(p))

        for name, entries in found.items():
            for path, bases, own, local in entries:
                if not (place_of(path) or local):
                    continue
                line = [hit for base in bases for hit in lineage(found, base, in_package, set())]
                known = {method for _, methods_ in line for method in methods_}
                for method, at in own.items():
                    key = (path, name, method)
                    if (
                        not line
                        or method in known
                        or method.startswith(("__", "test"))
                        or method in skip
                        or key in seen
                    ):
                        continue
                    seen.add(key)
                    pattern = rf"def {method}\(|\b{method}\s*="
                    if re.search(pattern, package_text):
                        continue
                    files = sorted({p for p, _ in line})
                    log = git(
                        repo,
                        "log",
                        rev,
                        "--format=%h %ad %s",
                        "--date=short",
                        f"-Sdef {method}(",
                        "--",
                        *files,
                    ).splitlines()
                    if log:
                        where = ", ".join(place_of(path) + (["local"] if local else []))
                        yield (
                            f"left-behind       @{rev[:10]} {path}:{at} {name}.{method} [{where}]"
                            f"\n  ancestors' files: {', '.join(files)}"
                            + "".join(f"\n  -S: {entry}" for entry in log[:3])
                        )


def mine_messages(repo: str, rev: str, since: str | None) -> list[str]:
    args = [
        "log",
        "--no-merges",
        "-i",
        "-E",
        f"--grep={FIX_MESSAGES}",
        "--format=%h %ad %s",
        "--date=short",
        rev,
    ]
    if since:
        args.append(f"--since={since}")
    return git(repo, *args).splitlines()


def shapes(repo: str, rev: str, name: str) -> Iterator[str]:
    """Every ``def name`` at ``rev``: where, in which class (with its bases), and its parameters."""
    for path, at in definitions(repo, rev, name):
        func = function_at(repo, rev, path, at)
        if func is None:
            continue
        owner = enclosing_class(parse(repo, rev, path), at)
        where = f"{owner.name}({', '.join(base_names(owner))})" if owner else "<function>"
        yield f"{path}:{at} {where}: ({ast.unparse(func.args)})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("repo", help="a full-history clone")
    parser.add_argument("--rev", default="HEAD")
    parser.add_argument("--since", help="only commits after this date (git --since)")
    parser.add_argument("--max-commits", type=int)
    parser.add_argument(
        "--grep",
        metavar="REGEX",
        help="only commits whose message matches (extended, any case): e.g. "
        "'remove.*deprecat|rename' walks a long history's removals in minutes",
    )
    parser.add_argument("--messages", action="store_true", help="list fix-like commit messages")
    parser.add_argument("--traps", action="store_true", help="also print trap candidates")
    parser.add_argument("--limit", type=int, default=200, help="stop after N candidates")
    parser.add_argument(
        "--fixes", action="store_true", help="only commits that fix a stale override (by name)"
    )
    parser.add_argument(
        "--paths", nargs="+", help="only commits touching these pathspecs (the base files)"
    )
    parser.add_argument("--shape", metavar="NAME", help="list every def NAME at --rev and stop")
    parser.add_argument(
        "--composition",
        action="store_true",
        help="also calls through composition (receiver.NAME(...), the receiver's class unknown)",
    )
    parser.add_argument(
        "--outside",
        action="store_true",
        help="only candidates with an override in tests/, examples/, docs/, recipes/ or a "
        "function-local class (issue 23's classes), or proposed by the dispatch miner",
    )
    parser.add_argument(
        "--no-dispatch", action="store_true", help="leave out the callback-dispatch miner"
    )
    parser.add_argument(
        "--snapshots",
        type=int,
        metavar="N",
        help="instead of walking commits: overrides left behind in tests/examples/docs or "
        "local classes, at N first-parent snapshots (--paths names the package folders)",
    )
    options = parser.parse_args(argv)
    if options.shape:
        print("\n".join(shapes(options.repo, options.rev, options.shape)))
        return 0
    if options.messages:
        print("\n".join(mine_messages(options.repo, options.rev, options.since)))
        return 0
    if options.snapshots:
        for line in mine_snapshots(options.repo, options.snapshots, options.paths or [""]):
            print(line, flush=True)
        return 0
    count = 0
    for commit in commits(
        options.repo, options.rev, options.since, options.max_commits, options.paths, options.grep
    ):
        found = (
            (*mine_fixes(options.repo, commit), *mine_widened(options.repo, commit))
            if options.fixes
            else (
                *mine_removed(options.repo, commit),
                *mine_calls(options.repo, commit),
                *(mine_members(options.repo, commit) if options.composition else ()),
                *(() if options.no_dispatch else mine_dispatch(options.repo, commit)),
            )
        )
        for candidate in found:
            if candidate.kind.endswith("trap") and not options.traps:
                continue
            if options.outside and not (
                candidate.kind.startswith("dispatch")
                or any(OUTSIDE.search(where) for where in candidate.overrides)
            ):
                continue
            print(candidate.render(), flush=True)
            count += 1
        if count >= options.limit:
            break
    print(f"{count} candidates", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
