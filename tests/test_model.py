"""The project model: module names, import forms, re-exports, MROs, records."""

from __future__ import annotations

from pathlib import Path

from hookguard.engine import Options, audit
from hookguard.model.extract import extract
from hookguard.model.project import ClassInfo, External, Project
from hookguard.model.records import MethodKind, ParamKind
from hookguard.model.sources import module_names
from tests.conftest import write_tree


def project_of(files: dict[str, str]) -> Project:
    names = module_names(files)
    return Project.build(extract(p, *names[p], s.encode()) for p, s in files.items())


def mro_names(project: Project, fq: str) -> list[str]:
    return [n.fq if isinstance(n, ClassInfo) else n.name for n in project.mro(project.classes[fq])]


def test_module_names_for_layouts() -> None:
    names = module_names(["src/pkg/__init__.py", "src/pkg/sub/__init__.py", "src/pkg/sub/m.py",
                          "tools/script.py", "lib/a/__init__.py", "lib/a/b.py"])
    assert names["src/pkg/sub/m.py"] == ("pkg.sub.m", False)
    assert names["src/pkg/sub/__init__.py"] == ("pkg.sub", True)
    assert names["tools/script.py"] == ("script", False)
    assert names["lib/a/b.py"] == ("a.b", False)


def test_import_forms_resolve() -> None:
    project = project_of({
        "pkg/__init__.py": "from .core.base import Base\n",
        "pkg/core/__init__.py": "",
        "pkg/core/base.py": "class Base: ...\n",
        "pkg/compat.py": "from pkg import Base as LegacyBase\nOldName = LegacyBase\n",
        "pkg/star.py": "from pkg.core.base import *\n",
        "pkg/users.py": (
            "import pkg.core.base as cb\n"
            "import pkg.compat\n"
            "from pkg.compat import OldName\n"
            "from . import compat\n"
            "from .core import base as relbase\n"
            "from .star import Base as StarBase\n"
            "import torch.nn as nn\n"
            "class A(cb.Base): ...\n"
            "class B(pkg.compat.LegacyBase): ...\n"
            "class C(OldName): ...\n"
            "class D(compat.OldName): ...\n"
            "class E(relbase.Base): ...\n"
            "class F(StarBase): ...\n"
            "class G(nn.Module): ...\n"
        ),
    })
    for name in "ABCDEF":
        assert mro_names(project, f"pkg.users.{name}")[1] == "pkg.core.base.Base", name
    assert mro_names(project, "pkg.users.G")[1] == "torch.nn.Module"
    assert not project.errors


def test_same_named_classes_in_different_modules_are_told_apart() -> None:
    project = project_of({
        "a.py": "class Manager:\n    def hook(self): ...\n",
        "b.py": "class Manager:\n    def other(self): ...\n",
        "c.py": "from b import Manager\nclass Child(Manager): ...\n",
    })
    assert mro_names(project, "c.Child") == ["c.Child", "b.Manager"]


def test_c3_mro_matches_python() -> None:
    source = (
        "class O: ...\nclass A(O): ...\nclass B(O): ...\nclass C(O): ...\n"
        "class D(O): ...\nclass E(O): ...\nclass K1(A, B, C): ...\nclass K2(D, B, E): ...\n"
        "class K3(D, A): ...\nclass Z(K1, K2, K3): ...\n"
    )
    project = project_of({"m.py": source})
    namespace: dict[str, type] = {}
    exec(source, namespace)
    expected = ["m." + c.__name__ for c in namespace["Z"].__mro__[:-1]]
    assert mro_names(project, "m.Z") == expected


def test_cycles_and_unresolvable_bases_are_reported_not_raised() -> None:
    project = project_of({
        "pkg/__init__.py": "",
        "pkg/a.py": "from pkg.b import B\nclass A(B): ...\n",
        "pkg/b.py": "from pkg.a import A\nclass B(A): ...\n",
        "pkg/c.py": "from pkg.missing import Gone\nclass C(Gone): ...\n",
    })
    messages = [e.message for e in project.errors]
    assert any("cyclic inheritance" in m for m in messages)
    assert any("cannot resolve base class 'Gone'" in m for m in messages)
    assert isinstance(project.mro(project.classes["pkg.c.C"])[1], External)


def test_method_record_details() -> None:
    record = extract("m.py", "m", False, b'''
class K:
    @staticmethod
    def s(a, /, b, *args, c, d=1, **kw): ...

    @classmethod
    def k(cls): return cls.s(1, 2, c=3)

    @property
    def p(self): return self._p

    def m(self, x):
        self.a = 1
        if self.flag:
            self.b, self.c = 2, 3
            self.helper(x, key=1, *rest)
        getattr(self, "dyn")
        return super().m(x)
''')
    (klass,) = record.classes
    s = klass.methods["s"]
    assert s.kind is MethodKind.STATIC
    assert [p.kind for p in s.params] == [
        ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD, ParamKind.VAR_POSITIONAL,
        ParamKind.KEYWORD_ONLY, ParamKind.KEYWORD_ONLY, ParamKind.VAR_KEYWORD]
    assert s.signature() == "s(a, /, b, *args, c, d=..., **kw)"
    assert klass.methods["k"].kind is MethodKind.CLASS
    assert klass.methods["k"].calls[0].receiver == "cls"
    assert klass.methods["p"].kind is MethodKind.PROPERTY
    m = klass.methods["m"]
    assert {(a.attr, a.condition) for a in m.self_assigns} == {
        ("a", None), ("b", "self.flag"), ("c", "self.flag")}
    helper = next(c for c in m.calls if c.name == "helper")
    assert (helper.positional, helper.keywords, helper.star_args, helper.condition) == (
        1, ("key",), True, "self.flag")
    assert any(c.receiver == "super" and c.name == "m" for c in m.calls)
    assert "dyn" in klass.self_refs and "dyn" not in record.string_refs  # resolved by receiver
    assert "flag" in m.self_reads


def test_gitignore_virtualenvs_and_build_dirs_are_skipped(tmp_path: Path) -> None:
    import subprocess

    write_tree(tmp_path, {
        ".gitignore": "generated/\n",
        "pkg/a.py": "class A: ...\n",
        "generated/x.py": "class X: ...\n",
        "build/lib/y.py": "class Y: ...\n",
        "env/pyvenv.cfg": "home = /usr\n",
        "env/lib/z.py": "class Z: ...\n",
    })
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    result = audit([tmp_path], Options(use_cache=False))
    assert set(result.project.files) == {"pkg/a.py"}
    # Without git: the same minus .gitignore.
    (tmp_path / ".git").rename(tmp_path / "dot-git")
    result = audit([tmp_path], Options(use_cache=False))
    assert set(result.project.files) == {"pkg/a.py", "generated/x.py"}


def test_a_package_named_build_is_source_not_a_build_output(tmp_path: Path) -> None:
    """conan's ``conan/tools/build`` (first contact, round 21): a ``build`` or ``dist`` folder
    holding an ``__init__.py`` is a package and is read; one without stays a build output."""
    import subprocess

    write_tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/build/__init__.py": "",
        "pkg/build/tools.py": "class Tool: ...\n",
        "pkg/dist/__init__.py": "",
        "pkg/dist/wheel.py": "class Wheel: ...\n",
        "build/lib/pkg/__init__.py": "",
        "build/lib/pkg/copy.py": "class Copy: ...\n",
        "dist/x.py": "class X: ...\n",
    })
    expected = {"pkg/__init__.py", "pkg/build/__init__.py", "pkg/build/tools.py",
                "pkg/dist/__init__.py", "pkg/dist/wheel.py"}
    result = audit([tmp_path], Options(use_cache=False))
    assert set(result.project.files) == expected
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "-A"], cwd=tmp_path, check=True)
    result = audit([tmp_path], Options(use_cache=False))
    assert set(result.project.files) == expected
    # one file named alone, as pre-commit names them: its package's __init__.py is on disk
    result = audit([tmp_path / "pkg" / "build" / "tools.py"], Options(use_cache=False))
    assert "pkg/build/tools.py" in result.project.files


def test_type_checking_classes_do_not_hide_the_runtime_ones(tmp_path: Path) -> None:
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/hooks.py": """
        from typing import TYPE_CHECKING

        class Base:
            def run(self):
                return self.hook(1, flag=True)

            def hook(self, x, flag=False):
                return x

        if TYPE_CHECKING:
            class Impl(Base):
                def hook(self, x, flag=False): ...
        else:
            class Impl(Base):
                def hook(self, x):  # the class that runs drops flag=
                    return x
    """})
    result = audit([tmp_path], Options(use_cache=False, history=False))
    (finding,) = [f for f in result.findings if f.code == "HG002"]
    assert finding.symbol == "pkg.hooks.Impl.hook"
    assert finding.line == 15  # the runtime class, in the else branch


def test_class_named_after_its_base_extends_the_earlier_binding(tmp_path: Path) -> None:
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/base.py": """
        class Layer:
            def run(self):
                return self.build(shape=1)

            def build(self, shape):
                return shape
    """, "pkg/ext.py": """
        from pkg.base import Layer

        class Layer(Layer):
            def build(self):
                return None
    """})
    result = audit([tmp_path], Options(use_cache=False, history=False))
    assert not result.errors
    (finding,) = [f for f in result.findings if f.code == "HG002"]
    assert finding.symbol == "pkg.ext.Layer.build"


def test_a_long_chain_shares_its_inherited_names() -> None:
    """What the rules ask of every class of a 10,000-class chain is one shared set, not one
    set per class that grows with its depth (which made such a checkout take a minute)."""
    source = "class C0:\n    def hook(self):\n        return self.run()\n"
    source += "".join(f"class C{i}(C{i - 1}):\n    pass\n" for i in range(1, 3000))
    project = Project.build([extract("chain.py", "chain", False, source.encode())])
    first, last = project.classes["chain.C1"], project.classes["chain.C2999"]
    assert project.inherited_names(last) == {"hook"}
    assert project.inherited_names(last) is project.inherited_names(first)
    assert project.inherited_refs(last) is project.inherited_refs(first) == {"run"}


def _shape(project: Project) -> object:
    """Everything a rule reads from a project's class graph, by name and record identity."""
    def name(node: object) -> str:
        return node.fq if isinstance(node, ClassInfo) else f"external:{node.name}"  # type: ignore[attr-defined]

    return (
        {p: id(r) for p, r in project.files.items()},
        {m: r.path for m, r in project.modules.items()},
        {fq: (id(c.record), id(c.file)) for fq, c in project.classes.items()},
        {fq: [name(n) for n in project.mro(c)] for fq, c in project.classes.items()},
        {fq: [name(n) for n in project.bases(c)] for fq, c in project.classes.items()},
        {fq: sorted(s.fq for s in project.subclasses(c)) for fq, c in project.classes.items()},
        sorted((e.path, e.line, e.message) for e in project.errors),
        name(project.resolve_name(project.files["pkg/sub.py"], "Base")),
    )


def test_a_project_derived_for_changed_bodies_is_the_project_built_afresh() -> None:
    def records(files: dict[str, str]) -> list:  # type: ignore[type-arg]
        return [extract(p, p[:-3].replace("/", "."), False, t.encode()) for p, t in files.items()]

    files = {
        "pkg/base.py": "class Base:\n    def hook(self, x):\n        return x\n",
        "pkg/sub.py": "from pkg.base import Base\n\n\nclass Sub(Base):\n"
                      "    def hook(self, x):\n        return x\n\n\nclass Leaf(Sub):\n    pass\n",
        "pkg/cycle.py": "class A(B):\n    pass\n\n\nclass B(A):\n    pass\n",
    }
    before = records(files)
    base = Project.build(before)
    # A method body changes (and a method is added): only records move.
    body = records({**files, "pkg/base.py": files["pkg/base.py"]
                    + "\n    def other(self):\n        return self.hook(1, y=2)\n"})
    after = [b if b.path != "pkg/base.py" else r for b, r in zip(before, body, strict=True)]
    derived = base.with_files(before, after)
    assert derived.classes["pkg.base.Base"].record is after[0].classes[0]
    assert derived.mro(derived.classes["pkg.sub.Leaf"])[2] is derived.classes["pkg.base.Base"]
    assert derived.resolve_name(derived.files["pkg/sub.py"], "Base") is derived.classes[
        "pkg.base.Base"]
    assert derived.subclasses(derived.classes["pkg.base.Base"]) == [derived.classes["pkg.sub.Sub"]]
    assert _shape(derived) == _shape(Project.build(after))
    # A changed import or base is no body change: built afresh, the same answer.
    rebased = records({**files, "pkg/sub.py": files["pkg/sub.py"].replace("(Base)", "(object)")})
    after = [b if b.path != "pkg/sub.py" else r for b, r in zip(before, rebased, strict=True)]
    assert _shape(base.with_files(before, after)) == _shape(Project.build(after))


def test_generic_gives_no_mro_entry_before_a_generic_base() -> None:
    """hypothesis, first contact round 3: ``class MappableN(Generic[T], Lawful[T])`` is
    accepted by Python (``Generic[T].__mro_entries__`` gives nothing when a later base is
    generic); it was reported as an inconsistent method resolution order."""
    source = (
        "from typing import Generic, Protocol, TypeVar\nT = TypeVar('T')\n"
        "class Lawful(Generic[T]): ...\nclass MappableN(Generic[T], Lawful[T]): ...\n"
        "class Proto(Protocol[T]): ...\nclass Both(Generic[T], Proto[T]): ...\n"
    )
    project = project_of({"m.py": source})
    assert not [e.message for e in project.errors]
    namespace: dict[str, object] = {}
    exec(source, namespace)
    for name in ("MappableN", "Both"):
        expected = [c.__qualname__ for c in namespace[name].__mro__  # type: ignore[attr-defined]
                    if c.__module__ == "builtins" or c.__qualname__ in ("Lawful", name, "Proto")]
        got = [n.fq.split(".")[-1] if isinstance(n, ClassInfo) else n.name
               for n in project.mro(project.classes[f"m.{name}"])]
        assert [g for g in got if g in expected] == [e for e in expected if e != "object"]
