"""Which files make up a checkout, and how to read them: from disk, a commit, or the index."""

from __future__ import annotations

import errno
import fnmatch
import hashlib
import os
import re
from collections.abc import Iterable, Iterator, Sequence
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


#: Folders of the default excludes that are build outputs only when they are no package: a
#: ``build/`` holding an ``__init__.py`` is source (conan's ``conan/tools/build``: first contact,
#: round 21).
BUILD_OUTPUTS = frozenset({"build", "dist"})


class PathFilter:
    """Which files of a listing are audited. ``listing`` (every path of the checkout or tree)
    tells the packages apart from the build outputs (:data:`BUILD_OUTPUTS`)."""

    def __init__(self, config: Config, listing: Iterable[str] = ()) -> None:
        self.include = config.include
        self.exclude = config.exclude
        self.roots = tuple(r.strip("/") for r in config.roots if r.strip("/") not in ("", "."))
        self.packages = frozenset(
            p[: -len("/__init__.py")] for p in listing if p.endswith("/__init__.py")
            and p.rsplit("/", 2)[-2] in BUILD_OUTPUTS)

    def accepts(self, path: str) -> bool:
        if not path.endswith(".py"):
            return False
        parts = path.split("/")
        for i, part in enumerate(parts[:-1]):
            if part in BUILD_OUTPUTS:
                if "/".join(parts[: i + 1]) not in self.packages:
                    return False
            elif part in DEFAULT_EXCLUDES or part.endswith(".egg-info"):
                return False
        if self.roots and not any(path == r or path.startswith(r + "/") for r in self.roots):
            return False
        if self.include and not any(_match(path, g) for g in self.include):
            return False
        return not any(_match(path, g) for g in self.exclude)


def _build_folders(path: str) -> Iterator[str]:
    """The folders of ``path`` named like a build output (``a/build`` of ``a/build/x.py``)."""
    parts = path.split("/")
    for i, part in enumerate(parts[:-1]):
        if part in BUILD_OUTPUTS:
            yield "/".join(parts[: i + 1])


def _match(path: str, pattern: str) -> bool:
    pattern = pattern.rstrip("/")
    return (
        fnmatch.fnmatch(path, pattern)
        or path.startswith(pattern + "/")
        or fnmatch.fnmatch(path, pattern + "/*")
    )


def _walk(root: Path, checkout: Path | None = None) -> list[str]:
    """Every ``.py`` file under ``root`` outside virtualenvs and tool dirs, relative to it.

    A link to a folder is followed when it leads to a folder inside ``checkout`` (default:
    ``root``), out of its git directory, that is not one the walk is already in (a loop): the
    files under it are listed under the link's path, as Python imports them. A link that leads
    elsewhere is not followed; a link to a file is listed as a file (the loader reads it only
    when it stays in the checkout)."""
    top = os.path.realpath(root)
    home = os.fspath(checkout if checkout is not None else root)
    found: list[str] = []
    # (folder relative to root, the real paths of the folders it lies in, itself last)
    stack: list[tuple[str, tuple[str, ...]]] = [("", (top,))]
    while stack:
        rel, chain = stack.pop()
        current = os.path.join(root, rel) if rel else os.fspath(root)
        try:
            with os.scandir(current) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            continue
        below: list[tuple[str, tuple[str, ...]]] = []
        for entry in entries:
            name = entry.name
            path = f"{rel}/{name}" if rel else name
            try:
                if entry.is_dir(follow_symlinks=False):
                    real = os.path.join(chain[-1], name)
                elif entry.is_symlink() and entry.is_dir():
                    linked = _linked_folder(home, entry.path, chain)
                    if linked is None:
                        continue
                    real = linked
                else:
                    if name.endswith(".py"):
                        found.append(path)
                    continue
            except OSError:
                continue
            if (
                (name in DEFAULT_EXCLUDES and not (
                    name in BUILD_OUTPUTS
                    and os.path.exists(os.path.join(entry.path, "__init__.py"))))
                or name.endswith(".egg-info")
                or os.path.exists(os.path.join(entry.path, "pyvenv.cfg"))
            ):
                continue
            below.append((path, (*chain, real)))
        stack.extend(reversed(below))
    return sorted(found)


def _linked_folder(checkout: str, link: str, chain: Sequence[str]) -> str | None:
    """The real path of the folder ``link`` leads to, when a walk whose folders have the real
    paths ``chain`` follows it: inside the checkout (:func:`inside`), and none of ``chain``
    (which would loop); None otherwise."""
    try:
        real = inside(checkout, link)
    except OSError:
        return None
    if real in chain or not os.path.isdir(real):
        return None
    return real


class WorktreeSnapshot:
    """The files of a checkout as they are on disk (``.gitignore`` honoured in git checkouts)."""

    def __init__(self, root: Path, repo: Repo | None, config: Config) -> None:
        self.root = root
        self.repo = repo
        self.config = config

    def paths(self, within: Sequence[str] = ()) -> list[str]:
        if self.repo is not None:
            listed = self._listed(within)
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
                    listed.extend(p if prefix == "." else f"{prefix}/{p}"
                                  for p in _walk(base, self.root))
        # (a file named alone, as pre-commit does, lists no ``__init__.py`` beside it)
        inits = {f"{folder}/__init__.py" for p in listed for folder in _build_folders(p)
                 if (self.root / folder / "__init__.py").is_file()}
        filter_ = PathFilter(self.config, [*listed, *inits])
        return [p for p in listed if filter_.accepts(p) and not _is_link_loop(self.root / p)]

    def _listed(self, within: Sequence[str]) -> list[str]:
        """The ``.py`` files git lists (tracked, and untracked but not ignored), and those
        under each link to a folder inside the checkout, under the link's path.

        git lists a link as one entry, whatever it leads to. One that leads to a folder of the
        checkout (:func:`inside`) stands for the files git lists in that folder (its own
        ``.gitignore`` honoured there), links among them followed in turn, except a link to a
        folder the path already passes through (a loop)."""
        assert self.repo is not None
        files, links = _git_listing(self.repo, within)
        if not links:
            return files
        root = os.fspath(self.root)
        top = os.path.realpath(root)
        result = list(files)
        listings: dict[str, tuple[list[str], list[str]]] = {}
        # (the link's path, the real paths of the folders it lies in)
        pending = [(link, _real_chain(root, top, link)) for link in links]
        while pending:
            link, chain = pending.pop()
            target = _linked_folder(root, os.path.join(root, link), chain)
            if target is None:
                continue
            rel = Path(os.path.relpath(target, top)).as_posix()
            if rel not in listings:
                covered = not within or any(
                    w in ("", ".") or rel == w.strip("/") or rel.startswith(w.strip("/") + "/")
                    for w in within
                )
                listings[rel] = (
                    _under(files, links, rel) if covered
                    else _under(*_git_listing(self.repo, [rel]), rel)
                )
            inner_files, inner_links = listings[rel]
            result.extend(f"{link}/{p}" for p in inner_files)
            for inner in inner_links:
                # the folders between the link and the inner one are real ones of the target
                steps = inner.split("/")[:-1]
                inner_chain = (*chain, target)
                for i in range(len(steps)):
                    inner_chain = (*inner_chain, os.path.join(target, *steps[:i + 1]))
                pending.append((f"{link}/{inner}", inner_chain))
        return sorted(set(result))


_STAGE_ENTRY = re.compile(r"[0-7]{6} [0-9a-f]{40}(?:[0-9a-f]{24})? [0-3]\t")


def _git_listing(repo: Repo, within: Sequence[str]) -> tuple[list[str], list[str]]:
    """The ``.py`` files git lists under ``within`` (tracked, and untracked but not ignored),
    and the links among its entries that do not end in ``.py``: tracked ones by their mode
    (``120000``), untracked ones by a look at the disk (few: untracked files are)."""
    out = repo.git(
        "ls-files", "-z", "--stage", "--cached", "--others", "--exclude-standard", "--",
        *([f"{w}" for w in within] or ["."]),
    )
    files: set[str] = set()
    links: set[str] = set()
    for item in out.decode("utf-8", "surrogateescape").split("\0"):
        if not item:
            continue
        staged = _STAGE_ENTRY.match(item)  # ``<mode> <object> <stage>\t<path>``
        path = item[staged.end():] if staged else item  # an untracked entry: only its name,
        # which may itself hold a tab (its shape, not a tab, tells the two apart)
        if path.endswith(".py"):
            files.add(path)
        elif (item.startswith("120000 ") if staged else os.path.islink(repo.root / path)):
            links.add(path)
    return sorted(files), sorted(links)


def _under(files: Sequence[str], links: Sequence[str], folder: str) -> tuple[list[str], list[str]]:
    """``files`` and ``links`` in ``folder``, relative to it."""
    prefix = folder + "/"
    return (
        [p[len(prefix):] for p in files if p.startswith(prefix)],
        [p[len(prefix):] for p in links if p.startswith(prefix)],
    )


def _real_chain(root: str, top: str, path: str) -> tuple[str, ...]:
    """The real paths of the folders ``path`` lies in, the checkout's own first."""
    steps = path.split("/")[:-1]
    return (top, *(os.path.realpath(os.path.join(root, *steps[:i + 1]))
                   for i in range(len(steps))))


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


def audited_text(root: Path, path: str, content_key: str) -> str | None:
    """The text of the checkout's file at ``path`` when its bytes are still those its record
    was built from (their blob id is ``content_key``) and they are UTF-8; else None. A link
    leading out of the checkout is not read (:func:`inside`)."""
    try:
        data = Path(inside(os.fspath(root), os.path.join(root, path))).read_bytes()
    except OSError:
        return None
    if blob_sha(data) != content_key:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


__all__ = [
    "BUILD_OUTPUTS",
    "OutsideLink",
    "PathFilter",
    "SourceFile",
    "WorktreeSnapshot",
    "audited_text",
    "blob_sha",
    "inside",
    "linked_folders",
    "module_names",
    "through_link",
]
