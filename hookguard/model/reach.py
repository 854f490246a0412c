"""Which methods can run on an instance of a class: entry points, then ``self`` calls.

An error must hold on the paths hookguard cannot see, so a call site or a field reader counts
as reachable unless the checkout shows it is not: it is a method that no
entry point of the class reaches through ``self``/``cls``/``super()`` calls, and nothing names it
another way. Entry points are dunder methods, public methods (except those only replaced
code calls on ``self``: steps of that code), names used outside the class
(``obj.name``, ``getattr``, computed names), and what a well-known base outside the checkout
defines (it calls ``forward``). Any other base outside the checkout may call anything: a class
with one gives no answer. A method passed around as a value (``callback=self._on_done``) is
reached with the method that passes it; where that cannot be placed (a lambda, a nested
function), it is an entry point.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

from hookguard.model.externals import KNOWN_EXTERNALS
from hookguard.model.project import ClassInfo, External, Project
from hookguard.model.records import MethodRecord


def live_methods(
    project: Project,
    info: ClassInfo,
    named_outside: Callable[[str], bool],
    used_elsewhere: Callable[[str], bool] = lambda _: False,
) -> frozenset[str] | None:
    """Names of the methods an instance of ``info`` can run, or None when it cannot be told.

    ``named_outside(name)`` says whether code outside the class names ``name`` (in a way that
    may reach ``info``); ``used_elsewhere(name)`` whether classes outside ``info``'s line use it
    as a step of their own code on ``self`` while none in the line does: a public method of
    that kind (``LoraLayer.update_layer_conv2d``, which ``lora.Conv2d`` calls) is theirs, not
    an entry point of ``info``.
    """
    mro = project.mro(info)
    externals = [n for n in mro if isinstance(n, External) and not n.is_empty]
    known = [KNOWN_EXTERNALS.get(n.name) for n in externals]
    classes = [node for node in mro if isinstance(node, ClassInfo)]
    driven = _runner_driven(info, classes)
    if any(names is None for names in known) and not driven:
        return None  # it may call anything
    inherited_entry = frozenset().union(*(n for n in known if n is not None))
    prefixes = tuple(p for c in classes for p in c.record.self_prefixes)
    names = {name for c in classes for name in c.record.methods}
    # ``self.x`` read in a method's own body is reached with that method (below); only the
    # uses hookguard cannot place (in a lambda, a nested function) make an entry point.
    placed = {name for c in classes for m in c.record.methods.values() for name in m.self_reads}
    # A public method that only replaced code calls on ``self`` (``LoraLayer.update_layer``
    # calls ``self.lora_ga_init``, and the subclass replaces ``update_layer``) is a step of
    # that code, not an entry point: it runs when code outside the class names it.
    running = {id(m) for m in _running(classes)}
    by_running: set[str] = set()
    by_replaced: set[str] = set()
    for klass in classes:
        for method in klass.record.methods.values():
            callers = by_running if id(method) in running else by_replaced
            callers.update(c.name for c in method.calls if c.receiver in ("self", "cls"))
    steps = by_replaced - by_running
    live: set[str] = set()
    pending: list[str] = []
    for klass in classes:
        called = {call.name for m in klass.record.methods.values() for call in m.calls}
        passed = klass.record.self_refs - called - placed  # ``self.x`` as a value, not called
        for name, method in klass.record.methods.items():
            public = (name.startswith(_RUNNER_ENTRIES) or name in _FIXTURES
                      or any("fixture" in d for d in method.decorators)) if driven else (
                not name.startswith("_") and name not in steps and not used_elsewhere(name))
            if (
                public
                or (name.startswith("__") and name.endswith("__"))
                or name in passed
                or name in inherited_entry  # ``forward``: torch.nn.Module calls it
                or name.startswith(prefixes)
                # (nobody but the runner holds a test instance: other code's ``x.name``
                # is on other objects)
                or (named_outside(name) and not driven)
            ):
                pending.append(name)
    while pending:
        name = pending.pop()
        if name in live or name not in names:
            continue
        live.add(name)
        for method in _implementations(classes, name):
            own = [c for c in method.calls if c.receiver in ("self", "cls", "super")]
            reached = {c.name for c in own if not probed(c.condition)}
            pending.extend(reached)
            # ``callback=self._on_done``: passed on from here (a call's callee is read too:
            # one made only under a feature probe passes nothing on)
            pending.extend(method.self_reads - ({c.name for c in own} - reached))
    return frozenset(live)


@cache  # (asked per class and per candidate: tens of thousands of times a run)
def is_test_file(path: str) -> bool:
    """``tests/...``, ``test_x.py``, ``x_test.py``, ``conftest.py``, or a ``tests.py`` or
    ``test.py`` module (a Django app's tests, which unittest's ``test*.py`` collects:
    rapidpro, first contact round 33)."""
    parts = path.split("/")
    name = parts[-1]
    return (
        any(p in ("test", "tests", "testing") for p in parts[:-1])
        or name.startswith("test_") or name.endswith("_test.py")
        or name in ("conftest.py", "tests.py", "test.py")
    )


# What a test runner calls on a test class it collects: its tests and its fixtures.
_RUNNER_ENTRIES = ("test",)
_FIXTURES = frozenset({
    "setUp", "tearDown", "setUpClass", "tearDownClass", "asyncSetUp", "asyncTearDown",
    "setup_method", "teardown_method", "setup_class", "teardown_class", "setup", "teardown",
    "setUpTestData", "run", "debug", "subTest", "addCleanup", "doCleanups",
})


def _runner_driven(info: ClassInfo, classes: list[ClassInfo]) -> bool:
    """A class whose instances a test runner makes and drives: in a test file, with tests in
    its line. The runner calls the tests and the fixtures, and nothing else: a public helper
    of a test base (``get_context``) runs only when a test calls it, whatever base outside the
    checkout (``django.test.TestCase``) the class has."""
    return is_test_file(info.file.path) and any(
        name.startswith("test") for c in classes for name in c.record.methods)


_PROBE = re.compile(r"\b(?:getattr|hasattr)\((?!(?:self|cls)\b)[^,()]+,\s*['\"]\w+['\"]")


def probed(condition: str | None) -> bool:
    """Whether a call runs only under a feature probe on another object (``if getattr(config,
    "target_parameters", []):``): only for objects with a feature the code expects some to
    lack, which no class's own code shows it gets. Negated parts run without the feature."""
    return condition is not None and any(
        _PROBE.search(part) and not part.startswith("not ") for part in condition.split(" and "))


def _implementations(classes: list[ClassInfo], name: str) -> list[MethodRecord]:
    """The definitions of ``name`` a call on ``self`` runs: the first in the MRO, and each one
    after it that the previous reaches through ``super()``."""
    found: list[MethodRecord] = []
    for klass in classes:
        method = klass.record.methods.get(name)
        if method is None:
            continue
        found.append(method)
        if not any(c.name == name and c.receiver in ("super", "explicit") for c in method.calls):
            break
    return found


def running_methods(project: Project, info: ClassInfo) -> list[MethodRecord]:
    """Every definition a call on an instance of ``info`` can run: for each name, the first in
    the MRO and those it reaches through ``super()``."""
    return _running([node for node in project.mro(info) if isinstance(node, ClassInfo)])


def _running(classes: list[ClassInfo]) -> list[MethodRecord]:
    names = dict.fromkeys(name for c in classes for name in c.record.methods)
    return [m for name in names for m in _implementations(classes, name)]
