"""``hookguard contracts record``: write a hook's state contract from passing runs.

**Recording runs code.** :func:`record` runs the test files and pytest node ids it is given
(``pytest.main``) and calls the ``module:function`` commands, in this process, with the
current directory and ``paths`` first on ``sys.path``: the checkout's tests execute, and so
does everything they import. Record only from code whose tests you would run yourself, never
from an untrusted pull request (the static checker, ``hookguard audit`` and ``check``, never
runs the code it reads). The command writes its output only inside the checkout
(:mod:`hookguard.commands.contracts`).

The recorder wraps a hook (``package.module.Class.method``) on its class and every override,
runs the commands it is given (pytest node ids, or ``module:function`` called without
arguments) in this process, and at the **outermost** return of each call notes every attribute
the call set (new, or bound to another object): its type, and for tensors dtype, device class
(``cpu``, ``cuda``, this process's device), pinning, contiguity and shape.

From every recorded call it writes TOML that :func:`hookguard.contracts.load_contracts` reads:

* a dimension becomes a hook argument or an integer attribute of the object when it equals it
  in every call, else a product of two of them, else a multiple of one; a size that never varied
  becomes a literal. When several names fit, the one sharing most words with the field is taken
  and the others are named in a comment; record several configurations to tell a constant from a
  relation;
* a field set in only some calls goes under ``[[hook.when]]`` with the attribute that was truthy
  in exactly those calls;
* whatever could not be decided (a dtype that varied, a field no attribute explains) is left out,
  with a comment saying why.

Values, ranges, invariants and ``renamed_from`` are not recorded: they are intent, not
observation. Add them by hand.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from hookguard.contracts import HookContract, parse_contracts
from hookguard.runtime.describe import cuda_available
from hookguard.runtime.distributed import known_cuda_index
from hookguard.runtime.instrument import Instrumenter, Target, qualified

__all__ = ["RecordError", "Recording", "record", "run_command"]

_WRAPPED = "__hookguard_wrapped__"
_MULTIPLES = range(2, 9)


class RecordError(Exception):
    """The recording cannot be made (bad hook name, a command that fails, no call recorded)."""


@dataclass(frozen=True)
class Observed:
    """One attribute the hook set, in one call."""

    kind: str  # tensor int float bool str list dict none other
    type_name: str
    dtype: str | None = None
    device: str | None = None  # "cpu", "cuda", "meta", ...
    device_index: int | None = None
    current: bool = False  # on this process's CUDA device
    pinned: bool | None = None
    contiguous: bool | None = None
    shape: tuple[int, ...] | None = None
    items: frozenset[str] = frozenset()


@dataclass
class Call:
    """One outermost call of the hook: its class, the names for dimensions, what it set."""

    cls: str
    names: dict[str, int]  # hook arguments first, then integer attributes of the object
    arguments: frozenset[str]
    truthy: dict[str, bool]  # scalar attributes (for [[hook.when]])
    fields: dict[str, Observed]


def _kind(value: object) -> str:
    if isinstance(value, torch.Tensor):
        return "tensor"
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, list | tuple):
        return "list"
    if isinstance(value, dict):
        return "dict"
    return "other"


def observe(value: object) -> Observed:
    kind = _kind(value)
    name = type(value).__name__
    if isinstance(value, torch.Tensor):
        device = value.device
        current = device.type == "cuda" and device.index == known_cuda_index()
        pinned = bool(value.is_pinned()) if device.type == "cpu" and cuda_available() else None
        contiguous = bool(value.is_contiguous()) if device.type != "meta" else None
        return Observed(
            kind,
            name,
            dtype=str(value.dtype).removeprefix("torch."),
            device=device.type,
            device_index=device.index,
            current=current,
            pinned=pinned,
            contiguous=contiguous,
            shape=tuple(value.shape),
        )
    if isinstance(value, list | tuple):
        items = frozenset(_kind(item) for item in value)
        return Observed(kind, name, shape=(len(value),), items=items)
    if isinstance(value, str | dict):
        return Observed(kind, name, shape=(len(value),))
    return Observed(kind, name)


class Recorder(Instrumenter):
    """Wraps the hook and keeps a :class:`Call` per outermost successful call."""

    def __init__(self, contract: HookContract) -> None:
        self.calls: list[Call] = []
        self._running: set[int] = set()  # ids of the objects inside the hook, for every wrapper
        super().__init__([contract])

    def _wrap(self, target: Target, func: Callable[..., Any]) -> Callable[..., Any]:
        recorder = self
        running = self._running

        @functools.wraps(func)
        def hook(obj: Any, *args: Any, **kwargs: Any) -> Any:
            key = id(obj)
            if not recorder.installed or key in running:
                return func(obj, *args, **kwargs)
            running.add(key)
            before = dict(getattr(obj, "__dict__", {}))
            try:
                result = func(obj, *args, **kwargs)
            finally:
                running.discard(key)
            recorder._observe(target, func, obj, args, kwargs, before)
            return result

        setattr(hook, _WRAPPED, self)
        return hook

    def _observe(
        self,
        target: Target,
        func: Callable[..., Any],
        obj: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        before: dict[str, Any],
    ) -> None:
        arguments: dict[str, Any] = {}
        for sig in (target.signature, _signature(func)):
            if sig is None:
                continue
            try:
                bound = sig.bind(obj, *args, **kwargs)
            except TypeError:
                continue
            bound.apply_defaults()
            arguments = dict(list(bound.arguments.items())[1:])
            break
        names: dict[str, int] = {}
        for name, value in arguments.items():
            if type(value) is int:
                names[name] = value
        after = dict(getattr(obj, "__dict__", {}))
        truthy: dict[str, bool] = {}
        for name, value in after.items():
            if type(value) is int and name not in names:
                names[name] = value
            if isinstance(value, bool | int | float | str) or value is None:
                truthy[name] = bool(value)
        fields = {
            name: observe(value)
            for name, value in after.items()
            if name not in before or before[name] is not value
        }
        self.calls.append(
            Call(qualified(type(obj)), names, frozenset(arguments), truthy, fields)
        )


@functools.lru_cache(maxsize=256)
def _signature(func: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(func)
    except (TypeError, ValueError):
        return None


# --------------------------------------------------------------------------------------------
# Running the commands
# --------------------------------------------------------------------------------------------


def run_command(command: str) -> None:
    """Run a pytest node id (or test file) or call ``module:function``; RecordError if it fails."""
    if "::" in command or command.endswith(".py") or os.path.exists(command.split("::")[0]):
        import pytest

        code = pytest.main(["-q", "-p", "no:cacheprovider", command])
        if code != 0:
            raise RecordError(
                f"{command}: pytest exited {int(code)}; recording needs a passing run"
            )
        return
    module_name, sep, function_name = command.partition(":")
    if not sep or not module_name or not function_name.isidentifier():
        raise RecordError(
            f"{command}: expected a pytest node id (tests/x.py::test_y) or module:function"
        )
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise RecordError(f"{command}: cannot import {module_name}: {exc}") from None
    function = getattr(module, function_name, None)
    if not callable(function):
        raise RecordError(f"{command}: {module_name} has no function {function_name}")
    try:
        function()
    except Exception as exc:
        raise RecordError(
            f"{command} raised {type(exc).__name__}: {exc}; recording needs a passing run"
        ) from None


# --------------------------------------------------------------------------------------------
# From calls to a contract
# --------------------------------------------------------------------------------------------


def _words(name: str) -> set[str]:
    return {w.removesuffix("s") for w in re.split(r"_+", name.lower()) if w}


def _score(field_name: str, candidate: str) -> tuple[int, int, str]:
    """Sort key: most words shared with the field first, then fewer words, then the name."""
    shared = len(_words(field_name) & _words(candidate))
    return (-shared, len(_words(candidate)), candidate)


@dataclass
class _Dim:
    text: str | int
    note: str = ""


@dataclass
class _Field:
    name: str
    lines: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class Recording:
    """The calls recorded for one hook, and the contract they support."""

    def __init__(self, cls: str, method: str, calls: Sequence[Call], commands: Sequence[str]):
        self.cls = cls
        self.method = method
        self.calls = list(calls)
        self.commands = list(commands)

    # -- dimensions ---------------------------------------------------------------------------

    def _names(self, calls: Sequence[Call]) -> list[str]:
        """Names with an int value in every call, arguments first."""
        common = set(calls[0].names)
        for call in calls[1:]:
            common &= set(call.names)
        arguments = calls[0].arguments
        return sorted(common, key=lambda n: (n not in arguments, n))

    def dimension(self, field_name: str, calls: Sequence[Call], sizes: Sequence[int]) -> _Dim:
        names = self._names(calls)
        values = {n: [c.names[n] for c in calls] for n in names}
        varies = len(set(sizes)) > 1
        single = [n for n in names if values[n] == list(sizes)]
        if not varies:
            note = ""
            if single:
                note = (
                    f"{sizes[0]} in every call; also equal to {', '.join(single)} every time: "
                    "record configurations that vary it to tell a constant from a relation"
                )
            return _Dim(sizes[0], note)
        if single:
            return self._pick(field_name, single)
        moving = [n for n in names if len(set(values[n])) > 1]
        products = [
            f"{a} * {b}"
            for i, a in enumerate(moving)
            for b in moving[i + 1 :]
            if all(x * y == s for x, y, s in zip(values[a], values[b], sizes, strict=True))
        ]
        if products:
            return self._pick(field_name, products)
        multiples = [
            f"{k} * {n}"
            for n in moving
            for k in _MULTIPLES
            if all(k * x == s for x, s in zip(values[n], sizes, strict=True))
        ]
        if multiples:
            return self._pick(field_name, multiples)
        shown = ", ".join(str(s) for s in sorted(set(sizes))[:6])
        return _Dim("*", f"varied ({shown}) with no exact relation to the arguments or attributes")

    def _pick(self, field_name: str, options: list[str]) -> _Dim:
        ranked = sorted(options, key=lambda text: _score(field_name, text))
        note = ""
        if len(ranked) > 1:
            more = " and more" if len(ranked) > 4 else ""
            note = (
                f"{ranked[0]} chosen (most words shared with the field, then fewest words); "
                f"also fit in every call: {', '.join(ranked[1:4])}{more}"
            )
        return _Dim(ranked[0], note)

    # -- fields -------------------------------------------------------------------------------

    def field(self, name: str, calls: Sequence[Call]) -> _Field:
        seen = [c.fields[name] for c in calls]
        out = _Field(name)
        kinds = {o.kind for o in seen}
        if len(kinds) > 1:
            out.lines.append('type = "any"')
            out.notes.append(f"the value was {' or '.join(sorted(kinds))} in different calls")
            return out
        kind = kinds.pop()
        if kind == "none":
            out.lines.append('type = "any"')
            out.notes.append("None in every call")
            return out
        if kind == "other":
            names = sorted({o.type_name for o in seen})
            out.notes.append(f"a {', '.join(names)}: only its presence (not None) is checked")
            return out
        if kind != "tensor":
            out.lines.append(f'type = "{kind}"')
            if kind == "list":
                items = set().union(*(o.items for o in seen))
                if len(items) == 1 and items <= {"int", "float", "bool", "str"}:
                    out.lines.append(f'items = "{items.pop()}"')
                elif items:
                    out.notes.append(f"items of several types ({', '.join(sorted(items))})")
            if kind in ("list", "str", "dict"):
                dim = self.dimension(name, calls, [o.shape[0] for o in seen if o.shape])
                if kind == "list" or (isinstance(dim.text, str) and dim.text != "*"):
                    self._shape(out, [dim])
            return out
        self._tensor(out, seen, calls)
        return out

    def _tensor(self, out: _Field, seen: Sequence[Observed], calls: Sequence[Call]) -> None:
        dtypes = {o.dtype for o in seen}
        if len(dtypes) == 1:
            out.lines.append(f'dtype = "{dtypes.pop()}"')
        else:
            out.notes.append(f"dtype varied ({', '.join(sorted(str(d) for d in dtypes))})")
        devices = {o.device for o in seen}
        if devices == {"cuda"}:
            if all(o.current for o in seen):
                out.lines.append('device = "cuda:current"')
            else:
                indices = sorted({str(o.device_index) for o in seen})
                out.lines.append('device = "cuda"')
                out.notes.append(
                    f"on cuda:{', cuda:'.join(indices)}, not always this process's device"
                )
        elif len(devices) == 1:
            out.lines.append(f'device = "{devices.pop()}"')
        else:
            out.notes.append(f"device varied ({', '.join(sorted(str(d) for d in devices))})")
        pinned = {o.pinned for o in seen if o.pinned is not None}
        if len(pinned) == 1:
            out.lines.append(f"pinned = {'true' if pinned.pop() else 'false'}")
        elif len(pinned) > 1:
            out.notes.append("pinned in some calls only")
        contiguous = {o.contiguous for o in seen if o.contiguous is not None}
        if len(contiguous) == 1:
            out.lines.append(f"contiguous = {'true' if contiguous.pop() else 'false'}")
        elif len(contiguous) > 1:
            out.notes.append("contiguous in some calls only")
        ranks = {len(o.shape or ()) for o in seen}
        if len(ranks) != 1:
            out.notes.append(f"the number of dimensions varied ({sorted(ranks)})")
            return
        rank = ranks.pop()
        dims = [
            self.dimension(out.name, calls, [(o.shape or ())[k] for o in seen])
            for k in range(rank)
        ]
        self._shape(out, dims)

    def _shape(self, out: _Field, dims: Sequence[_Dim]) -> None:
        parts = [f'"{d.text}"' if isinstance(d.text, str) else str(d.text) for d in dims]
        out.lines.append(f"shape = [{', '.join(parts)}]")
        for index, dim in enumerate(dims):
            if dim.note:
                out.notes.append(f"dimension {index}: {dim.note}")

    # -- the contract -------------------------------------------------------------------------

    def when_attribute(self, calls_with: Sequence[Call]) -> tuple[str | None, list[str]]:
        """The attribute truthy in exactly the calls that set a field (and the others that fit)."""
        inside = {id(c) for c in calls_with}
        candidates = set(self.calls[0].truthy)
        for call in self.calls[1:]:
            candidates &= set(call.truthy)
        fits = sorted(
            n for n in candidates if all(c.truthy[n] == (id(c) in inside) for c in self.calls)
        )
        return (fits[0] if fits else None), fits[1:]

    def toml(self) -> str:
        calls = self.calls
        order: list[str] = []
        for call in calls:
            order.extend(n for n in call.fields if n not in order)
        always = [n for n in order if all(n in c.fields for c in calls)]
        groups: dict[tuple[int, ...], list[str]] = {}
        for name in order:
            if name not in always:
                key = tuple(i for i, c in enumerate(calls) if name in c.fields)
                groups.setdefault(key, []).append(name)
        classes = sorted({c.cls for c in calls})
        lines = [
            f"# Recorded by `hookguard contracts record` from {len(calls)} call"
            f"{'s' if len(calls) != 1 else ''} of {self.cls}.{self.method}",
            f"# classes: {', '.join(classes)}",
        ]
        lines.extend(f"# ran: {command}" for command in self.commands)
        lines.append(
            "# Recorded: type, dtype, device, pinned, contiguous, shape. Not recorded (add by "
            "hand):"
        )
        lines.append("# values, range, equals, addresses, invariants, renamed_from, consumers.")
        if not cuda_available():
            lines.append("# Recorded without CUDA: every tensor was on the CPU (code that uses")
            lines.append('# CUDA where it can wants device = "current"); pinning not observable.')
        if len(calls) < 3:
            lines.append(
                "# Few calls: sizes that never varied are literals; record more configurations."
            )
        lines += ["", "[[hook]]", f'class = "{self.cls}"', f'method = "{self.method}"']
        for name in always:
            lines += self._field_block(f"hook.fields.{name}", self.field(name, calls))
        for key, names in groups.items():
            subset = [calls[i] for i in key]
            attr, others = self.when_attribute(subset)
            if attr is None:
                lines.append("")
                for name in names:
                    lines.append(
                        f"# {name}: set in {len(subset)} of {len(calls)} calls, and no attribute "
                        "was truthy in exactly those: left out"
                    )
                continue
            lines += ["", "[[hook.when]]", f'attr = "{attr}"']
            lines[-1] += f"  # truthy in exactly the {len(subset)} of {len(calls)} calls that set"
            lines[-1] += f" {'these' if len(names) > 1 else 'it'}"
            if others:
                lines.append(f"# also truthy in exactly those calls: {', '.join(others)}")
            for name in names:
                lines += self._field_block(f"hook.when.fields.{name}", self.field(name, subset))
        text = "\n".join(lines) + "\n"
        parse_contracts(text, "<recorded contract>")  # what we write must load
        return text

    def _field_block(self, header: str, spec: _Field) -> list[str]:
        out = ["", f"[{header}]"]
        out.extend(f"# {note}" for note in spec.notes)
        out.extend(spec.lines)
        return out


def record(
    hook: str,
    commands: Iterable[str],
    *,
    paths: Iterable[str | os.PathLike[str]] = (),
) -> Recording:
    """Run ``commands`` with ``hook`` (``package.module.Class.method``) recorded; the recording.

    ``paths`` go to the front of ``sys.path`` (with the working directory, as ``python -m``
    does), so ``module:function`` commands and fixture packages import.
    """
    cls, _, method = hook.rpartition(".")
    if not cls or "." not in cls or not method.isidentifier():
        raise RecordError(f"{hook}: expected package.module.Class.method")
    commands = list(commands)
    if not commands:
        raise RecordError("give at least one command: a pytest node id or module:function")
    for entry in [os.getcwd(), *(os.fspath(Path(p).resolve()) for p in paths)][::-1]:
        if entry not in sys.path:
            sys.path.insert(0, entry)
    contract = HookContract(cls=cls, method=method, renamed_from=(), fields={})
    recorder = Recorder(contract)
    with recorder:
        for command in commands:
            run_command(command)
        found = recorder._targets[0].base
    if found is None:
        raise RecordError(f"{hook}: no class {cls} was imported by the commands")
    if not recorder.calls:
        raise RecordError(f"{hook}: the commands never called it")
    return Recording(qualified(found), method, recorder.calls, commands)
