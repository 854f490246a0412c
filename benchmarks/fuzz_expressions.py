"""Fuzz contract expressions with a large budget and report the worst time and memory seen.

    python benchmarks/fuzz_expressions.py [--examples 20000]

Runs ``tests/test_expression_fuzz.py`` (CI runs it with 150 derandomized examples) with random
examples, and prints the worst load time, evaluation time, peak Python heap of one expression
and the growth of the process's peak RSS. Exits non-zero if a bound was broken.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=20000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "fuzz.json"
        env = dict(os.environ, HOOKGUARD_FUZZ_EXAMPLES=str(args.examples),
                   HOOKGUARD_FUZZ_RANDOM="1", HOOKGUARD_FUZZ_REPORT=str(report))
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
             "tests/test_expression_fuzz.py"], cwd=ROOT, env=env, check=False,
        )
        if report.exists():
            worst = json.loads(report.read_text())
            print(f"expressions: {worst['examples']} ({worst['loaded']} loaded, the rest refused)")
            print(f"worst load: {worst['load_s'] * 1000:.1f} ms; worst evaluation: "
                  f"{worst['eval_s'] * 1000:.1f} ms; worst Python heap: "
                  f"{worst['heap_mib']:.1f} MiB; peak RSS growth: "
                  f"{worst['rss_growth_mib']:.0f} MiB")
            print(f"slowest to load: {worst.get('slowest_load', '')[:200]!r}")
            print(f"slowest to evaluate: {worst.get('slowest_eval', '')[:200]!r}")
            outcomes = sorted(worst.get("outcomes", {}).items(), key=lambda kv: -kv[1])
            print("evaluations: " + ", ".join(f"{name} {count}" for name, count in outcomes))
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
