"""Runtime enforcement of hook state contracts (needs torch; imported lazily).

``import hookguard.runtime`` does not import torch: :func:`enforce` and :func:`verify` do, on
first use. ``HOOKGUARD_RUNTIME=0`` in the environment turns enforcement off (nothing installed).

>>> from hookguard.runtime import load_contracts, enforce, verify
>>> contracts = load_contracts("contracts/")
>>> with enforce(contracts):                       # raise ContractViolation on a bad hook
...     manager = MyKVCacheManager(...)
>>> verify(manager, contracts)                      # list of Violation, never raises
[]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hookguard.contracts import ContractError, HookContract, load_contracts
from hookguard.runtime.violations import ContractViolation, ContractWarning, Violation

if TYPE_CHECKING:
    from hookguard.runtime.enforcer import Enforcer, enforce, runtime_enabled, verify

__all__ = [
    "ContractError",
    "ContractViolation",
    "ContractWarning",
    "Enforcer",
    "HookContract",
    "Violation",
    "enforce",
    "load_contracts",
    "runtime_enabled",
    "verify",
]

_LAZY = frozenset({"Enforcer", "enforce", "runtime_enabled", "verify"})


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from hookguard.runtime import enforcer as module

        return getattr(module, name)
    raise AttributeError(f"module 'hookguard.runtime' has no attribute {name!r}")
