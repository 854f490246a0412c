"""What a failed runtime check reports. Imports neither torch nor rich at module import time."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "KINDS",
    "ContractViolation",
    "ContractWarning",
    "Violation",
    "describe_process",
    "format_report",
]

#: Every ``Violation.kind``.
KINDS = (
    "missing",
    "type",
    "dtype",
    "device",
    "shape",
    "pinned",
    "contiguous",
    "value",
    "invariant",
    "stale-override",
)


@dataclass(frozen=True)
class Violation:
    """One way the object's state breaks the contract.

    ``expected`` and ``actual`` name the failing property only (``"int32"`` / ``"int64"``);
    ``expected_meta`` and ``actual_meta`` describe the whole field in compact metadata form
    (``int32[4, 2] cpu pinned``) for the report.
    """

    field: str
    kind: str
    expected: str
    actual: str
    expected_meta: str = ""
    actual_meta: str = ""
    #: Attribute that made the field required (``[[hook.when]] attr``), or ``None``.
    condition: str | None = None
    #: Extra words for the report (the stale override's location, the replacing hook).
    detail: str = ""

    def summary(self) -> str:
        where = f" (required while {self.condition} is truthy)" if self.condition else ""
        if self.kind == "stale-override":
            return f"{self.field}: {self.detail}"
        if self.kind == "missing":
            return f"{self.field}: missing, expected {self.expected_meta or self.expected}{where}"
        if self.kind in ("value", "invariant"):
            return (
                f"{self.field}: {self.kind} check failed: expected {self.expected}, "
                f"got {self.actual}{where}"
            )
        expected = self.expected_meta or self.expected
        actual = self.actual_meta or self.actual
        kind = f"shape {self.expected}" if self.kind == "shape" else self.kind
        return f"{self.field}: expected {expected}, got {actual} ({kind}){where}"


class ContractWarning(UserWarning):
    """Issued instead of raising when enforcement runs with ``mode="warn"``."""


def _header(
    cls_name: str, hook: str, implementation: str, contract: str, process: str
) -> list[str]:
    lines = [f"hook contract violated: {cls_name}.{hook}"]
    if implementation:
        lines.append(f"  implementation that ran: {implementation}")
    if contract:
        lines.append(f"  contract: {contract}")
    if process:
        lines.append(f"  process: {process}")
    return lines


def describe_process(
    rank: int | None, local_rank: int | None, world_size: int | None, host: str
) -> str:
    """``rank 1 of 2 (local rank 1), host h1``; empty outside a multi-process job."""
    if rank is None:
        return ""
    size = f" of {world_size}" if world_size is not None else ""
    local = f" (local rank {local_rank})" if local_rank is not None else ""
    return f"rank {rank}{size}{local}" + (f", host {host}" if host else "")


def format_report(
    cls_name: str,
    hook: str,
    violations: Sequence[Violation],
    *,
    implementation: str = "",
    contract: str = "",
    process: str = "",
) -> str:
    """The plain-text report: class, hook, the implementation that ran and every failure."""
    lines = _header(cls_name, hook, implementation, contract, process)
    lines.append(f"  {len(violations)} problem{'s' if len(violations) != 1 else ''}:")
    lines.extend(f"    - {v.summary()}" for v in violations)
    return "\n".join(lines)


def _use_rich() -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _rich_report(
    cls_name: str,
    hook: str,
    violations: Sequence[Violation],
    implementation: str,
    contract: str,
    process: str = "",
) -> str | None:
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:  # pragma: no cover - rich is a dependency
        return None
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    table.add_column("field", style="bold")
    table.add_column("kind", style="magenta")
    table.add_column("expected", style="green")
    table.add_column("actual", style="red")
    for v in violations:
        if v.kind == "stale-override":
            table.add_row(v.field, v.kind, v.expected, v.detail)
            continue
        expected = v.expected_meta or v.expected
        if v.kind in ("value", "invariant"):
            expected = v.expected
        if v.condition:
            expected += f"  [dim](while {v.condition})[/dim]"
        actual = v.actual if v.kind in ("value", "invariant") else (v.actual_meta or v.actual)
        table.add_row(v.field, v.kind, expected, actual)
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=120, highlight=False)
    console.print(f"[bold red]hook contract violated:[/] [bold]{cls_name}.{hook}[/]", markup=True)
    if implementation:
        console.print(f"  implementation that ran: [cyan]{implementation}[/]", markup=True)
    if contract:
        console.print(f"  contract: [cyan]{contract}[/]", markup=True)
    if process:
        console.print(f"  process: [cyan]{process}[/]", markup=True)
    console.print(table)
    return buffer.getvalue().rstrip()


class ContractViolation(AssertionError):
    """A hook left its object in a state that breaks the hook's contract.

    ``violations`` holds one :class:`Violation` per failing property; ``str(exc)`` is a report
    naming the class, the hook, the implementation that actually ran (``file:line``) and every
    failing field with expected vs actual metadata (rich-rendered when stderr is a terminal).
    In a multi-process job (``RANK`` set, or an initialised process group) it also carries the
    process that found it: ``rank``, ``local_rank``, ``world_size`` and ``host`` (always set).
    """

    def __init__(
        self,
        cls_name: str,
        hook: str,
        violations: Iterable[Violation],
        *,
        implementation: str = "",
        contract: str = "",
        rich: bool | None = None,
        rank: int | None = None,
        local_rank: int | None = None,
        world_size: int | None = None,
        host: str = "",
    ) -> None:
        self.cls_name = cls_name
        self.hook = hook
        self.violations: tuple[Violation, ...] = tuple(violations)
        self.implementation = implementation
        self.contract = contract
        self.rank = rank
        self.local_rank = local_rank
        self.world_size = world_size
        self.host = host
        process = describe_process(rank, local_rank, world_size, host)
        self.plain = format_report(
            cls_name,
            hook,
            self.violations,
            implementation=implementation,
            contract=contract,
            process=process,
        )
        message = None
        if rich if rich is not None else _use_rich():
            message = _rich_report(
                cls_name, hook, self.violations, implementation, contract, process
            )
        super().__init__(message or self.plain)

    def __reduce__(self) -> tuple[object, ...]:
        return (
            _rebuild,
            (
                self.cls_name,
                self.hook,
                self.violations,
                self.implementation,
                self.contract,
                (self.rank, self.local_rank, self.world_size, self.host),
            ),
        )


def _rebuild(
    cls_name: str,
    hook: str,
    violations: tuple[Violation, ...],
    implementation: str,
    contract: str,
    process: tuple[int | None, int | None, int | None, str] = (None, None, None, ""),
) -> ContractViolation:
    rank, local_rank, world_size, host = process
    return ContractViolation(
        cls_name,
        hook,
        violations,
        implementation=implementation,
        contract=contract,
        rich=False,
        rank=rank,
        local_rank=local_rank,
        world_size=world_size,
        host=host,
    )
