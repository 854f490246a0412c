"""Progress on long runs: drawn on a terminal's stderr and cleared when done; nothing anywhere
else (piped, in CI, on a dumb terminal, for a machine format, with ``--no-progress``).

The command-line tests run hookguard with stderr on a real pseudo-terminal. The display's delay
(``HOOKGUARD_PROGRESS_DELAY``) is 0 there, so it draws from the start whatever the machine's
speed; the delay itself is tested at the API level."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from hookguard import progress
from hookguard.engine import Options, audit
from tests.conftest import GitRepo, load_fixture_builder

build = load_fixture_builder()

# A terminal in a known state: no CI, a real TERM, a fixed width, the display from the start.
TERMINAL_ENV = {"TERM": "xterm-256color", "COLUMNS": "160", "HOOKGUARD_PROGRESS_DELAY": "0"}


@pytest.fixture(scope="module")
def incident(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build.build_kvcache_repo(tmp_path_factory.mktemp("progress") / "kv")


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "NO_COLOR", "FORCE_COLOR")}
    return {**env, **TERMINAL_ENV, **extra}


def run(cwd: Path, *args: str, terminal: bool = True, **env: str) -> tuple[int, bytes, bytes]:
    """hookguard's exit code, stdout (a pipe) and stderr: a pseudo-terminal, or a pipe."""
    command = [sys.executable, "-m", "hookguard", *args]
    if not terminal:
        proc = subprocess.run(command, cwd=cwd, capture_output=True, env=environment(**env),
                              stdin=subprocess.DEVNULL, check=False)
        return proc.returncode, proc.stdout, proc.stderr
    master, slave = os.openpty()
    chunks: list[bytes] = []

    def read() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the last writer closed the terminal
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=read)
    try:
        with subprocess.Popen(command, cwd=cwd, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=slave,
                              env=environment(**env)) as proc:
            os.close(slave)
            slave = -1
            reader.start()
            stdout, _ = proc.communicate(timeout=120)
        reader.join(timeout=30)
    finally:
        if slave >= 0:
            os.close(slave)
        os.close(master)
    return proc.returncode, stdout, b"".join(chunks)


def screen(data: bytes) -> list[str]:
    """What a terminal shows after ``data``: enough of a VT100 for rich's live display (an
    escape sequence it does not know fails the test)."""
    lines, row, col = [""], 0, 0
    for token in re.findall(rb"\x1b\[[0-9;?]*[A-Za-z]|\r|\n|[^\x1b\r\n]+", data):
        if token == b"\r":
            col = 0
        elif token == b"\n":
            row += 1
            lines.extend([""] * (row + 1 - len(lines)))
        elif token.startswith(b"\x1b["):
            body, final = token[2:-1].decode(), token[-1:]
            if final == b"m" or token in (b"\x1b[?25l", b"\x1b[?25h"):  # colour; the cursor
                continue
            if final == b"A":
                row = max(0, row - int(body or 1))
            elif final == b"K" and body == "2":
                lines[row] = ""
            else:
                raise AssertionError(f"unexpected escape sequence {token!r}")
        else:
            text = token.decode()
            line = lines[row].ljust(col)
            lines[row] = line[:col] + text + line[col + len(text):]
            col += len(text)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def untimed(data: bytes) -> bytes:
    """``data`` without the run's duration (``(0.31s)``), which differs between two runs."""
    return re.sub(rb"\(\d+\.\d\ds\)", b"(TIME)", data)


def test_progress_shows_on_a_terminal_then_is_cleared(incident: Path) -> None:
    code, out, err = run(incident, "audit", "--no-cache")
    ref_code, ref_out, ref_err = run(incident, "audit", "--no-cache", "--no-progress")
    assert code == ref_code == 1
    assert out == ref_out and b"HG001" in out  # the report: byte for byte the same
    shown = err.decode()
    parsed = re.findall(r"files parsed\s.*?(\d+)/(\d+)", shown)
    assert parsed and parsed[-1][0] == parsed[-1][1] != "0"  # the last frame: all parsed
    assert re.search(r"classes checked\s.*?(\d+)/\1", shown)
    # the incident's history is walked for the stale override's evidence
    walked = re.findall(r"commits walked\s.*?(\d+)/(\d+)", shown)
    assert walked and walked[-1][0] == walked[-1][1] != "0"
    assert b"files parsed" not in ref_err and b"\x1b[" not in ref_err
    # Cleared: the terminal ends up showing exactly what it shows without progress.
    assert screen(untimed(err)) == screen(untimed(ref_err))
    assert len(screen(untimed(err))) == 1 and "hookguard: " in screen(err)[0]


@pytest.mark.parametrize(
    ("args", "env", "terminal"),
    [
        ((), {}, False),  # stderr piped
        ((), {"CI": "true"}, True),
        ((), {"TERM": "dumb"}, True),
        (("--format", "json"), {}, True),
        (("--format", "sarif"), {}, True),
        (("--format", "github"), {}, True),
        (("--no-progress",), {}, True),
        ((), {"HOOKGUARD_PROGRESS_DELAY": "60"}, True),  # a run shorter than the delay
    ],
    ids=["piped", "ci", "dumb-terminal", "json", "sarif", "github", "no-progress", "short-run"],
)
def test_nothing_extra_elsewhere(
    incident: Path, args: tuple[str, ...], env: dict[str, str], terminal: bool
) -> None:
    code, out, err = run(incident, "audit", "--no-cache", *args, terminal=terminal, **env)
    ref_code, ref_out, ref_err = run(incident, "audit", "--no-cache", "--no-progress", *args,
                                     terminal=terminal, **env)
    assert code == ref_code == 1
    assert untimed(out) == untimed(ref_out) and out.strip()
    assert untimed(err) == untimed(ref_err)  # the summary line at most, and nothing else
    assert b"files parsed" not in err and b"\x1b[" not in err


def test_check_shows_progress_on_a_terminal(incident: Path) -> None:
    base = subprocess.run(["git", "rev-list", "--max-parents=0", "HEAD"], cwd=incident,
                          capture_output=True, text=True, check=True).stdout.split()[0]
    code, out, err = run(incident, "check", "--base", base, "--no-cache")
    ref_code, ref_out, ref_err = run(incident, "check", "--base", base, "--no-cache",
                                     "--no-progress")
    assert code == ref_code
    assert out == ref_out
    assert b"files parsed" in err and b"files parsed" not in ref_err
    assert screen(untimed(err)) == screen(untimed(ref_err))


def test_forced_on_when_piped(incident: Path) -> None:
    code, out, err = run(incident, "audit", "--no-cache", "--progress", terminal=False)
    ref_code, ref_out, _ = run(incident, "audit", "--no-cache", terminal=False)
    assert code == ref_code and out == ref_out
    assert b"files parsed" in err and b"\x1b[" in err


def test_parser_processes_report_every_file(tmp_path: Path) -> None:
    """Parsing in worker processes (forked while the display runs) counts every file."""
    repo = GitRepo(tmp_path / "many")
    files = {f"pkg/m{i:03}.py": f"class C{i}:\n    def hook(self, x): ...\n" for i in range(130)}
    repo.commit("many files", {"pkg/__init__.py": "", **files})
    code, _, err = run(repo.root, "audit", "--no-cache", "--jobs", "2")
    assert code == 0
    assert re.findall(rb"files parsed\s.*?(\d+/\d+)", err)[-1] == b"131/131"
    assert screen(untimed(err)) == ["hookguard: All checks passed! 131 files, 130 classes (TIME)"]


@pytest.mark.parametrize("rule", ["stale-override", "signature-drift", "contract-bypass"])
def test_counts_are_the_run_s(incident: Path, rule: str) -> None:
    """The last frame shows the files this run parsed and the classes the rule checked."""
    stream = io.StringIO()
    with progress.shown(True, stream=stream, delay=0, force=True):
        result = audit([incident], Options(use_cache=False, reuse_results=False,
                                           select=(rule,)))
    assert result.project is not None and not progress.active()
    shown = stream.getvalue()
    parsed = result.stats.parsed
    classes = len(result.project.classes)
    assert parsed > 0 and classes > 0
    assert re.findall(r"files parsed\s.*?(\d+/\d+)", shown)[-1] == f"{parsed}/{parsed}"
    assert re.findall(r"classes checked\s.*?(\d+/\d+)", shown)[-1] == f"{classes}/{classes}"


def test_nothing_drawn_before_the_delay() -> None:
    stream = io.StringIO()
    with progress.shown(True, stream=stream, delay=60, force=True):
        assert progress.active()
        progress.start("files", total=3)
        progress.advance("files", 3)
    assert stream.getvalue() == "" and not progress.active()


def test_drawn_once_the_delay_has_passed() -> None:
    stream = io.StringIO()
    began = time.monotonic()
    first = None
    with progress.shown(True, stream=stream, delay=0.3, force=True):
        progress.start("commits")
        while time.monotonic() - began < 30 and first is None:
            progress.advance("commits")
            if stream.getvalue():
                first = time.monotonic() - began
            time.sleep(0.01)
        progress.done("commits")
    assert first is not None and first >= 0.3
    assert "commits walked" in stream.getvalue()


def test_inactive_calls_do_nothing() -> None:
    assert not progress.active()
    progress.start("files", total=10)
    progress.advance("files")
    progress.done("files")
    with progress.phase("reading history"):
        pass
    with progress.shown(False):
        assert not progress.active()


def test_unknown_counter_is_an_error() -> None:
    with progress.shown(True, stream=io.StringIO(), delay=60, force=True), \
            pytest.raises(KeyError):
        progress.start("lines")


def test_wanted_follows_the_flag_and_the_format(monkeypatch: pytest.MonkeyPatch) -> None:
    assert progress.wanted("json", True) and not progress.wanted("auto", False)
    for fmt in ("json", "sarif", "github"):
        assert not progress.wanted(fmt)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # not a terminal
    assert not progress.wanted("auto")
