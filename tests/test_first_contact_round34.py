"""The evidence shape first-contact round 34 showed to be no proof (neuroconv's mixins): a
minimal fixture written from the description, with cases that must still fire."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hookguard.findings import Severity
from tests.conftest import GitRepo, audited

pytestmark = pytest.mark.usefixtures("private_key_dir")

BASE = """
class ConversionTests:
    def test_all_conversion_checks(self):
        self.check_backend("hdf5")

    def check_backend(self, backend):
        return backend
EXTRA"""
MIXIN = """
from pkg.base import ConversionTests


class MedPCMixin(ConversionTests):
    def test_all_conversion_checks(self):
        self.check_backend("zarr")

    def check_backend(self, backend):
        return backend.upper()
"""
KEY = "HG001 pkg.mixin.MedPCMixin.check_backend"


def _renamed(repo: GitRepo, extra: str) -> dict[str, object]:
    """The base renames ``check_backend`` to a test pytest runs itself; ``extra`` is what
    else the base holds after the rename."""
    repo.commit("conversion checks", {"pkg/__init__.py": "",
                                      "pkg/base.py": BASE.replace("EXTRA", ""),
                                      "pkg/mixin.py": MIXIN})
    renamed = BASE.replace('self.check_backend("hdf5")', "pass").replace(
        "check_backend", "test_backend").replace("EXTRA", extra)
    repo.commit("the backend check becomes a test of its own", {"pkg/base.py": renamed})
    return dict(audited(repo))


def test_a_replacement_of_the_base_caller_that_calls_the_old_name_is_the_hook_point(
    git_repo: Callable[..., GitRepo],
) -> None:
    """``MedPCMixin`` replaces ``test_all_conversion_checks`` (no ``super()``) and calls its
    ``check_backend`` there: it runs on every run of the test, and nothing of the base calls
    the new name for it."""
    assert KEY not in _renamed(git_repo(), "")


def test_a_base_caller_of_the_new_name_it_inherits_keeps_the_error(
    git_repo: Callable[..., GitRepo],
) -> None:
    """The base's ``run`` (inherited as is) calls ``test_backend`` for every class: the hook
    point went there, and the mixin's ``check_backend`` is not what it runs (MiniMax-M3)."""
    extra = "\n    def run(self):\n        return self.test_backend('hdf5')\n"
    found = _renamed(git_repo(), extra)
    assert found[KEY].severity is Severity.ERROR  # type: ignore[attr-defined]
