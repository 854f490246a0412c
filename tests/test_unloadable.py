"""Warnings about classes whose file cannot load are held back (``hookguard.model.loadable``,
the ``unloadable`` hedge): the file imports, unconditionally at module level, a module of the
checkout a commit deleted, or a name a module of the checkout never spells. deepchem's
``contrib/`` (first contact, round 7): four reported ``predict_proba`` warnings in modules that
import the deleted ``deepchem.nn`` or ``log`` from ``deepchem.utils.save``, which no longer
has it. Each proof has cases that must hold a warning back and cases that must not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hookguard.findings import Severity
from hookguard.hedges import Hedge
from tests.conftest import GitRepo, audited
from tests.test_hedges import _lost_hook, audit_json, warnings_of

pytestmark = pytest.mark.usefixtures("private_key_dir")

KEY = "HG001 pkg.sub.Sub.on_epoch_end"
SUB = ("from pkg.base import Base\n\n\nclass Sub(Base):\n"
       "    def on_epoch_end(self):\n        self.saved = True\n")


def cached_json(root: Path) -> dict[str, Any]:
    """``audit --format json`` with the cache (warm from the second run on)."""
    proc = subprocess.run(
        [sys.executable, "-m", "hookguard", "audit", "--format", "json"],
        cwd=root, capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    assert proc.returncode in (0, 1), proc.stderr
    document: dict[str, Any] = json.loads(proc.stdout)
    return document


def _with_import(repo: GitRepo, imports: str, files: dict[str, str] | None = None) -> None:
    """The external-base warning of ``test_hedges`` (reported by default), its file
    beginning with ``imports``."""
    _lost_hook(repo, "class Base(Callback):\n", "class Base(Callback):\n")
    repo.commit("sub imports", {"pkg/sub.py": imports + SUB, **(files or {})})


def _deleted_helpers(repo: GitRepo, imports: str) -> None:
    repo.commit("helpers", {"pkg/helpers.py": "def thing():\n    return 1\n"})
    _with_import(repo, imports)
    (repo.root / "pkg/helpers.py").unlink()
    repo.commit("Remove the helpers")


def test_a_warning_in_a_file_importing_a_deleted_module_is_held_back(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = git_repo()
    _deleted_helpers(repo, "from pkg.helpers import thing\n")
    found = audited(repo)[KEY]
    assert found.severity is Severity.WARNING
    assert found.evidence["hedges"] == [Hedge.EXTERNAL_BASE.value, Hedge.UNLOADABLE.value]
    assert "pkg.helpers (line 1)" in found.evidence["unloadable"]
    assert "(Remove the helpers) deleted" in found.message
    assert KEY not in warnings_of(audit_json(repo.root))
    assert KEY in warnings_of(audit_json(repo.root, "--all-warnings"))


@pytest.mark.parametrize("imports", [
    "import pkg.helpers\n",
    "from .helpers import thing\n",
    "from pkg import base\nimport pkg.helpers.deeper as deep\n",
])
def test_each_import_form_needs_the_deleted_module(
    git_repo: Callable[..., GitRepo], imports: str,
) -> None:
    repo = git_repo()
    _deleted_helpers(repo, imports)
    assert Hedge.UNLOADABLE.value in audited(repo)[KEY].evidence["hedges"]


@pytest.mark.parametrize("imports", [
    # an import that may never run, or has a fallback
    "try:\n    from pkg.helpers import thing\nexcept ImportError:\n    thing = None\n",
    "import sys\nif sys.version_info < (3, 8):\n    from pkg.helpers import thing\n",
    "def load():\n    from pkg.helpers import thing\n    return thing\n",
    # a module outside the checkout: whether it is installed is not the checkout's to say
    "from other_package.helpers import thing\n",
])
def test_a_conditional_import_or_another_package_proves_nothing(
    git_repo: Callable[..., GitRepo], imports: str,
) -> None:
    repo = git_repo()
    _deleted_helpers(repo, imports)
    assert KEY in warnings_of(audit_json(repo.root))


def test_a_module_never_committed_proves_nothing(git_repo: Callable[..., GitRepo]) -> None:
    """``_version.py`` written by the build: absent from every commit, present when it runs."""
    repo = git_repo()
    _with_import(repo, "from pkg._version import version\n")
    assert KEY in warnings_of(audit_json(repo.root))


@pytest.mark.parametrize("replacement", [
    "pkg/helpers.pyx",  # rewritten in Cython: built into an extension module
    "pkg/helpers/__init__.py",  # a package now
    "pkg/helpers.cpython-311-x86_64-linux-gnu.so",
])
def test_a_deleted_module_that_head_still_has_in_another_form_proves_nothing(
    git_repo: Callable[..., GitRepo], replacement: str,
) -> None:
    repo = git_repo()
    _deleted_helpers(repo, "from pkg.helpers import thing\n")
    repo.commit("helpers come back", {replacement: "thing = 1\n"})
    assert KEY in warnings_of(audit_json(repo.root))


@pytest.mark.parametrize("ignore", [
    {".gitignore": "*.pyc\n/pkg/helpers.py\n"},
    {"pkg/.gitignore": "helpers.py\n"},
    {".gitignore": "pkg/helpers*\n"},
])
def test_a_module_deleted_to_be_generated_proves_nothing(
    git_repo: Callable[..., GitRepo], ignore: dict[str, str],
) -> None:
    """rqalpha's and pyroomacoustics' shape (a scan of rounds 21-28's clones): the package's
    ``__init__.py`` imports its ``_version.py``, deleted when setuptools-scm took over writing
    it, and ignored by a ``.gitignore`` of ``HEAD`` since."""
    repo = git_repo()
    _deleted_helpers(repo, "from pkg.helpers import thing\n")
    repo.commit("generated now", ignore)
    assert KEY in warnings_of(audit_json(repo.root))


def test_a_gitignore_naming_other_files_keeps_the_proof(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = git_repo()
    _deleted_helpers(repo, "from pkg.helpers import thing\n")
    repo.commit("ignores", {".gitignore": "*.py[cod]\n__pycache__/\nbuild/\npkg/helpers.txt\n"})
    assert KEY not in warnings_of(audit_json(repo.root))


def test_a_module_deleted_and_written_back_proves_nothing(
    git_repo: Callable[..., GitRepo],
) -> None:
    """Warm or cold: the run after the module came back reports the warning again (the
    hedge is asked each run, never kept in the cache's findings)."""
    repo = git_repo()
    _deleted_helpers(repo, "from pkg.helpers import thing\n")
    assert KEY not in warnings_of(cached_json(repo.root))
    repo.commit("Bring the helpers back", {"pkg/helpers.py": "def thing():\n    return 2\n"})
    warm = cached_json(repo.root)
    assert KEY in warnings_of(warm)
    assert warm["findings"] == audit_json(repo.root)["findings"]


def test_errors_keep_their_level(git_repo: Callable[..., GitRepo]) -> None:
    """An error's proof (the override never runs) holds whether the class loads or not."""
    repo = git_repo()
    repo.commit("helpers", {"pkg/helpers.py": "def thing():\n    return 1\n"})
    _lost_hook(repo, "class Base:\n", "class Base:\n")
    repo.commit("sub imports", {"pkg/sub.py": "from pkg.helpers import thing\n" + SUB})
    (repo.root / "pkg/helpers.py").unlink()
    repo.commit("Remove the helpers")
    found = audited(repo)[KEY]
    assert found.severity is Severity.ERROR
    assert "unloadable" not in found.evidence


# -- a name the module never spells ------------------------------------------------------------

UTIL = "import logging\n\nlogger = logging.getLogger(__name__)\n"
LOG = "\n\ndef log(message):\n    logger.info(message)\n"


def _log_removed(repo: GitRepo, util: str, extra: dict[str, str] | None = None) -> None:
    """``pkg.util`` defines ``log``; ``pkg/sub.py`` imports it; then a commit leaves
    ``pkg/util.py`` as ``util``."""
    repo.commit("util", {"pkg/__init__.py": "", "pkg/util.py": UTIL + LOG})
    _with_import(repo, "from pkg.util import log\n", extra)
    repo.commit("remove log", {"pkg/util.py": util})


@pytest.mark.parametrize("util", [
    UTIL,
    UTIL + "from pkg.more import *\n",  # what a star import gives is read too
])
def test_a_name_whose_definition_a_commit_removed_makes_the_file_unloadable(
    git_repo: Callable[..., GitRepo], util: str,
) -> None:
    repo = git_repo()
    _log_removed(repo, util, {"pkg/more.py": "def save():\n    pass\n"})
    found = audited(repo)[KEY]
    assert found.evidence["hedges"] == [Hedge.EXTERNAL_BASE.value, Hedge.UNLOADABLE.value]
    assert found.evidence["unloadable"].startswith(
        "it imports log from pkg.util (line 1), which no longer defines it since ")
    assert found.evidence["unloadable"].endswith("(remove log)")


@pytest.mark.parametrize("util", [
    UTIL + "# log: see logger\n",  # spelled, if only in a comment: not proved absent
    UTIL + "from pkg.more import *\n",  # (pkg/more.py defines it)
    UTIL + "from numpy import *\n",  # a star import of what the checkout does not hold
    UTIL + "def __getattr__(name):\n    return logger\n",
    UTIL + "globals()['lo' + 'g'] = logger\n",
    UTIL + "import sys\nsetattr(sys.modules[__name__], 'lo' + 'g', logger)\n",
])
def test_a_module_that_may_bind_the_name_proves_nothing(
    git_repo: Callable[..., GitRepo], util: str,
) -> None:
    repo = git_repo()
    _log_removed(repo, util, {"pkg/more.py": "def log():\n    pass\n"})
    assert KEY in warnings_of(audit_json(repo.root))


def test_a_name_the_module_never_defined_proves_nothing(
    git_repo: Callable[..., GitRepo],
) -> None:
    """zipline's ``api``: its functions are given to it by ``setattr(zipline.api, ...)`` in
    another module, and its text never spells them; no commit took a definition away."""
    repo = git_repo()
    _with_import(repo, "from pkg.util import log\n", {
        "pkg/util.py": UTIL,
        "pkg/register.py": "import pkg.util\n\nsetattr(pkg.util, 'log', print)\n"})
    assert KEY in warnings_of(audit_json(repo.root))


def test_a_dunder_name_proves_nothing(git_repo: Callable[..., GitRepo]) -> None:
    """``from .config import __doc__`` (GPflow): every module has one, spelled or not."""
    repo = git_repo()
    repo.commit("util", {"pkg/__init__.py": "", "pkg/util.py": UTIL + "__doc__ = 'x'\n"})
    _with_import(repo, "from pkg.util import __doc__\n")
    repo.commit("no docstring", {"pkg/util.py": UTIL})
    assert KEY in warnings_of(audit_json(repo.root))


def test_a_name_from_a_package_proves_nothing(git_repo: Callable[..., GitRepo]) -> None:
    """``from pkg.tools import log``: ``log`` may be a submodule a build writes."""
    repo = git_repo()
    repo.commit("tools", {"pkg/__init__.py": "", "pkg/tools/__init__.py": UTIL + LOG})
    _with_import(repo, "from pkg.tools import log\n")
    repo.commit("remove log", {"pkg/tools/__init__.py": UTIL})
    assert KEY in warnings_of(audit_json(repo.root))


def test_the_text_read_is_the_text_audited(git_repo: Callable[..., GitRepo]) -> None:
    """A module edited to spell the name is read as edited (uncommitted, too)."""
    repo = git_repo()
    _log_removed(repo, UTIL)
    assert KEY not in warnings_of(cached_json(repo.root))
    Path(repo.root / "pkg/util.py").write_text(UTIL + "log = logger.info\n")
    assert KEY in warnings_of(cached_json(repo.root))


def test_a_module_built_from_a_source_elsewhere_proves_nothing(
    git_repo: Callable[..., GitRepo],
) -> None:
    """enaml: ``enaml/core/funchelper.py`` deleted when the extension became required; the
    extension ``enaml.core.funchelper`` is built from ``enaml/src/funchelper.cpp``."""
    repo = git_repo()
    _deleted_helpers(repo, "from pkg.helpers import thing\n")
    repo.commit("extension", {"src/helpers.cpp": "// the module, in C++\n"})
    assert KEY in warnings_of(audit_json(repo.root))


def test_a_package_found_only_from_another_folder_proves_nothing(
    git_repo: Callable[..., GitRepo],
) -> None:
    """gluonts' ``nursery/SCott`` scripts import the installed ``pts``; the checkout's ``pts``
    lies in ``nursery/robust-mts-attack/``, found only when run from there."""
    repo = git_repo()
    repo.commit("nursery", {"nursery/attack/pts/__init__.py": "",
                            "nursery/attack/pts/gone.py": "x = 1\n",
                            "nursery/scott/run.py": "from pts.gone import x\n" + SUB})
    _lost_hook(repo, "class Base(Callback):\n", "class Base(Callback):\n")
    (repo.root / "nursery/attack/pts/gone.py").unlink()
    repo.commit("drop gone")
    shown = warnings_of(audit_json(repo.root))
    assert any(k.endswith("Sub.on_epoch_end") and "run" in k for k in shown), shown.keys()


def test_a_relative_import_past_the_named_top_proves_nothing(
    git_repo: Callable[..., GitRepo],
) -> None:
    """masonite's shape (round 21, found by a scan of the rounds' clones): ``drivers/`` has no
    ``__init__.py``, so the checkout names ``app/drivers/queue/driver.py`` ``queue.driver``;
    its ``from ...core.errors import QueueError`` would read as the top-level ``core.errors``
    (another package, without ``QueueError``); at run time it is ``app.core.errors``."""
    repo = git_repo()
    repo.commit("drivers", {
        "app/__init__.py": "",
        "app/core/__init__.py": "",
        "app/core/errors.py": "class QueueError(Exception):\n    pass\n",
        "app/drivers/queue/__init__.py": "",
        "app/drivers/queue/driver.py": "from ...core.errors import QueueError\n"
                                       "from pkg.base import Base\n\n\nclass Driver(Base):\n"
                                       "    def on_epoch_end(self):\n        self.saved = True\n",
        "core/__init__.py": "",
        "core/errors.py": UTIL,
    })
    _lost_hook(repo, "class Base(Callback):\n", "class Base(Callback):\n")
    shown = warnings_of(audit_json(repo.root))
    assert "HG001 queue.driver.Driver.on_epoch_end" in shown, shown.keys()


@pytest.mark.parametrize("files", [
    # a package of the checkout named like the standard library's
    {"email/__init__.py": "", "email/util.py": UTIL, "pkg/sub.py": "from email.util import log\n"},
    # a lone module at the top, not a package: found only from its folder
    {"util.py": UTIL, "pkg/sub.py": "from util import log\n"},
])
def test_a_module_whose_identity_is_not_sure_proves_nothing(
    git_repo: Callable[..., GitRepo], files: dict[str, str],
) -> None:
    repo = git_repo()
    imports = files.pop("pkg/sub.py")
    _with_import(repo, imports, files)
    assert KEY in warnings_of(audit_json(repo.root))


def test_a_name_moved_to_a_setattr_elsewhere_proves_nothing(
    git_repo: Callable[..., GitRepo],
) -> None:
    """zipline: ``def symbol`` left ``zipline/api.py`` for a decorator that sets each API
    function on the module, ``setattr(zipline.api, f.__name__, wrapped)``."""
    repo = git_repo()
    _log_removed(repo, UTIL, {"pkg/register.py": (
        "import pkg.util\n\n\ndef api_method(f):\n    setattr(pkg.util, f.__name__, f)\n"
        "    return f\n\n\n@api_method\ndef log(message):\n    print(message)\n")})
    assert KEY in warnings_of(audit_json(repo.root))
