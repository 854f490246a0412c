"""``hookguard check`` notes name real hook changes only: not pytest test methods, not a
method moved up to a parent class (issue 13, item 8). Each is one short line, the difference
only, never both signatures; the JSON output keeps the detail (issue 26, item 6)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from hookguard.gate import NOTE_LIMIT, signature_difference
from hookguard.model.records import Param, ParamKind
from tests.conftest import GitRepo

TESTS = """
class TestBase:
    def test_one(self):
        assert True

    def test_two(self):
        assert True


class TestChild(TestBase):
    def test_three(self):
        assert True
"""
FAMILY = """
class Root:
    pass


class Base(Root):
    def run(self):
        self.step()

    def step(self):
        pass

    def helper(self):
        return 1


class Sub(Base):
    def step(self):
        pass
"""
MOVED_UP = """
class Root:
    def helper(self):
        return 1


class Base(Root):
    def run(self):
        self.step()

    def step(self):
        pass


class Sub(Base):
    def step(self):
        pass
"""


def check_staged(root: Path, *more: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hookguard", "check", "--staged", "--no-cache",
                           "--format", "plain", *more],
                          cwd=root, capture_output=True, text=True, check=False)


def stage(repo: GitRepo, files: dict[str, str]) -> None:
    repo.write(files)
    repo.git("add", "-A")


def test_removed_test_methods_are_not_hook_changes(git_repo: Callable[..., GitRepo]) -> None:
    repo = git_repo()
    repo.commit("tests", {"tests/test_x.py": TESTS})
    stage(repo, {"tests/test_x.py": TESTS.replace(
        "    def test_one(self):\n        assert True\n\n", "")})
    proc = check_staged(repo.root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "hook change" not in proc.stdout


def test_moved_up_method_is_not_removed(git_repo: Callable[..., GitRepo]) -> None:
    repo = git_repo()
    repo.commit("family", {"fam.py": FAMILY})
    stage(repo, {"fam.py": MOVED_UP})
    proc = check_staged(repo.root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "hook change" not in proc.stdout


def test_a_real_hook_rename_is_still_a_note(git_repo: Callable[..., GitRepo]) -> None:
    repo = git_repo()
    repo.commit("family", {"fam.py": FAMILY})
    stage(repo, {"fam.py": FAMILY.replace("self.step()", "self.do_step()").replace(
        "    def step(self):\n        pass\n\n    def helper", "    def do_step(self):\n"
        "        pass\n\n    def helper")})
    proc = check_staged(repo.root)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "note: hook change: Base.step renamed to do_step [fam.py]\n" in proc.stdout
    assert "fam.py:17:5: HG001" in proc.stdout


# A hook with a long signature, as the (one note was 2,002 characters).
PARAMS = ", ".join(f"parameter_number_{i}=None" for i in range(60))
WIDE = f"""
class Manager:
    def prepare(self):
        self.allocate(1)

    def allocate(self, size, {PARAMS}):
        return size


class Paged(Manager):
    def allocate(self, size, {PARAMS}):
        return size


class Sparse(Manager):
    def allocate(self, size, {PARAMS}):
        return size
"""


def test_a_signature_change_is_one_short_line(git_repo: Callable[..., GitRepo]) -> None:
    repo = git_repo()
    repo.commit("family", {"mgr.py": WIDE})
    grown = WIDE.replace(", parameter_number_59=None)", ", *, num_blocks_per_seq=1)", 1)
    grown = grown.replace("self.allocate(1)", "self.allocate(1, num_blocks_per_seq=2)")
    stage(repo, {"mgr.py": grown})
    proc = check_staged(repo.root)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    notes = [line for line in proc.stdout.splitlines() if line.startswith("note: hook change")]
    assert notes, proc.stdout
    for note in notes:
        assert len(note) <= len("note: ") + NOTE_LIMIT, note
        assert "parameter_number_40" not in note and "->" not in note, note
    text = "\n".join(notes)
    # the hook's own change, once, and the base's new call: the difference only
    assert ("note: hook change: Manager.allocate: gains keyword num_blocks_per_seq; "
            "parameter parameter_number_59 removed [mgr.py:5]") in text, text
    assert "note: hook change: Manager.allocate: Manager.prepare now passes num_blocks_per_seq=" \
        in text, text
    # the findings come first, each an HG002 of an override that cannot take the keyword
    findings = [line for line in proc.stdout.splitlines() if ": HG002 " in line]
    assert len(findings) == 2 and proc.stdout.index(findings[0]) < proc.stdout.index(notes[0])

    data = json.loads(check_staged(repo.root, "--format", "json").stdout)
    assert [n for n in data["notes"] if n.startswith("hook change")] == [
        n.removeprefix("note: ") for n in notes]
    (signature,) = [c for c in data["hook_changes"] if c["kind"] == "signature"]
    assert signature["class"] == "mgr.Manager" and signature["hook"] == "allocate"
    assert signature["difference"] == ("gains keyword num_blocks_per_seq; parameter "
                                       "parameter_number_59 removed")
    # the detail is kept in full: both signatures
    assert "signature allocate(self, size, parameter_number_0=..., parameter_number_1=...," \
        in signature["detail"]
    assert "parameter_number_59=...) -> allocate(self, size, parameter_number_0=...," \
        in signature["detail"]
    assert "parameter_number_58=..., *, num_blocks_per_seq=...) [mgr.py:5]" in signature["detail"]
    (passes,) = [c for c in data["hook_changes"] if c["kind"] == "passes"]
    assert passes["difference"] == "Manager.prepare now passes num_blocks_per_seq="


FAMILY_OF_BASES = """
class Root:
    def run(self):
        self.step()

    def step(self):
        pass


class Left(Root):
    def run(self):
        self.step()

    def step(self):
        pass


class Right(Root):
    def run(self):
        self.step()

    def step(self):
        pass


class Middle(Root):
    def run(self):
        self.step()

    def step(self):
        pass


class Leaf(Left):
    def step(self):
        pass


class Leaf2(Right):
    def step(self):
        pass


class Leaf3(Middle):
    def step(self):
        pass
"""


def test_the_same_change_to_several_classes_is_one_line(
    git_repo: Callable[..., GitRepo]
) -> None:
    repo = git_repo()
    repo.commit("family", {"fam.py": FAMILY_OF_BASES})
    stage(repo, {"fam.py": FAMILY_OF_BASES.replace("def step(self):", "def step(self, x=0):")})
    proc = check_staged(repo.root)
    notes = [line for line in proc.stdout.splitlines() if line.startswith("note: hook change")]
    assert notes == ["note: hook change: Root.step: gains parameter x [fam.py:5] "
                     "(also Left.step, Right.step and 1 more)"], proc.stdout


P = ParamKind


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        ([("a", P.POSITIONAL_OR_KEYWORD, False)],
         [("a", P.POSITIONAL_OR_KEYWORD, False), ("n", P.KEYWORD_ONLY, True)],
         ["gains keyword n"]),
        ([("a", P.POSITIONAL_OR_KEYWORD, False), ("x", P.POSITIONAL_OR_KEYWORD, False)],
         [("a", P.POSITIONAL_OR_KEYWORD, False)], ["parameter x removed"]),
        ([("a", P.POSITIONAL_OR_KEYWORD, False), ("x", P.POSITIONAL_OR_KEYWORD, False)],
         [("a", P.POSITIONAL_OR_KEYWORD, False), ("y", P.POSITIONAL_OR_KEYWORD, False)],
         ["parameter x renamed to y"]),
        ([("a", P.POSITIONAL_OR_KEYWORD, False), ("b", P.POSITIONAL_OR_KEYWORD, False)],
         [("b", P.POSITIONAL_OR_KEYWORD, False), ("a", P.POSITIONAL_OR_KEYWORD, False)],
         ["positional order now (b, a)"]),
        ([("a", P.POSITIONAL_OR_KEYWORD, False), ("b", P.POSITIONAL_OR_KEYWORD, True)],
         [("a", P.KEYWORD_ONLY, False), ("b", P.POSITIONAL_OR_KEYWORD, False)],
         ["a becomes keyword-only", "b loses its default"]),
        ([], [("args", P.VAR_POSITIONAL, False), ("kw", P.VAR_KEYWORD, False)],
         ["gains *args", "gains **kw"]),
        ([], [(f"k{i}", P.KEYWORD_ONLY, True) for i in range(30)],
         ["gains keywords k0, k1, k2, k3 and 26 more"]),
    ],
)
def test_signature_difference(
    before: list[tuple[str, ParamKind, bool]],
    after: list[tuple[str, ParamKind, bool]],
    expected: list[str],
) -> None:
    assert signature_difference([Param(*p) for p in before], [Param(*p) for p in after]) \
        == expected
