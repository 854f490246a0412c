"""Evaluate contract expressions (invariants, ``equals``, shape dimensions) in a closed namespace.

Every expression was checked against a whitelist of syntax by
:func:`hookguard.contracts.check_expression` when the contract was loaded: no lambdas, no
comprehensions, no dunder names or attributes, only whitelisted attribute names and builtins.
Only such checked trees are compiled here, and they run with no builtins but the whitelisted
ones. Names resolve to the namespace given (fields, hook arguments, bound dimensions, ``torch``),
then to attributes of the object.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator, Mapping
from types import CodeType
from typing import Any

from hookguard.contracts import EXPR_BUILTINS, check_expression

__all__ = ["Expression", "Namespace"]

_SAFE_BUILTINS: dict[str, Any] = {name: getattr(builtins, name) for name in EXPR_BUILTINS}
_GLOBALS: dict[str, Any] = {"__builtins__": _SAFE_BUILTINS}


class Namespace(Mapping[str, Any]):
    """Names for an expression: explicit ``names`` first, then attributes of ``obj``."""

    __slots__ = ("names", "obj")

    def __init__(self, names: Mapping[str, Any], obj: object = None) -> None:
        self.names = names
        self.obj = obj

    def __getitem__(self, key: str) -> Any:
        if key in self.names:
            return self.names[key]
        if key in _SAFE_BUILTINS:
            raise KeyError(key)  # fall through to the restricted builtins
        if self.obj is not None and not key.startswith("__"):
            try:
                return getattr(self.obj, key)
            except AttributeError:
                pass
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


class Expression:
    """A checked, compiled contract expression."""

    __slots__ = ("code", "names", "text")

    def __init__(self, text: str, *, dimension: bool = False) -> None:
        tree = check_expression(text, dimension=dimension)
        self.text = text
        self.code: CodeType = compile(tree, f"<contract expression {text!r}>", "eval")
        self.names: tuple[str, ...] = self.code.co_names

    def __call__(self, namespace: Mapping[str, Any]) -> Any:
        # The tree passed the syntax whitelist above, and runs with the restricted builtins.
        return eval(self.code, _GLOBALS, namespace)

    def __repr__(self) -> str:
        return f"Expression({self.text!r})"
