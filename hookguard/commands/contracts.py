"""``hookguard contracts check``: contract files against the code they describe.

``hookguard contracts record``: a hook's contract from passing runs
(:mod:`hookguard.runtime.record`; imports torch, so only when asked for). It imports nothing of
the static checker (libcst, msgspec): a GPU machine with torch alone can record.

``record`` **executes code**: it runs the test files and pytest node ids it is given, and calls
the ``module:function`` commands, in its own process, with the current directory (and each
``--path``) first on ``sys.path``: the checkout's own code and tests run, with everything they
import. Run it only on code you would run the tests of. Unlike the static checker, it is not
for a pull request from someone you do not trust.

Its output (``-o PATH``) is written only inside the checkout (the git work tree around the
current directory, else the current directory): a path that is a symbolic link, that is
reached through a link leading out of the checkout, or that resolves outside it (or into its
``.git`` directory) is refused (exit 2) before anything runs and again just before writing.
The contract is written to a temporary file in the same directory, opened from the
checkout's root without following any link, and renamed over the path: a reader never sees
half a contract, and a link planted at the path while the tests ran is refused, never
written through.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import stat
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
    """Run the commands with the hook recorded; write the contract (stdout or ``--output``).
    The commands run in this process: the checkout's tests execute (see the module's
    docstring)."""
    import sys

    output: Path | None = args.output
    checkout = target = None
    if output is not None:  # before running anything: a refused path wastes no run
        checkout = _checkout()
        target = Path(os.path.abspath(output))  # the commands may change the directory
        _output_place(target, output, checkout)
    from hookguard.runtime.record import RecordError, record

    try:
        with contextlib.redirect_stdout(sys.stderr):  # the commands' own output (pytest's)
            recording = record(args.hook, args.commands, paths=args.path)
        text = recording.toml()
    except RecordError as exc:
        raise UsageError(f"contracts record: {exc}") from None
    if output is None or target is None or checkout is None:
        sys.stdout.write(text)
        return EXIT_CLEAN
    write_inside(target, output, checkout, text.encode("utf-8"))
    count = len(recording.calls)
    print(
        f"hookguard: recorded {count} call{'s' if count != 1 else ''} of "
        f"{recording.cls}.{recording.method} into {output}",
        file=sys.stderr,
    )
    return EXIT_CLEAN


def _checkout() -> Path:
    """The checkout ``record`` may write in: the git work tree around the current directory,
    else the current directory (resolved)."""
    from hookguard.git.repo import Repo

    repo = Repo.discover(Path.cwd())
    return Path(os.path.realpath(repo.root if repo is not None else Path.cwd()))


def _refuse(shown: Path, why: str) -> UsageError:
    return UsageError(f"contracts record: cannot write {shown}: {why}; nothing was written")


def _output_place(target: Path, shown: Path, checkout: Path) -> tuple[str, ...]:
    """The folders from ``checkout`` down to ``target``'s (an absolute path), its name last;
    a :class:`UsageError` naming it as the user did (``shown``) when it is a link or resolves
    outside the checkout."""
    if os.path.islink(target):
        raise _refuse(shown, "it is a symbolic link")
    folder = os.path.realpath(target.parent)
    if folder != str(checkout) and not folder.startswith(str(checkout).rstrip(os.sep) + os.sep):
        raise _refuse(shown, f"it is outside the checkout {checkout} (write to standard "
                             "output, without -o, and redirect it)")
    git_dir = os.path.realpath(checkout / ".git")
    if folder == git_dir or folder.startswith(git_dir + os.sep):
        raise _refuse(shown, "it is in git's directory")
    if target.name in ("", ".", "..") or not os.path.isdir(folder):
        raise _refuse(shown, "no such folder")
    if os.path.lexists(target) and not os.path.isfile(target):
        raise _refuse(shown, "it is not a regular file")
    return (*Path(os.path.relpath(folder, checkout)).parts, target.name)


def write_inside(target: Path, shown: Path, checkout: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` (absolute) inside ``checkout``, atomically and through no
    link: each folder is opened from the checkout's root without following links, the data
    goes to a temporary file there and is renamed over the name (which replaces, never
    follows, a link planted meanwhile; a link found there is refused). Errors name the path
    as ``shown``."""
    *folders, name = _output_place(target, shown, checkout)
    nofollow = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    fds: list[int] = []
    temp = f".{name}.hgrecord-{secrets.token_hex(8)}"
    try:
        fds.append(os.open(checkout, os.O_RDONLY | os.O_DIRECTORY))
        for part in folders:
            try:
                fds.append(os.open(part, nofollow, dir_fd=fds[-1]))
            except OSError as exc:  # a link (ELOOP), or gone: never followed
                raise _refuse(shown, f"{part} is a symbolic link or not a folder "
                                     f"({exc.strerror})") from None
        folder = fds[-1]
        try:
            old = os.stat(name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            old = None
        if old is not None and stat.S_ISLNK(old.st_mode):
            raise _refuse(shown, "it is a symbolic link")
        if old is not None and not stat.S_ISREG(old.st_mode):
            raise _refuse(shown, "it is not a regular file")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666,
                     dir_fd=folder)
        try:
            with os.fdopen(fd, "wb") as handle:
                if old is not None:
                    os.fchmod(handle.fileno(), stat.S_IMODE(old.st_mode))
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=folder)
            raise
    except OSError as exc:
        raise _refuse(shown, exc.strerror or str(exc)) from None
    finally:
        for fd in fds:
            os.close(fd)
