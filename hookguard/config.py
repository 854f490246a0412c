"""``[tool.hookguard]`` in pyproject.toml: what to audit and how to judge it.

``audit`` reads the work tree's file (:func:`load_config`). ``check`` never does: it reads the
base revision's through git (:func:`parse_config` of the blob) and checks both trees with it,
and :func:`weakenings` says how the change's own file would check less than the merge base's
(see :mod:`hookguard.gate`)."""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]


class ConfigError(Exception):
    """A configuration problem: exit code 2. ``str()`` is ``path:line: message`` (``path:
    message`` when no line applies)."""

    def __init__(self, path: str, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}" if line > 0 else f"{path}: {message}")
        self.path, self.line, self.message = path, line, message


DEFAULT_EXCLUDES = (
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "__pycache__", "build", "dist",
    ".eggs", "node_modules", "site-packages", ".mypy_cache", ".ruff_cache", ".pytest_cache",
    ".hookguard_cache",
)


@dataclass(frozen=True)
class Config:
    roots: tuple[str, ...] = (".",)
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    select: tuple[str, ...] = ()  # empty: every rule
    ignore: tuple[str, ...] = ()
    severity: tuple[tuple[str, str], ...] = ()  # rule -> "error" | "warning"
    duck_protocols: tuple[str, ...] = ()  # method names looked up by duck typing
    contracts: tuple[str, ...] = ()  # contract files or directories
    history: bool = True
    structural: bool = False  # HG002 also warns about narrowed signatures no call proves
    # HG003 also warns about state a hook's base sets that no contract declares (inferred)
    inferred_state: bool = False
    # module -> the module it mirrors (a package generated from another at build time)
    module_aliases: tuple[tuple[str, str], ...] = ()
    max_file_size: int = 4 * 1024 * 1024
    # The pyproject.toml it came from, if any: where the checkout is, not a setting, so kept out
    # of repr() and the digests built from it (a cache restored into a clone elsewhere holds).
    source: str = field(default="", repr=False)

    def digest(self) -> str:
        """A hash of the settings that change what a file's record holds."""
        return hashlib.sha1(repr((self.max_file_size,)).encode()).hexdigest()[:12]

    def severity_for(self, rule: str, code: str, default: str) -> str:
        for key, value in self.severity:
            if key in (rule, code):
                return value
        return default

    def rule_enabled(self, rule: str, code: str) -> bool:
        if self.select and rule not in self.select and code not in self.select:
            return False
        return rule not in self.ignore and code not in self.ignore


_KEYS = {f.name.replace("_", "-"): f.name for f in fields(Config) if f.name != "source"}


def load_config(root: Path) -> Config:
    """Read ``[tool.hookguard]`` from ``root/pyproject.toml``; defaults when absent.

    The paths it names are checked against the checkout (:func:`check_paths`): one that names
    nothing is a :class:`ConfigError` at its line; a glob pattern that matches no Python file
    gets a note on stderr."""
    path = root / "pyproject.toml"
    if not path.is_file():
        return Config()
    text = path.read_text(encoding="utf-8", errors="replace")
    config = parse_config(text, str(path))
    for note in check_paths(config, root, text):
        if note not in _NOTED:  # once per process, however often the checkout is opened
            _NOTED.add(note)
            from hookguard.report.escape import printable

            print(f"hookguard: note: {printable(note)}", file=sys.stderr)
    return config


_NOTED: set[str] = set()


def check_paths(config: Config, root: Path, text: str = "") -> list[str]:
    """Check the paths ``config`` names against the checkout at ``root``; ``text`` is its
    pyproject.toml, for the lines. Returns notes; raises :class:`ConfigError` at the line of
    the first path that is an error.

    A typo must not pass as a clean run of nothing (``roots = ["scr"]``: 0 files, exit 0).
    Errors: a root, ``include`` or ``exclude`` path with a ``.`` or ``..`` part (``./src``:
    never matched, paths are relative to the root); a root that is not a file or folder of the
    checkout (or a file that is not Python; roots are paths, never patterns); a contract path
    that does not exist, or a folder holding no ``*.toml``; an ``include`` path (no glob
    characters) that does not exist; an ``exclude`` path that does not exist where a name close
    to it does (``vendord`` beside ``vendored``: "did you mean"). Notes: an ``exclude`` path
    that does not exist and resembles nothing (a folder a build makes, absent from a fresh
    clone: leaving out nothing hides nothing), and a glob pattern (``*``, ``?``, ``[``) of
    either setting that matches no Python file."""
    section = _Section(text)
    where = config.source or str(root / "pyproject.toml")

    def fail(key: str, value: str, message: str) -> ConfigError:
        return ConfigError(where, _value_line(section, key, value), message)

    for key, values in (("roots", config.roots), ("include", config.include),
                        ("exclude", config.exclude)):
        for value in values:
            name = value.strip("/")
            parts = name.split("/")
            if name not in ("", ".") and ("." in parts or ".." in parts):
                plain = "/".join(p for p in parts if p != ".")
                raise fail(key, value, f"{value!r} is never matched: paths here are relative to "
                                       "the checkout's root, without '.' or '..' parts"
                                       + (f" (write {plain!r})" if ".." not in parts else ""))
    for value in config.roots:
        name = value.strip("/")
        if name in ("", "."):
            continue
        target = root / name
        if _literal(name) and _exists(target):
            if not target.is_dir() and not name.endswith(".py"):
                raise fail("roots", value, f"root {value!r} is a file that is not Python: it "
                                           "matches nothing to check")
            continue
        why = (" (roots are folders or files of the checkout, not glob patterns)"
               if not _literal(name) else _nearby(root, name))
        raise fail("roots", value, f"root {value!r} matches nothing: no such file or folder "
                                   f"in the checkout{why}")
    for value in config.contracts:
        target = root / value
        if not _exists(target):
            raise fail("contracts", value, f"contract path {value!r} matches nothing: no such "
                                           f"file or folder{_nearby(root, value)}")
        if target.is_dir() and not any(p.is_file() for p in target.glob("*.toml")):
            raise fail("contracts", value, f"contract folder {value!r} holds no .toml file")
    notes: list[str] = []
    patterns: list[tuple[str, str]] = []
    for key, values in (("exclude", config.exclude), ("include", config.include)):
        for value in values:
            name = value.rstrip("/")
            if not name:
                continue
            if not _literal(name):
                patterns.append((key, value))
                continue
            if _exists(root / name):
                continue
            typo = _nearby(root, name)
            if key == "exclude" and not typo:  # leaves nothing out, so it hides nothing
                notes.append(f"{where}:{_value_line(section, key, value)}: exclude path "
                             f"{value!r} matches nothing: no such file or folder in the "
                             "checkout")
                continue
            raise fail(key, value, f"{key} path {value!r} matches nothing: no such file or "
                                   f"folder in the checkout{typo}")
    if not patterns:
        return notes
    from hookguard.model.sources import _match as matches

    files = _python_files(root)
    return notes + [f"{where}:{_value_line(section, key, value)}: {key} pattern {value!r} "
                    "matches no Python file in the checkout"
                    for key, value in patterns if not any(matches(p, value) for p in files)]


def _exists(path: Path) -> bool:
    return path.exists() or path.is_symlink()


def _nearby(root: Path, name: str) -> str:
    """``; did you mean 'src/pkg'?`` from the names beside where ``name`` would be."""
    import difflib

    path = Path(name)
    try:
        names = [p.name for p in (root / path).parent.iterdir()]
    except OSError:
        return ""
    close = difflib.get_close_matches(path.name, names, n=1, cutoff=0.6)
    if not close:
        return ""
    folder = path.parent.as_posix()
    return f"; did you mean {close[0] if folder == '.' else f'{folder}/{close[0]}'!r}?"


def _python_files(root: Path) -> list[str]:
    """The Python files of the checkout, as the audit lists them (``.gitignore`` honoured)."""
    from hookguard.git.repo import GitError, Repo
    from hookguard.model.sources import _walk

    repo = Repo.discover(root)
    if repo is not None and repo.root.resolve() == root.resolve():
        try:
            return [p for p in repo.ls_files(["."]) if p.endswith(".py")]
        except GitError:
            pass
    return _walk(root)


def _value_line(section: _Section, key: str, value: str) -> int:
    """The line of ``value`` in ``key``'s array (a multi-line one too), else of ``key``."""
    start = section.setting_line(key.replace("-", "_"))
    quoted = (f'"{value}"', f"'{value}'")
    for number in range(start, min(max(section.end, start), len(section.lines)) + 1):
        if any(q in section.lines[number - 1] for q in quoted):
            return number
    return start


def parse_config(text: str, path: str) -> Config:
    """``[tool.hookguard]`` of a pyproject.toml's ``text`` (defaults when it has none);
    ``path`` names the file in errors and is kept as :attr:`Config.source`.
    :class:`ConfigError` for invalid TOML or settings."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(path, _error_line(exc, text), f"invalid TOML: {exc}") from None
    except RecursionError:  # arrays nested thousands deep: the parser recurses
        raise ConfigError(path, 1, "invalid TOML: nested too deeply") from None
    tool = data.get("tool", {})
    table = tool.get("hookguard") if isinstance(tool, dict) else None
    if table is None:
        return Config()
    section = _Section(text)
    if not isinstance(table, dict):
        raise ConfigError(path, section.header, "[tool.hookguard] must be a table")
    values: dict[str, Any] = {"source": path}
    for key, value in table.items():
        name = _KEYS.get(key) or _KEYS.get(key.replace("_", "-"))
        line = section.line_of(key)
        if name is None:
            known = ", ".join(sorted(_KEYS))
            hint = _did_you_mean(key, list(_KEYS))
            raise ConfigError(path, line, f"unknown key {key!r}{hint} (known: {known})")
        values[name] = _coerce(name, value, path, line)
    return Config(**values)


@dataclass(frozen=True)
class Weakening:
    """A setting by which one configuration (a change's) checks less than another (its base's).

    ``key`` is the setting as spelled in ``[tool.hookguard]`` (``select``, ``max-file-size``),
    ``line`` where the weaker file sets it (its section's header when it no longer does, 1
    when it has no section), ``what`` what it turns off or narrows, in words."""

    key: str
    line: int
    what: str


# A rule's level, weakest first: "" is the rule's own level per finding (errors where proven).
_LEVELS = {"off": 0, "warning": 1, "": 2, "error": 3}


def weakenings(
    base: Config, head: Config, head_text: str = "", paths: Iterable[str] = ()
) -> list[Weakening]:
    """Every way ``head`` checks less than ``base``; empty when it only checks more or the same.

    Each setting is compared by what it does, not by how it is written: a rule is weakened when
    ``base`` runs it and ``head`` does not (``select``, ``ignore``, ``severity = "off"``), or
    runs it at a lower level (``error`` > the rule's own levels > ``warning``); the files are
    narrowed when a path ``base`` checks can fall outside ``head``'s ``roots``, ``include`` or
    ``exclude`` (decided from the patterns, so an exclusion that matches no file yet counts
    too; a literal pattern ``base`` already leaves out does not). Also contract files dropped,
    ``history``, ``structural`` or ``inferred-state`` turned off, ``max-file-size`` lowered,
    ``duck-protocols`` added; any change to ``module-aliases`` (it can move a class's bases
    either way), and any other setting that differs, count as weakening, because the gate
    cannot show they do not.

    ``head_text`` is the head's pyproject.toml (for the lines); ``paths`` the files of the
    trees compared, to name the ones a narrower file set no longer checks."""
    section = _Section(head_text)
    every = list(paths)
    found = [*_rule_weakenings(base, head), *_path_weakenings(base, head, every)]
    found += _contract_weakenings(base, head, every)
    if base.history and not head.history:
        found.append(("history", "turns off history evidence (hooks renamed or removed in "
                                 "the git history of a base class), which the base uses"))
    if base.structural and not head.structural:
        found.append(("structural", "turns off the structural drift warnings the base reports"))
    if base.inferred_state and not head.inferred_state:
        found.append(("inferred_state", "turns off the inferred contract-bypass warnings the "
                                        "base reports"))
    if head.max_file_size < base.max_file_size:
        found.append(("max_file_size", f"lowers the limit from {base.max_file_size} to "
                                       f"{head.max_file_size} bytes: larger files are no longer "
                                       "analysed"))
    ducks = [name for name in head.duck_protocols if name not in base.duck_protocols]
    if ducks:
        found.append(("duck_protocols", f"adds {_listed(ducks)}: overrides of "
                                        f"{'that name' if len(ducks) == 1 else 'those names'} "
                                        "are no longer reported as stale"))
    if base.module_aliases != head.module_aliases:
        old, new = dict(base.module_aliases), dict(head.module_aliases)
        moved = [f"{k} = {new[k]!r}" if k in new else f"{k} (removed)"
                 for k in sorted(old.keys() | new.keys()) if old.get(k) != new.get(k)]
        found.append(("module_aliases", f"changes how modules resolve ({', '.join(moved)}), "
                                        "which can hide findings"))
    compared = {"roots", "include", "exclude", "select", "ignore", "severity", "contracts",
                "history", "structural", "inferred_state", "max_file_size", "duck_protocols",
                "module_aliases",
                "source"}
    for setting in fields(Config):  # a setting added later and not compared here
        if setting.name not in compared and (
                getattr(base, setting.name) != getattr(head, setting.name)):
            found.append((setting.name, "changes a setting the gate cannot compare with the "
                                        "base's"))
    return [Weakening(name.replace("_", "-"), section.setting_line(name), what)
            for name, what in found]


def _level(config: Config, code: str, name: str) -> str | None:
    """The level ``config`` runs a rule at ("" for the rule's own), None when it is off."""
    if not config.rule_enabled(name, code):
        return None
    level = config.severity_for(name, code, "")
    return None if level == "off" else level


def _rule_weakenings(base: Config, head: Config) -> list[tuple[str, str]]:
    from hookguard.rules import ALL_RULES

    off: dict[str, list[str]] = {}
    lowered: list[str] = []
    words = {"error": "error", "warning": "warning", "": "the rule's own levels"}
    for rule in ALL_RULES:
        before, after = _level(base, rule.code, rule.name), _level(head, rule.code, rule.name)
        label = f"{rule.code} ({rule.name})"
        if before is None:
            continue  # the base does not run it: nothing to weaken
        if after is None:
            if head.select and rule.code not in head.select and rule.name not in head.select:
                key = "select"
            elif rule.code in head.ignore or rule.name in head.ignore:
                key = "ignore"
            else:
                key = "severity"
            off.setdefault(key, []).append(label)
        elif _LEVELS[after] < _LEVELS[before]:
            lowered.append(f"{label} from {words[before]} to {words[after]}")
    found = [(key, f"turns off {', '.join(labels)}, which the base runs")
             for key, labels in off.items()]
    if lowered:
        found.append(("severity", "lowers " + "; ".join(lowered)))
    return found


def _path_weakenings(base: Config, head: Config, paths: list[str]) -> list[tuple[str, str]]:
    """Narrower ``roots``, ``include`` or ``exclude``. A pattern is read as
    :func:`hookguard.model.sources.PathFilter` reads it; one without glob characters stands
    for a folder or file and everything under it, so whether ``base`` already leaves it out
    can be decided without a file (a glob pattern is taken as new coverage lost)."""
    from hookguard.model.sources import PathFilter
    from hookguard.model.sources import _match as matches

    python = [p for p in paths if p.endswith(".py")]
    checked = PathFilter(base, python)

    def lost(narrower_config: Config) -> str:
        """The files ``base`` checks and ``narrower_config`` does not, named."""
        narrower = PathFilter(narrower_config, python)
        gone = [p for p in python if checked.accepts(p) and not narrower.accepts(p)]
        if not gone:
            return ""
        named = ", ".join(gone[:3]) + (", ..." if len(gone) > 3 else "")
        return f" ({len(gone)} file{'s' * (len(gone) != 1)} no longer checked: {named})"

    base_roots, head_roots = _roots(base), _roots(head)
    found: list[tuple[str, str]] = []
    if head_roots:
        outside = [r for r in base_roots or ("",) if not any(_under(r, h) for h in head_roots)]
        if outside:
            narrowed = (f"narrows the roots to {_listed(head_roots)}, leaving out "
                        f"{_listed(outside)}, which the base checks" if base_roots else
                        f"narrows the roots from the whole checkout to {_listed(head_roots)}")
            found.append(("roots", narrowed + lost(replace(base, roots=head.roots))))

    def left_out(pattern: str) -> bool:
        """Whether ``base`` checks nothing under ``pattern`` (a literal path) already."""
        if not _literal(pattern):
            return False
        if any(matches(pattern, q) for q in base.exclude):
            return True
        return bool(base_roots) and not any(
            _under(pattern, r) or _under(r, pattern) for r in base_roots)

    had = {q.rstrip("/") for q in base.exclude}
    added = [p for p in head.exclude if p.rstrip("/") not in had and not left_out(p.rstrip("/"))]
    if added:
        found.append(("exclude", f"adds {_listed(added)}, which the base checks"
                                 + lost(replace(base, exclude=head.exclude))))
    if head.include:
        def covered(pattern: str) -> bool:
            return _literal(pattern) and any(matches(pattern, h) for h in head.include)

        kept = {h.rstrip("/") for h in head.include}
        gone = lost(replace(base, include=head.include))
        if not base.include:
            if not (base_roots and all(covered(r) for r in base_roots)):
                found.append(("include", f"limits the files to {_listed(head.include)}, where "
                                         "the base checks every file under its roots" + gone))
        else:
            dropped = [q for q in base.include
                       if q.rstrip("/") not in kept and not covered(q.rstrip("/"))]
            if dropped:
                found.append(("include", f"drops {_listed(dropped)}, which the base checks"
                                         + gone))
    return found


def _contract_weakenings(base: Config, head: Config, paths: list[str]) -> list[tuple[str, str]]:
    kept = {_contract_path(c) for c in head.contracts}
    dropped = [c for c in base.contracts if _contract_path(c) not in kept]
    if dropped:
        return [("contracts", f"drops {_listed(dropped)}, which the base checks against")]
    default = any(p.startswith("contracts/") and p.count("/") == 1 and p.endswith(".toml")
                  for p in paths)
    if not base.contracts and head.contracts and "contracts" not in kept and default:
        return [("contracts", f"lists {_listed(head.contracts)} instead of the contracts/ "
                              "folder the base reads by default")]
    return []


def _roots(config: Config) -> tuple[str, ...]:
    """The roots as :class:`~hookguard.model.sources.PathFilter` reads them; () for all."""
    return tuple(r.strip("/") for r in config.roots if r.strip("/") not in ("", "."))


def _under(path: str, folder: str) -> bool:
    return bool(folder) and (path == folder or path.startswith(folder + "/"))


def _literal(pattern: str) -> bool:
    return bool(pattern) and not any(c in pattern for c in "*?[")


def _contract_path(path: str) -> str:
    return path.removeprefix("./").rstrip("/")


def _listed(items: Iterable[str]) -> str:
    return ", ".join(repr(i) for i in items)


def canonical_rule(ident: str) -> str | None:
    """The code (``HG001``) of the rule named by its code or name, in any case; None if none."""
    from hookguard.rules import ALL_RULES

    for rule in ALL_RULES:
        if ident.upper() == rule.code or ident.lower() == rule.name:
            return rule.code
    return None


def unknown_rule(ident: str) -> str:
    """``unknown rule 'HG0001'; did you mean 'HG001'? (known: HG001/stale-override, ...)``."""
    from hookguard.rules import ALL_RULES

    choices = [r.code for r in ALL_RULES] + [r.name for r in ALL_RULES]
    known = ", ".join(f"{r.code}/{r.name}" for r in ALL_RULES)
    return f"unknown rule {ident!r}{_did_you_mean(ident, choices)} (known: {known})"


def canonical_rules(idents: Iterable[str], path: str = "", line: int = 0) -> tuple[str, ...]:
    """Each rule as its code. An unknown name is an error, never a rule that silently runs no
    check: :class:`ConfigError` at ``path:line`` in a config file, else :class:`UsageError`."""
    codes: list[str] = []
    for ident in idents:
        code = canonical_rule(ident)
        if code is None:
            if path:
                raise ConfigError(path, line, unknown_rule(ident))
            from hookguard.errors import UsageError

            raise UsageError(unknown_rule(ident))
        codes.append(code)
    return tuple(dict.fromkeys(codes))


def _did_you_mean(word: str, choices: list[str]) -> str:
    import difflib

    folded = {c.lower(): c for c in choices}
    close = difflib.get_close_matches(word.lower(), list(folded), n=1, cutoff=0.6)
    return f"; did you mean {folded[close[0]]!r}?" if close else ""


def _error_line(exc: Exception, text: str = "") -> int:
    """The line of a TOML syntax error: ``lineno`` (3.14+) or the message's ``(at line N``;
    the last line for one ``at end of document``."""
    line = getattr(exc, "lineno", None)
    if isinstance(line, int) and line > 0:
        return line
    found = re.search(r"at line (\d+)", str(exc))
    if found:
        return int(found.group(1))
    return max(len(text.splitlines()), 1) if "end of document" in str(exc) else 1


class _Section:
    """Where ``[tool.hookguard]`` and its keys are in the text, for error lines.

    Keys are looked for only inside the section (another tool's ``select`` on line 220 is not
    ours), then as a sub-table header (``[tool.hookguard.severity]``); the section's header
    line when neither is found.
    """

    _HEADER = re.compile(r"^\s*\[\s*tool\s*\.\s*hookguard\s*\]\s*(#.*)?$")
    _ANY_HEADER = re.compile(r"^\s*\[")

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.header = 1
        self.end = len(self.lines)
        for number, line in enumerate(self.lines, start=1):
            if self._HEADER.match(line):
                self.header = number
                break
        else:  # ``tool.hookguard = {...}`` or ``[tool]`` + ``hookguard = {...}``
            for number, line in enumerate(self.lines, start=1):
                if re.match(r"^\s*(tool\s*\.\s*)?hookguard\s*=", line):
                    self.header = number
                    break
            self.end = self.header
            return
        for number in range(self.header + 1, len(self.lines) + 1):
            if self._ANY_HEADER.match(self.lines[number - 1]):
                self.end = number - 1
                break

    def setting_line(self, name: str) -> int:
        """The line of a setting by its field name (``max_file_size``), spelled either way."""
        for key in dict.fromkeys((name.replace("_", "-"), name)):
            line = self.line_of(key)
            if line != self.header:
                return line
        return self.header

    def line_of(self, key: str) -> int:
        quoted = re.escape(key)
        pattern = re.compile(rf"^\s*(?:{quoted}|\"{quoted}\"|'{quoted}')\s*(?:=|\.)")
        for number in range(self.header, min(self.end, len(self.lines)) + 1):
            if pattern.match(self.lines[number - 1]):
                return number
        sub = re.compile(rf"^\s*\[\s*tool\s*\.\s*hookguard\s*\.\s*[\"']?{quoted}[\"']?\s*\]")
        for number, line in enumerate(self.lines, start=1):
            if sub.match(line):
                return number
        return self.header


def _coerce(name: str, value: Any, path: str, line: int) -> Any:
    if name in ("history", "structural", "inferred_state"):
        if not isinstance(value, bool):
            raise ConfigError(path, line, f"'{name}' must be true or false")
        return value
    if name == "max_file_size":
        if not isinstance(value, int) or value <= 0:
            raise ConfigError(path, line, "'max-file-size' must be a positive integer (bytes)")
        return value
    if name == "severity":
        if not isinstance(value, dict) or any(
            v not in ("error", "warning", "off") for v in value.values()
        ):
            raise ConfigError(path, line, "'severity' maps rule names to error|warning|off")
        levels = {canonical_rules([rule], path, line)[0]: level for rule, level in value.items()}
        return tuple(sorted(levels.items()))
    if name == "module_aliases":
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and all(
                p.isidentifier() for p in f"{k}.{v}".split("."))
            for k, v in value.items()
        ):
            raise ConfigError(path, line, "'module-aliases' maps module names to module names "
                              '(pytorch_lightning = "lightning.pytorch")')
        return tuple(sorted(value.items()))
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(path, line, f"'{name.replace('_', '-')}' must be a list of strings")
    if name in ("select", "ignore"):
        return canonical_rules(value, path, line)
    return tuple(value)


__all__ = [
    "DEFAULT_EXCLUDES",
    "Config",
    "ConfigError",
    "Weakening",
    "canonical_rule",
    "canonical_rules",
    "check_paths",
    "load_config",
    "parse_config",
    "unknown_rule",
    "weakenings",
]
