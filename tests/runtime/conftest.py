"""Shared set-up of the runtime tests: the fixture package on sys.path, pytester, contracts."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from runtime_support import CONTRACTS


@pytest.fixture
def fixture_contracts():  # type: ignore[no-untyped-def]
    from hookguard.contracts import load_contracts

    return load_contracts(CONTRACTS / "kv_cache_fixture.toml")
