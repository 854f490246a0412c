"""hookguard's benchmark: synthetic checkouts (and optionally real ones) against its peers.

    python benchmarks/run.py [--quick] [--sizes 500,5000,20000] [--real PATH ...] [--reps N]
                             [--clone REPO[:PACKAGE] ...] [--clone-reps N]
                             [--peers mypy,pylint,pyright] [--workdir DIR] [--json FILE]

For each checkout it runs the real command lines in subprocesses and measures wall time (median
and min-max over the repetitions) and peak RSS (``ru_maxrss`` of the process tree, from
``wait4``: the largest single process, hookguard's parser workers included, not their sum):

* ``audit`` cold (cache folder deleted first), warm with nothing changed, warm after editing one
  base-class file (a method added to the root base) and, on synthetic checkouts, warm after a
  root hook's signature changed (the edit that re-checks the most classes);
* ``check --staged`` with one staged file (the pre-commit hook) and ``check --base HEAD~1`` on a
  one-file diff (reported as n/a while those commands do not exist);
* the peers on the same package in the same run: mypy (defaults, ``--ignore-missing-imports``,
  a fresh cache folder per run), pylint ``--disable=all --enable=W0221,W0222 -j 2``, pyright
  (when installed; one repetition: it is slow).

``--clone PATH[:PACKAGE]`` takes a full-history git repository (``/tmp/corpus/sympy+sympy``) and
times what CI pays on every pull request: a fresh clone with no cache. Cold ``audit`` (history
evidence on, and ``--no-history`` for reference), cold ``check --base HEAD~1`` and ``HEAD~50``,
then ``audit`` and ``check --base HEAD~1`` in another fresh clone, at another path and under
another ``HOME``, with the first clone's cache copied in (what ``actions/cache`` restores); mypy
on PACKAGE (default: the directory named like the repository) in the same run, for the ratios.
``--clone-reps`` repetitions (default 1). mypy takes turns with the two scenarios the goals
compare to it (mypy, cold audit, cold ``check --base HEAD~50``, then again): each goal's ratio
is the median of the ratios of runs taken side by side, which a shared machine's slow spells
(they last minutes) bias far less than medians taken minutes apart. A ratio is a verdict only
where mypy checked nine in ten or more of the files hookguard reads (it says how many it
checked); elsewhere, pylint's checkout for one (180 of 2,416), it is shown for reference.

``--real PATH`` takes a package directory (e.g. ``~/src/sympy/sympy``). The package is copied
into a fresh git repository under the work folder (so hookguard and the peers see exactly the
same files, and ``check --base HEAD~1`` has a one-file diff to check); one extra row times a
cold ``audit`` of the package in its original checkout, with its full git history.

The markdown report goes to stdout, progress to stderr. Install the peers with
``.venv/bin/pip install pylint pyright`` (mypy comes with the ``test`` extra).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import synth  # noqa: E402

BIN = Path(sys.executable).parent
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com",
       "-c", "commit.gpgsign=false"]
CACHE_DIR = ".hookguard_cache"
PEER_SLOW_S = 60.0  # a peer run slower than this is not repeated
PEER_SKIP_S = 300.0  # skip a peer on a checkout where it is projected to take longer
SLOW_S = 60.0  # a hookguard scenario whose first run is slower than this is not repeated
LARGE = 20000  # checkouts this large get --reps-large repetitions


# -- measuring ----------------------------------------------------------------------------------
@dataclass
class Sample:
    wall: float
    cpu: float  # user + system seconds of the process tree
    rss_mib: float
    rc: int
    stdout: str = ""
    stderr: str = ""


def measure(cmd: Sequence[str], cwd: Path, timeout: float = 600.0,
            env: dict[str, str] | None = None) -> Sample:
    """Run ``cmd``; wall time and peak RSS (MiB, largest process of its tree) from ``wait4``."""
    env = dict(os.environ if env is None else env, NO_COLOR="1", PYTHONDONTWRITEBYTECODE="1")
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(list(cmd), cwd=cwd, stdout=out, stderr=err, env=env)
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        finally:
            timer.cancel()
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Sample(
            wall=wall,
            cpu=usage.ru_utime + usage.ru_stime,
            rss_mib=usage.ru_maxrss / 1024,  # KiB on Linux
            rc=proc.returncode,
            stdout=out.read().decode("utf-8", "replace"),
            stderr=err.read().decode("utf-8", "replace"),
        )


@dataclass
class Row:
    checkout: str
    scenario: str
    files: int
    samples: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    rss_mib: float = 0.0
    note: str = ""
    kind: str = "hookguard"  # or the peer's name
    paired: bool = False  # run n was taken right after mypy's run n (see run_clone)
    checked: int | None = None  # a peer: the source files it said it checked (mypy)

    @property
    def median(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None

    def add(self, sample: Sample) -> None:
        self.samples.append(sample.wall)
        self.cpu.append(sample.cpu)
        self.rss_mib = max(self.rss_mib, sample.rss_mib)


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# -- checkouts ----------------------------------------------------------------------------------
@dataclass
class Checkout:
    label: str
    repo: Path  # git root
    package: str  # package directory, relative to repo (what the peers check)
    target: str  # what ``hookguard audit`` is given, relative to repo
    files: int
    base_file: str  # a heavily subclassed base-class module (the one-base-edit scenario)
    leaf_file: str  # a leaf module (the pre-commit scenario)
    base_edit_is_method: bool  # synthetic: append a method to the base file's last class
    original: Path | None = None  # real checkouts: the package in its original repository


def _git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run([*GIT, *args], cwd=repo, check=True, env=env, text=True,
                          stdout=subprocess.PIPE).stdout


def synthetic(workdir: Path, files: int, seed: int) -> Checkout:
    dest = workdir / f"synth-{files}"
    stamp = workdir / f"synth-{files}.stamp"
    want = f"{synth.GENERATOR_VERSION}:{files}:{seed}:{Path(synth.__file__).stat().st_size}"
    if dest.is_dir() and stamp.is_file() and stamp.read_text() == want:
        log(f"reusing {dest}")
        _git(dest, "reset", "-q", "--hard", "HEAD")
        _git(dest, "clean", "-qfdx")
    else:
        log(f"generating {files} files in {dest}")
        started = time.perf_counter()
        synth.generate(dest, files, seed)
        stamp.write_text(want)
        log(f"generated in {time.perf_counter() - started:.1f}s")
    leaf = sorted(p for p in _git(dest, "ls-files", "synth").split() if "/core/" not in p
                  and p.endswith(".py") and not p.endswith("__init__.py"))[-1]
    return Checkout(f"synthetic {files}", dest, "synth", ".", _count(dest),
                    synth.PLANTED_BASE_PATH, leaf, True)


def _count(repo: Path) -> int:
    return sum(1 for p in _git(repo, "ls-files").split() if p.endswith(".py"))


_CLASS = re.compile(r"^class\s+(\w+)\s*\(([^)]*)\)", re.M)


def real(workdir: Path, path: Path) -> Checkout:
    path = path.resolve()
    name = path.name
    dest = workdir / f"real-{name}"
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    log(f"copying {path} to {dest}")
    shutil.copytree(path, dest / name,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".hookguard_cache"))
    (dest / ".gitignore").write_text(".hookguard_cache/\n.mypy_cache/\n__pycache__/\n")
    env = dict(os.environ, GIT_AUTHOR_DATE="2026-01-01T00:00:00+00:00",
               GIT_COMMITTER_DATE="2026-01-01T00:00:00+00:00")
    _git(dest, "init", "-q", "-b", "main")
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "-m", f"Copy of {name}", env=env)
    # The most subclassed class's module is the "base file"; a module nobody imports is the leaf.
    sources = sorted(p.relative_to(dest).as_posix() for p in (dest / name).rglob("*.py"))
    defined: dict[str, str] = {}
    uses: dict[str, int] = {}
    for rel in sources:
        text = (dest / rel).read_text("utf-8", "replace")
        for match in _CLASS.finditer(text):
            defined.setdefault(match.group(1), rel)
            for base in match.group(2).split(","):
                base = base.strip().rsplit(".", 1)[-1]
                if base.isidentifier():
                    uses[base] = uses.get(base, 0) + 1
    ranked = sorted((n for n in uses if n in defined), key=lambda n: -uses[n])
    base_file = defined[ranked[0]] if ranked else sources[0]
    leaf_file = next((s for s in reversed(sources) if not s.endswith("__init__.py")
                      and "/tests/" not in s and s != base_file), sources[-1])
    # A second commit with a one-file change, so ``check --base HEAD~1`` has a diff to check.
    second = next(s for s in sources if s not in (base_file, leaf_file)
                  and not s.endswith("__init__.py"))
    with open(dest / second, "a", encoding="utf-8") as handle:
        handle.write("\n\ndef _hookguard_bench_second_commit():\n    return None\n")
    env.update(GIT_AUTHOR_DATE="2026-01-02T00:00:00+00:00",
               GIT_COMMITTER_DATE="2026-01-02T00:00:00+00:00")
    _git(dest, "commit", "-q", "-am", "One-file change", env=env)
    log(f"{name}: base file {base_file} ({ranked[0] if ranked else '?'}), leaf {leaf_file}")
    return Checkout(f"{name} (real)", dest, name, name, _count(dest), base_file, leaf_file,
                    False, original=path)


# -- scenarios ----------------------------------------------------------------------------------
def hookguard_cmd(*args: str) -> list[str]:
    exe = BIN / "hookguard"
    return [str(exe), *args] if exe.exists() else [sys.executable, "-m", "hookguard.cli", *args]


def audit_cmd(target: str) -> list[str]:
    return hookguard_cmd("audit", target, "--format", "json", "--exit-zero")


def _ok(row: Row, sample: Sample) -> bool:
    """Record ``sample`` in ``row`` if the command succeeded; otherwise note the failure."""
    if sample.rc != 0:
        tail = sample.stderr.strip().splitlines()[-1:] or [""]
        row.note = f"failed: exit {sample.rc}: {tail[0][:160]}"
        log(f"{row.checkout}: {row.scenario}: {row.note}")
        return False
    row.add(sample)
    return True


def _drop_cache(co: Checkout) -> None:
    shutil.rmtree(co.repo / CACHE_DIR, ignore_errors=True)


def _append(co: Checkout, rel: str, text: str) -> None:
    with open(co.repo / rel, "a", encoding="utf-8") as handle:
        handle.write(text)


def _restore(co: Checkout, rel: str) -> None:
    _git(co.repo, "reset", "-q", "HEAD", "--", rel)
    _git(co.repo, "checkout", "-q", "--", rel)


def _enough(row: Row, reps: int) -> bool:
    """Stop repeating a scenario after ``reps`` runs, or after one run slower than SLOW_S."""
    if len(row.samples) >= reps:
        return True
    if row.samples and row.samples[0] > SLOW_S:
        row.note = row.note or f"1 run: over {SLOW_S:.0f}s"
        return True
    return False


def _unavailable(sample: Sample) -> str | None:
    if sample.rc == 2:
        first = (sample.stderr.strip().splitlines() or ["usage error"])[-1]
        if "invalid choice" in sample.stderr or "unrecognized arguments" in sample.stderr:
            return "n/a (not available)"
        return f"n/a (exit 2: {first[:120]})"
    return None


def _edited_audits(co: Checkout, reps: int, scenario: str, edit: Callable[[int], None]) -> Row:
    """Warm audits, each after ``edit(i)`` of the base file; the file is restored after."""
    row = Row(co.label, scenario, co.files)
    for i in range(reps):
        if _enough(row, reps):
            break
        edit(i)
        if not _ok(row, measure(audit_cmd(co.target), co.repo)):
            break
    _restore(co, co.base_file)
    measure(audit_cmd(co.target), co.repo)
    log(f"{co.label}: {scenario}: {_fmt(row.median)}s")
    return row


def run_hookguard(co: Checkout, reps: int, rows: list[Row], notes: list[str]) -> None:
    label, n = co.label, co.files

    row = Row(label, "audit, cold", n)
    for i in range(reps):
        if _enough(row, reps):
            break
        _drop_cache(co)
        sample = measure(audit_cmd(co.target), co.repo)
        if not _ok(row, sample):
            break
        log(f"{label}: cold audit {i + 1}/{reps}: {sample.wall:.2f}s {sample.rss_mib:.0f} MiB")
        if i == 0:
            try:
                found = json.loads(sample.stdout).get("findings", [])
            except ValueError:
                found = []
            if co.base_edit_is_method:
                planted = any(synth.PLANTED_CLASS in f.get("symbol", "") for f in found)
                notes.append(f"{label}: planted rename reported: "
                             f"{'yes' if planted else 'NO'} ({len(found)} finding(s))")
            else:
                notes.append(f"{label}: {len(found)} finding(s)")
    rows.append(row)

    measure(audit_cmd(co.target), co.repo)  # settle the cache after the last cold run
    row = Row(label, "audit, warm, nothing changed", n)
    for _ in range(reps):
        if _enough(row, reps):
            break
        if not _ok(row, measure(audit_cmd(co.target), co.repo)):
            break
    log(f"{label}: warm audit {_fmt(row.median)}s")
    rows.append(row)

    def add_hook(i: int) -> None:  # the file ends inside its last class: add a hook to it
        _append(co, co.base_file, f"\n    def _bench_hook_{i}(self, value=None):\n"
                                  "        return value\n")

    def add_function(i: int) -> None:
        _append(co, co.base_file, f"\n\ndef _bench_edit_{i}():\n    return {i}\n")

    rows.append(_edited_audits(co, reps, "audit, warm, 1 base file edited",
                               add_hook if co.base_edit_is_method else add_function))
    if co.base_edit_is_method:
        # A semantic edit: a hook of the root base that the template method calls gains a
        # parameter. Every subclass overriding a hook of that template is re-checked.
        hook = re.compile(rf"(def {synth.PLANTED_NEW}\(self[^)]*)\)")

        def widen_hook(i: int) -> None:
            path = co.repo / co.base_file
            path.write_text(hook.sub(rf"\1, extra_{i}=None)", path.read_text(), count=1))

        rows.append(_edited_audits(co, reps, "audit, warm, root hook signature changed",
                                   widen_hook))

    row = Row(label, "pre-commit: check --staged, 1 staged file", n)
    for i in range(reps):
        if _enough(row, reps):
            break
        _append(co, co.leaf_file, f"\n\ndef _bench_staged_{i}():\n    return {i}\n")
        _git(co.repo, "add", "--", co.leaf_file)
        sample = measure(hookguard_cmd("check", "--staged", "--format", "json", "--exit-zero"),
                         co.repo)
        _restore(co, co.leaf_file)
        missing = _unavailable(sample)
        if missing:
            row.note = missing
            break
        if not _ok(row, sample):
            break
    log(f"{label}: check --staged {row.note or f'{row.median:.2f}s'}")
    rows.append(row)

    row = Row(label, "check --base HEAD~1, 1-file diff", n)
    for _ in range(reps):
        if _enough(row, reps):
            break
        sample = measure(
            hookguard_cmd("check", "--base", "HEAD~1", "--format", "json", "--exit-zero"),
            co.repo)
        missing = _unavailable(sample)
        if missing:
            row.note = missing
            break
        if not _ok(row, sample):
            break
    log(f"{label}: check --base {row.note or f'{row.median:.2f}s'}")
    rows.append(row)

    if co.original is not None:
        row = Row(label, "audit, cold, in the original checkout (full history)", n)
        root = Path(_git(co.original, "rev-parse", "--show-toplevel").strip())
        cache = root / CACHE_DIR
        existed = cache.exists()
        sample = measure(hookguard_cmd("audit", str(co.original), "--format", "json",
                                       "--exit-zero", "--no-cache"), root)
        if sample.rc == 0:
            row.add(sample)
            row.note = f"--no-cache, 1 run, models all of {root.name}/"
        else:
            row.note = f"failed: exit {sample.rc}"
        if not existed:
            shutil.rmtree(cache, ignore_errors=True)
        rows.append(row)


# -- full clones with their history (issue 12) ---------------------------------------------------
@dataclass
class Clone:
    label: str
    source: Path  # a full-history repository, never modified
    package: str  # what mypy checks, relative to the clone
    repo: Path  # the fresh clone the cold runs use
    files: int


def _package_of(root: Path, spec: str | None) -> str:
    """The clone's package: given, or the directory named like the repository (``src/`` too)."""
    if spec:
        return spec
    name = root.name.rsplit("+", 1)[-1].replace("-", "_").lower()
    for candidate in (name, f"src/{name}", name.split("_")[-1], f"src/{name.split('_')[-1]}"):
        if (root / candidate / "__init__.py").is_file():
            return candidate
    raise SystemExit(f"--clone {root}: no package named {name}; give it as PATH:PACKAGE")


def clone(workdir: Path, spec: str) -> Clone:
    path_text, _, package = spec.partition(":")
    source = Path(path_text).resolve()
    dest = workdir / f"clone-{source.name}"
    shutil.rmtree(dest, ignore_errors=True)
    log(f"cloning {source} to {dest}")
    _git(workdir, "clone", "-q", "--no-hardlinks", str(source), str(dest))
    commits = _git(dest, "rev-list", "--count", "HEAD").strip()
    package = _package_of(dest, package or None)
    return Clone(f"{source.name} (full clone, {int(commits):,} commits)", source, package, dest,
                 _count(dest))


def run_clone(cl: Clone, reps: int, peers: Sequence[str], rows: list[Row], notes: list[str],
              timeout: float) -> None:
    """Cold runs as CI pays them (a fresh full clone, no cache), and warm runs from a cache
    restored into another fresh clone at another path under another HOME."""
    label, n = cl.label, cl.files

    def cold_once(row: Row, args: Sequence[str]) -> None:
        if row.note:
            return  # it failed before
        shutil.rmtree(cl.repo / CACHE_DIR, ignore_errors=True)
        sample = measure(hookguard_cmd(*args), cl.repo, timeout=timeout)
        if _ok(row, sample):
            log(f"{label}: {row.scenario}: {sample.wall:.2f}s {sample.cpu:.2f}s CPU "
                f"{sample.rss_mib:.0f} MiB")

    audit = ("audit", ".", "--format", "json", "--exit-zero")
    check = ("check", "--base", "HEAD~{}", "--format", "json", "--exit-zero")
    # The goals' two scenarios take turns with mypy, run by run (mypy, audit, check, mypy,
    # ...): each ratio pairs runs a minute apart, so a slow spell of a shared machine weighs on
    # both sides of it alike (see goals(): the median of the paired ratios).
    mypy = Row(label, PEER_LABEL["mypy"], n, kind="mypy") if "mypy" in peers else None
    cold_audit = Row(label, "audit, cold (history evidence on)", n, paired=mypy is not None)
    check_50 = Row(label, "check --base HEAD~50, cold", n, paired=mypy is not None)
    for _ in range(reps):
        if mypy is not None:
            _mypy_once(cl, mypy, timeout)
        cold_once(cold_audit, audit)
        cold_once(check_50, [a.format(50) for a in check])
    if cold_audit.samples:
        notes.append(f"{label}: cold audit: {_findings(cl.repo, audit, timeout)}")
    rows.append(cold_audit)
    for scenario, args in (("audit, cold, --no-history", (*audit, "--no-history")),
                           ("check --base HEAD~1, cold", [a.format(1) for a in check])):
        row = Row(label, scenario, n)
        for _ in range(reps):
            cold_once(row, args)
        rows.append(row)
    rows.append(check_50)

    # The cache a CI run would save (an audit of the default branch), restored into a fresh
    # clone at another path, with another HOME: what the next CI run starts from.
    shutil.rmtree(cl.repo / CACHE_DIR, ignore_errors=True)
    measure(hookguard_cmd(*audit), cl.repo, timeout=timeout)
    restored = cl.repo.parent / f"{cl.repo.name}-restored"
    shutil.rmtree(restored, ignore_errors=True)
    _git(cl.repo.parent, "clone", "-q", "--no-hardlinks", str(cl.source), str(restored))
    if (cl.repo / CACHE_DIR).is_dir():
        shutil.copytree(cl.repo / CACHE_DIR, restored / CACHE_DIR)
    with tempfile.TemporaryDirectory(prefix="bench-home-") as home:
        # The secret CI passes in (HOOKGUARD_CACHE_KEY): what lets another HOME trust the cache.
        env = dict(os.environ, HOME=home)
        warm: tuple[tuple[str, Sequence[str]], ...] = (
            ("audit, warm from a restored cache (fresh clone, other HOME)", audit),
            ("check --base HEAD~1, warm from a restored cache",
             ("check", "--base", "HEAD~1", "--format", "json", "--exit-zero")),
        )
        for scenario, warm_args in warm:
            row = Row(label, scenario, n)
            for _ in range(reps):
                sample = measure(hookguard_cmd(*warm_args), restored, timeout=timeout, env=env)
                if not _ok(row, sample):
                    break
            log(f"{label}: {scenario}: {_fmt(row.median)}s")
            rows.append(row)
    shutil.rmtree(restored, ignore_errors=True)

    if mypy is not None:
        rows.append(mypy)


def _mypy_once(cl: Clone, row: Row, timeout: float) -> None:
    """One mypy run on the clone's package (fresh cache), into ``row``; a failure or a run
    over PEER_SLOW_S ends its runs (noted in ``row``)."""
    if row.note:
        return
    with tempfile.TemporaryDirectory(prefix="bench-mypy-") as scratch:
        cmd = peer_cmd("mypy", cl.package, Path(scratch))
        if cmd is None:
            row.note = "not installed"
            return
        sample = measure(cmd, cl.repo, timeout=timeout)
    failed = _peer_failed("mypy", sample)
    if failed:
        row.note = f"failed ({failed}): {(sample.stderr or sample.stdout).strip()[-200:]}"
        return
    row.add(sample)
    found = re.search(r"in (\d+) source files?", sample.stdout)
    row.checked = int(found.group(1)) if found else None
    log(f"{cl.label}: mypy {cl.package}: {sample.wall:.1f}s {sample.rss_mib:.0f} MiB"
        + (f" ({row.checked} files checked)" if found else ""))
    if sample.wall > PEER_SLOW_S:
        row.note = f"{len(row.samples)} run(s): over {PEER_SLOW_S:.0f}s each"


def _findings(repo: Path, audit: Sequence[str], timeout: float) -> str:
    """How many findings the last cold audit reported (read back from a warm run)."""
    sample = measure(hookguard_cmd(*audit), repo, timeout=timeout)
    try:
        found = json.loads(sample.stdout).get("findings", [])
    except ValueError:
        return "findings unreadable"
    errors = sum(1 for f in found if f.get("severity") == "error")
    return f"{len(found)} finding(s), {errors} error(s)"


def _same_work(peer: Row, row: Row) -> bool:
    """Whether ``peer`` checked about the files ``row``'s hookguard runs read (nine in ten or
    more), so that their times compare: on pylint's checkout mypy checks the package's 180
    files, hookguard reads all 2,416 (its tests' data among them)."""
    return peer.checked is None or peer.checked >= 0.9 * row.files


def peer_cmd(peer: str, package: str, scratch: Path) -> list[str] | None:
    exe = BIN / peer
    if not exe.exists():
        found = shutil.which(peer)
        if not found:
            return None
        exe = Path(found)
    if peer == "mypy":
        return [str(exe), "--ignore-missing-imports", "--cache-dir", str(scratch), package]
    if peer == "pylint":
        return [str(exe), "--disable=all", "--enable=W0221,W0222", "-j", "2", package]
    if peer == "pyright":
        return [str(exe), package]
    raise ValueError(peer)


PEER_LABEL = {
    "mypy": "mypy (defaults, fresh cache)",
    "pylint": "pylint W0221,W0222 -j 2",
    "pyright": "pyright",
}


_PYLINT_CRASH = re.compile(r"create ast representation of module '([\w.]+)'")


def _peer_failed(peer: str, sample: Sample) -> str | None:
    if peer == "mypy" and sample.rc not in (0, 1):
        return f"exit {sample.rc}"
    if peer == "pylint" and sample.rc & (1 | 32):
        return f"exit {sample.rc}"
    if peer == "pyright" and sample.rc not in (0, 1):
        return f"exit {sample.rc}"
    return None


def run_peers(
    co: Checkout,
    peers: Sequence[str],
    reps: int,
    rows: list[Row],
    per_file: dict[str, float],
    skip: dict[str, str],
    timeout: float,
) -> None:
    for peer in peers:
        row = Row(co.label, PEER_LABEL[peer], co.files, kind=peer)
        rows.append(row)
        if peer in skip:
            row.note = skip[peer]
            continue
        if peer in per_file:
            projected = per_file[peer] * co.files
            if projected > PEER_SKIP_S:
                row.note = (f"skipped: projected {projected:.0f}s "
                            f"(> {PEER_SKIP_S:.0f}s) from the smaller checkout")
                continue
        n = 1 if peer == "pyright" else reps
        ignored: list[str] = []
        attempts = 0
        while len(row.samples) < n:
            attempts += 1
            with tempfile.TemporaryDirectory(prefix=f"bench-{peer}-") as scratch:
                cmd = peer_cmd(peer, co.package, Path(scratch))
                if cmd is None:
                    row.note = "not installed"
                    break
                if ignored:
                    cmd.insert(-1, "--ignore=" + ",".join(ignored))
                sample = measure(cmd, co.repo, timeout=timeout)
            if sample.wall >= timeout:
                row.note = f"timed out after {timeout:.0f}s"
                break
            crashed = _PYLINT_CRASH.search(sample.stderr) if peer == "pylint" else None
            if crashed and sample.rc & 1 and attempts <= 3:
                # astroid crashes (RecursionError) on some generated data modules, and with -j 2
                # that aborts the whole run: skip that module, say so, and run again.
                ignored.append(crashed.group(1).rsplit(".", 1)[-1] + ".py")
                row.note = (f"--ignore={','.join(ignored)}: astroid crashes on "
                            f"{crashed.group(1)}")
                log(f"{co.label}: pylint crashed on {crashed.group(1)}; retrying without it")
                continue
            i = len(row.samples)
            failed = _peer_failed(peer, sample)
            if failed:
                tail = (sample.stderr or sample.stdout).strip()[-300:]
                row.note = f"failed ({failed}): {tail}"
                log(f"{co.label}: {peer} {row.note}")
                break
            row.add(sample)
            log(f"{co.label}: {peer} {i + 1}/{n}: {sample.wall:.1f}s {sample.rss_mib:.0f} MiB")
            if sample.wall > PEER_SLOW_S:
                if n > 1:
                    slow = f"{len(row.samples)} run(s): over {PEER_SLOW_S:.0f}s each"
                    row.note = f"{row.note}; {slow}" if row.note else slow
                break
        if row.samples:
            assert row.median is not None
            per_file[peer] = row.median / co.files


# -- report -------------------------------------------------------------------------------------
def _fmt(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def machine() -> dict[str, str]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 2**20:.1f} GiB"
    except OSError:
        pass
    versions = {}
    for tool, args in (("hookguard", ["--version"]), ("mypy", ["--version"]),
                       ("pylint", ["--version"]), ("pyright", ["--version"])):
        exe = BIN / tool
        if exe.exists():
            try:
                out = subprocess.run([str(exe), *args], capture_output=True, text=True,
                                     timeout=120).stdout.strip().splitlines()
                versions[tool] = out[0] if out else "?"
            except (OSError, subprocess.TimeoutExpired):
                versions[tool] = "?"
    return {
        "cpu": f"{cpu}, {os.cpu_count()} cores (nproc {len(os.sched_getaffinity(0))})",
        "memory": mem,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "git": subprocess.run(["git", "--version"], capture_output=True,
                              text=True).stdout.strip(),
        **versions,
    }


def report(rows: list[Row], notes: list[str], info: dict[str, str], argv: Sequence[str]) -> str:
    out = ["# hookguard benchmark", ""]
    out.append("Command: `python benchmarks/run.py " + " ".join(argv) + "`")
    out.append("")
    out.append("Machine: " + "; ".join(f"{k}: {v}" for k, v in info.items()))
    out.append("")
    out.append("| checkout | scenario | files | median s | spread (min-max) s | s per 1k files "
               "| median CPU s | peak RSS MiB | ratio vs mypy | ratio vs pylint |")
    out.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    peers: dict[tuple[str, str], float] = {}
    for row in rows:
        if row.kind != "hookguard" and row.median is not None:
            peers[(row.checkout, row.kind)] = row.median
    for row in rows:
        med = row.median
        if med is None:
            spread = row.note or "—"
        else:
            spread = f"{min(row.samples):.2f}-{max(row.samples):.2f} (n={len(row.samples)})"
        ratios = []
        for peer in ("mypy", "pylint"):
            ref = peers.get((row.checkout, peer))
            ratios.append("—" if med is None or ref is None or row.kind != "hookguard"
                          else f"{med / ref:.3f}")
        scenario = row.scenario
        if row.note and med is not None:
            scenario += f" ({row.note})"
        out.append(
            f"| {row.checkout} | {scenario} | {row.files} | {_fmt(med)} | {spread} | "
            f"{_fmt(med / row.files * 1000 if med is not None else None, 3)} | "
            f"{_fmt(statistics.median(row.cpu) if row.cpu else None)} | "
            f"{_fmt(row.rss_mib if row.samples else None, 0)} | {ratios[0]} | {ratios[1]} |"
        )
    out.append("")
    out.extend(goals(rows))
    if notes:
        out.append("")
        out.append("Notes:")
        out.append("")
        out.extend(f"- {n}" for n in notes)
    return "\n".join(out) + "\n"


def _find(rows: list[Row], checkout_prefix: str, scenario: str, kind: str = "hookguard",
          files: int | None = None) -> Row | None:
    for row in rows:
        if (row.checkout.startswith(checkout_prefix) and row.scenario == scenario
                and row.kind == kind and (files is None or row.checkout == f"synthetic {files}")):
            return row
    return None


def paired_ratios(row: Row, mypy: Row) -> list[float]:
    """``row``'s run n over mypy's run n, where the runs took turns (``row.paired``)."""
    if not row.paired:
        return []
    # (mypy may have stopped early: over PEER_SLOW_S; the runs before still pair up)
    return [mine / theirs for mine, theirs in zip(row.samples, mypy.samples, strict=False)
            if theirs > 0]


def goals(rows: list[Row]) -> list[str]:
    out = ["## Goals", "", "| goal | measured | status |", "|---|---|---|"]

    def line(goal: str, measured: str, ok: bool | None) -> None:
        status = "n/a" if ok is None else ("PASS" if ok else "FAIL")
        out.append(f"| {goal} | {measured} | {status} |")

    cold = _find(rows, "sympy", "audit, cold")
    mypy = _find(rows, "sympy", PEER_LABEL["mypy"], kind="mypy")
    pylint = _find(rows, "sympy", PEER_LABEL["pylint"], kind="pylint")
    for peer_row, limit, name in ((mypy, 0.5, "mypy"), (pylint, 0.1, "pylint")):
        goal = f"sympy cold audit ≤ {limit:g} x {name}"
        if cold and cold.median is not None and peer_row and peer_row.median is not None:
            ratio = cold.median / peer_row.median
            line(goal, f"{cold.median:.2f}s / {peer_row.median:.2f}s = {ratio:.3f}",
                 ratio <= limit)
        else:
            line(goal, "not measured (run with --real PATH/TO/sympy)", None)
    for checkout in sorted({r.checkout for r in rows if "(full clone" in r.checkout}):
        name = checkout.split(" ", 1)[0]
        mypy_row = _find(rows, checkout, PEER_LABEL["mypy"], kind="mypy")
        for scenario, limit in (("audit, cold (history evidence on)", 0.5),
                                ("check --base HEAD~50, cold", 0.3)):
            row = _find(rows, checkout, scenario)
            goal = f"{name}: {scenario} ≤ {limit:g} x mypy"
            if row and mypy_row and not _same_work(mypy_row, row):
                ratio_text = (f"{row.median / mypy_row.median:.3f}" if row.median is not None
                              and mypy_row.median else "n/a")
                line(goal, f"n/a: mypy checks {mypy_row.checked:,} of the {row.files:,} files "
                     f"hookguard reads, not the same work (ratio {ratio_text}, for reference)",
                     None)
            elif row and row.median is not None and mypy_row and mypy_row.median is not None:
                ratio = row.median / mypy_row.median
                cpu = statistics.median(row.cpu) / statistics.median(mypy_row.cpu)
                measured = (f"{row.median:.2f}s / {mypy_row.median:.2f}s = {ratio:.3f} "
                            f"(CPU {cpu:.3f})")
                pairs = paired_ratios(row, mypy_row)
                if pairs:  # the verdict: runs taken side by side, not medians minutes apart
                    ratio = statistics.median(pairs)
                    measured = (f"{ratio:.3f}, the median of {len(pairs)} paired runs "
                                f"({', '.join(f'{r:.3f}' for r in pairs)}); medians: "
                                + measured)
                line(goal, measured, ratio <= limit)
            else:
                line(goal, "not measured", None)
        row = _find(rows, checkout, "audit, warm from a restored cache (fresh clone, other HOME)")
        line(f"{name}: warm audit from a restored cache < 1 s",
             f"{row.median:.2f}s" if row and row.median is not None else "not measured",
             row.median < 1.0 if row and row.median is not None else None)
        row = _find(rows, checkout, "audit, cold (history evidence on)")
        line(f"{name}: cold audit peak RSS < 1 GiB",
             f"{row.rss_mib:.0f} MiB" if row and row.samples else "not measured",
             row.rss_mib < 1024 if row and row.samples else None)
    for scenario, limit, goal in (
        ("audit, warm, nothing changed", 0.5, "5,000 files: warm audit, nothing changed < 0.5 s"),
        ("audit, warm, 1 base file edited", 1.0, "5,000 files: warm audit after 1 base edit < 1 s"),
        ("pre-commit: check --staged, 1 staged file", 1.0,
         "5,000 files: pre-commit, 1 staged file < 1 s"),
    ):
        row = _find(rows, "synthetic", scenario, files=5000)
        if row and row.median is not None:
            line(goal, f"{row.median:.2f}s", row.median < limit)
        else:
            line(goal, row.note if row and row.note else "not measured", None)
    big = [r for r in rows if r.checkout == "synthetic 20000" and r.kind == "hookguard"
           and r.samples]
    if big:
        peak = max(r.rss_mib for r in big)
        line("20,000 files: peak RSS < 1 GiB", f"{peak:.0f} MiB", peak < 1024)
    else:
        line("20,000 files: peak RSS < 1 GiB", "not measured", None)
    per_k = []
    for row in rows:
        if (row.checkout.startswith("synthetic") and row.scenario == "audit, cold"
                and row.median is not None):
            per_k.append((row.files, row.median / row.files * 1000))
    if len(per_k) >= 2:
        values = [v for _, v in per_k]
        factor = max(values) / min(values)
        shown = ", ".join(f"{n}: {v:.3f}s" for n, v in per_k)
        line("cold audit linear: s per 1k files agree within 1.5x",
             f"{shown}; factor {factor:.2f}", factor <= 1.5)
    else:
        line("cold audit linear: s per 1k files agree within 1.5x", "needs 2+ sizes", None)
    return out


def byte_compile(package: Path) -> str:
    """Compile ``package``'s modules to ``__pycache__``, as ``pip install`` does, and say so.

    The timed runs never write bytecode (``PYTHONDONTWRITEBYTECODE``), so a source tree
    without it (a git archive, a checkout run with that variable set) would be compiled
    again by every run: 0.15 s of each of them on sympy, a cost no installed hookguard pays
    and no peer pays either (mypy is compiled, pylint installed with its bytecode)."""
    import compileall

    ok = compileall.compile_dir(package, quiet=1)
    return "compiled before the runs, as pip installs it" if ok else "could not be compiled"


# -- main ---------------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    # Every hookguard run signs its cache with one secret, as a CI workflow passes it: a cache
    # restored under another HOME is trusted only with it (docs/security.md).
    os.environ.setdefault("HOOKGUARD_CACHE_KEY", "benchmarks/run.py")
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="sizes 500,5000, 2 repetitions, pylint only on 500, no pyright")
    parser.add_argument("--sizes", help="synthetic checkout sizes, e.g. 500,5000,20000 "
                        "(default 500,5000,20000; 0 or '' for none)")
    parser.add_argument("--real", action="append", default=[], type=Path, metavar="PATH",
                        help="a package directory of a real checkout (repeatable)")
    parser.add_argument("--clone", action="append", default=[], metavar="PATH[:PACKAGE]",
                        help="a full-history git repository to clone and time as CI does "
                        "(cold audit, cold check --base HEAD~1 and HEAD~50, warm from a "
                        "restored cache), with mypy on PACKAGE (repeatable)")
    parser.add_argument("--clone-reps", type=int, default=1,
                        help="repetitions for --clone scenarios (default 1)")
    parser.add_argument("--reps", type=int, help="repetitions (default 3; --quick 2)")
    parser.add_argument("--reps-large", type=int, default=2,
                        help=f"repetitions for checkouts of {LARGE}+ files (default 2)")
    parser.add_argument("--peers", default="mypy,pylint,pyright",
                        help="comma-separated peers (default mypy,pylint,pyright; '' for none)")
    parser.add_argument("--peer-timeout", type=float, default=900.0,
                        help="seconds before a peer run is killed (default 900)")
    parser.add_argument("--workdir", type=Path,
                        default=Path(tempfile.gettempdir()) / "hookguard-bench")
    parser.add_argument("--pyright-synthetic", action="store_true",
                        help="also run pyright on the synthetic checkouts (slow)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the raw results here")
    args = parser.parse_args(argv)

    raw_argv = list(argv if argv is not None else sys.argv[1:])
    sizes_arg = args.sizes if args.sizes is not None else (
        "500,5000" if args.quick else "500,5000,20000")
    sizes = [int(s) for s in sizes_arg.split(",") if s.strip() and int(s)]
    reps = args.reps or (2 if args.quick else 3)
    peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    for peer in peers:
        if peer not in PEER_LABEL:
            parser.error(f"unknown peer {peer!r} (known: {', '.join(PEER_LABEL)})")
    args.workdir.mkdir(parents=True, exist_ok=True)

    import hookguard

    info = machine()
    info["hookguard source"] = str(Path(hookguard.__file__).parent)
    info["hookguard bytecode"] = byte_compile(Path(hookguard.__file__).parent)
    load_before = os.getloadavg()
    rows: list[Row] = []
    notes: list[str] = []
    started = time.perf_counter()
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        _run_all(args, sizes, reps, peers, rows, notes)
    except KeyboardInterrupt:
        notes.append("INTERRUPTED: partial results")
    notes.append(f"benchmark wall time: {time.perf_counter() - started:.0f}s; load average "
                 f"(1/5/15 min) before {' '.join(f'{x:.2f}' for x in load_before)}, after "
                 f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    notes.append(f"a hookguard scenario whose first run takes over {SLOW_S:.0f}s is not repeated")
    notes.append(f"peers: a run over {PEER_SLOW_S:.0f}s is not repeated; a peer projected "
                 f"(from the previous size) over {PEER_SKIP_S:.0f}s is skipped")
    notes.append("cold = the checkout's .hookguard_cache deleted; files are in the OS page cache "
                 "(every tool gets the same warm disk cache)")
    notes.append("median CPU s = user + system time of the process tree (all cores): less "
                 "sensitive than wall time to other load on the machine")
    notes.append("peak RSS = ru_maxrss of the process tree from wait4: the largest single "
                 "process (hookguard's parser workers included), not the sum")
    text = report(rows, notes, info, raw_argv)
    print(text)
    if args.json:
        args.json.write_text(json.dumps(
            {"machine": info, "rows": [asdict(r) for r in rows], "notes": notes}, indent=2))
    return 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _run_all(
    args: argparse.Namespace,
    sizes: list[int],
    reps: int,
    peers: list[str],
    rows: list[Row],
    notes: list[str],
) -> None:
    for spec in args.clone:
        cl = clone(args.workdir, spec)
        run_clone(cl, args.clone_reps, peers, rows, notes, args.peer_timeout)
    for path in args.real:
        co = real(args.workdir, path)
        run_hookguard(co, reps, rows, notes)
        run_peers(co, peers, reps, rows, {}, {"pyright": "skipped (--quick)"} if args.quick
                  else {}, args.peer_timeout)
    per_file: dict[str, float] = {}
    for size in sorted(sizes):
        co = synthetic(args.workdir, size, args.seed)
        n = args.reps_large if co.files >= LARGE else reps
        run_hookguard(co, n, rows, notes)
        skip: dict[str, str] = {}
        if not args.pyright_synthetic:
            skip["pyright"] = "skipped on synthetic checkouts (--pyright-synthetic to run)"
        if args.quick and size > 500:
            skip["pylint"] = "skipped (--quick)"
        run_peers(co, peers, n, rows, per_file, skip, args.peer_timeout)


if __name__ == "__main__":
    sys.exit(main())
