"""Files that cannot load: an import at module level, outside any ``try``, ``if`` or
function (:attr:`FileRecord.needed_modules`, :attr:`FileRecord.needed_names`), that fails.

Such a file raises ``ImportError`` on import, so none of its classes ever exists and a warning
about one is moot. The proofs (``docs/design.md``, "What a warning claims", ``unloadable``),
each about a module whose identity is sure (its top is a package of the checkout, not named
by the standard library, that the importing file finds from where it lies), never one
installed:

- the module is gone: no file of the checkout gives it, ``HEAD``'s tree holds no file or
  folder of its name in any form anywhere (a ``.py``, an extension, a C++ source a build
  turns into it), no ``.gitignore`` of ``HEAD`` may ignore it, and a commit deleted it. A
  module never committed (a generated ``_version.py``, a build output) has no deleting
  commit, so its absence proves nothing;
- ``from module import name``, where ``module`` is a plain module of the checkout whose text
  never spells ``name``, holds nothing that binds names unspelled (a module ``__getattr__``,
  ``globals()``, ``setattr``, ``exec``, ...), star-imports only such modules, and lost a
  module-level definition of ``name`` in a commit; no file of the checkout gives it names by
  ``setattr`` with a computed name (zipline's ``api``, whose ``symbol`` moved from a ``def``
  there to a decorator that sets it from elsewhere). Dunder names are never proved missing.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Collection, Iterator

from hookguard.model.project import Project
from hookguard.model.records import FileRecord


def missing_modules(
    project: Project, path: str, present: Collection[str] | None = None
) -> Iterator[tuple[str, int, str]]:
    """``(module, line, stem)`` for each module the file at ``path`` needs that the checkout
    has no file for, where its top package is in the checkout: ``stem`` is where the module
    would be, ``pkg/sub/name`` for ``pkg.sub.name`` (its ``.py`` or its folder). A name under
    one the checkout mirrors (``sys.modules["pkg.old"] = new``) is taken as present.
    ``present`` is :func:`present_modules` (computed when not given)."""
    record = project.files.get(path)
    if record is None:
        return
    if present is None:
        present = present_modules(project)
    mirrored = project.mirrored_modules()
    for module, line in record.needed_modules:
        parts = module.split(".")
        top = _own_package(project, parts[0], path)
        if module in present or top is None or len(parts) < 2:
            continue
        folder = top.path.rsplit("/", 1)[0] if "/" in top.path else ""
        for end in range(2, len(parts) + 1):  # the first of ``a.b``, ``a.b.c`` it lacks
            prefix = ".".join(parts[:end])
            if prefix in mirrored:
                break
            if prefix not in present:
                yield prefix, line, "/".join(p for p in (folder, *parts[1:end]) if p)
                break


def unloadable(
    project: Project,
    paths: Collection[str],
    deleted: Callable[[str], str | None],
    removed: Callable[[str, str], str | None],
    text: Callable[[FileRecord], str | None],
) -> dict[str, str]:
    """For each of ``paths`` that cannot load, why (``it imports pkg.gone (line 3), which
    abc1234 (subject) deleted``). Git's answers: ``deleted(stem)``, the commit that deleted
    the module at ``stem`` when ``HEAD`` has it in no form; ``removed(path, name)``, the
    commit that last added or removed a module-level definition of ``name`` in the file at
    ``path``. ``text(record)`` is the text a record was built from, or None when that text
    cannot be read."""
    if not paths:
        return {}
    present = present_modules(project)
    opened = opened_modules(project)
    reasons: dict[str, str] = {}
    answers: dict[tuple[str, str], str | None] = {}
    for path in sorted(paths):
        for module, line, stem in missing_modules(project, path, present):
            if (stem, "") not in answers:
                answers[stem, ""] = deleted(stem)
            commit = answers[stem, ""]
            if commit is not None:
                reasons[path] = f"it imports {module} (line {line}), which {commit} deleted"
                break
        else:
            for module, name, line, source in missing_names(project, path, text, opened):
                if (source, name) not in answers:
                    answers[source, name] = removed(source, name)
                commit = answers[source, name]
                if commit is not None:
                    reasons[path] = (f"it imports {name} from {module} (line {line}), which "
                                     f"no longer defines it since {commit}")
                    break
    return reasons


#: What may bind a module's names without spelling them: a module ``__getattr__``, the
#: namespace reached as a mapping or an object (``globals()``, ``vars()``,
#: ``sys.modules[__name__]``, ``__dict__``), code run from text (``exec``). (A star import is
#: followed instead: see :func:`_may_give`.)
_DYNAMIC_NAMESPACE = re.compile(
    r"\b(?:__getattr__|globals|vars|locals|exec|setattr|__dict__|modules|__builtins__)\b")


def missing_names(
    project: Project, path: str, text: Callable[[FileRecord], str | None],
    opened: frozenset[str] | None = None,
) -> Iterator[tuple[str, str, int, str]]:
    """``(module, name, line, module's path)`` for each ``from module import name`` of the
    file at ``path`` (unconditional, at module level) that ``module`` cannot give
    (:func:`_may_give`), and that no file gives names by ``setattr`` with a computed name
    (zipline's ``api``: ``setattr(zipline.api, f.__name__, wrapped)`` elsewhere). A dunder
    name (``__doc__``, ``__version__``...) is left out: every module has some without
    spelling them. That a commit took the name's definition away is git's to show
    (:func:`unloadable`). ``opened`` is :func:`opened_modules` (computed when not given)."""
    record = project.files.get(path)
    if record is None:
        return
    mirrored = project.mirrored_modules() | (
        opened if opened is not None else opened_modules(project))
    for module, name, line in record.needed_names:
        if name.startswith("__") and name.endswith("__"):
            continue
        source = project.modules.get(module)
        if source is not None and not _may_give(project, module, name, text, mirrored, set(),
                                                path):
            yield module, name, line, source.path


def _may_give(
    project: Project,
    module: str,
    name: str,
    text: Callable[[FileRecord], str | None],
    mirrored: frozenset[str],
    seen: set[str],
    importer: str,
) -> bool:
    """Whether ``module`` may have ``name`` once loaded: False only when it is a plain module of
    the checkout (no package, whose submodules may be built; no name another module stands
    for; its top package surely the one ``importer`` finds), its text (``text(record)``)
    never spells ``name`` as a word, nothing in it binds names unspelled
    (:data:`_DYNAMIC_NAMESPACE`), and each module it star-imports is such a module too."""
    if module in seen:
        return False  # (a cycle of star imports: what the others give is asked there)
    seen.add(module)
    source = project.modules.get(module)
    if (source is None or source.is_package or source.error is not None
            or _own_package(project, module.split(".")[0], importer) is None
            or any(m in mirrored for m in _with_packages(source))):
        return True
    body = text(source)
    if (body is None or _DYNAMIC_NAMESPACE.search(body)
            or re.search(rf"(?<!\w){re.escape(name)}(?!\w)", body)):
        return True
    return any(_may_give(project, star, name, text, mirrored, seen, importer)
               for star in source.star_imports)


def opened_modules(project: Project) -> frozenset[str]:
    """The modules some file of the checkout gives names by ``setattr`` with a computed name
    (``setattr(zipline.api, f.__name__, wrapped)``): any name may be there at run time."""
    opened: set[str] = set()
    for record in project.files.values():
        for written in record.open_classes:
            head, _, rest = written.partition(".")
            target = record.imports.get(head, head)
            opened.add(f"{target}.{rest}" if rest else target)
    return frozenset(opened)


def _own_package(project: Project, name: str, importer: str) -> FileRecord | None:
    """The ``__init__.py`` of the checkout's top package ``name``, where an import of
    ``name`` by the file at ``importer`` surely means it: a package, not a lone module (a
    script's neighbour, found only from its folder); no name of the standard library, which a
    folder of the checkout shadows only when run from where it lies; and one the importer
    finds from where it lies, its folder at the checkout's top or in ``src/`` (installed) or
    above the importer (run from there): gluonts' ``nursery/SCott`` imports the installed
    ``pts``, not the copy in ``nursery/robust-mts-attack``."""
    top = project.modules.get(name)
    if top is None or not top.is_package or name in _STDLIB:
        return None
    parent = top.path.rsplit("/", 2)[0] if top.path.count("/") >= 2 else ""
    if parent not in ("", "src") and not importer.startswith(parent + "/"):
        return None
    return top


_STDLIB = sys.stdlib_module_names


def present_modules(project: Project) -> frozenset[str]:
    """Every module name the checkout's files provide (those that do not parse too), with the
    packages above them."""
    names: set[str] = set()
    for record in project.files.values():
        module = record.module
        while module and module not in names:  # (a name in it has its packages in it too)
            names.add(module)
            module = module.rpartition(".")[0]
    return frozenset(names)


def _with_packages(record: FileRecord) -> Iterator[str]:
    """The module of ``record`` and the packages above it (``a``, ``a.b``, ``a.b.c``)."""
    parts = record.module.split(".") if record.module else []
    for end in range(1, len(parts) + 1):
        yield ".".join(parts[:end])
