"""A name a checkout looks up only to refuse it keeps no override alive (issue 23: Lightning's
removed ``on_batch_end``, whose validator raises for a callback that still has it, hid the
stale override of an app example); every other lookup still does."""

from __future__ import annotations

import ast
import random
import re
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from hookguard.engine import Options
from hookguard.findings import Finding, Severity
from hookguard.gate import run_gate
from hookguard.model.refusals import may_refuse, probe_lines, refused_names
from tests.conftest import GitRepo

pytestmark = pytest.mark.usefixtures("private_key_dir")


def refused(source: str) -> frozenset[str]:
    text = textwrap.dedent(source)
    tree = ast.parse(text)
    found = refused_names(tree)
    assert may_refuse(text) or not found  # the cheap test never skips a refusal
    assert refused_names(tree, probe_lines(text)) == found  # nor does the pruned walk
    return found


@pytest.mark.parametrize("source", [
    """
    def check(cb):
        if callable(getattr(cb, "on_batch_end", None)):
            raise RuntimeError("on_batch_end was removed")
    """,
    """
    def check(cb):
        if hasattr(cb, "on_batch_end") and not cb.legacy:
            raise TypeError("use on_train_batch_end")
    """,
    """
    def check(trainer):
        for callback in trainer.callbacks:
            for hook, alternative in (("on_batch_end", "on_train_batch_end"),):
                if callable(getattr(callback, hook, None)):
                    raise RuntimeError(f"{hook} was removed: use {alternative}")
    """,
    """
    def check(model):
        hooks = ("on_batch_end", "on_epoch_end")
        for hook in hooks:
            if is_overridden(method_name=hook, instance=model):
                raise RuntimeError(hook)
    """,
])
def test_a_name_probed_only_to_raise_is_refused(source: str) -> None:
    assert "on_batch_end" in refused(source)


def test_only_the_probed_place_of_a_pair_is_refused() -> None:
    found = refused("""
    def check(cb):
        for hook, alternative in (("on_batch_end", "on_train_batch_end"),):
            if hasattr(cb, hook):
                raise RuntimeError(alternative)
    """)
    assert found == {"on_batch_end"}


@pytest.mark.parametrize("source", [
    # a requirement: the name must be there, and is called
    """
    def check(cb):
        if not hasattr(cb, "on_batch_end"):
            raise TypeError("callbacks need on_batch_end")
    """,
    # a deprecation: the hook still runs
    """
    def check(cb):
        if hasattr(cb, "on_batch_end"):
            warn("deprecated")
    """,
    # a placeholder, not a refusal
    """
    def check(cb):
        if hasattr(cb, "on_batch_end"):
            raise NotImplementedError
    """,
    # an else: something happens with it otherwise
    """
    def check(cb):
        if hasattr(cb, "on_batch_end"):
            raise RuntimeError("no")
        else:
            cb.on_batch_end()
    """,
    # the same string dispatched elsewhere in the file
    """
    def check(cb):
        if hasattr(cb, "on_batch_end"):
            raise RuntimeError("no")

    def run(cb):
        getattr(cb, "on_batch_end")()
    """,
    # a module-level tuple: other modules may walk it to call the names
    """
    HOOKS = ("on_batch_end",)

    def check(cb):
        for hook in HOOKS:
            if hasattr(cb, hook):
                raise RuntimeError(hook)
    """,
    # a local tuple read twice: the other read may dispatch
    """
    def check(cb):
        hooks = ("on_batch_end",)
        for hook in hooks:
            if hasattr(cb, hook):
                raise RuntimeError(hook)
        return hooks
    """,
    # a loop that does more than refuse
    """
    def check(cb):
        for hook in ("on_batch_end",):
            if hasattr(cb, hook):
                raise RuntimeError(hook)
            getattr(cb, hook)()
    """,
])
def test_any_other_use_keeps_the_name_a_lookup(source: str) -> None:
    assert "on_batch_end" not in refused(source)


CALLBACK = """
class Callback:
    def on_train_batch_end(self, trainer):
        pass

    def on_batch_end(self, trainer):
        pass
"""

LOOP = """
class Loop:
    def __init__(self, callbacks):
        self.callbacks = callbacks

    def _call(self, hook):
        for callback in self.callbacks:
            getattr(callback, hook)(self)

    def advance(self):
        self._call("on_train_batch_end")
        self._call("on_batch_end")
"""

APP = """
class Tracer:
    def configure(self):
        from pkg.callback import Callback

        class Injected(Callback):
            def on_batch_end(self, trainer):
                self.step = trainer.step

        return Injected()
"""

REFUSAL = """
def validate(trainer):
    for callback in trainer.callbacks:
        for hook, alternative in (("on_batch_end", "on_train_batch_end"),):
            if callable(getattr(callback, hook, None)):
                raise RuntimeError(f"{hook} was removed: use {alternative}")
"""

DEPRECATION = """
def validate(trainer):
    for callback in trainer.callbacks:
        for hook, alternative in (("on_batch_end", "on_train_batch_end"),):
            if callable(getattr(callback, hook, None)):
                warn(f"{hook} is deprecated: use {alternative}")
"""


def _removed_after(repo: GitRepo, validator: str) -> dict[str, Finding]:
    repo.commit("callbacks", {"pkg/__init__.py": "", "pkg/callback.py": CALLBACK,
                              "pkg/loop.py": LOOP, "pkg/validate.py": validator,
                              "examples/app.py": APP})
    base = repo.git("rev-parse", "HEAD").strip()
    repo.commit("Remove the deprecated on_batch_end", {
        "pkg/callback.py": CALLBACK.replace(
            "\n    def on_batch_end(self, trainer):\n        pass\n", ""),
        "pkg/loop.py": LOOP.replace('        self._call("on_batch_end")\n', ""),
    })
    result = run_gate(repo.root, base, "HEAD", False, Options(use_cache=False))
    return {f"{f.code} {f.symbol}": f for f in result.findings}


SYMBOL = "HG001 app.Tracer.configure.<locals>.Injected.on_batch_end"


def test_a_callback_hook_the_framework_now_refuses_is_dead(
    git_repo: Callable[..., GitRepo],
) -> None:
    found = _removed_after(git_repo(), REFUSAL)
    assert found[SYMBOL].severity is Severity.ERROR, found
    assert "was removed" in found[SYMBOL].message


def test_a_callback_hook_the_framework_still_looks_up_is_no_proof(
    git_repo: Callable[..., GitRepo],
) -> None:
    """A deprecation warning probes the name and goes on: something may still call it."""
    found = _removed_after(git_repo(), DEPRECATION)
    assert SYMBOL not in found or found[SYMBOL].severity is Severity.WARNING


# The shape may_refuse looks for, searched over the whole text: its definition, which the
# line-by-line search must agree with on every text.
_SHAPE = re.compile(
    r"\bif\b[^\n:]*\b(?:hasattr|getattr|is_overridden)\([^\n]*:"
    r"(?:[ \t]*raise\b|[ \t]*(?:#[^\n]*)?\n(?:[ \t]*(?:#[^\n]*)?\n)*[ \t]*raise\b)")


def test_the_cheap_test_finds_the_shape_exactly_where_a_whole_text_search_does() -> None:
    pieces = ["if ", "if ", "hasattr(", "getattr(o, 'a')", "is_overridden(", ":", ": raise",
              " raise", "\n", ":\n    raise X\n", "# note\n", "\t", "x", ")", "elif ", "iff",
              "raise_", "\r\n"]
    rng = random.Random(23)
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 16)))
             for _ in range(20000)]
    texts += ["if hasattr(cb, 'a'): raise X", "x = getattr(o, 'a')\nif getattr(o, 'a'):\n"
              "    # why\n\n    raise X\n", "getattr(o, 'a') if ok else None: raise"]
    found = [t for t in texts if _SHAPE.search(t)]
    assert len(found) > 100  # the generated texts hold the shape often enough to test it
    assert [may_refuse(t) for t in texts] == [_SHAPE.search(t) is not None for t in texts]


def test_the_walk_pruned_to_lines_naming_a_probe_reads_what_the_whole_walk_reads() -> None:
    """On real files (this checkout's own) and on refusals nested in classes, functions,
    loops, ``try``, ``with`` and ``match``, with the probe's name on a continuation line."""
    root = Path(__file__).resolve().parents[1]
    texts = [p.read_text(encoding="utf-8") for p in sorted(root.glob("*/**/*.py"))
             if ".venv" not in p.parts][:400]
    nested = textwrap.dedent("""
    class Checker:
        def check(self, cb, mode):
            try:
                with open("x") as f:
                    match mode:
                        case "strict":
                            for hook in ("on_batch_end",):
                                if callable(
                                        getattr(cb, hook, None)):
                                    raise RuntimeError(hook)
            except OSError:
                pass
            if hasattr(cb, "on_epoch_end") and cb.old:
                raise TypeError("on_epoch_end was removed")
    """)
    texts.append(nested)
    found = {}
    for text in texts:
        tree = ast.parse(text)
        whole = refused_names(tree)
        assert refused_names(tree, probe_lines(text)) == whole
        found[text] = whole
    assert found[nested] == {"on_batch_end", "on_epoch_end"}
    assert probe_lines("if hasattr(x, 'a'):\r    raise X\r") is None  # lone CR: no pruning
