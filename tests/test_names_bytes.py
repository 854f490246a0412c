"""Issue 24, item 4: file names are bytes, everywhere; and a committed link never shows what
lies outside the checkout.

A committed file may be named with any byte but NUL: a newline (which splits a ``git cat-file
--batch`` request in two, and lets a name forge an answer: ``x\\n<id> blob 10``), a space,
bytes that are not UTF-8, control characters. Every such name is read, printed escaped in every
format, and never shifts the answer of another file. Real repositories, real command lines.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from hookguard.git.repo import BlobReader, GitError, Repo, _batch_header, _resolve_paths
from hookguard.model.sources import blob_sha
from tests.conftest import GitRepo

BASE_BEFORE = "class Base:\n    def run(self):\n        self.setup()\n\n    def setup(self):\n" \
    "        pass\n"
SUB = "from pkg.base import Base\n\n\nclass Sub(Base):\n    def setup(self):\n" \
    "        print('sub')\n"
# A file of its own whose hook is renamed in the same commit: its history is read with the base's.
WEIRD_BEFORE = "class W:\n    def go(self):\n        self.old()\n\n    def old(self):\n" \
    "        pass\n\n\nclass V(W):\n    def old(self):\n        pass\n"


def cli(cwd: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """hookguard's exit code, stdout and stderr: both must be valid UTF-8 text (a raw
    undecodable byte of a file name in the output fails here)."""
    proc = subprocess.run([sys.executable, "-m", "hookguard", *args], cwd=cwd,
                          capture_output=True, check=False, timeout=300,
                          env={**os.environ, **(env or {})})
    out, err = proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")
    assert "Traceback" not in err, err
    return proc.returncode, out, err


def _renamed_hooks(repo: GitRepo, weird: str, first: str | None = None) -> None:
    """``Base.setup`` and, in the file named ``weird``, ``W.old`` renamed in one commit;
    ``Sub.setup`` and ``V.old`` left behind: two HG001 errors found from history. ``first``:
    the name ``weird`` had before that commit (a rename: git is then asked for ``first`` in
    the commit, and answers that it is missing)."""
    repo.write({"pkg/__init__.py": "", "pkg/base.py": BASE_BEFORE, "pkg/sub.py": SUB})
    _write(repo.root / (first or weird), WEIRD_BEFORE)
    repo.commit("init")
    if first:
        repo.git("mv", first, weird)
    repo.write({"pkg/base.py": BASE_BEFORE.replace("setup", "prepare")})
    _write(repo.root / weird, WEIRD_BEFORE.replace("self.old()", "self.new()")
           .replace("def old", "def new", 1))
    repo.commit("rename the hooks")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _findings(cwd: Path, *args: str) -> tuple[int, set[tuple[str, int, str]], list[str]]:
    code, out, _ = cli(cwd, *args, "--format", "json")
    document = json.loads(out)
    return (code, {(f["path"], f["line"], f["code"]) for f in document["findings"]},
            [e["path"] for e in document["errors"]])


def _forging_name() -> str:
    """A name whose "missing" answer reads, split at its spaces, as a found object of 10 bytes:
    the id of a real blob (the first base.py)."""
    return f"x\n{blob_sha(BASE_BEFORE.encode())} blob 10\ny.py"


@pytest.mark.parametrize("kind", ["head-path", "forged-answer", "renamed-from-spaces"])
def test_a_name_with_a_newline_shifts_no_answer(
    git_repo: Callable[..., GitRepo], kind: str
) -> None:
    """Case 4.1: ``a\\nHEAD:pkg/base.py`` split ``git cat-file --batch``'s request in two, every
    answer after it went to the wrong name, and both errors disappeared (exit 0), also with
    --no-cache; ``x\\n<id> blob 10`` made git's "missing" read as 10 bytes of content, and so
    did the old name of a file renamed from ``w blob 4``."""
    repo = git_repo()
    weird = {"head-path": "a\nHEAD:pkg/base.py", "forged-answer": _forging_name(),
             "renamed-from-spaces": "pkg/w.py"}[kind]
    _renamed_hooks(repo, weird, "pkg/w blob 4" if kind == "renamed-from-spaces" else None)
    expected = {("pkg/sub.py", 5, "HG001"), (weird, 10, "HG001")}
    for args in (["audit", "--no-cache"], ["audit"], ["audit"]):  # cold, then warm twice
        code, found, errors = _findings(repo.root, *args)
        assert (code, found, errors) == (1, expected, []), args
    if kind == "head-path":  # one line each, the newline shown as its escape
        summary = repo.root.parent / "summary.md"
        code, out, _ = cli(repo.root, "audit", "--format", "github",
                           env={"GITHUB_STEP_SUMMARY": str(summary)})
        assert "::error file=a%0AHEAD%3Apkg/base.py,line=10," in out  # (@actions/core's)
        assert "`a\\x0aHEAD:pkg/base.py:10`" in summary.read_text()
        code, out, _ = cli(repo.root, "audit", "--format", "plain")
        assert any(line.startswith("a\\x0aHEAD:pkg/base.py:10:5: HG001 [error] V.old")
                   for line in out.splitlines())
        page = repo.root.parent / "report.html"
        code, _, err = cli(repo.root, "report", "--html", str(page))
        assert code == 1, err
        assert "<code>a\\x0aHEAD:pkg/base.py:10</code>" in page.read_text()
    if kind == "renamed-from-spaces":  # (the base tree has no W: no .py file held it)
        expected.remove((weird, 10, "HG001"))
    code, found, errors = _findings(repo.root, "check", "--base", "HEAD~1", "--no-cache")
    assert (code, found, errors) == (1, expected, [])


def test_check_reads_every_name_of_a_range(git_repo: Callable[..., GitRepo]) -> None:
    """``check --base`` over a change that adds files named with a newline, a forged answer
    and an undecodable byte beside the broken override: the same error. (The gate reads its
    trees' blobs by object id: this held before the change too; it guards the gate's reads.)"""
    repo = git_repo()
    repo.commit("init", {"pkg/__init__.py": "", "pkg/base.py": BASE_BEFORE,
                         "pkg/sub.py": SUB})
    names = ["a\nHEAD:pkg/base.py", _forging_name(), "pkg/caf\udce9.py"]
    for name in names:
        _write(repo.root / name, WEIRD_BEFORE)
    repo.write({"pkg/base.py": BASE_BEFORE.replace("setup", "prepare")})
    repo.commit("rename and add")
    code, found, errors = _findings(repo.root, "check", "--base", "HEAD~1", "--no-cache")
    assert (code, found, errors) == (1, {("pkg/sub.py", 5, "HG001")}, [])


NON_UTF8 = "pkg/caf\udce9.py"  # b"pkg/caf\xe9.py": surrogateescape, as os.fsdecode reads it
CONTROL = "pkg/esc\x1b[31m\u202e.py"


def _odd_names_repo(repo: GitRepo) -> None:
    """A stale override in a file whose name is not UTF-8 (read from history by name: was
    the class added by the commit that renamed the hook?), a file named with control
    characters that does not parse, and an ordinary stale override beside them."""
    repo.write({"pkg/__init__.py": "", "pkg/base.py": BASE_BEFORE, "pkg/sub.py": SUB})
    _write(repo.root / NON_UTF8, SUB)
    _write(repo.root / CONTROL, "def broken(:\n")
    repo.commit("init")
    repo.commit("rename the hook", {"pkg/base.py": BASE_BEFORE.replace("setup", "prepare")})


def test_names_that_are_not_utf8_or_hold_control_characters_in_every_format(
    git_repo: Callable[..., GitRepo], tmp_path: Path
) -> None:
    """Case 4.2: ``caf\\xe9.py`` (committed, on disk) gave a traceback in ``audit`` and
    ``report --html``. Now: read, reported, and printed escaped in every format."""
    repo = git_repo()
    _odd_names_repo(repo)
    root = repo.root
    code, found, errors = _findings(root, "audit", "--no-cache")
    assert code == 1
    assert found == {("pkg/sub.py", 5, "HG001"), (NON_UTF8, 5, "HG001")}
    assert errors == [CONTROL]
    shown_odd, shown_control = r"pkg/caf\xe9.py", r"pkg/esc\x1b[31m\u202e.py"

    code, out, err = cli(root, "audit", "--no-cache", "--format", "plain")
    assert code == 1
    assert f"{shown_odd}:5:5: HG001 [error] Sub.setup" in out
    assert "pkg/sub.py:5:5: HG001 [error] Sub.setup" in out
    assert f"{shown_control}:1: input problem: syntax error" in out
    assert "\x1b" not in out + err and "\u202e" not in out + err

    code, out, _ = cli(root, "audit", "--no-cache", "--format", "rich")
    assert code == 1 and shown_odd in out and shown_control in out
    assert "\x1b" not in out and "\u202e" not in out

    code, out, _ = cli(root, "audit", "--no-cache", "--format", "github")
    assert code == 1
    assert f"::error file={shown_odd},line=5,col=5," in out
    assert "\x1b" not in out and "\u202e" not in out

    code, out, _ = cli(root, "audit", "--no-cache", "--format", "sarif")
    assert code == 1
    sarif = json.loads(out)
    uris = {loc["physicalLocation"]["artifactLocation"]["uri"]
            for result in sarif["runs"][0]["results"] for loc in result["locations"]}
    assert uris == {"pkg/sub.py", "pkg/caf%E9.py"}

    page = tmp_path / "report.html"
    code, _, err = cli(root, "report", "--no-cache", "--html", str(page))
    assert code == 1, err
    html = page.read_bytes().decode("utf-8")  # valid UTF-8: no raw byte of a name
    assert f"<code>{shown_odd}:5</code>" in html
    assert "\x1b" not in html and "\u202e" not in html
    assert "print(&#x27;sub&#x27;)" in html or "print('sub')" in html  # its lines, quoted

    code, found, errors = _findings(root, "check", "--base", "HEAD~1", "--no-cache")
    assert (code, found) == (1, {("pkg/sub.py", 5, "HG001"), (NON_UTF8, 5, "HG001")})


def test_a_hook_whose_own_file_name_is_not_utf8(git_repo: Callable[..., GitRepo]) -> None:
    """The base itself in a file named with an undecodable byte: its history is walked and
    its versions read by that name."""
    repo = git_repo()
    one_file = BASE_BEFORE + "\n\n" + SUB.split("\n\n\n", 1)[1]
    repo.commit("init", {"pkg/__init__.py": "", NON_UTF8: one_file})
    repo.commit("rename the hook", {NON_UTF8: one_file.replace("setup", "prepare", 2)})
    assert _findings(repo.root, "audit", "--no-cache") == (1, {(NON_UTF8, 10, "HG001")}, [])


def test_a_link_leading_out_of_the_checkout_is_never_read(
    git_repo: Callable[..., GitRepo], tmp_path: Path
) -> None:
    """Case 4.3: a committed ``.py`` link to a file outside the checkout was read by ``audit``,
    and the HTML report quoted its lines. Now it is an input problem naming the path, and the
    run goes on; links that stay in the checkout are read; one into ``.git`` is not."""
    outside = tmp_path / "outside"
    secret = "TOKEN = 'outside-secret'\nfrom pkg.base import Base\n\n\nclass Leak(Base):\n" \
        "    def setup(self):\n        return TOKEN\n"
    _write(outside / "secret.py", secret)
    _write(outside / "folder" / "mod.py", secret)
    repo = git_repo()
    repo.write({"pkg/__init__.py": "", "pkg/base.py": BASE_BEFORE, "pkg/sub.py": SUB,
                "lib/impl.py": SUB.replace("Sub", "Impl"), "pkg/folder/mod.py": "x = 1\n"})
    os.symlink(outside / "secret.py", repo.root / "pkg/leak.py")  # absolute
    os.symlink(os.path.relpath(outside / "secret.py", repo.root / "pkg"),
               repo.root / "pkg/relative.py")
    os.symlink("../lib/impl.py", repo.root / "pkg/alias.py")  # inside: read
    os.symlink("../.git/config", repo.root / "pkg/config.py")  # the git directory: not read
    repo.commit("init")
    repo.commit("rename", {"pkg/base.py": BASE_BEFORE.replace("setup", "prepare")})
    # A folder the index holds, replaced on disk by a link to a folder outside.
    (repo.root / "pkg/folder/mod.py").unlink()
    (repo.root / "pkg/folder").rmdir()
    os.symlink(outside / "folder", repo.root / "pkg/folder")
    refused = ["pkg/config.py", "pkg/folder/mod.py", "pkg/leak.py", "pkg/relative.py"]
    for args in (["audit", "--no-cache"], ["audit"], ["audit"]):
        code, found, errors = _findings(repo.root, *args)
        assert code == 1
        assert found == {("pkg/sub.py", 5, "HG001"), ("lib/impl.py", 5, "HG001"),
                         ("pkg/alias.py", 5, "HG001")}, args
        assert errors == refused
    code, out, _ = cli(repo.root, "audit", "--no-cache", "--format", "plain")
    assert "pkg/leak.py:0: input problem: cannot read file: a symbolic link that leads " \
        "outside the checkout" in out
    assert "outside-secret" not in out and "Leak" not in out
    page = tmp_path / "report.html"
    code, _, err = cli(repo.root, "report", "--no-cache", "--html", str(page))
    assert code == 1, err
    html = page.read_text()
    assert "outside-secret" not in html and "TOKEN" not in html and "Leak" not in html
    assert "pkg/leak.py" in html  # named as a file not analysed


def test_cat_file_answers_are_read_against_the_names_asked(
    git_repo: Callable[..., GitRepo]
) -> None:
    """The reader's own protocol, through both readers: names with newlines, spaces, an
    undecodable byte, names that are missing, and a name shaped like a found object's answer;
    every answer stays with its name."""
    repo = git_repo()
    files = {"a\nHEAD:b.py": "one\n", "b.py": "two\n", "sp ace blob 3.py": "three\n",
             NON_UTF8: "four\n"}
    for name, text in files.items():
        _write(repo.root / name, text)
    repo.commit("names")
    forged = f"x\n{blob_sha(b'two' + bytes([10]))} blob 4\ny.py"
    names = [f"HEAD:{n}" for n in files] + [f"HEAD:{forged}", "HEAD:nope\nb.py", "0" * 40,
                                            "HEAD:sp ace missing.py", "HEAD:b.py"]
    want = [t.encode() for t in files.values()] + [None, None, None, None, b"two\n"]
    git = Repo(repo.root)
    ids, blobs = git.read_blobs_by_id(names)
    assert [blobs[ids[n]] if n in ids else None for n in names] == want
    assert [data for _, data, _ in git.each_blob(names, max_size=100)] == want
    reader = BlobReader(repo.root)
    try:
        for _ in range(2):  # one process, read twice: still in step
            assert [data for _, data, _ in reader.read(names, 100)] == want
    finally:
        reader.close()


def test_older_git_without_nul_names_gets_object_ids(git_repo: Callable[..., GitRepo]) -> None:
    """Where ``cat-file --batch`` takes no ``-z`` (git before 2.38), a name with a newline is
    found in its revision's ``ls-tree -z`` and sent as its object id; a name git would answer
    "missing" to, over lines, is still read as one answer."""
    repo = git_repo()
    _write(repo.root / "a\nb.py", "one\n")
    _write(repo.root / "c.py", "two\n")
    repo.commit("names")
    ids = _resolve_paths(repo.root, [b"HEAD:a\nb.py", b"HEAD:gone\n.py", b"no colon\n",
                                     b"-HEAD:a\nb.py"])
    assert ids == {b"HEAD:a\nb.py": blob_sha(b"one\n").encode()}
    # git's own answers, newline-separated, read against the names asked.
    asked = [b"HEAD:c.py", b"HEAD:sp ace 3 missing", ids[b"HEAD:a\nb.py"]]
    out = subprocess.run(["git", "cat-file", "--batch"], cwd=repo.root, check=True,
                         input=b"".join(n + b"\n" for n in asked), capture_output=True).stdout
    from io import BytesIO

    stream = BytesIO(out)
    found = []
    for name in asked:
        header = _batch_header(stream, name)
        found.append(header and stream.read(header[1] + 1))
    assert found == [b"two\n\n", None, b"one\n\n"]
    # A "missing" answer over two lines, whose first line looks like a found object's.
    shaped = f"{blob_sha(b'two' + bytes([10]))} blob 4\nrest".encode()
    stream = BytesIO(shaped + b" missing\n")
    assert _batch_header(stream, shaped) is None and stream.read() == b""
    with pytest.raises(GitError):
        _batch_header(BytesIO(b"garbage\n"), b"HEAD:c.py")
    with pytest.raises(GitError):
        _batch_header(BytesIO(b""), b"HEAD:c.py")
    assert re.fullmatch(r"[0-9a-f]{40}", ids[b"HEAD:a\nb.py"].decode())
