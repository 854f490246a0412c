"""The ``hookguard`` command line: the parser and the dispatch to :mod:`hookguard.commands`.

Imports stay lazy: ``--version`` loads almost nothing; each command module is imported only when
that command runs."""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from hookguard import __version__
from hookguard.commands.common import EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, FORMATS
from hookguard.errors import UsageError


def add_common(parser: argparse.ArgumentParser) -> None:
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
    add_all_warnings(parser)
    add_progress(parser)


def add_all_warnings(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--all-warnings", action="store_true",
                        help="also report the weak warnings held back by default: those "
                             "whose missing proof is code the checkout holds (a guard, an "
                             "annotation, a lookup by name, the override's history)")


def add_progress(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="show progress on stderr (default: on a terminal, for a run over "
                             "a second, never in CI or with --format json/sarif/github)")


class _Subcommand(argparse.ArgumentParser):
    """A subcommand's parser; with ``intermixed``, its positionals may follow its options
    (``upgrade pkg==2.0 --from 1.0 PATH``), which argparse alone refuses."""

    intermixed = False
    _parsing = False

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        if not self.intermixed or self._parsing:
            return super().parse_known_args(args, namespace)
        self._parsing = True  # parse_known_intermixed_args calls this again
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._parsing = False


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hookguard",
        description="Find stale hook overrides, signature drift and contract bypass.",
    )
    parser.add_argument("--version", action="version", version=f"hookguard {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND",
                                     parser_class=_Subcommand)

    audit = commands.add_parser("audit", help="audit a whole checkout")
    audit.add_argument("paths", nargs="*", type=Path,
                       help="report findings under these paths (default: the current directory)")
    audit.add_argument("--python", metavar="PATH",
                       help="read the installed packages the checkout subclasses from this "
                            "interpreter's environment (or virtual environment folder), as "
                            "bytes, never imported: their classes join the model, are never "
                            "reported on, and make the MROs through them known (default: the "
                            "active virtual environment, VIRTUAL_ENV, when set)")
    audit.add_argument("--no-environment", action="store_true",
                       help="read no installed package, not even VIRTUAL_ENV's: every base "
                            "outside the checkout is unknown")
    add_common(audit)

    check = commands.add_parser("check", help="gate a change: findings the change introduces")
    check.add_argument("--base", help="base revision (a branch uses its merge-base with head)")
    check.add_argument("--head", default="HEAD", help="head revision (default: HEAD)")
    check.add_argument("--staged", action="store_true",
                       help="compare the staged tree with HEAD (pre-commit)")
    check.add_argument("--repo", type=Path, default=Path("."), help="the repository")
    check.add_argument("files", nargs="*", help=argparse.SUPPRESS)  # passed by pre-commit
    check.add_argument("--no-dependencies", action="store_true",
                       help="with --base: do not run the upgrade check for the dependencies "
                            "the change moves (pins in requirements*.txt, constraints files, "
                            "pyproject.toml, uv.lock, poetry.lock, Pipfile.lock); by default "
                            "each moved package that the checkout subclasses is checked, its "
                            "two versions downloaded with pip download --no-deps as "
                            "'upgrade --download' does (docs/upgrade.md)")
    add_common(check)

    precommit = commands.add_parser(
        "pre-commit", help="the pre-commit hook: the staged change, pre-commit's --from-ref/"
                           "--to-ref range, or the whole checkout (--all-files)",
        description="Run as pre-commit's hook. With PRE_COMMIT_FROM_REF and PRE_COMMIT_TO_REF "
                    "set (pre-commit run --from-ref A --to-ref B, pre-push): check --base A "
                    "--head B. With changes staged (git commit): check --staged. With nothing "
                    "staged (pre-commit run --all-files): audit the whole checkout.")
    precommit.add_argument("--repo", type=Path, default=Path("."), help="the repository")
    precommit.add_argument("files", nargs="*", help=argparse.SUPPRESS)  # passed by pre-commit
    precommit.add_argument("--no-dependencies", action="store_true",
                           help="for a --from-ref/--to-ref range: do not run the upgrade "
                                "check for the dependencies the range moves (see check)")
    add_common(precommit)

    hooks = commands.add_parser(
        "hooks", help="map a base class's hooks across its subclasses",
        description="For each hook of CLASS (the methods of its whole MRO in the checkout, "
                    "mixins included): how many subclasses override it, call super(), "
                    "keep a dead override of its old name (stale), cannot accept its calls "
                    "(drifted) or skip the state it sets (bypass); then each subclass with the "
                    "hooks it overrides. Hooks no subclass overrides, private helpers and "
                    "properties are counted, not listed, unless --all.")
    hooks.add_argument("cls", metavar="CLASS",
                       help="package.module.Class, a unique suffix (Class), or a public name "
                            "a package re-exports (package.Class)")
    hooks.add_argument("path", nargs="?", type=Path, default=Path("."),
                       help="a path inside the checkout (default: the current directory)")
    hooks.add_argument("--format", choices=("auto", "rich", "plain", "json"), default="auto",
                       help="output format (auto: rich on a terminal, plain otherwise)")
    hooks.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    hooks.add_argument("--all", action="store_true", dest="show_all",
                       help="also list the hooks no subclass overrides, private and name-mangled "
                            "helpers, and properties")
    add_progress(hooks)

    contracts = commands.add_parser("contracts", help="work with contract files")
    contracts_sub = contracts.add_subparsers(dest="contracts_command", metavar="ACTION")
    contracts_check = contracts_sub.add_parser("check", help="check contracts against the code")
    contracts_check.add_argument("paths", nargs="*", type=Path,
                                 help="contract files or directories (default: contracts/)")
    contracts_check.add_argument("--repo", type=Path, default=Path("."))
    contracts_check.add_argument("--format", choices=("auto", "rich", "plain", "json"),
                                 default="auto")
    contracts_record = contracts_sub.add_parser(
        "record", help="write a hook's contract from passing runs: RUNS the tests it is given "
                       "(needs torch)",
        description="Run the given test files, pytest node ids or module:function commands in "
                    "this process with HOOK recorded, and write the contract their calls "
                    "support. This EXECUTES the checkout's code and tests, with everything "
                    "they import: run it only on code whose tests you would run yourself, "
                    "never on an untrusted pull request.")
    contracts_record.add_argument("hook", help="the hook: package.module.Class.method")
    contracts_record.add_argument("commands", nargs="+", metavar="COMMAND",
                                  help="pytest node ids or test files, or module:function "
                                       "(each is run)")
    contracts_record.add_argument("-o", "--output", type=Path, default=None,
                                  help="write the TOML there, inside the checkout, atomically; "
                                       "a symbolic link or a path outside the checkout is "
                                       "refused (default: standard output)")
    contracts_record.add_argument("--path", action="append", default=[], metavar="DIR",
                                  help="put DIR on sys.path for the commands (repeatable)")

    fix = commands.add_parser("fix", help="apply the mechanical fixes (renames, missing keywords)")
    fix.add_argument("paths", nargs="*", type=Path,
                     help="fix findings under these paths (default: the current directory)")
    fix.add_argument("--diff", action="store_true",
                     help="print a unified diff to stdout and write nothing (exit 1 when it "
                          "would change files)")
    fix.add_argument("--staged", action="store_true",
                     help="fix what 'check --staged' (the pre-commit hook) found: the staged "
                          "tree against HEAD")
    fix.add_argument("--unsafe-fixes", action="store_true",
                     help="also apply unsafe fixes: rename a stale override the base calls "
                          "with other arguments, porting the base's signature")
    fix.add_argument("--add-override", action="store_true",
                     help="also add @override (typing on 3.12+, else typing_extensions) to "
                          "every method proven to override a hook")
    fix.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    fix.add_argument("--no-history", action="store_true",
                     help="do not use git history as evidence")
    fix.add_argument("--contracts", action="append", default=[], metavar="PATH",
                     help="contract file or directory (repeatable)")
    fix.add_argument("--select", action="append", default=[], metavar="RULE",
                     help="only fix findings of these rules (code or name; repeatable)")
    add_progress(fix)

    report = commands.add_parser(
        "report", help="write the audit as one self-contained HTML page (for CI artifacts)")
    report.add_argument("paths", nargs="*", type=Path,
                        help="report findings under these paths (default: the current directory)")
    report.add_argument("--html", required=True, metavar="FILE",
                        help="the page to write: findings linked to their code, and each "
                             "affected family's hook map")
    report.add_argument("--exit-zero", action="store_true",
                        help="exit 0 even when error-level findings exist")
    report.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    report.add_argument("--no-history", action="store_true",
                        help="do not use git history as evidence")
    report.add_argument("--contracts", action="append", default=[], metavar="PATH",
                        help="contract file or directory (repeatable)")
    report.add_argument("--select", action="append", default=[], metavar="RULE",
                        help="only run these rules (code or name; repeatable)")
    report.add_argument("--jobs", "-j", type=int, default=None,
                        help="parser processes for cold runs (default: all cores)")
    add_all_warnings(report)
    add_progress(report)

    upgrade = commands.add_parser(
        "upgrade", help="which overrides a package upgrade breaks (docs/upgrade.md)",
        description="Read both versions of PACKAGE (wheel, sdist, directory or the installed "
                    "one; never imported) and report the checkout's overrides the new one "
                    "breaks: hooks renamed, removed or no longer called, new call arguments.")
    upgrade.intermixed = True
    upgrade.add_argument("spec", metavar="PACKAGE==VERSION", help="the version to upgrade to")
    upgrade.add_argument("path", nargs="?", type=Path, default=Path("."),
                         help="a path inside the checkout (default: the current directory)")
    upgrade.add_argument("--from", dest="from_version", metavar="VERSION",
                         help="the version upgraded from (default: the installed one)")
    upgrade.add_argument("--source", action="append", default=[], metavar="PATH",
                         help="a wheel, an sdist (.tar.gz) or a directory holding a version "
                              "(repeatable)")
    upgrade.add_argument("--python", metavar="PATH",
                         help="the interpreter whose environment holds the installed version "
                              "(default: the one running hookguard)")
    upgrade.add_argument("--download", action="store_true",
                         help="pip download --no-deps a version no source holds, into the "
                              "cache outside the checkout")
    upgrade.add_argument("--format", choices=FORMATS, default="auto",
                         help="output format (auto: rich on a terminal, plain otherwise)")
    upgrade.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE")
    upgrade.add_argument("--exit-zero", action="store_true",
                         help="exit 0 even when error-level findings exist")
    upgrade.add_argument("--no-cache", action="store_true",
                         help="neither read nor write the checkout's record cache")
    upgrade.add_argument("--jobs", "-j", type=int, default=None,
                         help="parser processes for cold runs (default: all cores)")
    add_all_warnings(upgrade)
    add_progress(upgrade)

    explain = commands.add_parser("explain", help="print a rule's documentation")
    explain.add_argument("rule", nargs="?", help="rule code or name; omit to list all")

    return parser


# The module and function of each command, imported only when that command runs.
COMMANDS = {
    "audit": ("hookguard.commands.audit", "run_audit"),
    "check": ("hookguard.commands.check", "run_check"),
    "pre-commit": ("hookguard.commands.precommit", "run_precommit"),
    "hooks": ("hookguard.commands.hooks", "run_hooks"),
    "fix": ("hookguard.commands.fix", "run_fix"),
    "contracts": ("hookguard.commands.contracts", "run_contracts"),
    "report": ("hookguard.commands.report", "run_report"),
    "explain": ("hookguard.commands.explain", "run_explain"),
    "upgrade": ("hookguard.commands.upgrade", "run_upgrade"),
}


# Commands that only print information: a reader that stops early is not a failure.
_READ_ONLY = frozenset({"explain", "hooks"})


def main(argv: Sequence[str] | None = None) -> int:
    code = _run(argv)
    if argv is None:  # the program itself (console script, ``python -m``), not a caller
        _exit_now(code)
    return code


def _exit_now(code: int) -> None:
    """End the process without tearing the interpreter down: freeing every record and model
    object one by one costs a warm run about a tenth of its CPU time, and the process is about
    to end anyway. Output is flushed first; everything hookguard writes (reports, the cache)
    is complete by now. Under a profiler or a tracer (coverage), the normal exit runs, so
    their reports are written."""
    if sys.getprofile() is not None or sys.gettrace() is not None:
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return  # let the normal exit report it
    os._exit(code)


def _run(argv: Sequence[str] | None) -> int:
    # A short-lived process that builds hundreds of thousands of acyclic objects: the cyclic
    # collector only costs time here (3x on loading the cache). Reference counting frees them.
    gc.disable()
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    from hookguard.config import ConfigError
    from hookguard.report.escape import printable

    module_name, function = COMMANDS[args.command]
    try:
        run: Callable[[argparse.Namespace], int] = getattr(
            importlib.import_module(module_name), function
        )
        code = run(args)
        sys.stdout.flush()  # a closed pipe shows here, not as a traceback at exit
        return code
    except BrokenPipeError:
        # The reader went away (``hookguard explain HG001 | head -1``): it had what it wanted.
        # Later writes, and the flush at exit, go nowhere instead of raising again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_CLEAN if args.command in _READ_ONLY else EXIT_FINDINGS
    except (UsageError, ConfigError) as exc:
        print(f"hookguard: error: {printable(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:
        from hookguard.contracts import ContractError
        from hookguard.git.repo import GitError

        if isinstance(exc, (ContractError, GitError)):
            print(f"hookguard: error: {printable(str(exc))}", file=sys.stderr)
            return EXIT_USAGE
        raise


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
