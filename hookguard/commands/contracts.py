"""``hookguard contracts check``: contract files against the code they describe."""

from __future__ import annotations

import argparse
from pathlib import Path

from hookguard.commands.common import EXIT_CLEAN, emit, exit_code, summarise
from hookguard.engine import Options, Workspace, audit
from hookguard.errors import UsageError
from hookguard.rules.contract_stale import ContractStale, check_contracts


def run_contracts(args: argparse.Namespace) -> int:
    if args.contracts_command != "check":
        raise UsageError("usage: hookguard contracts check [PATH ...] [--repo DIR]")
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
