"""First-contact round (issue 23): frozen rules, run once on clones hookguard has never seen.

    python benchmarks/first_contact.py --at COMMIT --raw DIR [--md FILE] [--kind NAME=KIND ...]
                                       CLONE [CLONE ...]
    python benchmarks/first_contact.py --at COMMIT --raw DIR --reuse [--md FILE] CLONE ...

The rules measured are those of ``COMMIT``: ``git archive COMMIT hookguard`` (of this checkout)
is unpacked into a scratch directory, and every audit runs ``python -m hookguard`` with
``PYTHONPATH`` pointing there, so an edit to the working tree while the round runs changes
nothing measured (the script checks that the package imported is the exported one). Each
clone (a full-history clone named ``<owner>+<name>``, as in ``/tmp/corpus``) is audited cold
and alone, one after the other: ``hookguard audit --format json --exit-zero --no-cache``,
run in the clone. ``python`` is the interpreter running this script. Where the commit holds
weak warnings back (``hookguard.hedges``), the audit runs with ``--all-warnings`` and the
report splits them off: "warnings" are what a user sees by default, "held back" the rest.

``--raw DIR`` keeps, per clone, ``DIR/<owner>+<name>.json``: the hookguard commit, the clone's
commit, the wall time, the exit status, stderr and the report itself. ``--reuse`` reads those
back instead of running hookguard again. The Markdown written to ``--md`` (and stdout) is the
round's repository table (commit, committed date, commits, files, classes, errors, warnings,
held back, files not analysed, unresolved bases, seconds), then per repository the files not
analysed and the bases not resolved, then every error (to triage), every warning and every
held-back warning, each with the
first words of its message. Files and classes are read from hookguard's summary line (stderr);
"not analysed" and "unresolved" follow ``benchmarks/quality.py``: an entry of the report's
``errors`` whose message starts with one of its ``MODEL_PROBLEMS`` is a model problem (an
unresolved base counts under "unresolved bases" when it starts ``cannot resolve base class``),
any other entry is a file not analysed. A run that exits non-zero or writes no JSON is listed
as a crash, and the round goes on.

This is a benchmark, not part of the package: it never imports hookguard, it runs it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from quality import MODEL_PROBLEMS, Finding, _table, not_analysed

ROOT = Path(__file__).resolve().parents[1]
UNRESOLVED = "cannot resolve base class"
SUMMARY = re.compile(r"(?P<files>[\d,]+) files?(?:, (?P<classes>[\d,]+) class(?:es)?)?")


class RoundError(Exception):
    """A problem that stops the whole round (not one repository)."""


def _git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if proc.returncode:
        raise RoundError(f"{cwd}: git {' '.join(args)}: {proc.stderr.strip()[:300]}")
    return proc.stdout


def export(commit: str) -> tuple[str, Path]:
    """The full sha of ``commit`` and a scratch directory holding its ``hookguard`` package."""
    sha = _git(ROOT, "rev-parse", "--verify", f"{commit}^{{commit}}").strip()
    scratch = Path(tempfile.mkdtemp(prefix=f"hookguard-fc-{sha[:12]}-"))
    archive = subprocess.run(["git", "archive", sha, "hookguard"], cwd=ROOT,
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(scratch)], input=archive, check=True)
    return sha, scratch


def _environment(scratch: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(scratch), os.environ.get("PYTHONPATH", "")) if p)
    env.pop("HOOKGUARD_CACHE_DIR", None)
    return env


def check_import(scratch: Path, env: dict[str, str]) -> None:
    """Refuse to measure anything but the exported package (an editable install could win)."""
    proc = subprocess.run([sys.executable, "-c", "import hookguard; print(hookguard.__file__)"],
                          cwd=tempfile.gettempdir(), env=env, capture_output=True, text=True)
    imported = Path(proc.stdout.strip()).resolve() if proc.returncode == 0 else None
    if imported is None or scratch.resolve() not in imported.parents:
        raise RoundError(f"python -m hookguard would import {imported or proc.stderr.strip()}, "
                         f"not the export under {scratch}")


def reported_hedges(scratch: Path, env: dict[str, str]) -> list[str] | None:
    """The hedges whose warnings the exported hookguard reports by default
    (``hookguard.hedges.REPORTED``), or None for a commit older than held-back warnings."""
    code = ("import json; from hookguard.hedges import REPORTED; "
            "print(json.dumps(sorted(h.value for h in REPORTED)))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tempfile.gettempdir(), env=env,
                          capture_output=True, text=True)
    return list(json.loads(proc.stdout)) if proc.returncode == 0 else None


@dataclass
class Result:
    clone: Path
    hookguard: str
    commit: str
    committed: str
    commits: int
    seconds: float
    returncode: int
    stderr: str
    report: dict[str, Any] | None
    # Where the commit holds warnings back: the audit ran with ``--all-warnings`` and these
    # are the hedges reported by default; None: every warning is reported.
    reported_hedges: list[str] | None = None

    @property
    def name(self) -> str:
        return self.clone.name.replace("+", "/", 1)

    @property
    def crashed(self) -> bool:
        return self.returncode != 0 or self.report is None

    def counts(self) -> tuple[str, str]:
        """Files and classes from the summary line (its last match on stderr), or "?"."""
        for line in reversed(self.stderr.splitlines()):
            if line.startswith("hookguard"):
                match = SUMMARY.search(line)
                if match:
                    return (match["files"].replace(",", ""),
                            (match["classes"] or "?").replace(",", ""))
        return "?", "?"

    def findings(self) -> list[Finding]:
        """What a user sees by default: the held-back warnings left out."""
        return [Finding.from_json(f) for f in (self.report or {}).get("findings", [])
                if not self._held(f)]

    def held_back(self) -> list[Finding]:
        """The warnings only ``--all-warnings`` reports."""
        return [Finding.from_json(f) for f in (self.report or {}).get("findings", [])
                if self._held(f)]

    def _held(self, finding: dict[str, Any]) -> bool:
        if self.reported_hedges is None or finding.get("severity") != "warning":
            return False
        hedges = (finding.get("evidence") or {}).get("hedges", [])
        return not all(h in self.reported_hedges for h in hedges)

    def input_errors(self) -> list[dict[str, Any]]:
        return list((self.report or {}).get("errors", []))

    def not_analysed(self) -> dict[str, str]:
        return not_analysed(self.input_errors())

    def model_problems(self) -> list[dict[str, Any]]:
        return [e for e in self.input_errors()
                if str(e.get("message", "")).startswith(MODEL_PROBLEMS)]

    def unresolved(self) -> list[dict[str, Any]]:
        return [e for e in self.model_problems()
                if str(e.get("message", "")).startswith(UNRESOLVED)]

    def to_json(self) -> dict[str, Any]:
        return {"hookguard": self.hookguard, "repo": self.name, "commit": self.commit,
                "committed": self.committed, "commits": self.commits, "seconds": self.seconds,
                "returncode": self.returncode, "stderr": self.stderr, "report": self.report,
                "reported_hedges": self.reported_hedges}


def run_one(clone: Path, sha: str, env: dict[str, str],
            hedges: list[str] | None = None) -> Result:
    head = _git(clone, "rev-parse", "HEAD").strip()
    committed = _git(clone, "log", "-1", "--format=%cs", "HEAD").strip()
    commits = int(_git(clone, "rev-list", "--count", "HEAD").strip())
    command = [sys.executable, "-m", "hookguard", "audit", "--format", "json", "--exit-zero",
               "--no-cache", *(["--all-warnings"] if hedges is not None else [])]
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=clone, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    try:
        report = json.loads(proc.stdout) if proc.returncode == 0 else None
    except json.JSONDecodeError:
        report = None
    return Result(clone, sha, head, committed, commits, seconds, proc.returncode, proc.stderr,
                  report, hedges)


def load(stored: Path) -> Result:
    data = json.loads(stored.read_text())
    return Result(stored.with_suffix(""), data["hookguard"], data["commit"], data["committed"],
                  int(data["commits"]), float(data["seconds"]), int(data["returncode"]),
                  data["stderr"], data["report"], data.get("reported_hedges"))


def _first_words(message: str, limit: int = 200) -> str:
    text = " ".join(message.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def render(results: list[Result], kinds: dict[str, str]) -> str:
    out: list[str] = []
    shas = sorted({r.hookguard for r in results})
    out.append(f"hookguard {', '.join(s[:12] for s in shas)}: {len(results)} repositories, "
               f"one at a time, `audit --format json --exit-zero --no-cache`.\n")
    rows = []
    totals: Counter[str] = Counter()
    seconds = 0.0
    for r in results:
        files, classes = r.counts()
        severities = Counter(f.severity for f in r.findings())
        rows.append([r.name, kinds.get(r.name, ""), f"`{r.commit[:12]}`", r.committed,
                     r.commits, files, classes,
                     "crash" if r.crashed else severities["error"],
                     "crash" if r.crashed else severities["warning"],
                     "crash" if r.crashed else len(r.held_back()),
                     len(r.not_analysed()), len(r.unresolved()), f"{r.seconds:.1f}"])
        totals.update(commits=r.commits, errors=severities["error"],
                      warnings=severities["warning"], held=len(r.held_back()),
                      not_analysed=len(r.not_analysed()), unresolved=len(r.unresolved()))
        seconds += r.seconds
        for key, value in (("files", files), ("classes", classes)):
            if value.isdigit():
                totals[key] += int(value)
    out.append(_table(("repo", "kind", "commit", "committed", "commits", "files", "classes",
                       "errors", "warnings", "held back", "not analysed", "unresolved bases",
                       "seconds"),
                      rows))
    out.append(f"\nTotal: {totals['commits']} commits, {totals['files']} files, "
               f"{totals['classes']} classes, {totals['errors']} errors, "
               f"{totals['warnings']} warnings (and {totals['held']} held back), "
               f"{totals['not_analysed']} files not analysed, "
               f"{totals['unresolved']} unresolved bases, {seconds:.1f} s.\n")
    problems = []
    for r in results:
        if r.crashed:
            last = (r.stderr.strip().splitlines() or ["no output"])[-1]
            problems.append(f"- {r.name}: **crash** (exit {r.returncode}): {last[:300]}")
        for path, reason in sorted(r.not_analysed().items()):
            problems.append(f"- {r.name}: not analysed: `{path}`: {reason}")
        for e in r.model_problems():
            problems.append(f"- {r.name}: `{e.get('path', '')}:{e.get('line', 0)}`: "
                            f"{_first_words(str(e.get('message', '')), 160)}")
        for note in (r.report or {}).get("notes", []):
            problems.append(f"- {r.name}: note: {_first_words(str(note), 200)}")
    out.append("#### Input problems\n")
    out.append("\n".join(problems) if problems else "None.")
    for severity in ("error", "warning", "held-back warning"):
        listed = ([(r, f) for r in results for f in r.held_back()] if severity.startswith("held")
                  else [(r, f) for r in results for f in r.findings() if f.severity == severity])
        out.append(f"\n#### Every {severity} ({len(listed)})\n")
        if not listed:
            out.append("None.")
        for r, f in listed:
            hook = f" (hook `{f.hook}`)" if f.hook else ""
            out.append(f"- {r.name} {f.code} `{f.path}:{f.line}` `{f.qualname}`{hook}: "
                       f"{_first_words(f.message, 400)}")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("clones", nargs="+", type=Path, help="full-history clones, <owner>+<name>")
    parser.add_argument("--at", required=True, help="the hookguard commit whose rules are measured")
    parser.add_argument("--raw", required=True, type=Path, help="where each report is kept")
    parser.add_argument("--reuse", action="store_true", help="read the kept reports back")
    parser.add_argument("--md", type=Path, help="also write the Markdown here")
    parser.add_argument("--kind", action="append", default=[], metavar="OWNER/NAME=KIND",
                        help="the kind column of the repository table")
    args = parser.parse_args(argv)
    kinds = dict(k.split("=", 1) for k in args.kind)
    args.raw.mkdir(parents=True, exist_ok=True)
    results: list[Result] = []
    if args.reuse:
        sha = _git(ROOT, "rev-parse", "--verify", f"{args.at}^{{commit}}").strip()
        for clone in args.clones:
            result = load(args.raw / f"{clone.name}.json")
            if result.hookguard != sha:
                raise RoundError(f"{clone.name}: kept report is of {result.hookguard[:12]}")
            results.append(result)
    else:
        sha, scratch = export(args.at)
        env = _environment(scratch)
        check_import(scratch, env)
        hedges = reported_hedges(scratch, env)
        for clone in args.clones:
            if not (clone / ".git").exists():
                raise RoundError(f"{clone}: not a clone")
            print(f"auditing {clone.name} ...", file=sys.stderr, flush=True)
            result = run_one(clone.resolve(), sha, env, hedges)
            (args.raw / f"{clone.name}.json").write_text(json.dumps(result.to_json()))
            print(f"  {result.seconds:.1f} s, exit {result.returncode}", file=sys.stderr,
                  flush=True)
            results.append(result)
    text = render(results, kinds)
    if args.md:
        args.md.write_text(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RoundError as exc:
        print(f"first_contact: {exc}", file=sys.stderr)
        sys.exit(2)
