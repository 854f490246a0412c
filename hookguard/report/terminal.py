"""Rich output for a person at a terminal: grouped by file, with the chain and the fix."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import groupby
from typing import IO

from hookguard.commands.common import INPUT_PROBLEM, file_analysed
from hookguard.findings import Finding, InputError, Severity
from hookguard.report.escape import printable, safe_path


def render_terminal(
    findings: Sequence[Finding],
    errors: Sequence[InputError],
    notes: Sequence[str],
    summary: str,
    stream: IO[str],
    color: bool,
) -> None:
    from rich.console import Console
    from rich.markup import escape as markup_escape

    def escape(text: str) -> str:  # text from the checkout: no markup, no control characters
        return markup_escape(printable(text))
    from rich.tree import Tree

    console = Console(file=stream, no_color=not color, highlight=False, soft_wrap=False)
    for path, group in groupby(findings, key=lambda f: f.path):
        tree = Tree(f"[bold underline]{markup_escape(safe_path(path))}[/]")
        for finding in group:
            style = "bold red" if finding.severity is Severity.ERROR else "bold yellow"
            node = tree.add(
                f"[{style}]{finding.code} {finding.rule}[/] "
                f"[dim]{finding.line}:{finding.column}[/] {_symbol(finding.symbol, escape)}"
            )
            node.add(escape(finding.message))
            chain = finding.evidence.get("chain")
            if isinstance(chain, list) and len(chain) > 1:
                node.add("[dim]chain:[/] " + " → ".join(escape(str(c).rsplit(".", 1)[-1])
                                                        for c in chain))
            commit = finding.evidence.get("short")
            if commit:
                subject = escape(str(finding.evidence.get("subject")))
                node.add(f"[dim]commit:[/] {escape(str(commit))} {subject}")
            for related in finding.related:
                node.add(
                    f"[dim]see:[/] {escape(related.path)}:{related.line} {escape(related.message)}"
                )
            fix = finding.evidence.get("fix")
            if fix:
                node.add(f"[green]fix:[/] {escape(str(fix))}")
        console.print(tree)
        console.print()
    for error in errors:
        # An input problem, never "error" (a finding's severity): red when the file was not
        # analysed (it fails the run), yellow when it was (a base class that does not resolve).
        where = f"{markup_escape(safe_path(error.path))}:{error.line}"
        style = "yellow" if file_analysed(error) else "red"
        console.print(f"[{style}]{where}: {INPUT_PROBLEM}:[/] {escape(error.message)}")
    for note in notes:
        console.print(f"[dim]note: {escape(note)}[/]")
    console.print(escape(summary), soft_wrap=True)


def _symbol(symbol: str, escape: Callable[[str], str]) -> str:
    """``Class.method`` then the module, dimmed: rich wraps lines between words only, so a
    long dotted name as one word would be cut mid-identifier on a narrow terminal."""
    parts = symbol.split(".")
    if len(parts) <= 2:
        return escape(symbol)
    return f"{escape('.'.join(parts[-2:]))} [dim]in {escape('.'.join(parts[:-2]))}[/]"
