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
from dataclasses import dataclass, replace

from hookguard.model.extract import parse_quietly


@dataclass(frozen=True, slots=True)
class KeywordUse:
    method: str
    keyword: str
    line: int
    col: int
    # Under ``if "keyword" in inspect.getfullargspec(obj.method).args:`` or any test naming the
    # keyword as a string: the code expects callees that do not take it.
    guarded: bool = False
    # Under ``if hasattr(module, "method"):``: any object with the method, no family in mind.
    duck: bool = False
    function: str | None = None  # the innermost function or method the call is in
    holder: str | None = None  # that method's class (qualname), when it is a method
    member: str | None = None  # ``self.<member>.method(...)`` in a method


@dataclass(frozen=True)
class _Context:
    guards: frozenset[str] = frozenset()
    classes: tuple[str, ...] = ()  # enclosing class names, outermost first
    function: str | None = None
    in_method: bool = False  # the function is defined directly in a class body


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
    stack: list[tuple[ast.AST, _Context]] = [(tree, _Context())]
    while stack:
        node, context = stack.pop()
        if isinstance(node, (ast.If, ast.IfExp, ast.While)):
            inner = replace(context, guards=context.guards | _strings(node.test))
            branches = node.body if isinstance(node.body, list) else [node.body]
            stack.extend((child, inner) for child in branches)
            stack.append((node.test, context))
            orelse = node.orelse if isinstance(node.orelse, list) else [node.orelse]
            stack.extend((child, context) for child in orelse)
            continue
        if isinstance(node, ast.ClassDef):
            inner = replace(context, classes=(*context.classes, node.name), function=None)
            stack.extend((child, inner) for child in ast.iter_child_nodes(node))
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            in_method = context.function is None and bool(context.classes)
            inner = replace(context, function=node.name, in_method=in_method)
            stack.extend((child, inner) for child in ast.iter_child_nodes(node))
            continue
        stack.extend((child, context) for child in ast.iter_child_nodes(node))
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        name, receiver = node.func.attr, node.func.value
        if name not in methods or _is_own(receiver):
            continue
        member = (receiver.attr if isinstance(receiver, ast.Attribute)
                  and isinstance(receiver.value, ast.Name) and receiver.value.id == "self"
                  else None)
        holder = ".".join(context.classes) if context.in_method else None
        found.extend(
            KeywordUse(name, keyword.arg, node.lineno, node.col_offset + 1,
                       keyword.arg in context.guards, name in context.guards,
                       context.function, holder, member if holder else None)
            for keyword in node.keywords if keyword.arg is not None)
    return found


def _strings(test: ast.expr) -> frozenset[str]:
    return frozenset(n.value for n in ast.walk(test)
                     if isinstance(n, ast.Constant) and isinstance(n.value, str))


def _is_own(receiver: ast.expr) -> bool:
    """``self``/``cls``/``super()``: calls the model already binds."""
    if isinstance(receiver, ast.Name):
        return receiver.id in ("self", "cls")
    return (isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name)
            and receiver.func.id == "super")
