"""``hookguard hooks CLASS``: the hook map of a base class across the checkout."""

from __future__ import annotations

import argparse
import json
import os
import sys

from hookguard.commands.common import EXIT_CLEAN
from hookguard.engine import Options, audit
from hookguard.errors import UsageError
from hookguard.hookmap import BYPASS, DRIFTED, INHERITED, STALE, WITH_SUPER, build_hook_map

_STYLE = {
    INHERITED: "dim",
    WITH_SUPER: "green",
    STALE: "bold red",
    DRIFTED: "bold red",
    BYPASS: "bold yellow",
}


def run_hooks(args: argparse.Namespace) -> int:
    result = audit([args.path], Options(use_cache=not args.no_cache, reuse_results=False))
    project = result.project
    assert project is not None
    matches = project.find_class(args.cls)
    if not matches:
        raise UsageError(f"no class {args.cls!r} in the checkout at {result.root}")
    if len(matches) > 1:
        names = ", ".join(sorted(m.fq for m in matches))
        raise UsageError(f"{args.cls!r} is ambiguous: {names}")
    hook_map = build_hook_map(project, matches[0], result.findings)
    fmt = args.format
    if fmt == "auto":
        fmt = "rich" if sys.stdout.isatty() else "json"
    if fmt == "json":
        print(json.dumps(hook_map.to_json(), indent=2))
        return EXIT_CLEAN
    from rich.console import Console
    from rich.table import Table

    console = Console(no_color="NO_COLOR" in os.environ, highlight=False)
    table = Table(title=f"hooks of {hook_map.base.fq}", title_justify="left")
    table.add_column("hook", style="bold")
    for sub in hook_map.subclasses:
        table.add_column(sub.name, overflow="fold")
    for hook in hook_map.hooks:
        row = [hook]
        for sub in hook_map.subclasses:
            status = hook_map.cells[hook][sub.fq]
            style = _STYLE.get(status, "")
            row.append(f"[{style}]{status}[/]" if style else status)
        table.add_row(*row)
    console.print(table)
    for hook, details in hook_map.notes.items():
        for fq, detail in details.items():
            if hook_map.cells[hook][fq] in (STALE, DRIFTED, BYPASS):
                console.print(f"[bold]{hook}[/] in {fq}: {detail}")
    return EXIT_CLEAN
