"""Put wrappers on a hook: on its class, every override in subclasses, and classes yet to come.

:class:`Instrumenter` wraps the hook named by each contract on the contract's class and every
override of it in subclasses: those that exist already, those defined later (an
``__init_subclass__`` installed on the contract's class) and, when the contract's module is not
imported yet, the class itself once it is (a ``sys.meta_path`` finder that instruments the module
after it executes). ``uninstall()`` restores every class ``__dict__`` exactly. What a wrapper does
is the subclass's business: the enforcer checks contracts, the recorder writes them.

:meth:`Instrumenter.unmatched` names the contracts that never matched a class while installed
(a class or method name that is wrong, or a module never imported), with the reason, so that a
contract that enforces nothing does not pass for one that found nothing wrong.
"""

from __future__ import annotations

import difflib
import importlib.abc
import importlib.machinery
import importlib.util
import inspect
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from types import ModuleType, TracebackType
from typing import Any, NamedTuple, TypeVar

from hookguard.contracts import HookContract

__all__ = ["Instrumenter", "Target", "Unmatched", "positional_parameters", "qualified"]

_I = TypeVar("_I", bound="Instrumenter")

_WRAPPED = "__hookguard_wrapped__"
_ABSENT = object()  # the patched class had no attribute of its own


def _live_init_subclass(original: Any, had_own: bool) -> tuple[Any, bool]:
    """Skip the ``__init_subclass__`` hooks of enforcers that were uninstalled."""
    while isinstance(original, classmethod):
        owner = getattr(original.__func__, _WRAPPED, None)
        if owner is None or owner.installed:
            break
        original, had_own = getattr(original.__func__, "__hookguard_original__")  # noqa: B009
    return original, had_own


def _live(func: Any) -> Any:
    """``func`` without the pass-through wrappers of enforcers that were uninstalled."""
    while True:
        owner = getattr(func, _WRAPPED, None)
        if owner is None or owner.installed:
            return func
        func = func.__wrapped__


def qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _find_class(path: str) -> type | None:
    """The class ``module.Qualname`` if its module is imported (tries every split point)."""
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module = sys.modules.get(".".join(parts[:cut]))
        if module is None:
            continue
        obj: Any = module
        for name in parts[cut:]:
            obj = getattr(obj, name, None)
            if obj is None:
                break
        if isinstance(obj, type) and qualified(obj) == path:
            return obj
    return None


def _all_subclasses(cls: type) -> list[type]:
    out: list[type] = []
    stack = [cls]
    seen: set[type] = set()
    while stack:
        klass = stack.pop()
        subs: list[type] = type.__subclasses__(klass)
        for sub in subs:
            if sub not in seen:
                seen.add(sub)
                out.append(sub)
                stack.append(sub)
    return out


class Target:
    """One contract's hook and the classes instrumented for it."""

    def __init__(self, contract: HookContract) -> None:
        self.contract = contract
        self.base: type | None = None
        self.signature: inspect.Signature | None = None
        #: (positional parameter names after self, defaults) of the contract's hook
        self.positional: tuple[tuple[str, ...], dict[str, Any]] | None = None
        self.patched: list[tuple[type, str, Any, Any]] = []  # (cls, name, original, wrapper)
        #: (base, original, had_own, the classmethod installed)
        self.init_subclass: tuple[type, Any, bool, Any] | None = None
        #: The contract's class, once found (kept after ``uninstall()``, unlike :attr:`base`).
        self.found: type | None = None
        #: Whether a method was ever wrapped for this contract (kept after ``uninstall()``).
        self.instrumented = False


class Unmatched(NamedTuple):
    """A contract that never matched a class: nothing was checked for it."""

    contract: HookContract
    reason: str  # ``module pkg.mod has no class Mgr (did you mean Manager?)``

    def text(self) -> str:
        """``contract for pkg.Mgr.hook matched no class: <reason>``."""
        contract = self.contract
        return f"contract for {contract.cls}.{contract.method} matched no class: {self.reason}"

    def message(self) -> str:
        """:meth:`text` after the contract's ``file:line``."""
        return f"{self.contract.location}: {self.text()}"


class _ImportWatcher(importlib.abc.MetaPathFinder):
    """Instruments a contract's class when the module that defines it gets imported."""

    def __init__(self, enforcer: Instrumenter, modules: Iterable[str]) -> None:
        self.enforcer = enforcer
        self.modules = set(modules)
        self._busy = threading.local()

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.modules or getattr(self._busy, "name", None) == fullname:
            return None
        self._busy.name = fullname
        try:
            spec = importlib.util.find_spec(fullname)
        except (ImportError, ValueError):
            return None
        finally:
            self._busy.name = None
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _WatchingLoader(spec.loader, self.enforcer)
        return spec


class _WatchingLoader(importlib.abc.Loader):
    def __init__(self, loader: Any, enforcer: Instrumenter) -> None:
        self._loader = loader
        self._enforcer = enforcer

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        create = getattr(self._loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        if self._enforcer.installed:
            self._enforcer.attach()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


class Instrumenter:
    """Wraps the contracts' hooks; a context manager and an install/uninstall pair.

    Subclasses say what a wrapper does (:meth:`_wrap`) and may extend :class:`Target`
    (:meth:`_target`).
    """

    def __init__(self, contracts: Iterable[HookContract], *, enabled: bool = True) -> None:
        self.contracts = list(contracts)
        self.installed = False
        self.enabled = enabled
        self._targets = [self._target(c) for c in self.contracts] if self.enabled else []
        self._watcher: _ImportWatcher | None = None
        self._lock = threading.RLock()

    def _target(self, contract: HookContract) -> Target:
        return Target(contract)

    def _wrap(self, target: Any, func: Callable[..., Any]) -> Callable[..., Any]:
        raise NotImplementedError

    # -- install / uninstall ---------------------------------------------------------------

    def install(self: _I) -> _I:
        """Instrument every contract's class and its subclasses (no-op when not enabled)."""
        if self.installed or not self.enabled:
            return self
        self.installed = True
        self.attach()
        pending = [t.contract for t in self._targets if t.base is None]
        if pending:
            modules: set[str] = set()
            for contract in pending:
                parts = contract.cls.split(".")
                modules.update(".".join(parts[:cut]) for cut in range(1, len(parts)))
            self._watcher = _ImportWatcher(self, modules)
            sys.meta_path.insert(0, self._watcher)
        return self

    def uninstall(self) -> None:
        """Restore every patched method and ``__init_subclass__``."""
        if not self.installed:
            return
        self.installed = False
        if self._watcher is not None:
            if self._watcher in sys.meta_path:
                sys.meta_path.remove(self._watcher)
            self._watcher = None
        with self._lock:
            for target in self._targets:
                for cls, name, original, wrapper in reversed(target.patched):
                    if cls.__dict__.get(name) is not wrapper:
                        continue  # someone wrapped on top of us: ours passes calls through
                    if original is _ABSENT:
                        delattr(cls, name)
                    else:
                        setattr(cls, name, _live(original))
                target.patched.clear()
                if target.init_subclass is not None:
                    base, original, had_own, ours = target.init_subclass
                    if base.__dict__.get("__init_subclass__") is ours:
                        original, had_own = _live_init_subclass(original, had_own)
                        if had_own:
                            setattr(base, "__init_subclass__", original)  # noqa: B010
                        else:
                            delattr(base, "__init_subclass__")
                    target.init_subclass = None
                target.base = None

    def __enter__(self: _I) -> _I:
        return self.install()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.uninstall()

    # -- instrumentation -------------------------------------------------------------------

    def attach(self) -> None:
        """Instrument contract classes that are importable now (called again after imports)."""
        with self._lock:
            for target in self._targets:
                if target.base is not None:
                    continue
                base = _find_class(target.contract.cls)
                if base is None:
                    continue
                target.base = base
                target.found = base
                hook = getattr(base, target.contract.method, None)
                if hook is not None:
                    try:
                        target.signature = inspect.signature(hook)
                        target.positional = positional_parameters(target.signature)
                    except (TypeError, ValueError):
                        target.signature = None
                self._instrument(target, base)
                for sub in _all_subclasses(base):
                    self._instrument(target, sub)
                self._hook_subclasses(target, base)
            if self._watcher is not None and all(t.base is not None for t in self._targets):
                if self._watcher in sys.meta_path:
                    sys.meta_path.remove(self._watcher)
                self._watcher = None

    def _hook_subclasses(self, target: Target, base: type) -> None:
        had_own = "__init_subclass__" in base.__dict__
        original = base.__dict__.get("__init_subclass__")
        enforcer = self

        def __init_subclass__(cls: Any, /, **kwargs: Any) -> None:
            if original is not None:
                func = original.__func__ if isinstance(original, classmethod) else original
                func(cls, **kwargs)
            else:
                super(base, cls).__init_subclass__(**kwargs)  # type: ignore[arg-type]
            if enforcer.installed:
                enforcer._instrument(target, cls)

        setattr(__init_subclass__, _WRAPPED, self)
        __init_subclass__.__hookguard_original__ = (original, had_own)  # type: ignore[attr-defined]
        ours = classmethod(__init_subclass__)
        setattr(base, "__init_subclass__", ours)  # noqa: B010
        target.init_subclass = (base, original, had_own, ours)

    def _instrument(self, target: Target, cls: type) -> None:
        method = target.contract.method
        func = cls.__dict__.get(method)
        original: Any = func
        if func is None and cls is target.base:
            # the contract's class inherits the hook: wrap it there, so calls on it are checked
            func = getattr(cls, method, None)
            original = _ABSENT
        if func is None or not inspect.isfunction(func) or getattr(func, _WRAPPED, None) is self:
            return
        wrapper = self._wrap(target, func)
        setattr(cls, method, wrapper)
        target.patched.append((cls, method, original, wrapper))
        target.instrumented = True

    # -- contracts that matched nothing ----------------------------------------------------

    def unmatched(self) -> list[Unmatched]:
        """The contracts that have not matched a class so far, each with the reason: its class
        was not found (a wrong name, or a module never imported), or neither the class nor a
        subclass has the method. Empty when not enabled (nothing was meant to match)."""
        with self._lock:
            return [Unmatched(t.contract, _why_unmatched(t)) for t in self._targets
                    if not t.instrumented]


def _why_unmatched(target: Target) -> str:
    contract = target.contract
    if target.found is not None:
        cls = target.found
        attr = inspect.getattr_static(cls, contract.method, None)
        if attr is not None:
            return (f"{qualified(cls)}.{contract.method} is a {type(attr).__name__}, not a "
                    "method: nothing was instrumented")
        names = [n for n in dir(cls) if not (n.startswith("__") and n.endswith("__"))]
        hint = _did_you_mean(contract.method, names)
        return f"{qualified(cls)} has no method {contract.method}{hint}"
    return _missing_class(contract.cls)


def _missing_class(path: str) -> str:
    """Why ``module.Qualname`` names no class: the first name missing from an imported module,
    a name that is not a class where it is defined, or a module never imported (or absent)."""
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module_name = ".".join(parts[:cut])
        module = sys.modules.get(module_name)
        if module is None:
            continue
        obj: Any = module
        owner = f"module {module_name}"
        for name in parts[cut:]:
            found = getattr(obj, name, None)
            if found is None:
                names = [n for n in dir(obj) if not n.startswith("__")]
                return f"{owner} has no {name}{_did_you_mean(name, names)}"
            obj = found
            owner = f"{owner.removeprefix('module ')}.{name}"
        if isinstance(obj, type):  # imported there, defined elsewhere
            return f"{path} is {qualified(obj)}: name the class where it is defined"
        return f"{path} is a {type(obj).__name__}, not a class"
    top = parts[0]
    try:
        exists = importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        exists = False
    if not exists:
        return f"no module named {top}"
    return f"module {'.'.join(parts[:-1]) or top} was not imported while it was enforced"


def _did_you_mean(name: str, candidates: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(candidates), n=2, cutoff=0.6)
    return f" (did you mean {' or '.join(close)}?)" if close else ""


def positional_parameters(
    sig: inspect.Signature,
) -> tuple[tuple[str, ...], dict[str, Any]] | None:
    """(names, defaults) of the positional parameters after ``self``; None if others exist."""
    params = list(sig.parameters.values())[1:]  # after self
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if any(p.kind not in kinds for p in params):
        return None
    defaults = {p.name: p.default for p in params if p.default is not inspect.Parameter.empty}
    return tuple(p.name for p in params), defaults
