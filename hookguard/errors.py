"""Errors that end a run with exit code 2, shared by every command."""

from __future__ import annotations


class UsageError(Exception):
    """Bad arguments or configuration: exit 2 with this one-line message."""
