"""Paths and constants shared by the runtime tests (a unique module name: not ``conftest``)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "kv_cache"
CONTRACTS = ROOT / "contracts"
CUDA_REASON = "needs a CUDA device (runs on the H200 device machine)"

if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))
