"""Generated checks: a contract compiled to straight-line Python, once per concrete class.

As ``dataclasses`` generates ``__init__``, :func:`generate` writes the source of one function per
(contract, class, hook signature) and compiles it: no loop over fields, no lookup of specs, no
per-call dictionaries; dtypes, devices, literal shapes and the fields a class need not set
(``consumers``) are folded in. The function answers one question, *does this object pass?*:

* ``True``: the exact checker (:meth:`CompiledContract.check`) would report nothing;
* ``False``: something may be wrong (or the case is unusual); the caller runs the exact checker,
  which builds the report.

So the generated code may be stricter than the exact checker, never looser; the tests compare
both on passing and failing objects. Value checks (``values=True``) are fused: host tensors are
read directly (small ones as Python lists), and every CUDA check leaves one boolean on its device;
those are ORed on the device and copied to the host once: one synchronisation per hook call
(the helpers are in :mod:`hookguard.runtime.fused`). Expressions (``equals``, invariants) made
only of operations the evaluator's guards never refuse are written inline, over the check's
locals, under the run-time conditions that make them exact (:mod:`hookguard.runtime.inline`);
the others, and those whose conditions do not hold, run through the bounded evaluator
(:mod:`hookguard.runtime.expr`) with a plain dict of names where the object is not needed.

The source is built from names the loader validated (identifiers) and from shape expressions
that passed the dimension whitelist (integer arithmetic over names, with ``**``, ``*``, ``+`` and
``%`` as calls of the evaluator's bounded operations); everything else (dtypes, defaults,
expressions of invariants and ``equals``) is passed in as constants, never spliced into the text.
"""

from __future__ import annotations

import ast
import keyword
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from hookguard.contracts import EXPR_BUILTINS, check_expression
from hookguard.contracts.expressions import bounded_add, bounded_mod, bounded_mul, bounded_pow
from hookguard.runtime import fused
from hookguard.runtime.describe import cuda_available
from hookguard.runtime.distributed import local_rank_device
from hookguard.runtime.expr import Expression, Namespace
from hookguard.runtime.fields import PY_TYPES, DimSpec, FieldCheck, as_int, shape_of
from hookguard.runtime.inline import inline, memo_put

if TYPE_CHECKING:
    from hookguard.runtime.checks import CompiledContract

__all__ = ["FastCheck", "generate"]

Check = Callable[[object, tuple[Any, ...]], bool]


@dataclass(frozen=True)
class FastCheck:
    """The generated functions for one class: ``metadata(obj, args)`` and ``full(obj, args)``."""

    metadata: Check
    full: Check
    source: str


def _ident(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("__")


# --------------------------------------------------------------------------------------------
# Source generation
# --------------------------------------------------------------------------------------------


class _Unsupported(Exception):
    """A contract the generator does not handle: the exact checker runs for it every time."""


def _dim_source(dim: DimSpec, names: dict[str, str]) -> str:
    """Python source of one dimension, over the generated locals of its names."""
    if dim.literal is not None:
        return repr(dim.literal)
    if dim.name is not None:
        return names[dim.name]
    return names[dim.text]


_BOUNDED_OPS: dict[type[ast.operator], str] = {
    ast.Pow: "_b_pow",
    ast.Mult: "_b_mul",
    ast.Add: "_b_add",
    ast.Mod: "_b_mod",
}


class _Bounded(ast.NodeTransformer):
    """``a ** b``, ``*``, ``+`` and ``%`` as calls of the bounded operations the expression
    evaluator uses (:mod:`hookguard.contracts.expressions`): a dimension that would grow past
    their limits raises ``ExpressionLimit`` (the generated check then fails over to the exact
    checker, which runs the same bounds)."""

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        name = _BOUNDED_OPS.get(type(node.op))
        if name is None:
            return node
        return ast.Call(ast.Name(name, ast.Load()), [node.left, node.right], [])


class _Writer:
    def __init__(
        self,
        compiled: CompiledContract,
        cls: type,
        base: type,
        params: tuple[str, ...] | None,
        defaults: Mapping[str, Any],
    ) -> None:
        self.compiled = compiled
        self.cls = cls
        self.base = base
        self.params = params
        self.defaults = defaults
        self.consts: dict[str, Any] = {
            "_T": torch.Tensor,
            "_isinstance": isinstance,
            "_as_int": as_int,
            "_shape_of": shape_of,
            "_len": len,
            "_values_bad": fused.values_bad,
            "_range_bad": fused.range_bad,
            "_equals_bad": fused.equals_bad,
            "_addresses_bad": fused.addresses_bad,
            "_invariant_bad": fused.invariant_bad,
            "_compare_bad": fused.compare_bad,
            "_result_bad": fused.result_bad,
            "_memo_put": memo_put,
            "_arange": torch.arange,
            "_flags_bad": fused.flags_bad,
            "_Namespace": Namespace,
            "_nope": object(),
            "_torch": torch,
            "_b_pow": bounded_pow,
            "_b_mul": bounded_mul,
            "_b_add": bounded_add,
            "_b_mod": bounded_mod,
        }
        self.names: dict[str, str] = {}  # dimension name or expression text -> local
        self.field_locals: dict[str, str] = {}
        self.values = False  # writing the function with value checks
        self.tensors: dict[str, str] = {}  # tensor fields set on the path being written
        self.inlined = 0  # expressions written inline, for unique locals

    def const(self, prefix: str, value: Any) -> str:
        for key, known in self.consts.items():
            if key.startswith(prefix) and known is value:
                return key
        key = f"{prefix}{len(self.consts)}"
        self.consts[key] = value
        return key

    # -- the fields a class must set ------------------------------------------------------

    def active(self, fields: Sequence[FieldCheck]) -> list[FieldCheck]:
        out = []
        for spec in fields:
            consumers = spec.spec.consumers
            if consumers and all(
                self.compiled.overridden(self.cls, self.base, c) for c in consumers
            ):
                continue
            if not _ident(spec.name):
                raise _Unsupported(spec.name)
            out.append(spec)
        return out

    # -- names ------------------------------------------------------------------------------

    def resolve_names(self, lines: list[str], fields: Sequence[FieldCheck]) -> None:
        order: list[str] = []
        exprs: list[DimSpec] = []
        for spec in fields:
            for dim in spec.shape or ():
                if dim.name is not None and dim.name not in order:
                    order.append(dim.name)
                elif dim.expr is not None:
                    for name in dim.expr.names:
                        if name not in order:
                            order.append(name)
                    if all(d.text != dim.text for d in exprs):
                        exprs.append(dim)
        params = self.params or ()
        for name in order:
            if not _ident(name):
                raise _Unsupported(name)
            local = f"n_{name}"
            self.names[name] = local
            if name in params:
                index = params.index(name)
                lines.append(f"    if _n > {index}:")
                lines.append(f"        {local} = a[{index}]")
                lines.append("    else:")
                if name in self.defaults:
                    lines.append(f"        {local} = {self.const('_d', self.defaults[name])}")
                else:
                    lines.append(f"        {local} = getattr(obj, {name!r}, None)")
            else:
                lines.append(f"    {local} = getattr(obj, {name!r}, None)")
            lines.append(f"    if {local}.__class__ is not int:")
            lines.append(f"        {local} = _as_int({local})")
            if self.values and name not in params:
                lines.append(f"    u_{name} = {local} is None")  # unresolved: may be bound
        for index, dim in enumerate(exprs):
            assert dim.expr is not None
            local = f"e_{index}"
            self.names[dim.text] = local
            source = self.dimension_expression(dim.expr.text)
            guard = " and ".join(f"{self.names[n]} is not None" for n in dim.expr.names)
            lines.append(f"    {local} = _as_int({source}) if {guard or 'True'} else None")

    def dimension_expression(self, text: str) -> str:
        tree = check_expression(text, dimension=True)
        allowed = (
            ast.Expression, ast.BinOp, ast.UnaryOp, ast.Name, ast.Load, ast.Constant,
            ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.Pow, ast.USub, ast.UAdd,
        )  # fmt: skip
        for node in ast.walk(tree):
            if not isinstance(node, allowed):
                raise _Unsupported(text)
            if isinstance(node, ast.Constant) and type(node.value) is not int:
                raise _Unsupported(text)
            if isinstance(node, ast.Name):
                if not _ident(node.id):
                    raise _Unsupported(text)
                node.id = self.names[node.id]
        return ast.unparse(_Bounded().visit(tree).body)

    # -- metadata of one field ------------------------------------------------------------

    def field(self, lines: list[str], spec: FieldCheck, indent: str) -> None:
        local = f"f_{len(self.field_locals)}"
        self.field_locals[spec.name] = local
        v = local
        lines.append(f"{indent}{v} = obj.{spec.name}")
        kind = spec.kind
        tensor_checks = self.tensor_conditions(spec, v)
        if kind == "tensor":
            lines.append(f"{indent}if {v}.__class__ is not _T and not _isinstance({v}, _T):")
            lines.append(f"{indent}    return False")
            if tensor_checks:
                lines.append(f"{indent}if {' or '.join(tensor_checks)}:")
                lines.append(f"{indent}    return False")
            self.shape(lines, spec, v, indent, f"{v}.shape")
            return
        if kind is None:
            lines.append(f"{indent}if {v} is None:")
            lines.append(f"{indent}    return False")
        elif kind == "any":
            if tensor_checks:
                lines.append(f"{indent}if _isinstance({v}, _T) and ({' or '.join(tensor_checks)}):")
                lines.append(f"{indent}    return False")
        else:
            test = self.const("_is_", PY_TYPES[kind])
            exact = {"int": "int", "float": "float", "bool": "bool", "str": "str", "list": "list"}
            if kind in exact:
                lines.append(
                    f"{indent}if {v}.__class__ is not {exact[kind]} and not {test}({v}):"
                )
            else:
                lines.append(f"{indent}if not {test}({v}):")
            lines.append(f"{indent}    return False")
            if spec.items is not None and kind == "list":
                item_test = self.const("_is_", spec.items)
                cls_name = exact.get(spec.spec.items or "", "")
                fast = f"x.__class__ is not {cls_name} and " if cls_name else ""
                lines.append(f"{indent}for x in {v}:")
                lines.append(f"{indent}    if {fast}not {item_test}(x):")
                lines.append(f"{indent}        return False")
        if spec.shape is not None:
            if kind in ("list", "str", "dict"):
                self.shape(lines, spec, v, indent, f"(_len({v}),)")
            else:
                lines.append(f"{indent}s = _shape_of({v})")
                lines.append(f"{indent}if s is not None:")
                self.shape(lines, spec, v, indent + "    ", "s")

    def tensor_conditions(self, spec: FieldCheck, v: str) -> list[str]:
        """Conditions under which a tensor fails its dtype, device, pinning or contiguity."""
        out: list[str] = []
        if spec.dtype is not None:
            out.append(f"{v}.dtype is not {self.const('_dt', spec.dtype)}")
        rule = spec.device
        device_type = rule.type if rule is not None else None
        if rule is not None:
            if rule.type == "cpu" and rule.index is None:
                out.append(f"not {v}.is_cpu")
            elif rule.type == "meta" and rule.index is None:
                out.append(f"not {v}.is_meta")
            elif rule.type == "cuda":
                out.append(f"not {v}.is_cuda")
                if rule.current:
                    fixed = local_rank_device()
                    if fixed is not None:
                        out.append(f"{v}.get_device() != {fixed!r}")
                    else:
                        current = self.const("_current", torch.cuda.current_device)
                        out.append(f"{v}.get_device() != {current}()")
                elif rule.index is not None:
                    out.append(f"{v}.get_device() != {rule.index!r}")
            else:
                device = self.const("_dev", torch.device(rule.label))
                out.append(f"{v}.device != {device}")
        pinned = spec.spec.pinned
        if pinned is not None and cuda_available():
            test = f"not {v}.is_pinned()" if pinned else f"{v}.is_pinned()"
            out.append(test if device_type == "cpu" else f"({v}.is_cpu and {test})")
        contiguous = spec.spec.contiguous
        if contiguous is not None:
            test = f"not {v}.is_contiguous()" if contiguous else f"{v}.is_contiguous()"
            out.append(test if device_type in ("cpu", "cuda") else f"(not {v}.is_meta and {test})")
        return out

    def shape(self, lines: list[str], spec: FieldCheck, v: str, indent: str, size: str) -> None:
        dims = spec.shape
        if dims is None:
            return
        split = spec.split
        if split is None:
            head, tail = list(dims), []
        else:
            head, tail = list(dims[:split]), list(dims[split + 1 :])
        positions: list[tuple[DimSpec, str]] = [(d, str(i)) for i, d in enumerate(head)]
        positions += [(d, str(i - len(tail))) for i, d in enumerate(tail)]
        named = [(d, p) for d, p in positions if d.name is not None]
        simple = split is None and not any(d.wildcard for d in dims)
        if simple and not named:
            values = ", ".join(_dim_source(d, self.names) for d in dims)
            lines.append(f"{indent}if {size} != ({values}{',' if len(dims) == 1 else ''}):")
            lines.append(f"{indent}    return False")
            return
        lines.append(f"{indent}s = {size}")
        count = len(head) + len(tail)
        length = f"_len(s) != {count}" if split is None else f"_len(s) < {count}"
        lines.append(f"{indent}if {length}:")
        lines.append(f"{indent}    return False")
        for dim, position in named:
            local = self.names[dim.name or ""]
            lines.append(f"{indent}if {local} is None:")
            lines.append(f"{indent}    {local} = s[{position}]")
        if simple:
            values = ", ".join(_dim_source(d, self.names) for d in dims)
            lines.append(f"{indent}if s != ({values}{',' if len(dims) == 1 else ''}):")
        else:
            tests = [
                f"s[{position}] != {_dim_source(d, self.names)}"
                for d, position in positions
                if not d.wildcard
            ]
            if not tests:
                return
            lines.append(f"{indent}if {' or '.join(tests)}:")
        lines.append(f"{indent}    return False")

    # -- value checks of one field --------------------------------------------------------

    def field_values(self, lines: list[str], spec: FieldCheck, indent: str) -> None:
        v = self.field_locals[spec.name]
        s = spec.spec
        if s.values is not None:
            lines.append(f"{indent}if _values_bad({v}, {s.values!r}, fl):")
            lines.append(f"{indent}    return False")
        if s.range is not None:
            lo, hi = s.range
            lines.append(f"{indent}if _range_bad({v}, {lo!r}, {hi!r}, fl):")
            lines.append(f"{indent}    return False")
        if spec.equals is not None:
            expr = self.const("_x", spec.equals)
            self.expression(
                lines, spec.equals, indent, f"_compare_bad({v}, {{}}, fl)",
                f"_equals_bad({v}, {expr}, ns, fl)",
            )  # fmt: skip
        if s.addresses is not None:
            lines.append(f"{indent}if _addresses_bad({v}, {s.address_column!r}):")
            lines.append(f"{indent}    return False")

    def expression(
        self, lines: list[str], expr: Expression, indent: str, judge: str, fallback: str
    ) -> None:
        """``if <judge of expr> or <fallback>: return False``: written inline when it can be
        (:mod:`hookguard.runtime.inline`), under the conditions that make it exact; else, or
        when they do not hold, ``fallback`` runs the bounded evaluator."""
        inlined = inline(expr, self.tensors, self.const, str(self.inlined))
        if inlined is None:
            lines.append(f"{indent}if {fallback}:")
            lines.append(f"{indent}    return False")
            return
        self.inlined += 1
        if inlined.kind != "tensor" and judge.startswith("_result_bad("):
            judge = "not {}"  # a Python value: false fails, as for the evaluator
        lines.extend(f"{indent}{line}" for line in inlined.reads)
        lines.append(f"{indent}if {' and '.join(inlined.guards) or 'True'}:")
        lines.extend(f"{indent}    {line}" for line in inlined.lines)
        lines.append(f"{indent}    if {judge.format(inlined.source)}:")
        lines.append(f"{indent}        return False")
        lines.append(f"{indent}elif {fallback}:")
        lines.append(f"{indent}    return False")

    def object_names(
        self,
        main: Sequence[FieldCheck],
        clauses: Sequence[tuple[str, Sequence[FieldCheck], Sequence[Expression]]],
    ) -> list[str]:
        """Names the contract's expressions read that only the object can answer."""
        exprs: list[Expression] = [f.equals for f in main if f.equals is not None]
        for _, fields, invariants in clauses:
            exprs += [f.equals for f in fields if f.equals is not None]
            exprs += list(invariants)
        exprs += list(self.compiled.invariants)
        always = {f.name for f in main}  # in `names` on every call
        out: list[str] = []
        for expr in exprs:
            for node in ast.walk(ast.parse(expr.text.strip(), mode="eval")):
                if not isinstance(node, ast.Name) or node.id in out or node.id in always:
                    continue
                name = node.id
                if name == "torch" or name in EXPR_BUILTINS or name.startswith("_hg_"):
                    continue
                if not _ident(name):
                    raise _Unsupported(name)
                out.append(name)
        return out

    def invariants(self, lines: list[str], exprs: Sequence[Expression], indent: str) -> None:
        for expr in exprs:
            key = self.const("_x", expr)
            self.expression(
                lines, expr, indent, "_result_bad({}, fl)", f"_invariant_bad({key}, ns, fl)"
            )

    # -- the function ---------------------------------------------------------------------

    def function(self, name: str, *, values: bool) -> list[str]:
        compiled = self.compiled
        self.names = {}
        self.field_locals = {}
        self.values = values and compiled.has_values
        main = self.active(compiled.fields)
        clauses = [(attr, self.active(fields), inv) for attr, fields, inv in compiled.when]
        every = main + [f for _, fields, _ in clauses for f in fields]
        lines = [f"def {name}(obj, a):"]
        body: list[str] = []
        limit = len(self.params) if self.params is not None else 0
        body.append("    _n = _len(a)")
        body.append(f"    if _n > {limit}:")
        body.append("        return False")
        self.resolve_names(body, every)
        for spec in main:
            self.field(body, spec, "    ")
        for index, (attr, fields, _) in enumerate(clauses):
            if not _ident(attr):
                raise _Unsupported(attr)
            body.append(f"    w_{index} = getattr(obj, {attr!r}, False)")
            body.append(f"    if w_{index}:")
            for spec in fields:
                self.field(body, spec, "        ")
            if not fields:
                body.append("        pass")
        if values and compiled.has_values:
            self.value_section(body, main, clauses)
        body.append("    return True")
        lines.append("    try:")
        lines.extend("    " + line for line in body)
        lines.append("    except Exception:")
        lines.append("        return False")
        return lines

    def value_section(
        self,
        body: list[str],
        main: Sequence[FieldCheck],
        clauses: Sequence[tuple[str, Sequence[FieldCheck], Sequence[Expression]]],
    ) -> None:
        body.append("    fl = []")
        # the names an expression sees: the exact checker's {torch, bound, args, present}
        entries = ["'torch': _torch"]
        params = self.params or ()
        for index, param in enumerate(params):
            if param in self.defaults:
                default = self.const("_d", self.defaults[param])
                entries.append(f"{param!r}: a[{index}] if _n > {index} else {default}")
        body.append(f"    names = {{{', '.join(entries)}}}")
        for index, param in enumerate(params):
            if param not in self.defaults:
                body.append(f"    if _n > {index}:")
                body.append(f"        names[{param!r}] = a[{index}]")
        for name, local in self.names.items():
            if _ident(name) and name not in params:
                # a name no attribute resolves was bound from a shape: the exact checker's `bound`
                body.append(f"    if u_{name} and {local} is not None:")
                body.append(f"        names[{name!r}] = {local}")
        for spec in main:
            body.append(f"    names[{spec.name!r}] = {self.field_locals[spec.name]}")
        for index, (_, fields, _) in enumerate(clauses):
            if fields:
                body.append(f"    if w_{index}:")
                for spec in fields:
                    body.append(f"        names[{spec.name!r}] = {self.field_locals[spec.name]}")
        # Evaluate with a plain dict where every name resolves without the object: the lookups
        # stay in C (a Namespace answers each one, the guards' names included, in Python). The
        # names an expression reads from the object are fetched first; the Namespace is kept
        # only when one is missing (it then decides, as for the exact checker).
        body.append("    ns = names")
        for name in self.object_names(main, clauses):
            body.append(f"    if {name!r} not in names:")
            body.append(f"        x = getattr(obj, {name!r}, _nope)")
            body.append("        if x is _nope:")
            body.append("            ns = _Namespace(names, obj)")
            body.append("        else:")
            body.append(f"            names[{name!r}] = x")
        # tensor fields an inlined expression may read: those set on the path being written
        main_tensors = {f.name: self.field_locals[f.name] for f in main if f.kind == "tensor"}
        self.tensors = main_tensors
        for spec in main:
            self.field_values(body, spec, "    ")
        for index, (_, fields, invariants) in enumerate(clauses):
            if any(f.spec.has_value_checks for f in fields) or invariants:
                self.tensors = dict(main_tensors)
                self.tensors.update(
                    (f.name, self.field_locals[f.name]) for f in fields if f.kind == "tensor"
                )
                body.append(f"    if w_{index}:")
                for spec in fields:
                    self.field_values(body, spec, "        ")
                self.invariants(body, invariants, "        ")
        self.tensors = main_tensors
        self.invariants(body, self.compiled.invariants, "    ")
        body.append("    if fl and _flags_bad(fl):")
        body.append("        return False")


def generate(
    compiled: CompiledContract,
    cls: type,
    base: type,
    params: tuple[str, ...] | None,
    defaults: Mapping[str, Any],
) -> FastCheck | None:
    """The generated checks of ``compiled`` for objects of ``cls`` (``None``: not generated).

    ``params`` are the hook's positional parameters after ``self`` (``None`` when it takes
    other kinds), ``defaults`` their default values. Classes with stale overrides get none: the
    exact checker reports them on every call.
    """
    if compiled.stale_overrides(cls, base):
        return None
    writer = _Writer(compiled, cls, base, params, defaults)
    try:
        metadata = writer.function("check_metadata", values=False)
        full = writer.function("check_full", values=True)
        source = "\n".join([*metadata, "", *full])
    except _Unsupported:
        return None
    namespace = dict(writer.consts)
    code = compile(source, f"<hookguard contract {compiled.contract.location}>", "exec")
    exec(code, namespace)  # the source is ours: names validated, constants passed by reference
    return FastCheck(namespace["check_metadata"], namespace["check_full"], source)
