"""Score ``hookguard upgrade`` on real downstream upgrade incidents and traps (issue 25).

    python benchmarks/upgrades.py [--corpus benchmarks/upgrades/incidents.toml]
        [--workdir /tmp/upg] [--peers pyright,mypy] [--timeout 120] [--mem-gib 8]
        [--only ID ...] [--timing] [--reps 3] [--json FILE]

For each checkout of the corpus (one run per repository, commit and upgrade) the clone
``WORKDIR/<owner>+<name>`` is put at the commit (``git checkout --detach``; it is cloned from
the fetched mirror ``/work/.mirror/<owner>+<name>/repo`` when missing) and

* ``hookguard upgrade FW==NEW --from OLD --format json --exit-zero`` runs in it, the package
  cache being ``WORKDIR/cache`` (``HOOKGUARD_CACHE_DIR``; put both wheels in
  ``WORKDIR/cache/packages`` first, or the run downloads them), under a wall-clock timeout and
  an address-space limit;
* an incident is *found* when an error-level finding of the expected rule lies at the override
  (same path, symbol ending in ``Class.method``); a trap is *hit* when any error-level finding
  lies at its place; every other finding is an *other report* (errors and warnings counted
  apart);
* the peers run on the same checkout with the new version installed into
  ``WORKDIR/venvs/<fw>-<new>`` (``pip install --no-deps``): pyright (``--outputjson
  --pythonpath``, its ``reportIncompatibleMethodOverride``) and mypy (``--python-executable
  --ignore-missing-imports --follow-imports=silent --explicit-package-bases``, its
  ``[override]``), a report being at the override when it is on the override's ``def`` line
  (or its name's line). Other override reports and all diagnostics are counted.

``--timing`` times ``hookguard upgrade transformers==4.46.0 --from 4.45.2`` on the largest
checkout of the corpus (by ``.py`` files) that upgrades transformers from 4.45.2, or on
``--timing-at owner/name@commit`` (a clone under WORKDIR, as above), on one core
(``taskset -c 0``): cold (a fresh cache holding only the two wheels: no download, no records)
and warm (the same cache again), median of ``--reps``.

Nothing of the fetched code is copied into this repository: the corpus holds metadata only.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOOKGUARD = ROOT / ".venv" / "bin" / "hookguard"
MYPY = ROOT / ".venv" / "bin" / "mypy"
MIRRORS = Path("/work/.mirror")
SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", "build", "dist", ".tox"}


@dataclass
class Entry:
    kind: str  # incident | trap
    data: dict

    @property
    def id(self) -> str:
        return self.data["id"]

    @property
    def place(self) -> str:
        return self.data["override"] if self.kind == "incident" else self.data["where"]

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        d = self.data
        return (d["repo"], d["commit"], d["framework"], d["old"], d["new"])


@dataclass
class Run:
    key: tuple[str, str, str, str, str]
    entries: list[Entry]
    checkout: Path
    files: int = 0
    hookguard: dict = field(default_factory=dict)
    pyright: dict = field(default_factory=dict)
    mypy: dict = field(default_factory=dict)


# -- checkouts ---------------------------------------------------------------------------------
def clone_dir(workdir: Path, repo: str) -> Path:
    return workdir / repo.replace("/", "+")


def prepare_checkout(workdir: Path, repo: str, commit: str) -> Path:
    target = clone_dir(workdir, repo)
    if not target.exists():
        mirror = MIRRORS / repo.replace("/", "+") / "repo"
        if not mirror.exists():
            raise SystemExit(f"{repo}: no clone at {target} and no mirror at {mirror}")
        subprocess.run(["git", "clone", "-q", str(mirror), str(target)], check=True)
    subprocess.run(["git", "-C", str(target), "checkout", "-q", "--detach", "-f", commit],
                   check=True)
    subprocess.run(["git", "-C", str(target), "clean", "-qfdx"], check=True)
    return target


def python_files(checkout: Path) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(checkout):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.startswith(".")]
        out.extend(Path(dirpath) / f for f in filenames if f.endswith(".py"))
    return sorted(out)


def def_lines(checkout: Path, place: str) -> set[int]:
    """The lines a report at ``path::Class.method`` may carry: the ``def`` line, the name's."""
    path, _, qual = place.partition("::")
    cls, _, meth = qual.rpartition(".")
    try:
        tree = ast.parse((checkout / path).read_bytes())
    except (OSError, SyntaxError):
        return set()
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == meth:
                    lines.add(item.lineno)
                    lines.update(d.lineno for d in item.decorator_list)
    return lines


def limit_memory(gib: float):
    def apply() -> None:
        size = int(gib * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (size, size))
    return apply


# -- hookguard ---------------------------------------------------------------------------------
def run_hookguard(run: Run, cache: Path, timeout: float, mem_gib: float) -> None:
    repo, commit, fw, old, new = run.key
    env = dict(os.environ, HOOKGUARD_CACHE_DIR=str(cache), NO_COLOR="1")
    cmd = [str(HOOKGUARD), "upgrade", f"{fw}=={new}", "--from", old, "--format", "json",
           "--exit-zero"]
    start = time.perf_counter()
    try:
        done = subprocess.run(cmd, cwd=run.checkout, env=env, capture_output=True,
                              timeout=timeout, preexec_fn=limit_memory(mem_gib))
    except subprocess.TimeoutExpired:
        run.hookguard = {"status": f"timeout ({timeout:.0f}s)", "seconds": timeout, "findings": []}
        return
    seconds = time.perf_counter() - start
    try:
        doc = json.loads(done.stdout)
    except json.JSONDecodeError:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        status = "memory" if "MemoryError" in done.stderr.decode("utf-8", "replace") else "failed"
        run.hookguard = {"status": f"{status} (exit {done.returncode}: {tail[0][:160]})",
                         "seconds": seconds, "findings": []}
        return
    run.hookguard = {"status": "ok", "seconds": seconds, "findings": doc.get("findings", []),
                     "changes": len((doc.get("upgrade") or {}).get("changes", []))}


def at_place(finding: dict, place: str) -> bool:
    path, _, qual = place.partition("::")
    return finding.get("path") == path and (finding.get("symbol") or "").endswith(f".{qual}")


# -- peers -------------------------------------------------------------------------------------
def peer_venv(workdir: Path, fw: str, version: str) -> Path:
    venv = workdir / "venvs" / f"{fw}-{version}"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps",
                        f"{fw}=={version}"], check=True, capture_output=True)
    return python


def run_pyright(run: Run, pyright: str, python: Path, timeout: float) -> None:
    cmd = [pyright, "--outputjson", "--pythonpath", str(python), str(run.checkout)]
    start = time.perf_counter()
    try:
        done = subprocess.run(cmd, capture_output=True, timeout=timeout, cwd=run.checkout)
    except subprocess.TimeoutExpired:
        run.pyright = {"status": "timeout", "reports": []}
        return
    try:
        doc = json.loads(done.stdout)
    except json.JSONDecodeError:
        run.pyright = {"status": f"failed: {done.stderr[-200:]!r}", "reports": []}
        return
    reports = []
    for d in doc.get("generalDiagnostics", []):
        if d.get("severity") != "error":
            continue
        rel = os.path.relpath(d["file"], run.checkout)
        reports.append({"path": rel, "line": d["range"]["start"]["line"] + 1,
                        "code": d.get("rule", ""), "message": d.get("message", "")[:200]})
    run.pyright = {"status": "ok", "seconds": time.perf_counter() - start, "reports": reports,
                   "override_code": "reportIncompatibleMethodOverride"}


def run_mypy(run: Run, python: Path, timeout: float) -> None:
    files = [str(p.relative_to(run.checkout)) for p in python_files(run.checkout)]
    base = [str(MYPY), "--python-executable", str(python), "--ignore-missing-imports",
            "--follow-imports=silent", "--explicit-package-bases", "--no-incremental",
            "--show-error-codes", "--no-error-summary", "--no-pretty", "--check-untyped-defs"]
    start = time.perf_counter()
    note = ""
    try:
        done = subprocess.run(base + files, capture_output=True, timeout=timeout,
                              cwd=run.checkout)
        if done.returncode == 2:  # duplicate module names and the like: the framework's users
            fw = run.key[2].lower().replace("-", "_")
            users = [f for f in files if fw.split("_")[0] in
                     (run.checkout / f).read_text("utf-8", "replace").lower()]
            note = f"whole checkout refused ({done.stdout.decode()[:120]!r}); ran on {len(users)} files"
            done = subprocess.run(base + users, capture_output=True, timeout=timeout,
                                  cwd=run.checkout)
    except subprocess.TimeoutExpired:
        run.mypy = {"status": "timeout", "reports": []}
        return
    reports = []
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        parts = line.split(":", 3)
        if len(parts) < 4 or not parts[1].isdigit() or " error: " not in f" {parts[2]}:{parts[3]}":
            continue
        code = line.rsplit("[", 1)[-1].rstrip("]") if line.endswith("]") else ""
        reports.append({"path": os.path.normpath(parts[0]), "line": int(parts[1]), "code": code,
                        "message": parts[3].strip()[:200]})
    run.mypy = {"status": "ok" if done.returncode in (0, 1) else f"exit {done.returncode}",
                "seconds": time.perf_counter() - start, "reports": reports, "note": note,
                "override_code": "override"}


# -- scoring -----------------------------------------------------------------------------------
def score(runs: list[Run]) -> dict:
    out: dict = {"entries": [], "tools": {}}
    for tool in ("hookguard", "pyright", "mypy"):
        out["tools"][tool] = {"incidents": 0, "found": 0, "traps": 0, "trap_errors": 0,
                              "not_run": 0, "other_errors": 0, "other_warnings": 0,
                              "other_override": 0, "all_reports": 0, "reports_at_incident": []}
    for run in runs:
        lines = {e.place: def_lines(run.checkout, e.place) for e in run.entries}
        # hookguard
        hg = run.hookguard
        claimed: set[int] = set()
        for e in run.entries:
            t = out["tools"]["hookguard"]
            res = {"id": e.id, "kind": e.kind, "tool": "hookguard"}
            if hg.get("status") != "ok":
                t["not_run"] += 1
                res["result"] = hg.get("status")
            else:
                hits = [i for i, f in enumerate(hg["findings"]) if at_place(f, e.place)]
                errs = [i for i in hits if hg["findings"][i]["severity"] == "error"]
                claimed.update(hits)
                if e.kind == "incident":
                    t["incidents"] += 1
                    ok = [i for i in errs if hg["findings"][i]["code"] == e.data["rule"]]
                    t["found"] += bool(ok)
                    t["reports_at_incident"].append(len(hits))
                    res["result"] = ("found" if ok else "wrong-rule" if errs else
                                     "warning" if hits else "missed")
                else:
                    t["traps"] += 1
                    t["trap_errors"] += bool(errs)
                    res["result"] = "error" if errs else "warning" if hits else "clean"
                res["messages"] = [hg["findings"][i]["message"][:240] for i in hits]
            out["entries"].append(res)
        if hg.get("status") == "ok":
            t = out["tools"]["hookguard"]
            t["all_reports"] += len(hg["findings"])
            for i, f in enumerate(hg["findings"]):
                if i not in claimed:
                    t["other_errors" if f["severity"] == "error" else "other_warnings"] += 1
        # peers
        for tool in ("pyright", "mypy"):
            rep = getattr(run, tool)
            if not rep:
                continue
            t = out["tools"][tool]
            code = rep.get("override_code")
            claimed = set()
            for e in run.entries:
                res = {"id": e.id, "kind": e.kind, "tool": tool}
                if rep.get("status") != "ok":
                    t["not_run"] += 1
                    res["result"] = rep.get("status")
                    out["entries"].append(res)
                    continue
                path = e.place.partition("::")[0]
                hits = [i for i, r in enumerate(rep["reports"])
                        if r["path"] == path and r["line"] in lines[e.place]]
                claimed.update(hits)
                over = [i for i in hits if rep["reports"][i]["code"] == code]
                if e.kind == "incident":
                    t["incidents"] += 1
                    t["found"] += bool(over)
                    t["reports_at_incident"].append(len(hits))
                    res["result"] = "found" if over else "other-code" if hits else "missed"
                else:
                    t["traps"] += 1
                    t["trap_errors"] += bool(hits)
                    res["result"] = "error" if hits else "clean"
                res["messages"] = [rep["reports"][i]["message"] for i in hits]
                out["entries"].append(res)
            if rep.get("status") == "ok":
                t["all_reports"] += len(rep["reports"])
                for i, r in enumerate(rep["reports"]):
                    if i not in claimed:
                        t["other_errors"] += 1
                        t["other_override"] += r["code"] == code
    return out


# -- timing ------------------------------------------------------------------------------------
def timing(runs: list[Run], workdir: Path, reps: int, at: str | None = None) -> dict:
    if at:  # owner/name@commit: a checkout outside the corpus (a bigger one)
        repo, _, commit = at.partition("@")
        checkout = prepare_checkout(workdir, repo, commit)
        run = Run((repo, commit, "transformers", "4.45.2", "4.46.0"), [], checkout,
                  files=len(python_files(checkout)))
    else:
        cands = [r for r in runs if r.key[2] == "transformers" and r.key[3] == "4.45.2"]
        if not cands:
            return {}
        run = max(cands, key=lambda r: r.files)
        repo, commit, *_ = run.key
        prepare_checkout(workdir, repo, commit)
    wheels = sorted((workdir / "cache" / "packages").glob("transformers-4.4[56].*-py3-none-any.whl"))
    wheels = [w for w in wheels if w.name.startswith(("transformers-4.45.2-", "transformers-4.46.0-"))]
    cmd = ["taskset", "-c", "0", str(HOOKGUARD), "upgrade", "transformers==4.46.0", "--from",
           "4.45.2", "--format", "json", "--exit-zero"]
    cold, warm = [], []
    for _ in range(reps):
        with tempfile.TemporaryDirectory(prefix="hg-upg-cache-") as tmp:
            (Path(tmp) / "packages").mkdir()
            for w in wheels:
                shutil.copy2(w, Path(tmp) / "packages" / w.name)
            env = dict(os.environ, HOOKGUARD_CACHE_DIR=tmp)
            for bucket in (cold, warm):
                start = time.perf_counter()
                subprocess.run(cmd, cwd=run.checkout, env=env, capture_output=True, check=True)
                bucket.append(time.perf_counter() - start)
    return {"repo": repo, "commit": commit, "files": run.files, "cold": cold, "warm": warm,
            "cold_median": statistics.median(cold), "warm_median": statistics.median(warm)}


# -- main --------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=ROOT / "benchmarks/upgrades/incidents.toml")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/upg"))
    ap.add_argument("--peers", default="pyright,mypy")
    ap.add_argument("--pyright", default=shutil.which("pyright") or "/tmp/upg/peers/bin/pyright")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--peer-timeout", type=float, default=600.0)
    ap.add_argument("--mem-gib", type=float, default=8.0)
    ap.add_argument("--only", nargs="*", default=[])
    ap.add_argument("--timing", action="store_true")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--timing-at", help="owner/name@commit to time instead of the largest "
                    "transformers 4.45.2 checkout of the corpus")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)

    corpus = tomllib.loads(args.corpus.read_text())
    entries = [Entry("incident", d) for d in corpus.get("incident", [])]
    entries += [Entry("trap", d) for d in corpus.get("trap", [])]
    if args.only:
        entries = [e for e in entries if e.id in args.only]
    groups: dict[tuple, list[Entry]] = {}
    for e in entries:
        groups.setdefault(e.key, []).append(e)
    peers = [p for p in args.peers.split(",") if p]
    cache = args.workdir / "cache"
    runs: list[Run] = []
    for key, members in groups.items():
        repo, commit, fw, old, new = key
        checkout = prepare_checkout(args.workdir, repo, commit)
        run = Run(key, members, checkout, files=len(python_files(checkout)))
        print(f"{repo}@{commit[:10]} {fw} {old}->{new} ({run.files} files)", file=sys.stderr,
              flush=True)
        run_hookguard(run, cache, args.timeout, args.mem_gib)
        if peers:
            python = peer_venv(args.workdir, fw, new)
            if "pyright" in peers:
                run_pyright(run, args.pyright, python, args.peer_timeout)
            if "mypy" in peers:
                run_mypy(run, python, args.peer_timeout)
        runs.append(run)
    result = score(runs)
    result["runs"] = [{"repo": r.key[0], "commit": r.key[1], "framework": r.key[2],
                       "old": r.key[3], "new": r.key[4], "files": r.files,
                       "hookguard": {k: v for k, v in r.hookguard.items() if k != "findings"},
                       "hookguard_findings": [
                           {k: f.get(k) for k in ("code", "severity", "path", "line", "symbol",
                                                  "message")}
                           for f in r.hookguard.get("findings", [])],
                       "pyright": {k: v for k, v in r.pyright.items() if k != "reports"}
                       | {"reports": len(r.pyright.get("reports", []))},
                       "pyright_override_reports": [
                           x for x in r.pyright.get("reports", [])
                           if x["code"] == "reportIncompatibleMethodOverride"],
                       "mypy": {k: v for k, v in r.mypy.items() if k != "reports"}
                       | {"reports": len(r.mypy.get("reports", []))},
                       "mypy_override_reports": [
                           x for x in r.mypy.get("reports", []) if x["code"] == "override"]}
                      for r in runs]
    if args.timing:
        result["timing"] = timing(runs, args.workdir, args.reps, args.timing_at)

    # -- print ------------------------------------------------------------------------------
    print("| id | kind | hookguard | pyright | mypy |\n|---|---|---|---|---|")
    by = {}
    for res in result["entries"]:
        by.setdefault((res["id"], res["kind"]), {})[res["tool"]] = res["result"]
    for (ident, kind), tools in by.items():
        print(f"| {ident} | {kind} | {tools.get('hookguard', '-')} | {tools.get('pyright', '-')}"
              f" | {tools.get('mypy', '-')} |")
    print()
    print("| tool | incidents found | recall | traps with an error | not run | reports at a "
          "found incident (max) | other errors | other warnings | other override reports | "
          "all reports |\n|---|---|---|---|---|---|---|---|---|---|")
    for tool, t in result["tools"].items():
        n = t["incidents"]
        rec = f"{100 * t['found'] / n:.0f} %" if n else "-"
        most = max(t["reports_at_incident"], default=0)
        print(f"| {tool} | {t['found']}/{n} | {rec} | {t['trap_errors']}/{t['traps']} | "
              f"{t['not_run']} | {most} | {t['other_errors']} | {t['other_warnings']} | "
              f"{t['other_override']} | {t['all_reports']} |")
    total = sum(1 for e in entries if e.kind == "incident")
    hg = result["tools"]["hookguard"]
    print(f"\nhookguard recall over all {total} incidents (a run that did not finish counts as a "
          f"miss): {hg['found']}/{total} = {100 * hg['found'] / max(total, 1):.0f} %")
    for tool in ("pyright", "mypy"):
        t = result["tools"][tool]
        if t["incidents"] and t["found"]:
            print(f"hookguard/{tool} incidents found: {hg['found'] / t['found']:.1f}x")
    if result.get("timing"):
        tm = result["timing"]
        print(f"\ntiming on {tm['repo']}@{tm['commit'][:10]} ({tm['files']} .py files), one core: "
              f"cold {tm['cold_median']:.2f} s (goal 15 s: {15 / tm['cold_median']:.1f}x under), "
              f"warm {tm['warm_median']:.2f} s (goal 1 s: {1 / tm['warm_median']:.2f}x)")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
