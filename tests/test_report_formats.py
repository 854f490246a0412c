"""SARIF and GitHub Actions output, from real audits of the fixture repos, checked by shape."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest

from hookguard import __version__
from hookguard.engine import AuditResult, Options, audit
from hookguard.findings import Finding, InputError, Location, Severity
from hookguard.report.github import render_github
from hookguard.report.sarif import render_sarif
from hookguard.rules import ALL_RULES
from tests.conftest import ROOT, GitRepo, load_fixture_builder

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")

build = load_fixture_builder()

M3_OVERRIDE = ("trtllm_mini.attention_backend.sparse.minimax_m3.cache_manager."
               "MiniMaxM3KVCacheManagerV2._build_pool_mapping_tensors")
BROKEN = "trtllm_mini/broken_module.py"


def run_audit(repo: Path) -> AuditResult:
    return audit([repo], Options(use_cache=False))


def sarif_of(result: AuditResult) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(
        render_sarif(result.findings, result.errors, result.root)
    )
    return document


@pytest.fixture(scope="module")
def incident(tmp_path_factory: pytest.TempPathFactory) -> AuditResult:
    """The kvcache incident checkout, plus one file that does not parse."""
    repo = build.build_kvcache_repo(tmp_path_factory.mktemp("sarif") / "kv")
    (repo / BROKEN).write_text("def broken(:\n    pass\n")
    return run_audit(repo)


# -- SARIF -------------------------------------------------------------------------------------
def test_sarif_log_and_driver(incident: AuditResult) -> None:
    log = sarif_of(incident)
    assert log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "hookguard"
    assert driver["version"] == __version__
    assert driver["informationUri"].startswith("https://")
    assert [r["id"] for r in driver["rules"]] == [rule.code for rule in ALL_RULES]
    for entry, rule in zip(driver["rules"], ALL_RULES, strict=True):
        assert entry["name"] == rule.name
        assert entry["shortDescription"]["text"] == rule.summary
        assert entry["help"]["text"] == entry["help"]["markdown"] == rule.documentation()
        assert entry["defaultConfiguration"]["level"] == rule.severity.value
        full = entry["fullDescription"]["text"]
        assert full and "\n" not in full and "#" not in full
        # the first paragraph of "## What it does", words intact
        what = rule.documentation().split("## What it does", 1)[1].strip().split("\n\n")[0]
        assert full == " ".join(what.split())
    assert run["originalUriBaseIds"] == {
        "%SRCROOT%": {"uri": incident.root.resolve().as_uri() + "/"}
    }


def test_sarif_stale_override_documentation_is_real() -> None:
    (entry,) = [r for r in _driver_rules() if r["id"] == "HG001"]
    assert entry["name"] == "stale-override"
    assert entry["fullDescription"]["text"].startswith("Finds methods that were written to "
                                                      "override a base-class hook")
    assert "## Why is this bad?" in entry["help"]["markdown"]


def _driver_rules() -> list[dict[str, Any]]:
    log = json.loads(render_sarif([], [], ROOT))
    rules: list[dict[str, Any]] = log["runs"][0]["tool"]["driver"]["rules"]
    return rules


def test_sarif_results_match_findings(incident: AuditResult) -> None:
    run = sarif_of(incident)["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    results = run["results"]
    assert len(results) == len(incident.findings) >= 2
    for result, finding in zip(results, incident.findings, strict=True):
        assert result["ruleId"] == finding.code
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] == finding.severity.value
        assert result["message"]["text"] == finding.message
        (location,) = result["locations"]
        physical = location["physicalLocation"]
        artifact = physical["artifactLocation"]
        assert artifact["uri"] == finding.path
        assert artifact["uriBaseId"] == "%SRCROOT%"
        assert not artifact["uri"].startswith("/") and "\\" not in artifact["uri"]
        assert "://" not in artifact["uri"]
        assert (incident.root / artifact["uri"]).is_file()
        region = physical["region"]
        assert region == {
            "startLine": finding.line,
            "startColumn": finding.column,
            "endLine": finding.end_line or finding.line,
            "endColumn": finding.end_column or finding.column,
        }
        assert all(value >= 1 for value in region.values())
        if finding.rule == "stale-override":  # the region covers "def name", end exclusive
            line = (incident.root / finding.path).read_text().splitlines()[finding.line - 1]
            span = line[region["startColumn"] - 1 : region["endColumn"] - 1]
            assert span == "def " + finding.symbol.rsplit(".", 1)[1]
        assert result["partialFingerprints"] == {"hookguard/v1": finding.fingerprint}
        assert result["properties"] == {
            "symbol": finding.symbol,
            "hook": finding.hook,
            "evidence": json.loads(json.dumps(finding.evidence)),
        }
        related_locations = result.get("relatedLocations", [])
        assert len(related_locations) == len(finding.related)
        ids = [related["id"] for related in related_locations]
        assert len(set(ids)) == len(ids)
        for related, source in zip(related_locations, finding.related, strict=True):
            assert related["message"]["text"] == source.message
            rel_physical = related["physicalLocation"]
            assert rel_physical["artifactLocation"] == {
                "uri": source.path, "uriBaseId": "%SRCROOT%"
            }
            assert rel_physical["region"]["startLine"] == source.line >= 1


def test_sarif_m3_result_points_at_renamed_hook(incident: AuditResult) -> None:
    results = sarif_of(incident)["runs"][0]["results"]
    (m3,) = [r for r in results if r["properties"]["symbol"] == M3_OVERRIDE]
    expected = next(e for e in build.expected_findings("incident")
                    if e["rule"] == "HG001" and "MiniMax" in str(e["qualname"]))
    location = m3["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == expected["path"]
    assert location["region"]["startLine"] == expected["line"]
    assert m3["properties"]["hook"] == "_prepare_page_table_tensor"
    assert m3["properties"]["evidence"]["new"] == "_prepare_page_table_tensor"
    (related,) = m3["relatedLocations"]
    assert related["physicalLocation"]["artifactLocation"]["uri"] == build.BASE
    assert "_prepare_page_table_tensor" in related["message"]["text"]


def test_sarif_input_errors_are_notifications(incident: AuditResult) -> None:
    assert [e.path for e in incident.errors] == [BROKEN]
    (invocation,) = sarif_of(incident)["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is True
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == "error"
    assert incident.errors[0].message in note["message"]["text"]
    physical = note["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"] == {"uri": BROKEN, "uriBaseId": "%SRCROOT%"}
    assert physical["region"]["startLine"] == incident.errors[0].line >= 1


def test_sarif_fingerprint_survives_moving_the_def(tmp_path: Path) -> None:
    repo_root = build.build_kvcache_repo(tmp_path / "kv")
    before = _m3_result(repo_root)

    path = repo_root / before["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    line = before["locations"][0]["physicalLocation"]["region"]["startLine"]
    lines = path.read_text().splitlines(keepends=True)
    lines[line - 1 : line - 1] = ["\n", "\n", "\n"]
    path.write_text("".join(lines))
    repo = GitRepo.__new__(GitRepo)
    repo.root = repo_root
    repo.commit("Add blank lines above the stale override")

    after = _m3_result(repo_root)
    moved = after["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert moved == line + 3
    assert after["partialFingerprints"] == before["partialFingerprints"]
    assert after["ruleId"] == before["ruleId"]


def _m3_result(repo: Path) -> dict[str, Any]:
    results: list[dict[str, Any]] = sarif_of(run_audit(repo))["runs"][0]["results"]
    (m3,) = [r for r in results if r["properties"]["symbol"] == M3_OVERRIDE]
    return m3


def test_sarif_synthetic_edge_cases(tmp_path: Path) -> None:
    finding = synthetic(path="dir with space/a:b,c.py", end=False)
    finding.related.append(Location("pkg/base.py", 7, 1))
    log = json.loads(render_sarif([finding], [InputError("pkg/x.py", 0, "unreadable")], tmp_path))
    (result,) = log["runs"][0]["results"]
    physical = result["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == "dir%20with%20space/a%3Ab,c.py"
    assert physical["region"] == {"startLine": 3, "startColumn": 5, "endLine": 3,
                                  "endColumn": 5}
    assert result["relatedLocations"][0]["message"]["text"] == "pkg/base.py:7"
    (note,) = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert "region" not in note["locations"][0]["physicalLocation"]  # line 0 is no region


# -- GitHub workflow commands ------------------------------------------------------------------
def synthetic(
    *,
    path: str = "pkg/mod.py",
    message: str = "stale",
    severity: Severity = Severity.ERROR,
    index: int = 0,
    end: bool = True,
) -> Finding:
    return Finding(
        rule="stale-override",
        code="HG001",
        severity=severity,
        path=path,
        line=3 + index,
        column=5,
        symbol=f"pkg.mod.Child.hook_{index}",
        hook=f"hook_{index}",
        message=message,
        end_line=3 + index if end else None,
        end_column=14 if end else None,
    )


@pytest.fixture
def no_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


@pytest.mark.usefixtures("no_summary")
def test_github_escaping_matches_actions_toolkit() -> None:
    finding = synthetic(path="pkg/a,b:c.py", message="100% stale: a, b\nnext line\r\nlast")
    out = render_github([finding], [], [], "hookguard: 1 error")
    first = out.splitlines()[0]
    assert first == (
        "::error file=pkg/a%2Cb%3Ac.py,line=3,col=5,endLine=3,endColumn=14,"
        "title=HG001 stale-override::100%25 stale: a, b%0Anext line%0D%0Alast"
    )
    assert out.splitlines()[-1] == "hookguard: 1 error"


@pytest.mark.usefixtures("no_summary")
def test_github_warning_and_input_error_commands() -> None:
    warning = synthetic(severity=Severity.WARNING, end=False)
    out = render_github([warning], [InputError("pkg/bad.py", 2, "syntax error: x, y")],
                        ["history: shallow clone"], "summary")
    assert out.splitlines() == [  # errors, then warnings, then notices
        "::error file=pkg/bad.py,line=2,title=hookguard input problem%3A file not analysed::"
        "syntax error: x, y",
        "::warning file=pkg/mod.py,line=3,col=5,endLine=3,endColumn=5,"
        "title=HG001 stale-override::stale",
        "::notice title=hookguard::history: shallow clone",
        "summary",
    ]


@pytest.mark.usefixtures("no_summary")
def test_github_input_problem_of_an_analysed_file_is_a_warning() -> None:
    """A base class that does not resolve leaves the file analysed and the run passing: a
    warning named as an input problem, never an error (issue 26, item 9)."""
    problem = InputError("pkg/c.py", 4, "cannot resolve base class 'Gone' of C (...)")
    out = render_github([], [problem], [], "hookguard: 0 errors, 0 warnings; 1 input problem")
    assert out.splitlines()[0] == (
        "::warning file=pkg/c.py,line=4,title=hookguard input problem::cannot resolve base "
        "class 'Gone' of C (...)")


def test_github_step_summary_names_input_problems(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary_file = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary_file))
    errors = [InputError("pkg/c.py", 4, "cannot resolve base class 'Gone' of C (...)"),
              InputError("pkg/bad.py", 1, "syntax error: invalid syntax")]
    render_github([], errors, [], "hookguard: 0 errors, 0 warnings")
    section = summary_file.read_text()
    assert "| 0 | 0 | 1 | 1 |" in section
    assert r"| `pkg/c.py:4` | analysed | cannot resolve base class 'Gone' of C (...) |" in section
    assert "| `pkg/bad.py:1` | **not analysed** | syntax error: invalid syntax |" in section


@pytest.mark.usefixtures("no_summary")
def test_github_multiline_finding_has_no_columns() -> None:
    finding = synthetic()
    finding.end_line = 6
    (first, _) = render_github([finding], [], [], "s").splitlines()
    assert first.startswith("::error file=pkg/mod.py,line=3,endLine=6,title=")
    assert "col=" not in first and "endColumn=" not in first


def test_github_caps_annotations_per_severity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary_file = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary_file))
    errors = [synthetic(index=i, message=f"error {i}") for i in range(12)]
    warnings = [synthetic(index=20 + i, severity=Severity.WARNING) for i in range(3)]
    bad = InputError("pkg/bad.py", 1, "syntax error")
    out = render_github([*errors, *warnings], [bad], [], "hookguard: 12 errors, 3 warnings")
    lines = out.splitlines()
    error_lines = [line for line in lines if line.startswith("::error ")]
    assert len(error_lines) == 10
    assert [line.rsplit("::", 1)[1] for line in error_lines] == [f"error {i}" for i in range(10)]
    assert len([line for line in lines if line.startswith("::warning ")]) == 3
    assert lines[-2:] == [
        "hookguard: 3 more errors not annotated; see the job summary",
        "hookguard: 12 errors, 3 warnings",
    ]
    assert sum(not line.startswith("::") for line in lines) == 2


@pytest.mark.usefixtures("no_summary")
def test_github_overflow_of_both_kinds_without_job_summary() -> None:
    findings = [synthetic(index=i) for i in range(11)]
    findings += [synthetic(index=i, severity=Severity.WARNING) for i in range(12)]
    lines = render_github(findings, [], [], "s").splitlines()
    assert len([line for line in lines if line.startswith("::warning ")]) == 10
    assert lines[-2] == ("hookguard: 1 more error and 2 more warnings not annotated; "
                         "run `hookguard audit --format plain` for the full list")


def test_github_step_summary_is_appended(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    summary_file = tmp_path / "step_summary.md"
    earlier = "# Tests\n\n42 passed ✓"  # no final newline, a multi-byte last character
    summary_file.write_text(earlier, encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary_file))
    findings = [synthetic(index=i, message=f"a | b <locals> {i}") for i in range(12)]
    findings.append(synthetic(index=99, severity=Severity.WARNING, message="line 1\nline 2"))
    bad = InputError("pkg/bad.py", 4, "syntax error")
    stdout = render_github(findings, [bad], ["one note"], "hookguard: 12 errors, 1 warning")

    text = summary_file.read_text(encoding="utf-8")
    assert text.startswith(earlier + "\n\n## hookguard\n")
    section = text[len(earlier):]
    assert "## hookguard" in section and "hookguard: 12 errors, 1 warning" in section
    # errors, warnings, files not analysed, other input problems
    assert "| errors | warnings | files not analysed | other input problems |" in section
    assert "| 12 | 1 | 1 | 0 |" in section
    assert "### Input problems" in section and "Files not checked" not in section
    assert "| `pkg/bad.py:4` | **not analysed** | syntax error |" in section
    rows = [line for line in section.splitlines() if line.startswith("| HG001 ")]
    assert len(rows) == 13  # every finding, not only the annotated ones
    for i in range(12):
        row = next(r for r in rows if f"`pkg/mod.py:{3 + i}`" in r)
        assert rf"a \| b \<locals\> {i}" in row
        assert f"`pkg.mod.Child.hook_{i}`" in row
        # escaped pipes do not split cells: code, severity, location, symbol, message
        assert len(re.split(r"(?<!\\)\|", row)) == 7
        assert "| error |" in row
    warning_row = next(r for r in rows if "| warning |" in r)
    assert "line 1<br>line 2" in warning_row
    assert "`pkg/bad.py:4`" in section and "one note" in section
    assert "see the job summary" in stdout

    render_github(findings[:1], [], [], "second run")
    again = summary_file.read_text(encoding="utf-8")
    assert again.startswith(text) and again.count("## hookguard") == 2
    assert "second run" in again[len(text):]


def test_github_real_audit(incident: AuditResult, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    lines = render_github(incident.findings, incident.errors, incident.notes, "s").splitlines()
    m3 = next(f for f in incident.findings if f.symbol == M3_OVERRIDE)
    assert (
        f"::error file={m3.path},line={m3.line},col={m3.column},endLine={m3.line},"
        f"endColumn={m3.end_column},title=HG001 stale-override::{m3.message}"
    ) in lines
    assert any(line.startswith(f"::error file={BROKEN},line=1,") for line in lines)


# -- integration files -------------------------------------------------------------------------
def test_pre_commit_manifest_is_valid() -> None:
    clientlib = pytest.importorskip("pre_commit.clientlib")
    hook, fix = clientlib.load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))
    assert hook["id"] == "hookguard"
    # The fix a blocked commit points to, for set-ups with no hookguard on PATH (manual stage).
    assert fix["id"] == "hookguard-fix" and fix["stages"] == ["manual"]
    assert shlex.split(fix["entry"]) == ["hookguard", "fix", "--staged"]
    assert hook["language"] == "python"
    assert hook["require_serial"] is True
    assert hook["pass_filenames"] is False  # the whole checkout is modeled, not the changed set
    assert shlex.split(hook["entry"])[0] == "hookguard"
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'hookguard = "hookguard.cli:main"' in pyproject


def test_ci_doc_workflow_is_valid_yaml() -> None:
    yaml = pytest.importorskip("yaml")
    text = (ROOT / "docs" / "ci.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
    workflow = next(yaml.safe_load(b) for b in blocks if "jobs:" in b)
    assert workflow["permissions"]["security-events"] == "write"
    steps = next(iter(workflow["jobs"].values()))["steps"]
    checkout = next(s for s in steps if str(s.get("uses", "")).startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] == 0
    runs = " ".join(str(s.get("run", "")) for s in steps)
    assert "--format github" in runs and "--format sarif --output hookguard.sarif" in runs
    upload = next(s for s in steps
                  if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif@"))
    assert upload["if"] == "always()"
    pre_commit = next(yaml.safe_load(b) for b in blocks if "repos:" in b)
    (local,) = pre_commit["repos"]
    assert local["repo"] == "local" and "rev" not in local  # no release is tagged yet
    (hook,) = local["hooks"]
    manifest = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())[0]
    for key in ("id", "entry", "pass_filenames", "require_serial", "types"):
        assert hook[key] == manifest[key], key  # the same hook as the published one
    assert hook["language"] == "system"
    html_step = next(s for s in steps if "report --html" in str(s.get("run", "")))
    assert html_step["if"] == "always()" and "--exit-zero" in html_step["run"]
