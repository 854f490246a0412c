"""Which warnings are reported (``hookguard.hedges``): a warning whose missing proof is code
hookguard cannot read or type is reported; one whose missing proof is code the checkout holds
and hookguard cannot evaluate is held back unless ``--all-warnings``. And the shape that is no
warning at all: a hook that moved into a framework's base with the commit that removed it."""

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
from hookguard.model.extract import extract
from tests.conftest import GitRepo, audited

pytestmark = pytest.mark.usefixtures("private_key_dir")


def audit_json(root: Path, *flags: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "hookguard", "audit", "--format", "json", "--no-cache", *flags],
        cwd=root, capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    assert proc.returncode in (0, 1), proc.stderr
    document: dict[str, Any] = json.loads(proc.stdout)
    return document


def warnings_of(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"{f['code']} {f['symbol']}": f for f in document["findings"]
            if f["severity"] == "warning"}


# A drift known only from an annotation: ``self.model: Wrapper`` may hold any wrapper.
ANNOTATED = {
    "pkg/__init__.py": "",
    "pkg/wrappers.py": (
        "class Wrapper:\n    def prep(self, prompts):\n        return prompts\n\n\n"
        "class AudioWrapper(Wrapper):\n    def prep(self, prompts, *, sample_rate):\n"
        "        return prompts\n"),
    "pkg/controllers.py": (
        "from pkg.wrappers import Wrapper\n\n\nclass Controller:\n"
        "    def __init__(self, model: Wrapper):\n        self.model = model\n\n"
        "    def step(self, prompts):\n        return self.model.prep(prompts)\n"),
}


def test_a_warning_the_checkout_leans_against_is_held_back_unless_asked(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = git_repo()
    repo.commit("wrappers", ANNOTATED)
    key = "HG002 pkg.wrappers.AudioWrapper.prep"
    # The rule still finds it, and says which proof it lacks.
    found = audited(repo)[key]
    assert found.severity is Severity.WARNING
    assert found.evidence["hedges"] == [Hedge.ANNOTATION.value]
    # Not reported by default: a note says how many were held back, and how to see them.
    document = audit_json(repo.root)
    assert key not in warnings_of(document)
    assert any("1 weak warning held back" in note and "--all-warnings" in note
               for note in document["notes"])
    # Reported on request, with its hedge.
    shown = warnings_of(audit_json(repo.root, "--all-warnings"))
    assert shown[key]["evidence"]["hedges"] == ["annotation"]


def _lost_hook(repo: GitRepo, before: str, after: str, body: str = "self.saved = True") -> None:
    """``Base`` loses ``on_epoch_end`` and its call; its class line reads ``before`` in the
    first commit and ``after`` in the removing one; ``Sub``'s override runs ``body``."""
    base = ("from framework import Callback, Template\n\n\n" + before +
            "    def run(self):\n        self.on_epoch_end()\n\n"
            "    def on_epoch_end(self):\n        pass\n")
    repo.commit("base", {
        "pkg/__init__.py": "", "pkg/base.py": base,
        "pkg/sub.py": "from pkg.base import Base\n\n\nclass Sub(Base):\n"
                      f"    def on_epoch_end(self):\n        {body}\n",
    })
    repo.commit("Drop on_epoch_end", {"pkg/base.py": base.replace(before, after).replace(
        "    def run(self):\n        self.on_epoch_end()\n\n"
        "    def on_epoch_end(self):\n        pass\n", "    def run(self):\n        pass\n")})


def test_an_external_base_warning_is_reported(git_repo: Callable[..., GitRepo]) -> None:
    """The base was already on a framework class the checkout does not hold: whether that
    class defines the hook is the one thing hookguard cannot read."""
    repo = git_repo()
    _lost_hook(repo, "class Base(Callback):\n", "class Base(Callback):\n")
    shown = warnings_of(audit_json(repo.root))
    assert shown["HG001 pkg.sub.Sub.on_epoch_end"]["evidence"]["hedges"] == ["external-base"]


@pytest.mark.parametrize(("body", "reported"), [
    ("self.saved = True", True),  # behaviour of its own, lost while it does not run
    ("pass", False),
    ("raise NotImplementedError", False),
    ("return 0", False),
    ("return self.saved", False),
    ("return self.recorder.flush()", True),  # another method: work of its own
])
def test_a_warning_about_a_hollow_dead_override_is_held_back(
    git_repo: Callable[..., GitRepo], body: str, reported: bool,
) -> None:
    """earthkit-data's dead forwarders (first contact, round 36): reported as `external-base`
    and `other-receivers` warnings, accurate and idle: an override that does nothing of its
    own loses nothing while it does not run. The warning stays, held back (`hollow`)."""
    repo = git_repo()
    _lost_hook(repo, "class Base(Callback):\n", "class Base(Callback):\n", body)
    key = "HG001 pkg.sub.Sub.on_epoch_end"
    found = audited(repo)[key]
    assert found.severity is Severity.WARNING
    assert (Hedge.HOLLOW.value in found.evidence["hedges"]) is not reported
    assert (key in warnings_of(audit_json(repo.root))) is reported


@pytest.mark.parametrize(("body", "hollow"), [
    ("return self._reader.order_by(*args, **kwargs)", True),
    ("return await self.client.order_by(*args)", True),
    ("make_merger(self.sources).order_by(*args)", True),
    ("return self.order_by(*args)", False),  # itself: recursion, not a forward
    ("return self._reader.sort(*args)", False),  # another method: work of its own
    ('"""Doc."""\n        return None', True),
    ("x = 1\n        return x", False),
    ("return emptybytes", True),  # whoosh's Existence.encode: a global as it is
])
def test_which_bodies_are_hollow(body: str, hollow: bool) -> None:
    source = f"class Source:\n    async def order_by(self, *args, **kwargs):\n        {body}\n"
    record = extract("m.py", "m", False, source.encode())
    assert record.classes[0].methods["order_by"].hollow is hollow


def test_a_hook_that_moved_into_the_framework_base_the_commit_added_is_no_finding(
    git_repo: Callable[..., GitRepo],
) -> None:
    """pykeen's shape (first contact, round 18): the commit that removed the hook and its call
    moved the class onto a framework's base, which took both over."""
    repo = git_repo()
    _lost_hook(repo, "class Base:\n", "class Base(Template):\n")
    assert "HG001 pkg.sub.Sub.on_epoch_end" not in audited(repo)
    # A base the commit added by another name moves nothing: the warning stays.
    other = git_repo("other")
    _lost_hook(other, "class Base(Callback):\n", "class Base(Callback, Template):\n")
    found = audited(other)["HG001 pkg.sub.Sub.on_epoch_end"]
    assert "Callback, a base outside the checkout" in found.message

