"""The package's import graph: data flows one way (files -> records -> model -> rules ->
findings -> reporters), with no import circles, and the cache is a layer below everything that
uses it (issue 24, item 7): a store of verified bytes by key, each owner encoding its own."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "hookguard"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _top_level_imports(path: Path) -> set[str]:
    """hookguard modules imported when ``path`` is imported: module-level imports, not those
    under ``if TYPE_CHECKING:`` or inside functions (imported when first needed)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("hookguard"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            if target.startswith("hookguard"):
                found.add(target)
                found.update(f"{target}.{a.name}" for a in node.names)
    return found


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: {m for m in _top_level_imports(path) if m in modules and m != name}
            for name, path in modules.items()}


def test_no_import_circles() -> None:
    graph = _graph()
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as exc:  # pragma: no cover - the message is the cycle
        raise AssertionError(f"import circle: {' -> '.join(exc.args[1])}") from None
    assert len(graph) > 50  # (the walk found the package)


def _reaches(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for target in graph.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def test_the_cache_is_a_layer_below_what_it_stores() -> None:
    """The cache knows records (what it stores by content key) and nothing above them: not the
    history, the incremental state, the findings or the rules, whose answers it keeps as bytes."""
    below = _reaches(_graph(), "hookguard.model.cache")
    above = {m for m in below if m.startswith(("hookguard.git", "hookguard.incremental",
                                                "hookguard.findings", "hookguard.rules",
                                                "hookguard.engine", "hookguard.gate",
                                                "hookguard.report", "hookguard.commands"))}
    assert above == set(), above


def test_the_static_checker_never_imports_torch_at_module_level() -> None:
    for path in PACKAGE.rglob("*.py"):
        if "runtime" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n.split(".")[0] == "torch" for n in names), path
