"""Rounds 15 to 19's shapes (docs/validation.md), each with a case that must fire and one that
must not: a forwarding method's member call is no hook call even where a context-free patch
does not show the ``def`` it is in; a string a change adds refuses the hook only beside a
``raise`` or a warning; an override of what a known base outside the checkout defines
(``unittest.TestCase.setUpClass``) is no stale override; a renamed hook the class calls by its
old name from its own replacement of the base's caller still runs; a Qt base defines no name
with a leading underscore, so it hides no removed private hook."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hookguard.findings import Severity
from tests.conftest import GitRepo, audited

pytestmark = pytest.mark.usefixtures("private_key_dir")


BACKEND = """\
class DatastoreBackend:
    def configure(self, config):
        return config

    def before_fork(self):
        pass


class PostgresBackend(DatastoreBackend):
    def before_fork(self):
        dispose_engines()


def dispose_engines():
    pass
"""

PLUGIN = """\
from pkg.backend import PostgresBackend


class DatastorePlugin:
    def __init__(self):
        self.backend = PostgresBackend()

    def {method}(self):
        x = 1
        y = 2
        self.backend.before_fork()
"""


def _forwarding_repo(repo: GitRepo, method: str) -> None:
    """The plugin calls ``self.backend.before_fork()`` inside ``method``, three lines below its
    ``def`` (so a patch without context shows no ``def``); then one commit drops the base's
    ``before_fork`` and rewrites that call into a duck-typed lookup."""
    repo.commit("backend hook", {"pkg/__init__.py": "", "pkg/backend.py": BACKEND,
                                 "pkg/plugin.py": PLUGIN.format(method=method)})
    repo.commit("Use duck-typing to call before_fork", {
        "pkg/backend.py": BACKEND.replace("\n    def before_fork(self):\n        pass\n", ""),
        "pkg/plugin.py": PLUGIN.format(method=method).replace(
            "        self.backend.before_fork()\n",
            "        hook = getattr(self.backend, 'before_fork', None)\n"
            "        if hook is not None:\n            hook()\n"),
    })


def test_a_forwarding_method_rewritten_is_no_dropped_hook_call(
    git_repo: Callable[..., GitRepo],
) -> None:
    """CKAN's ``DatastorePlugin.before_fork`` forwards to the backend's: the line it rewrote is
    inside a method of the hook's own name, which a ``-U0`` patch does not show."""
    repo = git_repo()
    _forwarding_repo(repo, "before_fork")
    found = audited(repo).get("HG001 pkg.backend.PostgresBackend.before_fork")
    assert found is None or found.severity is Severity.WARNING


def test_a_call_rewritten_into_a_lookup_by_name_is_no_refusal(
    git_repo: Callable[..., GitRepo],
) -> None:
    """The same rewrite inside ``prepare``: the framework's own code stopped calling the hook
    directly, but the ``getattr(self.backend, "before_fork", None)`` the commit added still
    calls it. A string the change adds counts as a refusal only beside a ``raise`` or a
    warning (before, it silenced the lookup and the override was reported dead)."""
    repo = git_repo()
    _forwarding_repo(repo, "prepare")
    found = audited(repo).get("HG001 pkg.backend.PostgresBackend.before_fork")
    assert found is None or found.severity is Severity.WARNING


def test_a_string_added_beside_a_raise_is_a_refusal(git_repo: Callable[..., GitRepo]) -> None:
    """Must fire: the commit that drops the hook adds a validator refusing it by name
    (``if getattr(backend, "before_fork", None): raise RuntimeError``): the lookup refuses,
    the override is dead."""
    repo = git_repo()
    repo.commit("backend hook", {"pkg/__init__.py": "", "pkg/backend.py": BACKEND,
                                 "pkg/plugin.py": PLUGIN.format(method="prepare")})
    repo.commit("Remove before_fork", {
        "pkg/backend.py": BACKEND.replace("\n    def before_fork(self):\n        pass\n", ""),
        "pkg/plugin.py": PLUGIN.format(method="prepare").replace(
            "        self.backend.before_fork()\n",
            "        if callable(getattr(self.backend, 'before_fork', None)):\n"
            "            raise RuntimeError('before_fork was removed')\n"),
    })
    found = audited(repo)["HG001 pkg.backend.PostgresBackend.before_fork"]
    assert found.severity is Severity.ERROR


def test_the_dropped_call_without_a_lookup_is_an_error(git_repo: Callable[..., GitRepo]) -> None:
    """Must fire: the call in ``prepare`` is deleted outright, three lines below the ``def``."""
    repo = git_repo()
    repo.commit("backend hook", {"pkg/__init__.py": "", "pkg/backend.py": BACKEND,
                                 "pkg/plugin.py": PLUGIN.format(method="prepare")})
    repo.commit("Drop before_fork", {
        "pkg/backend.py": BACKEND.replace("\n    def before_fork(self):\n        pass\n", ""),
        "pkg/plugin.py": PLUGIN.format(method="prepare").replace(
            "        self.backend.before_fork()\n", ""),
    })
    found = audited(repo)["HG001 pkg.backend.PostgresBackend.before_fork"]
    assert found.severity is Severity.ERROR


TEST_BASE = """\
import unittest


class BaseEngineTestCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.connection = object()

    def run_case(self):
        return self.connection
"""

TEST_SUB = """\
from pkg.tests.base import BaseEngineTestCase


class TestColumns(BaseEngineTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.table = "t"

    def test_columns(self):
        assert self.table
"""


def test_an_override_of_a_known_external_base_method_is_not_stale(
    git_repo: Callable[..., GitRepo],
) -> None:
    """The test base drops its ``setUpClass``: the subclass's now overrides
    ``unittest.TestCase.setUpClass``, which the runner calls (Cassandra driver's 49 warnings)."""
    repo = git_repo()
    repo.commit("tests", {"pkg/__init__.py": "", "pkg/tests/__init__.py": "",
                          "pkg/tests/base.py": TEST_BASE, "pkg/tests/test_cols.py": TEST_SUB})
    repo.commit("Reverted test base to original", {"pkg/tests/base.py": TEST_BASE.replace(
        "    @classmethod\n    def setUpClass(cls):\n        cls.connection = object()\n\n",
        "")})
    assert "HG001 pkg.tests.test_cols.TestColumns.setUpClass" not in audited(repo)


def test_a_hook_no_known_base_defines_stays_stale(git_repo: Callable[..., GitRepo]) -> None:
    """Must fire: the same drop of a hook ``unittest.TestCase`` does not define
    (``setUpEngine``, which the base's ``setUp`` called) is a stale override."""
    repo = git_repo()
    base = TEST_BASE.replace("def setUpClass(cls)", "def setUpEngine(cls)").replace(
        "    def run_case(self):", "    def setUp(self):\n        self.setUpEngine()\n\n"
        "    def run_case(self):")
    sub = TEST_SUB.replace("setUpClass", "setUpEngine")
    repo.commit("tests", {"pkg/__init__.py": "", "pkg/tests/__init__.py": "",
                          "pkg/tests/base.py": base, "pkg/tests/test_cols.py": sub})
    repo.commit("Drop setUpEngine", {"pkg/tests/base.py": base.replace(
        "    @classmethod\n    def setUpEngine(cls):\n        cls.connection = object()\n\n",
        "").replace("        self.setUpEngine()\n", "        pass\n")})
    found = audited(repo)["HG001 pkg.tests.test_cols.TestColumns.setUpEngine"]
    assert found.severity is Severity.ERROR


BASE_METHOD = """\
class BaseMethod:
    def __init__(self, test_set):
        self.test_set = test_set

    def _eval(self, model, test_set):
        return model(test_set)

    def evaluate(self, model):
        return self._eval(model=model, test_set=self.test_set)
"""

PSE = """\
from pkg.base import BaseMethod


class PropensityEvaluation(BaseMethod):
    def _eval(self, model, test_set, props=None):
        return model(test_set, props)

    def evaluate(self, model):
{body}
"""


def _renamed_eval_repo(repo: GitRepo, body: str) -> None:
    repo.commit("methods", {"pkg/__init__.py": "", "pkg/base.py": BASE_METHOD,
                            "pkg/pse.py": PSE.format(body=body)})
    repo.commit("make eval() a staticmethod", {"pkg/base.py": BASE_METHOD.replace(
        "_eval", "eval")})


def test_an_own_replacement_of_the_bases_caller_keeps_the_old_name_running(
    git_repo: Callable[..., GitRepo],
) -> None:
    """cornac's ``PropensityStratifiedEvaluation``: its ``evaluate`` replaces the base's (no
    ``super()``) and calls ``self._eval`` itself, in a line older than the rename: this
    class's hook point is its own, and the override runs there."""
    repo = git_repo()
    _renamed_eval_repo(repo, "        return self._eval(model, self.test_set, props=1)")
    found = audited(repo).get("HG001 pkg.pse.PropensityEvaluation._eval")
    assert found is None or found.severity is Severity.WARNING


def test_a_replacement_passing_the_call_on_leaves_the_old_name_dead(
    git_repo: Callable[..., GitRepo],
) -> None:
    """Must fire: the same class whose ``evaluate`` only passes the call on with ``super()``
    (the base's caller now calls ``eval``: ``_eval`` never runs)."""
    repo = git_repo()
    _renamed_eval_repo(repo, "        return super().evaluate(model)")
    found = audited(repo)["HG001 pkg.pse.PropensityEvaluation._eval"]
    assert found.severity is Severity.ERROR


MENU = """\
from PyQt6 import QtWidgets


class CheckboxMenuItem(QtWidgets.QWidget):
    def __init__(self, text, parent=None):
        super().__init__(parent=parent)
        self.widget = self.{hook}(text)

    def {hook}(self, text):
        return text
"""

COLLECTION = """\
from pkg.menuitem import CheckboxMenuItem


class CollectionMenuItem(CheckboxMenuItem):
    def {hook}(self, text):
        return text.upper()
"""


def _qt_repo(repo: GitRepo, hook: str) -> None:
    repo.commit("menu", {"pkg/__init__.py": "", "pkg/menuitem.py": MENU.format(hook=hook),
                         "pkg/collection.py": COLLECTION.format(hook=hook)})
    repo.commit("Re-implement CheckboxMenuItem", {"pkg/menuitem.py": MENU.format(hook=hook).replace(
        f"        self.widget = self.{hook}(text)\n\n    def {hook}(self, text):\n"
        "        return text\n", "        self.widget = text\n")})


def test_a_qt_base_hides_no_removed_private_hook(git_repo: Callable[..., GitRepo]) -> None:
    """picard's ``CollectionMenuItem._create_checkbox_widget`` over a ``QWidget``: Qt's
    generated camelCase classes define no ``_name``, so the removed hook is gone for good."""
    repo = git_repo()
    _qt_repo(repo, "_create_checkbox_widget")
    found = audited(repo)["HG001 pkg.collection.CollectionMenuItem._create_checkbox_widget"]
    assert found.severity is Severity.ERROR


def test_a_qt_base_may_define_a_public_name(git_repo: Callable[..., GitRepo]) -> None:
    """Must not be an error: a removed ``createWidget`` may be ``QWidget``'s (Qt's API is
    not listed), so the override may still run."""
    repo = git_repo()
    _qt_repo(repo, "createWidget")
    found = audited(repo).get("HG001 pkg.collection.CollectionMenuItem.createWidget")
    assert found is None or found.severity is Severity.WARNING
