"""Property tests: shape matching against a direct reference, and contract line numbers."""

from __future__ import annotations

from typing import Any

import pytest
import torch

pytest.importorskip("hypothesis")  # the device machine has no hypothesis

from hypothesis import given, settings
from hypothesis import strategies as st

from hookguard.contracts import parse_contracts
from hookguard.runtime import verify

Dim = int | str


class Holder:
    pass


Holder.__module__, Holder.__qualname__ = "props", "Holder"


def reference_match(dims: list[Dim], shape: tuple[int, ...]) -> bool:
    """Literal ints, "*" and one optional "..." (no names)."""
    if "..." in dims:
        split = dims.index("...")
        head, tail = dims[:split], dims[split + 1 :]
        if len(shape) < len(head) + len(tail):
            return False
        pairs = list(zip(head, shape, strict=False))
        pairs += list(zip(tail, shape[len(shape) - len(tail) :], strict=False)) if tail else []
    else:
        if len(shape) != len(dims):
            return False
        pairs = list(zip(dims, shape, strict=True))
    return all(d == "*" or d == s for d, s in pairs)


dims_strategy = st.lists(st.one_of(st.integers(0, 3), st.just("*")), max_size=4).flatmap(
    lambda dims: st.one_of(
        st.just(dims),
        st.integers(0, len(dims)).map(lambda i: [*dims[:i], "...", *dims[i:]]),
    )
)


@settings(max_examples=150, deadline=None)
@given(dims=dims_strategy, shape=st.lists(st.integers(0, 3), max_size=5).map(tuple))
def test_shape_matching_agrees_with_reference(dims: list[Dim], shape: tuple[int, ...]) -> None:
    text = ", ".join(f'"{d}"' if isinstance(d, str) else str(d) for d in dims)
    (contract,) = parse_contracts(
        f'[[hook]]\nclass = "props.Holder"\nmethod = "h"\n[hook.fields.t]\nshape = [{text}]\n'
    )
    obj: Any = Holder()
    obj.t = torch.zeros(shape)
    found = verify(obj, [contract])
    assert (found == []) == reference_match(dims, shape)
    if found:
        assert [v.kind for v in found] == ["shape"]
        assert found[0].actual == f"[{', '.join(str(s) for s in shape)}]"


names = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True)


@settings(max_examples=60, deadline=None)
@given(
    fields=st.lists(names, min_size=1, max_size=6, unique=True),
    blank=st.lists(st.integers(0, 3), min_size=6, max_size=6),
)
def test_field_lines_are_the_table_headers(fields: list[str], blank: list[int]) -> None:
    lines = ["[[hook]]", 'class = "a.B"', 'method = "h"']
    expected: dict[str, int] = {}
    for i, name in enumerate(fields):
        lines.extend([""] * blank[i])
        lines.append(f"[hook.fields.{name}]")
        expected[name] = len(lines)
        lines.append('dtype = "int32"')
    (contract,) = parse_contracts("\n".join(lines) + "\n")
    assert {name: spec.line for name, spec in contract.fields.items()} == expected


named_dims = st.lists(
    st.one_of(st.integers(0, 3), st.just("*"), st.sampled_from(["a", "b", "a * 2", "a + b"])),
    max_size=4,
).flatmap(
    lambda dims: st.one_of(
        st.just(dims),
        st.integers(0, len(dims)).map(lambda i: [*dims[:i], "...", *dims[i:]]),
    )
)


@settings(max_examples=200, deadline=None)
@given(
    first=named_dims,
    second=named_dims,
    shapes=st.tuples(
        st.lists(st.integers(0, 4), max_size=5).map(tuple),
        st.lists(st.integers(0, 4), max_size=5).map(tuple),
    ),
    a_attr=st.one_of(st.none(), st.integers(0, 4)),
    b_arg=st.one_of(st.none(), st.integers(0, 4)),
)
def test_generated_shape_checks_agree_with_the_exact_checker(
    first: list[Dim],
    second: list[Dim],
    shapes: tuple[tuple[int, ...], tuple[int, ...]],
    a_attr: int | None,
    b_arg: int | None,
) -> None:
    """Bound names, attributes, arguments, expressions, "*" and "..." across two fields."""
    from hookguard.runtime.checks import CompiledContract
    from hookguard.runtime.codegen import generate

    def text(dims: list[Dim]) -> str:
        return ", ".join(f'"{d}"' if isinstance(d, str) else str(d) for d in dims)

    (contract,) = parse_contracts(
        f'[[hook]]\nclass = "props.Holder"\nmethod = "h"\n'
        f"[hook.fields.t]\nshape = [{text(first)}]\n[hook.fields.u]\nshape = [{text(second)}]\n"
    )
    obj: Any = Holder()
    obj.t, obj.u = torch.zeros(shapes[0]), torch.zeros(shapes[1])
    if a_attr is not None:
        obj.a = a_attr
    compiled = CompiledContract(contract)
    fast = generate(compiled, Holder, Holder, ("b",), {})
    assert fast is not None
    args: tuple[int, ...] = () if b_arg is None else (b_arg,)
    exact = compiled.check(obj, {} if b_arg is None else {"b": b_arg})
    if fast.metadata(obj, args):
        assert exact == []
    else:
        # stricter only where an expression names a dimension bound later by another field
        assert exact != [] or any(
            isinstance(d, str) and not d.isidentifier() and d not in ("*", "...")
            for d in (*first, *second)
        )
