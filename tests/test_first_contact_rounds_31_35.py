"""Round 35's open HG001 shape, as a minimal fixture written from its description, with a case
that must still fire: a method whose class came under the hook's owner only after the hook was
gone (pyroute2's ``AsyncMPTCP.endpoint``). And a narrowing tried for round 31's microscope and
taken back: a removing commit that re-bases the override's own class does not show the method
kept on purpose (Merlion's ``BOCPD._online_model``, a true error of round 30, left dead by the
commit that also took ``AutoMLMixIn`` off its class)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hookguard.findings import Severity
from tests.conftest import GitRepo, audited

pytestmark = pytest.mark.usefixtures("private_key_dir")

CORE = """
class AsyncCore:
    def __init__(self):
        self._endpoint = None
        self._transport = None

    def endpoint(self):
        return self._endpoint

    def setup(self):
        if self.endpoint() is not None:
            return
        self._endpoint = object()


class SyncAPI:
    async_class = AsyncCore

    def __init__(self):
        self.asyncore = self.async_class()
"""
CORE_WITHOUT_HOOK = """
class AsyncCore:
    def __init__(self):
        self._transport = None

    def setup(self):
        if self._transport is not None:
            return
        self._transport = object()


class SyncAPI:
    async_class = AsyncCore

    def __init__(self):
        self.asyncore = self.async_class()
"""
SYNC_ONLY = """
from pkg.core import SyncAPI


class MPTCP(SyncAPI):
    def endpoint(self, cmd, **kwarg):
        return (cmd, kwarg)
"""
RENAMED_AND_REBASED = """
from pkg.core import AsyncCore


class AsyncMPTCP(AsyncCore):
    def endpoint(self, cmd, **kwarg):
        return (cmd, kwarg)
"""
UNDER_THE_OWNER = """
from pkg.core import AsyncCore


class AsyncMPTCP(AsyncCore):
    def endpoint(self, cmd, **kwarg):
        return (cmd, kwarg)
"""
KEY = "HG001 pkg.mptcp.AsyncMPTCP.endpoint"


def test_a_class_rebased_under_the_owner_after_the_removal_was_never_an_override(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = git_repo()
    repo.commit("one", {"pkg/__init__.py": "", "pkg/core.py": CORE, "pkg/mptcp.py": SYNC_ONLY})
    repo.commit("two: the core drops its endpoint hook", {"pkg/core.py": CORE_WITHOUT_HOOK})
    repo.commit("three: the sync class becomes an async one", {"pkg/mptcp.py": RENAMED_AND_REBASED})
    # The method's lines are older than the removal, but while the hook existed they belonged
    # to MPTCP, outside the owner's line.
    assert KEY not in audited(repo)


def test_a_class_under_the_owner_while_the_hook_existed_still_fires(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = git_repo()
    repo.commit("one", {"pkg/__init__.py": "", "pkg/core.py": CORE,
                        "pkg/mptcp.py": UNDER_THE_OWNER})
    repo.commit("two: the core drops its endpoint hook", {"pkg/core.py": CORE_WITHOUT_HOOK})
    found = audited(repo)
    assert KEY in found and found[KEY].severity is Severity.ERROR


ABC = """
class TriggerTarget:
    def trigger(self):
        raise NotImplementedError


class Camera:
    def grab(self):
        self.soft_trigger()
        return self.read()

    def soft_trigger(self):
        raise NotImplementedError

    def read(self):
        return 0
"""
ABC_WITHOUT_HOOK = """
class TriggerTarget:
    def trigger(self):
        raise NotImplementedError


class Camera(TriggerTarget):
    def grab(self):
        self.trigger()
        return self.read()

    def read(self):
        return 0
"""
CAMERA = """
from pkg.abc import BASES


class Andor(BASES):
    def trigger(self):
        self.fired = True

    def soft_trigger(self):
        \"\"\"Send a software trigger signal.\"\"\"
        self.trigger()
"""
CAMERA_KEY = "HG001 pkg.andor.Andor.soft_trigger"


@pytest.mark.parametrize("after", ["Camera", "TriggerTarget, Camera"])
def test_a_method_left_by_the_removing_commit_fires_whether_or_not_it_rebased_the_class(
    git_repo: Callable[..., GitRepo], after: str,
) -> None:
    repo = git_repo()
    repo.commit("one", {"pkg/__init__.py": "", "pkg/abc.py": ABC,
                        "pkg/andor.py": CAMERA.replace("BASES", "TriggerTarget, Camera")})
    repo.commit("Camera: declare it a TriggerTarget; drop soft_trigger",
                {"pkg/abc.py": ABC_WITHOUT_HOOK, "pkg/andor.py": CAMERA.replace("BASES", after)})
    found = audited(repo)
    assert CAMERA_KEY in found and found[CAMERA_KEY].severity is Severity.ERROR



SIBLING = """
from pkg.core import AsyncCore


class Concrete(AsyncCore):
    def endpoint(self, cmd, **kwarg):
        return (cmd, kwarg)


class TestOLD:
    class Incomplete(AsyncCore):
        def endpoint(self, cmd, **kwarg):
            raise NotImplementedError
"""


def test_a_class_the_removing_commit_gave_the_method_is_no_override_beside_an_old_one(
    git_repo: Callable[..., GitRepo],
) -> None:
    """OctoBot's test module (round 35, rerun): the commit that removed the hook renamed the
    test holding ``IncompleteTrigger``, so under its new qualified name the class, method
    and all, is the commit's own (ldap3's rule: the removing commit gave the class the
    method), while the older ``ConcreteChannelBasedTrigger`` beside it is a stale override.
    The newer reading (a class of the file with the same bases had the method just before
    the commit: maybe this one under an older name) must not undo the older one."""
    repo = git_repo()
    repo.commit("one", {"pkg/__init__.py": "", "pkg/core.py": CORE, "pkg/mptcp.py": SIBLING})
    repo.commit("two: the core drops its endpoint hook",
                {"pkg/core.py": CORE_WITHOUT_HOOK,
                 "pkg/mptcp.py": SIBLING.replace("TestOLD", "TestNEW")})
    found = audited(repo)
    assert "HG001 pkg.mptcp.Concrete.endpoint" in found
    assert "HG001 pkg.mptcp.TestNEW.Incomplete.endpoint" not in found
