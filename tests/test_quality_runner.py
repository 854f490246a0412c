"""``benchmarks/quality.py``: the triage ledger, the scoring, and one run on a real repository."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import ROOT, GitRepo


def _quality() -> ModuleType:
    name = "hookguard_bench_quality"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / "quality.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


q = _quality()

LEDGER = """\
# Validation

## Results

| repo | rule | path | symbol | verdict | reason |
|---|---|---|---|---|---|
| widgets | HG001 | not/the/ledger.py | A.b | true | a results table with the same columns |

## Triage ledger

| repo | rule | path | symbol | verdict | reason |
|---|---|---|---|---|---|
| widgets | HG001 | plugins/sparse.py | SparseManager.build_tables | true | base renamed it |
| acme/widgets | HG002 | `plugins/sparse.py` | `SparseManager.close [close]` | false | a \\| b |

### More rows, one level down

| repo | rule | path | symbol | verdict | reason |
|---|---|---|---|---|---|
| widgets | HG003 | core/x.py | X.y | maybe | not read yet |
| widgets | HG003 | core/x.py | X.z | false | |
| widgets | HG003 | core/x.py | X.w | false | counter, not state |

## History

| repo | rule | path | symbol | verdict | reason |
|---|---|---|---|---|---|
| widgets | HG001 | old/history.py | Old.row | false | after the ledger section |
"""


def finding(code: str = "HG001", path: str = "plugins/sparse.py",
            symbol: str = "plugins.sparse.SparseManager.build_tables", hook: str = "",
            severity: str = "error") -> object:
    return q.Finding(code, severity, path, 5, symbol, hook, "message")


def test_ledger_reads_only_its_section_and_names_bad_rows() -> None:
    verdicts, problems = q.parse_ledger(LEDGER, "v.md")
    assert [(v.rule, v.path, v.symbol, v.true) for v in verdicts] == [
        ("HG001", "plugins/sparse.py", "SparseManager.build_tables", True),
        ("HG002", "plugins/sparse.py", "SparseManager.close [close]", False),
        ("HG003", "core/x.py", "X.w", False),
    ]
    assert verdicts[1].reason == "a | b"
    assert verdicts[1].qualname == "SparseManager.close" and verdicts[1].hook == "close"
    assert verdicts[0].hook is None
    assert problems == ["v.md:20: verdict must be true or false, not 'maybe'",
                        "v.md:21: a verdict needs a reason"]


def test_qualname_strips_the_longest_module_suffix_of_the_path() -> None:
    assert finding().qualname == "SparseManager.build_tables"
    src = finding(path="src/pkg/mod.py", symbol="pkg.mod.Outer.Inner.run")
    assert src.qualname == "Outer.Inner.run"
    package = finding(path="pkg/sub/__init__.py", symbol="pkg.sub.Base.hook")
    assert package.qualname == "Base.hook"
    namespace = finding(path="a/b/c.py", symbol="b.c.K.m")  # module named from a deeper root
    assert namespace.qualname == "K.m"


def test_a_ledger_row_matches_rule_path_symbol_and_optional_hook() -> None:
    verdicts, _ = q.parse_ledger(LEDGER)
    stale, drift, _ = verdicts
    assert q.matches(finding(), stale)
    assert not q.matches(finding(code="HG002"), stale)
    assert not q.matches(finding(path="plugins/other.py"), stale)
    assert not q.matches(finding(symbol="plugins.sparse.DenseManager.build_tables"), stale)
    close = "plugins.sparse.SparseManager.close"
    assert q.matches(finding(code="HG002", symbol=close, hook="close"), drift)
    assert not q.matches(finding(code="HG002", symbol=close, hook="open"), drift)


def test_precision_counts_only_triaged_errors_and_lists_the_rest() -> None:
    verdicts, _ = q.parse_ledger(LEDGER)
    repo = q.Repo("acme/widgets", "0" * 40, "plugin")
    other = q.Repo("acme/gadgets", "1" * 40, "web")
    reports = {
        repo: [
            finding(),  # true
            finding(code="HG002", symbol="plugins.sparse.SparseManager.close", hook="close"),
            finding(code="HG003", path="core/new.py", symbol="core.new.N.m"),  # untriaged
            finding(code="HG002", severity="warning"),  # warnings are not scored
        ],
        other: [],
    }
    result = q.score_precision(reports, verdicts)
    assert (result.total.errors, result.total.true, result.total.false) == (3, 1, 1)
    assert result.total.untriaged == 1 and result.total.precision == 0.5
    assert result.by_rule["HG001"].precision == 1.0
    assert result.by_rule["HG003"].precision is None
    assert result.by_repo["acme/gadgets"].errors == 0
    assert [f.path for _, f in result.untriaged] == ["core/new.py"]
    assert [v.symbol for v in result.vanished] == ["X.w"]  # nothing reports it any more
    assert q.score_precision({other: []}, verdicts).vanished == []  # widgets not audited


SAMPLE = """\
## Triage ledger

| repo | rule | path | symbol | verdict | reason |
|---|---|---|---|---|---|
| widgets | HG001 | plugins/sparse.py | SparseManager.build_tables | true | renamed |

## Warning sample

| repo | rule | path | symbol | worth | reason |
|---|---|---|---|---|---|
| widgets | HG002 | plugins/sparse.py | SparseManager.close | yes | a keyword callers pass |
| widgets | HG003 | core/x.py | X.y | no | a counter |
| widgets | HG002 | core/gone.py | Gone.m | no | no longer reported |
| widgets | HG002 | core/x.py | X.z | true | not a worth word |
"""


def test_warning_sample_is_its_own_table_scored_on_warnings_still_reported() -> None:
    ledger, _ = q.parse_ledger(SAMPLE)
    assert [v.symbol for v in ledger] == ["SparseManager.build_tables"]
    rows, problems = q.parse_ledger(SAMPLE, "v.md", q.WARNING_TABLE)
    assert [(v.symbol, v.true) for v in rows] == [
        ("SparseManager.close", True), ("X.y", False), ("Gone.m", False)]
    assert problems == ["v.md:14: worth must be yes or no, not 'true'"]
    repo = q.Repo("acme/widgets", "0" * 40, "plugin")
    reports = {repo: [
        finding(code="HG002", symbol="plugins.sparse.SparseManager.close", severity="warning"),
        finding(code="HG003", path="core/x.py", symbol="core.x.X.y", severity="warning"),
        finding(code="HG002", path="core/gone.py", symbol="core.gone.Gone.m"),  # now an error
    ]}
    sample = q.score_warnings(reports, rows)
    assert [f.qualname for _, f, _ in sample.judged] == ["SparseManager.close", "X.y"]
    assert (sample.worth, sample.share) == (1, 0.5)
    assert [v.symbol for v in sample.vanished] == ["Gone.m"]


def test_warnings_to_judge_are_new_ones_spread_over_repositories() -> None:
    a = q.Repo("acme/a", "0" * 40, "web")
    b = q.Repo("acme/b", "1" * 40, "web")
    reports = {
        a: [finding(path=f"a{i}.py", symbol=f"a{i}.K.m", severity="warning") for i in range(5)]
        + [finding(path="err.py", symbol="err.K.m")],
        b: [finding(path="b0.py", symbol="b0.K.m", severity="warning")],
    }
    judged, _ = q.parse_ledger(
        "## Warning sample\n\n| repo | rule | path | symbol | worth | reason |\n|-|-|-|-|-|-|\n"
        "| a | HG001 | a0.py | K.m | no | judged already |\n", table=q.WARNING_TABLE)
    picked = q.pick_warnings(reports, 3, judged)
    assert [r.short for r, _ in picked] == ["a", "b", "a"]
    assert all(f.severity == "warning" and f.path != "a0.py" for _, f in picked)
    assert q.pick_warnings(reports, 3, judged) == picked  # the same order every time
    assert len(q.pick_warnings(reports, 50, judged)) == 5


def test_incident_is_caught_only_by_an_error_of_its_rule_at_the_override() -> None:
    incident = q.Incident("i1", "acme/widgets", "c" * 40, "HG001",
                          "plugins/sparse.py::SparseManager.build_tables")
    assert q.judge_incident(incident, [finding()]).caught
    warned = q.judge_incident(incident, [finding(severity="warning")])
    assert (warned.caught, warned.outcome) == (False, "warning")
    other = q.judge_incident(incident, [finding(code="HG002")])
    assert other.outcome == "other" and "HG002 error" in other.detail
    elsewhere = q.judge_incident(incident, [finding(path="plugins/dense.py")])
    assert elsewhere.outcome == "other" and elsewhere.detail.startswith("elsewhere")
    assert q.judge_incident(incident, []).outcome == "nothing"
    local = q.Incident("i2", "acme/widgets", "c" * 40, "HG001", "plugins/sparse.py::Sparse.m")
    nested = finding(symbol="plugins.sparse.make.<locals>.Sparse.m")
    assert q.judge_incident(local, [nested]).caught


def test_trap_counts_errors_at_its_place_or_anywhere() -> None:
    here = q.Trap("t1", "acme/widgets", "c" * 40, "plugins/sparse.py::SparseManager.build_tables")
    anywhere = q.Trap("t2", "acme/widgets", "c" * 40, "")
    elsewhere = finding(path="plugins/dense.py", symbol="plugins.dense.D.m")
    assert q.trap_errors(here, [elsewhere]) == []
    assert q.trap_errors(here, [finding(severity="warning")]) == []
    assert q.trap_errors(here, [finding()]) == [finding()]
    assert q.trap_errors(anywhere, [elsewhere]) == [elsewhere]


def test_tables_right_align_only_numeric_columns() -> None:
    table = q._table(("repo", "errors", "precision"), [["a/b", 3, "50.0 %"], ["c/d", 0, "n/a"]])
    assert table.splitlines()[1] == "|---|---:|---:|"
    assert table.splitlines()[2] == "| a/b | 3 | 50.0 % |"


def test_files_not_analysed_exclude_model_problems() -> None:
    errors = [
        {"path": "a.py", "line": 3, "message": "syntax error: invalid syntax"},
        {"path": "a.py", "line": 9, "message": "syntax error: again"},
        {"path": "b.py", "line": 1, "message": "cannot resolve base class 'x.Y' of Z (...)"},
        {"path": "c.py", "line": 0, "message": "skipped: 3.0 MiB is over max-file-size"},
    ]
    assert q.not_analysed(errors) == {"a.py": "syntax error", "c.py": "skipped"}


def test_bad_corpus_rows_are_named(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.toml"
    corpus.write_text('[[repo]]\nname = "acme/widgets"\nkind = "web"\n')
    with pytest.raises(q.BenchError, match=r"acme/widgets: missing commit"):
        q.load_corpus(corpus)
    assert q.load_incidents(tmp_path / "absent.toml") == ([], [])


BASE = """
class Manager:
    def __init__(self):
        self.build_tables()

    def build_tables(self):
        self.tables = []
"""
CHILD = """
from core.manager import Manager


class SparseManager(Manager):
    def build_tables(self):
        self.tables = [1, 2, 3]
"""


def test_runner_end_to_end_on_a_real_repository(
    tmp_path: Path, git_repo: Callable[..., GitRepo], capsys: pytest.CaptureFixture[str]
) -> None:
    clones = tmp_path / "clones"
    repo = GitRepo(clones / "acme+widgets")
    repo.commit("Add manager", {"core/__init__.py": "", "core/manager.py": BASE,
                                "plugins/__init__.py": "", "plugins/sparse.py": CHILD})
    rename = repo.commit("Rename the hook",
                         {"core/manager.py": BASE.replace("build_tables", "prepare_tables")})
    harmless = repo.commit("Unrelated", {"core/util.py": "def helper():\n    return 1\n"})
    (tmp_path / "corpus.toml").write_text(
        f'[[repo]]\nname = "acme/widgets"\ncommit = "{harmless}"\nkind = "plugin"\n')
    (tmp_path / "incidents.toml").write_text(
        f'[[incident]]\nid = "rename"\nrepo = "acme/widgets"\ncommit = "{rename}"\n'
        'rule = "HG001"\noverride = "plugins/sparse.py::SparseManager.build_tables"\n\n'
        f'[[trap]]\nid = "unrelated"\nrepo = "acme/widgets"\ncommit = "{harmless}"\n'
        'where = ""\n')
    (tmp_path / "ledger.md").write_text(
        "## Triage ledger\n\n| repo | rule | path | symbol | verdict | reason |\n|-|-|-|-|-|-|\n"
        "| widgets | HG001 | plugins/sparse.py | SparseManager.build_tables | true | renamed |\n")
    out = tmp_path / "out.json"
    code = q.main(["--clones", str(clones), "--corpus", str(tmp_path / "corpus.toml"),
                   "--incidents", str(tmp_path / "incidents.toml"),
                   "--ledger", str(tmp_path / "ledger.md"), "--json", str(out)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    figures = json.loads(out.read_text())
    assert len(figures["corpus"]) == 1, printed
    assert figures["corpus"][0]["files"] == 5 and figures["corpus"][0]["errors"] == 1
    assert figures["precision"]["total"] == {"errors": 1, "true": 1, "false": 0}
    assert figures["precision"]["untriaged"] == []
    assert figures["recall"]["caught"] == 1 and figures["recall"]["incidents"] == 1
    assert figures["recall"]["traps"] == 1 and figures["recall"]["traps_with_errors"] == []
    assert "Recall: 1 / 1" in printed

    raw = tmp_path / "raw"
    common = ["--clones", str(clones), "--corpus", str(tmp_path / "corpus.toml"),
              "--incidents", str(tmp_path / "incidents.toml"),
              "--ledger", str(tmp_path / "ledger.md"), "--raw", str(raw)]
    assert q.main([*common, "--json", str(out)]) == 0
    kept = raw / "audit" / "acme+widgets.json"
    report = json.loads(kept.read_text())
    report["hookguard"] = "an-older-one"
    kept.write_text(json.dumps(report))
    capsys.readouterr()
    assert q.main([*common, "--reuse", "--json", str(tmp_path / "again.json")]) == 0
    again = json.loads((tmp_path / "again.json").read_text())
    assert again["precision"] == figures["precision"] and again["recall"] == figures["recall"]
    assert "an-older-one" in again["hookguard_used"]
    assert "several hookguard versions" in capsys.readouterr().out

    repo.git("checkout", "-q", rename)  # the clone no longer sits at the pinned commit
    assert q.main(["--clones", str(clones), "--corpus", str(tmp_path / "corpus.toml"),
                   "--only", "precision", "--ledger", str(tmp_path / "ledger.md")]) == 0
    assert "corpus.toml pins" in capsys.readouterr().out


# -- benchmarks/mine_incidents.py: the miners that propose candidates --------------------------

def _miner() -> ModuleType:
    name = "hookguard_bench_miner"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / "mine_incidents.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _mine(repo: GitRepo, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    miner = _miner()
    miner.parse.cache_clear()
    miner.classes_named.cache_clear()
    miner._SOURCES.clear()
    capsys.readouterr()
    assert miner.main([str(repo.root), *args]) == 0
    return capsys.readouterr().out


HOOKS = """
class Base:
    def run(self):
        return self.hook(1)

    def hook(self, a):
        return a


class Sub(Base):
    def hook(self, a):
        return a + 1

    def helper(self, a):
        return a
"""


def test_miner_fixes_finds_a_widened_override_and_the_commit_that_broke_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = GitRepo(tmp_path / "widen")
    repo.commit("Add hooks", {"pkg/hooks.py": HOOKS})
    base_def = "def hook(self, a):\n        return a\n"
    broke = repo.commit("Pass extra", {"pkg/hooks.py": HOOKS.replace(
        "self.hook(1)", "self.hook(1, extra=2)").replace(
        base_def, base_def.replace("a):", "a, extra=None):"))})
    stale = (tmp_path / "widen/pkg/hooks.py").read_text()
    fixed = repo.commit("Fix Sub", {"pkg/hooks.py": stale.replace(
        "def hook(self, a):", "def hook(self, a, extra=None):")})
    out = _mine(repo, capsys, "--fixes")
    assert f"fix-of-drift      {fixed[:12]}" in out
    assert "pkg/hooks.py::Sub.hook gained extra" in out and f"introduced by: {broke}" in out
    assert "base: pkg/hooks.py::Base.hook" in out

    # a widened def that no ancestor defines (Sub.helper) is no fix of a drift
    repo.commit("Widen helper", {"pkg/hooks.py": (tmp_path / "widen/pkg/hooks.py").read_text()
                                 .replace("def helper(self, a):", "def helper(self, a, b=0):")})
    assert "Sub.helper" not in _mine(repo, capsys, "--fixes")

    # nor is naming a keyword that the override's **kwargs already absorbed
    kwargs_repo = GitRepo(tmp_path / "absorbed")
    absorbed = HOOKS.replace("def hook(self, a):", "def hook(self, a, more=None):", 1).replace(
        "def hook(self, a):", "def hook(self, a, **kwargs):")
    kwargs_repo.commit("Add hooks", {"pkg/hooks.py": absorbed})
    named = kwargs_repo.commit("Name it", {"pkg/hooks.py": absorbed.replace(
        "def hook(self, a, **kwargs):", "def hook(self, a, more=None, **kwargs):")})
    assert named[:12] not in _mine(kwargs_repo, capsys, "--fixes")

    # nor is a parameter renamed in place to the ancestor's name (callers pass it positionally)
    renamed_repo = GitRepo(tmp_path / "renamed")
    aligned = HOOKS.replace("def hook(self, a):", "def hook(self, a, extra=None):", 1)
    renamed_repo.commit("Add hooks", {"pkg/hooks.py": aligned.replace(
        "def hook(self, a):", "def hook(self, a, other=None):")})
    rename = renamed_repo.commit("Rename it", {"pkg/hooks.py": aligned.replace(
        "def hook(self, a):", "def hook(self, a, extra=None):")})
    assert rename[:12] not in _mine(renamed_repo, capsys, "--fixes")


SIBLINGS = """
class Executor:
    def connect(self, request):
        raise NotImplementedError


class RayExecutor(Executor):
    def connect(self, engine_id, request):
        return engine_id, request


class UniExecutor(Executor):
    def connect(self, request):
        return request
"""


def test_miner_fixes_reads_a_sibling_when_the_base_itself_lags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = GitRepo(tmp_path / "siblings")
    repo.commit("Add executors", {"pkg/executor.py": SIBLINGS})
    repo.commit("Call with the engine id", {"pkg/conn.py": (
        "def connect(executor, request):\n"
        "    return executor.connect(engine_id=1, request=request)\n")})
    fixed = repo.commit("Fix UniExecutor", {"pkg/executor.py": SIBLINGS.replace(
        "    def connect(self, request):\n        return request",
        "    def connect(self, engine_id, request):\n        return request")})
    out = _mine(repo, capsys, "--fixes")
    assert f"fix-of-drift      {fixed[:12]}" in out
    assert "base: pkg/executor.py::RayExecutor.connect" in out
    assert "UniExecutor.connect gained engine_id" in out


TEMPLATES = """
class Template:
    def render(self, text, **kwargs):
        return text


class Plain(Template):
    def render(self, text):
        return text


class Unrelated:
    def render(self, text):
        return text
"""
ENGINE = """
class Engine:
    def __init__(self, template):
        self.template = template

    def go(self, text):
        return self.template.render(text)
"""


def test_miner_composition_reports_a_family_member_that_cannot_bind_the_new_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = GitRepo(tmp_path / "compose")
    repo.commit("Add engine", {"pkg/templates.py": TEMPLATES, "pkg/engine.py": ENGINE})
    change = repo.commit("Pass tools", {"pkg/engine.py": ENGINE.replace(
        "render(text)", "render(text, tools=None)")})
    out = _mine(repo, capsys, "--composition")
    assert f"new-argument      {change[:12]}" in out
    assert "base: pkg/templates.py::Template.render" in out
    assert "pkg/templates.py:7 Plain < Template: no parameter tools (file untouched)" in out
    assert "Unrelated" not in out  # not in the family: its def says nothing about this call
    assert change[:12] not in _mine(repo, capsys)  # composition calls are opt-in


FACTORY = """
class Factory:
    @classmethod
    def make(cls):
        return cls.build(1)

    @classmethod
    def build(cls, a):
        return a


class Special(Factory):
    @classmethod
    def build(cls, a):
        return a * 2
"""


def test_miner_reads_classmethod_hooks_called_through_cls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = GitRepo(tmp_path / "factory")
    repo.commit("Add factory", {"pkg/factory.py": FACTORY})
    change = repo.commit("Pass b", {"pkg/factory.py": FACTORY.replace(
        "cls.build(1)", "cls.build(1, b=2)").replace(
        "def build(cls, a):\n        return a\n", "def build(cls, a, b=0):\n        return a\n")})
    out = _mine(repo, capsys)
    assert f"new-argument      {change[:12]}" in out
    assert "Special < Factory: no parameter b" in out
