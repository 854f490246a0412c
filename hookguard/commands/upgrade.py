"""``hookguard upgrade PACKAGE==VERSION``: the checkout's overrides a package upgrade breaks."""

from __future__ import annotations

import argparse

from hookguard.errors import UsageError


def run_upgrade(args: argparse.Namespace) -> int:
    raise UsageError("hookguard upgrade is not available yet")
