"""Shared test helpers: real files, real git repositories, real parses."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType

import pytest

from hookguard.engine import Options, audit
from hookguard.findings import Finding

pytest_plugins = ["pytester"]  # the runtime plugin tests drive a real pytest

ROOT = Path(__file__).resolve().parents[1]


def load_fixture_builder() -> ModuleType:
    name = "hookguard_fixture_build"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "fixtures" / "repos" / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": "/nonexistent-home-for-git",
}


class GitRepo:
    """A throwaway repository: ``write`` files, ``commit`` them, ``git`` anything."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str) -> str:
        env = {**os.environ, **GIT_ENV}
        return subprocess.run(
            ["git", "-c", "commit.gpgsign=false", *args],
            cwd=self.root, env=env, check=True, capture_output=True, text=True,
        ).stdout

    def write(self, files: Mapping[str, str]) -> None:
        for path, text in files.items():
            target = self.root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(textwrap.dedent(text).lstrip("\n"))

    def commit(self, message: str, files: Mapping[str, str] | None = None) -> str:
        if files:
            self.write(files)
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)
        return self.git("rev-parse", "HEAD").strip()


@pytest.fixture
def git_repo(tmp_path: Path) -> Callable[..., GitRepo]:
    def make(name: str = "repo") -> GitRepo:
        return GitRepo(tmp_path / name)

    return make


def write_tree(root: Path, files: Mapping[str, str]) -> Path:
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip("\n"))
    return root


def forge_cache_file(file: Path, body: bytes, key: bytes) -> None:
    """Rewrite the cache file ``file`` with ``body``, its own stamp, and a MAC made with ``key``
    (the real key: what a forger who had the secret could write; any other: a forgery)."""
    import hashlib
    import hmac

    import msgspec

    from hookguard.model.cache import _MAGIC

    data = file.read_bytes()
    start = len(_MAGIC) + 4
    end = start + int.from_bytes(data[len(_MAGIC):start], "big")
    stamp = msgspec.msgpack.decode(data[start:end])[0]
    mac = hmac.new(key, stamp.encode() + b"\0" + body, hashlib.sha256).digest()
    header = msgspec.msgpack.encode([stamp, mac, len(body)])
    file.write_bytes(_MAGIC + len(header).to_bytes(4, "big") + header + body)


@pytest.fixture
def private_key_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache's signing key and folders in the test's own directory, never the user's."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))


def audited(repo: GitRepo) -> dict[str, Finding]:
    """A cold full audit of ``repo`` (history read), by ``"<code> <symbol>"``."""
    result = audit([repo.root], Options(use_cache=False, workers=1))
    return {f"{f.code} {f.symbol}": f for f in result.findings}
