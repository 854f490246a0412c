"""Old versions of files, parsed only as far as history evidence needs, in parallel.

History evidence asks of many old blobs one question first: did class ``C`` define method
``m`` in this version? Almost always the answer is no (the commit removed ``def m`` from
another class, or from a nested function), so a blob is first parsed with ``ast`` alone and
its statements walked for the (class name, method name) pairs it defines (:func:`def_pairs`).
Only a blob where some pair asked about is present gets the full extraction
(:func:`~hookguard.model.extract.extract`), whose verdict is the one used: the outline is a
superset of what extraction calls a method (any ``def`` directly in a class's scope, through
any compound statement), so it only ever rules out, never rules in.

Before ``ast``, a scan of the text alone (:func:`scan_pairs`) rules most blobs out at a tenth
of the cost: strings and comments blanked by one regular expression, then every ``class`` and
``def`` line with its indentation. It pairs each ``def`` with *every* class still open above it
(not only the nearest scope), so it holds every pair :func:`def_pairs` finds, and it gives up
(None: ``ast`` decides, as before) on anything its reading of the text could get wrong.

Blobs that ``ast`` cannot parse (Python 2 files in an old history, say) go to full
extraction unless the scan rules them out, which applies its own grammar repairs (and imports
libcst for them, as the loader's workers do for such files).
"""

from __future__ import annotations

import ast
import os
import re
import sys
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from hookguard.git.repo import BlobReader
from hookguard.model.extract import dotted_name, extract, parse_quietly
from hookguard.model.records import ClassRecord

PARALLEL_THRESHOLD = 24  # fewer blobs than this are parsed in this process

_Scope = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_Def = (ast.FunctionDef, ast.AsyncFunctionDef)


# Comments and string literals (any prefix: it never changes where a literal ends), so that
# a quote in a comment or a ``class`` line in a docstring is not read as code.
_TEXT = re.compile(
    rb"#[^\n]*"
    rb"|'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''"
    rb'|"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""'
    rb"|'[^'\\\n]*(?:\\.[^'\\\n]*)*'"
    rb'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"',
    re.DOTALL,
)
# A ``class`` or ``def`` statement: always the first thing on its line.
_HEAD = re.compile(rb"^([ \t]*)(?:(class)|(?:async[ \t]+)?def)\b(.*)", re.MULTILINE)
_HEAD_NAME = re.compile(rb"[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*[(:\[]")
_SPLIT_HEAD = re.compile(rb"^[ \t]*(?:async|def|class)[ \t]*\\$", re.MULTILINE)


def scan_pairs(data: bytes) -> set[tuple[str, str]] | None:
    """(class name, method name) for every ``def`` with a class open above it in ``data``,
    read from the text alone: a superset of :func:`def_pairs` (and of the methods extraction
    sees), or None where the text is not plainly readable (an unterminated or unusual string,
    a form feed, a head split over lines, a name that is not ASCII): then ``ast`` decides.

    Every class whose block holds a ``def`` is still open at that ``def`` (every statement
    between them is indented deeper than the class), so pairing the ``def`` with all open
    classes, rather than finding its nearest scope, needs no other statement than the heads.
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    code = _TEXT.sub(b" ", data)
    if (b"'" in code or b'"' in code or b"\f" in code or b"\v" in code
            or _SPLIT_HEAD.search(code)):
        return None
    pairs: set[tuple[str, str]] = set()
    open_scopes: list[tuple[int, str | None]] = []  # (indentation, class name or None)
    for head in _HEAD.finditer(code):
        name = _HEAD_NAME.match(head.group(3))
        if name is None:
            return None
        width = len(head.group(1).expandtabs(8))
        while open_scopes and open_scopes[-1][0] >= width:
            open_scopes.pop()
        text = name.group(1).decode("ascii")
        if head.group(2):
            open_scopes.append((width, text))
        else:
            pairs.update((owner, text) for _, owner in open_scopes if owner is not None)
            open_scopes.append((width, None))
    return pairs


def def_pairs(tree: ast.Module) -> set[tuple[str, str]]:
    """(class name, method name) for every ``def`` whose nearest enclosing scope is a class,
    through any compound statement in the class body."""
    pairs: set[tuple[str, str]] = set()
    stack: list[tuple[ast.AST, str | None]] = [(tree, None)]
    while stack:
        node, owner = stack.pop()
        for child in _statements(node):
            if isinstance(child, _Def):
                if owner is not None:
                    pairs.add((owner, child.name))
                stack.append((child, None))
            elif isinstance(child, ast.ClassDef):
                stack.append((child, child.name))
            else:
                stack.append((child, owner))
    return pairs


def class_qualnames(tree: ast.Module) -> set[str]:
    """Qualified names of the classes ``tree`` defines, through any compound statement, with
    ``<locals>`` for those a function or method defines (as :func:`extract` names them)."""
    return set(class_methods(tree))


def class_methods(tree: ast.Module) -> dict[str, set[str]]:
    """The classes ``tree`` defines, by qualified name (as :func:`class_qualnames`), each with
    the names of the methods its own body defines, through any compound statement."""
    return {qualname: methods for qualname, (_, methods) in _classes(tree).items()}


def class_bases(tree: ast.Module) -> dict[str, set[str]]:
    """The classes ``tree`` defines, by qualified name (as :func:`class_methods`), each with
    the dotted names of its bases (``pkg.Base`` of ``pkg.Base[T]``; a base that is no dotted
    name is left out)."""
    return {qualname: {n for n in map(dotted_name, node.bases) if n}
            for qualname, (node, _) in _classes(tree).items()}


def _classes(tree: ast.Module) -> dict[str, tuple[ast.ClassDef, set[str]]]:
    """Each class ``tree`` defines, by qualified name: its node and its own methods' names."""
    found: dict[str, tuple[ast.ClassDef, set[str]]] = {}
    stack: list[tuple[ast.AST, str, str | None]] = [(tree, "", None)]  # node, prefix, class
    while stack:
        node, prefix, owner = stack.pop()
        for child in _statements(node):
            if isinstance(child, ast.ClassDef):
                qualname = prefix + child.name
                found.setdefault(qualname, (child, set()))
                stack.append((child, f"{qualname}.", qualname))
            elif isinstance(child, _Def):
                if owner is not None:
                    found[owner][1].add(child.name)
                stack.append((child, f"{prefix}{child.name}.<locals>.", None))
            else:
                stack.append((child, prefix, owner))
    return found


def _statements(node: ast.AST) -> Iterator[ast.stmt]:
    """The statements directly in ``node``'s blocks (bodies, ``else``, handlers, cases)."""
    for field in ("body", "orelse", "finalbody"):
        block = getattr(node, field, None)
        if isinstance(block, list):
            yield from (s for s in block if isinstance(s, ast.stmt))
    for handler in getattr(node, "handlers", None) or ():
        yield from handler.body
    for case in getattr(node, "cases", None) or ():
        yield from case.body


@dataclass(frozen=True, slots=True)
class BlobJob:
    """One old blob to parse. ``probes``: the (class name, method name) pairs asked about;
    None parses it fully."""

    name: str  # a ``rev:path`` spec, for messages only
    module: str
    is_package: bool
    data: bytes
    probes: frozenset[tuple[str, str]] | None = None
    when: int = 0  # the version's commit time, or a later one (0: unknown)
    # whether source the running parser rejects may be newer Python worth repairing; a piece
    # cut out of a file (a class, its methods naming a hook) that does not parse was cut short
    repair: bool = True


# When the first alpha of each Python came out: no version committed half a year before the
# next Python's first alpha can hold its new syntax, so a version older than that which the
# running ``ast`` rejects is old Python (Python 2 in a long history), not worth repairing.
_FIRST_ALPHA = {11: 1633392000, 12: 1666656000, 13: 1697155200, 14: 1728950400,
                15: 1760400000}
_HALF_YEAR = 183 * 86400


def newer_grammar_possible(when: int) -> bool:
    """Whether a version committed at ``when`` (0: unknown) may use Python newer than this
    interpreter's."""
    alpha = _FIRST_ALPHA.get(sys.version_info.minor + 1)
    return when == 0 or alpha is None or when >= alpha - _HALF_YEAR


def outline_of(job: BlobJob) -> set[tuple[str, str]] | None:
    """A superset of the (class name, method name) pairs the blob defines: the text scan, or
    where it gives up the ``ast`` outline; None when neither can read it (extraction, which
    repairs newer grammar, decides). A binary blob defines nothing."""
    if b"\0" in job.data:
        return set()
    scanned = scan_pairs(job.data)
    if scanned is not None:
        return scanned
    try:
        tree = parse_quietly(job.data, job.name)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return def_pairs(tree)


def classes_of(job: BlobJob) -> dict[str, ClassRecord] | None:
    """The blob's classes by qualname (:func:`extract`'s records), or None when its outline
    shows that none of ``job.probes`` is a method in it."""
    if job.probes is not None:
        pairs = outline_of(job)
        if pairs is not None and not job.probes & pairs:
            return None
    record = extract(job.name, job.module, job.is_package, job.data, classes_only=True,
                     newer_grammar=job.repair and newer_grammar_possible(job.when))
    return {c.qualname: c for c in record.classes}


# ``def <name>`` anywhere (a literal prefix: the regular expression engine skips to each
# ``def``); a line that starts in column 0 (the position after its newline); a class head.
_DEF_NAME = re.compile(rb"def[ \t]+([A-Za-z_][A-Za-z0-9_]*)")
_TOP_LINE = re.compile(rb"\n(?=[^ \t\r\n\f#])")
_CLASS_HEAD = re.compile(rb"class[ \t]+([A-Za-z_][A-Za-z0-9_]*)")
_NOT_TOP = (b"", b" ", b"\t", b"\r", b"\n", b"\f", b"#")

DefOwners = dict[bytes, dict[bytes, int]]


@lru_cache(maxsize=256)
def _class_head(name: str) -> re.Pattern[bytes]:
    # (a literal first: ``re`` searches for it in C; the line start is checked after)
    return re.compile(rb"class[ \t]+" + re.escape(name.encode()) + rb"\b")


def class_segment(data: bytes, name: str) -> bytes | None:
    """The text of the top-level class ``name`` in ``data`` (from its ``class`` line at
    column 0 to the next line that starts in column 0), or None when there is no such line
    or more than one. What it holds can be parsed alone: a line of the class that starts in
    column 0 (a string's continuation) cuts it short, and then the parse fails."""
    heads = [m for m in _class_head(name).finditer(data)
             if m.start() == 0 or data[m.start() - 1] == 10]  # (at a line's start: b"\n")
    if len(heads) != 1:
        return None
    start = heads[0].start()
    following = _TOP_LINE.search(data, heads[0].end())
    return data[start:following.start() + 1 if following else len(data)]


_DEF_WORD = re.compile(rb"def[ \t]")
_DEF_INDENT = re.compile(rb"([ \t]+)(?:async[ \t]+)?")


def _def_indents(segment: bytes) -> set[bytes]:
    """The indentations of the indented ``def`` lines (``async def`` too) in ``segment``:
    each ``def`` found by its word (a search ``re`` runs in C), kept where only blanks (and
    ``async``) precede it on its line."""
    indents = set()
    for match in _DEF_WORD.finditer(segment):
        at = match.start()
        head = _DEF_INDENT.fullmatch(segment, segment.rfind(b"\n", 0, at) + 1, at)
        if head is not None:
            indents.add(head.group(1))
    return indents


def methods_naming(segment: bytes, word: str) -> bytes | None:
    """``segment`` (a class's text, :func:`class_segment`) cut down to its head and the
    blocks of its body (a method with its decorators, or any other statement) whose text
    holds ``word`` as a word, or None where the body's indentation cannot be told. What a
    rule asks about a hook's calls and its override is in those blocks; the rest of a large
    class need not be parsed (sympy's ``StrPrinter``: hundreds of versions).

    Read as bytes: a block starts at a line (not the first) indented exactly as the body's
    shallowest ``def`` and not blank or a comment; each piece kept is whole lines, joined by
    newlines, with ``pass`` after the last (a body left empty stays a class)."""
    indents = _def_indents(segment)
    if not indents:
        return None
    body = min(indents, key=len)
    starts = [m.start() + 1 for m in
              re.finditer(rb"\n" + re.escape(body) + rb"[^ \t#\n]", segment)]
    if not starts:
        return None
    pattern = re.compile(rb"\b" + re.escape(word.encode()) + rb"\b")
    kept = [segment[:starts[0] - 1]]
    first: int | None = None  # where the decorators before a block began
    for index, start in enumerate(starts):
        end = starts[index + 1] - 1 if index + 1 < len(starts) else len(segment)
        if segment.startswith(b"@", start + len(body)):
            first = start if first is None else first  # (it goes with the block that follows)
            continue
        block = segment[start if first is None else first:end]
        first = None
        if pattern.search(block):
            kept.append(block)
    kept.append(body + b"pass")
    return b"\n".join(kept) + b"\n"


def def_owners(data: bytes, names: frozenset[bytes]) -> DefOwners:
    """For each of ``names`` that a ``def`` statement in ``data`` defines: how many such
    statements there are under each top-level class, read from the text alone (the class
    head nearest above the statement among the lines that start in column 0; b"" when that
    line is not a class head: a module-level function, or code outside classes).

    A cheap, deliberately coarse reading of a version, for telling which commits may have
    taken a method from a class: a def whose count under a class goes down. A signature
    edited or a method moved within its class changes no count; moving one to another class
    does. Anything finer (nested classes, which class exactly) is left to the extraction
    that verifies each such commit."""
    return DefCounter(names).count(data)


class DefCounter:
    """:func:`def_owners` of one file's versions, one after another: each version is read
    only where it differs from the one before (from the first line that differs to the last),
    the lines before and after kept from the version before, positions shifted. A file's
    consecutive versions differ in a quarter of their bytes on sympy's history, on average.

    Exact by construction: both readings are of whole lines (a ``def`` or a class head never
    spans one), so the lines outside the differing span give the same column-0 lines and the
    same ``def`` statements in both versions, in the same order."""

    def __init__(self, names: frozenset[bytes]) -> None:
        self.names = names
        self.data = b""
        self.tops: list[int] = []  # the lines that start in column 0
        self.heads: list[bytes] = []  # each one's class name, or b"" (not a class head)
        self.defs: list[tuple[int, int, bytes]] = []  # (line, ``def`` position, name)

    def count(self, data: bytes) -> DefOwners:
        before = self.data
        if before:
            start, old_end, new_end = _changed_lines(before, data)
        else:
            start, old_end, new_end = 0, 0, len(data)
        shift = new_end - old_end
        cut = bisect_left(self.tops, start)
        tail = bisect_left(self.tops, old_end)
        tops, heads = self._tops(data, start, new_end)
        self.tops = [*self.tops[:cut], *tops, *(t + shift for t in self.tops[tail:])]
        self.heads = [*self.heads[:cut], *heads, *self.heads[tail:]]
        cut = bisect_left(self.defs, (start,))
        tail = bisect_left(self.defs, (old_end,))
        self.defs = [*self.defs[:cut], *self._defs(data, start, new_end),
                     *((line + shift, at + shift, name) for line, at, name in self.defs[tail:])]
        self.data = data
        found: DefOwners = {}
        for line, at, name in self.defs:
            owner = b""
            if line != at:
                index = bisect_left(self.tops, line) - 1
                if index >= 0:
                    owner = self.heads[index]
            counts = found.setdefault(name, {})
            counts[owner] = counts.get(owner, 0) + 1
        return found

    @staticmethod
    def _tops(data: bytes, start: int, end: int) -> tuple[list[int], list[bytes]]:
        """The column-0 lines that start in ``data[start:end]`` (whole lines), with heads."""
        tops = [m.end() for m in _TOP_LINE.finditer(data, max(start - 1, 0), end)]
        if start == 0 and data[:1] not in _NOT_TOP:
            tops.insert(0, 0)
        heads = []
        for top in tops:
            head = _CLASS_HEAD.match(data, top)
            heads.append(head.group(1) if head is not None else b"")
        return tops, heads

    def _defs(self, data: bytes, start: int, end: int) -> list[tuple[int, int, bytes]]:
        """The ``def`` statements of the wanted names in ``data[start:end]`` (whole lines)."""
        names = self.names
        found = []
        for match in _DEF_NAME.finditer(data, start, end):
            name = match.group(1)
            if name not in names:
                continue
            at = match.start()
            line = data.rfind(b"\n", 0, at) + 1
            if data[line:at].strip(b" \t") in (b"", b"async"):  # else a comment, a string,
                found.append((line, at, name))  # after other code
        return found


def _changed_lines(old: bytes, new: bytes) -> tuple[int, int, int]:
    """Where ``new`` differs from ``old``, in whole lines: the start of the first line that
    differs, and the end of the last one in each (both end before the same unchanged lines)."""
    most = min(len(old), len(new))
    same = _common(old, new, most, 0)
    tail = _common(old, new, most - same, 1)
    start = old.rfind(b"\n", 0, same) + 1
    # the first line that starts inside the common tail (its newline in the tail too)
    newline = old.find(b"\n", len(old) - tail)
    old_end = newline + 1 if newline >= 0 else len(old)
    return start, old_end, old_end + len(new) - len(old)


def _common(old: bytes, new: bytes, most: int, backwards: int) -> int:
    """How many bytes ``old`` and ``new`` share at their start (``backwards``: at their end),
    at most ``most``: compared in blocks that double while they agree; the first that does not
    is halved down to 256 bytes, where the first byte that differs is the highest set bit of
    the two read as one number each, exclusive-or'ed (a few calls into C, no byte loop)."""
    end_old, end_new = len(old), len(new)

    def block(at: int, size: int) -> tuple[bytes, bytes]:
        if backwards:
            return (old[end_old - at - size:end_old - at],
                    new[end_new - at - size:end_new - at])
        return old[at:at + size], new[at:at + size]

    done, step = 0, 4096
    while done < most:
        size = min(step, most - done)
        a, b = block(done, size)
        if a == b:
            done += size
            step = min(step * 2, 1 << 16)
            continue
        while size > 256:
            half = size // 2
            a, b = block(done, half)
            if a == b:
                done, size = done + half, size - half
            else:
                size = half
        a, b = block(done, size)
        order: Literal["big", "little"] = "little" if backwards else "big"
        differ = int.from_bytes(a, order) ^ int.from_bytes(b, order)
        return done + (size * 8 - differ.bit_length()) // 8
    return done


@dataclass(frozen=True, slots=True)
class DefScan:
    """Blobs of one repository to read with :func:`def_owners`: each with the index of its
    names in ``names``."""

    root: str
    blobs: tuple[tuple[str, int], ...]
    names: tuple[frozenset[bytes], ...]
    max_size: int


def scan_defs(job: DefScan) -> list[tuple[str, DefOwners | int]]:
    """:func:`def_owners` of each blob of ``job``, read through this process's ``git cat-file
    --batch`` for the repository (in a worker process: only the small answers travel back);
    for a blob the repository lacks, -1, and for one over ``job.max_size``, its size."""
    reader = _reader(job.root)
    read = reader.read([blob for blob, _ in job.blobs], job.max_size)
    counters: dict[int, DefCounter] = {}  # a file's versions come in a row, newest first
    found: list[tuple[str, DefOwners | int]] = []
    for (blob, names), (_, data, size) in zip(job.blobs, read, strict=True):
        if data is None:
            found.append((blob, size))
            continue
        counter = counters.get(names)
        if counter is None:
            counter = counters[names] = DefCounter(job.names[names])
        found.append((blob, counter.count(data)))
    return found


_READERS: dict[str, BlobReader] = {}
_FINALIZED: set[int] = set()  # the processes that end their readers on exit


def _reader(root: str) -> BlobReader:
    """This process's reader of ``root``'s objects, kept for the jobs after this one (a
    worker's lives as long as the worker; its git ends when the worker does)."""
    reader = _READERS.get(root)
    if reader is None or reader.pid != os.getpid() or reader.broken:
        if os.getpid() not in _FINALIZED:
            # A worker process ends through multiprocessing's exit, which runs these (not
            # atexit's): its git is waited for, and counted in its resource usage.
            from multiprocessing.util import Finalize

            Finalize(None, close_readers, exitpriority=10)
            _FINALIZED.add(os.getpid())
        reader = _READERS[root] = BlobReader(Path(root))
    return reader


def close_readers() -> None:
    """End this process's readers (and their git processes)."""
    for root in [r for r, reader in _READERS.items() if reader.pid == os.getpid()]:
        _READERS.pop(root).close()
