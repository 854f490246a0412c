"""``hookguard pre-commit``: the pre-commit hook, in each of the ways pre-commit runs it.

``check --staged`` compares the staged tree with HEAD, which is right for ``git commit`` and
finds nothing in pre-commit's CI modes, where nothing is staged: ``pre-commit run --all-files``
and ``pre-commit run --from-ref A --to-ref B`` passed over a commit that broke overrides. This
command picks what to compare from what pre-commit tells its hooks (:func:`choose`):

1. ``PRE_COMMIT_FROM_REF`` and ``PRE_COMMIT_TO_REF`` set (``--from-ref``/``--to-ref``, and the
   pre-push stage; pre-commit before 2.0 set only ``PRE_COMMIT_SOURCE``, the base, and
   ``PRE_COMMIT_ORIGIN``, the head): ``check --base FROM --head TO``, what the range breaks.
2. Something staged (the index differs from HEAD's tree): ``check --staged``, as in a commit.
3. Nothing staged: ``audit`` of the whole checkout. pre-commit sets nothing for ``--all-files``
   (nor for ``--files``), and with ``pass_filenames: false`` the hook sees no file list, so
   this is how the mode shows: a commit always stages something, or pre-commit skips the hook
   (no files to check); nothing staged means a run over files already committed. A repository
   with no commit yet is audited too (there is no HEAD to compare with).

So ``pre-commit run --all-files`` with changes staged checks the staged change, as the commit
would; ``hookguard audit`` checks everything whatever is staged.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from hookguard.errors import UsageError


@dataclass(frozen=True)
class Mode:
    """What one hook run compares: ``range`` (``base``..``head``), ``staged`` or ``all``."""

    kind: str
    base: str = ""
    head: str = ""
    why: str = ""


def refs_from(environ: Mapping[str, str]) -> tuple[str, str] | None:
    """(from, to) of pre-commit's ``--from-ref``/``--to-ref``, or None when it set neither."""
    base, head = environ.get("PRE_COMMIT_FROM_REF", ""), environ.get("PRE_COMMIT_TO_REF", "")
    if base and head:
        return base, head
    # pre-commit < 2.0: --source (the base) and --origin (the head). Since 2.0 it also sets
    # these legacy names, the other way round, but always with the two above.
    base, head = environ.get("PRE_COMMIT_SOURCE", ""), environ.get("PRE_COMMIT_ORIGIN", "")
    if base and head:
        return base, head
    return None


def choose(repo_path: Path, environ: Mapping[str, str]) -> Mode:
    """The mode of this run (see the module's documentation)."""
    refs = refs_from(environ)
    if refs is not None:
        return Mode("range", refs[0], refs[1], "pre-commit gave a range of commits")
    from hookguard.git.repo import GitError, Repo

    repo = Repo.discover(repo_path)
    if repo is None:
        raise UsageError(f"{repo_path} is not in a git repository: the pre-commit hook "
                         "compares git trees")
    if not repo.has_head():
        return Mode("all", why="the repository has no commits yet")
    try:
        staged = repo.git("diff-index", "--cached", "--name-only", "-z", "HEAD", "--")
    except GitError as exc:
        raise UsageError(f"cannot read the staged changes: {exc}") from None
    if staged.strip(b"\0"):
        return Mode("staged")
    return Mode("all", why="nothing is staged (pre-commit run --all-files or --files)")


def run_precommit(args: argparse.Namespace) -> int:
    mode = choose(args.repo, os.environ)
    if mode.kind == "all":
        from hookguard.commands.audit import run_audit
        from hookguard.git.repo import Repo

        repo = Repo.discover(args.repo)
        root = repo.root if repo is not None else args.repo
        print(f"hookguard pre-commit: {mode.why}: auditing the whole checkout", file=sys.stderr)
        return run_audit(argparse.Namespace(**{**vars(args), "paths": [Path(root)]}))
    from hookguard.commands.check import run_check

    if mode.kind == "range":
        from hookguard.report.escape import printable

        print(f"hookguard pre-commit: {mode.why}: checking what "
              f"{printable(mode.base)}..{printable(mode.head)} breaks", file=sys.stderr)
        settings = {"base": mode.base, "head": mode.head, "staged": False}
    else:
        settings = {"base": None, "head": "HEAD", "staged": True}
    return run_check(argparse.Namespace(**{**vars(args), **settings}))
