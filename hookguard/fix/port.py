"""The unsafe fix's signature: the base hook's parameters, written into the override (libcst).

:func:`ported_parameters` builds the parameter list a :class:`~hookguard.fix.plan.PortFix`
gives the renamed override: the base's parameters, names, kinds and order; each default as the
plan says (the base's, the override's own, or ``None``); each annotation the override's own
where it had the parameter, else the base's where it means the same in the override's file,
else none. An expression is copied from the base's file only when every name in it is bound
the same way in both files (the same import) or is a builtin neither file rebinds: a default
is evaluated when the ``def`` runs, and a name the override's file lacks would be a
``NameError`` at import. The override's body is kept; a body that uses a parameter the port
removes, or a name a new parameter would shadow, is refused.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import libcst as cst

from hookguard.fix.plan import PortFix, PortParam
from hookguard.model.records import ParamKind

_BUILTINS = frozenset(dir(builtins))
_POSITIONAL = (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD)


# -- what a module's names mean --------------------------------------------------------------
@dataclass
class Bindings:
    """Module-level names: what binds each at run time (``module:x``, ``from:x.y`` for
    imports; a name of this module for anything else), and the imports only type checkers
    see (under ``if TYPE_CHECKING:``)."""

    runtime: dict[str, set[str]] = field(default_factory=dict)
    typing_only: dict[str, set[str]] = field(default_factory=dict)
    future_annotations: bool = False


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr.value}" if head else ""
    return ""


def _is_type_checking(test: cst.BaseExpression) -> bool:
    return _dotted(test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")


def module_bindings(module: cst.Module, name: str = "", is_package: bool = False) -> Bindings:
    """The module-level bindings of ``module`` (dotted ``name``, for relative imports)."""
    from hookguard.model.extract import resolve_relative

    found = Bindings()
    local = f"local:{name or id(module)}"

    def add(table: dict[str, set[str]], key: str, value: str) -> None:
        table.setdefault(key, set()).add(value)

    def imports(small: cst.BaseSmallStatement, table: dict[str, set[str]]) -> None:
        if isinstance(small, cst.Import):
            for alias in small.names:
                dotted = _dotted(alias.name)
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    add(table, alias.asname.name.value, f"module:{dotted}")
                else:
                    head = dotted.split(".")[0]
                    add(table, head, f"module:{head}")
        elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
            target = _dotted(small.module) if small.module is not None else ""
            if small.relative:
                target = resolve_relative(name, is_package, len(small.relative), target or None)
            if target == "__future__":
                if any(_dotted(a.name) == "annotations" for a in small.names):
                    found.future_annotations = True
                return
            for alias in small.names:
                imported = _dotted(alias.name)
                bound = imported
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    bound = alias.asname.name.value
                add(table, bound, f"from:{target}.{imported}")

    def targets(node: cst.BaseExpression) -> Iterator[str]:
        if isinstance(node, cst.Name):
            yield node.value
        elif isinstance(node, cst.Tuple | cst.List):
            for element in node.elements:
                yield from targets(element.value)
        elif isinstance(node, cst.StarredElement):
            yield from targets(node.value)

    def statements(body: object, table: dict[str, set[str]]) -> None:
        for stmt in body if isinstance(body, Sequence) else ():
            statement(stmt, table)

    def statement(stmt: cst.CSTNode, table: dict[str, set[str]]) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Import | cst.ImportFrom):
                    imports(small, table)
                elif isinstance(small, cst.Assign):
                    for target in small.targets:
                        for bound in targets(target.target):
                            add(found.runtime, bound, local)
                elif isinstance(small, cst.AnnAssign | cst.AugAssign):
                    for bound in targets(small.target):
                        add(found.runtime, bound, local)
        elif isinstance(stmt, cst.FunctionDef | cst.ClassDef):
            add(found.runtime, stmt.name.value, local)
        elif isinstance(stmt, cst.If) and _is_type_checking(stmt.test):
            statements(_block(stmt.body), found.typing_only)
            if stmt.orelse is not None:
                statement(stmt.orelse, table)
        elif isinstance(stmt, cst.If | cst.Else | cst.Try | cst.TryStar | cst.ExceptHandler
                        | cst.ExceptStarHandler | cst.Finally | cst.With | cst.For | cst.While):
            statements(_block(stmt.body), table)
            for child in stmt.children:
                if isinstance(child, cst.If | cst.Else | cst.ExceptHandler
                              | cst.ExceptStarHandler | cst.Finally):
                    statement(child, table)

    statements(module.body, found.runtime)
    return found


def _block(body: cst.BaseSuite) -> Sequence[cst.BaseStatement]:
    if isinstance(body, cst.IndentedBlock):
        return body.body
    return (cst.SimpleStatementLine(body=body.body),) if isinstance(
        body, cst.SimpleStatementSuite) else ()


class _Names(cst.CSTVisitor):
    """The names an expression or a body looks up (not attribute names, not keywords)."""

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()
        self.opaque = False  # a string annotation that does not parse

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False


def names_in(node: cst.CSTNode) -> set[str]:
    visitor = _Names()
    node.visit(visitor)
    return visitor.names


def _annotation_names(node: cst.BaseExpression) -> set[str] | None:
    """Names of an annotation, reading string annotations (None: one does not parse)."""
    names: set[str] = set()
    pending: list[cst.BaseExpression] = [node]
    while pending:
        current = pending.pop()
        visitor = _Names()
        current.visit(visitor)
        names |= visitor.names
        for string in _strings(current):
            value = string.evaluated_value
            if not isinstance(value, str):
                return None
            try:
                pending.append(cst.parse_expression(value))
            except cst.ParserSyntaxError:
                return None
    return names


def _strings(node: cst.CSTNode) -> list[cst.SimpleString]:
    found: list[cst.SimpleString] = []

    class Strings(cst.CSTVisitor):
        def visit_SimpleString(self, string: cst.SimpleString) -> None:
            found.append(string)

    node.visit(Strings())
    return found


def portable(
    names: set[str] | None, base: Bindings, here: Bindings, *, annotation: bool = False
) -> bool:
    """Whether ``names`` (from the base's file) mean the same in the override's file: the same
    import, or a builtin neither file binds. An annotation of a file with ``from __future__
    import annotations`` is never evaluated, so imports for type checkers count there."""
    if names is None:
        return False
    lazy = annotation and here.future_annotations
    for name in names:
        theirs = base.runtime.get(name, set())
        mine = here.runtime.get(name, set())
        if lazy:
            theirs = theirs | base.typing_only.get(name, set())
            mine = mine | here.typing_only.get(name, set())
        if not theirs and not mine:
            if name not in _BUILTINS:
                return False
            continue
        if theirs != mine or len(theirs) != 1:
            return False
        if not next(iter(theirs)).startswith(("module:", "from:")):
            return False
    return True


# -- the ported parameter list ----------------------------------------------------------------
@dataclass(frozen=True)
class Ported:
    params: cst.Parameters
    whitespace_before_params: cst.BaseParenthesizableWhitespace
    signature: str  # ``(self, index_mapper_capacity=None)``, for the message


def _all_params(params: cst.Parameters) -> list[cst.Param]:
    out = [*params.posonly_params, *params.params]
    if isinstance(params.star_arg, cst.Param):
        out.append(params.star_arg)
    out.extend(params.kwonly_params)
    if params.star_kwarg is not None:
        out.append(params.star_kwarg)
    return out


def ported_parameters(
    fix: PortFix,
    node: cst.FunctionDef,
    module: cst.Module,
    here: Bindings,
    base_def: cst.FunctionDef,
    base_module: cst.Module,
    there: Bindings,
) -> Ported | str:
    """The override ``node``'s parameters ported to ``base_def``'s (see the module's
    docstring), or why they cannot be."""
    own = {p.name.value: p for p in _all_params(node.params)}
    first = [*node.params.posonly_params, *node.params.params]
    receiver = first[0].name.value if first and fix.params[:1] and (
        fix.params[0].default == "receiver") else None
    theirs = {p.name.value: p for p in _all_params(base_def.params)}
    used = names_in(node.body)
    ported = {p.name for p in fix.params if p.default != "receiver"}
    mine = set(own) - {receiver} if receiver else set(own)
    hook = f"{fix.base_cls}.{fix.new}"
    for name in sorted(mine - ported):
        if name in used:
            return (f"its body uses its parameter {name}, which {hook} does not take "
                    "(renamed or removed there)")
    for name in sorted(ported - mine):
        if name in used:
            return f"its body uses the name {name}, which the new parameter {name} would shadow"
    parts: list[str] = []
    star_written = any(p.kind is ParamKind.VAR_POSITIONAL for p in fix.params)
    for index, param in enumerate(fix.params):
        if param.kind is ParamKind.KEYWORD_ONLY and not star_written:
            parts.append("*")
            star_written = True
        text = _param_text(param, own, theirs, receiver, module, base_module, here, there,
                           used, hook)
        if text.startswith("!"):
            return text[1:]
        parts.append(text)
        following = fix.params[index + 1] if index + 1 < len(fix.params) else None
        if param.kind is ParamKind.POSITIONAL_ONLY and (
            following is None or following.kind is not ParamKind.POSITIONAL_ONLY
        ):
            parts.append("/")
    before = node.whitespace_before_params
    multiline = isinstance(before, cst.ParenthesizedWhitespace)
    if not multiline and isinstance(base_def.whitespace_before_params,
                                    cst.ParenthesizedWhitespace):
        multiline = sum(len(p) + 2 for p in parts) > 72
    if multiline and parts:
        unit = before.last_line.value if isinstance(before, cst.ParenthesizedWhitespace) else ""
        unit = unit if unit.strip() == "" and unit else "    "
        text = "\n" + "".join(f"{unit}{p},\n" for p in parts)
    else:
        text = ", ".join(parts)
    try:
        parsed = cst.parse_statement(f"def _({text}):\n    pass\n")
    except cst.ParserSyntaxError:
        return "the ported signature would not parse"
    assert isinstance(parsed, cst.FunctionDef)
    return Ported(parsed.params, parsed.whitespace_before_params, f"({', '.join(parts)})")


def _code(module: cst.Module, node: cst.CSTNode) -> str:
    return module.code_for_node(node).strip()


def _param_text(
    param: PortParam,
    own: dict[str, cst.Param],
    theirs: dict[str, cst.Param],
    receiver: str | None,
    module: cst.Module,
    base_module: cst.Module,
    here: Bindings,
    there: Bindings,
    used: set[str],
    hook: str,
) -> str:
    """One parameter as source; ``!reason`` when it cannot be written."""
    prefix = {ParamKind.VAR_POSITIONAL: "*", ParamKind.VAR_KEYWORD: "**"}.get(param.kind, "")
    if param.default == "receiver":
        assert receiver is not None
        node = own[receiver]
        annotation = f": {_code(module, node.annotation.annotation)}" if node.annotation else ""
        return f"{receiver}{annotation}"
    mine, base = own.get(param.name), theirs.get(param.name)
    default = ""
    substituted = False  # ``None`` stands for a default that could not be copied
    if param.default == "override" and mine is not None and mine.default is not None:
        default = _code(module, mine.default)
    elif param.default == "base" and base is not None and base.default is not None:
        if portable(names_in(base.default), there, here):
            default = _code(base_module, base.default)
        elif param.name in used:
            return (f"!the default of {param.name} in {hook} "
                    f"({_code(base_module, base.default)}) names what this file does not "
                    "import the same way")
        else:
            default, substituted = "None", True  # never read: only that it has one matters
    elif param.default in ("none", "base", "override"):
        default, substituted = "None", True
    annotation = ""
    if mine is not None:  # the override's own parameter keeps its annotation, or none
        if mine.annotation is not None:
            annotation = _code(module, mine.annotation.annotation)
    elif base is not None and base.annotation is not None and not substituted and (
        portable(_annotation_names(base.annotation.annotation), there, here, annotation=True)
    ):
        annotation = _code(base_module, base.annotation.annotation)
    text = f"{prefix}{param.name}"
    if annotation:
        text += f": {annotation}"
        if default:
            text += f" = {default}"
    elif default:
        text += f"={default}"
    return text
