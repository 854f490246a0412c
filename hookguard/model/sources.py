"""Which files make up a checkout, and how to read them: from disk, a commit, or the index."""

from __future__ import annotations

import errno
import fnmatch
import hashlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from hookguard.config import DEFAULT_EXCLUDES, Config
from hookguard.git.repo import Repo


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: str  # posix, relative to the snapshot root
    module: str
    is_package: bool
    key: str  # content key: the git blob sha of the bytes
    size: int


def blob_sha(data: bytes) -> str:
    """The git blob id of ``data``: one content key for disk files and git objects alike."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def module_names(paths: Iterable[str]) -> dict[str, tuple[str, bool]]:
    """Map each ``.py`` path to (dotted module, is_package).

    A module's name starts at the highest directory reached through ``__init__.py`` files, which
    handles flat layouts, src-layouts and several roots in one checkout alike.
    """
    path_list = list(paths)
    packages = {p.rsplit("/", 1)[0] if "/" in p else "" for p in path_list if _is_init(p)}
    result: dict[str, tuple[str, bool]] = {}
    for path in path_list:
        parts = path[:-3].split("/")
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        first = len(parts) - 1
        while first > 0 and "/".join(parts[:first]) in packages:
            first -= 1
        result[path] = (".".join(parts[max(first, 0):]), is_package)
    return result


def _is_init(path: str) -> bool:
    return path == "__init__.py" or path.endswith("/__init__.py")


class PathFilter:
    def __init__(self, config: Config) -> None:
        self.include = config.include
        self.exclude = config.exclude
        self.roots = tuple(r.strip("/") for r in config.roots if r.strip("/") not in ("", "."))

    def accepts(self, path: str) -> bool:
        if not path.endswith(".py"):
            return False
        parts = path.split("/")
        if any(part in DEFAULT_EXCLUDES or part.endswith(".egg-info") for part in parts[:-1]):
            return False
        if self.roots and not any(path == r or path.startswith(r + "/") for r in self.roots):
            return False
        if self.include and not any(_match(path, g) for g in self.include):
            return False
        return not any(_match(path, g) for g in self.exclude)


def _match(path: str, pattern: str) -> bool:
    pattern = pattern.rstrip("/")
    return (
        fnmatch.fnmatch(path, pattern)
        or path.startswith(pattern + "/")
        or fnmatch.fnmatch(path, pattern + "/*")
    )


def _walk(root: Path) -> list[str]:
    """Every file under ``root`` outside virtualenvs and tool dirs, never following links."""
    found: list[str] = []
    for current, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(
            d for d in dirs
            if d not in DEFAULT_EXCLUDES
            and not d.endswith(".egg-info")
            and not (Path(current, d) / "pyvenv.cfg").exists()
        )
        rel = os.path.relpath(current, root)
        for name in files:
            if name.endswith(".py"):
                found.append(name if rel == "." else f"{Path(rel).as_posix()}/{name}")
    return sorted(found)


class WorktreeSnapshot:
    """The files of a checkout as they are on disk (``.gitignore`` honoured in git checkouts)."""

    def __init__(self, root: Path, repo: Repo | None, config: Config) -> None:
        self.root = root
        self.repo = repo
        self.config = config

    def paths(self, within: Sequence[str] = ()) -> list[str]:
        filter_ = PathFilter(self.config)
        if self.repo is not None:
            listed = self.repo.ls_files([f"{w}" for w in within] or ["."])
            listed = [p for p in listed if p.endswith(".py")]
            top_venvs = {p.split("/")[0] for p in listed if "/" in p}
            venvs = {d for d in top_venvs if (self.root / d / "pyvenv.cfg").exists()}
            listed = [p for p in listed if p.split("/")[0] not in venvs]
        else:
            listed = []
            for w in within or ["."]:
                base = (self.root / w)
                if base.is_file():
                    listed.append(Path(os.path.relpath(base, self.root)).as_posix())
                else:
                    prefix = Path(os.path.relpath(base, self.root)).as_posix()
                    listed.extend(p if prefix == "." else f"{prefix}/{p}" for p in _walk(base))
        return [p for p in listed if filter_.accepts(p) and not _is_link_loop(self.root / p)]


class OutsideLink(OSError):
    """A file of the checkout that is a symbolic link (or lies in a linked folder) leading
    out of the checkout, or into its git directory: never read."""

    def __init__(self) -> None:
        super().__init__(errno.EPERM, "a symbolic link that leads outside the checkout")


def inside(root: str, abspath: str) -> str:
    """The real path of ``abspath`` (every link followed) when it stays in the checkout at
    ``root`` and out of its git directory; :class:`OutsideLink` otherwise. A link committed
    to a checkout could otherwise show what it points at (a file of the machine that runs
    the audit, the credentials a CI checkout keeps in ``.git/config``) in the report."""
    real = os.path.realpath(abspath)
    try:
        rel = os.path.relpath(real, os.path.realpath(root))
    except ValueError:  # (another drive)
        raise OutsideLink() from None
    first = rel.split(os.sep, 1)[0]
    if rel == os.curdir or first == os.pardir or first.lower() == ".git" or os.path.isabs(rel):
        raise OutsideLink()
    return real


def linked_folders(root: str, paths: Iterable[str]) -> set[str]:
    """The folders of ``paths`` that are symbolic links (each folder looked at once)."""
    folders: set[str] = set()
    for path in paths:
        folder = path.rpartition("/")[0]
        while folder and folder not in folders:
            folders.add(folder)
            folder = folder.rpartition("/")[0]
    return {f for f in folders if os.path.islink(os.path.join(root, f))}


def through_link(path: str, linked: set[str]) -> bool:
    """Whether ``path`` lies in one of the ``linked`` folders (:func:`linked_folders`)."""
    folder = path.rpartition("/")[0]
    while folder:
        if folder in linked:
            return True
        folder = folder.rpartition("/")[0]
    return False


def _is_link_loop(path: Path) -> bool:
    try:
        return not path.is_file()
    except OSError:  # ELOOP and friends: the file cannot be read, so it is no source
        return True


__all__ = [
    "OutsideLink",
    "PathFilter",
    "SourceFile",
    "WorktreeSnapshot",
    "blob_sha",
    "inside",
    "linked_folders",
    "module_names",
    "through_link",
]
