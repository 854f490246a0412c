"""``hookguard explain [RULE]``: a rule's documentation, or the list of rules."""

from __future__ import annotations

import argparse

from hookguard.commands.common import EXIT_CLEAN
from hookguard.errors import UsageError


def run_explain(args: argparse.Namespace) -> int:
    from hookguard.config import canonical_rule, unknown_rule
    from hookguard.rules import ALL_RULES, rule_by_id

    if not args.rule:
        for rule in ALL_RULES:
            print(f"{rule.code}  {rule.name:<18} {rule.severity.value:<8} {rule.summary}")
        return EXIT_CLEAN
    found = rule_by_id(args.rule) or rule_by_id(canonical_rule(args.rule) or "")
    if found is None:
        raise UsageError(unknown_rule(args.rule))
    print(found.documentation())
    return EXIT_CLEAN
