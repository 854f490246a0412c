"""hookguard: hook-contract conformance checker for large Python codebases.

``import hookguard`` is cheap: it imports neither libcst nor torch. The static checker lives in
:mod:`hookguard.model` and :mod:`hookguard.rules`; the torch runtime in :mod:`hookguard.runtime`.
"""

from __future__ import annotations

import os
import sys


def _run_with_python_m() -> bool:
    """Whether this is ``python -m hookguard`` locating its ``__main__`` (``sys.argv[0]`` is
    ``"-m"`` meanwhile), not another ``-m`` module importing hookguard."""
    if sys.argv[:1] != ["-m"]:
        return False
    args = sys.orig_argv
    for index, arg in enumerate(args[1:], start=1):
        if arg == "-m":
            return args[index + 1 : index + 2] == ["hookguard"]
        if arg.startswith("-m"):
            return arg == "-mhookguard"
    return True


if _run_with_python_m():  # before any other import: see __main__.py
    try:
        _here: tuple[str, ...] = ("", ".", os.getcwd())
    except OSError:  # the current directory was removed
        _here = ("", ".")
    sys.path[:] = [p for p in sys.path if p not in _here]

from typing import TYPE_CHECKING, Any  # noqa: E402

__version__ = "0.1.0"

__all__ = ["ContractViolation", "__version__"]

if TYPE_CHECKING:
    from hookguard.runtime.violations import ContractViolation


def __getattr__(name: str) -> Any:
    if name == "ContractViolation":
        from hookguard.runtime.violations import ContractViolation

        return ContractViolation
    raise AttributeError(f"module 'hookguard' has no attribute {name!r}")
