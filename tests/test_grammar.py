"""Files in grammar newer than the running interpreter's ``ast`` are still modelled."""

from __future__ import annotations

from pathlib import Path

from hookguard.engine import Options, audit
from hookguard.model.extract import extract
from tests.conftest import write_tree

PEP695 = '''
type Pair[T] = tuple[T, T]


class Base:
    def run(self):
        return self.hook(1, flag=True)

    def hook(self, x, flag=False):
        return x


class Generic[T: int, *Ts, **P](Base):
    def hook[U](self, x: U) -> U:
        return x
'''

PEP701 = '''
class Base:
    def run(self, row):
        return self.render(row, width=3)

    def render(self, row, width=1):
        return f"{row["name"]:>{width}}"


class Narrow(Base):
    def render(self, row):
        return f"{'-'.join(f"{c}" for c in row["cells"])}"
'''


def test_pep695_file_is_modelled_with_its_classes_and_aliases() -> None:
    record = extract("gen.py", "gen", False, PEP695.encode())
    assert record.error is None
    assert [c.name for c in record.classes] == ["Base", "Generic"]
    generic = record.classes[1]
    assert generic.bases == ("Base",)
    assert generic.methods["hook"].line == PEP695.splitlines().index(
        "    def hook[U](self, x: U) -> U:") + 1
    assert "Pair" in record.module_names


def test_drift_is_found_in_pep701_code(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/render.py": PEP701})
    result = audit([root], Options(use_cache=False, history=False))
    assert not result.errors
    (finding,) = [f for f in result.findings if f.code == "HG002"]
    assert finding.symbol == "pkg.render.Narrow.render"
    assert "'width'" in finding.message


def test_real_syntax_errors_are_still_reported_with_their_line() -> None:
    record = extract("bad.py", "bad", False, b"class A:\n    def f(self:\n        pass\n")
    assert record.error is not None and record.error.startswith("syntax error")
    assert record.error_line in (2, 3)
    assert record.classes == []


def test_except_star_and_nested_fstrings_keep_line_numbers() -> None:
    source = (
        "class A:\n"
        "    def f(self):\n"
        "        try:\n"
        "            pass\n"
        "        except* ValueError:\n"
        "            self.x = f\"{'a' + f\"{1}\"}\"\n"
        "    def g(self):\n"
        "        return self.f()\n"
    )
    record = extract("a.py", "a", False, source.encode())
    assert record.error is None
    methods = record.classes[0].methods
    assert methods["g"].line == 7
    assert [a.attr for a in methods["f"].self_assigns] == ["x"]


def test_python_314_and_315_syntax_is_repaired_line_by_line() -> None:
    source = (
        "lazy import json\n"
        "lazy from os import path\n"
        "\n"
        "class Base:\n"
        "    def run(self, rows):\n"
        "        merged = [*row for row in rows]\n"
        "        try:\n"
        "            return self.render(t\"{merged}\", width=2)\n"
        "        except ValueError, TypeError:\n"
        "            return None\n"
        "\n"
        "    def render(self, text, width=1):\n"
        "        return text\n"
    )
    record = extract("new.py", "new", False, source.encode())
    assert record.error is None, record.error
    (klass,) = record.classes
    (call,) = [c for c in klass.methods["run"].calls if c.name == "render"]
    assert (call.line, call.keywords) == (8, ("width",))
    assert klass.methods["render"].line == 12
    assert {"json", "path"} <= record.module_names


def test_hostile_nesting_is_an_error_line_not_a_crash() -> None:
    brackets = "x = " + "(" * 5000 + "1" + ")" * 5000 + "\n"
    blocks = "".join(" " * i + "if x:\n" for i in range(300)) + " " * 300 + "pass\n"
    for source in (brackets, blocks):
        record = extract("deep.py", "deep", False, source.encode())
        assert record.error is not None and record.classes == []
