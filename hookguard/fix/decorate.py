"""``fix --add-override``: how a file spells ``@override``, and the one import it needs (libcst).

:func:`plan_import` reads a module's top-level statements: an ``override`` it already imports
from ``typing`` or ``typing_extensions`` (also as ``try``/``except`` or ``if``/``else``
fallbacks) is reused under the name it has; so is ``import typing_extensions`` (or ``import
typing``, when that is the module to use) as ``typing_extensions.override``. Otherwise one
import is added: the name joins an existing ``from typing import ...`` line of the module
level (in isort's order), or a new ``from typing import override`` line goes after the last
import of its section at the top of the file. An import under ``if TYPE_CHECKING:`` does not
count: the decorator runs when the class is created. A file that binds ``override`` to
something else is refused.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import libcst as cst

from hookguard.fix.port import Bindings, module_bindings

OVERRIDES = frozenset({"from:typing.override", "from:typing_extensions.override"})


@dataclass(frozen=True)
class OverrideImport:
    """The decorator to write (``override``, ``typing_extensions.override``) and whether the
    module needs the import :func:`add_import` adds."""

    decorator: str
    source: str  # the module it comes from
    needs_import: bool

    @property
    def root(self) -> str:
        return self.decorator.split(".")[0]

    def node(self) -> cst.Decorator:
        return cst.Decorator(decorator=cst.parse_expression(self.decorator))


def plan_import(module: cst.Module, source: str) -> OverrideImport | str:
    """How ``module`` gets ``override`` from ``source`` (``typing`` or ``typing_extensions``),
    or why it cannot."""
    names = module_bindings(module)
    for name, meanings in sorted(names.runtime.items()):
        if meanings <= OVERRIDES:
            return OverrideImport(name, source, False)
    for name, meanings in sorted(names.runtime.items()):
        if meanings == {"module:typing_extensions"} or (
            meanings == {"module:typing"} and source == "typing"
        ):
            return OverrideImport(f"{name}.override", source, False)
    taken = names.runtime.get("override")
    if taken:
        what = ", ".join(sorted(
            "defined in this file" if m.startswith("local:") else m.split(":", 1)[1]
            for m in taken))
        return (f"this file binds the name override to something else ({what}): add @override "
                "by hand")
    return OverrideImport("override", source, True)


def is_override_decorator(decorator: cst.Decorator, spelled: str = "") -> bool:
    """``@override``, ``@typing.override``, ``@overrides``, or the file's own ``spelled``
    name for it (``@ov`` after ``from typing import override as ov``)."""
    from hookguard.fix.port import _dotted

    expr = decorator.decorator
    if isinstance(expr, cst.Call):
        expr = expr.func
    if spelled and _dotted(expr) == spelled:
        return True
    if isinstance(expr, cst.Name):
        return expr.value in ("override", "overrides")
    return isinstance(expr, cst.Attribute) and expr.attr.value in ("override", "overrides")


# -- adding the import -------------------------------------------------------------------------
def _module_name(node: cst.ImportFrom) -> str:
    from hookguard.fix.port import _dotted

    return _dotted(node.module) if node.module is not None and not node.relative else ""


def _import_of(stmt: cst.BaseStatement) -> cst.Import | cst.ImportFrom | None:
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(
        stmt.body[0], cst.Import | cst.ImportFrom
    ):
        return stmt.body[0]
    return None


def _section(node: cst.Import | cst.ImportFrom, first_party: frozenset[str]) -> int:
    """isort's sections: 0 ``__future__``, 1 standard library, 2 third party, 3 this
    project's own (and relative imports)."""
    from hookguard.fix.port import _dotted

    if isinstance(node, cst.ImportFrom):
        if node.relative:
            return 3
        name = _module_name(node)
    else:
        name = _dotted(node.names[0].name)
    top = name.split(".")[0]
    if top == "__future__":
        return 0
    if top in sys.stdlib_module_names:
        return 1
    return 3 if top in first_party else 2


def _isort_key(name: str) -> tuple[int, str]:
    """isort's ``order-by-type``: CONSTANTS, then Classes, then everything else."""
    if name.isupper() and len(name) > 1:
        return (0, name)
    return (1, name) if name[:1].isupper() else (2, name)


def _merge(node: cst.ImportFrom) -> cst.ImportFrom:
    """``node`` with ``override`` among its names, where isort would put it."""
    assert not isinstance(node.names, cst.ImportStar)
    aliases = list(node.names)
    key = _isort_key("override")
    names = [_isort_key(a.evaluated_name) for a in aliases]
    at = len(aliases)
    if names == sorted(names):
        at = next((i for i, n in enumerate(names) if n > key), len(aliases))
    if len(aliases) > 1 and isinstance(aliases[0].comma, cst.Comma):
        sep: cst.Comma = aliases[0].comma
    elif isinstance(aliases[-1].comma, cst.Comma) and isinstance(
        node.lpar, cst.LeftParen
    ) and isinstance(node.lpar.whitespace_after, cst.ParenthesizedWhitespace):
        sep = cst.Comma(whitespace_after=node.lpar.whitespace_after)
    else:
        sep = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    new = cst.ImportAlias(name=cst.Name("override"))
    if at < len(aliases):
        aliases.insert(at, new.with_changes(comma=sep))
    else:
        last = aliases[-1]
        aliases[-1] = last.with_changes(comma=sep)
        aliases.append(new.with_changes(comma=last.comma))
    return node.with_changes(names=aliases)


def add_import(module: cst.Module, plan: OverrideImport, first_party: frozenset[str]
               ) -> cst.Module:
    """``module`` with ``from <plan.source> import override``, once (see the module's
    docstring)."""
    body = list(module.body)
    start = 0
    if body and isinstance(body[0], cst.SimpleStatementLine) and isinstance(
        body[0].body[0], cst.Expr
    ) and isinstance(body[0].body[0].value, cst.SimpleString | cst.ConcatenatedString):
        start = 1  # the docstring
    run: list[int] = []  # the imports at the top, after the docstring
    for index in range(start, len(body)):
        node = _import_of(body[index])
        if node is None:
            break
        run.append(index)
    for index in run:  # an existing ``from typing import a, b``: add the name to it
        node = _import_of(body[index])
        if isinstance(node, cst.ImportFrom) and not isinstance(node.names, cst.ImportStar) and (
            _module_name(node) == plan.source
        ):
            statement = body[index]
            assert isinstance(statement, cst.SimpleStatementLine)
            body[index] = statement.with_changes(body=[_merge(node)])
            return module.with_changes(body=body)
    mine = 1 if plan.source in sys.stdlib_module_names else 2
    sections = {}
    for index in run:
        found = _import_of(body[index])
        assert found is not None
        sections[index] = _section(found, first_party)
    statement = cst.SimpleStatementLine(
        body=[cst.ImportFrom(module=cst.Name(plan.source),
                             names=[cst.ImportAlias(name=cst.Name("override"))])])
    before = [i for i in run if sections[i] <= mine]
    if before:
        at = before[-1] + 1
        if sections[before[-1]] < mine:
            statement = statement.with_changes(leading_lines=[cst.EmptyLine()])
    elif run:
        at = run[0]
        first = body[at]
        assert isinstance(first, cst.SimpleStatementLine)
        statement = statement.with_changes(leading_lines=first.leading_lines)
        body[at] = first.with_changes(leading_lines=[cst.EmptyLine()])
    else:
        at = start
        if start:
            statement = statement.with_changes(leading_lines=[cst.EmptyLine()])
        if at < len(body):
            following = body[at]
            if isinstance(following, cst.SimpleStatementLine | cst.BaseCompoundStatement) and (
                not following.leading_lines
            ):
                lines = [cst.EmptyLine()] * (
                    2 if isinstance(following, cst.ClassDef | cst.FunctionDef) else 1)
                body[at] = following.with_changes(leading_lines=lines)
    body.insert(at, statement)
    return module.with_changes(body=body)


__all__ = ["Bindings", "OverrideImport", "add_import", "is_override_decorator", "plan_import"]
