"""Generate a synthetic, realistic Python checkout (a git repository) for benchmarking hookguard.

    python benchmarks/synth.py DEST --files 5000 [--seed 0]

The checkout is one top-level package, ``synth``, holding:

* ``synth/core``: base classes with hooks (methods with positional, defaulted, keyword-only and
  ``**kwargs`` parameters) that a template method calls, a mixin module and an ``__init__.py``
  re-exporting every base;
* ``synth/<area>/<pkg>``: packages of 40 modules, each 100-300 lines with 2-4 classes that
  subclass a core base (few popular bases: wide families), a recent class of the same package
  (relative imports: deep chains, up to 6 levels) or a class of another package (absolute and
  module-alias imports), sometimes with a mixin; every class overrides a few inherited hooks with
  the same signature and adds hooks of its own; plus module-level helper functions.

History: commit 1 is the whole tree; commit 2 renames the hook ``_build_pool_mapping`` of
``synth.core.base_000.CoreBase0`` to ``_prepare_page_table`` while
``synth/<last pkg>/planted_override.py``'s ``PlantedManager`` (a cross-package subclass) keeps
the old name: the planted rename, which hookguard must report as HG001.

Everything is deterministic for a given ``(files, seed)``: contents, paths and commit ids.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

GENERATOR_VERSION = "1"
MODULES_PER_PACKAGE = 40
MAX_DEPTH = 6  # a class has at most this many ancestors below ``object`` in its chain
PLANTED_OLD = "_build_pool_mapping"
PLANTED_NEW = "_prepare_page_table"
PLANTED_BASE_PATH = "synth/core/base_000.py"
PLANTED_CLASS = "PlantedManager"

AREAS = ("engine", "models", "serving", "runtime", "plugins", "io", "ops", "tools")
VERBS = (
    "build", "prepare", "update", "compute", "load", "save", "apply", "reset", "validate",
    "resolve", "render", "collect", "emit", "merge", "split", "encode", "decode", "schedule",
    "allocate", "release", "attach", "detach", "flush", "sync", "warm", "finalize", "init",
)
NOUNS = (
    "state", "cache", "buffer", "pool", "mapping", "layout", "config", "weights", "metrics",
    "schedule", "batch", "request", "tensor", "plan", "graph", "shard", "index", "table",
    "stream", "handle", "context", "policy", "budget", "queue", "window", "block", "page",
)
CLASS_WORDS = (
    "Attention", "Cache", "Manager", "Scheduler", "Backend", "Engine", "Runner", "Loader",
    "Executor", "Planner", "Allocator", "Decoder", "Encoder", "Router", "Sampler", "Worker",
    "Pipeline", "Adapter", "Handler", "Controller", "Builder", "Store", "Tracker", "Policy",
)
PARAM_POOL = (
    ("batch", None), ("step", "int"), ("layout", None), ("config", "dict"),
    ("tokens", "list[int]"), ("device", "str"), ("stream", None), ("name", "str"),
)
DEFAULT_POOL = (
    ("limit", "int", "0"), ("scale", "float", "1.0"), ("mode", "str", "'auto'"),
    ("retries", "int", "3"), ("timeout", "float | None", "None"),
)
KWONLY_POOL = (
    ("strict", "bool", "False"), ("dry_run", "bool", "False"), ("tag", "str | None", "None"),
    ("reuse", "bool", "True"),
)


@dataclass
class ClassSpec:
    name: str
    module: str  # dotted
    package: str  # dotted package holding the module
    hooks: dict[str, str]  # name -> parameter list after ``self`` (inherited + own)
    depth: int
    ancestors: frozenset[str] = frozenset()


@dataclass
class ModuleSpec:
    path: str
    module: str
    package: str
    classes: list[ClassSpec] = field(default_factory=list)


def _sig(rng: random.Random) -> str:
    parts: list[str] = []
    for name, ann in rng.sample(PARAM_POOL, rng.randint(0, 2)):
        parts.append(f"{name}: {ann}" if ann else name)
    for name, ann, default in rng.sample(DEFAULT_POOL, rng.randint(0, 2)):
        parts.append(f"{name}: {ann} = {default}")
    kwonly = rng.sample(KWONLY_POOL, rng.randint(0, 2))
    if kwonly:
        parts.append("*")
        parts.extend(f"{name}: {ann} = {default}" for name, ann, default in kwonly)
    if rng.random() < 0.2:
        parts.append("**kwargs: Any")
    return ", ".join(parts)


def _arg_names(sig: str) -> list[str]:
    names = []
    for part in sig.split(", "):
        name = part.split(":")[0].split("=")[0].strip()
        if name and name != "*" and not name.startswith("**"):
            names.append(name)
    return names


def _required(sig: str) -> int:
    """How many positional parameters without a default ``sig`` has."""
    count = 0
    for part in sig.split(", "):
        if not part or part == "*" or part.startswith("*"):
            break
        if "=" not in part:
            count += 1
    return count


def _call(hook: str, sig: str, first: str) -> str:
    required = _required(sig)
    args = [first] + ["None"] * (required - 1) if required else []
    return f"self.{hook}({', '.join(args)})"


def _hook_name(rng: random.Random, taken: set[str]) -> str:
    while True:
        name = f"_{rng.choice(VERBS)}_{rng.choice(NOUNS)}"
        if rng.random() < 0.4:
            name += f"_{rng.choice(NOUNS)}"
        if name not in taken and name not in (PLANTED_OLD, PLANTED_NEW):
            taken.add(name)
            return name


def _body(
    rng: random.Random,
    hooks: dict[str, str],
    args: list[str],
    indent: str,
    state: bool = True,
    super_call: str | None = None,
) -> list[str]:
    """A plausible method body: normalise, call other hooks, maybe set state, return."""
    lines: list[str] = []
    var = rng.choice(("result", "value", "out", "acc"))
    src = args[0] if args else "None"
    if super_call:
        lines.append(f"{indent}{var} = {super_call}")
        lines.append(f"{indent}{var} = self._normalize({var} if {var} is not None else {src})")
    else:
        lines.append(f"{indent}{var} = self._normalize({src})")
    names = list(hooks)
    for _ in range(rng.randint(1, 4)):
        kind = rng.random()
        if kind < 0.35 and names:
            hook = rng.choice(names)
            lines.append(f"{indent}{var} = {_call(hook, hooks[hook], var)} or {var}")
        elif kind < 0.6:
            lines.append(f"{indent}if {var} is None:")
            lines.append(f"{indent}    {var} = self._defaults.get({rng.choice(NOUNS)!r})")
        elif kind < 0.8 and state:
            lines.append(f"{indent}self._{rng.choice(NOUNS)} = {var}")
        else:
            lines.append(f"{indent}logger.debug(\"%s: %r\", type(self).__name__, {var})")
    lines.append(f"{indent}return {var}")
    return lines


def _function(rng: random.Random, name: str) -> list[str]:
    args = rng.sample(("items", "config", "limit", "name", "values"), rng.randint(1, 3))
    lines = [f"def {name}({', '.join(args)}):", f'    """Helper: {name.replace("_", " ")}."""']
    lines.append("    total = 0")
    lines.append(f"    for entry in {args[0]} or ():")
    lines.append("        if entry is None:")
    lines.append("            continue")
    lines.append("        total += len(str(entry))")
    for extra in args[1:]:
        lines.append(f"    if {extra}:")
        lines.append(f"        total += hash({extra}) % 7")
    lines.append("    return total")
    return lines


def _class_lines(
    rng: random.Random,
    name: str,
    bases: list[str],
    overrides: dict[str, str],
    own: dict[str, str],
    callable_hooks: dict[str, str],
) -> list[str]:
    lines = [f"class {name}({', '.join(bases)}):" if bases else f"class {name}:"]
    lines.append(f'    """{name}: {rng.choice(VERBS)}s {rng.choice(NOUNS)} for its family."""')
    lines.append("")
    lines.append(f"    kind = {name.lower()!r}")
    lines.append("")
    for hook, sig in [*overrides.items(), *own.items()]:
        params = f"self, {sig}" if sig else "self"
        lines.append(f"    def {hook}({params}):")
        body_hooks = {h: s for h, s in callable_hooks.items() if h != hook}
        names = _arg_names(sig)
        sup = None
        if hook in overrides and rng.random() < 0.6:
            passed = ", ".join(f"{n}={n}" for n in names)
            sup = f"super().{hook}({passed})"
        lines.extend(_body(rng, body_hooks, names, "        ", state=False, super_call=sup))
        lines.append("")
    for _ in range(rng.randint(0, 2)):
        helper = f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}"
        lines.append(f"    def {helper}(self, value=None):")
        lines.extend(_body(rng, callable_hooks, ["value"], "        "))
        lines.append("")
    return lines


def _core_module(rng: random.Random, index: int, renamed: bool) -> tuple[str, list[ClassSpec]]:
    """A core base module: 2-3 base classes with hooks and a template method calling them."""
    module = f"synth.core.base_{index:03d}"
    taken: set[str] = set()
    specs: list[ClassSpec] = []
    lines = [
        f'"""Core bases, part {index}: template methods and the hooks they call."""',
        "",
        "from __future__ import annotations",
        "",
        "import logging",
        "from typing import Any",
        "",
        "logger = logging.getLogger(__name__)",
        "",
        "",
    ]
    lines.extend(_function(rng, f"default_{rng.choice(NOUNS)}_{index}"))
    lines += ["", ""]
    for k in range(2 if index else 3):
        name = f"CoreBase{index}" if k == 0 else f"Core{rng.choice(CLASS_WORDS)}{index}x{k}"
        hooks = {_hook_name(rng, taken): _sig(rng) for _ in range(rng.randint(5, 8))}
        lines.append(f"class {name}:")
        lines.append(f'    """Base {name}; subclasses customise it through its hooks."""')
        lines.append("")
        lines.append("    def __init__(self, config: dict[str, Any] | None = None) -> None:")
        lines.append("        self._defaults = dict(config or {})")
        lines.append("        self._state: dict[str, Any] = {}")
        planted = index == 0 and k == 0
        if planted:
            hook = PLANTED_NEW if renamed else PLANTED_OLD
            lines.append(f"        self.{hook}(self._defaults, device=None)")
        lines.append("")
        lines.append("    def _normalize(self, value: Any) -> Any:")
        lines.append("        return value")
        lines.append("")
        lines.append("    def run(self, batch: Any = None) -> Any:")
        lines.append('        """Template method: calls every hook in order."""')
        lines.append("        value = batch")
        for hook, sig in hooks.items():
            lines.append(f"        value = {_call(hook, sig, 'value')} or value")
        lines.append("        return value")
        lines.append("")
        if planted:
            hook = PLANTED_NEW if renamed else PLANTED_OLD
            lines.append(
                f"    def {hook}(self, layout: Any, *, device: str | None = None) -> None:"
            )
            lines.append('        """Hook: build the pool mapping tables for ``layout``."""')
            lines.append("        self._state['mapping'] = dict(layout or {})")
            lines.append("        self._state['device'] = device")
            lines.append("")
        for hook, sig in hooks.items():
            params = f"self, {sig}" if sig else "self"
            lines.append(f"    def {hook}({params}) -> Any:")
            lines.append(f'        """Hook: {hook.strip("_").replace("_", " ")}."""')
            lines.extend(_body(rng, {}, _arg_names(sig), "        ", state=False))
            lines.append("")
        lines.append("")
        specs.append(ClassSpec(name, module, "synth.core", dict(hooks), 0))
    return "\n".join(lines).rstrip() + "\n", specs


def _mixins(rng: random.Random) -> tuple[str, list[ClassSpec]]:
    lines = ['"""Mixins shared across packages."""', "", "from typing import Any", "", ""]
    specs = []
    taken: set[str] = set()
    for word in ("Logging", "Metrics", "Retry", "Tracing", "Locking", "Caching"):
        name = f"{word}Mixin"
        hooks = {
            f"_{word.lower()}{_hook_name(rng, taken)}": _sig(rng) for _ in range(2)
        }
        lines.append(f"class {name}:")
        lines.append(f'    """Adds {word.lower()} around hooks."""')
        lines.append("")
        for hook, sig in hooks.items():
            params = f"self, {sig}" if sig else "self"
            lines.append(f"    def {hook}({params}) -> Any:")
            lines.append("        return None")
            lines.append("")
        lines.append("")
        specs.append(ClassSpec(name, "synth.core.mixins", "synth.core", hooks, 0))
    return "\n".join(lines).rstrip() + "\n", specs


def _relative_import(from_pkg: str, to_module: str) -> str | None:
    """``from .x import`` / ``from ..p.x import`` text for ``to_module`` if it is nearby."""
    pkg_parts = from_pkg.split(".")
    mod_parts = to_module.split(".")
    for up in (0, 1):
        base = pkg_parts[: len(pkg_parts) - up]
        if mod_parts[: len(base)] == base and len(mod_parts) > len(base):
            return "." * (up + 1) + ".".join(mod_parts[len(base):])
    return None


class _Planner:
    def __init__(self, files: int, seed: int) -> None:
        self.rng = random.Random(f"hookguard-bench:{seed}:{files}")
        self.files = files
        self.core_bases: list[ClassSpec] = []
        self.mixins: list[ClassSpec] = []
        self.by_package: dict[str, list[ClassSpec]] = {}
        self.all_classes: list[ClassSpec] = []
        self.class_names: set[str] = set()

    def class_name(self, parent: ClassSpec) -> str:
        rng = self.rng
        prefix = rng.choice(("Paged", "Sparse", "Fused", "Async", "Tiled", "Lazy", "Fast",
                             "Remote", "Local", "Shared", "Quant", "Hybrid", "Static"))
        stem = parent.name.removeprefix("Core").rstrip("0123456789x")
        stem = stem if len(stem) < 12 and not stem.startswith("Base") else ""
        name = f"{prefix}{stem}{rng.choice(CLASS_WORDS)}{len(self.class_names)}"
        self.class_names.add(name)
        return name

    def pick_parent(self, package: str, local: list[ClassSpec]) -> ClassSpec:
        rng = self.rng
        roll = rng.random()
        deep_ok = [c for c in local if c.depth < MAX_DEPTH - 1]
        if roll < 0.15 and deep_ok:
            return rng.choice(deep_ok)
        same = [c for c in self.by_package.get(package, [])[-30:] if c.depth < MAX_DEPTH - 1]
        if roll < 0.55 and same:
            return rng.choice(same)
        if roll < 0.75 and len(self.by_package) > 1:
            others = [p for p in self.by_package if p != package and self.by_package[p]]
            if others:
                pool = [c for c in self.by_package[rng.choice(others)] if c.depth < MAX_DEPTH - 1]
                if pool:
                    return rng.choice(pool)
        # Zipf-like choice over core bases: a few very wide families.
        weights = [1.0 / (i + 1) for i in range(len(self.core_bases))]
        return rng.choices(self.core_bases, weights)[0]

    def module(self, spec: ModuleSpec) -> str:
        rng = self.rng
        imports: dict[str, str] = {}  # class name -> expression used as base
        import_lines: list[str] = []
        alias_used: dict[str, str] = {}
        body: list[str] = []
        local: list[ClassSpec] = []
        helpers = [f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}_{i}" for i in range(rng.randint(1, 3))]
        for fn in helpers[:1]:
            body.extend(_function(rng, fn))
            body += ["", ""]
        for _ in range(rng.randint(2, 4)):
            parent = self.pick_parent(spec.package, local)
            base_expr = self.base_expr(spec, parent, local, imports, import_lines, alias_used)
            bases = [base_expr]
            hooks = dict(parent.hooks)
            mixin = rng.choice(self.mixins)
            if rng.random() < 0.2 and mixin.name not in parent.ancestors | {parent.name}:
                bases.insert(0, self.base_expr(spec, mixin, local, imports, import_lines,
                                               alias_used))
                hooks.update(mixin.hooks)
            name = self.class_name(parent)
            inherited = list(hooks)
            overrides = {h: hooks[h] for h in rng.sample(inherited, min(len(inherited),
                                                                         rng.randint(1, 4)))}
            taken = set(hooks)
            own = {_hook_name(rng, taken): _sig(rng) for _ in range(rng.randint(1, 2))}
            hooks.update(own)
            body.extend(_class_lines(rng, name, bases, overrides, own, hooks))
            body.append("")
            ancestors = parent.ancestors | {parent.name}
            if len(bases) > 1:
                ancestors |= {mixin.name}
            cls = ClassSpec(name, spec.module, spec.package, hooks, parent.depth + 1, ancestors)
            local.append(cls)
            spec.classes.append(cls)
        for fn in helpers[1:]:
            body.extend(_function(rng, fn))
            body += ["", ""]
        header = [
            f'"""{spec.module.rsplit(".", 1)[-1].replace("_", " ").title()}: '
            f'{", ".join(c.name for c in local)}."""',
            "",
            "from __future__ import annotations",
            "",
            "import logging",
            "from typing import Any",
            "",
            *sorted(set(import_lines)),
            "",
            "logger = logging.getLogger(__name__)",
            "",
            "",
        ]
        self.by_package.setdefault(spec.package, []).extend(local)
        self.all_classes.extend(local)
        return "\n".join(header + body).rstrip() + "\n"

    def base_expr(
        self,
        spec: ModuleSpec,
        parent: ClassSpec,
        local: list[ClassSpec],
        imports: dict[str, str],
        import_lines: list[str],
        alias_used: dict[str, str],
    ) -> str:
        if parent in local or parent.name in imports:
            return imports.get(parent.name, parent.name)
        rng = self.rng
        if parent.module.startswith("synth.core.base_") and rng.random() < 0.4:
            import_lines.append(f"from synth.core import {parent.name}")  # re-export
            expr = parent.name
        elif parent.package == spec.package or (
            rng.random() < 0.5 and _relative_import(spec.package, parent.module)
        ):
            rel = _relative_import(spec.package, parent.module)
            assert rel is not None
            import_lines.append(f"from {rel} import {parent.name}")
            expr = parent.name
        elif rng.random() < 0.3:
            pkg, mod = parent.module.rsplit(".", 1)
            alias = alias_used.setdefault(parent.module, f"_{mod}")
            import_lines.append(f"from {pkg} import {mod} as {alias}")
            expr = f"{alias}.{parent.name}"
        else:
            import_lines.append(f"from {parent.module} import {parent.name}")
            expr = parent.name
        imports[parent.name] = expr
        return expr


def _planted(parent: ClassSpec, package: str) -> str:
    rel = _relative_import(package, parent.module)
    imp = (
        f"from {rel} import {parent.name}"
        if rel and rel.startswith(".")
        and parent.package == package
        else f"from {parent.module} import {parent.name}"
    )
    return "\n".join([
        f'"""{PLANTED_CLASS}: a cross-package subclass that still overrides the old hook name."""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Any",
        "",
        imp,
        "",
        "",
        f"class {PLANTED_CLASS}({parent.name}):",
        '    """Builds its own page layout through the pool-mapping hook."""',
        "",
        f"    def {PLANTED_OLD}(self, layout: Any, *, device: str | None = None) -> None:",
        "        self._state['mapping'] = {k: v for k, v in sorted((layout or {}).items())}",
        "        self._state['device'] = device or 'cpu'",
        "",
    ])


def _git(dest: Path, *args: str, env: dict[str, str] | None = None) -> None:
    subprocess.run(
        ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com",
         "-c", "commit.gpgsign=false", "-c", "core.autocrlf=false", *args],
        cwd=dest, check=True, env=env, stdout=subprocess.DEVNULL,
    )


def generate(dest: Path, files: int, seed: int = 0) -> Path:
    """Write a synthetic checkout of about ``files`` Python files to ``dest`` (a new git repo).

    Returns ``dest``. ``dest`` must not exist or be empty-able: it is removed first.
    """
    if files < 20:
        raise ValueError("files must be at least 20")
    dest = Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    plan = _Planner(files, seed)
    rng = plan.rng
    out: dict[str, str] = {}

    n_core = max(4, min(200, files // 50))
    core_renamed: str | None = None
    for i in range(n_core):
        if i:
            text, specs = _core_module(rng, i, renamed=False)
        if i == 0:  # generated twice (before/after the rename) from the same state
            core_renamed = _core_module(random.Random(f"core0:{seed}"), 0, renamed=True)[0]
            text, specs = _core_module(random.Random(f"core0:{seed}"), 0, renamed=False)
        out[f"synth/core/base_{i:03d}.py"] = text
        plan.core_bases.extend(specs)
    mixin_text, plan.mixins = _mixins(rng)
    out["synth/core/mixins.py"] = mixin_text
    exports = sorted((c.module.rsplit(".", 1)[1], c.name) for c in plan.core_bases)
    out["synth/core/__init__.py"] = (
        '"""Core bases, re-exported."""\n\n'
        + "".join(f"from .{mod} import {name}\n" for mod, name in exports)
        + "\n__all__ = [\n" + "".join(f"    {name!r},\n" for _, name in exports) + "]\n"
    )
    out["synth/__init__.py"] = '"""Synthetic checkout for hookguard benchmarks."""\n'

    remaining = files - len(out) - 1  # minus the planted module
    # packages of MODULES_PER_PACKAGE modules + __init__.py, spread over areas
    n_packages = max(2, -(-remaining // (MODULES_PER_PACKAGE + 1)))
    packages = []
    for p in range(n_packages):
        area = AREAS[p % len(AREAS)]
        packages.append(f"synth.{area}.{rng.choice(NOUNS)}_{p:03d}")
    areas_used = sorted({p.rsplit(".", 1)[0] for p in packages})
    for area in areas_used:
        out[area.replace(".", "/") + "/__init__.py"] = f'"""{area} area."""\n'
        remaining -= 1
    budgets = [0] * n_packages
    for p in range(n_packages):
        budgets[p] = 1  # __init__.py
    left = remaining - n_packages
    for p in range(n_packages):
        share = left // (n_packages - p)
        budgets[p] += share
        left -= share
    # Interleave packages (round-robin over module slots) so cross-package bases exist early.
    modules: list[ModuleSpec] = []
    for package in packages:
        out[package.replace(".", "/") + "/__init__.py"] = f'"""Package {package}."""\n'
    slots = max(budgets) - 1
    for k in range(slots):
        for p, package in enumerate(packages):
            if k < budgets[p] - 1:
                stem = f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}_{k:02d}"
                modules.append(ModuleSpec(f"{package.replace('.', '/')}/{stem}.py",
                                          f"{package}.{stem}", package))
    for spec in modules:
        out[spec.path] = plan.module(spec)

    last_pkg = packages[-1]
    candidates = [
        c for c in plan.all_classes
        if c.package != last_pkg and "CoreBase0" in c.ancestors
    ]
    parent = candidates[0] if candidates else plan.core_bases[0]
    out[f"{last_pkg.replace('.', '/')}/planted_override.py"] = _planted(parent, last_pkg)
    out[".gitignore"] = ".hookguard_cache/\n.mypy_cache/\n__pycache__/\n"

    for rel, text in out.items():
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    env = dict(os.environ)
    env.update(GIT_AUTHOR_DATE="2026-01-01T00:00:00+00:00",
               GIT_COMMITTER_DATE="2026-01-01T00:00:00+00:00")
    _git(dest, "init", "-q", "-b", "main")
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "-m", "Synthetic checkout", env=env)
    assert core_renamed is not None
    (dest / PLANTED_BASE_PATH).write_text(core_renamed, encoding="utf-8")
    env.update(GIT_AUTHOR_DATE="2026-01-02T00:00:00+00:00",
               GIT_COMMITTER_DATE="2026-01-02T00:00:00+00:00")
    _git(dest, "add", PLANTED_BASE_PATH)
    _git(dest, "commit", "-q", "-m",
         f"Rename {PLANTED_OLD} to {PLANTED_NEW} in CoreBase0", env=env)
    return dest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dest", type=Path)
    parser.add_argument("--files", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    generate(args.dest, args.files, args.seed)
    count = sum(1 for _ in args.dest.rglob("*.py"))
    print(f"{args.dest}: {count} Python files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
