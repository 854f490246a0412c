"""The GitHub Action (``action.yml``, issue 12, item 3), run step by step on local clones.

The runner is played here as GitHub plays it: ``${{ }}`` expressions and ``if:`` conditions are
evaluated against the inputs, the ``github`` context and earlier steps' outputs; each ``run:``
script runs in bash with ``GITHUB_OUTPUT``, ``GITHUB_STEP_SUMMARY``, ``GITHUB_WORKSPACE`` and
the rest set; a step's outputs are read back from its ``GITHUB_OUTPUT`` file. Steps that use other
actions cannot run here: their inputs are checked instead (the Python version passed on, the
cache path and keys, the SARIF file), and ``actions/cache`` is played by copying the folder to
and from a store keyed as GitHub keys it (exact key, then each restore key as a prefix, newest
first). The install step runs with a ``python`` on PATH that records the pip command and
passes everything else to the interpreter running these tests, where hookguard is installed.

PyYAML parses ``action.yml``: it comes with pre-commit, one of the test dependencies.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from hookguard.model.cache import CACHE_DIR_NAME
from tests.conftest import ROOT, GitRepo

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())

BASE = """
class Manager:
    def __init__(self):
        self.build_tables()
        self.warm_up(2)

    def build_tables(self):
        self.tables = []

    def warm_up(self, rounds):
        self.rounds = rounds
"""
CHILD = """
from core.manager import Manager


class SparseManager(Manager):
    def build_tables(self):
        self.tables = [1, 2, 3]
"""
NARROW = """
from core.manager import Manager


class QuietManager(Manager):
    def warm_up(self):
        self.rounds = 0
"""


# -- the expression language, as much of it as action.yml uses --------------------------------
_TOKEN = re.compile(r"\s*(?:(\|\||&&|==|!=|!|\(|\)|,)|'((?:[^']|'')*)'|([A-Za-z_][\w.-]*))")


def evaluate(expression: str, context: Mapping[str, object]) -> str | bool:
    """A GitHub Actions expression: context paths (``steps.run.outputs.exit-code``; a missing
    one is ''), string literals, ``==``/``!=`` (case-insensitive on strings, as GitHub),
    ``!``, ``&&``, ``||``, parentheses, and calls of the functions in ``context["functions"]``
    (``hashFiles('pyproject.toml')``)."""
    tokens: list[tuple[str, str]] = []
    at = 0
    text = expression.strip()
    while at < len(text):
        match = _TOKEN.match(text, at)
        assert match, f"cannot read {text[at:]!r} in {expression!r}"
        op, literal, name = match.groups()
        if op:
            tokens.append(("op", op))
        elif literal is not None:
            tokens.append(("str", literal.replace("''", "'")))
        else:
            tokens.append(("name", name))
        at = match.end()
    position = 0

    def peek() -> tuple[str, str] | None:
        return tokens[position] if position < len(tokens) else None

    def take() -> tuple[str, str]:
        nonlocal position
        position += 1
        return tokens[position - 1]

    def value(name: str) -> str | bool:
        if name in ("true", "false"):
            return name == "true"
        node: object = context
        for part in name.split("."):
            node = node.get(part, "") if isinstance(node, Mapping) else ""
        assert isinstance(node, str | bool), name
        return node

    def primary() -> str | bool:
        kind, text = take()
        if (kind, text) == ("op", "!"):
            return not primary()
        if (kind, text) == ("op", "("):
            inner = disjunction()
            assert take() == ("op", ")")
            return inner
        if kind == "name" and peek() == ("op", "("):
            take()
            args: list[str | bool] = []
            while peek() != ("op", ")"):
                args.append(disjunction())
                if peek() == ("op", ","):
                    take()
            take()
            functions = context["functions"]
            assert isinstance(functions, Mapping)
            result: str | bool = functions[text](*args)
            return result
        return text if kind == "str" else value(text)

    def comparison() -> str | bool:
        left = primary()
        while peek() in (("op", "=="), ("op", "!=")):
            _, op = take()
            right = primary()
            same = str(left).lower() == str(right).lower()
            left = same if op == "==" else not same
        return left

    def conjunction() -> str | bool:
        left = comparison()
        while peek() == ("op", "&&"):
            take()
            right = comparison()
            left = right if left else left
        return left

    def disjunction() -> str | bool:
        left = conjunction()
        while peek() == ("op", "||"):
            take()
            right = conjunction()
            left = left if left else right
        return left

    result = disjunction()
    assert position == len(tokens), f"trailing tokens in {expression!r}"
    return result


def interpolate(text: str, context: Mapping[str, object]) -> str:
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: _string(evaluate(m.group(1), context)), text)


def _string(value: str | bool) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else value


def condition(step: Mapping[str, object], context: Mapping[str, object]) -> bool:
    """A step's ``if:`` (success() is implied: every step here runs only after successes)."""
    test = step.get("if")
    if test is None:
        return True
    assert isinstance(test, str)
    inner = test.strip()
    if inner.startswith("${{") and inner.endswith("}}"):
        inner = inner[3:-2]
    result = evaluate(inner, context)
    return bool(result) if isinstance(result, bool) else result != ""


def read_outputs(file: Path) -> dict[str, str]:
    """``name=value`` lines and ``name<<DELIMITER`` blocks, as the runner reads them."""
    outputs: dict[str, str] = {}
    lines = file.read_text().splitlines() if file.exists() else []
    at = 0
    while at < len(lines):
        line = lines[at]
        at += 1
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            block: list[str] = []
            while lines[at] != delimiter:
                block.append(lines[at])
                at += 1
            at += 1
            outputs[name] = "\n".join(block)
        elif line:
            name, value = line.split("=", 1)
            outputs[name] = value
    return outputs


# -- the runner -------------------------------------------------------------------------------
@dataclass
class Run:
    stdout: dict[str, str] = field(default_factory=dict)  # step id (or name) -> stdout
    stderr: dict[str, str] = field(default_factory=dict)
    ran: list[str] = field(default_factory=list)  # names of the steps that ran
    uses: dict[str, dict[str, str]] = field(default_factory=dict)  # action -> its inputs
    outputs: dict[str, str] = field(default_factory=dict)  # the action's outputs
    failed: str | None = None  # the step that failed the job
    pip: list[str] = field(default_factory=list)  # what the install step asked pip for


@dataclass
class CacheStore:
    """actions/cache played locally: saved folders by key, newest last."""

    root: Path
    saved: list[str] = field(default_factory=list)

    def save(self, path: Path, key: str) -> None:
        assert path.is_dir(), f"nothing to save at {path}"
        assert key not in self.saved, "a cache key is written once"
        shutil.copytree(path, self.root / key)
        self.saved.append(key)

    def restore(self, path: Path, key: str, restore_keys: list[str]) -> dict[str, str]:
        for wanted in [key, *restore_keys]:
            for saved in reversed(self.saved):
                if saved == wanted or (wanted != key and saved.startswith(wanted)):
                    # Extracted over what is there: new files, new inodes and times.
                    shutil.copytree(self.root / saved, path, dirs_exist_ok=True)
                    return {"cache-hit": str(saved == key).lower(), "cache-matched-key": saved}
        return {"cache-hit": "false"}


REPOSITORY_SECRET = "secrets.HOOKGUARD_CACHE_KEY"


def run_action(
    workspace: Path,
    tmp: Path,
    inputs: Mapping[str, str],
    github: Mapping[str, object],
    store: CacheStore,
) -> Run:
    run = Run()
    declared = ACTION["inputs"]
    assert set(inputs) <= set(declared), set(inputs) - set(declared)
    # What a workflow passes, unless a test says otherwise.
    inputs = {"cache-key": REPOSITORY_SECRET, **inputs}
    context: dict[str, object] = {"github": dict(github), "runner": {"os": "Linux"}, "steps": {}}
    context["inputs"] = {
        name: inputs.get(name, interpolate(str(spec.get("default", "")), context))
        for name, spec in declared.items()
    }
    tmp.mkdir(parents=True, exist_ok=True)
    summary = tmp / "summary.md"
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    pip_log = tmp / "pip.log"
    # The interpreter hookguard is installed in, behind a python that keeps pip off the network.
    (bin_dir / "python").write_text(
        "#!/bin/sh\n"
        f'if [ "$1 $2" = "-m pip" ]; then shift 2; printf "%s\\n" "$@" > "{pip_log}"; exit 0; fi\n'
        f'exec "{sys.executable}" "$@"\n'
    )
    (bin_dir / "python").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "HOOKGUARD_"))}
    env.update({
        "PATH": os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent),
                                 env.get("PATH", "")]),
        "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_ACTION_PATH": str(ROOT),
        "GITHUB_SHA": str(github["sha"]), "GITHUB_BASE_REF": str(github.get("base_ref", "")),
        "GITHUB_EVENT_NAME": str(github["event_name"]), "RUNNER_OS": "Linux",
        "RUNNER_TEMP": str(tmp), "HOME": str(tmp / "home"), "HOOKGUARD_CACHE_STATS": "1",
    })
    for number, step in enumerate(ACTION["runs"]["steps"]):
        name = step["name"]
        if not condition(step, context):
            continue
        run.ran.append(name)
        key = step.get("id", name)
        if "uses" in step:
            given = {k: interpolate(str(v), context) for k, v in step.get("with", {}).items()}
            run.uses[step["uses"]] = given
            outputs = _play(step["uses"], given, store)
        else:
            assert step["shell"] == "bash"
            output_file = tmp / f"output-{number}"
            output_file.write_text("")
            step_env = {**env, "GITHUB_OUTPUT": str(output_file)}
            step_env.update({k: interpolate(str(v), context)
                             for k, v in step.get("env", {}).items()})
            cwd = workspace / interpolate(step.get("working-directory", "."), context)
            assert "${{" not in step["run"], f"{name}: a value pasted into the script"
            proc = subprocess.run(["bash", "--noprofile", "--norc", "-e", "-o", "pipefail",
                                   "-c", step["run"]], cwd=cwd, env=step_env,
                                  capture_output=True, text=True, check=False)
            run.stdout[key], run.stderr[key] = proc.stdout, proc.stderr
            outputs = read_outputs(output_file)
            if proc.returncode != 0:
                run.failed = name
                context["steps"][key] = {"outputs": outputs}  # type: ignore[index]
                break
        context["steps"][key] = {"outputs": outputs}  # type: ignore[index]
    run.outputs = {name: interpolate(spec["value"], context)
                   for name, spec in ACTION["outputs"].items()}
    run.pip = pip_log.read_text().split() if pip_log.exists() else []
    return run


def _play(action: str, given: dict[str, str], store: CacheStore) -> dict[str, str]:
    if action.startswith("actions/cache/restore@"):
        return store.restore(Path(given["path"]), given["key"],
                             given["restore-keys"].splitlines())
    if action.startswith("actions/cache/save@"):
        store.save(Path(given["path"]), given["key"])
    return {}


# -- the repositories -------------------------------------------------------------------------
def upstream_repo(root: Path) -> GitRepo:
    repo = GitRepo(root)
    repo.commit("Add manager", {
        "pyproject.toml": '[tool.hookguard]\nexclude = ["docs"]\n', "core/__init__.py": "",
        "core/manager.py": BASE, "plugins/__init__.py": "", "plugins/sparse.py": CHILD,
        **{f"pkg/m{i}.py": f"class T{i}:\n    def run(self):\n        return {i}\n"
           for i in range(6)},
    })
    return repo


def pull_request(upstream: GitRepo, branch: str, message: str, files: dict[str, str]) -> None:
    upstream.git("checkout", "-q", "-b", branch, "main")
    upstream.commit(message, files)
    upstream.git("checkout", "-q", "main")


def checkout(upstream: GitRepo, where: Path, ref: str) -> tuple[Path, str]:
    """actions/checkout with fetch-depth: 0, at ``ref``; (workspace, sha)."""
    subprocess.run(["git", "clone", "-q", str(upstream.root), str(where)], check=True)
    subprocess.run(["git", "checkout", "-q", ref], cwd=where, check=True)
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, check=True,
                         capture_output=True, text=True).stdout.strip()
    return where, sha


def pr_context(sha: str) -> dict[str, str]:
    return {"event_name": "pull_request", "base_ref": "main", "sha": sha,
            "action_path": str(ROOT), "workspace": ""}


def push_context(sha: str) -> dict[str, str]:
    return {"event_name": "push", "base_ref": "", "sha": sha, "action_path": str(ROOT),
            "workspace": ""}


def cache_line(run: Run) -> str:
    (line,) = [x for x in run.stderr["run"].splitlines() if x.startswith("hookguard: cache")][:1]
    return line


# -- the tests --------------------------------------------------------------------------------
def test_action_yml_is_a_composite_action_with_documented_inputs() -> None:
    assert ACTION["runs"]["using"] == "composite"
    inputs = ACTION["inputs"]
    assert inputs["base"]["default"] == "origin/${{ github.base_ref }}"
    assert {"base", "args", "python-version", "version", "sarif", "cache"} <= set(inputs)
    assert inputs["sarif"]["default"] == "false" and inputs["cache"]["default"] == "true"
    for name, spec in inputs.items():
        assert spec["description"], name
    assert {"exit-code", "errors", "warnings"} <= set(ACTION["outputs"])
    uses = [s["uses"].split("@")[0] for s in ACTION["runs"]["steps"] if "uses" in s]
    assert uses == ["actions/setup-python", "actions/cache/restore",
                    "github/codeql-action/upload-sarif", "actions/cache/save"]
    docs = (ROOT / "docs" / "ci.md").read_text()
    for name in inputs:
        assert f"`{name}`" in docs, f"input {name} is not documented in docs/ci.md"
    for name in ACTION["outputs"]:
        assert f"`{name}`" in docs, f"output {name} is not documented in docs/ci.md"


def test_pull_request_run_annotates_summarises_and_fails_on_errors(tmp_path: Path) -> None:
    upstream = upstream_repo(tmp_path / "upstream")
    pull_request(upstream, "rename", "Rename build_tables to prepare_tables",
                 {"core/manager.py": BASE.replace("build_tables", "prepare_tables")})
    workspace, sha = checkout(upstream, tmp_path / "work" / "shop", "rename")
    store = CacheStore(tmp_path / "store")
    run = run_action(workspace, tmp_path / "runner", {"sarif": "true"}, pr_context(sha), store)
    assert run.failed == "Fail on hookguard errors"
    assert run.outputs["exit-code"] == "1" and run.outputs["command"] == "check"
    assert (run.outputs["errors"], run.outputs["warnings"]) == ("1", "0")
    assert run.outputs["input-errors"] == "0"
    lines = run.stdout["run"].splitlines()
    annotations = [x for x in lines if x.startswith(("::error", "::warning"))]
    assert len(annotations) == 1, lines
    assert annotations[0].startswith("::error file=plugins/sparse.py,line=5")
    assert "prepare_tables" in annotations[0]
    summary = (tmp_path / "runner" / "summary.md").read_text()
    assert summary.startswith("## hookguard\n") and "prepare\\_tables" in summary
    assert "| 1 | 0 | 0 |" in summary  # errors, warnings, files not checked
    # The other actions' inputs: the Python asked for, the SARIF log written where it says.
    assert run.uses["actions/setup-python@v5"] == {"python-version": "3.12"}
    sarif = Path(run.uses["github/codeql-action/upload-sarif@v3"]["sarif_file"])
    assert sarif == Path(run.outputs["sarif-file"])
    log = json.loads(sarif.read_text())
    (result,) = log["runs"][0]["results"]
    assert result["ruleId"] == "HG001" and result["level"] == "error"
    assert run.uses["github/codeql-action/upload-sarif@v3"]["category"] == "hookguard"
    # Installed from the action's own checkout; the cache saved under a key for this commit.
    assert run.pip[-1] == str(ROOT)
    save = run.uses["actions/cache/save@v4"]
    assert Path(save["path"]) == workspace / CACHE_DIR_NAME and save["key"].endswith("-" + sha)
    assert store.saved == [save["key"]]


def test_warnings_alone_do_not_fail_the_job(tmp_path: Path) -> None:
    upstream = upstream_repo(tmp_path / "upstream")
    upstream.commit("Narrow config", {
        "pyproject.toml": '[tool.hookguard]\nseverity = { signature-drift = "warning" }\n'})
    pull_request(upstream, "quiet", "Add a quiet manager", {"plugins/quiet.py": NARROW})
    workspace, sha = checkout(upstream, tmp_path / "w", "quiet")
    run = run_action(workspace, tmp_path / "runner", {}, pr_context(sha),
                     CacheStore(tmp_path / "store"))
    assert run.failed is None, run.stderr
    assert (run.outputs["exit-code"], run.outputs["errors"], run.outputs["warnings"]) == (
        "0", "0", "1")
    assert run.stdout["run"].startswith("::warning file=plugins/quiet.py")
    assert "Upload SARIF to code scanning" not in run.ran  # sarif: false
    assert "Fail on hookguard errors" not in run.ran


def test_push_saves_the_cache_a_pull_request_restores_in_a_fresh_clone(tmp_path: Path) -> None:
    upstream = upstream_repo(tmp_path / "upstream")
    main, main_sha = checkout(upstream, tmp_path / "runner1" / "work" / "shop", "main")
    store = CacheStore(tmp_path / "store")
    pushed = run_action(main, tmp_path / "r1", {}, push_context(main_sha), store)
    assert pushed.failed is None, pushed.stderr
    assert pushed.outputs["command"] == "audit"  # a push has no base: the whole checkout
    assert pushed.uses["actions/cache/restore@v4"]["key"] in store.saved
    pull_request(upstream, "one-file", "Dense tables",
                 {"pkg/m3.py": "class T3:\n    def run(self):\n        return 33\n"})
    # Another machine: another path, another HOME, a clean clone.
    fresh, sha = checkout(upstream, tmp_path / "runner2" / "a" / "b", "one-file")
    run = run_action(fresh, tmp_path / "r2", {}, pr_context(sha), store)
    assert run.failed is None, run.stderr
    restore = run.uses["actions/cache/restore@v4"]
    assert restore["restore-keys"].splitlines()[0] + main_sha == store.saved[0]
    assert re.search(r"records \d+ hit, 1 missed, 1 stored", cache_line(run)), cache_line(run)
    assert "rebuilding" not in run.stdout["run"]
    assert store.saved[-1].endswith("-" + sha) and len(store.saved) == 2
    # A re-run of the same commit finds its own cache and saves nothing.
    again = run_action(fresh, tmp_path / "r3", {}, pr_context(sha), CacheStore(
        store.root, list(store.saved)))
    assert "Save the hookguard cache" not in again.ran


def test_a_missing_base_fails_with_the_fix(tmp_path: Path) -> None:
    upstream = upstream_repo(tmp_path / "upstream")
    workspace, sha = checkout(upstream, tmp_path / "w", "main")
    context = {**pr_context(sha), "base_ref": "release"}
    run = run_action(workspace, tmp_path / "runner", {"cache": "false"}, context,
                     CacheStore(tmp_path / "store"))
    assert run.outputs["exit-code"] == "2" and run.failed == "Fail on hookguard errors"
    assert "fetch-depth: 0" in run.stderr["run"]
    assert "Restore the hookguard cache" not in run.ran
    assert "Save the hookguard cache" not in run.ran


@pytest.mark.parametrize(("version", "requirement"), [
    ("0.2.0", "hookguard-checker==0.2.0"),  # never "hookguard": another project on PyPI
    ("git+https://example.org/hookguard@abc", "git+https://example.org/hookguard@abc"),
])
def test_version_input_picks_what_pip_installs(
    tmp_path: Path, version: str, requirement: str
) -> None:
    upstream = upstream_repo(tmp_path / "upstream")
    workspace, sha = checkout(upstream, tmp_path / "w", "main")
    run = run_action(workspace, tmp_path / "runner", {"version": version, "cache": "false"},
                     push_context(sha), CacheStore(tmp_path / "store"))
    assert run.pip[-1] == requirement


def test_args_reach_hookguard_and_an_injected_base_stays_data(tmp_path: Path) -> None:
    upstream = upstream_repo(tmp_path / "upstream")
    pull_request(upstream, "rename", "Rename build_tables",
                 {"core/manager.py": BASE.replace("build_tables", "prepare_tables")})
    workspace, sha = checkout(upstream, tmp_path / "w", "rename")
    run = run_action(workspace, tmp_path / "runner", {"args": "--exit-zero --no-history"},
                     pr_context(sha), CacheStore(tmp_path / "store"))
    assert run.failed is None and run.outputs["errors"] == "1"  # reported, not failed
    marker = tmp_path / "pwned"
    evil = run_action(workspace, tmp_path / "runner2",
                      {"base": f'main"; touch {marker}; echo "', "cache": "false"},
                      pr_context(sha), CacheStore(tmp_path / "store2"))
    assert evil.outputs["exit-code"] == "2" and not marker.exists()


def _workflows() -> tuple[dict[str, object], dict[str, object]]:
    """docs/ci.md's workflows: (the one that uses the action, the one written by hand, with
    the cache steps; the dependency-update workflow is tested in
    tests/test_check_dependencies.py)."""
    text = (ROOT / "docs" / "ci.md").read_text()
    blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", text, re.S)]
    workflows = [b for b in blocks if isinstance(b, dict) and "jobs" in b]
    (action,) = [w for w in workflows if "/hookguard@" in json.dumps(w, default=str)]
    (by_hand,) = [w for w in workflows if w is not action
                  and "hookguard cache key" in json.dumps(w, default=str)]
    return action, by_hand


def test_the_documented_action_workflow_uses_declared_inputs() -> None:
    action_workflow, by_hand = _workflows()
    assert set(action_workflow[True]) == {"pull_request", "push"}  # YAML reads "on" as True
    (job,) = action_workflow["jobs"].values()  # type: ignore[attr-defined]
    checkout_step, action_step = job["steps"]
    assert checkout_step["with"]["fetch-depth"] == 0
    assert action_step["uses"].endswith("/hookguard@COMMIT_SHA")
    assert set(action_step["with"]) <= set(ACTION["inputs"])
    assert action_workflow["permissions"]["security-events"] == "write"  # type: ignore[index]
    assert "jobs" in by_hand


def test_the_documented_cache_step_keys_and_restores(tmp_path: Path) -> None:
    """The hand-written workflow's cache steps: the key step runs; the cache's path is the
    folder hookguard writes; the key ends with the commit; each restore key is a prefix of it,
    the second one leaving the configuration out."""
    from hookguard.model.cache import build_digest

    _, by_hand = _workflows()
    (job,) = by_hand["jobs"].values()  # type: ignore[attr-defined]
    steps = {s.get("name", s.get("uses")): s for s in job["steps"]}
    key_step = steps["hookguard cache key"]
    output = tmp_path / "output"
    output.write_text("")
    env = {**os.environ, "GITHUB_OUTPUT": str(output),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    subprocess.run(["bash", "-e", "-c", key_step["run"]], cwd=tmp_path, env=env, check=True)
    built = read_outputs(output)
    assert built == {"id": build_digest()}
    cache = steps["Restore the hookguard cache"]
    assert cache["uses"] == "actions/cache@v4"
    assert cache["with"]["path"] == CACHE_DIR_NAME
    (tmp_path / "pyproject.toml").write_text("[tool.hookguard]\n")

    def hash_files(pattern: str) -> str:
        import hashlib

        return hashlib.sha256((tmp_path / pattern).read_bytes()).hexdigest()

    context = {"runner": {"os": "Linux"}, "github": {"sha": "c0ffee" * 6 + "abcd"},
               "steps": {key_step["id"]: {"outputs": built}},
               "functions": {"hashFiles": hash_files}}
    key = interpolate(cache["with"]["key"], context)
    restore = interpolate(cache["with"]["restore-keys"], context).split()
    build = f"hookguard-Linux-{build_digest()}-"
    settings = f"{build}{hash_files('pyproject.toml')}-"
    assert (key, restore) == (settings + context["github"]["sha"], [settings, build])


def test_no_sarif_upload_from_a_fork(tmp_path: Path) -> None:
    upstream = upstream_repo(tmp_path / "upstream")
    pull_request(upstream, "rename", "Rename build_tables",
                 {"core/manager.py": BASE.replace("build_tables", "prepare_tables")})
    workspace, sha = checkout(upstream, tmp_path / "w", "rename")
    fork = {**pr_context(sha),
            "event": {"pull_request": {"head": {"repo": {"fork": True}}}}}  # type: ignore[dict-item]
    run = run_action(workspace, tmp_path / "runner", {"sarif": "true", "cache": "false"}, fork,
                     CacheStore(tmp_path / "store"))
    assert Path(run.outputs["sarif-file"]).is_file()  # written, not uploaded
    assert "Upload SARIF to code scanning" not in run.ran
    assert run.failed == "Fail on hookguard errors"


def test_a_fork_without_the_secret_restores_and_saves_nothing(tmp_path: Path) -> None:
    """A pull request from a fork gets no secrets: ``cache-key`` is empty, no cache is restored
    (none could be verified) or saved, and the verdict is the cold one."""
    upstream = upstream_repo(tmp_path / "upstream")
    main, main_sha = checkout(upstream, tmp_path / "runner1" / "shop", "main")
    store = CacheStore(tmp_path / "store")
    run_action(main, tmp_path / "r1", {}, push_context(main_sha), store)
    assert len(store.saved) == 1
    pull_request(upstream, "rename", "Rename build_tables",
                 {"core/manager.py": BASE.replace("build_tables", "prepare_tables")})
    workspace, sha = checkout(upstream, tmp_path / "runner2" / "shop", "rename")
    fork = run_action(workspace, tmp_path / "r2", {"cache-key": ""}, pr_context(sha), store)
    assert "Restore the hookguard cache" not in fork.ran
    assert "Save the hookguard cache" not in fork.ran and len(store.saved) == 1
    assert fork.outputs["errors"] == "1" and fork.failed == "Fail on hookguard errors"


def test_no_cache_saved_under_pull_request_target(tmp_path: Path) -> None:
    upstream = upstream_repo(tmp_path / "upstream")
    pull_request(upstream, "rename", "Rename build_tables",
                 {"core/manager.py": BASE.replace("build_tables", "prepare_tables")})
    workspace, sha = checkout(upstream, tmp_path / "w", "rename")
    store = CacheStore(tmp_path / "store")
    target = {**pr_context(sha), "event_name": "pull_request_target"}
    run = run_action(workspace, tmp_path / "runner", {}, target, store)
    assert "Restore the hookguard cache" in run.ran and run.outputs["errors"] == "1"
    assert "Save the hookguard cache" not in run.ran and store.saved == []


def test_working_directory_runs_inside_and_caches_at_the_root(tmp_path: Path) -> None:
    upstream = upstream_repo(tmp_path / "upstream")
    upstream.commit("Rename build_tables", {
        "core/manager.py": BASE.replace("build_tables", "prepare_tables")})
    workspace, sha = checkout(upstream, tmp_path / "w", "main")
    store = CacheStore(tmp_path / "store")
    inside = run_action(workspace, tmp_path / "r1", {"working-directory": "plugins"},
                        push_context(sha), store)
    assert inside.outputs["errors"] == "1"  # the stale override in plugins/sparse.py
    assert Path(inside.uses["actions/cache/save@v4"]["path"]) == workspace / CACHE_DIR_NAME
    elsewhere = run_action(workspace, tmp_path / "r2",
                           {"working-directory": "pkg", "cache": "false"}, push_context(sha), store)
    assert (elsewhere.outputs["errors"], elsewhere.failed) == ("0", None)  # nothing under pkg/
