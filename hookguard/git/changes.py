"""What history tells about a hook: the change that removed or renamed it, and how a removed
method is paired with the one that replaced it.

Kept apart from :mod:`hookguard.git.history` (which walks git, with worker pools) so that the
rules, the cache and the gate can name a change without importing the walk.
"""

from __future__ import annotations

import os
import re
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from hookguard.git.repo import GitError, Repo
from hookguard.model.extract import SKETCH_SIZE
from hookguard.model.records import ClassRecord, MethodRecord, ParamKind

RENAME_THRESHOLD = 0.4


@dataclass(frozen=True, slots=True)
class HookChange:
    """A method that left a class: removed, or renamed to ``new``."""

    class_fq: str
    old: str
    new: str | None
    commit: str
    short: str
    subject: str
    path: str  # the file the class lived in at that commit
    was_called: bool = True  # its file called it on ``self`` before: it was a hook
    when: int = 0  # commit time (seconds since the epoch); 0 when unknown
    # Still defined, but the class now calls it as ``Class.name(...)``, not through ``self``:
    # overrides are no longer dispatched to (``check`` only).
    undispatched: bool = False
    # The change itself added the name as a string in another file (a validator that refuses
    # overrides of the removed hook): that lookup keeps no override alive (``check`` only).
    refused: bool = False
    # The class that defined the hook, when not ``class_fq`` (an override whose bases the change
    # replaced: ``class_fq`` is its new nearest base, which never had the hook; ``check`` only).
    owner: str = ""
    # An optional hook, never defined by the class: it called the name on ``self`` where
    # ``hasattr(self, "name")`` said a subclass has it, and no longer does (``check`` only).
    probed: bool = False

    @property
    def kind(self) -> str:
        if self.undispatched:
            return "undispatched"
        if self.probed:
            return "unprobed"
        return "renamed" if self.new else "removed"

    def describe(self) -> str:
        what = f"renamed to {self.new}" if self.new else "removed"
        if self.undispatched:
            what = "no longer called through self"
        elif self.probed:
            what = "no longer called (an optional hook the class probed with hasattr)"
        return f"{what} in {self.short} ({self.subject})"



def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _sketch(digest: bytes) -> set[int]:
    return set(array("I", digest))


def method_similarity(
    old: MethodRecord, new: MethodRecord, before: ClassRecord, after: ClassRecord
) -> float:
    """How likely ``new`` is ``old`` under a new name: body, parameters and call sites."""
    old_lines, new_lines = _sketch(old.body_digest), _sketch(new.body_digest)
    # Bottom-k estimate of the Jaccard similarity of the two bodies.
    union = sorted(old_lines | new_lines)[:SKETCH_SIZE]
    body = sum(1 for h in union if h in old_lines and h in new_lines) / max(len(union), 1)
    old_params = {p.name for p in old.bound_params if p.kind is not ParamKind.VAR_KEYWORD}
    new_params = {p.name for p in new.bound_params if p.kind is not ParamKind.VAR_KEYWORD}
    params = (
        1.0
        if not old_params and not new_params
        else len(old_params & new_params) / len(old_params | new_params)
    )
    callers_old = {m.name for m in before.methods.values() if any(
        c.name == old.name and c.receiver in ("self", "cls") for c in m.calls)}
    callers_new = {m.name for m in after.methods.values() if any(
        c.name == new.name and c.receiver in ("self", "cls") for c in m.calls)}
    callers = 1.0 if callers_old & callers_new else 0.0
    return 0.5 * body + 0.2 * params + 0.5 * callers


def pair_renames(
    before: ClassRecord, after: ClassRecord, removed: Iterable[str]
) -> dict[str, str | None]:
    """Pair removed methods with added ones, one to one, best matches first.

    Dunder methods are never paired, and a pair needs a score of at least
    :data:`RENAME_THRESHOLD`; everything else counts as removed.
    """
    olds = [before.methods[n] for n in removed if n in before.methods and not _is_dunder(n)]
    added = [m for n, m in after.methods.items() if n not in before.methods and not _is_dunder(n)]
    scored = sorted(
        ((method_similarity(old, new, before, after), old.name, new.name)
         for old in olds for new in added),
        key=lambda item: (-item[0], item[1], item[2]),
    )
    pairs: dict[str, str | None] = {name: None for name in removed}
    taken: set[str] = set()
    for score, old_name, new_name in scored:
        if score < RENAME_THRESHOLD:
            break
        if pairs.get(old_name) is None and new_name not in taken:
            pairs[old_name] = new_name
            taken.add(new_name)
    return pairs


_NOT_FRAMEWORK = frozenset({b"test", b"tests", b"testing", b"example", b"examples", b"doc",
                            b"docs", b"benchmarks"})
_NEW_PATH = re.compile(rb'^\+\+\+ "?b/(.*?)"?$', re.MULTILINE)
_OLD_PATH = re.compile(rb'^--- "?a/(.*?)"?$', re.MULTILINE)
_HUNK = re.compile(rb"^@@ -(\d+)")


def _chunk_path(chunk: bytes) -> bytes | None:
    """The path a patch chunk is about: its new one, or its old one for a file it deletes."""
    header = _NEW_PATH.search(chunk) or _OLD_PATH.search(chunk)
    return header.group(1) if header is not None else None


def framework_path(path: bytes) -> bool:
    """A file of the framework's own code: not a test, an example or documentation."""
    parts = path.split(b"/")
    name = parts[-1]
    return not (any(p in _NOT_FRAMEWORK for p in parts[:-1]) or name.startswith(b"test_")
                or name.endswith(b"_test.py")
                or name in (b"conftest.py", b"tests.py", b"test.py"))  # (as is_test_file)


def renamed_dispatch(patch: bytes, name: str, new: str) -> bool:
    """Whether ``patch`` (``git diff -p``), which renames the hook ``name`` to ``new``, also
    renames a call of it on one object in the framework's own code (not tests, examples or
    docs): a dispatch over the objects it holds (``for cb in self.callbacks:
    cb.on_epoch_end(...)`` becoming ``cb.on_train_epoch_end(...)``) switched names, so the
    name was a hook the framework called."""
    old_call = re.compile(rb"^-.*?\b([A-Za-z_]\w*)\." + re.escape(name.encode()) + rb"\(",
                          re.MULTILINE)
    for chunk in patch.split(b"\ndiff --git"):
        path = _chunk_path(chunk)
        if path is None or not framework_path(path):
            continue
        for match in old_call.finditer(chunk):
            receiver = match.group(1)
            if receiver in (b"self", b"cls", b"super"):
                continue  # (calls on the instance are read from the model)
            renamed = re.compile(rb"^\+.*?\b" + re.escape(receiver) + rb"\."
                                 + re.escape(new.encode()) + rb"\(", re.MULTILINE)
            if renamed.search(chunk):
                return True
    return False


_DEF_NAME_LINE = re.compile(rb"(?:async[ \t]+)?def[ \t]+([A-Za-z_][A-Za-z0-9_]*)")


def def_around(data: bytes, line: int) -> bytes | None:
    """The name of the innermost ``def`` around ``line`` (1-based) of the source ``data``, by
    indentation, or None."""
    if not 0 < line <= data.count(b"\n") + 1:
        return None
    lines = data.split(b"\n")
    target = lines[line - 1]
    indent = len(target) - len(target.lstrip())
    for above in reversed(lines[:line - 1]):
        stripped = above.lstrip()
        depth = len(above) - len(stripped)
        if stripped and not stripped.startswith(b"#") and depth < indent:
            found = _DEF_NAME_LINE.match(stripped)
            if found is not None:
                return found.group(1)
            indent = depth
    return None


def enclosing_def(repo: Repo, revision: str, path: bytes, line: int) -> bytes | None:
    """The name of the innermost ``def`` around ``line`` of ``path`` at ``revision`` (read by
    indentation, :func:`def_around`), or None: the method a patch's hunk was in where the
    patch (no context) does not show it."""
    spec = f"{revision}:{os.fsdecode(path)}"
    try:
        data = repo.read_blobs([spec]).get(spec)
    except (GitError, ValueError):
        return None
    return def_around(data, line) if data is not None else None


def dropped_dispatch(
    patch: bytes, name: str,
    enclosing: Callable[[bytes, int], bytes | None] = lambda _path, _line: None,
) -> bool:
    """Whether ``patch`` (``git diff -p -U0``), which removes the hook ``name``, also removes a
    call of it on each object of a collection the framework's own code walked (not tests,
    examples or docs): the removed lines bind the receiver by a ``for`` (a loop or a
    comprehension) and call ``name`` on it, outside a method of that name, and no added line
    of that file calls it so again (a moved block). Sphinx's ``max(cls for cls in
    registry.documenters.values() if cls.can_document_member(...))`` asked every registered
    documenter; dropped with the hook, the overrides left in a tutorial and a test are asked
    no more (issue 23). Inside ``def name`` the loop forwards the method to the objects it
    holds (qutip's ``add_feedback``: ``for c_op in self.c_ops: c_op.add_feedback(...)``),
    which says nothing about who calls it; ``enclosing`` names the method where the hunk
    does not show it, as for :func:`forwarded_member_call`."""
    call = re.compile(rb"^-.*?\b([A-Za-z_]\w*)\." + re.escape(name.encode()) + rb"\(")
    own = name.encode()
    for chunk in patch.split(b"\ndiff --git"):
        path = _chunk_path(chunk)
        if path is None or not framework_path(path):
            continue
        for _, match in _removed_calls(chunk, call, own, enclosing):
            receiver = re.escape(match.group(1))  # (``cls`` too: a comprehension's name)
            walked = re.search(rb"^-.*\bfor\s+" + receiver + rb"\s+in\b", chunk, re.MULTILINE)
            kept = re.search(rb"^\+.*\b" + receiver + rb"\." + re.escape(own) + rb"\(",
                             chunk, re.MULTILINE)
            if walked and not kept:
                return True
    return False


_DEF_LINE = re.compile(rb"^[-+ ]?\s*(?:async\s+)?def\s+([A-Za-z_]\w*)")


def forwarded_member_call(
    patch: bytes, name: str,
    enclosing: Callable[[bytes, int], bytes | None] = lambda _path, _line: None,
) -> bool:
    """Whether ``patch`` (``git diff -p -U0``) removes a call of ``name`` through an object
    the instance holds (``self.policy.name(...)``) outside a method of that name: the
    framework's own code (not a test, an example or docs) calling a hook. Inside ``def name``
    the call is a wrapper forwarding
    its own method to the wrapped object (``def set_attr(...): return
    self.env.set_attr(...)``), which says nothing about whether anything calls it (first
    contact, round 3). Where the hunk does not show the ``def`` (no context), ``enclosing``
    (old path, old line number) names the method the line was in, from the old version
    (CKAN's ``before_fork`` forwarding to ``self.backend.before_fork()``, round 15). A line the
    same file's patch adds back, moved or re-indented, removes no call."""
    member = re.compile(rb"^-.*\bself(?:\.\w+)+\." + re.escape(name.encode()) + rb"\(")
    own = name.encode()
    for chunk in patch.split(b"\ndiff --git"):
        path = _chunk_path(chunk)
        if path is not None and not framework_path(path):
            continue  # a test's self.driver.name() uses an API (libcloud, round 6)
        # A line the commit writes back in the same file was moved or re-indented: it still
        # calls (ldap3's ``self.connection.search(...)``, moved with its class: round 22).
        kept = {line[1:].strip() for line in chunk.split(b"\n")
                if line.startswith(b"+") and not line.startswith(b"+++")}
        if any(line[1:].strip() not in kept
               for line, _ in _removed_calls(chunk, member, own, enclosing)):
            return True
    return False


def _removed_calls(
    chunk: bytes, pattern: re.Pattern[bytes], own: bytes,
    enclosing: Callable[[bytes, int], bytes | None],
) -> Iterator[tuple[bytes, re.Match[bytes]]]:
    """The lines of one file's ``-U0`` patch ``chunk`` that ``pattern`` matches, with the
    match, outside a method named ``own`` (a method forwarding itself calls no hook): the
    method is the nearest ``def`` the hunk shows, or where it shows none, the one
    ``enclosing`` (old path, old line number) reads from the old version."""
    old = _OLD_PATH.search(chunk)
    current: bytes | None = None  # the method the hunk's lines are in, where it says
    line_no = 0  # the old version's number of the next removed line
    for line in chunk.split(b"\n"):
        if line.startswith(b"@@"):
            current = None
            hunk = _HUNK.match(line)
            line_no = int(hunk.group(1)) if hunk else 0
            continue
        definition = _DEF_LINE.match(line)
        if definition is not None:
            current = definition.group(1)
        elif current != own and (match := pattern.match(line)) is not None and (
                current is not None or old is None
                or enclosing(old.group(1), line_no) != own):
            yield line, match
        if line.startswith(b"-") and not line.startswith(b"---"):
            line_no += 1
