"""``[tool.hookguard]`` in pyproject.toml: what to audit and how to judge it."""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]


class ConfigError(Exception):
    """A configuration problem: exit code 2. ``str()`` is ``path:line: message``."""

    def __init__(self, path: str, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}")
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
    max_file_size: int = 4 * 1024 * 1024
    source: str = ""  # the pyproject.toml it came from, if any

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
        line = getattr(exc, "lineno", 0) or _line_of(text, "")
        raise ConfigError(str(path), line, f"invalid TOML: {exc}") from None
    table = data.get("tool", {}).get("hookguard")
    if table is None:
        return Config()
    if not isinstance(table, dict):
        raise ConfigError(str(path), _line_of(text, "[tool.hookguard]"), "must be a table")
    values: dict[str, Any] = {"source": str(path)}
    for key, value in table.items():
        name = _KEYS.get(key) or _KEYS.get(key.replace("_", "-"))
        line = _line_of(text, key)
        if name is None:
            known = ", ".join(sorted(_KEYS))
            raise ConfigError(str(path), line, f"unknown key {key!r} (known: {known})")
        values[name] = _coerce(name, value, str(path), line)
    return Config(**values)


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
        return tuple(sorted(value.items()))
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(path, line, f"'{name.replace('_', '-')}' must be a list of strings")
    return tuple(value)


def _line_of(text: str, needle: str) -> int:
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if needle and (stripped.startswith(needle) or stripped.startswith(needle + " ")):
            return number
    return 1


__all__ = ["DEFAULT_EXCLUDES", "Config", "ConfigError", "load_config"]
