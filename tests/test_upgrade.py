"""``hookguard upgrade``: real wheels (and an sdist, a source tree, an environment) of small
packages in two versions, and real downstream checkouts in git repositories. No network."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import textwrap
import zipfile
from pathlib import Path
from typing import Any

import pytest

from hookguard.cli import main

# -- building packages and checkouts ---------------------------------------------------------


def _dedent(files: dict[str, str]) -> dict[str, bytes]:
    return {path: textwrap.dedent(text).lstrip("\n").encode() for path, text in files.items()}


def write_wheel(folder: Path, name: str, version: str, files: dict[str, str]) -> Path:
    """A wheel as a build backend writes one: the files, METADATA, WHEEL, top_level.txt and a
    RECORD with each file's sha256 and size."""
    info = f"{name}-{version}.dist-info"
    entries = _dedent(files)
    entries[f"{info}/METADATA"] = (f"Metadata-Version: 2.1\nName: {name}\n"
                                   f"Version: {version}\n").encode()
    entries[f"{info}/WHEEL"] = (b"Wheel-Version: 1.0\nGenerator: hookguard-tests\n"
                                b"Root-Is-Purelib: true\nTag: py3-none-any\n")
    tops = sorted({p.split("/")[0].removesuffix(".py") for p in files})
    entries[f"{info}/top_level.txt"] = ("\n".join(tops) + "\n").encode()
    rows = []
    for path, data in entries.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        rows.append(f"{path},sha256={digest},{len(data)}")
    rows.append(f"{info}/RECORD,,")
    entries[f"{info}/RECORD"] = ("\n".join(rows) + "\n").encode()
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in entries.items():
            archive.writestr(path, data)
    return wheel


def write_sdist(folder: Path, name: str, version: str, files: dict[str, str]) -> Path:
    """An sdist in a src layout, with PKG-INFO and the egg-info's top_level.txt."""
    root = f"{name}-{version}"
    entries = {f"{root}/src/{p}": d for p, d in _dedent(files).items()}
    pkg_info = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode()
    entries[f"{root}/PKG-INFO"] = pkg_info
    entries[f"{root}/src/{name}.egg-info/PKG-INFO"] = pkg_info
    tops = sorted({p.split("/")[0].removesuffix(".py") for p in files})
    entries[f"{root}/src/{name}.egg-info/top_level.txt"] = ("\n".join(tops) + "\n").encode()
    entries[f"{root}/setup.py"] = b"raise SystemExit('never run')\n"
    entries[f"{root}/tests/test_it.py"] = b"class Trainer: pass\n"
    folder.mkdir(parents=True, exist_ok=True)
    sdist = folder / f"{name}-{version}.tar.gz"
    with tarfile.open(sdist, "w:gz") as archive:
        for path, data in entries.items():
            member = tarfile.TarInfo(path)
            member.size = len(data)
            archive.addfile(member, io.BytesIO(data))
    return sdist


def make_checkout(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    for path, data in _dedent(files).items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"}
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "downstream"]):
        subprocess.run(["git", *command], cwd=root, check=True, env=env)
    return root


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No download cache of the user's, no record cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.delenv("HOOKGUARD_CACHE_DIR", raising=False)


def upgrade(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, dict[str, Any]]:
    """Run ``hookguard upgrade ARGS --format json``: (exit code, the JSON report)."""
    code = main(["upgrade", *map(str, args), "--format", "json"])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else {}


def by_symbol(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["symbol"].rsplit(".", 2)[-2] + "." + f["symbol"].rsplit(".", 1)[-1]: f
            for f in report["findings"]}


# -- the framework ---------------------------------------------------------------------------

FW_OLD = {
    "fw/__init__.py": """
        from .core.trainer import Trainer
        from .core import callbacks
    """,
    "fw/core/__init__.py": "",
    "fw/core/callbacks.py": """
        class Callback:
            def on_step(self, trainer):
                pass
    """,
    "fw/core/trainer.py": """
        class Trainer:
            def train(self, data):
                for batch in data:
                    loss = self.training_step(batch)
                    self.log_metrics(loss)
                self.on_epoch_end()
                self.on_save()
                self.on_validation()
                self.predict_batch(data, 1)

            def training_step(self, inputs):
                return self.compute_loss(inputs)

            def compute_loss(self, inputs, return_outputs=False):
                return 0

            def log_metrics(self, loss):
                pass

            def on_epoch_end(self):
                pass

            def on_save(self):
                pass

            def on_validation(self):
                pass

            def predict_batch(self, data, scale):
                return data

            def evaluate(self):
                return self.eval_step(1)

            def eval_step(self, x):
                return x

            def save_model(self, path):
                return path
    """,
    "fw/unrelated.py": "this module is never needed, and not Python at all (\n",
}

FW_NEW = {
    **FW_OLD,
    "fw/core/trainer.py": """
        class Trainer:
            def train(self, data):
                for batch in data:
                    loss = self.training_step(batch, num_items_in_batch=len(data))
                    self.log_metrics(loss)
                self.on_train_epoch_end()
                self.on_validation()
                self.predict_batch(data, 1, 2)

            def training_step(self, inputs, num_items_in_batch=None):
                return self.compute_loss(inputs, num_items_in_batch=num_items_in_batch)

            def compute_loss(self, inputs, return_outputs=False, num_items_in_batch=None):
                return 0

            def log_metrics(self, loss):
                pass

            def on_train_epoch_end(self):
                pass

            def on_validation(self):
                pass

            def predict_batch(self, data, scale, shift):
                return data

            def evaluate(self):
                return self.eval_step(1, 2)

            def eval_step(self, x, y=None):
                return x

            def save_model(self, path, safe=True):
                return path
    """,
}


@pytest.fixture
def wheels(tmp_path: Path) -> tuple[Path, Path]:
    return (write_wheel(tmp_path / "dist", "fw", "1.0", FW_OLD),
            write_wheel(tmp_path / "dist", "fw", "2.0", FW_NEW))


def run_fw(capsys: pytest.CaptureFixture[str], wheels: tuple[Path, Path], checkout: Path,
           *extra: str) -> tuple[int, dict[str, Any]]:
    return upgrade(capsys, "fw==2.0", "--from", "1.0", "--source", wheels[0], "--source",
                   wheels[1], checkout, *extra)


# -- what must fire --------------------------------------------------------------------------


def test_a_new_keyword_at_the_call_site_is_an_error(
        tmp_path: Path, wheels: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    checkout = make_checkout(tmp_path / "down", {
        "app/__init__.py": "",
        "app/trainers.py": """
            from fw import Trainer

            class CustomTrainer(Trainer):
                def compute_loss(self, inputs, return_outputs=False):
                    return 1
        """,
    })
    code, report = run_fw(capsys, wheels, checkout)
    assert code == 1
    found = by_symbol(report)["CustomTrainer.compute_loss"]
    assert found["code"] == "HG002" and found["severity"] == "error"
    assert found["path"] == "app/trainers.py" and found["line"] == 4
    line = FW_NEW["fw/core/trainer.py"].splitlines().index(
        "                return self.compute_loss(inputs, num_items_in_batch=num_items_in_batch)")
    assert found["message"].startswith(
        "CustomTrainer.compute_loss cannot accept the call in Trainer.training_step "
        f"(fw/core/trainer.py:{line}, 2.0): unexpected keyword num_items_in_batch")
    evidence = found["evidence"]
    assert evidence["kind"] == "upgrade" and evidence["change"] == "new-arguments"
    assert (evidence["package"], evidence["from"], evidence["to"]) == ("fw", "1.0", "2.0")
    assert evidence["calls"][0]["path"] == "fw/core/trainer.py"
    assert evidence["missing"] == ["num_items_in_batch"] and evidence["shim"] is None
    # The framework's files are no locations of the checkout's report.
    assert all(r["path"].startswith("app/") for r in found["related"])
    changes = report["upgrade"]["changes"]
    assert {"kind": "new-arguments", "hook": "compute_loss"}.items() <= next(
        c for c in changes if c["hook"] == "compute_loss" and c["kind"] == "new-arguments"
    ).items()


LOGGER_OLD = {"lg/__init__.py": "from lg.trainer import Trainer\n", "lg/trainer.py": """
    class Trainer:
        should_log = True

        def step(self):
            if self.should_log:
                self.log({})

        def log(self, logs):
            return logs
"""}
LOGGER_NEW = {"lg/__init__.py": LOGGER_OLD["lg/__init__.py"], "lg/trainer.py": """
    class Trainer:
        should_log = True

        def step(self, start_time=None):
            if self.should_log:
                self.log({}, start_time)

        def log(self, logs, start_time=None):
            return logs
"""}


@pytest.mark.parametrize(("new_guard", "severity"), [
    ("if self.should_log:", "error"),  # the guard the old call had: it runs where that did
    # a guard of its own: the call is one the new version added, written to run when it holds
    ("if self.should_log and start_time:", "error"),
])
def test_a_new_call_under_the_old_calls_guard_is_an_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], new_guard: str,
        severity: str) -> None:
    """transformers 4.47 (the upgrade benchmark's five TRL incidents): ``self.log(logs,
    start_time)`` under ``if self.control.should_log``, the guard the old ``self.log(logs)``
    had: the override was written to serve that call, and it runs where the old one ran."""
    new = dict(LOGGER_NEW)
    new["lg/trainer.py"] = new["lg/trainer.py"].replace("if self.should_log:", new_guard)
    wheels = (write_wheel(tmp_path / "dist", "lg", "1.0", LOGGER_OLD),
              write_wheel(tmp_path / "dist", "lg", "2.0", new))
    checkout = make_checkout(tmp_path / "down", {
        "app/__init__.py": "",
        "app/mine.py": """
            import lg

            class Mine(lg.Trainer):
                def log(self, logs):
                    return logs
        """,
    })
    code, report = upgrade(capsys, "lg==2.0", "--from", "1.0", "--source", wheels[0],
                           "--source", wheels[1], checkout)
    found = by_symbol(report)["Mine.log"]
    assert found["code"] == "HG002" and found["severity"] == severity, found["message"]
    assert code == (1 if severity == "error" else 0)


HOOKS_OLD = {"hk/__init__.py": "from hk.core import Hook, Runner\n", "hk/core.py": """
    class Hook:
        def run(self, x):
            return x


    class Runner:
        def go(self, hooks):
            for hook in hooks:
                hook.run(1)
"""}
HOOKS_NEW = {"hk/__init__.py": HOOKS_OLD["hk/__init__.py"], "hk/core.py": """
    class Hook:
        def run(self, x, ctx=None):
            return x


    class Runner:
        def go(self, hooks):
            for hook in hooks:
                hook.run(1, ctx=2)
"""}


def test_a_keyword_the_new_version_teaches_and_passes_through_any_object_is_an_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The new version gives ``Hook.run`` a ``ctx`` and passes ``ctx=`` to ``run()`` on
    objects it does not type (``hook.run(1, ctx=2)`` over a list): the proof ``check`` takes
    from a change (``gate.keywords_passed``), taken from the two versions' files."""
    wheels = (write_wheel(tmp_path / "dist", "hk", "1.0", HOOKS_OLD),
              write_wheel(tmp_path / "dist", "hk", "2.0", HOOKS_NEW))
    checkout = make_checkout(tmp_path / "down", {
        "app/__init__.py": "",
        "app/mine.py": """
            import hk

            class Mine(hk.Hook):
                def run(self, x):
                    return x

            class Wide(hk.Hook):
                def run(self, x, **kwargs):
                    return x
        """,
    })
    code, report = upgrade(capsys, "hk==2.0", "--from", "1.0", "--source", wheels[0],
                           "--source", wheels[1], checkout)
    found = by_symbol(report)
    assert code == 1
    mine = found["Mine.run"]
    assert mine["code"] == "HG002" and mine["severity"] == "error", mine["message"]
    assert "cannot accept ctx=, which 2.0 passes to run() at hk/core.py:" in mine["message"]
    assert mine["evidence"]["kind"] == "upgrade" and mine["evidence"]["rule"] == "passed-keyword"
    assert "Wide.run" not in found


CLICK_OLD = {"ck/__init__.py": "from ck.types import *\nfrom ck.core import *\n", "ck/types.py": """
    class ParamType:
        def get_metavar(self, param):
            return None


    class IntRange(ParamType):
        pass


    class Choice(ParamType):
        def get_metavar(self, param):
            return "[a|b]"
""", "ck/core.py": """
    from ck import types


    class Parameter:
        def __init__(self, type):
            self.type: types.ParamType = convert(type)

        def make_metavar(self):
            return self.type.get_metavar(self)


    class Option(Parameter):
        def __init__(self, count):
            super().__init__(None)
            if count:
                self.type = types.IntRange()


    class Picker:
        def __init__(self, choice):
            self.choice: types.Choice = choice

        def show(self):
            return self.choice.get_metavar(self)


    def convert(type):
        return type
"""}
CLICK_NEW = {"ck/__init__.py": CLICK_OLD["ck/__init__.py"], "ck/types.py": """
    class ParamType:
        def get_metavar(self, param, ctx):
            return None


    class IntRange(ParamType):
        pass


    class Choice(ParamType):
        def get_metavar(self, param, ctx):
            return "[a|b]"
""", "ck/core.py": CLICK_OLD["ck/core.py"].replace(
    "self.type.get_metavar(self)", "self.type.get_metavar(param=self, ctx=None)").replace(
    "self.choice.get_metavar(self)", "self.choice.get_metavar(param=self, ctx=None)")}


CLICK_TYPES = """
    import ck

    class Level(ck.ParamType):
        def get_metavar(self, param):
            return "LEVEL"

    class Fixed(ck.ParamType):
        def get_metavar(self, param, ctx=None):
            return "FIXED"
"""


def _click_upgrade(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                   new: dict[str, str]) -> tuple[int, dict[str, Any]]:
    wheels = (write_wheel(tmp_path / "dist", "ck", "1.0", CLICK_OLD),
              write_wheel(tmp_path / "dist", "ck", "2.0", new))
    checkout = make_checkout(tmp_path / "down", {"app/__init__.py": "",
                                                 "app/types.py": CLICK_TYPES})
    return upgrade(capsys, "ck==2.0", "--from", "1.0", "--source", wheels[0],
                   "--source", wheels[1], checkout)


def test_a_taught_keyword_passed_through_an_annotated_member_is_an_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """click 8.2: ``self.type: ParamType`` (a subclass constructed into it on one path) and
    ``self.type.get_metavar(param=self, ctx=ctx)``: the annotation admits every ParamType, so
    the keyword the version taught the hook reaches the checkout's own ParamType."""
    code, report = _click_upgrade(tmp_path, capsys, CLICK_NEW)
    found = by_symbol(report)
    assert code == 1
    level = found["Level.get_metavar"]
    assert level["code"] == "HG002" and level["severity"] == "error", level["message"]
    assert "cannot accept ctx=, which 2.0 passes to get_metavar() at ck/core.py:9" in (
        level["message"])
    assert "Fixed.get_metavar" not in found


def test_a_taught_keyword_passed_only_through_a_member_of_another_family_is_no_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Only ``Picker``'s ``self.choice: Choice`` passes the new keyword: a ParamType that is
    no Choice never gets that call."""
    core_new = CLICK_OLD["ck/core.py"].replace(
        "self.choice.get_metavar(self)", "self.choice.get_metavar(param=self, ctx=None)")
    types_new = CLICK_NEW["ck/types.py"].replace("def get_metavar(self, param, ctx):\n"
                                                 "            return None",
                                                 "def get_metavar(self, param, ctx=None):\n"
                                                 "            return None")
    _code, report = _click_upgrade(tmp_path, capsys, {**CLICK_NEW, "ck/core.py": core_new,
                                                      "ck/types.py": types_new})
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    assert errors == [], errors


ORM_OLD = {"orm/__init__.py": "from orm.fields import Field\n", "orm/fields.py": """
    class Field:
        def get_db_converters(self, connection):
            if hasattr(self, "from_db_value"):
                return [self.from_db_value]
            return []
""", "orm/compiler.py": """
    import functools
    from orm.inspect import func_supports_parameter


    class SQLCompiler:
        def get_converters(self, expressions):
            converters = {}
            for i, expression in enumerate(expressions):
                convs = []
                for conv in expression.get_db_converters(self.connection):
                    if func_supports_parameter(conv, "context"):
                        conv = functools.partial(conv, context={})
                    convs.append(conv)
                converters[i] = (convs, expression)
            return converters

        def apply_converters(self, row, converters):
            for pos, (convs, expression) in converters.items():
                for converter in convs:
                    row[pos] = converter(row[pos], expression, self.connection)
            return row
""", "orm/inspect.py": """
    import inspect


    def func_supports_parameter(func, parameter):
        return parameter in inspect.signature(func).parameters
"""}
ORM_NEW = {**ORM_OLD, "orm/compiler.py": """
    class SQLCompiler:
        def get_converters(self, expressions):
            converters = {}
            for i, expression in enumerate(expressions):
                converters[i] = (expression.get_db_converters(self.connection), expression)
            return converters

        def apply_converters(self, row, converters):
            for pos, (convs, expression) in converters.items():
                for converter in convs:
                    row[pos] = converter(row[pos], expression, self.connection)
            return row
"""}
ORM_FIELDS = """
    import orm

    class OldStyle(orm.Field):
        def from_db_value(self, value, expression, connection, context):
            return value

    class Defaulted(orm.Field):
        def from_db_value(self, value, expression, connection, context=None):
            return value

    class Variadic(orm.Field):
        def from_db_value(self, value, *args, **kwargs):
            return value

    class NewStyle(orm.Field):
        def from_db_value(self, value, expression, connection):
            return value

    class Unrelated:
        def from_db_value(self, value, expression, connection, context):
            return value
"""


def test_an_override_needing_a_keyword_a_dropped_adapter_passed_is_an_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Django 3.0: ``get_converters`` no longer wraps converters that take ``context`` in
    ``partial(conv, context={})``, and ``Field`` hands ``self.from_db_value`` out as one: an
    override that requires ``context`` is called without it. One with a default, ``*args``,
    the new signature, or outside the package's line is not."""
    wheels = (write_wheel(tmp_path / "dist", "orm", "2.2", ORM_OLD),
              write_wheel(tmp_path / "dist", "orm", "3.0", ORM_NEW))
    checkout = make_checkout(tmp_path / "down", {"app/__init__.py": "",
                                                 "app/fields.py": ORM_FIELDS})
    code, report = upgrade(capsys, "orm==3.0", "--from", "2.2", "--source", wheels[0],
                           "--source", wheels[1], checkout)
    found = by_symbol(report)
    assert code == 1
    old = found.pop("OldStyle.from_db_value")
    assert old["code"] == "HG002" and old["severity"] == "error", old["message"]
    assert ("requires context, which 2.2 passed only to callables that take it "
            "(SQLCompiler.get_converters, orm/compiler.py:") in old["message"]
    assert "Field hands self.from_db_value to its callers" in old["message"]
    assert old["evidence"]["change"] == "dropped-adapter"
    assert found == {}, found


def test_an_adapter_the_new_version_keeps_or_a_hook_handed_out_nowhere_is_no_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The adapter still there in the new version (only reformatted), or a package that never
    hands the method out as a value: nothing shows a call without the keyword."""
    kept = {**ORM_OLD, "orm/compiler.py": ORM_OLD["orm/compiler.py"].replace(
        "converters = {}", "converters = dict()")}
    unhanded_old = {**ORM_OLD, "orm/fields.py": "class Field:\n    pass\n"}
    unhanded_new = {**ORM_NEW, "orm/fields.py": "class Field:\n    pass\n"}
    checkout = make_checkout(tmp_path / "down", {"app/__init__.py": "",
                                                 "app/fields.py": ORM_FIELDS})
    for label, (old, new) in {"kept": (ORM_OLD, kept),
                              "unhanded": (unhanded_old, unhanded_new)}.items():
        folder = tmp_path / label
        wheels = (write_wheel(folder, "orm", "2.2", old), write_wheel(folder, "orm", "3.0", new))
        _code, report = upgrade(capsys, "orm==3.0", "--from", "2.2", "--source", wheels[0],
                                "--source", wheels[1], checkout)
        assert report["findings"] == [], (label, report["findings"])


def test_more_positionals_than_before_is_an_error(
        tmp_path: Path, wheels: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    checkout = make_checkout(tmp_path / "down", {
        "trainers.py": """
            import fw

            class Scaled(fw.Trainer):
                def predict_batch(self, data, scale):
                    return data
        """,
    })
    code, report = run_fw(capsys, wheels, checkout)
    assert code == 1
    found = by_symbol(report)["Scaled.predict_batch"]
    assert "cannot accept the call in Trainer.train" in found["message"]
    assert "takes 2 positional arguments but 3 were given" in found["message"]


def test_a_renamed_hook_is_an_error(
        tmp_path: Path, wheels: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    checkout = make_checkout(tmp_path / "down", {
        "trainers.py": """
            from fw.core.trainer import Trainer

            class EpochTrainer(Trainer):
                def on_epoch_end(self):
                    print("epoch")
        """,
    })
    code, report = run_fw(capsys, wheels, checkout)
    assert code == 1
    found = by_symbol(report)["EpochTrainer.on_epoch_end"]
    assert found["code"] == "HG001" and found["severity"] == "error"
    assert found["message"] == (
        "EpochTrainer.on_epoch_end overrides Trainer.on_epoch_end, which 2.0 renamed to "
        "on_train_epoch_end: this override never runs; rename it to on_train_epoch_end")
    assert found["evidence"]["change"] == "renamed"
    assert found["evidence"]["calls"][0]["message"] == "Trainer.on_train_epoch_end"


def test_a_removed_hook_is_an_error(
        tmp_path: Path, wheels: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    checkout = make_checkout(tmp_path / "down", {
        "trainers.py": """
            from fw import Trainer

            class SavingTrainer(Trainer):
                def on_save(self):
                    print("saved")
        """,
    })
    code, report = run_fw(capsys, wheels, checkout)
    assert code == 1
    found = by_symbol(report)["SavingTrainer.on_save"]
    assert found["code"] == "HG001" and found["severity"] == "error"
    assert "overrides Trainer.on_save, which 2.0 removed: nothing calls it any more" in (
        found["message"])
    assert found["evidence"]["change"] == "removed"


def test_a_hook_no_longer_called_is_an_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = {"lib/__init__.py": """
        class Widget:
            def render(self):
                self.before_render()
                return "x"

            def before_render(self):
                pass
    """}
    new = {"lib/__init__.py": """
        class Widget:
            def render(self):
                return "x"

            def before_render(self):
                pass
    """}
    wheels = (write_wheel(tmp_path / "d", "lib", "1", old), write_wheel(tmp_path / "d", "lib",
                                                                        "2", new))
    checkout = make_checkout(tmp_path / "down", {"w.py": """
        from lib import Widget

        class Mine(Widget):
            def before_render(self):
                print("hi")
    """})
    code, report = upgrade(capsys, "lib==2", "--from", "1", "--source", wheels[0], "--source",
                           wheels[1], checkout)
    assert code == 1
    found = by_symbol(report)["Mine.before_render"]
    assert found["message"].startswith(
        "Mine.before_render overrides Widget.before_render, which 2 no longer calls: this "
        "override never runs")
    assert found["evidence"]["change"] == "uncalled"


LAZY_INIT = """
    import sys
    from typing import TYPE_CHECKING

    from .utils import OptionalDependencyNotAvailable, _LazyModule, is_torch_available

    _import_structure = {"trainer": ["Trainer"], "utils": []}

    if TYPE_CHECKING:
        try:
            if not is_torch_available():
                raise OptionalDependencyNotAvailable()
        except OptionalDependencyNotAvailable:
            from .utils.dummy_pt_objects import *
            from .utils.dummy_pt_objects import Trainer
        else:
            from .trainer import Trainer
    else:
        sys.modules[__name__] = _LazyModule(__name__, globals()["__file__"], _import_structure)
"""


def test_a_lazy_module_is_read_through_its_type_checking_imports(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """transformers' shape: ``Trainer`` is exported by a ``_LazyModule`` at run time, and
    imported under ``if TYPE_CHECKING:`` (in a ``try``'s ``else``) for static readers."""
    common = {
        "lazy/__init__.py": LAZY_INIT,
        "lazy/utils/__init__.py": """
            class OptionalDependencyNotAvailable(Exception): pass
            class _LazyModule: pass
            def is_torch_available(): return True
        """,
        "lazy/utils/dummy_pt_objects.py": "class Trainer:\n    pass\n",
    }
    old = {**common, "lazy/trainer.py": """
        class Trainer:
            def training_step(self, inputs):
                return self.compute_loss(inputs)

            def compute_loss(self, inputs):
                return 0
    """}
    new = {**common, "lazy/trainer.py": """
        class Trainer:
            def training_step(self, inputs, num_items_in_batch=None):
                return self.compute_loss(inputs, num_items_in_batch=num_items_in_batch)

            def compute_loss(self, inputs, num_items_in_batch=None):
                return 0
    """}
    wheels = (write_wheel(tmp_path / "d", "lazy", "4.45.2", old),
              write_wheel(tmp_path / "d", "lazy", "4.46.0", new))
    checkout = make_checkout(tmp_path / "down", {"t.py": """
        from lazy import Trainer

        class CustomTrainer(Trainer):
            def compute_loss(self, inputs):
                return 1
    """})
    code, report = upgrade(capsys, "lazy==4.46.0", "--from", "4.45.2", "--source", wheels[0],
                           "--source", wheels[1], checkout)
    assert code == 1
    assert by_symbol(report)["CustomTrainer.compute_loss"]["message"].startswith(
        "CustomTrainer.compute_loss cannot accept the call in Trainer.training_step "
        "(lazy/trainer.py:3, 4.46.0): unexpected keyword num_items_in_batch")
    assert report["upgrade"]["subclasses"] == ["t.CustomTrainer"]


def test_a_class_the_package_moved_is_compared_under_its_public_name(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = {"mv/__init__.py": "from .old_place import Base\n", "mv/old_place.py": """
        class Base:
            def run(self):
                self.setup(1)
                self.hook_a()
                return self.work(1)

            def setup(self, x, flag=False):
                pass

            def hook_a(self):
                pass

            def work(self, x):
                return x
    """}
    new = {"mv/__init__.py": "from .new_place import Base\n", "mv/new_place.py": """
        class Base:
            def run(self):
                self.setup(1)
                self.hook_b()
                return self.work(1, extra=2)

            def setup(self, x):
                pass

            def hook_b(self):
                pass

            def work(self, x, extra=None):
                return x
    """}
    wheels = (write_wheel(tmp_path / "d", "mv", "1", old), write_wheel(tmp_path / "d", "mv",
                                                                       "2", new))
    checkout = make_checkout(tmp_path / "down", {"m.py": """
        from mv import Base

        class Mine(Base):
            def setup(self, x, flag=False):
                return super().setup(x, flag=flag)

            def hook_a(self):
                pass

            def work(self, x):
                return x
    """})
    code, report = upgrade(capsys, "mv==2", "--from", "1", "--source", wheels[0], "--source",
                           wheels[1], checkout)
    found = by_symbol(report)
    assert code == 1
    assert found["Mine.hook_a"]["message"].startswith(
        "Mine.hook_a overrides Base.hook_a, which 2 renamed to hook_b")
    assert found["Mine.work"]["message"].startswith(
        "Mine.work cannot accept the call in Base.run (mv/new_place.py:5, 2): unexpected "
        "keyword extra")
    # The checkout's own super() call no longer fits the hook's new signature.
    setup = found["Mine.setup"]
    assert setup["severity"] == "error" and "does not fit Base.setup(self, x)" in (
        setup["message"])
    assert "(mv 2: Base.setup: parameter flag removed, mv/new_place.py:7)" in setup["message"]
    assert setup["evidence"]["change"] == "signature"


# -- what must not fire ----------------------------------------------------------------------


def test_overrides_that_survive_are_not_reported(
        tmp_path: Path, wheels: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    checkout = make_checkout(tmp_path / "down", {
        "trainers.py": """
            from fw import Trainer

            class KwargsTrainer(Trainer):
                def compute_loss(self, inputs, **kwargs):
                    return 1

                def predict_batch(self, data, *args):
                    return data

            class DefaultsTrainer(Trainer):
                def compute_loss(self, inputs, return_outputs=False, num_items_in_batch=None):
                    return 1

                def eval_step(self, x, y=0):
                    return x

            class NeverCalled(Trainer):
                def save_model(self, path):  # the package never calls it on self
                    return path

                def on_validation(self):  # still called
                    pass

            class Migrated(Trainer):
                def on_epoch_end(self):  # kept for its own callers
                    pass

                def on_train_epoch_end(self):
                    self.on_epoch_end()
        """,
    })
    code, report = run_fw(capsys, wheels, checkout)
    assert report["findings"] == [], [f["message"] for f in report["findings"]]
    assert code == 0
    # Only what the checkout's bases resolve through is parsed: not fw/unrelated.py.
    assert not any("unrelated" in n for n in report["notes"]), report["notes"]
    assert sorted(s.rsplit(".", 1)[-1] for s in report["upgrade"]["subclasses"]) == [
        "DefaultsTrainer", "KwargsTrainer", "Migrated", "NeverCalled"]


def test_a_break_that_predates_the_upgrade_is_not_reported(
        tmp_path: Path, wheels: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    checkout = make_checkout(tmp_path / "down", {
        "trainers.py": """
            from fw import Trainer

            class Broken(Trainer):
                def log_metrics(self):  # never took the loss: broken with 1.0 already
                    pass

                def eval_step(self):  # 2.0 passes one more, to a call that failed already
                    pass

            class AlsoBroken(Trainer):
                def compute_loss(self):  # training_step's call failed with 1.0 already
                    pass
        """,
    })
    code, report = run_fw(capsys, wheels, checkout)
    assert (code, report["findings"]) == (0, []), [f["message"] for f in report["findings"]]


def test_a_new_caller_of_an_override_broken_before_is_reported(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = {"nc/__init__.py": """
        class Base:
            def first(self):
                self.hook(1)

            def hook(self, x):
                pass
    """}
    new = {"nc/__init__.py": """
        class Base:
            def first(self):
                self.hook(1)

            def second(self):
                self.hook(1, mode=2)

            def hook(self, x, mode=None):
                pass
    """}
    wheels = (write_wheel(tmp_path / "d", "nc", "1", old), write_wheel(tmp_path / "d", "nc",
                                                                       "2", new))
    checkout = make_checkout(tmp_path / "down", {"m.py": """
        from nc import Base

        class Mine(Base):
            def hook(self):
                pass
    """})
    code, report = upgrade(capsys, "nc==2", "--from", "1", "--source", wheels[0], "--source",
                           wheels[1], checkout)
    found = by_symbol(report)["Mine.hook"]
    assert code == 1
    assert found["message"].startswith("Mine.hook cannot accept the call in Base.second")
    assert [c["message"].split(":")[0] for c in found["evidence"]["calls"]] == [
        "Base.second calls hook"]


def test_no_subclass_of_the_package_is_clean(
        tmp_path: Path, wheels: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    checkout = make_checkout(tmp_path / "down", {"a.py": "class A:\n    def x(self): pass\n"})
    code, report = run_fw(capsys, wheels, checkout)
    assert code == 0 and report["findings"] == []
    assert any("no class in the checkout subclasses a class of fw" in n
               for n in report["notes"])


# -- shims: a warning that they will go, never an error ---------------------------------------

SHIMS_OLD = {"sh/__init__.py": """
    class Base:
        def run(self):
            self.step_a(1)
            self.step_b(1)
            self.step_c(1)
            self.step_d(1)
            self.step_e(1)
            self.step_f(1)

        def step_a(self, x): pass
        def step_b(self, x): pass
        def step_c(self, x): pass
        def step_d(self, x): pass
        def step_e(self, x): pass
        def step_f(self, x): pass
"""}
SHIMS_NEW = {"sh/__init__.py": """
    import inspect
    import warnings
    from inspect import getfullargspec


    def func_accepts_kwargs(func):
        return any(p.kind is p.VAR_KEYWORD for p in inspect.signature(func).parameters.values())


    class Base:
        def __init__(self):
            self._d_takes_scale = "scale" in inspect.signature(self.step_d).parameters

        def run(self):
            if "scale" in inspect.signature(self.step_a).parameters:
                self.step_a(1, scale=2)
            else:
                self.step_a(1)
            if func_accepts_kwargs(self.step_b):
                self.step_b(1, scale=2)
            try:
                self.step_c(1, scale=2)
            except TypeError:
                warnings.warn("step_c should take scale", DeprecationWarning)
                self.step_c(1)
            if self._d_takes_scale:
                self.step_d(1, scale=2)
            extra = {}
            if "scale" in getfullargspec(self.step_e).args:
                extra["scale"] = 2
            self.step_e(1, **extra)
            self.step_f(1, scale=2)

        def step_a(self, x, scale=1): pass
        def step_b(self, x, scale=1): pass
        def step_c(self, x, scale=1): pass
        def step_d(self, x, scale=1): pass
        def step_e(self, x, scale=1): pass
        def step_f(self, x, scale=1): pass
"""}


def test_a_shim_makes_a_warning_that_it_will_go(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wheels = (write_wheel(tmp_path / "d", "sh", "1.0", SHIMS_OLD),
              write_wheel(tmp_path / "d", "sh", "1.1", SHIMS_NEW))
    checkout = make_checkout(tmp_path / "down", {"steps.py": """
        from sh import Base

        class Old(Base):
            def step_a(self, x): pass
            def step_b(self, x): pass
            def step_c(self, x): pass
            def step_d(self, x): pass
            def step_e(self, x): pass
            def step_f(self, x): pass
    """})
    code, report = upgrade(capsys, "sh==1.1", "--from", "1.0", "--source", wheels[0],
                           "--source", wheels[1], checkout)
    found = by_symbol(report)
    # step_f: the one call with no shim, the only error.
    assert found["Old.step_f"]["severity"] == "error" and code == 1
    for name, kind in (("a", "signature-check"), ("b", "signature-check"),
                       ("c", "type-error-fallback"), ("d", "signature-check"),
                       ("e", "signature-check")):
        shimmed = found[f"Old.step_{name}"]
        assert shimmed["severity"] == "warning", shimmed["message"]
        assert shimmed["code"] == "HG002"
        assert "a shim a later release may drop" in shimmed["message"]
        assert shimmed["evidence"]["shim"]["kind"] == kind, (name, shimmed["evidence"])


def test_a_deprecation_shim_for_a_renamed_hook_is_a_warning(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = {"dp/__init__.py": """
        class Base:
            def run(self):
                self.old_hook()

            def old_hook(self):
                pass
    """}
    new = {"dp/__init__.py": """
        import warnings

        class Base:
            def run(self):
                if hasattr(self, "old_hook"):
                    warnings.warn("old_hook is deprecated: override new_hook", FutureWarning)
                    self.old_hook()
                else:
                    self.new_hook()

            def new_hook(self):
                pass
    """}
    wheels = (write_wheel(tmp_path / "d", "dp", "1", old), write_wheel(tmp_path / "d", "dp",
                                                                       "2", new))
    checkout = make_checkout(tmp_path / "down", {"m.py": """
        from dp import Base

        class Mine(Base):
            def old_hook(self):
                print("hi")
    """})
    code, report = upgrade(capsys, "dp==2", "--from", "1", "--source", wheels[0], "--source",
                           wheels[1], checkout)
    assert code == 0
    found = by_symbol(report)["Mine.old_hook"]
    assert found["severity"] == "warning" and found["code"] == "HG001"
    assert "deprecation shim" in found["message"] and "rename it to new_hook" in found["message"]


# -- where versions come from ----------------------------------------------------------------

TRAINER_CHECKOUT = {"app/t.py": """
    from fw import Trainer

    class CustomTrainer(Trainer):
        def compute_loss(self, inputs, return_outputs=False):
            return 1
"""}


def test_sdists_and_source_trees_are_read_without_running_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sdist = write_sdist(tmp_path / "d", "fw", "1.0", FW_OLD)
    tree = tmp_path / "fw-src"
    for path, data in _dedent(FW_NEW).items():
        (tree / "src" / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / "src" / path).write_bytes(data)
    (tree / "pyproject.toml").write_text('[project]\nname = "fw"\nversion = "2.0"\n')
    (tree / "setup.py").write_text("raise SystemExit('never run')\n")
    checkout = make_checkout(tmp_path / "down", TRAINER_CHECKOUT)
    code, report = upgrade(capsys, "fw==2.0", "--from", "1.0", "--source", sdist, "--source",
                           tree, checkout)
    assert code == 1
    assert set(by_symbol(report)) == {"CustomTrainer.compute_loss"}
    assert report["upgrade"]["from"]["source"].startswith("sdist ")
    assert report["upgrade"]["to"]["source"].startswith("directory ")


def test_the_installed_version_is_read_from_the_environment(
        tmp_path: Path, wheels: tuple[Path, Path], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    with zipfile.ZipFile(wheels[0]) as archive:  # installed, as an installer unpacks a wheel
        archive.extractall(site)
    (site / "fw" / "core" / "trainer.py").write_text(
        (site / "fw" / "core" / "trainer.py").read_text()
        + "\nopen(__file__ + '.imported', 'w').close()\n")
    monkeypatch.setenv("PYTHONPATH", str(site))
    checkout = make_checkout(tmp_path / "down", TRAINER_CHECKOUT)
    code, report = upgrade(capsys, "fw==2.0", "--python", sys.executable, "--source",
                           wheels[1], checkout)
    assert code == 1
    assert set(by_symbol(report)) == {"CustomTrainer.compute_loss"}
    assert report["upgrade"]["from"] == {"version": "1.0", "source": f"environment {site}"}
    assert not (site / "fw" / "core" / "trainer.py.imported").exists()  # read, not imported


def test_wheels_pip_builds_are_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    built = tmp_path / "built"
    for version, files in (("1.0", FW_OLD), ("2.0", FW_NEW)):
        project = tmp_path / f"fw-{version}"
        for path, data in _dedent(files).items():
            if path != "fw/unrelated.py":
                (project / path).parent.mkdir(parents=True, exist_ok=True)
                (project / path).write_bytes(data)
        (project / "pyproject.toml").write_text(
            '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"'
            f'\n[project]\nname = "fw"\nversion = "{version}"\n'
            '[tool.setuptools.packages.find]\ninclude = ["fw*"]\n')
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                        "--no-build-isolation", "--no-index", "-q", "-w", str(built),
                        str(project)], check=True, capture_output=True)
    old, new = sorted(built.glob("fw-*.whl"))
    checkout = make_checkout(tmp_path / "down", TRAINER_CHECKOUT)
    code, report = upgrade(capsys, "fw==2.0", "--from", "1.0", "--source", old, "--source",
                           new, checkout)
    assert code == 1 and set(by_symbol(report)) == {"CustomTrainer.compute_loss"}


def test_the_package_is_never_executed_and_the_checkout_is_left_as_it_was(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    marker = tmp_path / "ran"
    payload = f"open({str(marker)!r}, 'w').close()\n"
    old = {**FW_OLD, "fw/__init__.py": payload + textwrap.dedent(FW_OLD["fw/__init__.py"])}
    new = {**FW_NEW, "fw/__init__.py": payload + textwrap.dedent(FW_NEW["fw/__init__.py"])}
    wheels = (write_wheel(tmp_path / "d", "fw", "1.0", old),
              write_wheel(tmp_path / "d", "fw", "2.0", new))
    checkout = make_checkout(tmp_path / "down", TRAINER_CHECKOUT)
    code, _ = run_fw(capsys, wheels, checkout)
    assert code == 1 and not marker.exists()
    status = subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=checkout,
                            capture_output=True, text=True, check=True).stdout
    assert status == ""


# -- output and usage ------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["plain", "sarif", "github"])
def test_every_format_reports_the_break(
        fmt: str, tmp_path: Path, wheels: tuple[Path, Path],
        capsys: pytest.CaptureFixture[str]) -> None:
    checkout = make_checkout(tmp_path / "down", TRAINER_CHECKOUT)
    code = main(["upgrade", "fw==2.0", str(checkout), "--from", "1.0", "--source",
                 str(wheels[0]), "--source", str(wheels[1]), "--format", fmt])
    captured = capsys.readouterr()
    assert code == 1
    assert "cannot accept the call in Trainer.training_step" in captured.out
    assert "hookguard upgrade (fw 1.0 -> 2.0): 1 error, 0 warnings" in (
        captured.out + captured.err)
    if fmt == "sarif":
        sarif = json.loads(captured.out)
        result = sarif["runs"][0]["results"][0]
        assert result["ruleId"] == "HG002" and result["level"] == "error"
        uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert uri.endswith("app/t.py")


@pytest.mark.parametrize(("args", "said"), [
    (["fw>=2.0"], "bad package spec"),
    (["fw==3.0", "--from", "1.0"], "fw 3.0 not found"),
    (["fw==2.0"], "fw is not installed"),
    (["fw==2.0", "--from", "2.0"], "nothing to compare"),
    (["fw==3.0", "--from", "1.0"], "holds fw 2.0, which is neither 1.0 nor 3.0"),
])
def test_usage_errors_exit_2_with_one_line(
        args: list[str], said: str, tmp_path: Path, wheels: tuple[Path, Path],
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "path", [str(tmp_path / "nothing-installed")])
    checkout = make_checkout(tmp_path / "down", TRAINER_CHECKOUT)
    sources = [wheels[0]] if "not found" in said else wheels
    code = main(["upgrade", *args, *(f"--source={w}" for w in sources), str(checkout)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and said in err[0], err
    if " not found" in said:
        assert "--download" in err[0]


def test_an_unreadable_wheel_or_another_package_is_a_usage_error(
        tmp_path: Path, wheels: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    checkout = make_checkout(tmp_path / "down", TRAINER_CHECKOUT)
    broken = tmp_path / "fw-2.0-py3-none-any.whl"
    broken.write_bytes(b"not a zip")
    code = main(["upgrade", "fw==2.0", "--from", "1.0", "--source", str(wheels[0]),
                 "--source", str(broken), str(checkout)])
    err = capsys.readouterr().err
    assert code == 2 and "not a readable wheel" in err and len(err.strip().splitlines()) == 1
    other = write_wheel(tmp_path / "other", "other", "2.0", {"other/__init__.py": ""})
    code = main(["upgrade", "fw==2.0", "--from", "1.0", "--source", str(wheels[0]),
                 "--source", str(other), str(checkout)])
    assert code == 2 and "holds other, not fw" in capsys.readouterr().err


# -- the cache -------------------------------------------------------------------------------


def _without_timing(report: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(report, sort_keys=True), object_hook=lambda d: {
        k: v for k, v in d.items() if k not in ("seconds", "elapsed", "duration")})


SHIM_CHECKOUT = {"steps.py": """
    from sh import Base

    class Old(Base):
        def step_a(self, x): pass
        def step_b(self, x): pass
        def step_c(self, x): pass
        def step_d(self, x): pass
        def step_e(self, x): pass
        def step_f(self, x): pass
"""}


def test_a_warm_run_equals_a_cold_one_and_a_tampered_record_is_not_trusted(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    wheels = (write_wheel(tmp_path / "d", "sh", "1.0", SHIMS_OLD),
              write_wheel(tmp_path / "d", "sh", "1.1", SHIMS_NEW))
    checkout = make_checkout(tmp_path / "down", SHIM_CHECKOUT)
    args = ("sh==1.1", "--from", "1.0", "--source", wheels[0], "--source", wheels[1], checkout)
    uncached = upgrade(capsys, *args, "--no-cache")
    records = tmp_path / "xdg-cache" / "hookguard" / "packages" / "records"
    assert not records.exists()
    cold = upgrade(capsys, *args)
    assert cold[0] == 1 and _without_timing(cold[1]) == _without_timing(uncached[1])
    assert sorted(p.name for p in records.iterdir()) == ["sh-1.0", "sh-1.1", "sh-wheels"]
    assert not (checkout / ".hookguard_cache").exists()  # nothing written into the checkout

    def no_parse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a package file was parsed on a warm run")

    # Warm: no file of either version is parsed, for its record or for its shims.
    with monkeypatch.context() as patched:
        patched.setattr("hookguard.upgrade.package.extract", no_parse)
        patched.setattr("hookguard.upgrade.shims.parse_quietly", no_parse)
        warm = upgrade(capsys, *args)
    assert warm[0] == cold[0] and _without_timing(warm[1]) == _without_timing(cold[1])

    # A cached record forged (same size, not re-signed) is rebuilt, never believed.
    shards = sorted((records / "sh-1.1").glob("records-*.msgpack"))
    forged = 0
    for shard in shards:
        data = shard.read_bytes()
        if b"step_f" in data:
            shard.write_bytes(data.replace(b"step_f", b"step_g"))
            forged += 1
    assert forged
    tampered = upgrade(capsys, *args)
    assert tampered[0] == cold[0]
    assert by_symbol(tampered[1]) == by_symbol(cold[1])
    assert by_symbol(tampered[1])["Old.step_f"]["severity"] == "error"
    assert "not signed with this machine's cache key" in json.dumps(tampered[1])
    # ... and the rebuilt one is trusted again.
    assert _without_timing(upgrade(capsys, *args)[1]) == _without_timing(cold[1])


@pytest.mark.parametrize("shape", ["adapter", "annotated-member"])
def test_the_version_answers_of_a_warm_run_equal_a_cold_ones(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, shape: str) -> None:
    """The answers kept per version (where a hook's name occurs, the keywords passed, the
    keyword adapters): a warm run reads them back, parsing nothing, and says what a cold one
    and an uncached one say."""
    if shape == "adapter":
        wheels = (write_wheel(tmp_path / "d", "orm", "2.2", ORM_OLD),
                  write_wheel(tmp_path / "d", "orm", "3.0", ORM_NEW))
        checkout = make_checkout(tmp_path / "down", {"app/__init__.py": "",
                                                     "app/fields.py": ORM_FIELDS})
        spec = ("orm==3.0", "--from", "2.2")
    else:
        wheels = (write_wheel(tmp_path / "d", "ck", "1.0", CLICK_OLD),
                  write_wheel(tmp_path / "d", "ck", "2.0", CLICK_NEW))
        checkout = make_checkout(tmp_path / "down", {"app/__init__.py": "",
                                                     "app/types.py": CLICK_TYPES})
        spec = ("ck==2.0", "--from", "1.0")
    args = (*spec, "--source", wheels[0], "--source", wheels[1], checkout)
    uncached = upgrade(capsys, *args, "--no-cache")
    cold = upgrade(capsys, *args)
    assert cold[0] == 1 and _without_timing(cold[1]) == _without_timing(uncached[1])

    def no_parse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a package file was read again on a warm run")

    with monkeypatch.context() as patched:
        patched.setattr("hookguard.upgrade.check.keyword_uses", no_parse)
        patched.setattr("hookguard.upgrade.check.keyword_adapters", no_parse)
        patched.setattr("hookguard.upgrade.package.extract", no_parse)
        warm = upgrade(capsys, *args)
    assert warm[0] == cold[0] and _without_timing(warm[1]) == _without_timing(cold[1])
    assert [f["severity"] for f in warm[1]["findings"]] == ["error"]
