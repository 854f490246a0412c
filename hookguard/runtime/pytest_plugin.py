"""pytest plugin (``pytest11`` entry point ``hookguard``): enforce hook contracts during a test run.

``pytest --hookguard-contracts contracts/`` instruments the contracts' hooks in
``pytest_configure``, before test modules are imported, and keeps them instrumented for the whole
run. A violation fails the test (setup, call or teardown) in which a hook broke its contract, with
the report, even when the code under test swallowed the :class:`ContractViolation` (a test that
expects violations says so with ``@pytest.mark.hookguard_allow_violations``).
``--hookguard-mode warn`` reports a warning instead; ``--hookguard-values`` adds value checks.

The ``hookguard_contracts`` fixture gives tests the loaded contracts and ``verify``. The terminal
summary lists every violation: the test, the hook's class and ``file:line``, each failing field.

A contract that matched no class in the session (a wrong class or method name, or a module no
test imported) checked nothing: at the end of the session each one is an
``UnmatchedContractWarning`` in pytest's warnings summary, located at the contract's
``file:line``, as pytest reports an unknown marker, and the summary line counts them. With
``-W error::hookguard.runtime.enforcer.UnmatchedContractWarning`` they fail the session.

Importing this module imports neither torch nor libcst: it is loaded in every pytest session.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from hookguard.contracts import ContractError, HookContract, load_contracts
from hookguard.runtime.violations import ContractViolation, Violation

if TYPE_CHECKING:
    from hookguard.runtime.enforcer import Enforcer

__all__ = ["HookguardContracts"]


@dataclass
class _Session:
    contracts: list[HookContract]
    enforcer: Enforcer | None = None
    pending: list[ContractViolation] = field(default_factory=list)
    total: int = 0
    #: (test id, phase, violation) of every violation seen in a test, for the summary
    seen: list[tuple[str, str, ContractViolation]] = field(default_factory=list)
    #: messages of the contracts that matched no class in the session
    unmatched: list[str] = field(default_factory=list)
    #: those a warning filter turned into errors (shown in the hookguard summary instead)
    unmatched_errors: list[str] = field(default_factory=list)


_KEY = pytest.StashKey[_Session]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("hookguard", "hook contract enforcement (hookguard)")
    group.addoption(
        "--hookguard-contracts",
        action="store",
        metavar="PATH",
        default=None,
        help="enforce the hook contracts in PATH (a .toml file or a directory) for the whole run",
    )
    group.addoption(
        "--hookguard-mode",
        action="store",
        choices=("raise", "warn"),
        default="raise",
        help="raise: a violation fails the test (default); warn: issue a ContractWarning",
    )
    group.addoption(
        "--hookguard-values",
        action="store_true",
        default=False,
        help="also run value checks and invariants (one device-to-host transfer per hook call)",
    )
    parser.addini("hookguard_contracts", "default for --hookguard-contracts", default="")


def _contracts_path(config: pytest.Config) -> Path | None:
    option = config.getoption("hookguard_contracts")
    if option:
        return Path(config.invocation_params.dir, option)
    ini = str(config.getini("hookguard_contracts") or "")
    if ini:
        return Path(config.rootpath, ini)
    return None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "hookguard_allow_violations: a test that expects hook contract violations (e.g. with "
        "pytest.raises(ContractViolation)); they still raise, but are not failed a second time",
    )
    path = _contracts_path(config)
    contracts: list[HookContract] = []
    if path is not None:
        try:
            contracts = load_contracts(path)
        except ContractError as exc:
            raise pytest.UsageError(f"hookguard: {exc}") from None
    session = _Session(contracts)
    config.stash[_KEY] = session
    if contracts and _runtime_enabled():
        from hookguard.runtime.enforcer import Enforcer

        session.enforcer = Enforcer(
            contracts,
            mode=str(config.getoption("hookguard_mode")),
            values=bool(config.getoption("hookguard_values")),
            on_violation=session.pending.append,
            warn_unmatched=False,  # reported at the end of the session instead
        ).install()


def _runtime_enabled() -> bool:
    return os.environ.get("HOOKGUARD_RUNTIME", "1").strip().lower() not in (
        "0",
        "false",
        "off",
        "no",
    )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Warn about each contract that matched no class, inside pytest's warning capture (so it
    is in the warnings summary); a filter that makes it an error fails the session."""
    state = session.config.stash.get(_KEY, None)
    if state is None or state.enforcer is None:
        return
    from hookguard.runtime.enforcer import UnmatchedContractWarning, warn_unmatched

    unmatched = state.enforcer.unmatched()
    state.unmatched = [item.message() for item in unmatched]
    for item in unmatched:
        try:
            warn_unmatched([item])
        except UnmatchedContractWarning:  # -W error::...UnmatchedContractWarning
            state.unmatched_errors.append(item.message())
            if session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.stash.get(_KEY, None)
    if session is not None and session.enforcer is not None:
        session.enforcer.uninstall()
        session.enforcer = None


def pytest_report_header(config: pytest.Config) -> str | None:
    session = config.stash.get(_KEY, None)
    if session is None or not session.contracts:
        return None
    state = "enforced" if session.enforcer is not None else "loaded (HOOKGUARD_RUNTIME=0)"
    hooks = len(session.contracts)
    return f"hookguard: {hooks} hook contract{'s' if hooks != 1 else ''} {state}"


def _phase(item: pytest.Item, when: str) -> Generator[None, Any, Any]:
    session = item.config.stash.get(_KEY, None)
    if session is None or session.enforcer is None:
        return (yield)
    session.pending.clear()
    try:
        result = yield
    except BaseException:
        _attach(item, when, session)
        raise
    found = _attach(item, when, session)
    allowed = item.get_closest_marker("hookguard_allow_violations") is not None
    if found and session.enforcer.mode == "raise" and not allowed:
        # The code under test swallowed the violation: fail the test anyway.
        raise found[0]
    return result


def _attach(item: pytest.Item, when: str, session: _Session) -> list[ContractViolation]:
    found = list(session.pending)
    session.pending.clear()
    session.total += len(found)
    session.seen.extend((item.nodeid, when, error) for error in found)
    if found:
        item.add_report_section(when, "hookguard", "\n\n".join(e.plain for e in found))
    return found


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, Any, Any]:
    return (yield from _phase(item, "setup"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    return (yield from _phase(item, "call"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, Any, Any]:
    return (yield from _phase(item, "teardown"))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    session = config.stash.get(_KEY, None)
    if session is None or session.enforcer is None:
        return
    count = session.total
    if session.seen:
        terminalreporter.section("hookguard: hook contract violations")
        for line in summary_lines(session.seen):
            terminalreporter.write_line(line)
    if session.unmatched_errors:
        terminalreporter.section("hookguard: contracts that matched no class (errors)")
        for message in session.unmatched_errors:
            terminalreporter.write_line(f"ERROR {message}")
    line = f"hookguard: {count} hook contract violation{'s' if count != 1 else ''}"
    unmatched = len(session.unmatched)
    if unmatched:
        line += (f"; {unmatched} contract{'s' if unmatched != 1 else ''} matched no class "
                 "and checked nothing"
                 + ("" if session.unmatched_errors else " (see the warnings summary)"))
    terminalreporter.write_line(line)


def summary_lines(seen: list[tuple[str, str, ContractViolation]]) -> list[str]:
    """Per violation: the test and phase, the hook and its ``file:line``, each failing field."""
    lines: list[str] = []
    for nodeid, when, error in seen:
        phase = "" if when == "call" else f" ({when})"
        where = f" at {error.implementation}" if error.implementation else ""
        lines.append(f"{nodeid}{phase}: {error.cls_name}.{error.hook}{where}")
        lines.extend(f"    {violation.summary()}" for violation in error.violations)
    return lines


class HookguardContracts:
    """What the ``hookguard_contracts`` fixture gives a test."""

    def __init__(self, contracts: list[HookContract], root: Path) -> None:
        self.contracts = contracts
        self._root = root

    def load(self, path: str | os.PathLike[str]) -> list[HookContract]:
        """Load more contracts (relative paths from the rootdir) and use them from now on."""
        loaded = load_contracts(Path(self._root, path))
        self.contracts = [*self.contracts, *loaded]
        return loaded

    def verify(
        self, obj: object, *, values: bool = False, args: dict[str, Any] | None = None
    ) -> list[Violation]:
        """Violations of the contracts by ``obj`` (empty when it conforms); never raises."""
        from hookguard.runtime.enforcer import verify

        return verify(obj, self.contracts, values=values, args=args)

    def check(
        self, obj: object, *, values: bool = False, args: dict[str, Any] | None = None
    ) -> None:
        """Raise :class:`ContractViolation` when ``obj`` breaks a contract."""
        found = self.verify(obj, values=values, args=args)
        if found:
            cls = type(obj)
            raise ContractViolation(
                f"{cls.__module__}.{cls.__qualname__}",
                ", ".join(sorted({c.method for c in self.contracts})),
                found,
                implementation="(verified by the hookguard_contracts fixture)",
            )


@pytest.fixture
def hookguard_contracts(request: pytest.FixtureRequest) -> HookguardContracts:
    """The contracts given by --hookguard-contracts (or none), with ``verify`` and ``check``."""
    session = request.config.stash.get(_KEY, None)
    contracts = list(session.contracts) if session is not None else []
    return HookguardContracts(contracts, request.config.rootpath)
