"""Progress on long runs, shown on a terminal and nowhere else.

Library code says what it does through a few calls; while no display is shown (the default,
and always when piped, in CI or under a machine format) each is one global lookup (``phase``, a
context manager, a microsecond or so)::

    progress.start("files", total=len(jobs))   # (re)start a counter: files, commits, classes
    progress.advance("files")                   # one more done
    progress.done("commits")                    # complete (for a count without a total)
    with progress.phase("reading history"):     # work that has no count
        ...

A command shows them with ``with progress.shown(progress.wanted(fmt, choice)):``. The display
is rich's, on stderr, and transient: it is cleared when the run ends, so the report is what it
would have been without it. It starts only once the run has lasted ``delay`` seconds (1.0, or
``HOOKGUARD_PROGRESS_DELAY``; 0 shows it from the start), so a warm run shows nothing at all,
and rich is imported only then. The counters are plain integers, written by the code that does
the work and read by the display's own thread eight times a second.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.live import Live
    from rich.progress import Progress, TaskID

# What each counter counts, in the order the display lists them.
COUNTERS = {"files": "files parsed", "commits": "commits walked", "classes": "classes checked"}
# Formats read by programs: progress never goes with them, whatever the terminal.
MACHINE_FORMATS = frozenset({"json", "sarif", "github"})
DELAY = 1.0  # seconds a run lasts before its progress shows
_REFRESH = 1 / 8  # seconds between redraws


class _Reporter:
    """The counters of one run, and the display that shows them once ``delay`` has passed."""

    def __init__(self, stream: IO[str], delay: float, force: bool) -> None:
        self.stream = stream
        self.force = force  # show it even where rich sees no interactive terminal
        self.counts = dict.fromkeys(COUNTERS, 0)
        self.totals: dict[str, int | None] = dict.fromkeys(COUNTERS)
        self.started: set[str] = set()  # the counters shown
        self.generations: dict[str, int] = {}  # how often each counter was started
        self.phase: str | None = None
        self.lock = threading.Lock()  # held while rich writes to the terminal
        self.live: Live | None = None
        self._bar: Progress | None = None
        self._tasks: dict[str, TaskID] = {}
        self._drawn: dict[str, tuple[str | None, int | None]] = {}
        self._done = threading.Event()
        if delay <= 0:
            self._show()  # from the start
        self._thread = threading.Thread(target=self._run, args=(delay,), daemon=True,
                                        name="hookguard-progress")
        self._thread.start()

    def _run(self, delay: float) -> None:
        if delay > 0:
            if self._done.wait(delay):
                return  # the run ended first: nothing was drawn, rich never imported
            self._show()
        while not self._done.wait(_REFRESH):
            with self.lock:
                if self.live is not None:
                    self.live.refresh()

    def _show(self) -> None:
        from rich.console import Console
        from rich.live import Live
        from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        console = Console(file=self.stream, force_terminal=True if self.force else None)
        if not (self.force or console.is_interactive):
            return
        self._bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                             TextColumn("{task.fields[count]}"), TimeElapsedColumn(),
                             console=console, auto_refresh=False)
        live = Live(console=console, get_renderable=self._render, auto_refresh=False,
                    transient=True, redirect_stdout=False, redirect_stderr=True)
        with self.lock:
            if self._done.is_set():
                return
            self.live = live
            live.start(refresh=True)

    def _render(self) -> RenderableType:
        """The display as the counters stand now (rich calls it one call at a time)."""
        bar = self._bar
        assert bar is not None
        if not self._tasks:  # rows in a fixed order, hidden until used
            self._tasks = {name: bar.add_task("", total=None, count="", visible=False)
                           for name in ("phase", *COUNTERS)}
        rows: list[tuple[str, str | None, int | None, int | None, bool]] = [
            ("phase", self.phase, None, None, self.phase is not None)]
        rows += [(name, label, self.counts[name], self.totals[name], name in self.started)
                 for name, label in COUNTERS.items()]
        for name, text, count, total, visible in rows:
            task = self._tasks[name]
            key = (text, self.generations.get(name))
            if self._drawn.get(name) != key:  # a new phase, or a counter restarted
                self._drawn[name] = key
                bar.reset(task)
            shown = "" if count is None else f"{count}/{total}" if total is not None else f"{count}"
            bar.update(task, description=text or "", total=total, completed=count or 0,
                       count=shown, visible=visible)
        return bar.get_renderable()

    def close(self) -> None:
        """Stop the display and clear it from the terminal."""
        self._done.set()
        self._thread.join()
        with self.lock:
            if self.live is not None:
                self.live.stop()
                self.live = None


_active: _Reporter | None = None


def start(counter: str, total: int | None = None) -> None:
    """(Re)start ``counter`` at 0 of ``total`` (None: not known)."""
    reporter = _active
    if reporter is None:
        return
    if counter not in COUNTERS:
        raise KeyError(counter)
    reporter.counts[counter] = 0
    reporter.totals[counter] = total
    reporter.started.add(counter)
    reporter.generations[counter] = reporter.generations.get(counter, 0) + 1


def advance(counter: str, n: int = 1) -> None:
    """``n`` more of ``counter`` done."""
    reporter = _active
    if reporter is not None:
        reporter.counts[counter] += n


def done(counter: str) -> None:
    """``counter`` is complete: a count without a total shows as a full bar."""
    reporter = _active
    if reporter is not None:
        reporter.totals[counter] = reporter.counts[counter]


@contextmanager
def phase(text: str) -> Iterator[None]:
    """Show ``text`` while the block runs: for work that has no count."""
    reporter = _active
    if reporter is None:
        yield
        return
    before, reporter.phase = reporter.phase, text
    try:
        yield
    finally:
        reporter.phase = before


def active() -> bool:
    """Whether a run is reporting progress (callers may skip bookkeeping when not)."""
    return _active is not None


def wanted(fmt: str = "auto", choice: bool | None = None) -> bool:
    """Whether a command shows progress: ``choice`` (``--progress``/``--no-progress``) when
    given; else only for a human format, outside CI, with stderr a terminal that is not dumb."""
    if choice is not None:
        return choice
    if fmt in MACHINE_FORMATS:
        return False
    if os.environ.get("CI", "").lower() not in ("", "0", "false"):
        return False
    if os.environ.get("TERM") == "dumb":
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed
        return False


@contextmanager
def shown(
    enabled: bool, *, stream: IO[str] | None = None, delay: float | None = None,
    force: bool = False,
) -> Iterator[None]:
    """Report progress while the block runs, on ``stream`` (stderr), once it has lasted
    ``delay`` seconds. ``force`` draws it even where rich sees no interactive terminal
    (``--progress``). Nested, or not ``enabled``: nothing."""
    global _active
    if not enabled or _active is not None:
        yield
        return
    if delay is None:
        delay = _delay_from_environment()
    reporter = _Reporter(stream or sys.stderr, delay, force)
    _active = reporter
    try:
        yield
    finally:
        _active = None
        reporter.close()


def _delay_from_environment() -> float:
    value = os.environ.get("HOOKGUARD_PROGRESS_DELAY", "")
    try:
        return max(0.0, float(value)) if value else DELAY
    except ValueError:
        return DELAY


# A process forked while the display thread writes to the terminal would inherit the stream's
# lock held for good (parsing forks worker processes): hold the display still across a fork.
_held: _Reporter | None = None


def _before_fork() -> None:
    global _held
    _held = _active
    if _held is not None:
        _held.lock.acquire()


def _after_fork_in_parent() -> None:
    global _held
    if _held is not None:
        _held.lock.release()
    _held = None


def _after_fork_in_child() -> None:
    global _active, _held
    reporter, _active, _held = _held, None, None
    if reporter is not None:
        reporter.lock.release()
        if reporter.live is not None:
            sys.stderr = sys.__stderr__  # not the display's proxy: the child draws nothing


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                        after_in_child=_after_fork_in_child)
