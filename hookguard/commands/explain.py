"""``hookguard explain [RULE]``: a rule's documentation, or the list of rules."""

from __future__ import annotations

import argparse

from hookguard.commands.common import EXIT_CLEAN
from hookguard.errors import UsageError


def run_explain(args: argparse.Namespace) -> int:
    from hookguard.rules import ALL_RULES, rule_by_id

    if not args.rule:
        for rule in ALL_RULES:
            print(f"{rule.code}  {rule.name:<18} {rule.severity.value:<8} {rule.summary}")
        return EXIT_CLEAN
    found = rule_by_id(args.rule)
    if found is None:
        names = ", ".join(f"{r.code}/{r.name}" for r in ALL_RULES)
        raise UsageError(f"unknown rule {args.rule!r} (known: {names})")
    print(found.documentation())
    return EXIT_CLEAN
