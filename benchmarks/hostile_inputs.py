"""Time and peak memory on the hostile inputs of issue 24 (item 6), each in a fresh process.

    python benchmarks/hostile_inputs.py [--hookguard SRC] [--only NAME ...] [--timeout S]

* ``contracts``: ``load_contracts`` of one file of 10,000 ``[[hook]]`` tables (1.3 MB);
* ``chain``: ``hookguard audit --no-cache`` of a checkout whose ``pkg/chain.py`` holds a chain
  of 20,000 classes ``C1(C0)``, ``C2(C1)``, ... each with a method of its own (0.9 MB);
* ``sparse``: ``hookguard audit --no-cache`` of a checkout holding a 3 GiB sparse ``big.py``;
* ``leaves`` (not in the issue): 20,000 classes under one line of ``MAX_MRO - 1`` classes,
  the most MRO entries the model keeps for that many classes.

``--hookguard``: the source tree to measure (default: this checkout); to measure another
revision, ``git archive REV | tar -x -C DIR`` and pass ``DIR``. Peak RSS is the largest of the
measured process and the processes it waited for (git, parser workers). A run past
``--timeout`` (default 600 s) is stopped and shown as such; one past ``--max-gib`` of address
space (default 8) fails with a MemoryError, shown with its exit status (hookguard before these
fixes took over 21 GB on the chain).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Runs argv[3:] as a child with a timeout and an address-space limit (argv[2] bytes), then
# prints its wall time and peak RSS as JSON.
_MEASURE = """
import json, resource, subprocess, sys, time
limit = int(sys.argv[2])
def cap():
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
start = time.perf_counter()
try:
    proc = subprocess.run(sys.argv[3:], capture_output=True, text=True,
                          timeout=float(sys.argv[1]), preexec_fn=cap)
    rc, tail = proc.returncode, (proc.stdout + proc.stderr)[-400:]
except subprocess.TimeoutExpired:
    rc, tail = None, ""
print(json.dumps({"s": time.perf_counter() - start, "rc": rc, "tail": tail,
                  "maxrss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


def _git_repo(root: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.com",
               GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.com")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "hostile"]):
        subprocess.run(["git", "-c", "commit.gpgsign=false", *args], cwd=root, env=env,
                       check=True, capture_output=True)
    return root


def _hooks(n: int) -> str:
    return "".join(
        f'[[hook]]\nclass = "pkg.mod.C{i}"\nmethod = "m{i}"\ninvariants = ["x > {i}"]\n\n'
        f'[hook.fields.f{i}]\ndtype = "int32"\nshape = ["n", 2]\n\n'
        for i in range(n))


_HEAD = "class C0:\n    def hook(self):\n        pass\n\n    def run(self):\n        self.hook()\n"


def _contracts(scratch: Path) -> list[str]:
    file = scratch / "hooks.toml"
    file.write_text(_hooks(10_000))
    return ["-c", "import sys\nfrom hookguard.contracts import load_contracts\n"
            "print(len(load_contracts(sys.argv[1])))", str(file)]


def _chain(scratch: Path) -> list[str]:
    source = _HEAD + "".join(f"class C{i}(C{i - 1}):\n    def m{i}(self):\n        pass\n"
                             for i in range(1, 20_000))
    root = _git_repo(scratch / "chain", {"pkg/__init__.py": "", "pkg/chain.py": source})
    return ["-m", "hookguard", "audit", "--no-cache", str(root)]


def _sparse(scratch: Path) -> list[str]:
    root = _git_repo(scratch / "sparse", {"pkg/__init__.py": "", "pkg/ok.py": "x = 1\n"})
    with open(root / "pkg" / "big.py", "wb") as handle:
        handle.truncate(3 << 30)
    return ["-m", "hookguard", "audit", "--no-cache", str(root)]


def _leaves(scratch: Path) -> list[str]:
    depth = 127  # MAX_MRO - 1 classes in the line: every leaf's MRO holds MAX_MRO
    source = _HEAD + "".join(f"class C{i}(C{i - 1}):\n    def m{i}(self):\n        pass\n"
                             for i in range(1, depth))
    source += "".join(f"class L{i}(C{depth - 1}):\n    def x{i}(self):\n        pass\n"
                      for i in range(20_000))
    root = _git_repo(scratch / "leaves", {"pkg/__init__.py": "", "pkg/leaves.py": source})
    return ["-m", "hookguard", "audit", "--no-cache", str(root)]


CASES: dict[str, tuple[str, Callable[[Path], list[str]]]] = {
    "contracts": ("10,000 [[hook]] tables, load_contracts", _contracts),
    "chain": ("20,000-class chain, audit --no-cache", _chain),
    "sparse": ("3 GiB sparse file, audit --no-cache", _sparse),
    "leaves": ("20,000 leaves under a 127-class line, audit --no-cache", _leaves),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hookguard", type=Path, default=ROOT,
                        help="source tree whose hookguard is measured (default: this one)")
    parser.add_argument("--only", nargs="+", choices=sorted(CASES), default=list(CASES))
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--max-gib", type=float, default=8.0,
                        help="address space allowed to a run (default 8 GiB): a run past it "
                        "fails (MemoryError) instead of taking the machine's memory")
    args = parser.parse_args()
    source = args.hookguard.resolve()
    env = dict(os.environ, PYTHONPATH=str(source), PYTHONDONTWRITEBYTECODE="1")
    print(f"hookguard from {source}")
    with tempfile.TemporaryDirectory() as scratch:
        for name in args.only:
            title, build = CASES[name]
            command = build(Path(scratch))
            proc = subprocess.run(
                [sys.executable, "-c", _MEASURE, str(args.timeout),
                 str(int(args.max_gib * (1 << 30))), sys.executable, *command],
                cwd=scratch, env=env, capture_output=True, text=True, check=True)
            result = json.loads(proc.stdout)
            took = (f"{result['s']:.1f} s" if result["rc"] is not None
                    else f"> {args.timeout:.0f} s (stopped)")
            if result["rc"] is not None and result["rc"] not in (0, 1):
                last = result["tail"].strip().splitlines()[-1:] or ["killed"]
                took += f", failed (exit {result['rc']}: {last[0]})"
            print(f"{name:10s} {title}: {took}, peak RSS {result['maxrss_kib'] / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
