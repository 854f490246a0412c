"""``hookguard hooks``: a hook map that stays readable for real families (3, 7 and 174
subclasses), in rich and plain text; the hooks of the whole MRO (mixins included), private
helpers, properties and never-overridden hooks hidden unless ``--all``; re-exported names;
suggestions; help text."""

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
        f"mm.core.base.Base (mm/core/base.py:1): 5 hooks shown, 174 subclasses ({len(drifted)} "
        f"with problems, {len(overriding)} overriding without one, "
        f"{174 - len(drifted) - len(overriding)} inheriting every hook)")
    # run is a method of the base no subclass overrides: counted, not listed
    assert lines[1] == "hidden: 1 never overridden (--all shows them)"
    assert lines[3].split() == ["hook", "overridden", "super()", "stale", "drifted", "bypass",
                                "defined", "in"]
    rows = {line.split()[0]: [int(n) for n in line.split()[1:6]] for line in lines[4:9]}
    assert "run" not in rows and lines[9] == ""
    assert all(line.split()[-1] == "Base" for line in lines[4:9])
    for k, hook in enumerate(HOOKS):
        with_super = sum(1 for i in range(174) if i % 3 == 0 and i % len(HOOKS) == k)
        drift = sum(1 for i in drifted if (i + 1) % len(HOOKS) == k)
        assert rows[hook] == [with_super + drift, with_super, 0, drift, 0], hook
    every = hookguard(big, "hooks", "Base", "--format", "plain", "--no-cache", "--all")
    all_lines = every.stdout.splitlines()
    assert all_lines[0].startswith("mm.core.base.Base (mm/core/base.py:1): 6 hooks, ")
    assert all_lines[2].split()[0] == "hook"
    all_rows = {line.split()[0]: line.split()[1:6] for line in all_lines[3:9]}
    assert all_rows["run"] == ["0"] * 5  # --all: every method of the base's line is a row
    assert f"subclasses with problems ({len(drifted)}):" in lines
    assert ("  mm.models.model_007.VeryDescriptiveModelName007 "
            "(mm/models/model_007.py:4)") in lines
    # Run from a subdirectory: paths relative to it.
    sub = hookguard(big / "mm" / "models", "hooks", "Base", "--format", "plain", "--no-cache")
    assert "(model_007.py:4)" in sub.stdout


def test_seven_subclasses_with_long_hook_names(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "seven")
    repo.commit("family", family(7))
    for extra in ([], ["--all"]):
        proc = hookguard(repo.root, "hooks", "Base", "--format", "rich", "--no-cache", *extra,
                         columns=80)
        # subclasses 0, 3 and 6 override hooks 0, 3 and 1 (0 drifts on 1 too); --all: every one
        for k, hook in enumerate(HOOKS):
            assert (hook in proc.stdout) == (bool(extra) or k in (0, 1, 3)), (hook, extra)
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
                     "--no-cache neither read nor write the cache",
                     "--all also list the hooks no subclass overrides"):
        assert fragment in text, fragment


# -- issue 26, item 7: a mixin-based class ---------------------------------------------------
MIXIN_HOOKS = [f"on_{stage}_{moment}" for stage in ("train", "validation", "test", "predict")
               for moment in ("start", "end", "batch_start", "batch_end")]


def mixin_family() -> dict[str, str]:
    """A LightningModule in miniature: the base's own methods are mostly helpers (name-mangled,
    private, properties, public methods no subclass overrides); its hooks come from mixins."""
    hooks = "class ModelHooks:\n" + "".join(
        f"    def {h}(self):\n        pass\n\n" for h in MIXIN_HOOKS)
    hooks += ("class DataHooks:\n    def prepare_data(self):\n        pass\n\n"
              "    def train_dataloader(self):\n        raise NotImplementedError\n")
    module = ["from lm.hooks import DataHooks, ModelHooks", "", "",
              "class Module(ModelHooks, DataHooks):",
              "    def __init__(self):", "        self._trainer = None", ""]
    for i in range(60):
        module += [f"    def __mangled_{i}(self):", f"        return {i}", ""]
    for i in range(80):
        module += [f"    def _helper_{i}(self):", f"        return self.__mangled_{i % 60}()", ""]
    for i in range(40):
        module += ["    @property", f"    def prop_{i}(self):", f"        return {i}", ""]
    for i in range(50):
        module += [f"    def public_{i}(self, x):", "        return x", ""]
    module += ["    def _customise(self):", "        return 1", "",
               "    def forward(self, x):", "        return x", ""]
    models = ["from lm.module import Module", ""]
    for i in range(12):
        models += ["", f"class Model{i}(Module):"]
        hook = MIXIN_HOOKS[i % 4]  # four of the mixins' hooks are overridden
        models += [f"    def {hook}(self):", f"        super().{hook}()", ""]
        if i % 4 == 0:
            models += ["    def __mangled_0(self):", "        return -1", ""]  # not an override
        if i % 6 == 0:
            models += ["    @property", "    def prop_0(self):", "        return -1", ""]
        if i == 5:
            models += ["    def _customise(self):", "        return 2", "",
                       "    def train_dataloader(self):", "        return []", ""]
        models += ["    def forward(self, x):", "        return x + 1", ""]
    return {"lm/__init__.py": "", "lm/hooks.py": hooks, "lm/module.py": "\n".join(module),
            "lm/models.py": "\n".join(models)}


@pytest.fixture(scope="module")
def mixins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = GitRepo(tmp_path_factory.mktemp("hooks") / "mixins")
    repo.commit("family", mixin_family())
    return repo.root


def test_mixin_hooks_are_shown_and_helpers_hidden(mixins: Path) -> None:
    proc = hookguard(mixins, "hooks", "lm.module.Module", "--format", "plain", "--no-cache")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    total = 1 + 60 + 80 + 40 + 50 + 2 + len(MIXIN_HOOKS) + 2  # __init__ is no hook
    shown = [*MIXIN_HOOKS[:4], "_customise", "forward", "train_dataloader"]
    assert lines[0].startswith(f"lm.module.Module (lm/module.py:4): {len(shown)} hooks shown, "
                               "12 subclasses (0 with problems, 12 overriding without one, ")
    never = 50 + len(MIXIN_HOOKS) - 4 + 1  # public_*, the other mixin hooks, prepare_data
    assert lines[1] == (f"hidden: {never} never overridden, 80 private, 40 properties, "
                        "60 name-mangled (--all shows them)")
    assert len(shown) + never + 80 + 40 + 60 == total - 1
    rows = {line.split()[0]: line.split()[1:] for line in lines[4:4 + len(shown)]}
    assert lines[4 + len(shown)] == ""
    assert sorted(rows) == sorted(shown)
    # the hooks that come from the mixins, and who defines them
    assert rows["on_train_start"] == ["3", "3", "0", "0", "0", "ModelHooks"]
    assert rows["train_dataloader"] == ["1", "0", "0", "0", "0", "DataHooks"]
    assert rows["forward"] == ["12", "0", "0", "0", "0", "Module"]
    assert rows["_customise"][0] == "1"  # private, but overridden: a hook
    assert "__mangled_0" not in proc.stdout and "prop_0" not in proc.stdout
    assert "_helper_1 " not in proc.stdout and "public_1 " not in proc.stdout


def test_mixin_hooks_all_and_json(mixins: Path) -> None:
    every = hookguard(mixins, "hooks", "Module", "--format", "plain", "--no-cache", "--all")
    lines = every.stdout.splitlines()
    assert lines[0].startswith("lm.module.Module (lm/module.py:4): 250 hooks, 12 subclasses")
    rows = {line.split()[0]: line.split()[1:] for line in lines[3:3 + 250]}
    assert len(rows) == 250 and lines[3 + 250] == ""
    # a subclass's __mangled_0 is its own _Model0__mangled_0: never an override
    assert rows["__mangled_0"][:5] == ["0"] * 5
    assert rows["prop_0"][:5] == ["2", "0", "0", "0", "0"]
    assert rows["public_7"] == ["0", "0", "0", "0", "0", "Module"]
    assert rows["on_test_end"] == ["0", "0", "0", "0", "0", "ModelHooks"]
    doc = json.loads(hookguard(mixins, "hooks", "Module", "--format", "json", "--no-cache").stdout)
    assert doc["hooks"] == ["_customise", "forward", *MIXIN_HOOKS[:4], "train_dataloader"]
    assert doc["defined_in"]["on_train_start"] == "lm.hooks.ModelHooks"
    assert doc["defined_in"]["public_3"] == "lm.module.Module" and len(doc["defined_in"]) == 250
    # the cells cover every method of the line, the hidden ones too
    assert set(doc["cells"]) == {*doc["hooks"], *(n for v in doc["hidden"].values() for n in v)}
    assert len(doc["cells"]) == 250 and doc["cells"]["public_3"]["lm.models.Model1"] == "inherited"
    assert doc["cells"]["on_train_start"]["lm.models.Model0"] == "overridden+super"
    assert len(doc["hidden"]["never_overridden"]) == 50 + len(MIXIN_HOOKS) - 4 + 1
    assert doc["hidden"]["properties"][0] == "prop_0"
    assert len(doc["hidden"]["name_mangled"]) == 60 and len(doc["hidden"]["private"]) == 80
    full = json.loads(hookguard(mixins, "hooks", "Module", "--format", "json", "--no-cache",
                                "--all").stdout)
    assert len(full["hooks"]) == 250 and "hidden" in full and full["hidden"] == {}


def test_mixin_hooks_rich(mixins: Path) -> None:
    proc = hookguard(mixins, "hooks", "Module", "--format", "rich", "--no-cache", columns=100)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "defined in" in text and "ModelHooks" in text and "DataHooks" in text
    assert "--all shows them" in " ".join(text.split())
    assert "__mangled" not in text and "_helper_" not in text and "prop_" not in text


def test_no_hook_overridden(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "none")
    repo.commit("add", {"p.py": "class Base:\n    def hook(self): ...\n\n\n"
                                "class Sub(Base):\n    pass\n"})
    for fmt in ("plain", "rich"):
        proc = hookguard(repo.root, "hooks", "Base", "--format", fmt, "--no-cache")
        assert proc.returncode == 0, proc.stderr
        assert "no subclass overrides a hook" in proc.stdout
        assert "hidden: 1 never overridden" in proc.stdout
