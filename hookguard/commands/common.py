"""What every command shares: exit codes, the engine options of the shared flags, the summary
line and report output. :mod:`hookguard.cli` and every command module import this; it imports
neither."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from hookguard.errors import UsageError

if TYPE_CHECKING:
    from hookguard.engine import Options
    from hookguard.findings import Finding, InputError

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
FORMATS = ("auto", "rich", "plain", "json", "sarif", "github")


def options_from(args: argparse.Namespace) -> Options:
    """The engine options of the shared flags (see :func:`hookguard.cli.add_common`)."""
    from hookguard.config import canonical_rules
    from hookguard.engine import Options

    return Options(
        use_cache=not args.no_cache,
        history=not args.no_history,
        contracts=tuple(args.contracts),
        workers=getattr(args, "jobs", None),
        select=canonical_rules(args.select),  # an unknown rule: exit 2, "did you mean"
    )


def reported(
    args: argparse.Namespace, findings: Sequence[Finding], notes: list[str]
) -> list[Finding]:
    """The findings to report: without ``--all-warnings``, less the warnings whose missing
    proof the checkout's own code leans against (:mod:`hookguard.hedges`); a note says how
    many were held back."""
    from hookguard.hedges import reported as hedged

    shown, held = hedged(findings, getattr(args, "all_warnings", False))
    if held:
        notes.append(f"{_plural(held, 'weak warning')} held back: its missing proof is code "
                     "the checkout holds and hookguard cannot evaluate (a guard, an "
                     "annotation, a lookup by name, the override's history); --all-warnings "
                     "reports them")
    return shown


def progress_shown(args: argparse.Namespace) -> AbstractContextManager[None]:
    """Progress on stderr while the block runs, where :func:`hookguard.progress.wanted` says
    (``--progress`` draws it even off a terminal; ``--no-progress`` never)."""
    from hookguard import progress

    choice = getattr(args, "progress", None)
    return progress.shown(progress.wanted(getattr(args, "format", "auto"), choice),
                          force=choice is True)


# Input problems that leave a class's analysis incomplete but the file analysed; every other
# input error means a whole file was not analysed (it does not parse, cannot be read, ...).
_CLASS_PROBLEMS = ("cannot resolve base class", "cyclic inheritance",
                   "inconsistent method resolution order")

#: What plain and rich output call an :class:`~hookguard.findings.InputError`: never "error",
#: which is a finding's severity (the summary's "0 errors" counts findings only).
INPUT_PROBLEM = "input problem"


def not_analysed(errors: Sequence[InputError]) -> list[InputError]:
    """The errors that stand for a whole file left out of the analysis."""
    return [e for e in errors if not e.message.startswith(_CLASS_PROBLEMS)]


def file_analysed(error: InputError) -> bool:
    """Whether the file of an input problem was analysed all the same (a base class that does
    not resolve, an inconsistent MRO): it does not fail the run."""
    return error.message.startswith(_CLASS_PROBLEMS)


def input_problem_lines(errors: Sequence[InputError]) -> list[str]:
    """``path:line: input problem: message``, one per problem, escaped (plain output)."""
    from hookguard.report.escape import printable, safe_path

    return [f"{safe_path(e.path)}:{e.line}: {INPUT_PROBLEM}: {printable(e.message)}"
            for e in errors]


def reason_of(error: InputError) -> str:
    """A short reason for a file not analysed: ``syntax error``, ``cannot read file``, ..."""
    message = error.message
    if "max-file-size" in message:
        return "over max-file-size"
    head = message.split(":", 1)[0].split(" (", 1)[0].strip()
    return head if 0 < len(head) <= 40 else "other"


def summarise(
    findings: Sequence[Finding],
    errors: Sequence[InputError],
    files: int,
    seconds: float,
    classes: int | None = None,
    label: str = "hookguard",
    new: bool = False,
    unit: str = "file",
) -> str:
    """The summary line printed on every run, clean ones included.

    ``hookguard: All checks passed! 12 files, 30 classes (0.20s)``, or the counts of errors and
    warnings; then how many files were not analysed and why, and other input problems. ``new``:
    the counts are of what a change introduces (``hookguard check``).
    """
    from hookguard.findings import Severity

    n_err = sum(f.severity is Severity.ERROR for f in findings)
    n_warn = len(findings) - n_err
    scope = _plural(files, unit) + (f", {_plural(classes, 'class')}" if classes is not None
                                      else "")
    if not findings and not errors:
        passed = "no new findings" if new else "All checks passed!"
        return f"{label}: {passed} {scope} ({seconds:.2f}s)"
    kind = "new " if new else ""
    counts = f"{_plural(n_err, kind + 'error')}, {_plural(n_warn, kind + 'warning')}"
    line = f"{label}: {counts} in {scope} ({seconds:.2f}s)"
    skipped = not_analysed(errors)
    if skipped:
        reasons: dict[str, int] = {}
        for error in skipped:
            reason = reason_of(error)
            reasons[reason] = reasons.get(reason, 0) + 1
        ordered = sorted(reasons.items(), key=lambda item: (-item[1], item[0]))
        why = ", ".join(reason if n == 1 else f"{reason}: {n}" for reason, n in ordered)
        line += f"; {_plural(len(skipped), 'file')} not analysed ({why})"
    others = len(errors) - len(skipped)
    if others:
        line += f"; {_plural(others, 'input problem')}"
    return line


def classes_of(result: object) -> int | None:
    """How many classes the run modelled, when its result still holds the model."""
    classes = getattr(getattr(result, "project", None), "classes", None)
    return len(classes) if isinstance(classes, dict) else None


def _plural(count: int, noun: str) -> str:
    suffix = "es" if noun.endswith("s") else "s"
    return f"{count} {noun}{suffix * (count != 1)}"


def exit_code(
    findings: Sequence[Finding], exit_zero: bool, errors: Sequence[InputError] = ()
) -> int:
    """1 for an error-level finding or a file not analysed (as ruff and mypy fail on a file
    that does not parse); 0 otherwise, and always 0 with ``--exit-zero``."""
    from hookguard.findings import Severity

    if exit_zero:
        return EXIT_CLEAN
    failed = any(f.severity is Severity.ERROR for f in findings) or bool(not_analysed(errors))
    return EXIT_FINDINGS if failed else EXIT_CLEAN


def open_output(path: str | None) -> IO[str]:
    """``--output FILE`` opened for writing, or stdout; a file that cannot be written is a
    usage error (exit 2) with one line naming it."""
    if not path:
        return sys.stdout
    try:
        return open(path, "w", encoding="utf-8", errors="surrogateescape")
    except OSError as exc:
        from hookguard.report.escape import printable

        raise UsageError(
            f"cannot write the report to {printable(path)}: {exc.strerror or exc}"
        ) from None


def display_paths(
    findings: Sequence[Finding], errors: Sequence[InputError], root: Path
) -> tuple[list[Finding], list[InputError]]:
    """Copies with paths relative to the current directory when under it, else absolute, as
    ruff prints them."""
    from dataclasses import replace

    cwd = Path.cwd()
    cache: dict[str, str] = {}

    def rel(path: str) -> str:
        if path not in cache:
            full = root / path
            # As ruff: relative under the current directory, absolute elsewhere.
            cache[path] = (full.relative_to(cwd) if full.is_relative_to(cwd) else full).as_posix()
        return cache[path]

    shown = [
        replace(f, path=rel(f.path), related=[replace(r, path=rel(r.path)) for r in f.related])
        for f in findings
    ]
    return shown, [replace(e, path=rel(e.path)) for e in errors]


def emit(
    args: argparse.Namespace,
    findings: Sequence[Finding],
    errors: Sequence[InputError],
    notes: Sequence[str],
    summary: str,
    root: Path,
    extra: dict[str, Any] | None = None,
) -> None:
    """Write a report in the chosen format to stdout or ``--output``.

    ``extra``: more top-level keys of the JSON document (``check``'s ``hook_changes``).

    Plain and rich output name files relative to the current directory; JSON, SARIF and GitHub
    output relative to the repository root (their documented schema). The summary line is
    printed on every run: in the report for rich and GitHub output, on stderr otherwise.
    """
    fmt = args.format
    stream = open_output(getattr(args, "output", None))
    try:
        if fmt == "auto":
            fmt = "rich" if stream.isatty() else "plain"
        if fmt in ("rich", "plain"):
            findings, errors = display_paths(findings, errors, root)
        if fmt == "rich":
            from hookguard.report.terminal import render_terminal

            color = "NO_COLOR" not in os.environ and stream.isatty()
            render_terminal(findings, errors, notes, summary, stream, color)
        elif fmt == "json":
            from hookguard.report.json_report import render_json

            stream.write(render_json(findings, errors, notes, extra))
        elif fmt == "sarif":
            from hookguard.report.sarif import render_sarif

            stream.write(render_sarif(findings, errors, root, notes))
        elif fmt == "github":
            from hookguard.report.github import render_github

            stream.write(render_github(findings, errors, notes, summary))
        else:
            from hookguard.report.plain import render_plain

            # Findings, then input problems (named as such, not "error"), then notes.
            lines = input_problem_lines(errors)
            stream.write(render_plain(findings, ())
                         + "".join(line + "\n" for line in lines)
                         + render_plain((), (), notes))
        stream.flush()
    finally:
        if stream is not sys.stdout:
            stream.close()
    if fmt in ("plain", "json", "sarif"):
        from hookguard.report.escape import printable

        print(printable(summary), file=sys.stderr)
