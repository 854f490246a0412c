"""Real-code quality benchmark (issue 10): error precision on a corpus, recall on incidents.

    python benchmarks/quality.py [--repos a,b] [--only precision|recall] [--jobs N]
                                 [--json OUT] [--at REV] [--raw DIR] [--reuse]
                                 [--sample-warnings N]

**Precision.** Every repository in ``benchmarks/quality/corpus.toml`` is audited at its pinned
commit (``hookguard audit --format json --exit-zero --no-cache`` in its full-history clone
under ``--clones``, ``/tmp/corpus/<owner>+<name>`` by default). Every error-level finding is
looked up in the *triage ledger* of ``docs/validation.md``: the markdown tables under the
heading "Triage ledger" whose columns are ``repo | rule | path | symbol | verdict | reason``.
Error precision is true / triaged. Errors not in the ledger are listed as *untriaged*, with a
row to paste once someone has read the code; they never count either way. Ledger rows that no
finding matches any more are listed as *vanished*, to be removed.

**Warnings.** The table under "Warning sample" (same columns, ``worth`` = ``yes``/``no``) holds
warnings judged for whether a maintainer would act on them; the share is taken over the rows
still reported as warnings. ``--sample-warnings N`` prints N more, not yet judged, spread over
the repositories in a fixed pseudo-random order.

**Recall.** For every incident in ``benchmarks/quality/incidents.toml``,
``hookguard check --base <commit>^ --head <commit>`` must report an error of the expected rule
at the override. For every trap, the same check must report no error at ``where`` (anywhere,
when ``where`` is empty). A missing incidents file just skips this side.

``--at REV`` runs the hookguard of a committed revision (exported with ``git archive``), so a
run is reproducible while the working tree is being edited; by default the working tree's
package runs. ``--raw DIR`` keeps every hookguard report there; ``--reuse`` reads them back
instead of running hookguard again (to re-score after editing the ledger).

The output is markdown, so the tables in docs/validation.md are pasted from it. This is a
benchmark, not part of the package: it never imports hookguard, it runs it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "benchmarks" / "quality" / "corpus.toml"
INCIDENTS = ROOT / "benchmarks" / "quality" / "incidents.toml"
LEDGER = ROOT / "docs" / "validation.md"
CLONES = Path("/tmp/corpus")
# Input problems that concern the model (a base, an MRO), not whether a file was analysed.
MODEL_PROBLEMS = ("cannot resolve base class", "cyclic inheritance",
                  "inconsistent method resolution order")


class BenchError(Exception):
    """A problem that stops one repository or one check, named in one line."""


# -- inputs -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Repo:
    name: str  # GitHub owner/name
    commit: str
    kind: str
    roots: tuple[str, ...] = ()

    @property
    def short(self) -> str:
        return self.name.split("/")[1]

    def clone(self, clones: Path) -> Path:
        return clones / self.name.replace("/", "+")


@dataclass(frozen=True)
class Incident:
    id: str
    repo: str
    commit: str
    rule: str
    override: str  # path/in/repo.py::Class.method
    kind: str = ""


@dataclass(frozen=True)
class Trap:
    id: str
    repo: str
    commit: str
    where: str  # path/in/repo.py::Class.method, or "" for the whole check


@dataclass(frozen=True)
class Verdict:
    """One row of the triage ledger."""

    repo: str
    rule: str
    path: str
    symbol: str  # Class.method, optionally followed by " [hook]"
    true: bool
    reason: str
    line: int  # in the ledger file

    @property
    def qualname(self) -> str:
        return self.symbol.split(" [", 1)[0]

    @property
    def hook(self) -> str | None:
        _, sep, rest = self.symbol.partition(" [")
        return rest.rstrip("]") if sep else None


@dataclass(frozen=True)
class Finding:
    code: str
    severity: str
    path: str
    line: int
    symbol: str  # dotted: module.Class.method
    hook: str
    message: str

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Finding:
        return cls(str(data["code"]), str(data["severity"]), str(data["path"]),
                   int(data.get("line", 0)), str(data.get("symbol", "")),
                   str(data.get("hook") or ""), str(data.get("message", "")))

    @property
    def qualname(self) -> str:
        """The symbol without its module: the longest module suffix of the path is removed."""
        parts = self.path.removesuffix(".py").split("/")
        if parts[-1] == "__init__":
            parts.pop()
        for start in range(len(parts)):
            module = ".".join(parts[start:])
            if module and self.symbol.startswith(module + "."):
                return self.symbol[len(module) + 1:]
        return self.symbol


def _load_toml(path: Path) -> dict[str, Any]:
    try:
        data: dict[str, Any] = tomllib.loads(path.read_text())
        return data
    except tomllib.TOMLDecodeError as exc:
        raise BenchError(f"{path}: {exc}") from None


def _fields(path: Path, table: str, row: dict[str, Any], names: Sequence[str]) -> list[str]:
    missing = [n for n in names if not isinstance(row.get(n), str)]
    if missing:
        raise BenchError(f"{path}: [[{table}]] {row.get('id') or row.get('name') or row}: "
                         f"missing {', '.join(missing)}")
    return [row[n] for n in names]


def load_corpus(path: Path) -> list[Repo]:
    repos = []
    for row in _load_toml(path).get("repo", []):
        name, commit, kind = _fields(path, "repo", row, ("name", "commit", "kind"))
        repos.append(Repo(name, commit, kind, tuple(row.get("roots", ()))))
    return repos


def load_incidents(path: Path) -> tuple[list[Incident], list[Trap]]:
    if not path.exists():
        return [], []
    data = _load_toml(path)
    incidents = []
    for row in data.get("incident", []):
        id_, repo, commit, rule, override = _fields(
            path, "incident", row, ("id", "repo", "commit", "rule", "override"))
        incidents.append(Incident(id_, repo, commit, rule, override, str(row.get("kind", ""))))
    traps = []
    for row in data.get("trap", []):
        id_, repo, commit, where = _fields(path, "trap", row, ("id", "repo", "commit", "where"))
        traps.append(Trap(id_, repo, commit, where))
    return incidents, traps


_PIPE = re.compile(r"(?<!\\)\|")
_HEADING = re.compile(r"^(#+)\s+(.*)$")


def _cells(line: str) -> list[str]:
    cells = _PIPE.split(line.strip())[1:-1]
    return [c.strip().replace("\\|", "|").strip("`").strip() for c in cells]


@dataclass(frozen=True)
class Table:
    """A judged table in docs/validation.md: its heading, its verdict column and words."""

    heading: str
    verdict: str
    yes: str
    no: str

    @property
    def columns(self) -> tuple[str, ...]:
        return ("repo", "rule", "path", "symbol", self.verdict, "reason")


LEDGER_TABLE = Table("triage ledger", "verdict", "true", "false")
WARNING_TABLE = Table("warning sample", "worth", "yes", "no")


def parse_ledger(text: str, source: str = "docs/validation.md",
                 table: Table = LEDGER_TABLE) -> tuple[list[Verdict], list[str]]:
    """The rows of a judged table, and one line per row that cannot be read.

    Rows are read from every table with the right columns inside the section whose heading
    contains ``table.heading`` (sub-headings included), so a table can be split by repository.
    """
    verdicts: list[Verdict] = []
    problems: list[str] = []
    level = 0  # heading level of the section; 0: outside it
    columns: list[str] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        heading = _HEADING.match(line)
        if heading:
            depth = len(heading.group(1))
            if table.heading in heading.group(2).lower():
                level = depth
            elif level and depth <= level:
                level = 0
            columns = None
            continue
        if not level or not line.lstrip().startswith("|"):
            columns = None
            continue
        cells = _cells(line)
        if columns is None:
            columns = [c.lower() for c in cells]
            continue
        if tuple(columns) != table.columns or all(set(c) <= set("-: ") for c in cells):
            continue
        if len(cells) != len(table.columns):
            problems.append(f"{source}:{number}: expected {len(table.columns)} cells, "
                            f"found {len(cells)}")
            continue
        repo, rule, path, symbol, verdict, reason = cells
        if verdict.lower() not in (table.yes, table.no):
            problems.append(f"{source}:{number}: {table.verdict} must be {table.yes} or "
                            f"{table.no}, not {verdict!r}")
            continue
        if not reason:
            problems.append(f"{source}:{number}: a verdict needs a reason")
            continue
        verdicts.append(Verdict(repo, rule, path, symbol, verdict.lower() == table.yes, reason,
                                number))
    return verdicts, problems


# -- matching and scoring ---------------------------------------------------------------------

def _same_repo(ledger_repo: str, repo: Repo) -> bool:
    return ledger_repo in (repo.name, repo.short)


def matches(finding: Finding, verdict: Verdict) -> bool:
    """Whether a ledger row judges this finding (the repository is compared by the caller)."""
    if verdict.rule != finding.code or verdict.path != finding.path:
        return False
    if verdict.qualname != finding.qualname:
        return False
    return verdict.hook is None or verdict.hook == finding.hook


def at_location(finding: Finding, where: str) -> bool:
    """Whether a finding is at ``path::Class.method`` (a suffix of the qualified name will do,
    for classes whose qualified name carries a function's name)."""
    path, _, qualname = where.partition("::")
    if finding.path != path:
        return False
    own = finding.qualname
    return own == qualname or own.endswith("." + qualname)


@dataclass
class Score:
    errors: int = 0
    true: int = 0
    false: int = 0

    @property
    def triaged(self) -> int:
        return self.true + self.false

    @property
    def untriaged(self) -> int:
        return self.errors - self.triaged

    @property
    def precision(self) -> float | None:
        return self.true / self.triaged if self.triaged else None

    def add(self, verdict: Verdict | None) -> None:
        self.errors += 1
        if verdict is not None:
            self.true += verdict.true
            self.false += not verdict.true


@dataclass
class Precision:
    by_rule: dict[str, Score] = field(default_factory=dict)
    by_repo: dict[str, Score] = field(default_factory=dict)
    total: Score = field(default_factory=Score)
    untriaged: list[tuple[Repo, Finding]] = field(default_factory=list)
    judged: list[tuple[Repo, Finding, Verdict]] = field(default_factory=list)
    vanished: list[Verdict] = field(default_factory=list)


def score_precision(reports: dict[Repo, list[Finding]], ledger: Sequence[Verdict]) -> Precision:
    """Judge every error-level finding by the ledger; rows of audited repositories that no
    finding matches are vanished."""
    result = Precision()
    used: set[int] = set()
    for repo, findings in reports.items():
        rows = [v for v in ledger if _same_repo(v.repo, repo)]
        for finding in findings:
            if finding.severity != "error":
                continue
            verdict = next((v for v in rows if matches(finding, v)), None)
            for score in (result.by_rule.setdefault(finding.code, Score()),
                          result.by_repo.setdefault(repo.name, Score()), result.total):
                score.add(verdict)
            if verdict is None:
                result.untriaged.append((repo, finding))
            else:
                used.add(verdict.line)
                result.judged.append((repo, finding, verdict))
        result.by_repo.setdefault(repo.name, Score())
    audited = list(reports)
    result.vanished = [v for v in ledger if v.line not in used
                       and any(_same_repo(v.repo, r) for r in audited)]
    return result


@dataclass
class WarningSample:
    """The judged sample of warnings: the rows still reported as warnings, and the rest."""

    judged: list[tuple[Repo, Finding, Verdict]] = field(default_factory=list)
    vanished: list[Verdict] = field(default_factory=list)

    @property
    def worth(self) -> int:
        return sum(v.true for _, _, v in self.judged)

    @property
    def share(self) -> float | None:
        return self.worth / len(self.judged) if self.judged else None


def score_warnings(reports: dict[Repo, list[Finding]], rows: Sequence[Verdict]) -> WarningSample:
    """Match each sampled row of an audited repository to a warning still reported."""
    sample = WarningSample()
    for row in rows:
        repo = next((r for r in reports if _same_repo(row.repo, r)), None)
        if repo is None:
            continue
        found = next((f for f in reports[repo] if f.severity == "warning" and matches(f, row)),
                     None)
        if found is None:
            sample.vanished.append(row)
        else:
            sample.judged.append((repo, found, row))
    return sample


def pick_warnings(reports: dict[Repo, list[Finding]], count: int,
                  rows: Sequence[Verdict]) -> list[tuple[Repo, Finding]]:
    """``count`` warnings not yet in the sample, spread over the repositories in turn, each
    repository's in a fixed pseudo-random order (a hash of what identifies the finding)."""
    def key(repo: Repo, f: Finding) -> str:
        text = f"{repo.name} {f.code} {f.path} {f.qualname} {f.hook}"
        return hashlib.sha256(text.encode()).hexdigest()

    queues = []
    for repo in sorted(reports, key=lambda r: r.name.lower()):
        fresh = [f for f in reports[repo] if f.severity == "warning" and not any(
            _same_repo(v.repo, repo) and matches(f, v) for v in rows)]
        queues.append([(repo, f) for f in sorted(fresh, key=lambda f: key(repo, f))])
    picked: list[tuple[Repo, Finding]] = []
    while len(picked) < count and any(queues):
        for queue in queues:
            if queue and len(picked) < count:
                picked.append(queue.pop(0))
    return picked


@dataclass(frozen=True)
class IncidentResult:
    incident: Incident
    outcome: str  # "error" (caught), "warning", "other" (elsewhere or another rule), "nothing"
    detail: str = ""

    @property
    def caught(self) -> bool:
        return self.outcome == "error"


def judge_incident(incident: Incident, findings: Sequence[Finding]) -> IncidentResult:
    here = [f for f in findings if at_location(f, incident.override)]
    if any(f.severity == "error" and f.code == incident.rule for f in here):
        return IncidentResult(incident, "error")
    if here:
        shown = ", ".join(sorted({f"{f.code} {f.severity}" for f in here}))
        return IncidentResult(incident, "warning" if any(
            f.code == incident.rule for f in here) else "other", shown)
    if findings:
        shown = ", ".join(sorted({f"{f.code} {f.severity}" for f in findings}))
        return IncidentResult(incident, "other", f"elsewhere: {shown}")
    return IncidentResult(incident, "nothing")


def trap_errors(trap: Trap, findings: Sequence[Finding]) -> list[Finding]:
    errors = [f for f in findings if f.severity == "error"]
    return [f for f in errors if at_location(f, trap.where)] if trap.where else errors


# -- running hookguard ------------------------------------------------------------------------

@dataclass
class Audit:
    repo: Repo
    seconds: float
    files: int
    findings: list[Finding]
    not_analysed: dict[str, str]  # path -> reason
    problems: int  # other input problems (unresolved bases and the like)
    notes: list[str]


def _git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if proc.returncode:
        raise BenchError(f"{cwd}: git {' '.join(args)}: {proc.stderr.strip()[:200]}")
    return proc.stdout


def not_analysed(errors: Iterable[dict[str, Any]]) -> dict[str, str]:
    """Files the report says were skipped, each with the reason's first words."""
    skipped: dict[str, str] = {}
    for error in errors:
        message = str(error.get("message", ""))
        if not message.startswith(MODEL_PROBLEMS):
            skipped.setdefault(str(error.get("path", "")), message.split(":")[0][:60])
    return skipped


def _package_commit(revision: str) -> str:
    """The last commit at ``revision`` that changed the package: what a run measures."""
    return _git(ROOT, "log", "-1", "--format=%h", "--abbrev=12", revision, "--",
                "hookguard").strip()


class Hookguard:
    """How to run hookguard: the working tree's, or a committed revision's package."""

    def __init__(self, at: str | None, raw: Path | None, reuse: bool, jobs: int) -> None:
        self.raw, self.reuse = raw, reuse
        self.used: set[str] = set()  # the hookguard versions behind the reports read
        self.env = dict(os.environ)
        self.command: list[str]
        if at is None:
            exe = ROOT / ".venv" / "bin" / "hookguard"
            self.command = [str(exe) if exe.exists() else "hookguard"]
            dirty = _git(ROOT, "status", "--porcelain", "--", "hookguard").strip()
            self.version = _package_commit("HEAD") + (" + uncommitted changes" if dirty else "")
        else:
            self.version = _package_commit(at)
            export = Path(tempfile.mkdtemp(prefix=f"hookguard-{self.version}-"))
            archive = subprocess.run(["git", "archive", at, "hookguard"], cwd=ROOT,
                                     capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", str(export)], input=archive, check=True)
            self.command = [sys.executable, "-m", "hookguard"]
            self.env["PYTHONPATH"] = os.pathsep.join(
                p for p in (str(export), os.environ.get("PYTHONPATH", "")) if p)
        cores = os.cpu_count() or 1
        self.parser_jobs = ["--jobs", str(max(1, cores // jobs))] if jobs > 1 else []

    def run(self, key: str, args: Sequence[str], cwd: Path) -> tuple[dict[str, Any], float]:
        """One hookguard report (and its wall time), stored under ``key`` when ``--raw``."""
        stored = self.raw / f"{key}.json" if self.raw else None
        if self.reuse and stored is not None and stored.exists():
            kept = json.loads(stored.read_text())
            self.used.add(str(kept.get("hookguard", "unknown")))
            return kept["report"], float(kept["seconds"])
        self.used.add(self.version)
        command = [*self.command, *args, "--format", "json", "--exit-zero", "--no-cache",
                   *self.parser_jobs]
        start = time.perf_counter()
        proc = subprocess.run(command, cwd=cwd, env=self.env, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if proc.returncode:
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise BenchError(f"{key}: hookguard exited {proc.returncode}: {last[:300]}")
        try:
            report = json.loads(proc.stdout)
        except json.JSONDecodeError as exc:
            raise BenchError(f"{key}: hookguard wrote no JSON ({exc})") from None
        if stored is not None:
            stored.parent.mkdir(parents=True, exist_ok=True)
            stored.write_text(json.dumps({"hookguard": self.version, "seconds": seconds,
                                          "report": report}))
        return report, seconds


def audit(repo: Repo, clones: Path, hookguard: Hookguard) -> Audit:
    clone = repo.clone(clones)
    if not (clone / ".git").exists():
        raise BenchError(f"{repo.name}: no clone at {clone} (see benchmarks/quality/README)")
    head = _git(clone, "rev-parse", "HEAD").strip()
    if head != repo.commit:
        raise BenchError(f"{repo.name}: {clone} is at {head[:12]}, corpus.toml pins "
                         f"{repo.commit[:12]}: git -C {clone} checkout {repo.commit}")
    report, seconds = hookguard.run(f"audit/{clone.name}", ["audit", *repo.roots], clone)
    tracked = _git(clone, "ls-tree", "-r", "--name-only", repo.commit, "--", *repo.roots)
    skipped = not_analysed(report.get("errors", []))
    return Audit(
        repo, seconds, sum(1 for p in tracked.splitlines() if p.endswith(".py")),
        [Finding.from_json(f) for f in report.get("findings", [])], skipped,
        len(report.get("errors", [])) - sum(1 for e in report.get("errors", [])
                                            if not str(e.get("message", "")).startswith(
                                                MODEL_PROBLEMS)),
        [str(n) for n in report.get("notes", [])],
    )


def check(repo_name: str, commit: str, clones: Path, hookguard: Hookguard) -> list[Finding]:
    clone = clones / repo_name.replace("/", "+")
    if not (clone / ".git").exists():
        raise BenchError(f"{repo_name}: no clone at {clone}")
    report, _ = hookguard.run(
        f"check/{clone.name}-{commit[:12]}",
        ["check", "--repo", str(clone), "--base", f"{commit}^", "--head", commit], clone)
    return [Finding.from_json(f) for f in report.get("findings", [])]


def in_parallel(jobs: int, tasks: Sequence[Callable[[], Any]]) -> list[Any]:
    """Run the tasks (``jobs`` at a time); a task's BenchError becomes its result."""
    def guarded(task: Callable[[], Any]) -> Any:
        try:
            return task()
        except BenchError as exc:
            return exc
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(guarded, tasks))


# -- printing ---------------------------------------------------------------------------------

def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f} %"


_NUMBER = re.compile(r"^(n/a|-?[\d.]+( %)?)$")


def _table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A markdown table; columns that hold only numbers are right-aligned."""
    cells = [[str(c).replace("|", "\\|") for c in row] for row in rows]
    numeric = [bool(cells) and all(_NUMBER.match(row[i]) for row in cells)
               for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---:" if n else "---" for n in numeric) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in cells]
    return "\n".join(lines)


def _score_row(name: str, s: Score) -> list[object]:
    return [name, s.errors, s.triaged, s.true, s.false, s.untriaged, _pct(s.precision)]


SCORE_HEADER = ("", "errors", "triaged", "true", "false", "untriaged", "precision")


def print_audits(audits: Sequence[Audit]) -> None:
    rows = []
    for a in audits:
        severities = Counter(f.severity for f in a.findings)
        rows.append([a.repo.name, a.repo.kind, f"`{a.repo.commit[:12]}`", a.files,
                     severities["error"], severities["warning"], len(a.not_analysed),
                     f"{a.seconds:.1f}"])
    print(_table(("repo", "kind", "commit", "files", "errors", "warnings", "not analysed",
                  "seconds"), rows))
    for a in audits:
        if a.not_analysed:
            reasons = Counter(a.not_analysed.values())
            print(f"- {a.repo.name}: not analysed: "
                  + "; ".join(f"{n} x {r}" for r, n in reasons.most_common()))
        for note in a.notes:
            print(f"- {a.repo.name}: note: {note}")


def print_precision(p: Precision) -> None:
    print(_table(("rule", *SCORE_HEADER[1:]),
                 [_score_row(r, s) for r, s in sorted(p.by_rule.items())]
                 + [_score_row("**all**", p.total)]))
    print()
    print(_table(("repo", *SCORE_HEADER[1:]),
                 [_score_row(r, s) for r, s in sorted(p.by_repo.items(),
                                                      key=lambda i: i[0].lower())]))
    if p.untriaged:
        print(f"\n{len(p.untriaged)} untriaged errors (read the code, then add a ledger row):\n")
        for repo, f in p.untriaged:
            hook = f" (hook `{f.hook}`)" if f.hook else ""
            print(f"- {repo.short} {f.code} {f.path}:{f.line} `{f.qualname}`{hook}: "
                  f"{f.message[:240]}")
        print("\nRows to fill in:\n")
        for repo, f in p.untriaged:
            print(f"| {repo.short} | {f.code} | {f.path} | {f.qualname} |  |  |")
    if p.vanished:
        print(f"\n{len(p.vanished)} ledger rows no finding matches any more (remove them):\n")
        for v in p.vanished:
            print(f"- {LEDGER.name}:{v.line}: {v.repo} {v.rule} {v.path} {v.symbol}")


def print_warnings(sample: WarningSample, picked: Sequence[tuple[Repo, Finding]]) -> None:
    repos = len({r.name for r, _, _ in sample.judged})
    print(f"{sample.worth} of {len(sample.judged)} sampled warnings ({repos} repositories) are "
          f"worth a maintainer's time ({_pct(sample.share)}).\n")
    by_rule: dict[str, list[bool]] = {}
    for _, f, v in sample.judged:
        by_rule.setdefault(f.code, []).append(v.true)
    if by_rule:
        print(_table(("rule", "sampled", "worth it", "share"), [
            [rule, len(ws), sum(ws), _pct(sum(ws) / len(ws))]
            for rule, ws in sorted(by_rule.items())]))
    if sample.vanished:
        print(f"\n{len(sample.vanished)} sampled rows are no longer reported as warnings "
              "(gone, or now errors):\n")
        for v in sample.vanished:
            print(f"- {LEDGER.name}:{v.line}: {v.repo} {v.rule} {v.path} {v.symbol}")
    if picked:
        print(f"\n{len(picked)} more warnings to judge:\n")
        for repo, f in picked:
            print(f"- {repo.short} {f.code} {f.path}:{f.line} `{f.qualname}`: {f.message[:240]}")
        print("\nRows to fill in:\n")
        for repo, f in picked:
            print(f"| {repo.short} | {f.code} | {f.path} | {f.qualname} |  |  |")


def print_recall(results: Sequence[IncidentResult], traps: Sequence[tuple[Trap, list[Finding]]],
                 failures: Sequence[str]) -> None:
    caught = sum(r.caught for r in results)
    share = caught / len(results) if results else None
    print(f"Recall: {caught} / {len(results)} incidents reported at error level by the "
          f"expected rule at the override ({_pct(share)}).\n")
    by_rule: dict[str, list[IncidentResult]] = {}
    for r in results:
        by_rule.setdefault(r.incident.rule, []).append(r)
    if results:
        print(_table(("rule", "incidents", "caught", "recall"), [
            [rule, len(rs), sum(r.caught for r in rs), _pct(sum(r.caught for r in rs) / len(rs))]
            for rule, rs in sorted(by_rule.items())]))
        missed = [r for r in results if not r.caught]
        if missed:
            print("\nMissed:\n")
            for r in missed:
                detail = f": {r.detail}" if r.detail else ""
                print(f"- {r.incident.id} ({r.incident.repo} `{r.incident.commit[:12]}`, "
                      f"{r.incident.rule} at {r.incident.override}): {r.outcome}{detail}")
    bad = [(t, f) for t, f in traps if f]
    print(f"\nTraps: {len(traps) - len(bad)} / {len(traps)} with no error at their place.")
    for trap, found in bad:
        shown = "; ".join(f"{f.code} {f.path}:{f.line} {f.qualname}" for f in found[:5])
        print(f"- {trap.id} ({trap.repo} `{trap.commit[:12]}`): {shown}")
    for failure in failures:
        print(f"- could not run: {failure}")


# -- main -------------------------------------------------------------------------------------

def _selected(names: str | None, repos: Sequence[Repo]) -> list[Repo]:
    if not names:
        return list(repos)
    wanted = {n.strip() for n in names.split(",") if n.strip()}
    chosen = [r for r in repos if r.name in wanted or r.short in wanted]
    unknown = wanted - {r.name for r in chosen} - {r.short for r in chosen}
    if unknown:
        raise BenchError(f"not in the corpus: {', '.join(sorted(unknown))}")
    return chosen


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--repos", help="comma-separated repositories (owner/name or name)")
    parser.add_argument("--only", choices=("precision", "recall"))
    parser.add_argument("--jobs", type=int, default=1, help="hookguard runs at a time")
    parser.add_argument("--json", type=Path, help="write the figures here as JSON")
    parser.add_argument("--at", help="run the hookguard of this committed revision")
    parser.add_argument("--raw", type=Path, help="keep hookguard's reports in this folder")
    parser.add_argument("--reuse", action="store_true", help="read reports kept by --raw")
    parser.add_argument("--clones", type=Path, default=CLONES)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--incidents", type=Path, default=INCIDENTS)
    parser.add_argument("--ledger", type=Path, default=LEDGER)
    parser.add_argument("--sample-warnings", type=int, default=0, metavar="N",
                        help="print N more warnings, not yet judged, to add to the sample")
    args = parser.parse_args(argv)
    if args.reuse and not args.raw:
        parser.error("--reuse needs --raw")
    try:
        corpus = load_corpus(args.corpus)
        repos = _selected(args.repos, corpus)
        incidents, traps = load_incidents(args.incidents)
        hookguard = Hookguard(args.at, args.raw, args.reuse, args.jobs)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    names = {r.name for r in repos}
    incidents = [i for i in incidents if i.repo in names or not args.repos]
    traps = [t for t in traps if t.repo in names or not args.repos]
    out: dict[str, Any] = {"hookguard": hookguard.version,
                           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    print(f"# hookguard quality benchmark: hookguard `{hookguard.version}`, {out['date']}\n")

    if args.only != "recall":
        text = args.ledger.read_text() if args.ledger.exists() else ""
        source = str(args.ledger.relative_to(ROOT) if args.ledger.is_relative_to(ROOT)
                     else args.ledger)
        ledger, problems = parse_ledger(text, source)
        rows, more = parse_ledger(text, source, WARNING_TABLE)
        for problem in problems + more:
            print(f"ledger: {problem}", file=sys.stderr)
        results = in_parallel(args.jobs, [partial(audit, r, args.clones, hookguard)
                                          for r in repos])
        audits = [a for a in results if isinstance(a, Audit)]
        print("## Corpus\n")
        print_audits(audits)
        for failure in results:
            if isinstance(failure, BenchError):
                print(f"- could not audit: {failure}")
        precision = score_precision({a.repo: a.findings for a in audits}, ledger)
        print("\n## Error precision\n")
        print_precision(precision)
        print()
        out["corpus"] = [{"repo": a.repo.name, "commit": a.repo.commit, "kind": a.repo.kind,
                          "files": a.files, "seconds": round(a.seconds, 2),
                          "errors": sum(f.severity == "error" for f in a.findings),
                          "warnings": sum(f.severity == "warning" for f in a.findings),
                          "not_analysed": a.not_analysed, "notes": a.notes} for a in audits]
        out["precision"] = {
            "by_rule": {k: asdict(v) for k, v in precision.by_rule.items()},
            "by_repo": {k: asdict(v) for k, v in precision.by_repo.items()},
            "total": asdict(precision.total),
            "untriaged": [{"repo": r.name, **asdict(f)} for r, f in precision.untriaged],
            "vanished": [asdict(v) for v in precision.vanished],
        }
        reports = {a.repo: a.findings for a in audits}
        sample = score_warnings(reports, rows)
        picked = pick_warnings(reports, args.sample_warnings, rows)
        print("## Warnings worth a maintainer's time\n")
        print_warnings(sample, picked)
        print()
        out["warnings"] = {"sampled": len(sample.judged), "worth": sample.worth,
                           "vanished": [asdict(v) for v in sample.vanished]}

    if args.only != "precision":
        print("## Recall\n")
        if not args.incidents.exists():
            print(f"No incidents yet ({args.incidents} does not exist).")
        else:
            by_commit = sorted({(i.repo, i.commit) for i in incidents}
                               | {(t.repo, t.commit) for t in traps})
            checked = in_parallel(args.jobs, [
                partial(check, repo, commit, args.clones, hookguard)
                for repo, commit in by_commit])
            found = dict(zip(by_commit, checked, strict=True))
            failures = [str(v) for v in checked if isinstance(v, BenchError)]
            recall = [judge_incident(i, found[(i.repo, i.commit)]) for i in incidents
                      if isinstance(found[(i.repo, i.commit)], list)]
            trapped = [(t, trap_errors(t, found[(t.repo, t.commit)])) for t in traps
                       if isinstance(found[(t.repo, t.commit)], list)]
            print_recall(recall, trapped, failures)
            out["recall"] = {
                "incidents": len(recall), "caught": sum(r.caught for r in recall),
                "results": [{"id": r.incident.id, "outcome": r.outcome, "detail": r.detail}
                            for r in recall],
                "traps": len(trapped), "traps_with_errors": [t.id for t, f in trapped if f],
                "failures": failures,
            }
    if len(hookguard.used) > 1:
        print(f"\nNote: these reports come from several hookguard versions: "
              f"{', '.join(sorted(hookguard.used))}.")
    out["hookguard_used"] = sorted(hookguard.used)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
