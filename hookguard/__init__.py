"""hookguard: hook-contract conformance checker for large Python codebases.

``import hookguard`` is cheap: it imports neither libcst nor torch. The static checker lives in
:mod:`hookguard.model` and :mod:`hookguard.rules`; the torch runtime in :mod:`hookguard.runtime`.
"""

from __future__ import annotations

import os
import sys

if sys.argv[:1] == ["-m"]:  # ``python -m hookguard``, before any other import: __main__.py
    try:
        _here: tuple[str, ...] = ("", ".", os.getcwd())
    except OSError:  # the current directory was removed
        _here = ("", ".")
    sys.path[:] = [p for p in sys.path if p not in _here]

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["ContractViolation", "__version__"]

if TYPE_CHECKING:
    from hookguard.runtime.violations import ContractViolation


def __getattr__(name: str) -> Any:
    if name == "ContractViolation":
        from hookguard.runtime.violations import ContractViolation

        return ContractViolation
    raise AttributeError(f"module 'hookguard' has no attribute {name!r}")
