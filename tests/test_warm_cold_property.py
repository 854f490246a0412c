"""A warm run is a cold run, whatever happened before it (issue 24, item 1): a property test.

Random small repositories (a base class whose ``run`` calls a random set of hooks, two
subclasses overriding random names with random signatures, with or without ``super()``), and
random sequences of steps: edits, commits, branch switches, configuration changes and cache
states (a stale copy of an earlier cache put back, a truncated file, a file of another build,
a deleted index). After every step the audit with the cache gives exactly what ``--no-cache``
gives, finding for finding, input problem for input problem; and so does ``check --base
HEAD~1``.

``HOOKGUARD_PROPERTY_EXAMPLES`` sets the number of random histories (CI: the default below;
the longer run recorded in docs/security.md sets more).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from hookguard.engine import Options, audit
from hookguard.gate import run_gate
from hookguard.model.cache import CACHE_DIR_NAME
from tests.conftest import GitRepo

EXAMPLES = int(os.environ.get("HOOKGUARD_PROPERTY_EXAMPLES", "200"))
HOOKS = ("setup", "build", "prepare", "warm_up")
PARAMS = ("", "x", "x, y", "x, *, flag=False", "*args, **kwargs", "x=None")
CALL_ARGS = ("", "1", "1, 2", "1, flag=True")
CONFIGS = (
    None,
    '[tool.hookguard]\nselect = ["HG001"]\n',
    '[tool.hookguard]\nseverity = { signature-drift = "warning" }\n',
    '[tool.hookguard]\nexclude = ["pkg/sub_b.py"]\n',
    "[tool.hookguard]\nhistory = false\n",
)

hook_sets = st.lists(st.sampled_from(HOOKS), min_size=1, max_size=3, unique=True)
overrides = st.lists(
    st.tuples(st.sampled_from(HOOKS), st.sampled_from(PARAMS), st.booleans()),
    max_size=3, unique_by=lambda o: o[0],
)


def base_source(hooks: list[str], args: list[str]) -> str:
    calls = "".join(f"        self.{h}({a})\n" for h, a in zip(hooks, args, strict=False))
    defs = "".join(f"\n    def {h}(self, *args, **kwargs):\n        self.{h}_done = True\n"
                   for h in hooks)
    calls = calls or "        pass\n"
    return f"class Base:\n    def run(self):\n{calls}{defs}"


def sub_source(name: str, methods: list[tuple[str, str, bool]]) -> str:
    body = ""
    for hook, params, calls_super in methods:
        sig = f"self, {params}" if params else "self"
        inner = f"super().{hook}()" if calls_super else f"self.{hook}_done = True"
        body += f"\n    def {hook}({sig}):\n        {inner}\n"
    body = body or "    pass\n"
    return f"from pkg.base import Base\n\n\nclass {name}(Base):\n{body}"


def verdict(root: Path, use_cache: bool) -> tuple[list[tuple[object, ...]], list[object]]:
    result = audit([root], Options(use_cache=use_cache, workers=1))
    findings = [tuple(sorted(f.to_json().items(), key=str)) for f in result.findings]
    errors = [(e.path, e.line, e.message) for e in result.errors]
    return findings, errors


def gate_verdict(root: Path, use_cache: bool) -> list[tuple[object, ...]]:
    result = run_gate(root, "HEAD~1", "HEAD", False, Options(use_cache=use_cache, workers=1))
    return [tuple(sorted(f.to_json().items(), key=str)) for f in result.findings]


class WarmEqualsCold(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="hookguard-warm-"))
        self.repo = GitRepo(self.tmp / "repo")
        self.snapshots: list[Path] = []
        self.commits = 0

    def teardown(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    @property
    def cache(self) -> Path:
        return self.repo.root / CACHE_DIR_NAME

    @initialize(hooks=hook_sets, a=overrides, b=overrides)
    def start(self, hooks: list[str], a: list[tuple[str, str, bool]],
              b: list[tuple[str, str, bool]]) -> None:
        self.repo.commit("init", {
            "pkg/__init__.py": "", "pkg/base.py": base_source(hooks, ["1"] * len(hooks)),
            "pkg/sub_a.py": sub_source("SubA", a), "pkg/sub_b.py": sub_source("SubB", b),
        })
        self.commits = 1

    # -- edits, commits, branches, configuration --------------------------------------------
    @rule(hooks=hook_sets, args=st.lists(st.sampled_from(CALL_ARGS), min_size=3, max_size=3),
          then_commit=st.booleans())
    def edit_base(self, hooks: list[str], args: list[str], then_commit: bool) -> None:
        self.repo.write({"pkg/base.py": base_source(hooks, args)})
        if then_commit:
            self.commit()

    @rule(which=st.sampled_from(("a", "b")), methods=overrides, then_commit=st.booleans())
    def edit_subclass(self, which: str, methods: list[tuple[str, str, bool]],
                      then_commit: bool) -> None:
        self.repo.write({f"pkg/sub_{which}.py": sub_source(f"Sub{which.upper()}", methods)})
        if then_commit:
            self.commit()

    @rule(config=st.sampled_from(CONFIGS))
    def configure(self, config: str | None) -> None:
        path = self.repo.root / "pyproject.toml"
        if config is None:
            path.unlink(missing_ok=True)
        else:
            path.write_text(config)

    @rule()
    def commit(self) -> None:
        self.repo.git("add", "-A")
        if self.repo.git("status", "--porcelain"):
            self.repo.git("commit", "-q", "-m", f"step {self.commits}")
            self.commits += 1

    @rule(branch=st.sampled_from(("main", "other")))
    def switch(self, branch: str) -> None:
        self.commit()  # (what is not committed is carried along or lost: keep it)
        known = self.repo.git("branch", "--list", branch).strip()
        self.repo.git("checkout", "-q", *(() if known else ("-b",)), branch)

    # -- cache states -------------------------------------------------------------------------
    @rule()
    def keep_a_copy_of_the_cache(self) -> None:
        if self.cache.is_dir():
            copy = self.tmp / f"snapshot-{len(self.snapshots)}"
            shutil.copytree(self.cache, copy)
            self.snapshots.append(copy)

    @rule(data=st.data())
    def put_back_an_old_cache(self, data: st.DataObject) -> None:
        if self.snapshots:
            old = data.draw(st.sampled_from(self.snapshots))
            shutil.rmtree(self.cache, ignore_errors=True)
            shutil.copytree(old, self.cache)

    @rule(data=st.data(), how=st.sampled_from(("truncate", "other build", "delete")))
    def damage_a_cache_file(self, data: st.DataObject, how: str) -> None:
        files = sorted(self.cache.glob("*.msgpack")) if self.cache.is_dir() else []
        if not files:
            return
        file = data.draw(st.sampled_from(files))
        blob = file.read_bytes()
        if how == "truncate":
            file.write_bytes(blob[: data.draw(st.integers(0, max(0, len(blob) - 1)))])
        elif how == "other build":
            file.write_bytes(blob.replace(b"0.1.0:", b"0.0.9:", 1))
        else:
            file.unlink()

    # -- the property ---------------------------------------------------------------------------
    @invariant()
    def warm_equals_cold(self) -> None:
        if not self.commits:
            return
        warm, cold = verdict(self.repo.root, True), verdict(self.repo.root, False)
        event("findings: " + " ".join(sorted({dict(f)["code"] + str(dict(f)["severity"])
                                               for f in cold[0]})))
        assert warm == cold
        assert verdict(self.repo.root, True) == cold  # and the run after a warm one
        if self.commits > 1 and self.repo.git("rev-list", "--count", "HEAD").strip() != "1":
            assert gate_verdict(self.repo.root, True) == gate_verdict(self.repo.root, False)


WarmEqualsCold.TestCase.settings = settings(
    max_examples=EXAMPLES, stateful_step_count=10, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@pytest.fixture(autouse=True)
def private_key_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("HOOKGUARD_CACHE_DIR", raising=False)
    monkeypatch.delenv("HOOKGUARD_CACHE_KEY", raising=False)


test_warm_equals_cold_on_random_histories = WarmEqualsCold.TestCase
