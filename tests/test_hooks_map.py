"""``hookguard hooks``: a hook map that stays readable for real families (3, 7 and 174
subclasses), in rich and plain text; re-exported names; suggestions; help text."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import GitRepo

HOOKS = ["media_preprocess_inputs_for_encoder", "media_postprocess_outputs_of_decoder",
         "on_train_batch_start", "on_validation_epoch_end", "configure_optimizers"]


def family(n_subclasses: int) -> dict[str, str]:
    base = "class Base:\n    def run(self, batch):\n" + "".join(
        f"        self.{h}(batch)\n" for h in HOOKS) + "".join(
        f"\n    def {h}(self, batch):\n        self.{h}_done = True\n" for h in HOOKS)
    files = {"mm/__init__.py": "from .core.base import Base\n", "mm/core/__init__.py": "",
             "mm/core/base.py": base, "mm/models/__init__.py": ""}
    for i in range(n_subclasses):
        body = ""
        if i % 3 == 0:
            hook = HOOKS[i % len(HOOKS)]
            body += f"    def {hook}(self, batch):\n        super().{hook}(batch)\n"
        if i % 7 == 0:
            body += f"    def {HOOKS[(i + 1) % len(HOOKS)]}(self):\n        pass\n"  # drifted
        files[f"mm/models/model_{i:03d}.py"] = (
            f"from mm.core.base import Base\n\n\nclass VeryDescriptiveModelName{i:03d}(Base):\n"
            + (body or "    pass\n"))
    return files


def hookguard(cwd: Path, *args: str, columns: int = 80) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": str(columns), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "hookguard", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = GitRepo(tmp_path_factory.mktemp("hooks") / "big")
    repo.commit("family", family(174))
    return repo.root


@pytest.mark.parametrize("columns", [80, 120])
def test_rich_map_of_174_subclasses_keeps_every_name_whole(big: Path, columns: int) -> None:
    proc = hookguard(big, "hooks", "mm.core.base.Base", "--format", "rich", "--no-cache",
                     columns=columns)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert max(len(line) for line in lines) <= columns
    text = proc.stdout
    for hook in HOOKS:
        assert any(hook in line for line in lines), hook  # never cut to "media_…"
    overriding = [i for i in range(174) if i % 3 == 0 or i % 7 == 0]
    for i in overriding:
        assert f"VeryDescriptiveModelName{i:03d}" in text
    assert "…" not in text
    # Statuses are never cropped: model 000 overrides the first hook and calls super().
    row = next(line for line in lines if line.startswith(" VeryDescriptiveModelName000 "))
    assert HOOKS[0] in row and row.rstrip().endswith("super()"), row
    assert "174 subclasses (" in " ".join(text.split())
    inheriting = 174 - len(overriding)
    assert f"inheriting every hook ({inheriting})" in " ".join(text.split())


def test_plain_map_counts_and_groups(big: Path) -> None:
    proc = hookguard(big, "hooks", "Base", "--format", "plain", "--no-cache")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    drifted = [i for i in range(174) if i % 7 == 0]
    overriding = [i for i in range(174) if i % 3 == 0 and i % 7 != 0]
    assert lines[0] == (
        f"mm.core.base.Base (mm/core/base.py:1): 6 hooks, 174 subclasses ({len(drifted)} with "
        f"problems, {len(overriding)} overriding without one, "
        f"{174 - len(drifted) - len(overriding)} inheriting every hook)")
    assert lines[2].split() == ["hook", "overridden", "super()", "stale", "drifted", "bypass"]
    rows = {line.split()[0]: [int(n) for n in line.split()[1:]] for line in lines[3:9]}
    assert rows.pop("run") == [0, 0, 0, 0, 0]  # every method of the base is a hook
    for k, hook in enumerate(HOOKS):
        with_super = sum(1 for i in range(174) if i % 3 == 0 and i % len(HOOKS) == k)
        drift = sum(1 for i in drifted if (i + 1) % len(HOOKS) == k)
        assert rows[hook] == [with_super + drift, with_super, 0, drift, 0], hook
    assert f"subclasses with problems ({len(drifted)}):" in lines
    assert ("  mm.models.model_007.VeryDescriptiveModelName007 "
            "(mm/models/model_007.py:4)") in lines
    # Run from a subdirectory: paths relative to it.
    sub = hookguard(big / "mm" / "models", "hooks", "Base", "--format", "plain", "--no-cache")
    assert "(model_007.py:4)" in sub.stdout


def test_seven_subclasses_with_long_hook_names(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "seven")
    repo.commit("family", family(7))
    proc = hookguard(repo.root, "hooks", "Base", "--format", "rich", "--no-cache", columns=80)
    for hook in HOOKS:
        assert hook in proc.stdout
    assert "…" not in proc.stdout


def test_reexported_name_and_suggestions(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.commit("add", {"mm/__init__.py": "", "mm/hooks/__init__.py": "from .hook import Hook\n",
                        "mm/hooks/hook.py": "class Hook:\n    def before_run(self): ...\n",
                        "mm/runner.py": "from mm.hooks import Hook\n\n\nclass Timer(Hook):\n"
                                        "    def before_run(self): ...\n"})
    proc = hookguard(repo.root, "hooks", "mm.hooks.Hook", "--format", "json", "--no-cache")
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert document["class"] == "mm.hooks.hook.Hook"
    assert document["cells"]["before_run"] == {"mm.runner.Timer": "overridden"}
    wrong = hookguard(repo.root, "hooks", "mm.hooks.Hok", "--no-cache")
    assert wrong.returncode == 2
    assert "no class 'mm.hooks.Hok'" in wrong.stderr and "did you mean mm.hooks.hook.Hook" in (
        wrong.stderr)


def test_hooks_options_have_help(tmp_path: Path) -> None:
    text = " ".join(hookguard(tmp_path, "hooks", "--help").stdout.split())
    for fragment in ("CLASS package.module.Class", "a path inside the checkout",
                     "--format {auto,rich,plain,json} output format",
                     "--no-cache neither read nor write the cache"):
        assert fragment in text, fragment
