"""The libcst codemods. One parse and one transform per file; comments and layout are kept.

:func:`fix_module` locates every fix's ``def`` by its line (``PositionProvider``), checks that
the fix is safe there, then applies all accepted fixes in a single :class:`_Transformer` pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from hookguard.fix.decorate import OverrideImport, add_import, is_override_decorator, plan_import
from hookguard.fix.plan import (
    Fix,
    Outcome,
    OverrideFix,
    ParamsFix,
    PortFix,
    RenameFix,
    outside_note,
)
from hookguard.fix.port import Ported, module_bindings, ported_parameters

#: The base module and ``def`` a :class:`PortFix` takes its signature from, keyed by
#: ``(base_path, base_line)``; a reason when it cannot be read.
BaseDefs = Mapping[tuple[str, int], "tuple[cst.Module, cst.FunctionDef] | str"]

REFLECTIVE = frozenset({"getattr", "hasattr", "setattr", "delattr"})


@dataclass
class _Def:
    node: cst.FunctionDef
    cls: cst.ClassDef | None  # the class whose body holds the def directly


@dataclass
class _Target:
    node: cst.FunctionDef | None  # None: a class's references only
    cls: cst.ClassDef


@dataclass
class _ClassPlan:
    """What happens inside one class body: attribute renames and who ``self`` is."""

    name: str
    renames: dict[str, str] = field(default_factory=dict)
    receivers: set[str] = field(default_factory=lambda: {"self", "cls"})
    counts: dict[str, int] = field(default_factory=dict)


class _Locator(cst.CSTVisitor):
    """Every ``def`` and ``class`` by the line of its keyword (as ``ast`` reports it)."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self) -> None:
        super().__init__()
        self.defs: dict[int, list[_Def]] = {}
        self.classes: dict[int, list[cst.ClassDef]] = {}
        self._scopes: list[cst.ClassDef | cst.FunctionDef] = []

    def _line(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.setdefault(self._line(node), []).append(node)
        self._scopes.append(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._scopes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        parent = self._scopes[-1] if self._scopes else None
        cls = parent if isinstance(parent, cst.ClassDef) else None
        self.defs.setdefault(self._line(node), []).append(_Def(node, cls))
        self._scopes.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._scopes.pop()

    def locate(self, fix: Fix) -> _Target | str:
        """The ``def`` (or, for a references-only rename, the class) ``fix`` is about."""
        if isinstance(fix, RenameFix) and fix.refs_only:
            for node in self.classes.get(fix.line, ()):
                if node.name.value == fix.cls:
                    return _Target(None, node)
            return f"no class {fix.cls} at line {fix.line} (has the file changed since the audit?)"
        found = [d for d in self.defs.get(fix.line, ()) if d.node.name.value == fix.method]
        if not found:
            return f"no def {fix.method} at line {fix.line} (has the file changed since the audit?)"
        cls = found[0].cls
        if cls is None or cls.name.value != fix.cls:
            return f"{fix.method} at line {fix.line} is not a method of class {fix.cls}"
        return _Target(found[0].node, cls)


def find_def(
    module: cst.Module, line: int, cls: str, name: str
) -> tuple[cst.Module, cst.FunctionDef] | str:
    """The ``def name`` on ``line`` directly in class ``cls`` of ``module`` (with the module
    it is a node of), or why it is not there."""
    wrapper = MetadataWrapper(module)
    locator = _Locator()
    wrapper.visit(locator)
    found = [d for d in locator.defs.get(line, ()) if d.node.name.value == name]
    if not found or found[0].cls is None or found[0].cls.name.value != cls:
        return f"no def {cls}.{name} at line {line} (has the file changed since the audit?)"
    return wrapper.module, found[0].node


def fix_module(
    module: cst.Module,
    fixes: Sequence[Fix],
    bases: BaseDefs | None = None,
    override_from: str = "typing_extensions",
    first_party: frozenset[str] = frozenset(),
    module_name: str = "",
    is_package: bool = False,
) -> tuple[cst.Module, list[Outcome]]:
    """Apply ``fixes`` (all for this module) in one pass; one outcome per fix, in order.

    ``bases``: the base ``def`` of each :class:`PortFix`. ``override_from``: the module an
    ``@override`` this file lacks is imported from; ``first_party``: the checkout's top-level
    packages (where a new import line goes)."""
    wrapper = MetadataWrapper(module)
    locator = _Locator()
    wrapper.visit(locator)
    outcomes: dict[int, Outcome] = {}
    classes: dict[cst.ClassDef, _ClassPlan] = {}
    renames: dict[cst.FunctionDef, RenameFix] = {}
    ports: dict[cst.FunctionDef, Ported] = {}
    params: dict[cst.FunctionDef, list[tuple[ParamsFix, tuple[str, ...]]]] = {}
    planned: dict[int, tuple[_ClassPlan, tuple[str, ...]]] = {}
    decorate: dict[cst.FunctionDef, OverrideImport] = {}
    here = module_bindings(wrapper.module, module_name, is_package)

    targets: dict[int, _Target] = {}
    for index, fix in enumerate(fixes):
        found = locator.locate(fix)
        if isinstance(found, str):
            outcomes[index] = fix.outcome("refused", found)
        else:
            targets[index] = found
    # Two overrides renamed to the same name in one class: ambiguous, refuse both.
    wanted: dict[tuple[cst.ClassDef, str], set[str]] = {}
    for index, target in targets.items():
        fix = fixes[index]
        if isinstance(fix, RenameFix) and not fix.refs_only:
            wanted.setdefault((target.cls, fix.new), set()).add(fix.old)

    for index, target in targets.items():
        fix = fixes[index]
        cls = target.cls
        if isinstance(fix, OverrideFix):
            continue  # once every rename is decided (below)
        if isinstance(fix, RenameFix):
            olds = sorted(wanted.get((cls, fix.new), ()))
            reason = _rename_refusal(cls, fix)
            if not reason and len(olds) > 1:
                reason = (
                    f"{' and '.join(olds)} in {fix.cls} would both become {fix.new}; "
                    "merge by hand"
                )
            plan = classes.setdefault(cls, _ClassPlan(cls.name.value))
            if not reason and plan.renames.get(fix.old, fix.new) != fix.new:
                reason = f"{fix.cls}.{fix.old} is already being renamed"
            if not reason and isinstance(fix, PortFix) and target.node is not None:
                port = _port(fix, target.node, wrapper.module, here, bases)
                if isinstance(port, str):
                    reason = (f"renaming would turn a dead override into a crash: {fix.why}; "
                              f"and its signature cannot be ported: {port}; port it to "
                              f"{fix.new} by hand")
                else:
                    ports[target.node] = port
            if reason:
                outcomes[index] = fix.outcome("refused", reason)
                continue
            plan.renames[fix.old] = fix.new
            plan.receivers.update(_receivers(cls))
            planned[index] = (plan, ())
            if target.node is not None:
                renames[target.node] = fix
        else:
            assert target.node is not None
            add, reason = _params_to_add(target.node, fix)
            if not reason and target.node in ports:
                reason = f"{fix.cls}.{fix.method} is ported to its base's signature instead"
            if reason:
                outcomes[index] = fix.outcome("refused", reason)
            elif not add:
                outcomes[index] = fix.outcome(
                    "unchanged", f"{fix.cls}.{fix.method} already accepts {', '.join(fix.names)}"
                )
            else:
                params.setdefault(target.node, []).append((fix, add))
                planned[index] = (classes.setdefault(cls, _ClassPlan(cls.name.value)), add)

    spelled: OverrideImport | str | None = None
    for index, target in targets.items():
        fix = fixes[index]
        if not isinstance(fix, OverrideFix) or target.node is None:
            continue
        node = target.node
        if (fix.after is not None and node not in renames) or any(
            is_override_decorator(d) for d in node.decorators
        ) or _class_bindings(target.cls).get(fix.method, 0) > 1:
            outcomes[index] = fix.outcome("unchanged", "")  # not (yet) an override, or done
            continue
        if spelled is None:
            spelled = plan_import(wrapper.module, override_from)
        if isinstance(spelled, str):
            outcomes[index] = fix.outcome("refused", spelled)
            continue
        if any(is_override_decorator(d, spelled.decorator) for d in node.decorators):
            outcomes[index] = fix.outcome("unchanged", "")  # ``@ov``: override imported as ov
            continue
        if spelled.root in _class_bindings(target.cls):
            outcomes[index] = fix.outcome(
                "refused", f"{fix.cls} binds the name {spelled.root} in its body: add "
                "@override by hand")
            continue
        decorate[node] = spelled
        rename = renames.get(node)
        name = rename.new if rename is not None else fix.method
        outcomes[index] = fix.outcome("fixed", f"{fix.cls}.{name} (overrides {fix.base})")
    if decorate and isinstance(spelled, OverrideImport) and spelled.needs_import:
        first = min(i for i, o in outcomes.items() if isinstance(fixes[i], OverrideFix)
                    and o.status == "fixed")
        done = outcomes[first]
        outcomes[first] = fixes[first].outcome(
            "fixed", f"{done.message}; imported override from {spelled.source}")

    new_module = wrapper.module.visit(_Transformer(classes, renames, params, ports, decorate))
    if decorate and isinstance(spelled, OverrideImport) and spelled.needs_import:
        new_module = add_import(new_module, spelled, first_party)
    for index, (plan, added) in planned.items():
        fix = fixes[index]
        if isinstance(fix, OverrideFix):  # pragma: no cover - never planned here
            continue
        if isinstance(fix, ParamsFix):
            kind = "keyword-only parameter" if fix.keyword_only else "parameter"
            outcomes[index] = fix.outcome(
                "fixed",
                f"added {kind}{'s' * (len(added) != 1)} "
                f"{', '.join(f'{n}=None' for n in added)} to {fix.cls}.{fix.method}",
            )
            continue
        refs = plan.counts.get(fix.old, 0)
        n_refs = f"{refs} reference{'s' * (refs != 1)}"
        also = f" and {n_refs} in {fix.cls}" if refs else ""
        if isinstance(fix, PortFix) and not fix.follows:
            def_node = targets[index].node
            ported = ports.get(def_node) if def_node is not None else None
            signature = ported.signature if ported is not None else "(...)"
            relaxed = "".join(
                f"; {name} defaults to None: {who} calls it without one"
                for name, who in fix.relaxed)
            message = (
                f"renamed {fix.cls}.{fix.old} to {fix.new}{also}, with the signature of "
                f"{fix.base_cls}.{fix.new}: {fix.new}{signature}, since {fix.why}{relaxed}"
                f"{outside_note(fix.finding)}"
            )
            outcomes[index] = fix.outcome("fixed", message)
            continue
        if not fix.follows:
            message = f"renamed {fix.cls}.{fix.old} to {fix.new}{also}{outside_note(fix.finding)}"
        elif not fix.refs_only:
            message = (
                f"renamed {fix.cls}.{fix.old} to {fix.new}{also}: it overrides {fix.follows}, "
                "renamed with it"
            )
        elif not refs:
            outcomes[index] = fix.outcome("unchanged", "")
            continue
        elif fix.new in _class_bindings(targets[index].cls):
            outcomes[index] = fix.outcome(
                "refused",
                f"{fix.cls} uses self.{fix.old} (the renamed {fix.follows}) but defines "
                f"{fix.new} itself; merge by hand",
            )
            continue
        else:
            message = f"renamed {n_refs} to {fix.follows} in {fix.cls} to {fix.new}"
        outcomes[index] = fix.outcome("fixed", message)
    return new_module, [outcomes[i] for i in range(len(fixes))]


def _port(
    fix: PortFix, node: cst.FunctionDef, module: cst.Module, here: object,
    bases: BaseDefs | None,
) -> Ported | str:
    from hookguard.fix.port import Bindings

    assert isinstance(here, Bindings)
    found = (bases or {}).get((fix.base_path, fix.base_line))
    if found is None:
        return f"{fix.base_path} was not read"
    if isinstance(found, str):
        return found
    base_module, base_def = found
    there = module_bindings(base_module, fix.base_module, fix.base_is_package)
    return ported_parameters(fix, node, module, here, base_def, base_module, there)


# -- checks ----------------------------------------------------------------------------------
def _class_bindings(cls: cst.ClassDef) -> dict[str, int]:
    """Names bound directly in the class body, with how many times each is bound."""
    counts: dict[str, int] = {}

    def bind(name: str) -> None:
        counts[name] = counts.get(name, 0) + 1

    def targets(node: cst.BaseExpression) -> None:
        if isinstance(node, cst.Name):
            bind(node.value)
        elif isinstance(node, cst.Tuple | cst.List):
            for element in node.elements:
                targets(element.value)
        elif isinstance(node, cst.StarredElement):
            targets(node.value)

    def statement(stmt: cst.CSTNode) -> None:
        if isinstance(stmt, cst.FunctionDef | cst.ClassDef):
            bind(stmt.name.value)
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign):
                    for target in small.targets:
                        targets(target.target)
                elif isinstance(small, cst.AnnAssign | cst.AugAssign):
                    targets(small.target)
                elif isinstance(small, cst.Import | cst.ImportFrom) and not isinstance(
                    small.names, cst.ImportStar
                ):
                    for alias in small.names:
                        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                            bind(alias.asname.name.value)
                        elif isinstance(alias.name, cst.Name):
                            bind(alias.name.value)
        elif isinstance(stmt, cst.If | cst.Try | cst.With | cst.For | cst.While):
            for child in stmt.children:
                if isinstance(child, cst.IndentedBlock):
                    for inner in child.body:
                        statement(inner)
                elif isinstance(child, cst.Else | cst.If | cst.ExceptHandler | cst.Finally):
                    statement(child)
        elif isinstance(stmt, cst.Else | cst.ExceptHandler | cst.Finally) and isinstance(
            stmt.body, cst.IndentedBlock
        ):
            for inner in stmt.body.body:
                statement(inner)

    if isinstance(cls.body, cst.IndentedBlock):
        for stmt in cls.body.body:
            statement(stmt)
    elif isinstance(cls.body, cst.SimpleStatementSuite):
        statement(cst.SimpleStatementLine(body=cls.body.body))
    return counts


class _BodyNames(cst.CSTVisitor):
    """Bare-name uses of ``name`` in a class body outside its functions (aliases, decorators)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.found = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        for decorator in node.decorators:
            decorator.visit(self)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == self.name:
            self.found += 1


def _rename_refusal(cls: cst.ClassDef, fix: RenameFix) -> str:
    bindings = _class_bindings(cls)
    if fix.refs_only:
        if fix.old in bindings:
            return f"{fix.cls} binds {fix.old} in its body; rename by hand"
        return ""
    if fix.new in bindings:
        return f"{fix.cls} already defines {fix.new}; merge by hand"
    if bindings.get(fix.old, 0) > 1:
        return (
            f"{fix.cls} defines {fix.old} {bindings[fix.old]} times (a property or overloads?); "
            "rename by hand"
        )
    names = _BodyNames(fix.old)
    body = cls.body
    if isinstance(body, cst.IndentedBlock):
        for stmt in body.body:
            stmt.visit(names)
    if names.found:
        return (
            f"{fix.cls}'s body uses the name {fix.old} outside its methods "
            "(an alias or a decorator); rename by hand"
        )
    return ""


def _receivers(cls: cst.ClassDef) -> set[str]:
    """First parameter names of the class's methods (``self``, ``cls``, or anything else)."""
    names: set[str] = set()
    body = cls.body
    if not isinstance(body, cst.IndentedBlock):
        return names
    for stmt in body.body:
        if not isinstance(stmt, cst.FunctionDef):
            continue
        if any(
            isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod"
            for d in stmt.decorators
        ):
            continue
        first = [*stmt.params.posonly_params, *stmt.params.params]
        if first:
            names.add(first[0].name.value)
    return names


def _params_to_add(node: cst.FunctionDef, fix: ParamsFix) -> tuple[tuple[str, ...], str]:
    params = node.params
    posonly = {p.name.value for p in params.posonly_params}
    existing = {p.name.value for p in (*params.params, *params.kwonly_params)}
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            existing.add(star.name.value)
    clash = [n for n in fix.names if n in posonly]
    if clash:
        return (), (
            f"{fix.cls}.{fix.method} takes {', '.join(clash)} positional-only; the base passes "
            "it by keyword: fix by hand"
        )
    return tuple(n for n in fix.names if n not in existing), ""


# -- the transform ---------------------------------------------------------------------------
class _Transformer(cst.CSTTransformer):
    def __init__(
        self,
        classes: dict[cst.ClassDef, _ClassPlan],
        renames: dict[cst.FunctionDef, RenameFix],
        params: dict[cst.FunctionDef, list[tuple[ParamsFix, tuple[str, ...]]]],
        ports: dict[cst.FunctionDef, Ported] | None = None,
        decorate: dict[cst.FunctionDef, OverrideImport] | None = None,
    ) -> None:
        super().__init__()
        self.classes = classes
        self.renames = renames
        self.params = params
        self.ports = ports or {}
        self.decorate = decorate or {}
        self._stack: list[_ClassPlan | None] = []

    @property
    def _plan(self) -> _ClassPlan | None:
        return self._stack[-1] if self._stack else None

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._stack.append(self.classes.get(node))

    def leave_ClassDef(
        self, original_node: cst.ClassDef, updated_node: cst.ClassDef
    ) -> cst.ClassDef:
        self._stack.pop()
        return updated_node

    def leave_FunctionDef(
        self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
    ) -> cst.FunctionDef:
        rename = self.renames.get(original_node)
        if rename is not None:
            updated_node = updated_node.with_changes(
                name=updated_node.name.with_changes(value=rename.new)
            )
        port = self.ports.get(original_node)
        if port is not None:
            updated_node = updated_node.with_changes(
                params=port.params, whitespace_before_params=port.whitespace_before_params
            )
        for fix, names in self.params.get(original_node, ()):
            updated_node = updated_node.with_changes(
                params=add_params(updated_node, names, fix.keyword_only)
            )
        spelled = self.decorate.get(original_node)
        if spelled is not None:
            updated_node = updated_node.with_changes(
                decorators=[spelled.node(), *updated_node.decorators]
            )
        return updated_node

    def _is_own(self, receiver: cst.BaseExpression, plan: _ClassPlan) -> bool:
        if isinstance(receiver, cst.Name):
            return receiver.value in plan.receivers or receiver.value == plan.name
        return (
            isinstance(receiver, cst.Call)
            and isinstance(receiver.func, cst.Name)
            and receiver.func.value == "super"
        )

    def leave_Attribute(
        self, original_node: cst.Attribute, updated_node: cst.Attribute
    ) -> cst.Attribute:
        plan = self._plan
        if plan is None:
            return updated_node
        new = plan.renames.get(updated_node.attr.value)
        if new is None or not self._is_own(updated_node.value, plan):
            return updated_node
        old = updated_node.attr.value
        plan.counts[old] = plan.counts.get(old, 0) + 1
        return updated_node.with_changes(attr=updated_node.attr.with_changes(value=new))

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        plan = self._plan
        if (
            plan is None
            or not plan.renames
            or not isinstance(updated_node.func, cst.Name)
            or updated_node.func.value not in REFLECTIVE
            or len(updated_node.args) < 2
            or not self._is_own(updated_node.args[0].value, plan)
        ):
            return updated_node
        arg = updated_node.args[1]
        literal = arg.value
        if not isinstance(literal, cst.SimpleString) or literal.prefix.lower() not in ("", "u"):
            return updated_node
        old = literal.evaluated_value
        new = plan.renames.get(old) if isinstance(old, str) else None
        if new is None or not isinstance(old, str):
            return updated_node
        quote = literal.quote
        value = f"{literal.prefix}{quote}{new}{quote}"
        plan.counts[old] = plan.counts.get(old, 0) + 1
        args = list(updated_node.args)
        args[1] = arg.with_changes(value=literal.with_changes(value=value))
        return updated_node.with_changes(args=args)


# -- parameter lists -------------------------------------------------------------------------
Element = cst.Param | cst.ParamStar | cst.ParamSlash


def _no_comment(comma: cst.Comma) -> cst.Comma:
    after = comma.whitespace_after
    if isinstance(after, cst.ParenthesizedWhitespace):
        after = after.with_changes(
            first_line=cst.TrailingWhitespace(newline=after.first_line.newline), empty_lines=[]
        )
    return comma.with_changes(whitespace_after=after)


def add_params(func: cst.FunctionDef, names: Sequence[str], keyword_only: bool) -> cst.Parameters:
    """``func``'s parameters with ``names=None`` added, in the list's own layout.

    Keyword-only (or when ``*args``/a bare ``*`` already ends the positionals): after the
    existing keyword-only parameters, before ``**kwargs``; a bare ``*`` is added where there is
    none. Otherwise: after the last positional parameter.
    """
    p = func.params
    star_arg = p.star_arg
    kwonly = keyword_only or isinstance(star_arg, cst.Param | cst.ParamStar)
    new: list[tuple[str, Element]] = [
        (
            "kwonly" if kwonly else "params",
            cst.Param(
                name=cst.Name(n),
                default=cst.Name("None"),
                equal=cst.AssignEqual(
                    whitespace_before=cst.SimpleWhitespace(""),
                    whitespace_after=cst.SimpleWhitespace(""),
                ),
            ),
        )
        for n in names
    ]
    elements: list[tuple[str, Element]] = [("posonly", e) for e in p.posonly_params]
    if isinstance(p.posonly_ind, cst.ParamSlash):
        elements.append(("slash", p.posonly_ind))
    elements.extend(("params", e) for e in p.params)
    if kwonly:
        if isinstance(star_arg, cst.Param | cst.ParamStar):
            elements.append(("star", star_arg))
        else:
            new.insert(0, ("star", cst.ParamStar()))
        elements.extend(("kwonly", e) for e in p.kwonly_params)
    at = len(elements)
    if not kwonly:
        if isinstance(star_arg, cst.Param | cst.ParamStar):  # pragma: no cover - kwonly then
            elements.append(("star", star_arg))
        elements.extend(("kwonly", e) for e in p.kwonly_params)
    if p.star_kwarg is not None:
        elements.append(("kwarg", p.star_kwarg))
    result = _insert(func, elements, at, new)
    by: dict[str, list[Element]] = {}
    for category, element in result:
        by.setdefault(category, []).append(element)

    def plain(category: str) -> list[cst.Param]:
        return [e for e in by.get(category, []) if isinstance(e, cst.Param)]

    star = by.get("star", [])
    slash = by.get("slash", [])
    kwarg = plain("kwarg")
    return p.with_changes(
        posonly_params=plain("posonly"),
        posonly_ind=slash[0] if slash else cst.MaybeSentinel.DEFAULT,
        params=plain("params"),
        star_arg=star[0] if star else cst.MaybeSentinel.DEFAULT,
        kwonly_params=plain("kwonly"),
        star_kwarg=kwarg[0] if kwarg else None,
    )


def _insert(
    func: cst.FunctionDef,
    elements: list[tuple[str, Element]],
    at: int,
    added: list[tuple[str, Element]],
) -> list[tuple[str, Element]]:
    """Insert ``added`` at ``at`` with commas in the list's layout (one per line, or inline)."""
    before = func.whitespace_before_params
    if at < len(elements):
        # Something follows (``**kwargs``): copy the separator of the element before, if any.
        prev = elements[at - 1][1].comma if at > 0 else cst.MaybeSentinel.DEFAULT
        sep: cst.Comma | cst.MaybeSentinel = (
            _no_comment(prev) if isinstance(prev, cst.Comma) else cst.MaybeSentinel.DEFAULT
        )
        if at == 0 and isinstance(before, cst.ParenthesizedWhitespace):
            sep = cst.Comma(whitespace_after=before)
        return [*elements[:at], *[(c, _with_comma(e, sep)) for c, e in added], *elements[at:]]
    if at == 0:
        return added
    category, last = elements[at - 1]
    trailing = last.comma
    separators = [e.comma for _, e in elements[: at - 1] if isinstance(e.comma, cst.Comma)]
    multiline = isinstance(trailing, cst.Comma) and isinstance(
        trailing.whitespace_after, cst.ParenthesizedWhitespace
    )
    if separators:
        sep = _no_comment(separators[-1])
    elif multiline and isinstance(before, cst.ParenthesizedWhitespace):
        sep = cst.Comma(whitespace_after=before)
    else:
        sep = cst.MaybeSentinel.DEFAULT
    final: cst.Comma | cst.MaybeSentinel
    if isinstance(trailing, cst.Comma) and isinstance(
        trailing.whitespace_after, cst.ParenthesizedWhitespace
    ):
        # ``last,  # comment\n)``: ``last`` keeps its comma and comment, on the new indent.
        indent = (
            sep.whitespace_after.last_line
            if isinstance(sep, cst.Comma)
            and isinstance(sep.whitespace_after, cst.ParenthesizedWhitespace)
            else cst.SimpleWhitespace("    ")
        )
        kept = trailing.with_changes(
            whitespace_after=trailing.whitespace_after.with_changes(last_line=indent)
        )
        if not isinstance(sep, cst.Comma):
            sep = _no_comment(kept)
        last = _with_comma(last, kept)
        final = _no_comment(trailing)
    elif isinstance(trailing, cst.Comma):
        last = _with_comma(last, sep)
        final = trailing
    else:
        final = cst.MaybeSentinel.DEFAULT
        after = last.whitespace_after_param if isinstance(last, cst.Param) else None
        if isinstance(last, cst.Param) and isinstance(after, cst.ParenthesizedWhitespace):
            # ``a\n)`` without a trailing comma: the newline before ``)`` moves to the new end.
            last = last.with_changes(whitespace_after_param=cst.SimpleWhitespace(""))
            if isinstance(sep, cst.MaybeSentinel) and isinstance(
                before, cst.ParenthesizedWhitespace
            ):
                sep = cst.Comma(whitespace_after=before)
            last = _with_comma(last, sep)
            end_cat, end = added[-1]
            if isinstance(end, cst.Param):
                added = [*added[:-1], (end_cat, end.with_changes(whitespace_after_param=after))]
    out = [(c, _with_comma(e, sep)) for c, e in added[:-1]]
    out.append((added[-1][0], _with_comma(added[-1][1], final)))
    return [*elements[: at - 1], (category, last), *out]


def _with_comma(element: Element, comma: cst.Comma | cst.MaybeSentinel) -> Element:
    if isinstance(element, cst.ParamStar) and isinstance(comma, cst.MaybeSentinel):
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))  # ``*`` needs its comma
    return element.with_changes(comma=comma)
