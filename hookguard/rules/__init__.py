"""The rule registry: one module per rule, looked up by code or readable name."""

from __future__ import annotations

from hookguard.rules.base import Rule, RuleContext
from hookguard.rules.contract_bypass import ContractBypass
from hookguard.rules.contract_stale import ContractStale
from hookguard.rules.signature_drift import SignatureDrift
from hookguard.rules.stale_override import StaleOverride

ALL_RULES: tuple[type[Rule], ...] = (
    StaleOverride,
    SignatureDrift,
    ContractBypass,
    ContractStale,
)


def rule_by_id(ident: str) -> type[Rule] | None:
    for rule in ALL_RULES:
        if ident in (rule.code, rule.name) or ident.upper() == rule.code:
            return rule
    return None


def rule_is_per_class(code: str) -> bool:
    """Whether the rule's findings are each about one checked class (see ``Rule.per_class``)."""
    rule = rule_by_id(code)
    return rule is not None and rule.per_class


__all__ = ["ALL_RULES", "Rule", "RuleContext", "rule_by_id", "rule_is_per_class"]
