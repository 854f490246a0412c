"""HG002's history criterion (docs/design.md, "What an error proves", HG002 4): history that
covers the override's whole life and shows no call of its callers' classes ever fitting it
disproves a drift (a method of its own: a warning); the override's file is followed
through its renames."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hookguard.findings import Severity
from tests.conftest import GitRepo, audited

pytestmark = pytest.mark.usefixtures("private_key_dir")


BASE = """\
class PostProcessor:
    def run(self, path):
        return self.run_ffmpeg(path, "out", [])

    def run_ffmpeg(self, path, out_path, opts):
        return out_path
"""

SUB = """\
from pkg.base import PostProcessor


class ExtractAudio(PostProcessor):
    def run_ffmpeg(self, path, out_path, codec, more_opts):
        return codec
"""


def test_an_override_that_never_fitted_in_its_whole_life_is_a_method_of_its_own(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = git_repo()
    repo.commit("base", {"pkg/__init__.py": "", "pkg/base.py": BASE})
    repo.commit("audio", {"pkg/audio.py": SUB})
    repo.commit("touch", {"pkg/audio.py": SUB + "\n\nVERSION = 2\n"})
    found = audited(repo)["HG002 pkg.audio.ExtractAudio.run_ffmpeg"]
    assert found.severity is Severity.WARNING
    assert "method of its own" in found.message


def test_a_renamed_file_is_followed_to_the_call_that_fitted(
    git_repo: Callable[..., GitRepo],
) -> None:
    """The subclass's file came by a rename: under its old path the override fitted the base's
    call, and a later commit broke the pair. The history is followed through the rename
    (keras 3's metrics came from ``keras_core``): a drift, an error."""
    repo = git_repo()
    fitted = SUB.replace("codec, more_opts", "opts")
    repo.commit("base", {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/old_audio.py": fitted})
    repo.git("mv", "pkg/old_audio.py", "pkg/audio.py")
    repo.commit("rename")
    repo.commit("take a codec", {"pkg/audio.py": SUB})
    found = audited(repo)["HG002 pkg.audio.ExtractAudio.run_ffmpeg"]
    assert found.severity is Severity.ERROR


def test_a_renamed_file_that_never_fitted_is_still_a_method_of_its_own(
    git_repo: Callable[..., GitRepo],
) -> None:
    """The same rename, the override never fitted under either path (gluonts' MQF2
    ``distribution``, round 16, whose file moved out of the nursery)."""
    repo = git_repo()
    repo.commit("base", {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/old_audio.py": SUB})
    repo.git("mv", "pkg/old_audio.py", "pkg/audio.py")
    repo.commit("rename")
    repo.commit("touch", {"pkg/audio.py": SUB + "\n\nVERSION = 2\n"})
    found = audited(repo)["HG002 pkg.audio.ExtractAudio.run_ffmpeg"]
    assert found.severity is Severity.WARNING


def test_a_drift_from_before_a_rename_is_found_across_it(git_repo: Callable[..., GitRepo]) -> None:
    """asteroid's recipe, round 18: the override fitted the base's call under its old path,
    the base then passed a new keyword, and only later did a directory rename move the
    override's file; its callers' file is older and busier. At the new path no call ever
    fitted it: the history must be followed back through the rename to the call that did."""
    repo = git_repo()
    base = ("class System:\n    def training_step(self, batch):\n"
            "        return self.common_step(batch)\n\n"
            "    def common_step(self, batch):\n        return batch\n")
    sub = ("from pkg.system import System\n\n\nclass SimpleSystem(System):\n"
           "    def common_step(self, batch):\n        return batch\n")
    repo.commit("system", {"pkg/__init__.py": "", "pkg/system.py": base,
                           "egs/old/model.py": sub})
    repo.commit("train flag", {"pkg/system.py": base.replace(
        "self.common_step(batch)", "self.common_step(batch, train=True)").replace(
        "def common_step(self, batch):", "def common_step(self, batch, train=True):")})
    repo.git("mv", "egs/old", "egs/new")
    repo.commit("move the recipes")
    for n in range(3):
        repo.commit(f"system {n}", {"pkg/system.py": (repo.root / "pkg/system.py").read_text()
                                    + f"\n\nVERSION_{n} = {n}\n"})
    found = audited(repo)["HG002 model.SimpleSystem.common_step"]
    assert found.severity is Severity.ERROR
