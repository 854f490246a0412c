"""Fuzz what a checkout hands hookguard: file names, contract files and cache files (issue 24).

    python benchmarks/fuzz_inputs.py [--target names|contracts|cache|all] [--cases 10000]
                                     [--seed 0] [--timeout 20] [--json FILE] [--keep DIR]

Every case runs hookguard in this process (``hookguard.engine.audit``, ``load_contracts``,
``hookguard.gate.run_gate``, the cache's ``RecordCache``, and ``hookguard.cli.main`` with its
output captured), on a real checkout in a temporary folder, with real git. Each case is timed
out by ``SIGALRM`` (a hang), any exception that is not hookguard's clean refusal is a crash,
and a sibling folder of the checkout, ``HOME`` (the ``XDG_*`` folders in it) and ``TMPDIR``
are compared before and after each case: anything that changed there is a write outside the
checkout. Per target it prints cases, crashes, hangs, outside writes, changed verdicts, the
median and worst time hookguard took on a case, and the process's peak RSS. Exit status 1 when
any of those counts is not zero.

- **names**: a repository with a stale override (``Sub.setup`` after ``Base.setup`` was
  renamed, HG001 from history) and a drifted one (``Good.prepare()``, HG002). Each case
  commits one to three files whose names are random bytes (control characters, newlines,
  bytes that are not UTF-8, bidirectional overrides, quotes, spaces, leading dashes, ``:`` and
  ``HEAD:``, components up to 255 bytes, deep folders), most of them ``.py`` holding a
  drifted override (which must be found at that name), a random class, a syntax error or
  bytes that are not UTF-8, now and then a symbolic link out of (or inside) the checkout,
  with a random commit message. The audit cold, then twice with the cache, must give the
  same findings; the well-named files' findings must be the known ones; the JSON, plain,
  SARIF, GitHub and HTML reports must hold no raw control character; every tenth case
  ``check --base HEAD~1`` runs cold and warm, every 25th the CLI runs in every format.
- **contracts**: the bundled contracts, those of ``docs/contracts.md`` and the tests, mutated
  (keys renamed, types changed, nesting, huge strings and arrays, hostile expressions in
  invariants, ``equals`` and shapes, ``renamed_from`` lists, duplicate tables and hooks,
  bytes that are not UTF-8, FIFOs and links) and loaded with ``load_contracts``: each must
  load, then go through ``contracts check``'s rule and the audit's rules, or be refused
  with one ``ContractError`` line naming the file and a line of it. Loading twice gives the
  same answer, and every 25th case the CLI agrees (exit 2 and that line, or 0/1).
- **cache**: the cache folder of a real audit (signed index and record shards, history
  answers, the last result and state), mutated per case (bit flips, truncation, splices,
  random MessagePack bodies behind a header that looks right, signed or not, swapped and
  copied shards, the index of another run or of another key, links, FIFOs and folders in
  place of files, the folder itself a link or a file); the next audits with the cache (with
  and without the last result reused) and every tenth ``check --base HEAD~1`` must give
  exactly what ``--no-cache`` gave, and nothing outside the cache folder may change. A body
  changed and then signed again with the cache's own key is trusted by design (whoever holds
  the key can write any verdict): those cases count crashes and hangs only.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import functools
import gc
import hashlib
import io
import itertools
import json
import os
import random
import re
import resource
import shutil
import signal
import stat
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
import unicodedata
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parents[1]
TARGETS = ("names", "contracts", "cache")
DEFAULT_CASES = 10_000
PROBLEM_KINDS = ("crash", "hang", "outside write", "verdict", "unescaped output")
KEEP = 12  # problems of each kind kept (with their input and traceback) for the report
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Fuzz",
    "GIT_AUTHOR_EMAIL": "fuzz@example.com",
    "GIT_COMMITTER_NAME": "Fuzz",
    "GIT_COMMITTER_EMAIL": "fuzz@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}
# Variables that would change what hookguard does: the fuzz runs without them.
CLEARED_ENV = ("HOOKGUARD_CACHE_KEY", "HOOKGUARD_CACHE_DIR", "HOOKGUARD_CACHE_STATS",
               "GITHUB_STEP_SUMMARY", "GITHUB_ACTIONS", "GITHUB_SERVER_URL",
               "GITHUB_REPOSITORY", "GITHUB_SHA", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE",
               "CI", "NO_COLOR", "FORCE_COLOR")
MARKER = "OUTSIDE_THE_CHECKOUT_7f3a"  # in the sibling's files: must never show in a report
_ESCAPED = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_SUSPECT = re.compile("[^\t\n\x20-\x7e]")


# ------------------------------------------------------------------------------------------
# Bookkeeping
# ------------------------------------------------------------------------------------------
class CaseTimeout(BaseException):
    """A case ran past its time (a BaseException: hookguard's ``except Exception`` cannot
    swallow it)."""


@dataclass
class Problem:
    kind: str  # one of PROBLEM_KINDS
    case: int  # the first case it was seen in
    what: str
    reproducer: str = ""
    detail: str = ""
    signature: str = ""  # the same problem seen again counts here, not as a new entry
    seen: int = 1


@dataclass
class Tally:
    """Counts (cases with each kind of problem), the problems (one entry per signature, the
    first input kept), times and what the inputs did."""

    target: str
    cases: int = 0
    counts: Counter[str] = field(default_factory=Counter)  # cases with a problem of a kind
    problems: list[Problem] = field(default_factory=list)
    times: list[float] = field(default_factory=list)  # hookguard's seconds per case
    outcomes: Counter[str] = field(default_factory=Counter)  # what the inputs did (info)
    seconds: float = 0.0
    rss_start_mib: float = 0.0
    rss_peak_mib: float = 0.0
    slowest: tuple[float, int, str] = (0.0, 0, "")  # seconds, case, input
    rss_rise: tuple[float, int, str] = (0.0, 0, "")  # MiB the peak RSS rose in a case, ...
    interrupted: bool = False
    _case: int = -1
    _kinds: set[str] = field(default_factory=set)  # the kinds counted for the case _case

    def add(self, kind: str, case: int, what: str, reproducer: str = "",
            detail: str = "", signature: str | None = None) -> None:
        if case != self._case:
            self._case, self._kinds = case, set()
        if kind not in self._kinds:
            self._kinds.add(kind)
            self.counts[kind] += 1
        signature = signature or what[:90]
        for problem in self.problems:
            if problem.kind == kind and problem.signature == signature:
                problem.seen += 1
                return
        if sum(p.kind == kind for p in self.problems) < KEEP:
            self.problems.append(Problem(kind, case, what, reproducer[:2000], detail[-4000:],
                                         signature))
        else:
            self.outcomes[f"{kind}s beyond the {KEEP} kept"] += 1

    def crash(self, case: int, label: str, exc: BaseException, reproducer: str) -> None:
        frames = [f for f in traceback.extract_tb(exc.__traceback__)
                  if "fuzz_inputs" not in f.filename]
        where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno} {frames[-1].name}" \
            if frames else "?"
        self.add("crash", case, f"{label}: {type(exc).__name__}: {printable(str(exc))[:240]}",
                 reproducer, "".join(traceback.format_exception(exc)),
                 signature=f"{label}: {type(exc).__name__} at {where}")

    def clean(self) -> bool:
        return not any(self.counts[k] for k in PROBLEM_KINDS)

    def summary(self) -> dict[str, Any]:
        times = sorted(self.times) or [0.0]
        return {
            "target": self.target,
            "cases": self.cases,
            "interrupted": self.interrupted,
            "crashes": self.counts["crash"],
            "hangs": self.counts["hang"],
            "outside_writes": self.counts["outside write"],
            "verdicts_changed": self.counts["verdict"],
            "unescaped_outputs": self.counts["unescaped output"],
            "median_case_ms": round(statistics.median(times) * 1000, 2),
            "worst_case_ms": round(times[-1] * 1000, 2),
            "wall_s": round(self.seconds, 1),
            "peak_rss_mib": round(self.rss_peak_mib, 1),
            "rss_growth_mib": round(self.rss_peak_mib - self.rss_start_mib, 1),
            "slowest_case": {"case": self.slowest[1], "ms": round(self.slowest[0] * 1000, 1),
                             "input": self.slowest[2][:300]},
            "largest_rss_rise": {"case": self.rss_rise[1], "mib": round(self.rss_rise[0], 1),
                                 "input": self.rss_rise[2][:300]},
            "outcomes": dict(sorted(self.outcomes.items())),
            "problems": [vars(p) for p in self.problems],
        }

    def report(self) -> str:
        s = self.summary()
        lines = [
            f"{self.target}: {s['cases']} cases, {s['crashes']} with a crash, {s['hangs']} "
            f"hangs, {s['outside_writes']} with a write outside the checkout, "
            f"{s['verdicts_changed']} with a changed verdict, {s['unescaped_outputs']} with "
            f"raw control characters in a report; hookguard per case: median "
            f"{s['median_case_ms']} ms, worst {s['worst_case_ms']} ms; peak RSS "
            f"{s['peak_rss_mib']} MiB (+{s['rss_growth_mib']} MiB in this target); "
            f"{s['wall_s']} s in all",
            "  outcomes: " + ", ".join(f"{k}: {v}" for k, v in s["outcomes"].items()),
            f"  slowest: case {self.slowest[1]}, {s['slowest_case']['ms']} ms: "
            f"{self.slowest[2][:300]}",
            f"  largest rise of the peak RSS in one case: case {self.rss_rise[1]}, "
            f"+{s['largest_rss_rise']['mib']} MiB: {self.rss_rise[2][:300]}",
        ]
        for p in self.problems:
            lines.append(f"  [{p.kind}] x{p.seen}, first in case {p.case}: {p.what}")
            if p.reproducer:
                lines.append(f"    input: {p.reproducer[:600]}")
            if p.detail:
                lines += ["    " + line for line in p.detail.splitlines()[-8:]]
        return "\n".join(lines)


class Clock:
    """Adds up the time spent in hookguard during one case."""

    def __init__(self) -> None:
        self.total = 0.0

    @contextlib.contextmanager
    def hookguard(self) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.total += time.perf_counter() - started


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # (KiB on Linux)


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise :class:`CaseTimeout` in the block after ``seconds`` (main thread only)."""
    def fire(signum: int, frame: FrameType | None) -> None:
        raise CaseTimeout(f"no answer after {seconds} s")

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_case(tally: Tally, case: int, timeout: float, reproducer: Callable[[], str],
             body: Callable[[Clock], None]) -> None:
    """One case: ``body`` under the deadline; an exception escaping it is a crash (steps
    that may fail on their own go through :func:`attempt`)."""
    clock = Clock()
    tally.cases += 1
    rss = peak_rss_mib()
    try:
        with deadline(timeout):
            body(clock)
    except CaseTimeout as exc:
        tally.add("hang", case, str(exc), reproducer(), traceback.format_exc(),
                  signature="hang")
    except Exception as exc:
        tally.crash(case, "case", exc, reproducer())
    finally:
        tally.times.append(clock.total)
        if clock.total > tally.slowest[0]:
            tally.slowest = (clock.total, case, reproducer())
        if peak_rss_mib() - rss > tally.rss_rise[0]:  # (the peak rose during this case)
            tally.rss_rise = (peak_rss_mib() - rss, case, reproducer())
        gc.enable()  # (``hookguard.cli.main`` turns the collector off for its short process)


_T = TypeVar("_T")


def attempt(tally: Tally, case: int, label: str, reproducer: Callable[[], str],
            clock: Clock, step: Callable[[], _T]) -> _T | None:
    """One step of a case, timed as hookguard's; an exception is a crash of the case (None
    returned), and the case's other steps still run."""
    try:
        with clock.hookguard():
            return step()
    except Exception as exc:
        tally.crash(case, label, exc, reproducer())
        return None


def printable(text: str) -> str:
    return text.encode("unicode_escape", "backslashreplace").decode("ascii")


def raw_controls(text: str) -> list[str]:
    """The characters of ``text`` a terminal or log would act on, besides newline and tab (the
    categories :mod:`hookguard.report.escape` escapes: controls, format characters such as
    bidirectional overrides, surrogates, private and unassigned code points, line and
    paragraph separators): what hookguard's reports must show escaped."""
    found = {c for c in _SUSPECT.findall(text) if unicodedata.category(c) in _ESCAPED}
    return sorted(f"U+{ord(c):04X} {unicodedata.category(c)}" for c in found)


# ------------------------------------------------------------------------------------------
# The sandbox: checkout, sibling, HOME, TMPDIR; what changed outside the checkout
# ------------------------------------------------------------------------------------------
@dataclass
class Sandbox:
    top: Path  # the temporary folder
    checkout: Path
    sibling: Path  # a folder beside the checkout: links point here, nothing may change it
    home: Path  # HOME, with the XDG folders in it
    out: Path  # the driver's own scratch files (reports, commit messages): not watched

    def watched(self) -> Snapshot:
        return Snapshot.of([self.top], skip={self.checkout, self.out})


def _set_env(values: dict[str, str | None]) -> dict[str, str | None]:
    before = {k: os.environ.get(k) for k in values}
    for key, value in values.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    return before


@contextlib.contextmanager
def sandbox(target: str, keep: Path | None = None) -> Iterator[Sandbox]:
    """A temporary folder with a checkout and what lies around it, and the environment
    pointed there (HOME, XDG, TMPDIR, git's identity); all restored afterwards."""
    parent = None
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        parent = str(keep)
    top = Path(tempfile.mkdtemp(prefix=f"hookguard-fuzz-{target}-", dir=parent)).resolve()
    box = Sandbox(top, top / "checkout", top / "sibling", top / "home", top / "out")
    for folder in (box.checkout, box.sibling, box.home, box.out, top / "tmp"):
        folder.mkdir()
    (box.sibling / "victim.py").write_text(
        f"from pkg.base import Base\n\n\nclass Leak(Base):\n    def prepare(self):\n"
        f"        return '{MARKER}'\n")
    (box.sibling / "victim.toml").write_text(f'# {MARKER}\n[[hook]]\nclass = "a.b.C"\n'
                                             'method = "m"\n')
    (box.sibling / "notes.txt").write_text(MARKER + "\n")
    (box.sibling / "cache").mkdir()
    env: dict[str, str | None] = {k: None for k in CLEARED_ENV}
    env.update(GIT_IDENTITY)
    env.update(HOME=str(box.home), XDG_CACHE_HOME=str(box.home / ".cache"),
               XDG_STATE_HOME=str(box.home / ".local/state"),
               XDG_CONFIG_HOME=str(box.home / ".config"),
               XDG_DATA_HOME=str(box.home / ".local/share"), TMPDIR=str(top / "tmp"),
               GIT_CONFIG_GLOBAL=str(box.home / ".gitconfig"), LC_ALL="C.UTF-8")
    before = _set_env(env)
    old_tempdir = tempfile.tempdir
    tempfile.tempdir = str(top / "tmp")
    try:
        from hookguard.model.cache_secret import cache_key

        cache_key(box.checkout)  # the per-user key is made once, here, not during a case
        yield box
    finally:
        tempfile.tempdir = old_tempdir
        _set_env(before)
        if keep is None:
            _remove_tree(top)


def _remove_tree(top: Path) -> None:
    def retry(function: Callable[..., object], path: str, info: object) -> None:
        with contextlib.suppress(OSError):
            os.chmod(path, 0o700)
            function(path)

    shutil.rmtree(top, onerror=retry)


@dataclass
class Snapshot:
    """What a set of folders holds: every entry's type, mode, size, mtime and (for regular
    files up to 1 MiB) a digest of its bytes."""

    entries: dict[str, tuple[object, ...]]

    @classmethod
    def of(cls, tops: Sequence[Path], skip: Collection[Path] = ()) -> Snapshot:
        entries: dict[str, tuple[object, ...]] = {}
        skipped = {str(s) for s in skip}
        for top in tops:
            entries[str(top)] = _entry(str(top))
            for current, dirs, files in os.walk(top, followlinks=False):
                dirs[:] = [d for d in dirs if os.path.join(current, d) not in skipped]
                for name in (*dirs, *files):
                    path = os.path.join(current, name)
                    if path not in skipped:
                        entries[path] = _entry(path)
        return cls(entries)

    def changes(self, after: Snapshot) -> list[str]:
        changed = []
        for path in sorted(self.entries.keys() | after.entries.keys()):
            old, new = self.entries.get(path), after.entries.get(path)
            if old != new:
                how = "appeared" if old is None else "vanished" if new is None else "changed"
                changed.append(f"{printable(path)} {how}")
        return changed


def _entry(path: str) -> tuple[object, ...]:
    try:
        info = os.lstat(path)
    except OSError as exc:
        return ("error", exc.errno)
    if stat.S_ISDIR(info.st_mode):
        return ("dir", info.st_mode)
    if stat.S_ISLNK(info.st_mode):
        return ("link", os.readlink(path))
    if not stat.S_ISREG(info.st_mode):
        return ("special", info.st_mode)
    digest = ""
    if info.st_size <= 1 << 20:
        with contextlib.suppress(OSError), open(path, "rb") as handle:
            digest = hashlib.sha1(handle.read()).hexdigest()
    return ("file", info.st_mode, info.st_size, info.st_mtime_ns, digest)


def check_outside(tally: Tally, case: int, before: Snapshot, after: Snapshot,
                  reproducer: Callable[[], str]) -> None:
    changed = before.changes(after)
    if changed:
        tally.add("outside write", case, "; ".join(changed[:5]), reproducer())


def git(cwd: Path, *args: str | bytes, check: bool = True) -> bytes:
    return subprocess.run(
        ["git", "-c", "core.protectNTFS=false", "-c", "core.protectHFS=false",
         "-c", "commit.gpgsign=false", "-c", "gc.auto=0", *args],
        cwd=cwd, check=check, capture_output=True, timeout=120,
    ).stdout


def verdict(result: Any) -> list[str]:
    """Findings and input problems, every field, as sorted JSON lines (notes left out: they
    say what the cache did)."""
    lines = [json.dumps(f.to_json(), sort_keys=True) for f in result.findings]
    lines += [json.dumps(e.to_json(), sort_keys=True) for e in result.errors]
    return sorted(lines)


def located(result: Any) -> set[tuple[str, int, str]]:
    found = {(f.path, f.line, f.code) for f in result.findings}
    return found | {(e.path, e.line, "error") for e in result.errors}


def difference(expected: Sequence[str], got: Sequence[str]) -> str:
    missing = sorted(set(expected) - set(got))
    extra = sorted(set(got) - set(expected))
    return (f"missing {len(missing)}: {printable(' | '.join(missing))[:700]}; "
            f"extra {len(extra)}: {printable(' | '.join(extra))[:700]}")


@dataclass
class CliRun:
    code: int
    stdout: str
    stderr: str


def run_cli(argv: Sequence[str], cwd: Path | None = None) -> CliRun:
    """``hookguard.cli.main(argv)`` in this process, its output captured. An exit code
    other than 0, 1 or 2 (an escaping exception included) is for the caller to count."""
    from hookguard.cli import main

    out, err = io.StringIO(), io.StringIO()
    previous = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(argv))
            except SystemExit as exc:  # argparse refusing its arguments
                code = exc.code if isinstance(exc.code, int) else 2
    finally:
        os.chdir(previous)
        gc.enable()
    return CliRun(code, out.getvalue(), err.getvalue())


# ------------------------------------------------------------------------------------------
# Target 1: file names
# ------------------------------------------------------------------------------------------
BASE_BEFORE = (
    "class Base:\n"
    "    def run(self):\n"
    "        self.setup(1, flag=True)\n"
    "\n"
    "    def setup(self, x, flag=False):\n"
    "        pass\n"
)
BASE_AFTER = BASE_BEFORE.replace("setup", "prepare")
SUB = ("from pkg.base import Base\n\n\nclass Sub(Base):\n    def setup(self, x, flag=False):\n"
       "        print('sub')\n")
GOOD = "from pkg.base import Base\n\n\nclass Good(Base):\n    def prepare(self):\n        pass\n"
WELL_NAMED = ("pkg/__init__.py", "pkg/base.py", "pkg/sub.py", "pkg/good.py")

_NAME_PIECES: tuple[bytes, ...] = (
    b"\n", b"\r", b"\r\n", b"\t", b"\x1b[31m", b"\x1b]0;title\x07", b"\x7f", b"\x01", b"\x08",
    "\u202e".encode(), "\u2028".encode(), "\u200b".encode(), "\ufeff".encode(),
    "\u0085".encode(), "\u009b".encode(), "\U000e0041".encode(), "e\u0301".encode(),
    "\u00e9".encode(), "\uff0f".encode(), "\ue000".encode(), "\U0010fffe".encode(),
    b"\xff", b"\xfe", b"\xc3", b"\xe9", b"\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80",
    b"\xc0\xaf", b" ", b"  ", b'"', b"'", b"`", b"\\", b"-", b"--", b"-rf", b":", b"::",
    b"HEAD:", b"HEAD:pkg/base.py", b"HEAD~1:", b"::error ", b"%0A", b"%", b"*", b"?", b"[",
    b"]", b"!", b"~", b"^", b"{", b"}", b"@{-1}", b"..", b"$(id)", b";", b"|", b"&", b"<",
    b">", b"#", b"=", b"+", b",", b"x blob 10", b" missing", b"0" * 40, b".py", b"\\n",
    b"<script>", b"&amp;", b"](x)", b"|a|", b"--format=json", b"pkg",
)


def random_component(rng: random.Random) -> bytes:
    roll = rng.random()
    if roll < 0.08:  # a long component: up to the 255 bytes a name may have
        size = rng.randint(200, 255)
        text = b"".join(rng.choice(_NAME_PIECES) for _ in range(size // 2))
        return text.replace(b"/", b"_")[:size]
    parts = []
    for _ in range(rng.randint(1, 5)):
        pick = rng.random()
        if pick < 0.55:
            parts.append(rng.choice(_NAME_PIECES))
        elif pick < 0.8:
            parts.append(bytes(rng.choice([b for b in range(1, 256) if b != 0x2F])
                               for _ in range(rng.randint(1, 4))))
        else:
            parts.append(rng.choice([b"a", b"mod", b"x_1", b"Sub", b"base"]))
    return b"".join(parts)


def random_name(rng: random.Random) -> bytes | None:
    """A relative path of random bytes (no NUL, components of 1-255 bytes, not ``.``/``..``
    nor ``.git``), holding at least one byte that is not in a tame name; None to retry."""
    depth = rng.choice((1, 1, 1, 2, 2, 3, 4)) if rng.random() > 0.02 else rng.randint(20, 60)
    name = b"/".join(random_component(rng) for _ in range(depth))
    if rng.random() < 0.75:
        name += b".py"
    parts = name.split(b"/")
    if any(not p or p in (b".", b"..") or len(p) > 255 or p.lower() == b".git"
           for p in parts) or len(name) > 3000:
        return None
    if parts[0] in (b".hookguard_cache", b".gitignore", b".gitattributes", b".gitmodules"):
        return None
    tame = set(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./")
    if all(b in tame for b in name):
        return None
    return name


def random_class(rng: random.Random, index: int) -> str:
    """A random, valid class: maybe a subclass of Base, Sub or Good, with random methods."""
    parent = rng.choice(["Base", "Sub", "Good", "object", ""])
    head = "from pkg.base import Base\nfrom pkg.sub import Sub\nfrom pkg.good import Good\n\n\n"
    bases = f"({parent})" if parent else ""
    body = []
    for _ in range(rng.randint(0, 4)):
        method = rng.choice(["setup", "prepare", "run", "finish", "__init__", "helper"])
        params = rng.choice(["", "x", "x, flag=False", "*args, **kwargs", "x, y", "*, flag"])
        inner = rng.choice(["pass", f"super().{method}()", "self.value = 1",
                            "return self.prepare(1)"])
        sig = f"self, {params}" if params else "self"
        body.append(f"    def {method}({sig}):\n        {inner}\n")
    return head + f"class R{index}{bases}:\n" + ("\n".join(body) or "    pass\n")


@dataclass
class NamesState:
    box: Sandbox
    base_commit: str
    good_line: int
    baseline: set[tuple[str, int, str]]  # the well-named files' findings
    made: list[bytes] = field(default_factory=list)  # the last case's entries, to remove
    messages: list[bytes] = field(default_factory=list)  # commit messages since the base
    staged: bool = False  # the last case staged its files
    dirty: bool = False  # a problem was found: back to the base before the next case


def names_setup(box: Sandbox) -> NamesState:
    root = box.checkout
    git(root, "init", "-q", "-b", "main")
    (root / "pkg").mkdir()
    for path, text in (("pkg/__init__.py", ""), ("pkg/base.py", BASE_BEFORE),
                       ("pkg/sub.py", SUB)):
        (root / path).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    (root / "pkg/base.py").write_text(BASE_AFTER)
    (root / "pkg/good.py").write_text(GOOD)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "rename the hook")
    base_commit = git(root, "rev-parse", "HEAD").decode().strip()
    from hookguard.engine import Options, audit

    cold = audit([root], Options(use_cache=False, workers=1))
    audit([root], Options(use_cache=True, workers=1))  # the per-user cache key is made here
    found = located(cold)
    good = [line for path, line, code in found if path == "pkg/good.py" and code == "HG002"]
    assert ("pkg/sub.py", 5, "HG001") in found and good, f"the known findings are {found}"
    return NamesState(box, base_commit, good[0], found)


def _write_entry(root: Path, name: bytes, content: bytes | None, link: str | None) -> bool:
    path = os.path.join(os.fsencode(root), name)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if link is not None:
            os.symlink(os.fsencode(link), path)
        else:
            with open(path, "xb") as handle:
                handle.write(content or b"")
    except OSError:  # a component taken by a file, a name too long for the folder, ...
        return False
    return True


def _remove_entries(root: Path, names: Sequence[bytes]) -> None:
    base = os.fsencode(root)
    for name in names:
        path = os.path.join(base, name)
        with contextlib.suppress(OSError):
            os.unlink(path)
        parent = os.path.dirname(path)
        while parent != base and len(parent) > len(base):
            try:
                os.rmdir(parent)
            except OSError:
                break
            parent = os.path.dirname(parent)


def _random_message(rng: random.Random, separators: bool = True) -> bytes:
    """A commit message of random bytes (git keeps them as they are); a quarter of them hold
    the record or unit separator (0x1e, 0x1f), which the history walk once split commits at
    (tests/test_input_fuzz.py has the reproducers)."""
    data = bytearray(rng.randrange(1, 256) for _ in range(rng.randint(1, 80)))
    for i, byte in enumerate(data):
        if byte in (0x1E, 0x1F):
            data[i] = 0x20
    if separators and rng.random() < 0.25:
        data.insert(rng.randint(0, len(data)), rng.choice((0x1E, 0x1F)))
    return bytes(data)


MODES = ("committed", "committed", "staged", "untracked", "untracked")


def names_case(state: NamesState, rng: random.Random, case: int, tally: Tally,
               settings: Settings, reset_every: int = 100) -> None:
    """One case: the last case's files removed, one to three new ones written and committed
    (or staged, or left untracked), then :func:`_names_checks`."""
    from hookguard.config import Config
    from hookguard.model.sources import PathFilter

    box, root = state.box, state.box.checkout
    if case % reset_every == 0 or state.dirty:  # a short, clean history for the next cases
        git(root, "reset", "-q", "--hard", state.base_commit)
        git(root, "clean", "-fdq")
        state.made, state.messages, state.dirty, state.staged = [], [], False, False
    _remove_entries(root, state.made)
    if state.staged:  # what the last case staged leaves the index
        git(root, "reset", "-q")
        state.staged = False
    state.made = []
    expected: set[tuple[str, int, str]] = set(state.baseline)
    made: list[tuple[bytes, str]] = []
    accepts = PathFilter(Config()).accepts
    index = 0
    while len(made) < rng.choice((1, 1, 2, 3)) and index < 20:
        index += 1
        name = random_name(rng)
        if name is None:
            continue
        shown = os.fsdecode(name)
        link = None
        kind = "other"
        if rng.random() < 0.04:
            if rng.random() < 0.5:
                link = os.path.relpath(box.sibling / "victim.py", (root / shown).parent)
                kind = "link out"
            else:
                link = os.path.relpath(root / "pkg/good.py", (root / shown).parent)
                kind = "link in"
            content = None
        elif name.endswith(b".py"):
            roll = rng.random()
            if roll < 0.5:
                kind = "drift"
                content = GOOD.replace("class Good", f"class W{case}_{index}").encode()
            elif roll < 0.8:
                kind = "random class"
                content = random_class(rng, index).encode()
            elif roll < 0.9:
                kind = "syntax error"
                content = b"def broken(:\n"
            else:
                kind = "bytes"
                content = bytes(rng.randrange(256) for _ in range(rng.randint(0, 64)))
        else:
            content = bytes(rng.randrange(256) for _ in range(rng.randint(0, 32)))
        if not _write_entry(root, name, content, link):
            tally.outcomes["names the filesystem refused"] += 1
            continue
        state.made.append(name)
        made.append((name, kind))
        analysed = accepts(shown)
        # A module or folder named pkg below the root shadows the package pkg for the file's
        # own imports (as Python's script path would): its base does not resolve, whatever
        # the bytes of the name. (The same holds for a tame name: see the report.)
        shadows = any(part.removesuffix(".py") == "pkg" for part in shown.split("/")[1:])
        if shadows:
            tally.outcomes["files in a folder or module named pkg (no expectation)"] += 1
        elif kind == "drift" and analysed:
            expected.add((shown, state.good_line, "HG002"))
        elif kind in ("syntax error", "link out") and analysed:
            expected.add((shown, 0, "error"))
        tally.outcomes[f"files: {kind}"] += 1
    mode = rng.choice(MODES)
    tally.outcomes[f"cases {mode}"] += 1
    try:
        if mode != "untracked":
            git(root, "add", "-A")
            state.staged = mode == "staged"
        if mode == "committed":
            message = (_random_message(rng, settings.separators) if rng.random() < 0.25
                       else f"case {case}".encode())
            (box.out / "message").write_bytes(message)
            git(root, "commit", "-q", "--allow-empty", "--cleanup=verbatim", "-F",
                str(box.out / "message"))
            state.messages.append(message)
    except subprocess.CalledProcessError as exc:  # git refuses a name: not hookguard's case
        tally.outcomes[f"git refused: {printable(exc.stderr.decode('utf-8', 'replace'))[:80]}"
                       ] += 1
        state.dirty = True
        return

    def reproducer() -> str:
        odd = [m for m in state.messages if any(b < 0x20 and b != 0x0A for b in m)]
        return (f"{mode}: {[(n, k) for n, k in made]!r}"
                + (f"; commit messages since the base with control bytes: {odd!r}"
                   if odd else ""))

    before = box.watched()
    problems = tally.counts["verdict"]
    run_case(tally, case, settings.timeout, reproducer, lambda clock: _names_checks(
        state, clock, case, tally, expected, mode, reproducer))
    check_outside(tally, case, before, box.watched(), reproducer)
    if tally.counts["verdict"] != problems:
        state.dirty = True  # one problem is counted once, not again by every later case


def _names_checks(state: NamesState, clock: Clock, case: int, tally: Tally,
                  expected: set[tuple[str, int, str]], mode: str,
                  reproducer: Callable[[], str]) -> None:
    from hookguard.engine import Options, audit

    root = state.box.checkout

    def run(label: str, step: Callable[[], _T]) -> _T | None:
        return attempt(tally, case, label, reproducer, clock, step)

    cold = run("audit --no-cache", lambda: audit([root], Options(use_cache=False, workers=1)))
    # warm: on the cache the last case left (incremental, or a new HEAD); every fifth case
    # once more, where the last result is reused
    warm = [run("audit", lambda: audit([root], Options(use_cache=True, workers=1)))
            for _ in range(2 if case % 5 == 0 else 1)]
    if cold is None:
        return
    truth = verdict(cold)
    for n, result in enumerate(warm, 1):
        if result is not None and verdict(result) != truth:
            tally.add("verdict", case, f"warm run {n} differs from the cold run: "
                      + difference(truth, verdict(result)), reproducer(),
                      signature=f"warm run {n} differs from the cold run")
    found = located(cold)
    well_named = {f for f in found if f[0] in WELL_NAMED}
    if well_named != state.baseline:
        separator = any(b"\x1e" in m for m in state.messages)
        tally.add("verdict", case, "the well-named files' findings changed: "
                  f"{sorted(well_named ^ state.baseline)}", reproducer(),
                  signature="the well-named files' findings changed" + (
                      ", a commit subject since the base holds 0x1e" if separator else ""))
    for path, line, code in expected - state.baseline:
        hit = any(p == path and c == code and (line == 0 or n == line) for p, n, c in found)
        if not hit:
            tab = mode == "untracked" and "\t" in path  # (see the report: _git_listing)
            tally.add("verdict", case, f"no {code} at {printable(path)}:{line}; found "
                      f"{printable(str(sorted(f for f in found if f[0] == path)))}",
                      reproducer(), signature=f"a file's own {code} missing"
                      + (", an untracked name holding a tab" if tab else ""))
    pages = run("reports", lambda: _render_all(cold, html=case % 5 == 0))
    if pages is not None:
        _check_reports(tally, case, pages, reproducer)
    if warm[0] is not None and any("cannot write cache" in n for n in warm[0].notes):
        tally.outcomes["cases whose cache could not be written (see the report)"] += 1
    if case % 10 == 0 and mode != "untracked":
        _names_gate(state, run, case, tally, expected, mode == "staged", reproducer)
    if case % 50 == 0:
        _cli_formats(state, run, case, tally, cold, reproducer)
    tally.outcomes["findings (cold)"] += len(cold.findings)
    tally.outcomes["input problems (cold)"] += len(cold.errors)


Step = Callable[[str, Callable[[], Any]], Any]


def _names_gate(state: NamesState, run: Step, case: int, tally: Tally,
                expected: set[tuple[str, int, str]], staged: bool,
                reproducer: Callable[[], str]) -> None:
    """``check --base HEAD~1`` (``check --staged``) cold and warm: the same, and every drifted
    override the case added is found."""
    from hookguard.engine import Options
    from hookguard.gate import run_gate

    root = state.box.checkout
    base = None if staged else "HEAD~1"
    name = "check --staged" if staged else "check --base HEAD~1"
    cold = run(f"{name} --no-cache", lambda: run_gate(root, base, "HEAD", staged, Options(
        use_cache=False, workers=1)))
    warm = run(name, lambda: run_gate(root, base, "HEAD", staged, Options(use_cache=True,
                                                                         workers=1)))
    tally.outcomes[f"{name} rounds"] += 1
    if cold is None:
        return
    if warm is not None and verdict(warm) != verdict(cold):
        tally.add("verdict", case, f"{name} warm differs from cold: "
                  + difference(verdict(cold), verdict(warm)), reproducer(),
                  signature=f"{name} warm differs from cold")
    found = located(cold)
    for path, line, code in expected - state.baseline:
        if code == "HG002" and (path, line, code) not in found:
            tally.add("verdict", case, f"{name} misses {code} at {printable(path)}:{line}",
                      reproducer(), signature=f"{name} misses a file's own {code}")


def _render_all(result: Any, html: bool = True) -> dict[str, str]:
    from hookguard.commands.common import summarise
    from hookguard.commands.report import families
    from hookguard.report.github import render_github, step_summary_markdown
    from hookguard.report.html import render_html
    from hookguard.report.json_report import render_json
    from hookguard.report.plain import render_plain
    from hookguard.report.sarif import render_sarif

    findings, errors, notes = result.findings, result.errors, result.notes
    summary = summarise(findings, errors, result.stats.files, result.seconds)
    pages = {
        "json": render_json(findings, errors, notes),
        "plain": render_plain(findings, errors, notes),
        "sarif": render_sarif(findings, errors, result.root, notes),
        "github": render_github(findings, errors, notes, summary),
        "github step summary": step_summary_markdown(findings, errors, notes, summary),
    }
    if html:  # (the slowest to render: every fifth case)
        grouped = families(result.project, findings) if result.project else ([], {})
        maps, dead = grouped[0], grouped[1]  # (and, in later versions, how many left out)
        pages["html"] = render_html(findings, errors, notes, summary, result.root, maps, dead)
    return pages


def _check_reports(tally: Tally, case: int, pages: dict[str, str],
                   reproducer: Callable[[], str]) -> None:
    for fmt, text in pages.items():
        controls = raw_controls(text)
        if controls:
            tally.add("unescaped output", case, f"{fmt} output holds raw control characters "
                      f"{controls[:8]}", reproducer(), signature=f"{fmt} output")
            tally.outcomes[f"raw control characters in {fmt}"] += 1
        if MARKER in text:
            tally.add("verdict", case, f"{fmt} output shows a file outside the checkout",
                      reproducer())
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            tally.add("verdict", case, f"{fmt} output is not UTF-8: {exc}", reproducer())
    for fmt in ("json", "sarif"):
        try:
            json.loads(pages[fmt])
        except ValueError as exc:
            tally.add("verdict", case, f"{fmt} output is not JSON: {exc}", reproducer())


def _cli_formats(state: NamesState, run: Step, case: int, tally: Tally, cold: Any,
                 reproducer: Callable[[], str]) -> None:
    """The command line in every format (and ``report --html``), in this process: the exit
    code the cold audit implies, and no raw control character in anything it prints."""
    from hookguard.commands.common import exit_code

    root, out = state.box.checkout, state.box.out
    expect = exit_code(cold.findings, False, cold.errors)
    summary = out / "step-summary.md"
    summary.unlink(missing_ok=True)
    runs: dict[str, tuple[list[str], Path | None]] = {
        fmt: (["audit", str(root), "--format", fmt, "--jobs", "1"], None)
        for fmt in ("json", "plain", "sarif", "github")}
    runs["html"] = (["report", str(root), "--html", str(out / "report.html"), "--jobs", "1"],
                    None)
    runs["plain, in the checkout"] = (["audit", "--format", "plain", "--no-cache", "--jobs",
                                       "1"], root)
    for fmt, (argv, cwd) in runs.items():
        env = _set_env({"GITHUB_STEP_SUMMARY": str(summary) if fmt == "github" else None})
        try:
            ran = run(f"hookguard {argv[0]} ({fmt})", functools.partial(run_cli, argv, cwd))
        finally:
            _set_env(env)
        if ran is None:
            continue
        texts = {"stdout": ran.stdout, "stderr": ran.stderr}
        if fmt == "html" and (out / "report.html").exists():
            texts["page"] = (out / "report.html").read_text("utf-8", "surrogateescape")
        if fmt == "github" and summary.exists():
            texts["step summary"] = summary.read_text("utf-8", "surrogateescape")
        if ran.code != expect:
            tally.add("verdict", case, f"hookguard {argv[0]} --format {fmt} exited "
                      f"{ran.code}, not {expect}: {printable(ran.stderr[-400:])}", reproducer(),
                      signature=f"CLI {fmt} exit code")
        for where, text in texts.items():
            controls = raw_controls(text)
            if controls:
                tally.add("unescaped output", case, f"CLI {fmt} {where} holds raw control "
                          f"characters {controls[:8]}", reproducer(),
                          signature=f"CLI {fmt} {where}")
            if MARKER in text:
                tally.add("verdict", case, f"CLI {fmt} {where} shows a file outside the "
                          "checkout", reproducer())
    tally.outcomes["CLI report rounds"] += 1


# ------------------------------------------------------------------------------------------
# Target 2: contract files
# ------------------------------------------------------------------------------------------
MANAGER = (
    "class Manager:\n"
    "    def prepare(self, n):\n"
    "        self.table = [0] * n\n"
    "        if self.fast:\n"
    "            self._staging(n)\n"
    "\n"
    "    def _staging(self, n):\n"
    "        self.staging = [0] * n\n"
    "\n"
    "    def old_prepare(self):\n"
    "        pass\n"
    "\n"
    "\n"
    "class Fast(Manager):\n"
    "    def prepare(self, n):\n"
    "        self.table = []\n"
)
SEED_CONTRACTS = (
    '[[hook]]\nclass = "pkg.manager.Manager"\nmethod = "prepare"\n'
    'renamed_from = ["old_prepare", "build"]\ninvariants = ["len(table) >= 0"]\n\n'
    '[hook.fields.table]\ntype = "list"\nitems = "int"\nshape = ["n"]\n\n'
    '[[hook.when]]\nattr = "fast"\n\n[hook.when.fields.staging]\ntype = "list"\n'
    'equals = "[0] * len(table)"\n',
    '[[hook]]\nclass = "pkg.manager.Manager"\nmethod = "prepare"\n\n'
    '[hook.fields.table]\ndtype = "int32"\ndevice = "cpu"\npinned = true\n'
    'shape = ["n", 2, "n * 2 + 1", "..."]\nvalues = "nonneg"\nrange = [0, 10]\n'
    'contiguous = true\naddresses = "cuda"\naddress_column = 0\nconsumers = ["pkg.x.f"]\n',
    '[[hook]]\nclass = "pkg.manager.Manager"\nmethod = "gone"\n\n'
    '[[hook]]\nclass = "pkg.manager.Fast"\nmethod = "prepare"\nrenamed_from = "old"\n',
)
_EXPRESSIONS = (
    "len(table) >= 0", "num_pools * 2", "n", "x.shape[0]", "table[:, 0].max() < n",
    "(a[b[:, 0].long(), 0] != 0).all()", "torch.arange(n, dtype=torch.int32)",
    "10**10**10", "sum(range(10**15))", "[0]*(3*10**8)", "2**256", "2**257", "-(2**300)",
    "().__class__.__bases__[0]", "x.__dict__", "lambda: 0", "[i for i in range(9)]",
    "__import__('os')", "open('/etc/passwd')", "eval('1')", "min(xs, key=shell)",
    "f'{x}'", "(y := 3)", "*a", "x if y else z", "not not not x", "a.b.c.d.e", "x._private",
    "'%s' % x", "round(x, 10**6)", "torch.zeros(n, 20000)", "torch.cat([a, a])",
    "range(10**7)", "'a' * 10**9", "x[::-1]", "...", "None", "True", "1e308 * 10", "0x10",
    "'\\x00'", "\x00", "\u202e", "", " ", "(", ")", "[", "a b", "1 +", "x.shape[0] // 0",
)


def _random_expression(rng: random.Random, depth: int = 0) -> str:
    if depth > 4 or rng.random() < 0.3:
        return rng.choice((*_EXPRESSIONS, "n", "x", "table", "num_pools", "1", "2"))
    pick = rng.random()
    left, right = _random_expression(rng, depth + 1), _random_expression(rng, depth + 1)
    if pick < 0.4:
        return f"({left} {rng.choice(['+', '*', '**', '%', '//', '<', '==', 'and'])} {right})"
    if pick < 0.6:
        return f"{rng.choice(['len', 'min', 'max', 'abs', 'int', 'sum', 'range'])}({left})"
    if pick < 0.7:
        return f"{left}[{right}]"
    if pick < 0.8:
        return f"{left}.{rng.choice(['shape', 'max()', 'long()', 'all()', 'tolist()'])}"
    if pick < 0.9:
        deep = rng.randint(30, 80)
        return "(" * deep + left + ")" * deep
    return " + ".join([left] * min(rng.randint(50, 400), 20_000 // (len(left) + 1) + 1))


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    pick = rng.random()
    if depth > 3 or pick < 0.25:
        return rng.choice([
            0, -1, 2**63 - 1, 1.5, float("inf"), True, False, "", "x", "int32", "cpu",
            "cuda:7", "tensor", "list", "nonneg", "...", "pkg.manager.Manager", "prepare",
            "not an ident", "\u202e", "a\nb", _random_expression(rng),
        ])
    if pick < 0.45:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if pick < 0.6:
        return {_random_key(rng): _random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    if pick < 0.65 and depth == 0:  # (one huge value a contract, not a tree of them)
        return "x" * rng.choice([1000, 100_000, 1_000_000])
    if pick < 0.7 and depth == 0:
        return list(range(rng.choice([1000, 100_000])))
    return _random_expression(rng)


def _random_key(rng: random.Random) -> str:
    from hookguard.contracts.schema import _FIELD_KEYS, _HOOK_KEYS, _WHEN_KEYS

    known = sorted(_HOOK_KEYS | _FIELD_KEYS | _WHEN_KEYS | {"hook"})
    return rng.choice([*known, "x", "class ", "Class", "métod", "a.b", "", "\u202e", "1",
                       "a\nb", "hook", "fields", "when"])


def _toml_key(key: str) -> str:
    if key and all(c.isascii() and (c.isalnum() or c in "_-") for c in key):
        return key
    return json.dumps(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "inf" if value == float("inf") else "nan" if value != value else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) \
            + "}"
    return json.dumps(str(value))


def _dump_toml(data: dict[str, Any]) -> str:
    """``data`` as TOML: every [[hook]] as a table with inline values (enough for fuzzing)."""
    out: list[str] = []
    size = 0
    for key, value in data.items():
        if key == "hook" and isinstance(value, list) and all(isinstance(v, dict) for v in value):
            for hook in value:
                if size > MAX_CONTRACT:  # (a hook repeated with a huge value in it)
                    break
                out.append("[[hook]]")
                out += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in hook.items()]
                out.append("")
                size += sum(len(line) for line in out[-len(hook) - 2:])
        else:
            out.insert(0, f"{_toml_key(key)} = {_toml_value(value)}")
    return "\n".join(out) + "\n"


def _paths(node: Any, trail: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield trail
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*trail, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, (*trail, i))


def _mutate_tree(rng: random.Random, data: dict[str, Any]) -> dict[str, Any]:
    """One structural change somewhere in a parsed contract."""
    trails = list(itertools.islice((t for t in _paths(data) if t), 20_000))
    if not trails:
        return {"hook": [_random_value(rng)]}
    trail = rng.choice(trails)
    parent: Any = data
    for step in trail[:-1]:
        parent = parent[step]
    last = trail[-1]
    pick = rng.random()
    if pick < 0.3:
        parent[last] = _random_value(rng)
    elif pick < 0.45 and isinstance(parent, dict):
        parent[_random_key(rng)] = parent.pop(last)
    elif pick < 0.55:
        value: Any = parent[last]
        for _ in range(rng.choice([1, 2, 5, 20])):
            value = rng.choice([[value], {"x": value}])
        parent[last] = value
    elif pick < 0.7:
        parent[last] = _random_expression(rng)
    elif pick < 0.8 and isinstance(parent, dict):
        del parent[last]
    elif pick < 0.9:
        hooks = data.get("hook")
        if isinstance(hooks, list) and hooks and len(hooks) < 3000:
            hooks.extend([hooks[0]] * rng.choice([1, 1, 10, 1000]))
    else:
        parent[last] = [rng.choice(["old", "x y", "1a", "\u202e", "", "a" * 5000])
                        for _ in range(rng.randint(0, 30))]
    return data


_TOML_INSERTS = (
    "[[hook]]\n", "[hook]\n", "[hook.fields.x]\n", "[[hook.when]]\n", '[hook.fields."a\\nb"]\n',
    '[hook.fields."\u202e"]\n', "hook = 1\n", "[[hook.fields]]\n", 'class = "a.b.C"\n',
    'method = "m"\n', "invariants = [\n", '"""\n', "'''\n", "x = \"unterminated\n",
    "a = 1979-05-27T07:32:00Z\n", "b = nan\n", "c = -inf\n", "d = 0x_1\n", "\ufeff", "\r\n",
    "\x00", "\x1b[2J", "# \u202e comment\n", "e = '''\n\x7f'''\n", "[ hook . fields . y ]\n",
)


def _mutate_text(rng: random.Random, text: bytes, seeds: Sequence[bytes]) -> bytes:
    pick = rng.random()
    n = len(text)
    at = rng.randint(0, n)
    if pick < 0.15 and n:
        data = bytearray(text)
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(n)] ^= 1 << rng.randrange(8)
        return bytes(data)
    if pick < 0.25:
        return text[:at] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 16))) + \
            text[at:]
    if pick < 0.35 and n:
        return text[:at] + text[at + rng.randint(1, 200):]
    if pick < 0.45:
        lines = text.splitlines(keepends=True)
        if lines:
            i = rng.randrange(len(lines))
            if rng.random() < 0.5:
                lines.insert(i, lines[i])  # a duplicate key or table
            else:
                j = rng.randrange(len(lines))
                lines[i], lines[j] = lines[j], lines[i]
        return b"".join(lines)
    if pick < 0.6:
        return text[:at] + rng.choice(_TOML_INSERTS).encode() + text[at:]
    if pick < 0.65:
        parts = ".".join(f"k{i}" for i in range(rng.randint(10, 60)))
        return text + f"\n{parts} = 1\n".encode()
    if pick < 0.7:
        depth = rng.choice([10, 100, 1000, 5000, 20000])
        opener, closer = rng.choice([("[", "]"), ("{a=", "}")])
        return text + f"\nz = {opener * depth}1{closer * depth}\n".encode()
    if pick < 0.73:
        size = rng.choice([10_000, 1_000_000, 3_000_000])
        return text + f'\nw = "{"y" * size}"\n'.encode()
    if pick < 0.76:  # (never past MAX_CONTRACT: the generator's memory is not the point)
        return text * min(rng.choice([2, 50, 500]), MAX_CONTRACT // max(len(text), 1) + 1)
    if pick < 0.8:
        return text.replace(b"\n", b"\r\n")
    if pick < 0.9:
        other = rng.choice(seeds)
        cut = rng.randint(0, len(other))
        return text[:at] + other[cut:]
    if rng.random() < 0.03:  # many distinct hooks, each with an invariant: the cost per hook
        return "".join(f'[[hook]]\nclass = "pkg.m{i}.C"\nmethod = "m"\ninvariants = ["n > 0"]\n'
                       for i in range(rng.choice([2000, 20_000]))).encode()
    table = "[[hook]]\n" + "".join(
        f'class = "pkg.m{i}.C"\nmethod = "m"\n[[hook]]\n' for i in range(rng.randint(1, 3000)))
    return text + table.encode() + b'class = "a.b.C"\nmethod = "x"\n'


def contract_seeds() -> list[bytes]:
    """The bundled contracts, those of docs/contracts.md and the test files, and a few more."""
    import ast
    import textwrap

    seeds = [p.read_bytes() for p in sorted((ROOT / "contracts").glob("*.toml"))]
    docs = ROOT / "docs" / "contracts.md"
    if docs.exists():
        for block in docs.read_text().split("```toml")[1:]:
            seeds.append(block.split("```", 1)[0].encode())
    for test in sorted((ROOT / "tests").rglob("test_*.py")):
        try:
            tree = ast.parse(test.read_text())
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                "[[hook]]" in node.value or "[hook." in node.value
            ):
                seeds.append(textwrap.dedent(node.value).encode())
    seeds += [s.encode() for s in SEED_CONTRACTS]
    return list(dict.fromkeys(seeds))


@dataclass
class ContractsState:
    box: Sandbox
    seeds: list[bytes]
    parsed: list[dict[str, Any]]
    project: Any
    config: Any


def contracts_setup(box: Sandbox) -> ContractsState:
    from hookguard.engine import Options, Workspace, audit

    root = box.checkout
    shutil.copytree(ROOT / "fixtures" / "kv_cache", root, dirs_exist_ok=True)
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "manager.py").write_text(MANAGER)
    (root / "fuzz").mkdir()
    result = audit([root], Options(use_cache=False, history=False, workers=1))
    assert result.project is not None and "pkg.manager.Manager" in result.project.classes
    toml = _toml_module()
    seeds = contract_seeds()
    parsed = []
    for seed in seeds:
        with contextlib.suppress(Exception):
            parsed.append(toml.loads(seed.decode()))
    return ContractsState(box, seeds, parsed, result.project, Workspace.open(root).config)


def _toml_module() -> Any:
    import importlib

    return importlib.import_module("tomllib" if sys.version_info >= (3, 11) else "tomli")


MAX_CONTRACT = 5 << 20  # (over the reader's 4 MiB: refused unread, whatever follows)


def random_contract(state: ContractsState, rng: random.Random) -> bytes:
    import copy

    if state.parsed and rng.random() < 0.4:
        data = copy.deepcopy(rng.choice(state.parsed))
        for _ in range(rng.choice([1, 1, 2, 3])):
            data = _mutate_tree(rng, data)
        text = _dump_toml(data).encode()[:MAX_CONTRACT]
        if rng.random() < 0.3:
            text = _mutate_text(rng, text, state.seeds)
        return text[:MAX_CONTRACT]
    text = rng.choice(state.seeds)
    for _ in range(rng.choice([1, 1, 1, 2, 3, 6])):
        text = _mutate_text(rng, text, state.seeds)[:MAX_CONTRACT]
    return text


def _place_contract(state: ContractsState, rng: random.Random, case: int,
                    text: bytes) -> tuple[Path, str]:
    """Where the case's contract lies, and how (a file, a FIFO, a link, a folder)."""
    fuzz = state.box.checkout / "fuzz"
    for entry in list(fuzz.iterdir()):
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    path = fuzz / "case.toml"
    roll = rng.random()
    if roll < 0.005:
        os.mkfifo(path)
        return path, "fifo"
    if roll < 0.01:
        os.symlink("/dev/zero", path)
        return path, "link to /dev/zero"
    if roll < 0.015:
        os.symlink(state.box.sibling / "victim.toml", path)
        return path, "link out"
    if roll < 0.02:
        os.symlink(state.box.sibling / "missing.toml", path)
        return path, "dangling link"
    if roll < 0.03:  # a folder of contracts, one of them this case's, names random
        folder = fuzz / "dir"
        folder.mkdir()
        (folder / "a.toml").write_bytes(rng.choice(state.seeds))
        odd = os.fsencode(folder) + b"/" + bytes(rng.randrange(1, 256) for _ in range(8)) \
            .replace(b"/", b"_") + b".toml"
        with contextlib.suppress(OSError):
            Path(os.fsdecode(odd)).write_bytes(text)
        (folder / "sub.toml").mkdir()
        return folder, "folder"
    if roll < 0.035:
        path.write_bytes(b"#" * ((4 << 20) + 1))
        return path, "over 4 MiB"
    path.write_bytes(text)
    return path, "file"


def _contract_outcome(path: Path) -> tuple[str, Any]:
    """("loaded", contracts) or ("refused", ContractError); anything else raises."""
    from hookguard.contracts import ContractError, load_contracts

    try:
        return "loaded", load_contracts(path)
    except ContractError as exc:
        return "refused", exc


def contracts_case(state: ContractsState, rng: random.Random, case: int, tally: Tally,
                   settings: Settings) -> None:
    try:
        text = random_contract(state, rng)
    except (MemoryError, RecursionError):  # the generator's own limits, not hookguard's
        tally.outcomes["inputs the generator could not build (a seed used)"] += 1
        text = rng.choice(state.seeds)
    path, how = _place_contract(state, rng, case, text)
    tally.outcomes[f"placed as {how}"] += 1

    def reproducer() -> str:
        head = text[:1500]
        return f"{how}, {len(text)} bytes: {head!r}"

    before = state.box.watched()
    run_case(tally, case, settings.timeout, reproducer,
             lambda clock: _contracts_checks(state, clock, case, tally, path, text, reproducer))
    check_outside(tally, case, before, state.box.watched(), reproducer)


def _contracts_checks(state: ContractsState, clock: Clock, case: int, tally: Tally,
                      path: Path, text: bytes, reproducer: Callable[[], str]) -> None:
    from hookguard.contracts import ContractError
    from hookguard.engine import run_rules
    from hookguard.rules.contract_stale import ContractStale, check_contracts

    def run(label: str, step: Callable[[], _T]) -> _T | None:
        return attempt(tally, case, label, reproducer, clock, step)

    outcome = run("load_contracts", lambda: _contract_outcome(path))
    if outcome is None:
        return
    kind, value = outcome
    if kind == "refused":
        assert isinstance(value, ContractError)
        tally.outcomes["refused (ContractError)"] += 1
        message = str(value)
        named = Path(value.path)  # (in a folder of contracts, the file it names)
        refused = named.read_bytes() if named.is_file() and named != path else text
        lines = refused.count(b"\n") + 2
        # (the path is the file's own name, newlines and all: the CLI prints it escaped)
        if "\n" in value.message or "\r" in value.message:
            tally.add("verdict", case, f"the ContractError is not one line: "
                      f"{printable(message)[:300]}", reproducer(),
                      signature="a ContractError of more than one line")
        if not message.startswith(f"{value.path}:{value.line}: ") or not value.message:
            tally.add("verdict", case, f"the ContractError does not start with the file and "
                      f"line: {printable(message)[:300]}", reproducer(),
                      signature="a ContractError without its file and line")
        if not str(value.path).startswith(str(path)) or not 0 <= value.line <= lines:
            tally.add("verdict", case, f"the ContractError names {printable(value.path)}:"
                      f"{value.line}, not a line of {path}: {printable(message)[:300]}",
                      reproducer(), signature="a ContractError naming another place")
        if raw_controls(message):
            tally.outcomes["refusals with raw control characters (the CLI escapes them)"] += 1
    else:
        tally.outcomes["loaded"] += 1
        findings = run("contracts check", lambda: list(check_contracts(
            ContractStale(), state.project, value, strict=True)))
        more = run("audit rules", lambda: run_rules(state.project, state.config, value, None))
        tally.outcomes["findings of loaded contracts"] += len(findings or []) + len(more or [])
    again = run("load_contracts, again", lambda: _contract_outcome(path))
    if again is not None and _same_outcome(outcome) != _same_outcome(again):
        tally.add("verdict", case, "loading the same file twice gave two answers",
                  reproducer())
    if case % 25 == 0:
        _contracts_cli(state, run, case, tally, path, kind, value, reproducer)


def _same_outcome(outcome: tuple[str, Any]) -> tuple[str, str]:
    kind, value = outcome
    return kind, repr(value) if kind == "loaded" else str(value)


def _contracts_cli(state: ContractsState, run: Step, case: int, tally: Tally, path: Path,
                   kind: str, value: Any, reproducer: Callable[[], str]) -> None:
    from hookguard.report.escape import printable as escaped

    ran = run("hookguard contracts check", lambda: run_cli([
        "contracts", "check", "--repo", str(state.box.checkout), str(path), "--format",
        "json"]))
    tally.outcomes["CLI contracts check runs"] += 1
    if ran is None:
        return
    if kind == "refused":  # (the CLI names a linked file by the path it resolves to)
        ending = escaped(f":{value.line}: {value.message}") + "\n"
        if ran.code != 2 or not ran.stderr.startswith("hookguard: error: ") or (
                not ran.stderr.endswith(ending)) or ran.stderr.count("\n") != 1:
            tally.add("verdict", case, f"contracts check exited {ran.code} with "
                      f"{printable(ran.stderr[-300:])}, not 2 with one line ending "
                      f"{printable(ending)[:300]}", reproducer(),
                      signature="contracts check disagrees with load_contracts")
    elif ran.code not in (0, 1):
        tally.add("verdict", case, f"contracts check of a contract that loads exited "
                  f"{ran.code}: {printable(ran.stderr[-300:])}", reproducer(),
                  signature="contracts check exit code")
    elif ran.stdout.startswith("{"):
        try:
            json.loads(ran.stdout)
        except ValueError as exc:
            tally.add("verdict", case, f"contracts check JSON is broken: {exc}", reproducer())
    if raw_controls(ran.stdout + ran.stderr):
        tally.add("unescaped output", case, "contracts check printed raw control characters "
                  f"{raw_controls(ran.stdout + ran.stderr)[:8]}", reproducer(),
                  signature="contracts check output")


# ------------------------------------------------------------------------------------------
# Target 3: cache files
# ------------------------------------------------------------------------------------------
CACHE_BASE = (
    "class Base:\n"
    "    def run(self):\n"
    "        self.setup(1, flag=True)\n"
    "        self.finish()\n"
    "\n"
    "    def setup(self, x, flag=False):\n"
    "        self.ready = True\n"
    "\n"
    "    def finish(self):\n"
    "        pass\n"
)
CACHE_CONTRACT = ('[[hook]]\nclass = "pkg.base.Base"\nmethod = "prepare"\n'
                  'renamed_from = ["setup"]\n\n[hook.fields.ready]\ntype = "bool"\n')
BYPASS = ("from pkg.base import Base\n\n\nclass Bypass(Base):\n    def prepare(self, x, "
          "flag=False):\n        self.other = 1\n")


@dataclass
class CacheState:
    box: Sandbox
    folder: Path  # the checkout's .hookguard_cache
    pristine: Path  # the cache of the last audit, as it was written
    other_run: Path  # the cache of a run one commit earlier
    foreign: Path  # the cache signed with another key
    outside: Path  # a copy of the pristine cache beside the checkout (links point there)
    truth: list[str]
    gate_truth: list[str]
    stamp: str
    key: bytes
    digest: str


def cache_setup(box: Sandbox) -> CacheState:
    from hookguard.engine import Options, Workspace, audit
    from hookguard.gate import run_gate
    from hookguard.model.cache import CACHE_DIR_NAME, RecordCache

    root = box.checkout
    git(root, "init", "-q", "-b", "main")
    files = {"pkg/__init__.py": "", "pkg/base.py": CACHE_BASE, "pkg/sub.py": SUB,
             "contracts/c.toml": CACHE_CONTRACT}
    for i in range(24):  # records in every shard
        files[f"pkg/m{i}.py"] = (f"from pkg.base import Base\n\n\nclass M{i}(Base):\n"
                                 f"    def finish(self):\n        super().finish()\n")
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    renamed = CACHE_BASE.replace("setup", "prepare")
    (root / "pkg/base.py").write_text(renamed)
    (root / "pkg/good.py").write_text(GOOD)
    (root / "pkg/bypass.py").write_text(BYPASS)
    # (a name that is not UTF-8 keeps the index from being written at all: see the report)
    (root / "pkg/caf\u00e9 \x1b\u202e.py").write_text(GOOD.replace("Good", "Cafe"))
    (root / "pkg/broken.py").write_text("def broken(:\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "rename the hook")
    folder = root / CACHE_DIR_NAME
    for _ in range(2):
        audit([root], Options(use_cache=True, workers=1))
    other_run = box.out / "other-run"
    shutil.copytree(folder, other_run)
    (root / "pkg/late.py").write_text(GOOD.replace("Good", "Late"))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a late drift")
    for _ in range(2):
        audit([root], Options(use_cache=True, workers=1))
    run_gate(root, "HEAD~1", "HEAD", False, Options(use_cache=True, workers=1))
    audit([root], Options(use_cache=True, workers=1))
    pristine = box.out / "pristine"
    shutil.copytree(folder, pristine)
    for made in (pristine, other_run):
        assert len(list(made.glob("index-*.msgpack"))) == 1, f"no index in {made}"
    outside = box.sibling / "cache" / "copy"
    shutil.copytree(folder, outside)
    foreign = box.out / "foreign"
    shutil.move(str(folder), str(box.out / "moved"))
    previous = _set_env({"HOOKGUARD_CACHE_KEY": "another key"})
    try:
        audit([root], Options(use_cache=True, workers=1))
    finally:
        _set_env(previous)
    shutil.move(str(folder), str(foreign))
    shutil.move(str(box.out / "moved"), str(folder))
    cold = audit([root], Options(use_cache=False, workers=1))
    truth = verdict(cold)
    found = located(cold)
    assert {("pkg/sub.py", 5, "HG001"), ("pkg/late.py", 5, "HG002")} <= found, found
    gate_truth = verdict(run_gate(root, "HEAD~1", "HEAD", False,
                                  Options(use_cache=False, workers=1)))
    assert gate_truth, "check --base HEAD~1 finds the late drift"
    digest = Workspace.open(root).config.digest()
    probe = RecordCache(folder, digest, root)
    key = probe._key
    assert probe.enabled and key
    return CacheState(box, folder, pristine, other_run, foreign, outside, truth, gate_truth,
                      probe.stamp, key, digest)


def _split(blob: bytes) -> tuple[bytes, bytes, bytes] | None:
    """A cache file's version line with the header length, header and body (None: not one)."""
    start = blob.find(b"\n") + 1
    if start <= 0 or len(blob) < start + 4:
        return None
    at = start + 4 + int.from_bytes(blob[start:start + 4], "big")
    if at > len(blob):
        return None
    return blob[:start + 4], blob[start + 4:at], blob[at:]


def _signed(state: CacheState, body: bytes, stamp: str | None = None,
            size: int | None = None) -> bytes:
    """``body`` behind a header that verifies with this machine's key."""
    import hmac

    import msgspec

    stamp = state.stamp if stamp is None else stamp
    mac = hmac.new(state.key, stamp.encode("utf-8", "surrogateescape") + b"\0",
                   hashlib.sha256)
    mac.update(body)
    header = msgspec.msgpack.encode([stamp, mac.digest(), len(body) if size is None else size])
    return b"HOOKGUARD-CACHE-3 msgpack\n" + len(header).to_bytes(4, "big") + header + body


def _random_msgpack(rng: random.Random, depth: int = 0) -> Any:
    pick = rng.random()
    if depth > 4 or pick < 0.3:
        return rng.choice([None, True, 0, -1, 2**64 - 1, -(2**63), 1.5, "", "x" * 40,
                           "pkg/base.py", "HG001", b"\x00\xff", 7, "0" * 40])
    if pick < 0.6:
        return [_random_msgpack(rng, depth + 1) for _ in range(rng.randint(0, 6))]
    if pick < 0.8:
        return {str(_random_msgpack(rng, depth + 1)): _random_msgpack(rng, depth + 1)
                for _ in range(rng.randint(0, 4))}
    if pick < 0.9:
        return [[_random_msgpack(rng, depth + 1) for _ in range(4)] for _ in range(3)]
    return ["0" * 40, "pkg/base.py", "pkg.base", [_random_msgpack(rng, depth + 1)
                                                  for _ in range(rng.randint(0, 12))]]


def _cache_files(folder: Path) -> list[Path]:
    """The cache files of ``folder`` that are regular files (an earlier change of the same
    case may have put a link, a FIFO or a folder in place of one: never opened here)."""
    with contextlib.suppress(OSError):
        return sorted(p for p in folder.iterdir()
                      if p.suffix == ".msgpack" and stat.S_ISREG(p.lstat().st_mode))
    return []


def _clear(path: Path) -> None:
    if path.is_symlink() or (os.path.lexists(path) and not path.is_dir()):
        path.unlink()
    elif path.is_dir():
        _remove_tree(path)


def _mutate_cache(state: CacheState, rng: random.Random,
                  signed_flips: bool = True) -> tuple[list[str], bool]:
    """Change the cache folder; the changes made, and whether one of them is a body signed
    again with the cache's own key (trusted by design: verdict not compared)."""
    folder = state.folder
    files = _cache_files(folder)
    labels: list[str] = []
    trusted = False
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        files = _cache_files(folder) if folder.is_dir() and not folder.is_symlink() else []
        if not files:
            labels.append("(no file left)")
            break
        file = rng.choice(files)
        other = rng.choice(files)
        blob = file.read_bytes() if file.is_file() and not file.is_symlink() else b""
        parts = _split(blob)
        kind = rng.choice([m for m in CACHE_MUTATIONS
                           if signed_flips or m != "flipped body, signed"])
        labels.append(f"{kind} {file.name}")
        if kind == "flip bits":
            data = bytearray(blob)
            for _ in range(rng.randint(1, 8)):
                if data:
                    data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
            file.write_bytes(bytes(data))
        elif kind == "truncate":
            file.write_bytes(blob[:rng.randint(0, max(len(blob) - 1, 0))])
        elif kind == "append garbage":
            file.write_bytes(blob + bytes(rng.randrange(256) for _ in range(rng.randint(1, 99))))
        elif kind == "splice":
            theirs = other.read_bytes() if other.is_file() and not other.is_symlink() else b""
            file.write_bytes(blob[:rng.randint(0, len(blob))]
                             + theirs[rng.randint(0, len(theirs)):])
        elif kind == "swap shards":
            if file != other and other.exists():
                tmp = folder / "swap.tmp"
                file.rename(tmp)
                other.rename(file)
                tmp.rename(other)
        elif kind == "copy over":
            if file != other:
                shutil.copyfile(other, file, follow_symlinks=False)
        elif kind == "from another run":
            source = state.other_run / rng.choice([p.name for p in _cache_files(state.other_run)])
            _clear(folder / source.name)
            shutil.copyfile(source, folder / source.name)
        elif kind == "index from another run":
            index = next(state.other_run.glob("index-*.msgpack"))
            _clear(folder / index.name)
            shutil.copyfile(index, folder / index.name)
        elif kind == "from another key":
            names = [p.name for p in _cache_files(state.foreign)]
            if names:
                shutil.copyfile(state.foreign / rng.choice(names), file)
        elif kind == "random body, header unsigned":
            import msgspec

            body = msgspec.msgpack.encode(_random_msgpack(rng))
            signed = _signed(state, body)
            mac_at = signed.find(b"\xc4\x20")  # (bin 8 of 32 bytes: the MAC)
            data = bytearray(signed)
            if mac_at > 0:
                data[mac_at + 2] ^= 0xFF
            file.write_bytes(bytes(data))
        elif kind == "random body, signed":
            import msgspec

            file.write_bytes(_signed(state, msgspec.msgpack.encode(_random_msgpack(rng))))
        elif kind == "body of another file, signed":
            split = _split(other.read_bytes()) if other.is_file() else None
            if split is not None:
                file.write_bytes(_signed(state, split[2]))
        elif kind == "truncated body, signed":
            if parts is not None:
                file.write_bytes(_signed(state, parts[2][:rng.randint(0, len(parts[2]))]))
        elif kind == "header lies":
            if parts is not None:
                lie = rng.choice(["length", "size", "stamp", "mac"])
                labels[-1] += f" ({lie})"
                if lie == "length":
                    head = parts[0][:-4] + rng.choice([b"\xff\xff\xff\xff", b"\x00\x00\x00\x00",
                                                       b"\x00\x00\x00\x01"])
                    file.write_bytes(head + parts[1] + parts[2])
                elif lie == "size":
                    file.write_bytes(_signed(state, parts[2], size=rng.choice(
                        [-1, 0, 2**63 - 1, len(parts[2]) + 1])))
                elif lie == "stamp":
                    file.write_bytes(_signed(state, parts[2], stamp=rng.choice(
                        ["", "0.0.0:000000000000:x", state.stamp + "\x00", "\u202e"])))
                else:
                    import msgspec

                    header = msgspec.msgpack.encode(
                        [state.stamp, rng.choice([b"", b"\x00" * 1000, "text"]),
                         len(parts[2])])
                    file.write_bytes(parts[0][:-4] + len(header).to_bytes(4, "big") + header
                                     + parts[2])
        elif kind == "flipped body, signed":
            if parts is not None and parts[2]:
                flipped = bytearray(parts[2])
                for _ in range(rng.randint(1, 4)):
                    flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
                file.write_bytes(_signed(state, bytes(flipped)))
                trusted = True
        elif kind == "link out":
            _clear(file)
            target = rng.choice([state.outside / file.name, state.box.sibling / "notes.txt",
                                 Path("/dev/zero"), state.box.sibling / "missing",
                                 state.box.sibling / "cache"])
            os.symlink(target, file)
        elif kind == "hard link out":
            _clear(file)
            source = state.outside / file.name
            if source.exists():
                os.link(source, file)
        elif kind == "fifo":
            _clear(file)
            os.mkfifo(file)
        elif kind == "folder":
            _clear(file)
            file.mkdir()
            (file / "x").write_bytes(b"x")
        elif kind == "delete":
            _clear(file)
        elif kind == "empty":
            file.write_bytes(b"")
        elif kind == "tag and ignore files are links out":
            for name in ("CACHEDIR.TAG", ".gitignore"):
                _clear(folder / name)
                os.symlink(state.box.sibling / "notes.txt", folder / name)
        elif kind == "stray files":
            for stray in ("old.pickle", "other.pickle", ".index-x.tmp"):
                _clear(folder / stray)
            os.symlink(state.box.sibling / "notes.txt", folder / "old.pickle")
            (folder / "other.pickle").mkdir()
            (folder / ".index-x.tmp").write_bytes(b"half")
        elif kind == "folder is a link":
            _clear(folder)
            os.symlink(rng.choice([state.outside, Path("."), state.box.checkout / "pkg",
                                   state.box.sibling / "cache"]), folder)
            break
        elif kind == "folder is a file":
            _clear(folder)
            folder.write_bytes(blob)
            break
        elif kind == "unreadable":
            file.chmod(0)
    return labels, trusted


CACHE_MUTATIONS = (
    "flip bits", "flip bits", "truncate", "truncate", "append garbage", "splice", "splice",
    "swap shards", "copy over", "from another run", "index from another run",
    "from another key", "random body, header unsigned", "random body, signed",
    "random body, signed", "body of another file, signed", "truncated body, signed",
    "header lies", "header lies", "flipped body, signed", "flipped body, signed", "link out",
    "hard link out", "fifo", "folder", "delete", "empty", "tag and ignore files are links out",
    "stray files", "folder is a link", "folder is a file", "unreadable",
)


def _restore_cache(state: CacheState, rng: random.Random) -> str:
    _clear(state.folder)
    roll = rng.random()
    source, label = state.pristine, "pristine"
    if roll < 0.1:
        source, label = state.other_run, "another run's"
    elif roll < 0.15:
        source, label = state.foreign, "another key's"
    if roll > 0.97:
        state.folder.mkdir()
        return "empty"
    shutil.copytree(source, state.folder, symlinks=True)
    return label


def cache_case(state: CacheState, rng: random.Random, case: int, tally: Tally,
               settings: Settings) -> None:
    try:
        with deadline(settings.timeout):  # (the driver's own steps: never a hang of its own)
            origin = _restore_cache(state, rng)
            labels, trusted = _mutate_cache(state, rng, settings.signed_flips)
    except CaseTimeout:
        tally.outcomes["cases the driver could not prepare (timed out)"] += 1
        return
    for label in labels:
        tally.outcomes[label.split(" ", 1)[0] if label.startswith("(") else
                       " ".join(w for w in label.split() if ".msgpack" not in w)] += 1
    if trusted:
        tally.outcomes["cases with a body signed again (verdict not compared)"] += 1

    def reproducer() -> str:
        return f"from the {origin} cache: " + "; ".join(labels)

    skip = {state.folder}
    before = Snapshot.of([state.box.top], skip={state.box.out, *skip})
    crashes = tally.counts["crash"]
    run_case(tally, case, settings.timeout, reproducer,
             lambda clock: _cache_checks(state, clock, case, tally, trusted, reproducer))
    if trusted and tally.counts["crash"] != crashes:
        tally.outcomes["crashes on a body signed again with the cache's key"] += 1
    check_outside(tally, case, before, Snapshot.of([state.box.top],
                                                   skip={state.box.out, *skip}), reproducer)


def _audit_verdict(root: Path, options: Any) -> list[str]:
    from hookguard.engine import audit

    return verdict(audit([root], options))


def _cache_checks(state: CacheState, clock: Clock, case: int, tally: Tally, trusted: bool,
                  reproducer: Callable[[], str]) -> None:
    from hookguard.engine import Options
    from hookguard.gate import run_gate
    from hookguard.model.cache import RecordCache

    root = state.box.checkout

    def run(label: str, step: Callable[[], _T]) -> _T | None:
        return attempt(tally, case, label, reproducer, clock, step)

    def probe() -> list[str]:  # the cache read straight: every file decoded, nothing written
        cache = RecordCache(state.folder, state.digest, root)
        cache.get(("0" * 40, "pkg/base.py", "pkg.base"))
        cache.get_state()
        cache.get_result("0" * 64)
        cache.get_history("lost:")
        cache.stat_key("pkg/base.py", os.stat(root / "pkg/base.py"))
        return cache.warnings

    if run("RecordCache", probe):
        tally.outcomes["cases the cache noted a problem"] += 1
    runs: list[tuple[str, Callable[[], list[str]], list[str]]] = []
    if case % 10 == 0:
        runs.append(("check --base HEAD~1", lambda: verdict(run_gate(
            root, "HEAD~1", "HEAD", False, Options(use_cache=True, workers=1))),
            state.gate_truth))
    audits = [("audit", Options(use_cache=True, workers=1)),
              ("audit (last result not reused)", Options(use_cache=True, workers=1,
                                                         reuse_results=False))]
    random.Random(case).shuffle(audits)
    for name, options in audits:
        runs.append((name, functools.partial(_audit_verdict, root, options), state.truth))
    for name, step, truth in runs:
        got = run(name, step)
        if got is None:
            continue
        if got != truth and not trusted:
            tally.add("verdict", case, f"{name} with the cache differs from --no-cache: "
                      + difference(truth, got), reproducer(),
                      signature=f"{name} differs from --no-cache")
        elif got != truth:
            tally.outcomes["trusted bodies that changed a verdict (by design)"] += 1


@dataclass
class Settings:
    cases: int = DEFAULT_CASES  # per target
    seed: int = 0
    timeout: float = 20.0  # seconds before a case is a hang
    first: int = 1  # the first case's number (each case's input depends on seed and number)
    keep: Path | None = None  # make the sandboxes here and keep them
    separators: bool = True  # names: commit messages may hold 0x1e/0x1f (see _random_message)
    signed_flips: bool = True  # cache: bodies changed and signed again with the key
    every: int = 0  # print progress every so many cases (0: never)


def fuzz(target: str, settings: Settings) -> Tally:
    """Run ``settings.cases`` cases of ``target`` in a new sandbox."""
    setups: dict[str, Callable[[Sandbox], Any]] = {
        "names": names_setup, "contracts": contracts_setup, "cache": cache_setup}
    cases: dict[str, Callable[[Any, random.Random, int, Tally, Settings], None]] = {
        "names": names_case, "contracts": contracts_case, "cache": cache_case}
    tally = Tally(target, rss_start_mib=peak_rss_mib())
    started = time.perf_counter()
    with sandbox(target, settings.keep) as box:
        state = setups[target](box)
        try:
            for case in range(settings.first, settings.first + settings.cases):
                cases[target](state, random.Random(f"{target}-{settings.seed}-{case}"), case,
                              tally, settings)
                if settings.every and tally.cases % settings.every == 0:
                    counts = ", ".join(f"{k}: {tally.counts[k]}" for k in PROBLEM_KINDS)
                    print(f"  {target}: {tally.cases} cases, "
                          f"{time.perf_counter() - started:.0f} s; {counts}", flush=True)
        except KeyboardInterrupt:  # (SIGTERM too, see main): the figures so far
            tally.interrupted = True
        if target == "cache":
            _clear(state.folder)
    tally.seconds = time.perf_counter() - started
    tally.rss_peak_mib = peak_rss_mib()
    return tally


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", choices=(*TARGETS, "all"), default="all")
    parser.add_argument("--cases", type=int, default=DEFAULT_CASES, help="cases per target")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--first", type=int, default=1,
                        help="number of the first case (--first N --cases 1 replays case N)")
    parser.add_argument("--timeout", type=float, default=20.0,
                        help="seconds a case may take before it counts as a hang")
    parser.add_argument("--memory-limit-mib", type=int, default=6144,
                        help="address-space limit of this process (a memory bomb is then a "
                             "MemoryError, a crash, not the machine's)")
    parser.add_argument("--no-separators", action="store_true",
                        help="names: no 0x1e/0x1f in commit messages")
    parser.add_argument("--no-signed-flips", action="store_true",
                        help="cache: no bodies changed and signed again with the cache's key")
    parser.add_argument("--every", type=int, default=500, help="progress every N cases")
    parser.add_argument("--json", type=Path, help="write the figures there")
    parser.add_argument("--keep", type=Path,
                        help="make the sandboxes under this folder and keep them")
    args = parser.parse_args(argv)
    if args.memory_limit_mib:
        limit = args.memory_limit_mib << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
    settings = Settings(cases=args.cases, seed=args.seed, timeout=args.timeout,
                        first=args.first, keep=args.keep, separators=not args.no_separators,
                        signed_flips=not args.no_signed_flips, every=args.every)
    import hookguard
    from hookguard.model.cache import build_digest

    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, check=False,
                          capture_output=True, text=True).stdout.strip()
    print(f"hookguard {hookguard.__version__}, build {build_digest()}, from "
          f"{Path(hookguard.__file__).parent} (the driver's checkout is at {head or '?'}); seed "
          f"{args.seed}; {args.cases} cases per target from "
          f"case {args.first}; timeout {args.timeout} s; command: "
          f"{' '.join([Path(sys.argv[0]).name, *(argv if argv is not None else sys.argv[1:])])}",
          flush=True)
    def stop(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)  # (a run in the background stops with its figures)
    results = []
    for target in TARGETS if args.target == "all" else (args.target,):
        tally = fuzz(target, settings)
        print(tally.report() + ("\n  (interrupted)" if tally.interrupted else ""), flush=True)
        results.append(tally)
        if args.json:
            args.json.write_text(json.dumps([t.summary() for t in results], indent=2) + "\n")
        if tally.interrupted:
            return 130
    return 0 if all(t.clean() for t in results) else 1


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError):
        sys.exit(main())
    sys.exit(errno.EPIPE)
