"""Old versions of files, parsed only as far as history evidence needs, in parallel.

History evidence asks of many old blobs one question first: did class ``C`` define method
``m`` in this version? Almost always the answer is no (the commit removed ``def m`` from
another class, or from a nested function), so a blob is first parsed with ``ast`` alone and
its statements walked for the (class name, method name) pairs it defines (:func:`def_pairs`).
Only a blob where some pair asked about is present gets the full extraction
(:func:`~hookguard.model.extract.extract`), whose verdict is the one used: the outline is a
superset of what extraction calls a method (any ``def`` directly in a class's scope, through
any compound statement), so it only ever rules out, never rules in.

Blobs that ``ast`` cannot parse (Python 2 files in an old history, say) go straight to full
extraction, which applies its own grammar repairs (and imports libcst for them, as the
loader's workers do for such files).
"""

from __future__ import annotations

import ast
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from hookguard.model.extract import extract, parse_quietly
from hookguard.model.records import ClassRecord

PARALLEL_THRESHOLD = 24  # fewer blobs than this are parsed in this process
_CHUNK = 4

_Scope = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_Def = (ast.FunctionDef, ast.AsyncFunctionDef)


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
    names: set[str] = set()
    stack: list[tuple[ast.AST, str]] = [(tree, "")]
    while stack:
        node, prefix = stack.pop()
        for child in _statements(node):
            if isinstance(child, ast.ClassDef):
                names.add(prefix + child.name)
                stack.append((child, f"{prefix}{child.name}."))
            elif isinstance(child, _Def):
                stack.append((child, f"{prefix}{child.name}.<locals>."))
            else:
                stack.append((child, prefix))
    return names


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


def classes_of(job: BlobJob) -> dict[str, ClassRecord] | None:
    """The blob's classes by qualname (:func:`extract`'s records), or None when its outline
    shows that none of ``job.probes`` is a method in it."""
    if job.probes is not None and b"\0" not in job.data:
        try:
            tree = parse_quietly(job.data, job.name)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass  # extraction repairs newer grammar, or records the error: let it decide
        else:
            if not job.probes & def_pairs(tree):
                return None
    record = extract(job.name, job.module, job.is_package, job.data)
    return {c.qualname: c for c in record.classes}


_In = TypeVar("_In")
_Out = TypeVar("_Out")


def parallel_map(
    function: Callable[[_In], _Out], items: Sequence[_In], workers: int | None = None
) -> list[_Out]:
    """``function`` over ``items`` in worker processes when there are enough to pay for them."""
    cpus = workers if workers is not None else (os.cpu_count() or 1)
    if len(items) < PARALLEL_THRESHOLD or cpus < 2:
        return [function(item) for item in items]
    import multiprocessing

    method = "fork" if sys.platform.startswith("linux") else None
    context = multiprocessing.get_context(method)
    with ProcessPoolExecutor(max_workers=min(cpus, len(items)), mp_context=context) as pool:
        return list(pool.map(function, items, chunksize=_CHUNK))
