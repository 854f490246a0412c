"""``hookguard fix``: libcst codemods for the findings that have a safe, mechanical fix.

Only :mod:`hookguard.commands.fix` imports this package, so ``import hookguard`` and
``hookguard audit`` never load libcst. :mod:`hookguard.fix.plan` turns findings into fixes (or
refusals) without libcst; :mod:`hookguard.fix.codemods` applies every fix of one file in one
parse and one transform; :mod:`hookguard.fix.apply` reads, diffs and atomically writes files.
The fixer never imports or runs the code it edits.
"""

from __future__ import annotations

from hookguard.fix.apply import FileResult, FixReport, fix_findings
from hookguard.fix.plan import Fix, Outcome, ParamsFix, RenameFix, plan_fixes

__all__ = [
    "FileResult",
    "Fix",
    "FixReport",
    "Outcome",
    "ParamsFix",
    "RenameFix",
    "fix_findings",
    "plan_fixes",
]
