"""HG002's ``orphaned`` hedge (docs/design.md, "What a warning claims"): an override that no
call of its base ever fitted is a method of its own (``own-method``, held back), unless nothing
else in the checkout calls it any more; then it is dead code or the base's call is what runs it,
and the warning is reported. Diamond's NetApp collectors (first contact, round 39): until 2014
``get_schedule`` handed ``self.collect`` its own arguments; it went, and ``Collector._run``'s
``self.collect()`` has raised ``TypeError`` on every run since."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hookguard.findings import Finding
from hookguard.hedges import Hedge, hedges_of, held_back
from tests.conftest import GitRepo, audited

pytestmark = pytest.mark.usefixtures("private_key_dir")

BASE = """
class Collector:
    def _run(self):
        return self.collect()

    def collect(self):
        raise NotImplementedError
"""
SCHEDULED = """
from pkg.collector import Collector


class NetAppCollector(Collector):
    def get_schedule(self):
        return {"filer": (self.collect, ("filer", "10.0.0.1"))}

    def collect(self, device, ip):
        return device, ip
"""
ALONE = """
from pkg.collector import Collector


class NetAppCollector(Collector):
    def collect(self, device, ip):
        return device, ip
"""
SCHEDULER = """
def run_all(collectors):
    for c in collectors:
        c._run()
"""
KEY = "HG002 pkg.netapp.NetAppCollector.collect"


def _finding(repo: GitRepo, files: dict[str, str]) -> Finding:
    repo.commit("scheduled collectors", {"pkg/__init__.py": "", "pkg/collector.py": BASE,
                                         "pkg/scheduler.py": SCHEDULER,
                                         "pkg/netapp.py": SCHEDULED})
    repo.commit("one process per collector: no more get_schedule", files)
    return audited(repo)[KEY]


def test_an_own_method_whose_own_callers_are_gone_is_reported(
    git_repo: Callable[..., GitRepo],
) -> None:
    found = _finding(git_repo(), {"pkg/netapp.py": ALONE})
    assert hedges_of(found) == [Hedge.ORPHANED]
    assert not held_back(found)
    assert "nothing else in the checkout calls it" in found.message


@pytest.mark.parametrize("files", [
    # its own caller is still there, on self, with the arguments it takes
    {"pkg/netapp.py": ALONE + "\n    def poll(self):\n        return self.collect('f', 'ip')\n"},
    # handed on as a value: what receives it may call it with its arguments
    {"pkg/netapp.py": SCHEDULED.replace("def get_schedule", "def schedule")},
    # code outside tests calls it on another object
    {"pkg/netapp.py": ALONE, "pkg/poller.py": "def poll(c):\n    return c.collect('f', 'ip')\n"},
    # looked up by name
    {"pkg/netapp.py": ALONE,
     "pkg/poller.py": "def poll(c):\n    return getattr(c, 'collect')('f', 'ip')\n"},
])
def test_an_own_method_something_else_may_still_call_stays_held_back(
    git_repo: Callable[..., GitRepo], files: dict[str, str],
) -> None:
    found = _finding(git_repo(), files)
    assert [h.value for h in hedges_of(found)] == ["own-method"]
    assert held_back(found)


def test_a_test_modules_own_method_stays_held_back(git_repo: Callable[..., GitRepo]) -> None:
    repo = git_repo()
    repo.commit("scheduled collectors", {"pkg/__init__.py": "", "pkg/collector.py": BASE,
                                         "pkg/scheduler.py": SCHEDULER,
                                         "tests/test_netapp.py": SCHEDULED})
    repo.commit("one process per collector", {"tests/test_netapp.py": ALONE})
    found = audited(repo).get("HG002 test_netapp.NetAppCollector.collect")
    assert found is not None and held_back(found)
