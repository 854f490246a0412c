"""The evidence shapes first-contact round 38 showed to be no proof (avalanche's constructors):
minimal fixtures written from the description, each with a case that must still fire."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hookguard.findings import Severity
from tests.conftest import GitRepo, audited

pytestmark = pytest.mark.usefixtures("private_key_dir")

BASE = """
import functools


def legacy_positional(cls):
    init = cls.__init__

    @functools.wraps(init)
    def wrapper(self, *args, **kwargs):
        return init(self, **dict(zip(("model", "optimizer", "device"), args)), **kwargs)

    return wrapper


class BaseTemplate:
HOOK
    def __init__(self, *, model, device="cpu"):
        self.model = model
        self.device = device


class MetaTemplate(BaseTemplate):
    def __init__(self, *, model, optimizer, device="cpu"):
        super().__init__(model=model, device=device)
        self.optimizer = optimizer
"""
WRAPS = ("    def __init_subclass__(cls, **kwargs):\n"
         "        cls.__init__ = legacy_positional(cls)\n"
         "        super().__init_subclass__(**kwargs)\n")
STRATEGY = """
from pkg.base import MetaTemplate


class LaMAML(MetaTemplate):
    def __init__(self, *, model, optimizer, device="cpu"):
        super().__init__(model, optimizer, device)
"""
KEY = "HG002 pkg.strategy.LaMAML.__init__"


@pytest.mark.parametrize(("hook", "fires"), [
    (WRAPS, False),  # every subclass's __init__ takes positional arguments at run time
    ("", True),  # as written: MetaTemplate.__init__ takes keywords only
])
def test_a_base_rewriting_its_subclasses_init_makes_the_def_no_proof(
    git_repo: Callable[..., GitRepo], hook: str, fires: bool,
) -> None:
    repo = git_repo()
    repo.commit("templates", {"pkg/__init__.py": "", "pkg/base.py": BASE.replace("HOOK\n", hook),
                              "pkg/strategy.py": STRATEGY})
    assert (KEY in audited(repo)) is fires


PROTOCOL = """
from typing import Protocol


class StrategyProtocol(BASE):
    model: object


class BaseTemplate:
    def __init__(self, *, model, device="cpu"):
        self.model = model


class SGDTemplate(StrategyProtocol, BaseTemplate):
    def __init__(self, *, model, optimizer):
        super().__init__()
        BaseTemplate.__init__(self, model=model)
"""


@pytest.mark.parametrize(("base", "fires"), [
    ("Protocol", False),  # the protocol's __init__ ends the chain: BaseTemplate's never runs
    ("object", True),  # a plain class: super().__init__() reaches BaseTemplate.__init__
])
def test_a_protocol_base_ends_the_init_chain(
    git_repo: Callable[..., GitRepo], base: str, fires: bool,
) -> None:
    repo = git_repo()
    repo.commit("templates", {"pkg/__init__.py": "",
                              "pkg/base.py": PROTOCOL.replace("BASE", base)})
    found = audited(repo)
    key = "HG002 pkg.base.SGDTemplate.__init__"
    assert (key in found) is fires
    if fires:
        assert found[key].severity is Severity.ERROR
