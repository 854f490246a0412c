"""Shared set-up of the runtime tests: the fixture package on sys.path, pytester, contracts."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "kv_cache"
CONTRACTS = ROOT / "contracts"

if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))


CUDA_REASON = "needs a CUDA device (runs on the H200 device machine)"


@pytest.fixture
def fixture_contracts():  # type: ignore[no-untyped-def]
    from hookguard.contracts import load_contracts

    return load_contracts(CONTRACTS / "kv_cache_fixture.toml")
