"""Early exits that every instance of a class takes: the calls after them never run.

``maybe_free_model_hooks`` returns first thing ``if not hasattr(self, "_all_hooks") or
len(self._all_hooks) == 0``; in a subclass that replaces the only method that fills
``_all_hooks``, that test is always true, and the call after it never runs. Likewise a skip
``if self.shapes is None`` where ``shapes`` is a property returning ``None`` that nothing in the
class's line replaces. Anything hookguard cannot read this way (another form of test, a field
set outside the class, a base outside the checkout) counts as a path the call may take.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from enum import Enum

from hookguard.model.project import ClassInfo, Project
from hookguard.model.reach import running_methods
from hookguard.model.records import CallSite, MethodKind

# Calls on a field that put something in it.
_FILLING = frozenset({"append", "appendleft", "extend", "add", "update", "insert", "setdefault",
                      "__setitem__", "push", "put"})


class _State(Enum):
    ABSENT = "absent"  # never set on the instance
    EMPTY = "empty"  # set to ``None`` or an empty literal
    NONE = "none"  # a property that returns ``None``


def always_exits(
    project: Project, info: ClassInfo, call: CallSite, live: frozenset[str] | None,
    named_outside: Iterable[str],
) -> bool:
    """Whether one of ``call``'s early exits is taken on every instance of ``info``."""
    if not call.exits or live is None:
        return False
    outside = frozenset(named_outside)
    return any(_always_true(project, info, test, live, outside) for test in call.exits)


def _always_true(
    project: Project, info: ClassInfo, test: str, live: frozenset[str], outside: frozenset[str]
) -> bool:
    try:
        node = ast.parse(test, mode="eval").body
    except SyntaxError:
        return False
    operands = node.values if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) else [
        node]
    fields = {f for operand in operands if (f := _field(operand)) is not None}
    if len(fields) != 1:
        return False
    (name,) = fields
    states = _states(project, info, name, live, outside)
    if states is None:
        return False
    # ``a or b``: for each state the field can be in, some operand is true, or raises first
    # (``len(self.f)`` on a field never set): either way the call after the exit never runs.
    return all(any(_verdict(operand, state) for operand in operands) for state in states)


def _field(operand: ast.expr) -> str | None:
    """The ``self`` field a recognised test form reads, or None."""
    if isinstance(operand, ast.UnaryOp) and isinstance(operand.op, ast.Not):
        inner = operand.operand
        if (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name)
                and inner.func.id == "hasattr" and len(inner.args) == 2
                and _is_self(inner.args[0]) and isinstance(inner.args[1], ast.Constant)
                and isinstance(inner.args[1].value, str)):
            return inner.args[1].value
        return _read(inner) or _length(inner)
    if isinstance(operand, ast.Compare) and len(operand.ops) == 1:
        right = operand.comparators[0]
        if isinstance(operand.ops[0], ast.Is) and _none(right):
            return _read(operand.left)
        if isinstance(operand.ops[0], ast.Eq) and isinstance(right, ast.Constant) and (
                right.value == 0 and right.value is not False):
            return _length(operand.left)
    return None


def _verdict(operand: ast.expr, state: _State) -> bool:
    """Whether ``operand`` is true, or raises, when the field is in ``state``."""
    if isinstance(operand, ast.UnaryOp) and isinstance(operand.op, ast.Not) and isinstance(
            operand.operand, ast.Call) and isinstance(operand.operand.func, ast.Name) and (
            operand.operand.func.id == "hasattr"):
        return state is _State.ABSENT
    if isinstance(operand, ast.Compare) and isinstance(operand.ops[0], ast.Is):
        # ``self.f is None``: raises when never set; an empty literal may be ``[]``, not None
        return state is not _State.EMPTY
    return True  # ``not self.f``, ``not len(self.f)``, ``len(self.f) == 0``: raises, or true


def _states(
    project: Project, info: ClassInfo, name: str, live: frozenset[str], outside: frozenset[str]
) -> set[_State] | None:
    """What the field can hold on an instance of ``info``, if it is only ever absent or empty;
    None when something may fill it."""
    if name in outside:
        return None  # set or read as ``obj.name`` outside the class: hookguard cannot tell
    classes = [n for n in project.mro(info) if isinstance(n, ClassInfo)]
    definer = next((c for c in classes if name in c.record.methods), None)
    if definer is not None:
        member = definer.record.methods[name]
        # A property whose body returns None (and nothing replaces it): always None.
        if member.kind is MethodKind.PROPERTY and member.no_op:
            return {_State.NONE}
        return None
    if any(name in c.record.attributes for c in classes):
        return None  # a class attribute: its value is not recorded
    states = {_State.ABSENT}
    for method in running_methods(project, info):
        if method.name not in live:
            continue
        for assign in method.self_assigns:
            if assign.attr == name:
                if not assign.empty or assign.augmented:
                    return None
                states.add(_State.EMPTY)
        if any(c.receiver == "member" and c.explicit_base == name and c.name in _FILLING
               for c in method.calls):
            return None
    return states


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def _read(node: ast.expr) -> str | None:
    return node.attr if isinstance(node, ast.Attribute) and _is_self(node.value) else None


def _length(node: ast.expr) -> str | None:
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "len" and len(node.args) == 1):
        return _read(node.args[0])
    return None


def _none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None
