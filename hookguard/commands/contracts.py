"""``hookguard contracts check``: contract files against the code they describe.

``hookguard contracts record``: a hook's contract from passing runs
(:mod:`hookguard.runtime.record`; imports torch, so only when asked for). It imports nothing of
the static checker (libcst, msgspec): a GPU machine with torch alone can record.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from hookguard.commands.common import EXIT_CLEAN, emit, exit_code, summarise
from hookguard.errors import UsageError


def run_contracts(args: argparse.Namespace) -> int:
    if args.contracts_command == "record":
        return run_record(args)
    if args.contracts_command != "check":
        raise UsageError(
            "usage: hookguard contracts check [PATH ...] [--repo DIR] | "
            "hookguard contracts record HOOK COMMAND ... [-o FILE] [--path DIR]"
        )
    from hookguard.engine import Options, Workspace, audit
    from hookguard.rules.contract_stale import ContractStale, check_contracts

    workspace = Workspace.open(args.repo)
    paths = tuple(str(Path(p).resolve()) for p in args.paths)
    contracts = workspace.load_contracts(paths)
    if not contracts:
        print("hookguard: no contracts found (give PATH or add contracts/*.toml)")
        return EXIT_CLEAN
    result = audit([args.repo], Options(select=("contract-stale",), history=False,
                                        contracts=paths, reuse_results=False))
    assert result.project is not None
    findings = list(check_contracts(ContractStale(), result.project, contracts, strict=True))
    args.output, args.exit_zero = None, False
    summary = summarise(findings, [], len(contracts), result.seconds, unit="contract")
    emit(args, findings, [], [], summary, result.root)
    return exit_code(findings, False)


def run_record(args: argparse.Namespace) -> int:
    """Run the commands with the hook recorded; write the contract (stdout or ``--output``)."""
    import contextlib
    import sys

    from hookguard.runtime.record import RecordError, record

    try:
        with contextlib.redirect_stdout(sys.stderr):  # the commands' own output (pytest's)
            recording = record(args.hook, args.commands, paths=args.path)
        text = recording.toml()
    except RecordError as exc:
        raise UsageError(f"contracts record: {exc}") from None
    if args.output is None:
        sys.stdout.write(text)
        return EXIT_CLEAN
    args.output.write_text(text, encoding="utf-8")
    count = len(recording.calls)
    print(
        f"hookguard: recorded {count} call{'s' if count != 1 else ''} of "
        f"{recording.cls}.{recording.method} into {args.output}",
        file=sys.stderr,
    )
    return EXIT_CLEAN
