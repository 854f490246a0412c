"""The ``hookguard`` command line. Imports stay lazy: ``--version`` loads almost nothing."""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

from hookguard import __version__
from hookguard.errors import UsageError

if TYPE_CHECKING:
    from hookguard.engine import Options
    from hookguard.findings import Finding, InputError

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
FORMATS = ("auto", "rich", "plain", "json", "sarif", "github")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=FORMATS, default="auto",
                        help="output format (auto: rich on a terminal, plain otherwise)")
    parser.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE")
    parser.add_argument("--exit-zero", action="store_true",
                        help="exit 0 even when error-level findings exist")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    parser.add_argument("--no-history", action="store_true",
                        help="do not use git history as evidence")
    parser.add_argument("--contracts", action="append", default=[], metavar="PATH",
                        help="contract file or directory (repeatable)")
    parser.add_argument("--select", action="append", default=[], metavar="RULE",
                        help="only run these rules (code or name; repeatable)")
    parser.add_argument("--jobs", "-j", type=int, default=None,
                        help="parser processes for cold runs (default: all cores)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hookguard",
        description="Find stale hook overrides, signature drift and contract bypass.",
    )
    parser.add_argument("--version", action="version", version=f"hookguard {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    audit = commands.add_parser("audit", help="audit a whole checkout")
    audit.add_argument("paths", nargs="*", type=Path,
                       help="report findings under these paths (default: the current directory)")
    _common(audit)

    check = commands.add_parser("check", help="gate a change: findings the change introduces")
    check.add_argument("--base", help="base revision (a branch uses its merge-base with head)")
    check.add_argument("--head", default="HEAD", help="head revision (default: HEAD)")
    check.add_argument("--staged", action="store_true",
                       help="compare the staged tree with HEAD (pre-commit)")
    check.add_argument("--repo", type=Path, default=Path("."), help="the repository")
    check.add_argument("files", nargs="*", help=argparse.SUPPRESS)  # passed by pre-commit
    _common(check)

    hooks = commands.add_parser("hooks", help="map a base class's hooks across its subclasses")
    hooks.add_argument("cls", metavar="CLASS", help="package.module.Class (or a unique suffix)")
    hooks.add_argument("path", nargs="?", type=Path, default=Path("."))
    hooks.add_argument("--format", choices=("auto", "rich", "json"), default="auto")
    hooks.add_argument("--no-cache", action="store_true")

    contracts = commands.add_parser("contracts", help="work with contract files")
    contracts_sub = contracts.add_subparsers(dest="contracts_command", metavar="ACTION")
    contracts_check = contracts_sub.add_parser("check", help="check contracts against the code")
    contracts_check.add_argument("paths", nargs="*", type=Path,
                                 help="contract files or directories (default: contracts/)")
    contracts_check.add_argument("--repo", type=Path, default=Path("."))
    contracts_check.add_argument("--format", choices=("auto", "rich", "plain", "json"),
                                 default="auto")

    fix = commands.add_parser("fix", help="apply the mechanical fixes (renames, missing keywords)")
    fix.add_argument("paths", nargs="*", type=Path,
                     help="fix findings under these paths (default: the current directory)")
    fix.add_argument("--diff", action="store_true",
                     help="print a unified diff to stdout and write nothing")
    fix.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    fix.add_argument("--contracts", action="append", default=[], metavar="PATH",
                     help="contract file or directory (repeatable)")

    explain = commands.add_parser("explain", help="print a rule's documentation")
    explain.add_argument("rule", nargs="?", help="rule code or name; omit to list all")

    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # A short-lived process that builds hundreds of thousands of acyclic objects: the cyclic
    # collector only costs time here (3x on loading the cache). Reference counting frees them.
    gc.disable()
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    from hookguard.config import ConfigError

    try:
        if args.command == "audit":
            return _audit(args)
        if args.command == "explain":
            return _explain(args)
        if args.command == "hooks":
            from hookguard.commands.hooks import run_hooks

            return run_hooks(args)
        if args.command == "fix":
            from hookguard.commands.fix import run_fix

            return run_fix(args)
        if args.command == "contracts":
            from hookguard.commands.contracts import run_contracts

            return run_contracts(args)
        if args.command == "check":
            from hookguard.commands.check import run_check

            return run_check(args)
    except (UsageError, ConfigError) as exc:
        print(f"hookguard: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:
        from hookguard.contracts import ContractError
        from hookguard.git.repo import GitError

        if isinstance(exc, (ContractError, GitError)):
            print(f"hookguard: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        raise
    parser.error(f"unknown command {args.command}")
    return EXIT_USAGE  # pragma: no cover - parser.error exits


def options_from(args: argparse.Namespace) -> Options:
    """The engine options of the shared flags (see :func:`_common`)."""
    from hookguard.engine import Options

    return Options(
        use_cache=not args.no_cache,
        history=not args.no_history,
        contracts=tuple(args.contracts),
        workers=args.jobs,
        select=tuple(args.select),
    )


def _audit(args: argparse.Namespace) -> int:
    from hookguard.engine import audit

    result = audit(args.paths or [Path.cwd()], options_from(args))
    summary = summarise(result.findings, result.errors, result.stats.files, result.seconds)
    emit(args, result.findings, result.errors, result.notes, summary, result.root)
    return exit_code(result.findings, args.exit_zero)


def summarise(
    findings: Sequence[Finding], errors: Sequence[InputError], files: int, seconds: float
) -> str:
    from hookguard.findings import Severity

    n_err = sum(f.severity is Severity.ERROR for f in findings)
    n_warn = len(findings) - n_err
    parts = [f"{n_err} error{'s' * (n_err != 1)}", f"{n_warn} warning{'s' * (n_warn != 1)}"]
    if errors:
        parts.append(f"{len(errors)} file problem{'s' * (len(errors) != 1)}")
    return f"hookguard: {', '.join(parts)} in {files} files ({seconds:.2f}s)"


def exit_code(findings: Sequence[Finding], exit_zero: bool) -> int:
    from hookguard.findings import Severity

    if exit_zero:
        return EXIT_CLEAN
    return EXIT_FINDINGS if any(f.severity is Severity.ERROR for f in findings) else EXIT_CLEAN


def emit(
    args: argparse.Namespace,
    findings: Sequence[Finding],
    errors: Sequence[InputError],
    notes: Sequence[str],
    summary: str,
    root: Path,
) -> None:
    """Write a report in the chosen format to stdout or ``--output``."""
    fmt = args.format
    stream: IO[str] = (
        open(args.output, "w", encoding="utf-8")  # noqa: SIM115 - closed below
        if args.output
        else sys.stdout
    )
    try:
        if fmt == "auto":
            fmt = "rich" if stream.isatty() else "plain"
        if fmt == "rich":
            from hookguard.report.terminal import render_terminal

            color = "NO_COLOR" not in os.environ and stream.isatty()
            render_terminal(findings, errors, notes, summary, stream, color)
        elif fmt == "json":
            from hookguard.report.json_report import render_json

            stream.write(render_json(findings, errors, notes))
        elif fmt == "sarif":
            from hookguard.report.sarif import render_sarif

            stream.write(render_sarif(findings, errors, root, notes))
        elif fmt == "github":
            from hookguard.report.github import render_github

            stream.write(render_github(findings, errors, notes, summary))
        else:
            from hookguard.report.plain import render_plain

            stream.write(render_plain(findings, errors, notes))
            if findings or errors:
                print(summary, file=sys.stderr)
    finally:
        if stream is not sys.stdout:
            stream.close()


def _explain(args: argparse.Namespace) -> int:
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
