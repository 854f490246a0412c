"""Bind a recorded call shape against a signature, as CPython would, without running anything."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

from hookguard.model.records import CallSite, MethodRecord, Param, ParamKind


class _Shape(NamedTuple):
    positional: int
    keywords: tuple[str, ...]
    star_args: bool
    star_kwargs: bool


@dataclass
class BindResult:
    """Results are cached and shared between call sites: read them, never change them."""

    unexpected: list[str] = field(default_factory=list)  # keywords nothing accepts
    duplicated: list[str] = field(default_factory=list)  # given positionally and by keyword
    missing: list[str] = field(default_factory=list)  # required parameters not given
    surplus_positional: int = 0  # positional arguments beyond what the signature takes
    accepted_positional: int = 0

    @property
    def ok(self) -> bool:
        return not (self.unexpected or self.duplicated or self.missing or self.surplus_positional)

    def describe(self) -> str:
        parts = []
        if self.unexpected:
            names = ", ".join(f"'{n}'" for n in self.unexpected)
            parts.append(f"unexpected keyword argument{'s' * (len(self.unexpected) > 1)} {names}")
        if self.duplicated:
            parts.append("multiple values for " + ", ".join(f"'{n}'" for n in self.duplicated))
        if self.missing:
            parts.append("missing required " + ", ".join(f"'{n}'" for n in self.missing))
        if self.surplus_positional:
            parts.append(
                f"takes {self.accepted_positional} positional argument"
                f"{'s' * (self.accepted_positional != 1)} but "
                f"{self.accepted_positional + self.surplus_positional} were given"
            )
        return "; ".join(parts)


def bind(call: CallSite, method: MethodRecord, *, unbound: bool = False) -> BindResult:
    """What goes wrong when ``call`` reaches ``method`` (its ``self``/``cls`` already bound,
    unless ``unbound``: a plain function looked up on a class, which takes ``self`` as written).

    ``*args``/``**kwargs`` at the call site make the counts lower bounds: only what is certain
    to fail (surplus positionals, keywords nothing accepts) is reported then.
    """
    params = method.params if unbound else method.bound_params
    return _bind(call.positional, call.keywords, call.star_args, call.star_kwargs, params)


@lru_cache(maxsize=65536)
def _bind(
    n_positional: int,
    keywords: tuple[str, ...],
    star_args: bool,
    star_kwargs: bool,
    params: tuple[Param, ...],
) -> BindResult:
    """:func:`bind` on the call's shape: families repeat the same shapes, so this is cached."""
    call = _Shape(n_positional, keywords, star_args, star_kwargs)
    result = BindResult()
    positional = [
        p for p in params
        if p.kind in (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD)
    ]
    var_positional = any(p.kind is ParamKind.VAR_POSITIONAL for p in params)
    var_keyword = any(p.kind is ParamKind.VAR_KEYWORD for p in params)
    keyword_names = {
        p.name for p in params
        if p.kind in (ParamKind.POSITIONAL_OR_KEYWORD, ParamKind.KEYWORD_ONLY)
    }
    result.accepted_positional = len(positional)
    if call.positional > len(positional) and not var_positional:
        result.surplus_positional = call.positional - len(positional)
    filled = {p.name for p in positional[: call.positional]}
    for name in call.keywords:
        if name in filled and name in keyword_names:
            result.duplicated.append(name)
        elif name not in keyword_names and not var_keyword:
            result.unexpected.append(name)
    if not (call.star_args or call.star_kwargs):
        given = filled | set(call.keywords)
        for param in params:
            if param.kind in (ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD):
                continue
            if not param.has_default and param.name not in given:
                result.missing.append(param.name)
    return result
