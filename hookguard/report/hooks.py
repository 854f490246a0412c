"""The hook map of a base class as text: plain for logs and pipes, rich for a terminal.

The layout scales with the family: one summary row per hook (how many subclasses override it,
call ``super()``, keep a dead override, drift, bypass, and the class of the base's MRO that
defines it), then one row per subclass that overrides something, grouped (problems first) with
the hooks it overrides and their status, then the count and names of the subclasses that
inherit every hook. A family of 174 subclasses is as readable as one of 3: no column per
subclass, and identifiers are never cut. By default the hooks no subclass overrides, private
helpers and properties are counted in one line, not listed (``--all`` lists them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import IO

from hookguard.hookmap import (
    BYPASS,
    DRIFTED,
    INHERITED,
    OVERRIDDEN,
    STALE,
    WITH_SUPER,
    HookMap,
)
from hookguard.model.project import ClassInfo
from hookguard.report.escape import printable

STYLE = {
    INHERITED: "dim",
    OVERRIDDEN: "",
    WITH_SUPER: "green",
    STALE: "bold red",
    DRIFTED: "bold red",
    BYPASS: "bold yellow",
}
COLUMNS = ("overridden", "super()", "stale", "drifted", "bypass")
# Short status labels for the narrow rich column (plain and JSON use the statuses as they are).
LABEL = {OVERRIDDEN: "override", WITH_SUPER: "super()", STALE: "stale", DRIFTED: "drifted",
         BYPASS: "bypass", INHERITED: "inherited"}


def hook_counts(hook_map: HookMap, hook: str) -> tuple[int, int, int, int, int]:
    """Subclasses that override ``hook`` (any way), call ``super()``, keep a dead override of
    its old name, drift from it, bypass it."""
    counts = hook_map.counts(hook)
    overridden = counts[OVERRIDDEN] + counts[WITH_SUPER] + counts[DRIFTED] + counts[BYPASS]
    return overridden, counts[WITH_SUPER], counts[STALE], counts[DRIFTED], counts[BYPASS]


def headline(hook_map: HookMap, where: Callable[[ClassInfo], str]) -> str:
    problems, overriding, inheriting = hook_map.groups()
    n_hooks, n_subs = len(hook_map.hooks), len(hook_map.subclasses)
    shown = " shown" if hook_map.hidden else ""
    return (
        f"{hook_map.base.fq} ({where(hook_map.base)}): {n_hooks} hook{'s' * (n_hooks != 1)}"
        f"{shown}, "
        f"{n_subs} subclass{'es' * (n_subs != 1)} ({len(problems)} with problems, "
        f"{len(overriding)} overriding without one, {len(inheriting)} inheriting every hook)"
    )


def render_hooks_plain(hook_map: HookMap, where: Callable[[ClassInfo], str]) -> str:
    """Aligned plain text: no colour, no box drawing, one fact per line."""
    lines = [printable(headline(hook_map, where))]
    if hook_map.hidden:
        lines.append(hook_map.hidden_summary())
    lines.append("")
    if hook_map.hooks:
        width = max([len("hook"), *(len(printable(h)) for h in hook_map.hooks)])
        lines.append(f"{'hook':<{width}}  " + "  ".join(COLUMNS) + "  defined in")
        for hook in hook_map.hooks:
            counts = hook_counts(hook_map, hook)
            lines.append(f"{printable(hook):<{width}}  " + "  ".join(
                f"{n:>{len(c)}}" for n, c in zip(counts, COLUMNS, strict=True))
                + f"  {printable(_owner(hook_map, hook))}")
    else:
        lines.append("no subclass overrides a hook")
    problems, overriding, inheriting = hook_map.groups()
    for title, group in (("subclasses with problems", problems),
                         ("subclasses that override hooks", overriding)):
        if not group:
            continue
        lines += ["", f"{title} ({len(group)}):"]
        for sub in group:
            lines.append(f"  {printable(sub.fq)} ({printable(where(sub))})")
            overrides = hook_map.overrides(sub)
            hook_width = max(len(h) for h, _, _ in overrides)
            for hook, status, detail in overrides:
                text = f"    {printable(hook):<{hook_width}}  {status}"
                lines.append(text + (f"  {printable(detail)}" if detail else ""))
    if inheriting:
        lines += ["", f"inheriting every hook ({len(inheriting)}): "
                  + ", ".join(printable(s.fq) for s in inheriting)]
    return "\n".join(lines) + "\n"


def _owner(hook_map: HookMap, hook: str) -> str:
    """The name of the class of the base's MRO that defines ``hook``."""
    owner = hook_map.owners.get(hook)
    return owner.name if owner is not None else hook_map.base.name


def render_hooks_rich(
    hook_map: HookMap, where: Callable[[ClassInfo], str], stream: IO[str], color: bool
) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    def safe(text: str) -> str:
        return escape(printable(text))

    console = Console(file=stream, no_color=not color, highlight=False)
    console.print(f"[bold]{safe(headline(hook_map, where))}[/]")
    if hook_map.hidden:
        console.print(f"[dim]{safe(hook_map.hidden_summary())}[/]")
    if not hook_map.hooks:
        console.print("no subclass overrides a hook")
    hook_width = max([len("hook"), *(len(printable(h)) for h in hook_map.hooks)])
    mixins = any(_owner(hook_map, h) != hook_map.base.name for h in hook_map.hooks)
    summary = Table(show_edge=False)
    summary.add_column("hook", style="bold", no_wrap=True, min_width=hook_width)
    summary.add_column("overridden by", ratio=1)  # words: wraps between them, never inside
    if mixins:  # hooks that come from the base's bases and mixins say which
        summary.add_column("defined in", style="dim", overflow="fold")
    for hook in hook_map.hooks:
        overridden, with_super, stale, drifted, bypass = hook_counts(hook_map, hook)
        parts = [f"{with_super} with super()"] if with_super else []
        parts += [f"[{STYLE[status]}]{n} {status}[/]"
                  for n, status in ((stale, STALE), (drifted, DRIFTED), (bypass, BYPASS)) if n]
        text = f"{overridden} of {len(hook_map.subclasses)}"
        row = [safe(hook), text + (f" ({', '.join(parts)})" if parts else "")]
        summary.add_row(*row, *([safe(_owner(hook_map, hook))] if mixins else []))
    if hook_map.hooks:
        console.print(summary)
    problems, overriding, inheriting = hook_map.groups()
    if problems or overriding:
        name_width = max(len(s.name) for s in [*problems, *overriding])
        table = Table(show_edge=False)
        table.add_column("subclass", overflow="fold", min_width=min(name_width, 40), ratio=1)
        table.add_column("hook", no_wrap=True, min_width=hook_width)
        table.add_column("status", no_wrap=True, min_width=max(map(len, LABEL.values())))
        for title, group in (("with problems", problems), ("overriding", overriding)):
            if not group:
                continue
            table.add_row(f"[bold]{title} ({len(group)})[/]", "", "")
            for sub in group:
                for i, (hook, status, _) in enumerate(hook_map.overrides(sub)):
                    style = STYLE.get(status, "")
                    name = (Text.from_markup(f"{safe(sub.name)}\n[dim]{safe(where(sub))}[/]")
                            if i == 0 else Text(""))
                    label = LABEL.get(status, status)
                    table.add_row(name, safe(hook), f"[{style}]{label}[/]" if style else label)
            table.add_section()
        console.print(table)
        for sub in problems:
            for hook, status, detail in hook_map.overrides(sub):
                if status in (STALE, DRIFTED, BYPASS) and detail:
                    console.print(f"[bold]{safe(hook)}[/] in {safe(sub.name)}: {safe(detail)}")
    if inheriting:
        names = ", ".join(safe(s.name) for s in inheriting)
        console.print(f"[dim]inheriting every hook ({len(inheriting)}):[/] {names}")
