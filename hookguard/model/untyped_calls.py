"""Keywords passed to methods through receivers the model does not type.

The model keeps calls on ``self``, ``cls``, ``super()`` and typed members (see
:mod:`hookguard.model.extract`). ``model.load_state_dict(sd, args=args)`` on a local, a
subscript or a call result is not kept: what it calls is not known. ``check`` reads these for
the few files a change touched (:func:`hookguard.gate.passed_keywords`): a keyword the change
passes to a hook it also taught the base to accept says which family the call is for.
"""

from __future__ import annotations

import ast
from collections.abc import Collection
from dataclasses import dataclass

from hookguard.model.extract import parse_quietly


@dataclass(frozen=True, slots=True)
class KeywordUse:
    method: str
    keyword: str
    line: int
    col: int


def keyword_uses(data: bytes, path: str, methods: Collection[str]) -> list[KeywordUse]:
    """``<receiver>.<method>(..., keyword=...)`` in ``data`` for ``methods``, where the receiver
    is not ``self``, ``cls`` or ``super()``. A file that does not parse has none."""
    if not any(name.encode() in data for name in methods):
        return []
    try:
        tree = parse_quietly(data, path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    found: list[KeywordUse] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr not in methods or _is_own(node.func.value):
            continue
        found.extend(KeywordUse(node.func.attr, keyword.arg, node.lineno, node.col_offset + 1)
                     for keyword in node.keywords if keyword.arg is not None)
    return found


def _is_own(receiver: ast.expr) -> bool:
    """``self``/``cls``/``super()``: calls the model already binds."""
    if isinstance(receiver, ast.Name):
        return receiver.id in ("self", "cls")
    return (isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name)
            and receiver.func.id == "super")
