"""``[tool.hookguard]`` in pyproject.toml: what to audit and how to judge it."""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
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
    """Read ``[tool.hookguard]`` from ``root/pyproject.toml``; defaults when absent."""
    path = root / "pyproject.toml"
    if not path.is_file():
        return Config()
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(path), _error_line(exc), f"invalid TOML: {exc}") from None
    tool = data.get("tool", {})
    table = tool.get("hookguard") if isinstance(tool, dict) else None
    if table is None:
        return Config()
    section = _Section(text)
    if not isinstance(table, dict):
        raise ConfigError(str(path), section.header, "[tool.hookguard] must be a table")
    values: dict[str, Any] = {"source": str(path)}
    for key, value in table.items():
        name = _KEYS.get(key) or _KEYS.get(key.replace("_", "-"))
        line = section.line_of(key)
        if name is None:
            known = ", ".join(sorted(_KEYS))
            hint = _did_you_mean(key, list(_KEYS))
            raise ConfigError(str(path), line, f"unknown key {key!r}{hint} (known: {known})")
        values[name] = _coerce(name, value, str(path), line)
    return Config(**values)


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


def _error_line(exc: Exception) -> int:
    """The line of a TOML syntax error: ``lineno`` (3.14+) or the message's ``(at line N``."""
    line = getattr(exc, "lineno", None)
    if isinstance(line, int) and line > 0:
        return line
    found = re.search(r"at line (\d+)", str(exc))
    return int(found.group(1)) if found else 1


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

    def line_of(self, key: str) -> int:
        quoted = re.escape(key)
        pattern = re.compile(rf"^\s*(?:{quoted}|\"{quoted}\"|'{quoted}')\s*(?:=|\.)")
        for number in range(self.header, self.end + 1):
            if pattern.match(self.lines[number - 1]):
                return number
        sub = re.compile(rf"^\s*\[\s*tool\s*\.\s*hookguard\s*\.\s*[\"']?{quoted}[\"']?\s*\]")
        for number, line in enumerate(self.lines, start=1):
            if sub.match(line):
                return number
        return self.header


def _coerce(name: str, value: Any, path: str, line: int) -> Any:
    if name in ("history", "structural"):
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
    "canonical_rule",
    "canonical_rules",
    "load_config",
    "unknown_rule",
]
