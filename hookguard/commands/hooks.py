"""``hookguard hooks CLASS``: the hook map of a base class across the checkout."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from hookguard.commands.common import EXIT_CLEAN, progress_shown
from hookguard.engine import Options, audit
from hookguard.errors import UsageError
from hookguard.hookmap import build_hook_map
from hookguard.model.project import ClassInfo, Project


def run_hooks(args: argparse.Namespace) -> int:
    with progress_shown(args):
        result = audit([args.path], Options(use_cache=not args.no_cache, reuse_results=False))
    project = result.project
    assert project is not None
    base = find_class(project, args.cls, str(result.root))
    hook_map = build_hook_map(project, base, result.findings,
                              show_all=args.show_all)
    fmt = args.format
    if fmt == "auto":
        fmt = "rich" if sys.stdout.isatty() else "plain"
    if fmt == "json":
        print(json.dumps(hook_map.to_json(), indent=2))
        return EXIT_CLEAN
    cwd = Path.cwd()

    def where(info: ClassInfo) -> str:
        path = Path(os.path.relpath(result.root / info.file.path, cwd)).as_posix()
        return f"{path}:{info.record.line}"

    if fmt == "plain":
        from hookguard.report.hooks import render_hooks_plain

        sys.stdout.write(render_hooks_plain(hook_map, where))
        return EXIT_CLEAN
    from hookguard.report.hooks import render_hooks_rich

    color = "NO_COLOR" not in os.environ and sys.stdout.isatty()
    render_hooks_rich(hook_map, where, sys.stdout, color)
    return EXIT_CLEAN


def find_class(project: Project, name: str, root: str) -> ClassInfo:
    """The class ``name`` names: fully qualified, a unique suffix, or a public name that a
    package re-exports (``mmengine.hooks.Hook`` for ``mmengine.hooks.hook.Hook``)."""
    matches = project.find_class(name)
    if not matches:
        found = reexported(project, name)
        matches = [found] if found is not None else []
    if len(matches) > 1:
        names = ", ".join(sorted(m.fq for m in matches))
        raise UsageError(f"{name!r} is ambiguous: {names}")
    if not matches:
        import difflib

        from hookguard.report.escape import printable

        known = {fq: fq for fq in project.classes}
        known.update({fq.rsplit(".", 1)[-1]: fq for fq in project.classes})
        close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.6)
        close += difflib.get_close_matches(name.rsplit(".", 1)[-1], list(known), n=3, cutoff=0.6)
        hint = ", ".join(dict.fromkeys(known[c] for c in close))
        message = f"no class {printable(name)!r} in the checkout at {root}"
        raise UsageError(message + (f"; did you mean {hint}?" if hint else ""))
    return matches[0]


def reexported(project: Project, name: str) -> ClassInfo | None:
    """``package.Name`` where ``package`` imports ``Name`` from a submodule (or further)."""
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module, rest = ".".join(parts[:cut]), ".".join(parts[cut:])
        candidates = [r for m, r in project.modules.items()
                      if m == module or m.endswith("." + module)]
        for record in candidates:
            node = project.resolve_name(record, rest)
            if isinstance(node, ClassInfo):
                return node
    return None
