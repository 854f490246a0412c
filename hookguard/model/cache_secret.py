"""The secret that signs the cache: a cache file is trusted only if it carries a MAC made with it.

Records, history answers and results are keyed by what they were derived from, which anyone
can compute (a git blob id, a commit id). A file holding a record under a real key can only be
trusted if hookguard itself wrote it, so every cache file is signed (HMAC-SHA256) with a secret
the checkout cannot hold:

- ``HOOKGUARD_CACHE_KEY``, when set and not empty: a secret the CI workflow passes in (GitHub:
  a repository secret; pull requests from forks get none, so a cache they restore is never
  verified, and is rebuilt);
- otherwise a per-user key file, ``$XDG_CACHE_HOME/hookguard/cache-key`` (``~/.cache/...``):
  32 random bytes made on first use, readable by its owner only.

A key file that lies inside the checkout being audited (``HOME`` pointed into it) is refused:
the checkout could have carried it. When no key can be had (an unwritable home), the cache is
not used, with a note: a run without a cache is slower, never different.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import stat
import tempfile
from pathlib import Path

KEY_ENV = "HOOKGUARD_CACHE_KEY"
_KEY_BYTES = 32


class NoCacheKey(Exception):
    """No secret to sign the cache with; the message says why."""


def key_file() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).absolute() / "hookguard" / "cache-key"


def cache_key(checkout: Path | None) -> bytes:
    """The secret for this run (see the module docstring); ``checkout`` is the root audited."""
    passed = os.environ.get(KEY_ENV, "")
    if passed:
        return hashlib.sha256(b"hookguard cache key\0" + passed.encode("utf-8",
                                                                      "surrogateescape")).digest()
    file = key_file()
    if checkout is not None and file.resolve().is_relative_to(checkout.resolve()):
        raise NoCacheKey(f"{file}: the cache key lies inside the checkout")
    try:
        return _read_key(file)
    except FileNotFoundError:
        pass
    except OSError:  # a damaged key (a full disk left it empty): replaced by a new one
        pass
    try:
        return _make_key(file)
    except OSError as exc:
        raise NoCacheKey(f"{file}: cannot make the cache key ({exc.strerror or exc})") from None


def _read_key(file: Path) -> bytes:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(file, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size != _KEY_BYTES:
            raise OSError(0, "not a key")
        key = os.read(fd, _KEY_BYTES + 1)
    finally:
        os.close(fd)
    if len(key) != _KEY_BYTES:
        raise OSError(0, "not a key")
    return key


def _make_key(file: Path) -> bytes:
    """A new key, written whole before it is visible (temp file, then rename)."""
    file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    key = secrets.token_bytes(_KEY_BYTES)
    fd, tmp = tempfile.mkstemp(dir=file.parent, prefix=".cache-key-")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(key)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(tmp, file)  # first writer wins: concurrent runs agree on one key
        except FileExistsError:
            try:
                return _read_key(file)
            except OSError:
                os.replace(tmp, file)  # a damaged key: replaced
                return key
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    return key
