"""An error is a proof: each false-error pattern seen on real code, next to the real bug that
looks like it and must still be an error."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

from hookguard.engine import Options, audit
from hookguard.findings import Finding, Severity
from tests.conftest import GitRepo, write_tree

INFERRED = {"pyproject.toml": "[tool.hookguard]\ninferred-state = true\n"}


def findings(tmp_path: Path, files: dict[str, str], **options: object) -> dict[str, Finding]:
    # (HG003's inferred state on, as these cases were written for it)
    root = write_tree(tmp_path / "repo", {"pkg/__init__.py": "", **INFERRED, **files})
    result = audit([root], Options(use_cache=False, history=False, **options))  # type: ignore[arg-type]
    return {f"{f.code} {f.symbol}": f for f in result.findings}


def errors(found: dict[str, Finding]) -> set[str]:
    return {key for key, f in found.items() if f.severity is Severity.ERROR}


ADAPTER = '''
import torch.nn as nn


class AdapterLayer:
    def __init__(self, base_layer, rank):
        self.base_layer = base_layer
        self.rank = rank
'''


def test_super_init_that_reaches_an_external_base_is_not_bound_to_the_in_repo_one(
    tmp_path: Path,
) -> None:
    found = findings(tmp_path, {
        "pkg/adapter.py": ADAPTER,
        "pkg/layers.py": '''
            import torch.nn as nn
            from pkg.adapter import AdapterLayer


            class Linear(nn.Module, AdapterLayer):
                def __init__(self, base_layer, rank):
                    super().__init__()  # nn.Module.__init__: takes no arguments
                    AdapterLayer.__init__(self, base_layer, rank)
        ''',
    })
    assert not errors(found), found


def test_super_init_that_reaches_the_in_repo_base_is_still_checked(tmp_path: Path) -> None:
    found = findings(tmp_path, {
        "pkg/adapter.py": ADAPTER,
        "pkg/layers.py": '''
            import torch.nn as nn
            from pkg.adapter import AdapterLayer


            class Linear(AdapterLayer, nn.Module):
                def __init__(self, base_layer, rank):
                    super().__init__()  # AdapterLayer.__init__: misses both arguments
        ''',
    })
    assert "HG002 pkg.layers.Linear.__init__" in errors(found)


BASE_CALLS_HOOK = '''
class Base:
    def run(self, batch):
        return self.step(batch, scale=2)

    def step(self, batch, scale=1):
        return batch
'''


def test_an_external_base_first_in_the_mro_makes_drift_a_warning(tmp_path: Path) -> None:
    found = findings(tmp_path, {
        "pkg/base.py": BASE_CALLS_HOOK,
        "pkg/sub.py": '''
            import framework
            from pkg.base import Base


            class Hidden(framework.Runner, Base):  # framework.Runner may define run()
                def step(self, batch):
                    return batch


            class Known(Base, framework.Runner):
                def step(self, batch):
                    return batch
        ''',
    })
    assert found["HG002 pkg.sub.Hidden.step"].severity is Severity.WARNING
    assert "framework.Runner" in found["HG002 pkg.sub.Hidden.step"].message
    assert "HG002 pkg.sub.Known.step" in errors(found)


def test_a_wrapping_decorator_on_the_override_makes_drift_a_warning(tmp_path: Path) -> None:
    found = findings(tmp_path, {
        "pkg/base.py": BASE_CALLS_HOOK,
        "pkg/sub.py": '''
            import functools
            from pkg.base import Base
            from pkg.util import takes_scale


            class Wrapped(Base):
                @takes_scale  # its wrapper pops scale= before calling step
                def step(self, batch):
                    return batch


            class Cached(Base):
                @functools.lru_cache  # passes every argument through
                def step(self, batch):
                    return batch
        ''',
        "pkg/util.py": '''
            def takes_scale(fn):
                def wrapper(self, batch, scale=1):
                    return fn(self, batch)
                return wrapper
        ''',
    })
    assert found["HG002 pkg.sub.Wrapped.step"].severity is Severity.WARNING
    assert "@takes_scale" in found["HG002 pkg.sub.Wrapped.step"].message
    assert "HG002 pkg.sub.Cached.step" in errors(found)


def test_super_new_with_an_explicit_cls_binds_like_python(tmp_path: Path) -> None:
    found = findings(tmp_path, {
        "pkg/base.py": '''
            class Symbol:
                def __new__(cls, name, **assumptions):
                    return object.__new__(cls)
        ''',
        "pkg/sub.py": '''
            from pkg.base import Symbol


            class Dummy(Symbol):
                def __new__(cls, name=None, **assumptions):
                    return super().__new__(cls, name or "_", **assumptions)


            class Broken(Symbol):
                def __new__(cls, name=None):
                    return super().__new__(cls, name, name, name)
        ''',
    })
    assert "HG002 pkg.sub.Dummy.__new__" not in found
    assert "HG002 pkg.sub.Broken.__new__" in errors(found)


def test_a_call_only_reached_through_a_method_the_subclass_replaces_is_no_error(
    tmp_path: Path,
) -> None:
    base = '''
        class Engine:
            def run(self, batch):
                return self._step(batch)

            def _step(self, batch):
                return self.forward(batch, cache=None)

            def forward(self, batch, cache=None):
                return batch
    '''
    found = findings(tmp_path, {
        "pkg/base.py": base,
        "pkg/sub.py": '''
            from pkg.base import Engine


            class Eager(Engine):
                def run(self, batch):  # never reaches _step, the only caller of forward(cache=)
                    return self.forward(batch)

                def forward(self, batch):
                    return batch


            class Lazy(Engine):
                def forward(self, batch):  # run -> _step -> forward(cache=None): TypeError
                    return batch
        ''',
    })
    assert "HG002 pkg.sub.Eager.forward" not in found
    assert "HG002 pkg.sub.Lazy.forward" in errors(found)


POOL = '''
class HostPool:
    def allocate(self, size):
        self._buffer = bytearray(size)
        self._free = list(range(size))

    def take(self):
        return self._free.pop()

    def view(self):
        return self._do_view()

    def _do_view(self):
        return memoryview(self._buffer)
'''


def test_a_parallel_implementation_that_replaces_every_reader_is_no_error(
    tmp_path: Path,
) -> None:
    found = findings(tmp_path, {
        "pkg/pool.py": POOL,
        "pkg/device.py": '''
            from pkg.pool import HostPool


            class DevicePool(HostPool):
                """Keeps its own state: every method that reads the host fields is replaced."""

                def allocate(self, size):
                    self._slots = [0] * size

                def take(self):
                    return self._slots.pop()

                def view(self):
                    return self._slots


            class HalfPool(HostPool):
                def allocate(self, size):
                    self._free = list(range(size))  # forgets _buffer, which view() reads
        ''',
    })
    assert "HG003 pkg.device.DevicePool.allocate" not in errors(found)
    half = found["HG003 pkg.device.HalfPool.allocate"]
    assert half.severity is Severity.WARNING
    assert [m["field"] for m in half.evidence["missing"]] == ["_buffer"]  # type: ignore[union-attr]


VISION = '''
class VisionModel:
    def __init__(self, path):
        self.path = path
        self.build_preprocessor()

    def build_preprocessor(self):
        self.transform = str.lower
        self.processor = self._preprocess  # the helper is installed here, and only here

    def _preprocess(self, image):
        return self.transform(image)

    def preprocess(self, images):
        return [self.processor(image) for image in images]
'''


def test_a_helper_passed_on_only_by_the_replaced_hook_is_no_reader(tmp_path: Path) -> None:
    found = findings(tmp_path, {
        "pkg/vision.py": VISION,
        "pkg/v3.py": '''
            from pkg.vision import VisionModel


            class V3Model(VisionModel):
                def build_preprocessor(self):
                    self.processor = str.upper  # its own processor: _preprocess never runs
        ''',
        "pkg/eager.py": '''
            from pkg.vision import VisionModel


            class EagerModel(VisionModel):
                def __init__(self, path):
                    super().__init__(path)
                    self.fallback = self._preprocess  # passed on from a method that runs

                def build_preprocessor(self):
                    self.processor = str.upper
        ''',
    })
    assert "HG003 pkg.v3.V3Model.build_preprocessor" not in found
    eager = found["HG003 pkg.eager.EagerModel.build_preprocessor"]
    assert eager.severity is Severity.WARNING
    assert [m["field"] for m in eager.evidence["missing"]] == ["transform"]  # type: ignore[union-attr]


def test_bookkeeping_counters_are_not_state_a_hook_must_set(tmp_path: Path) -> None:
    found = findings(tmp_path, {
        "pkg/printer.py": '''
            class Printer:
                def __init__(self):
                    self._depth = 0
                    self._calls = 0

                def doprint(self, expr):
                    return self._print(expr)

                def _print(self, expr):
                    self._depth += 1
                    self._calls += 1
                    try:
                        return self.emit(expr)
                    finally:
                        self._depth -= 1

                def emit(self, expr):
                    return self._print_atom(expr)

                def _print_atom(self, expr):
                    self._last = self._print(expr.args) if expr.args else expr
                    return str(expr)

                def last(self):
                    return self._last, self._depth
        ''',
        "pkg/latex.py": '''
            from pkg.printer import Printer


            class Latex(Printer):
                def _print_atom(self, expr):
                    return "$" + str(expr) + "$"  # never sets _last, which last() reads
        ''',
    })
    finding = found["HG003 pkg.latex.Latex._print_atom"]
    missing = {m["field"]: m for m in finding.evidence["missing"]}  # type: ignore[union-attr]
    assert "_depth" not in missing  # raised and lowered around the dispatch: bookkeeping
    assert {name for name, m in missing.items() if m["read_by_base"]} == {"_last"}


def test_an_override_that_does_nothing_disables_the_hook(tmp_path: Path) -> None:
    found = findings(tmp_path, {
        "pkg/pool.py": POOL,
        "pkg/stub.py": '''
            from pkg.pool import HostPool


            class StubPool(HostPool):
                def allocate(self, size):
                    """Nothing to allocate in tests."""
        ''',
    })
    assert "HG003 pkg.stub.StubPool.allocate" not in found  # disabled on purpose


def test_a_field_the_subclass_provides_as_a_property_needs_no_setting(tmp_path: Path) -> None:
    found = findings(tmp_path, {
        "pkg/result.py": '''
            class Result:
                def forget(self):
                    self._cache = None
                    self._state = "PENDING"

                def get(self):
                    return self._cache, self._state


            class Eager(Result):
                def forget(self):
                    self._state = "FORGOTTEN"

                @property
                def _cache(self):
                    return {"result": 1}


            class Sloppy(Result):
                def forget(self):
                    self._cache = None  # forgets _state, which get() reads
        ''',
    })
    assert "HG003 pkg.result.Eager.forget" not in found
    sloppy = found["HG003 pkg.result.Sloppy.forget"]
    assert sloppy.severity is Severity.WARNING
    assert [m["field"] for m in sloppy.evidence["missing"]] == ["_state"]  # type: ignore[union-attr]


ENTITIES_V1 = '''
class LinearEntity:
    def equation(self, x="x"):
        return x

    def describe(self):
        return "line"


class Segment(LinearEntity):
    pass


class Ray:
    def equation(self, x="x"):
        return x

    def describe(self):
        return self.equation()  # a sibling calling its own method
'''

ENTITIES_V2 = ENTITIES_V1.replace('''    def equation(self, x="x"):
        return x

    def describe(self):
        return "line"''', '''    def describe(self):
        return "line"''', 1)


def test_a_dropped_public_method_a_sibling_calls_on_itself_is_no_removed_hook(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = git_repo()
    repo.commit("entities", {
        "pkg/__init__.py": "",
        "pkg/entities.py": ENTITIES_V1,
        "pkg/line3d.py": "from pkg.entities import LinearEntity\n\n\n"
                         "class Line3D(LinearEntity):\n"
                         "    def equation(self, x=\"x\", z=\"z\"):\n        return x, z\n",
    })
    repo.commit("Drop LinearEntity.equation: users call the subclasses' own", {
        "pkg/entities.py": ENTITIES_V2})
    result = audit([repo.root], Options(use_cache=False))
    assert [f for f in result.findings if f.code == "HG001"] == []


def test_a_dropped_hook_the_in_file_template_called_is_a_removed_hook(
    git_repo: Callable[..., GitRepo],
) -> None:
    template = ENTITIES_V1.replace('return "line"', 'return "line " + self.equation()', 1)
    repo = git_repo()
    repo.commit("entities", {
        "pkg/__init__.py": "",
        "pkg/entities.py": template,
        "pkg/line3d.py": "from pkg.entities import LinearEntity\n\n\n"
                         "class Line3D(LinearEntity):\n"
                         "    def equation(self, x=\"x\", z=\"z\"):\n        return x, z\n",
    })
    repo.commit("describe() no longer shows the equation", {"pkg/entities.py": ENTITIES_V2})
    result = audit([repo.root], Options(use_cache=False))
    (finding,) = [f for f in result.findings if f.code == "HG001"]
    assert finding.symbol == "pkg.line3d.Line3D.equation"
    assert finding.severity is Severity.ERROR


def test_a_caller_that_picks_between_call_shapes_proves_nothing_if_one_fits(
    tmp_path: Path,
) -> None:
    found = findings(tmp_path, {
        "pkg/encoder.py": '''
            import torch


            class Encoder:
                def forward_torchscript(self, net_input):
                    if torch.jit.is_scripting():
                        return self.forward(src_tokens=net_input["src_tokens"])
                    return self.forward_eager(net_input)

                def forward_eager(self, net_input):
                    return self.forward(**net_input)

                def forward(self, src_tokens):
                    return src_tokens

                def run(self, tokens):
                    return self.forward(tokens, mask=None)  # broken for the base itself

                def encode(self, tokens):
                    return self.forward(tokens)


            class Hubert(Encoder):
                def forward(self, source, padding_mask=None):
                    return source


            class Broken(Encoder):
                def forward(self):
                    return None
        ''',
    })
    # forward_torchscript's keyword call runs only when scripted (the eager path fits); run()'s
    # mask= fits neither Encoder.forward nor
    # the override: that caller is broken for the base too, so it proves no drift either.
    assert "HG002 pkg.encoder.Hubert.forward" not in found
    broken = found["HG002 pkg.encoder.Broken.forward"]
    assert broken.severity is Severity.ERROR and "Encoder.encode" in broken.message


def test_a_call_behind_a_flag_the_subclass_turns_off_is_no_error(tmp_path: Path) -> None:
    found = findings(tmp_path, {
        "pkg/layer.py": '''
            class Preprocessing:
                _USE_BASE_FACTOR = True

                def __init__(self, factor=None):
                    if self._USE_BASE_FACTOR:
                        self._set_factor(factor)

                def _set_factor(self, factor):
                    self.factor = factor


            class Zoom(Preprocessing):
                _USE_BASE_FACTOR = False

                def _set_factor(self, factor, name):
                    self.factor = (factor, name)


            class Crop(Preprocessing):
                def _set_factor(self, factor, name):
                    self.factor = (factor, name)
        ''',
    })
    assert "HG002 pkg.layer.Zoom._set_factor" not in found
    assert "HG002 pkg.layer.Crop._set_factor" in errors(found)


def test_super_in_a_classmethod_reaches_a_plain_function_unbound(tmp_path: Path) -> None:
    found = findings(tmp_path, {
        "pkg/transforms.py": '''
            class Composite:
                def _from_config(cls, kind, config=None, empty=False):
                    return cls()


            class AudioComposite(Composite):
                @classmethod
                def from_config(cls, config=None):
                    return super()._from_config(cls, "audio", config, empty=True)


            class BrokenComposite(Composite):
                @classmethod
                def from_config(cls, config=None):
                    return super()._from_config(cls, "audio", config, True, 1)
        ''',
    })
    assert "HG002 pkg.transforms.AudioComposite.from_config" not in found
    assert "HG002 pkg.transforms.BrokenComposite.from_config" in errors(found)


def test_a_field_the_family_defines_as_a_method_and_a_delegating_wrapper(tmp_path: Path) -> None:
    found = findings(tmp_path, {
        "pkg/opt.py": '''
            class Optimizer:
                def setup(self):
                    self.get_logger = lambda: None
                    self.slots = []

                def apply(self, grads):
                    self.step_count = 0
                    return self.slots, self.step_count

                def report(self):
                    return self.get_logger(), self.step_count


            class Logged(Optimizer):
                def setup(self):
                    self.slots = [1]

                def get_logger(self):
                    return "log"


            class LossScale(Optimizer):
                def __init__(self, inner: Optimizer):
                    self.inner = inner

                def apply(self, grads):
                    return self.inner.apply(grads)  # delegates to the wrapped optimizer


            class Forgetful(Optimizer):
                def apply(self, grads):
                    return self.slots  # never sets step_count, which report() reads
        ''',
    })
    assert "HG003 pkg.opt.Logged.setup" not in found
    assert "HG003 pkg.opt.LossScale.apply" not in found
    assert found["HG003 pkg.opt.Forgetful.apply"].severity is Severity.WARNING


def test_a_base_bound_by_one_of_several_branches_has_no_known_mro(tmp_path: Path) -> None:
    found = findings(tmp_path, {
        "pkg/jax_trainer.py": "class JaxTrainer:\n"
                              "    def fit(self, data):\n"
                              "        return self.test_step(None, data)\n\n"
                              "    def test_step(self, state, data):\n        return data\n",
        "pkg/np_trainer.py": "class NumpyTrainer:\n"
                             "    def fit(self, data):\n        return self.test_step(data)\n\n"
                             "    def test_step(self, data):\n        return data\n",
        "pkg/model.py": '''
            import os

            if os.environ.get("BACKEND") == "jax":
                from pkg.jax_trainer import JaxTrainer as Trainer
            else:
                from pkg.np_trainer import NumpyTrainer as Trainer
            from pkg.np_trainer import NumpyTrainer


            class JaxModel(Trainer):
                def test_step(self, state, data):
                    return data


            class NumpyModel(NumpyTrainer):
                def test_step(self, state, data):
                    return data
        ''',
    })
    assert "HG002 pkg.model.JaxModel.test_step" not in errors(found)
    assert "HG002 pkg.model.NumpyModel.test_step" in errors(found)


def test_a_stub_that_never_runs_the_base_constructor_is_no_proof(tmp_path: Path) -> None:
    handler = '''
        class Handler:
            def __init__(self, app, request):
                self.app, self.request = app, request

            def clear_cookie(self, name):
                self.set_cookie(name, "", expires=0)

            def set_cookie(self, name, value, expires=None):
                return name, value, expires
    '''
    found = findings(tmp_path, {
        "pkg/web.py": handler,
        "pkg/handlers.py": '''
            from pkg.web import Handler


            class CookieStub(Handler):
                def __init__(self):  # don't call super().__init__: no app, no request
                    self.cookies = {}

                def set_cookie(self, name, value):
                    self.cookies[name] = value


            class RealHandler(Handler):
                def __init__(self, app, request):
                    super().__init__(app, request)

                def set_cookie(self, name, value):
                    return name, value
        ''',
    })
    # A stub that never runs the base constructor is never used as a full handler.
    assert "HG002 pkg.handlers.CookieStub.set_cookie" not in found
    assert "HG002 pkg.handlers.RealHandler.set_cookie" in errors(found)


def test_a_class_that_runs_only_an_external_constructor_skips_the_base_one(
    tmp_path: Path,
) -> None:
    found = findings(tmp_path, {
        "pkg/tuner.py": '''
            import torch.nn as nn


            class BaseTuner(nn.Module):
                def __init__(self, model):
                    super().__init__()
                    self.inject_adapter(model)

                def inject_adapter(self, model):
                    self._mark_trainable(model, strict=True)

                def _mark_trainable(self, model, strict=False):
                    return model


            class Wrapper(BaseTuner):
                def __init__(self, model):
                    nn.Module.__init__(self)  # wraps an inner tuner instead
                    self.inner = model

                def _mark_trainable(self, model):
                    """Nothing to mark: the inner tuner does it."""


            class Explicit(BaseTuner):
                def __init__(self, model):
                    BaseTuner.__init__(self, model)

                def _mark_trainable(self, model):
                    return model
        ''',
    })
    assert "HG002 pkg.tuner.Wrapper._mark_trainable" not in found
    assert "HG002 pkg.tuner.Explicit._mark_trainable" in errors(found)


def test_a_subclass_with_its_own_factory_for_the_hook_is_no_proof(tmp_path: Path) -> None:
    found = findings(tmp_path, {
        "pkg/batch.py": '''
            class Batch:
                @classmethod
                def from_pb(cls, requests, tokenizer):
                    return cls.tokenize(requests, tokenizer)

                @classmethod
                def tokenize(cls, requests, tokenizer):
                    return cls()


            class VlmBatch(Batch):
                @classmethod
                def from_pb_processor(cls, requests, tokenizer, processor):
                    return cls.tokenize(requests, tokenizer, processor)

                @classmethod
                def tokenize(cls, requests, tokenizer, processor):
                    return cls()


            class TextBatch(Batch):
                @classmethod
                def tokenize(cls, requests, tokenizer, processor):
                    return cls()
        ''',
    })
    assert "HG002 pkg.batch.VlmBatch.tokenize" not in found  # built by its own factory
    assert "HG002 pkg.batch.TextBatch.tokenize" in errors(found)


def test_a_base_that_rebinds_its_methods_per_instance_proves_nothing(tmp_path: Path) -> None:
    found = findings(tmp_path, {
        "pkg/media.py": '''
            import inspect


            class MediaPipeline:
                def __init__(self):
                    for name in ("file_path",):
                        method = getattr(self, name)
                        if "item" not in inspect.signature(method).parameters:
                            setattr(self, name, self._compat(method))

                def _compat(self, method):
                    def shim(*args, item=None, **kwargs):
                        return method(*args, **kwargs)
                    return shim

                def store(self, request):
                    return self.file_path(request, item=None)

                def file_path(self, request, item=None):
                    return str(request)


            class Images:
                def store(self, request):
                    return self.file_path(request, item=None)

                def file_path(self, request, item=None):
                    return str(request)
        ''',
        "pkg/old.py": '''
            from pkg.media import Images, MediaPipeline


            class OldPipeline(MediaPipeline):
                def file_path(self, request):
                    return "old"


            class OldImages(Images):
                def file_path(self, request):
                    return "old"
        ''',
    })
    assert "HG002 pkg.old.OldPipeline.file_path" not in found  # the base adapts it
    assert "HG002 pkg.old.OldImages.file_path" in errors(found)


def test_dispatch_by_a_prefix_held_in_a_local_variable_reaches_its_family(
    tmp_path: Path,
) -> None:
    found = findings(tmp_path, {
        "pkg/printer.py": '''
            class Printer:
                def doprint(self, expr):
                    return self._print(expr)

                def _print(self, expr):
                    method = "_print_" + type(expr).__name__
                    return getattr(self, method)(expr)

                def _print_And(self, expr):
                    return self._print_Function(expr, sort=True)

                def _print_Function(self, expr, sort=False):
                    return str(expr)


            class MechanicsPrinter(Printer):
                def _print_Function(self, expr):
                    return "f"
        ''',
    })
    # _print_And is private, but the dispatch reaches it by name: its call is live.
    assert "HG002 pkg.printer.MechanicsPrinter._print_Function" in errors(found)


def test_a_constructor_that_runs_the_base_one_keeps_the_base_call_proven(
    tmp_path: Path,
) -> None:
    found = findings(tmp_path, {
        "pkg/encoder.py": '''
            class TransformerEncoder:
                def __init__(self, args):
                    self.layers = [self.build_layer(args, layer_idx=i) for i in range(2)]

                def build_layer(self, args, layer_idx=None):
                    return (args, layer_idx)


            class ConformerEncoder(TransformerEncoder):
                def __init__(self, args):
                    super().__init__(args)
                    self.layers = [self.build_layer(args) for _ in range(2)]

                def build_layer(self, args):
                    return args
        ''',
    })
    assert "HG002 pkg.encoder.ConformerEncoder.build_layer" in errors(found)


def test_registering_components_by_name_is_no_method_rebinding(tmp_path: Path) -> None:
    found = findings(tmp_path, {
        "pkg/pipe.py": '''
            class Pipeline:
                def register(self, **modules):
                    for name, module in modules.items():
                        setattr(self, name, module)

                def offload(self):
                    return self.to("cpu", silence_dtype_warnings=True)

                def to(self, device, silence_dtype_warnings=False):
                    return self


            class UnCLIP(Pipeline):
                def to(self, torch_device=None):
                    return self
        ''',
    })
    assert "HG002 pkg.pipe.UnCLIP.to" in errors(found)


def test_a_well_known_external_base_hides_only_the_names_it_defines(tmp_path: Path) -> None:
    found = findings(tmp_path, {
        "pkg/layer.py": '''
            import torch.nn as nn


            class LoraLayer:
                def update_layer(self, cfg):
                    return self.resolve_variant(use_dora=cfg.dora, use_qalora=cfg.qalora)

                def resolve_variant(self, *, use_dora, use_qalora=False, **kwargs):
                    return None


            class Linear4bit(nn.Module, LoraLayer):
                def __init__(self, cfg):
                    super().__init__()  # nn.Module.__init__
                    self.update_layer(cfg)  # LoraLayer's: nn.Module has no update_layer

                def resolve_variant(self, *, use_dora):
                    return None


            class Tracked(nn.Module, LoraLayer):
                def resolve_variant(self, *, use_dora):
                    return None

                def train(self, mode=True):  # nn.Module defines train: an override of it
                    return self
        ''',
    })
    assert "HG002 pkg.layer.Linear4bit.resolve_variant" in errors(found)
    assert "HG002 pkg.layer.Tracked.resolve_variant" in errors(found)
    assert not [k for k in found if k.endswith(".train")]


def test_paired_families_through_composition(tmp_path: Path) -> None:
    found = findings(tmp_path, {
        "pkg/wrappers.py": '''
            class Wrapper:
                def prep(self, prompts):
                    return prompts


            class VlmWrapper(Wrapper):
                def prep(self, prompts, images):
                    return prompts, images


            class AudioWrapper(Wrapper):
                def prep(self, prompts, *, sample_rate):
                    return prompts
        ''',
        "pkg/controllers.py": '''
            from pkg.wrappers import VlmWrapper, Wrapper


            class Controller:
                def __init__(self, model: Wrapper):
                    self.model = model

                def step(self, prompts):
                    return self.model.prep(prompts)


            class VlmController(Controller):
                model: VlmWrapper  # it drives VLM models

                def step(self, prompts, images=None):
                    return self.model.prep(prompts, images)


            class ImageController(Controller):  # no narrower declaration: the call pairs it
                def step(self, prompts, images=None):
                    return self.model.prep(prompts, images)
        ''',
    })
    # VlmWrapper is driven by VlmController (and ImageController), which pass the images;
    # nothing pairs with the audio wrapper, which the plain controller's call breaks.
    assert "HG002 pkg.wrappers.VlmWrapper.prep" not in found
    # Known only from the annotation ``model: Wrapper``: a warning that says so (issue 23).
    audio = found["HG002 pkg.wrappers.AudioWrapper.prep"]
    assert audio.severity is Severity.WARNING and "known only from its annotation" in audio.message


def test_a_call_on_a_member_that_its_declared_interface_refuses_proves_nothing(
    tmp_path: Path,
) -> None:
    found = findings(tmp_path, {
        "pkg/wrappers.py": '''
            from abc import ABC, abstractmethod


            class Wrapper(ABC):
                @abstractmethod
                def prep(self, prompts):
                    """Prepare the inputs."""


            class TextWrapper(Wrapper):
                def prep(self, prompts):
                    return prompts


            class EncoderDecoderWrapper(Wrapper):
                def prep(self, prompts, encoder_prompts=None, tokenizer=None):
                    return prompts, encoder_prompts


            class StreamWrapper(Wrapper):
                def prep(self, prompts, chunk):
                    return prompts
        ''',
        "pkg/controllers.py": '''
            from pkg.wrappers import Wrapper


            class EncoderDecoderController:
                def __init__(self, model: Wrapper):
                    self.model = model

                def step(self, prompts, encoder_prompts):
                    # ``Wrapper.prep`` takes no encoder prompts: written for one family only
                    return self.model.prep(prompts, encoder_prompts, tokenizer=None)


            class Controller:
                def __init__(self, model: Wrapper):
                    self.model = model

                def step(self, prompts):
                    return self.model.prep(prompts)  # the declared interface: binds every model
        ''',
    })
    assert "HG002 pkg.wrappers.TextWrapper.prep" not in found
    # The look-alike: a call the abstract declaration accepts still proves the drift.
    assert found["HG002 pkg.wrappers.StreamWrapper.prep"].severity is Severity.WARNING


def test_a_class_method_hook_overridden_by_a_plain_method(tmp_path: Path) -> None:
    found = findings(tmp_path, {
        "pkg/model.py": '''
            class DeployMixin:
                @classmethod
                def rename_weight(cls, name):
                    return name

                @classmethod
                def update_quant_config(cls, layers):
                    return [cls.rename_weight(name) for name in layers]


            class Thinker(DeployMixin):
                def rename_weight(self, name):  # cls.rename_weight(name) passes name as self
                    return "model." + name


            class Talker(DeployMixin):
                @classmethod
                def rename_weight(cls, name):
                    return "talker." + name
        ''',
    })
    thinker = found["HG002 pkg.model.Thinker.rename_weight"]
    assert thinker.severity is Severity.ERROR and "missing required 'name'" in thinker.message
    assert "HG002 pkg.model.Talker.rename_weight" not in found


def test_a_subclass_calling_its_own_hook_keeps_the_base_dispatch_proven(tmp_path: Path) -> None:
    found = findings(tmp_path, {
        "pkg/printing.py": '''
            class PrettyPrinter:
                def doprint(self, expr):
                    return self._print_And(expr)

                def _print_And(self, expr):
                    return self._print_Function(expr, sort=True)

                def _print_Function(self, expr, sort=False):
                    return str(expr)


            class VectorPrinter(PrettyPrinter):
                def _print_Derivative(self, expr):
                    return self._print_Function(expr)  # its own call fits its override

                def _print_Function(self, expr):
                    return "f"
        ''',
    })
    # Only an alternate constructor (a class method) is picked by code hookguard cannot see;
    # doprint -> _print_And still reaches the override with sort=True.
    assert "HG002 pkg.printing.VectorPrinter._print_Function" in errors(found)


def test_test_doubles_in_test_files_are_not_reported(tmp_path: Path) -> None:
    engine = '''
        class Engine:
            def run(self):
                self.step(1, flush=True)
                return self.report()

            def step(self, n, flush=False):
                self.steps = n

            def report(self):
                return self.steps
    '''
    double = '''
        from pkg.engine import Engine


        class DummyEngine(Engine):  # a module-level double: replaces step, never sets steps
            def step(self, n, flush=False):
                self.calls = n


        class MockEngine(Engine):  # a module-level double whose step cannot take flush=
            def step(self, n):
                self.steps = n


        def test_run():
            class Local(Engine):  # a double inside a test: the test decides what runs
                def step(self, n):
                    return None
            assert Local
    '''
    found = findings(tmp_path, {"pkg/engine.py": engine, "tests/test_engine.py": double})
    assert not [k for k in found if "Engine" in k or "Local" in k]
    # The same classes outside a test file are reported.
    found = findings(tmp_path / "app", {"pkg/engine.py": engine, "pkg/doubles.py": double})
    assert found["HG003 pkg.doubles.DummyEngine.step"].severity is Severity.WARNING
    assert "HG002 pkg.doubles.MockEngine.step" in errors(found)
    assert "HG002 pkg.doubles.test_run.<locals>.Local.step" in errors(found)


def test_a_test_class_pytest_never_collects_runs_nothing(tmp_path: Path) -> None:
    suite = '''
        class PipelineTesterMixin:
            def get_dummy_inputs(self, device, seed=0):
                return {"seed": seed}

            def test_inference(self):
                assert self.get_dummy_inputs(device="cpu")


        class InpaintingPipelineFastTests(PipelineTesterMixin):  # not ``Test*``: never collected
            def get_dummy_inputs(self, seed=0):
                return {"seed": seed}


        class TestImg2ImgPipeline(PipelineTesterMixin):  # collected: the call runs
            def get_dummy_inputs(self, seed=0):
                return {"seed": seed}
    '''
    found = findings(tmp_path, {"tests/__init__.py": "", "tests/test_pipelines.py": suite})
    never = "HG002 tests.test_pipelines.InpaintingPipelineFastTests.get_dummy_inputs"
    assert never not in errors(found)
    assert "HG002 tests.test_pipelines.TestImg2ImgPipeline.get_dummy_inputs" in errors(found)


LAYER = '''
class LoraLayer:
    def update_layer(self, name, init):
        if init == "ga":
            self.ga_init(name)  # public, but only this step calls it
        self.reset_parameters(name, init)

    def ga_init(self, name):
        self.reset_parameters(name, init=True)

    def reset_parameters(self, name, init):
        return name, init
'''


def test_a_public_step_only_replaced_code_calls_is_no_entry_point(tmp_path: Path) -> None:
    found = findings(tmp_path, {
        "pkg/lora.py": LAYER,
        "pkg/ada.py": '''
            from pkg.lora import LoraLayer


            class AdaLayer(LoraLayer):
                def update_layer(self, name, init):  # replaced: ga_init never runs here
                    self.reset_parameters(name)

                def reset_parameters(self, name):
                    return name


            class LoHaLayer(LoraLayer):  # keeps update_layer: ga_init's call is live
                def reset_parameters(self, name):
                    return name
        ''',
    })
    assert "HG002 pkg.ada.AdaLayer.reset_parameters" not in found
    assert "HG002 pkg.ada.LoHaLayer.reset_parameters" in errors(found)


def test_public_methods_calling_each_other_stay_entry_points(tmp_path: Path) -> None:
    found = findings(tmp_path, {
        "pkg/visit.py": '''
            class Visitor:
                def visit(self, node):
                    return self.generic_visit(node)

                def generic_visit(self, node):
                    for child in node:
                        self.visit(child)
                    return self.leave(node, depth=0)

                def leave(self, node, depth):
                    return node


            class Printer(Visitor):
                def leave(self, node):
                    return node
        ''',
    })
    assert "HG002 pkg.visit.Printer.leave" in errors(found)


RESAMPLE_V1 = '''
class Grouped:
    def run(self, freq):
        return self.resample(freq)

    def resample(self, freq):
        bins = [freq] * 3
        return {"freq": freq, "bins": bins}
'''


def test_a_method_that_calls_the_new_name_or_that_its_class_calls_is_no_stale_override(
    git_repo: Callable[..., GitRepo],
) -> None:
    subclasses = '''
        from pkg.grouped import Grouped


        class Public(Grouped):
            def resample(self, freq):  # public API over the renamed hook
                return self.{new}(freq)


        class SelfUser(Grouped):
            def resample(self, freq):
                return freq

            def describe(self):  # runs it, but the base's run() no longer does: still stale
                return self.resample("1W")


        class Stale(Grouped):
            def resample(self, freq):
                return freq.upper()
    '''
    repo = git_repo()
    repo.commit("grouped", {"pkg/__init__.py": "", "pkg/grouped.py": RESAMPLE_V1,
                            "pkg/sub.py": textwrap.dedent(subclasses.format(new="run"))})
    repo.commit("resample becomes _resample", {
        "pkg/grouped.py": RESAMPLE_V1.replace("resample", "_resample"),
        "pkg/sub.py": textwrap.dedent(subclasses.format(new="_resample")),
    })
    result = audit([repo.root], Options(use_cache=False))
    stale = {f.symbol: f.severity for f in result.findings if f.code == "HG001"}
    assert stale == {"pkg.sub.Stale.resample": Severity.ERROR,
                     "pkg.sub.SelfUser.resample": Severity.ERROR}


BUILDER_V1 = '''
class Builder:
    def build(self, docs):
        self.init()
        return [self.write(doc) for doc in docs]

    def init(self):
        return None

    def write(self, doc):
        return doc

    def init_templates(self):  # an API method: nothing here calls it
        self.templates = {"page": "{body}"}
        return self.templates
'''


def test_a_renamed_api_method_its_own_class_calls_is_no_stale_override(
    git_repo: Callable[..., GitRepo],
) -> None:
    builders = '''
        from pkg.builder import Builder


        class HTMLBuilder(Builder):
            def init(self):
                self.init_templates()  # its own method: it runs

            def init_templates(self):
                self.templates = {"page": "<p>{body}</p>"}
                return self.templates


        class TextBuilder(Builder):
            def init_templates(self):  # nothing calls it any more
                self.templates = {"page": "{body}"}
                return self.templates
    '''
    repo = git_repo()
    repo.commit("builder", {"pkg/__init__.py": "", "pkg/builder.py": BUILDER_V1,
                            "pkg/html.py": textwrap.dedent(builders)})
    repo.commit("init_templates becomes create_template_bridge", {
        "pkg/builder.py": BUILDER_V1.replace("init_templates", "create_template_bridge")})
    result = audit([repo.root], Options(use_cache=False))
    stale = {f.symbol: f.severity for f in result.findings if f.code == "HG001"}
    assert stale == {"pkg.html.TextBuilder.init_templates": Severity.WARNING}


def test_a_test_that_defines_a_removed_hook_the_framework_refuses_is_no_stale_override(
    git_repo: Callable[..., GitRepo],
) -> None:
    module = '''
class Module:
    def fit(self):
        for batch in range(2):
            self.training_step(batch)
        self.training_epoch_end()

    def training_step(self, batch):
        return batch

    def training_epoch_end(self):
        return None
'''
    validator = ("def check(model):\n"
                 "    if callable(getattr(model, 'training_epoch_end', None)):\n"
                 "        raise NotImplementedError('training_epoch_end was removed')\n")
    tests = '''
from pkg.module import Module


class EpochModel(Module):  # a model the tests share: its override silently stopped running
    def training_epoch_end(self):
        return "done"


def test_legacy_hook_is_refused():
    class LegacyModel(Module):  # defined to see the validator refuse it
        def training_epoch_end(self):
            return None

    assert LegacyModel
'''
    repo = git_repo()
    repo.commit("module", {"pkg/__init__.py": "", "pkg/module.py": module,
                           "tests/__init__.py": "", "tests/test_module.py": tests})
    repo.commit("Remove training_epoch_end", {
        "pkg/module.py": module.replace("        self.training_epoch_end()\n", "").replace(
            "\n    def training_epoch_end(self):\n        return None\n", ""),
        "pkg/validator.py": validator,
    })
    result = audit([repo.root], Options(use_cache=False))
    stale = {f.symbol for f in result.findings if f.code == "HG001"}
    assert stale == {"tests.test_module.EpochModel.training_epoch_end"}


PIPELINE = '''
class Pipeline:
    def remove_all_hooks(self):
        self._all_hooks = []

    def enable_offload(self, gpu_id=None, device="cuda"):
        self.remove_all_hooks()
        for model in ("unet", "vae"):
            self._all_hooks.append((model, device))

    def maybe_free_hooks(self):
        if not hasattr(self, "_all_hooks") or len(self._all_hooks) == 0:
            return  # offloading was never enabled
        self.enable_offload(device="cuda")

    def __call__(self, prompt):
        self.maybe_free_hooks()
        return prompt
'''


def test_a_call_behind_an_exit_every_instance_takes_is_no_error(tmp_path: Path) -> None:
    found = findings(tmp_path, {
        "pkg/pipeline.py": PIPELINE,
        "pkg/music.py": '''
            from pkg.pipeline import Pipeline


            class MusicPipeline(Pipeline):  # never fills _all_hooks: the exit is always taken
                def enable_offload(self, gpu_id=0):
                    self.final_hook = gpu_id


            class HookedPipeline(Pipeline):  # fills it itself: the call may run, and fail
                def enable_offload(self, gpu_id=0):
                    self._all_hooks = [gpu_id]
        ''',
    })
    assert "HG002 pkg.music.MusicPipeline.enable_offload" not in found
    # It runs only once the instance's state passes the exit: no proof, a warning that says so
    # (an error needs a call that runs whenever its method does, docs/design.md).
    hooked = found["HG002 pkg.music.HookedPipeline.enable_offload"]
    assert hooked.severity is Severity.WARNING
    assert "the call runs only when not (not hasattr(self, '_all_hooks')" in hooked.message


def test_a_call_after_a_skip_on_a_property_that_returns_none_is_no_error(
    tmp_path: Path,
) -> None:
    found = findings(tmp_path, {
        "tests/__init__.py": "",
        "tests/compile.py": '''
            import pytest


            class CompileTesterMixin:
                @property
                def different_shapes(self):
                    return None

                def get_dummy_inputs(self, height=8, width=8):
                    return height, width

                def test_compile_on_different_shapes(self):
                    if self.different_shapes is None:
                        pytest.skip("no shapes to compile for")
                    for height, width in self.different_shapes:
                        self.get_dummy_inputs(height=height, width=width)
        ''',
        "tests/test_models.py": '''
            from tests.compile import CompileTesterMixin


            class TestFlowCompile(CompileTesterMixin):  # keeps the None: the test skips
                def get_dummy_inputs(self):
                    return 8, 8


            class TestFluxCompile(CompileTesterMixin):  # gives shapes: the call runs
                @property
                def different_shapes(self):
                    return [(4, 4)]

                def get_dummy_inputs(self):
                    return 4, 4
        ''',
    })
    assert "HG002 tests.test_models.TestFlowCompile.get_dummy_inputs" not in found
    # The call runs only past the skip: a warning that names the state it depends on.
    flux = found["HG002 tests.test_models.TestFluxCompile.get_dummy_inputs"]
    assert flux.severity is Severity.WARNING
    assert "runs only when not (self.different_shapes is None)" in flux.message


BEAM = '''
class Beam:
    def __init__(self, length):
        self.length = length
        self._loads = []

    def solve(self):
        self._reactions = {"R": sum(self._loads)}
        self._jumps = {"J": 0}

    @property
    def jumps(self):
        """Valid after solve()."""
        return self._jumps

    def reaction(self):
        return self._reactions["R"]
'''


def test_a_field_read_only_by_an_accessor_nothing_uses_is_no_proof(tmp_path: Path) -> None:
    found = findings(tmp_path, {
        "pkg/beam.py": BEAM,
        "pkg/beam3d.py": '''
            from pkg.beam import Beam


            class Beam3D(Beam):
                def solve(self):
                    self._reactions = {"R": 0}  # 3D has no jumps: `jumps` is 2D-only API
        ''',
        "pkg/plotted.py": '''
            from pkg.beam import Beam


            class PlottedBeam(Beam):
                def solve(self):
                    self._reactions = {"R": 0}

                def plot(self):
                    return list(self.jumps)  # the family itself uses the accessor
        ''',
        "pkg/forgetful.py": '''
            from pkg.beam import Beam


            class Forgetful(Beam):
                def solve(self):
                    self._jumps = {}  # reaction() reads _reactions, which nothing sets
        ''',
    })
    assert "HG003 pkg.beam3d.Beam3D.solve" not in found
    plotted = found["HG003 pkg.plotted.PlottedBeam.solve"]
    assert plotted.severity is Severity.WARNING
    assert [m["field"] for m in plotted.evidence["missing"]] == ["_jumps"]  # type: ignore[union-attr]
    assert found["HG003 pkg.forgetful.Forgetful.solve"].severity is Severity.WARNING


def test_an_override_that_refuses_some_configurations_is_no_proof(tmp_path: Path) -> None:
    found = findings(tmp_path, {
        "pkg/vision.py": '''
            class VisionModel:
                def __init__(self, with_llm):
                    self.with_llm = with_llm

                def build_model(self):
                    self.vl_model = object()
                    self.model = self.vl_model

                def forward(self, images):
                    return self.model(images)
        ''',
        "pkg/phi3.py": '''
            from pkg.vision import VisionModel


            class Phi3(VisionModel):
                def build_model(self):
                    if self.with_llm:
                        self.vl_model = object()  # the whole model: forward() is never used
                    else:
                        raise NotImplementedError("the vision-only path is not supported")


            class Partial(VisionModel):
                def build_model(self):
                    self.vl_model = object()  # forgets model, which forward() reads
        ''',
    })
    assert "HG003 pkg.phi3.Phi3.build_model" not in found
    assert found["HG003 pkg.phi3.Partial.build_model"].severity is Severity.WARNING


SPAWN = {
    "pkg/ddp.py": '''
        class DDPSpawn:
            def start_training(self, trainer):
                self.spawn(self.new_process, trainer)

            def spawn(self, function, *args):
                return self.get_mp_spawn_kwargs()

            def get_mp_spawn_kwargs(self):
                return {}

            def new_process(self, trainer):
                return trainer
    ''',
    "pkg/tpu.py": '''
        from pkg.ddp import DDPSpawn


        class TPUSpawn(DDPSpawn):
            """Replaces the only caller of spawn() with its own launcher."""

            def start_training(self, trainer):
                return self.get_mp_spawn_kwargs(trainer)

            def get_mp_spawn_kwargs(self, trainer):
                return {"nprocs": 8}
    ''',
    "pkg/seed.py": '''
        import numpy as np


        def worker_init(seed):
            ss = np.random.SeedSequence([seed])
            torch_ss, stdlib_ss = ss.spawn(2)  # numpy's spawn, not DDPSpawn's
            return torch_ss
    ''',
    "tests/test_gather.py": '''
        import torch


        def test_gather():
            torch.multiprocessing.spawn(print, nprocs=2)  # torch's spawn
    ''',
}


def test_a_method_named_only_on_other_packages_objects_is_not_named_outside(
    tmp_path: Path,
) -> None:
    assert "HG002 pkg.tpu.TPUSpawn.get_mp_spawn_kwargs" not in errors(findings(tmp_path, SPAWN))


def test_a_method_named_on_an_object_of_unknown_origin_stays_named_outside(
    tmp_path: Path,
) -> None:
    found = findings(tmp_path, {**SPAWN, "pkg/launch.py": '''
        def launch(plugin, trainer):
            plugin.spawn(plugin.new_process, trainer)  # any plugin: a TPUSpawn too
    '''})
    assert "HG002 pkg.tpu.TPUSpawn.get_mp_spawn_kwargs" in errors(found)


def test_a_method_named_on_what_the_checkout_builds_stays_named_outside(tmp_path: Path) -> None:
    found = findings(tmp_path, {**SPAWN, "pkg/factory.py": '''
        from pkg.tpu import TPUSpawn


        def make_plugin():
            return TPUSpawn()
    ''', "pkg/launch.py": '''
        import pkg.factory


        def launch(trainer):
            plugin = pkg.factory.make_plugin()
            plugin.spawn(plugin.new_process, trainer)
    '''})
    assert "HG002 pkg.tpu.TPUSpawn.get_mp_spawn_kwargs" in errors(found)


LORA = {
    "pkg/layer.py": '''
        class LoraLayer:
            def update_layer(self, name):
                self.reset(name)

            def update_layer_conv2d(self, name, init):
                self.reset(name, init)

            def reset(self, name, init=True):
                return name


        class Conv2d(LoraLayer):
            def __init__(self, name):
                self.update_layer_conv2d(name, True)
    ''',
    "pkg/ada.py": '''
        from pkg.layer import LoraLayer


        class AdaLayer(LoraLayer):
            def update_layer(self, name):
                self.reset(name)

            def reset(self, name):  # the conv2d step is Conv2d's: it never runs for AdaLayer
                return name
    ''',
}


def _model(narrowed_to: str) -> str:
    return f'''
        from pkg.layer import Conv2d, LoraLayer


        class Model:
            def replace(self, target, name):
                if isinstance(target, {narrowed_to}):
                    target.update_layer_conv2d(name, True)
    '''


def test_a_public_step_other_classes_drive_by_isinstance_is_no_entry_point(
    tmp_path: Path,
) -> None:
    found = findings(tmp_path, {**LORA, "pkg/model.py": _model("Conv2d")})
    assert "HG002 pkg.ada.AdaLayer.reset" not in errors(found)


def test_a_public_step_driven_for_the_whole_family_stays_an_entry_point(tmp_path: Path) -> None:
    found = findings(tmp_path, {**LORA, "pkg/model.py": _model("LoraLayer")})
    assert "HG002 pkg.ada.AdaLayer.reset" in errors(found)


def _tuner(probe: str) -> dict[str, str]:
    return {
        "pkg/tuner.py": f'''
            class BaseTuner:
                def inject(self, config, name):
                    self._create_and_replace(config, name)
                    if {probe}:
                        self._inject_parameters(config, name)

                def _inject_parameters(self, config, name):
                    for parameter in config.target_parameters:
                        self._create_and_replace(config, name, parameter_name=parameter)

                def _create_and_replace(self, config, name, parameter_name=None):
                    return name
        ''',
        "pkg/ia3.py": '''
            from pkg.tuner import BaseTuner


            class IA3Model(BaseTuner):
                def _create_and_replace(self, config, name):
                    return name
        ''',
    }


def test_a_call_only_a_feature_probe_on_another_object_reaches_proves_nothing(
    tmp_path: Path,
) -> None:
    found = findings(tmp_path, _tuner('getattr(config, "target_parameters", [])'))
    assert "HG002 pkg.ia3.IA3Model._create_and_replace" not in errors(found)


def test_a_call_behind_a_plain_attribute_test_is_still_proven(tmp_path: Path) -> None:
    found = findings(tmp_path, _tuner("config.target_parameters"))
    assert "HG002 pkg.ia3.IA3Model._create_and_replace" in errors(found)
