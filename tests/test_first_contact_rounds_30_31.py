"""The evidence shapes first-contact rounds 30 and 31 showed to be no proof, each with cases
that must fire (the proof holds) and cases that must not be an error: minimal fixtures written
from the description, not copies of the repositories."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hookguard.findings import Severity
from tests.conftest import GitRepo, audited

pytestmark = pytest.mark.usefixtures("private_key_dir")

# -- a. one base, a call shape per family (cogdl, 45 errors) ----------------------------------

NODE_BASE = """
class BaseModel:
    def forward(self, *args):
        raise NotImplementedError

    def predict(self, data):
        return self.forward(data.x, data.edge_index)
"""
GRAPH_HELPER = """
    def graph_classification_loss(self, batch):
        return self.forward(batch)
"""
GCN = ("from pkg.base import BaseModel\n\n\nclass GCN(BaseModel):\n"
       "    def forward(self, x, edge_index):\n        return x\n")
GIN = ("from pkg.base import BaseModel\n\n\nclass GIN(BaseModel):\n"
       "    def forward(self, batch):\n        return batch\n")


def _families(repo: GitRepo, base: str) -> dict[str, object]:
    repo.commit("node models", {"pkg/__init__.py": "", "pkg/base.py": base, "pkg/gcn.py": GCN})
    repo.commit("graph models", {"pkg/base.py": base + GRAPH_HELPER, "pkg/gin.py": GIN})
    return dict(audited(repo))


def test_calls_of_a_shapeless_hook_in_several_shapes_serve_several_families(
    git_repo: Callable[..., GitRepo],
) -> None:
    """``forward(self, *args)`` states no shape; ``predict`` passes two arguments and
    ``graph_classification_loss`` one: each model is written for one of them, and nothing
    shows the other runs for it."""
    found = _families(git_repo(), NODE_BASE)
    assert "HG002 pkg.gcn.GCN.forward" not in found
    assert "HG002 pkg.gin.GIN.forward" not in found


def test_a_hook_whose_definition_states_its_shape_keeps_the_error(
    git_repo: Callable[..., GitRepo],
) -> None:
    """``forward(self, x, edge_index=None)`` takes both calls: each is a call every subclass
    is held to, so ``GIN.forward(self, batch)`` cannot take ``predict``'s."""
    base = NODE_BASE.replace("def forward(self, *args):\n        raise NotImplementedError",
                             "def forward(self, x, edge_index=None):\n        return x")
    found = _families(git_repo(), base)
    assert found["HG002 pkg.gin.GIN.forward"].severity is Severity.ERROR  # type: ignore[attr-defined]


def test_a_shapeless_hook_called_in_one_shape_that_drifted_is_an_error(
    git_repo: Callable[..., GitRepo],
) -> None:
    """The base's calls agree (only ``predict``), and its call once fitted the override: a
    drift, shapeless hook or not."""
    repo = git_repo()
    before = NODE_BASE.replace("self.forward(data.x, data.edge_index)", "self.forward(data.x)")
    repo.commit("models", {"pkg/__init__.py": "", "pkg/base.py": before,
                           "pkg/gin.py": GIN.replace("batch", "x")})
    repo.commit("predict passes the edges", {"pkg/base.py": NODE_BASE})
    assert audited(repo)["HG002 pkg.gin.GIN.forward"].severity is Severity.ERROR


def test_an_override_that_fits_no_shape_of_the_base_is_still_reported(
    git_repo: Callable[..., GitRepo],
) -> None:
    """Another shape excuses a failing call only where the override takes that shape."""
    repo = git_repo()
    wide = GIN.replace("def forward(self, batch)", "def forward(self, a, b, c)")
    repo.commit("models", {"pkg/__init__.py": "", "pkg/base.py": NODE_BASE + GRAPH_HELPER,
                           "pkg/gin.py": wide})
    assert "HG002 pkg.gin.GIN.forward" in audited(repo)


# -- b. a removed hook still called on a typed member (syne-tune, 1 error) --------------------

SCHEDULER = """
class TrialScheduler:
    def metadata(self):
        return {"metrics": self.metric_names()}

    def metric_names(self):
        return []
"""
MEDIAN = ("from pkg.scheduler import TrialScheduler\n\n\nclass MedianStoppingRule(TrialScheduler):"
          "\n    def metric_names(self):\n        return ['loss']\n")
RESULT = ("class ExperimentResult:\n    def metric_names(self):\n"
          "        return ['accuracy']\n")
TUNER = ("from pkg.scheduler import TrialScheduler\nfrom pkg.result import ExperimentResult\n\n\n"
         "class Tuner:\n    def __init__(self, scheduler: HELD):\n"
         "        self.scheduler = scheduler\n\n"
         "    def run(self):\n        return self.scheduler.metric_names()\n")


def _scheduler(repo: GitRepo, held: str) -> dict[str, object]:
    repo.commit("schedulers", {
        "pkg/__init__.py": "", "pkg/scheduler.py": SCHEDULER, "pkg/median.py": MEDIAN,
        "pkg/result.py": RESULT, "pkg/tuner.py": TUNER.replace("HELD", held)})
    repo.commit("metadata passes no metric names", {
        "pkg/scheduler.py": "class TrialScheduler:\n    def metadata(self):\n        return {}\n"})
    return dict(audited(repo))


def test_a_call_on_a_member_typed_as_the_hook_owner_reaches_the_override(
    git_repo: Callable[..., GitRepo],
) -> None:
    """``Tuner`` calls ``self.scheduler.metric_names()`` on a ``TrialScheduler``: the override
    runs there, whatever ``ExperimentResult`` defines."""
    assert "HG001 pkg.median.MedianStoppingRule.metric_names" not in _scheduler(
        git_repo(), "TrialScheduler")


def test_a_call_on_a_member_typed_as_an_unrelated_class_proves_nothing_for_the_override(
    git_repo: Callable[..., GitRepo],
) -> None:
    found = _scheduler(git_repo(), "ExperimentResult")
    finding = found["HG001 pkg.median.MedianStoppingRule.metric_names"]
    assert finding.severity is Severity.ERROR  # type: ignore[attr-defined]


# -- round 31, a. a method handed on as a value (nicotine-plus, Uranium) ----------------------

DIALOG = """
class Dialog:
    def __init__(self, show_callback=None):
        self.show_callback = show_callback

    def show(self):
        self.on_show()

    def on_show(self, *args):
        if self.show_callback is not None:
            self.show_callback(self)
"""
WISHLIST = """
from pkg.dialogs import Dialog


class WishList(Dialog):
    def __init__(self):
        super().__init__(CALLBACK)

    def on_show(self, *args):
        self.shown = True

    def on_close(self):
        self.shown = False
"""


def _renamed_dialog(repo: GitRepo, callback: str) -> dict[str, object]:
    repo.commit("dialogs", {"pkg/__init__.py": "", "pkg/dialogs.py": DIALOG,
                            "pkg/wishlist.py": WISHLIST.replace("CALLBACK", callback)})
    repo.commit("rename Dialog.on_show to _on_show", {
        "pkg/dialogs.py": DIALOG.replace("on_show", "_on_show")})
    return dict(audited(repo))


def test_a_method_handed_on_as_a_callback_runs_where_it_is_called(
    git_repo: Callable[..., GitRepo],
) -> None:
    """``show_callback=self.on_show``: the renamed ``_on_show`` calls it on every show, so
    "rename it to _on_show" would break the dialog."""
    found = _renamed_dialog(git_repo(), "show_callback=self.on_show")
    assert "HG001 pkg.wishlist.WishList.on_show" not in found


def test_a_method_named_in_the_class_body_is_handed_on(
    git_repo: Callable[..., GitRepo],
) -> None:
    """``shown = property(fget=on_show)`` (Uranium's ``readOnly``): a getter runs on every
    read."""
    repo = git_repo()
    wishlist = WISHLIST.replace("CALLBACK", "") + "\n    shown_now = property(fget=on_show)\n"
    repo.commit("dialogs", {"pkg/__init__.py": "", "pkg/dialogs.py": DIALOG,
                            "pkg/wishlist.py": wishlist})
    repo.commit("rename Dialog.on_show to _on_show", {
        "pkg/dialogs.py": DIALOG.replace("on_show", "_on_show")})
    assert "HG001 pkg.wishlist.WishList.on_show" not in audited(repo)


@pytest.mark.parametrize("callback", [
    "",  # handed nowhere
    "show_callback=self.on_close",  # another method handed on
])
def test_an_override_not_handed_on_is_still_stale(
    git_repo: Callable[..., GitRepo], callback: str,
) -> None:
    found = _renamed_dialog(git_repo(), callback)
    assert found["HG001 pkg.wishlist.WishList.on_show"].severity is Severity.ERROR  # type: ignore[attr-defined]


def test_a_subclass_handing_on_the_inherited_method_keeps_it_running(
    git_repo: Callable[..., GitRepo],
) -> None:
    """The callback is passed by a subclass that inherits ``on_show`` from ``WishList``."""
    repo = git_repo()
    repo.commit("dialogs", {
        "pkg/__init__.py": "", "pkg/dialogs.py": DIALOG,
        "pkg/wishlist.py": WISHLIST.replace("CALLBACK", ""),
        "pkg/shared.py": ("from pkg.wishlist import WishList\n\n\nclass SharedWishList(WishList):\n"
                          "    def __init__(self):\n"
                          "        super().__init__()\n"
                          "        self.callback = self.on_show\n")})
    repo.commit("rename Dialog.on_show to _on_show", {
        "pkg/dialogs.py": DIALOG.replace("on_show", "_on_show")})
    assert "HG001 pkg.wishlist.WishList.on_show" not in audited(repo)


# -- round 36: a super() call in a method nothing runs (anemoi-core) ---------------------------

MAPPER = """
from pkg.blocks import BaseBlock


class MapperBlock(BaseBlock):
    def METHOD(self, in_channels, out_channels):
        super().__init__(self, in_channels, out_channels)
"""


@pytest.mark.parametrize(("method", "fires"), [
    ("__ini__", False),  # a misspelled __init__: Python never calls it, nothing names it
    ("__init__", True),  # Python calls it on every construction
    ("setup", True),  # a plain method: callers outside the checkout may run it
])
def test_a_super_call_proves_only_in_a_method_that_may_run(
    git_repo: Callable[..., GitRepo], method: str, fires: bool,
) -> None:
    repo = git_repo()
    repo.commit("blocks", {
        "pkg/__init__.py": "",
        "pkg/blocks.py": "class BaseBlock:\n    def __init__(self, channels):\n"
                         "        self.channels = channels\n",
        "pkg/mapper.py": MAPPER.replace("METHOD", method)})
    key = f"HG002 pkg.mapper.MapperBlock.{method}"
    assert (key in audited(repo)) is fires
