"""Classes of real incidents hookguard used to miss: each fires, and a look-alike does not."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

from hookguard.engine import Options, audit
from hookguard.findings import Finding, Severity
from hookguard.gate import run_gate
from tests.conftest import GitRepo, write_tree


def findings(root: Path, **options: object) -> dict[str, Finding]:
    result = audit([root], Options(use_cache=False, history=False, **options))  # type: ignore[arg-type]
    return {f"{f.code} {f.symbol}": f for f in result.findings}


def errors(found: dict[str, Finding]) -> set[str]:
    return {key for key, f in found.items() if f.severity is Severity.ERROR}


RECEIVER = '''
class Receiver:
    def run(self, chunks):
        for chunk in chunks:
            self._on_chunk(chunk, final=chunk is chunks[-1])

    def _on_chunk(self, chunk, final=False):
        return chunk
'''


def test_bases_in_implicit_namespace_packages_resolve(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {
        "python/pkg/__init__.py": "",
        "python/pkg/srt/__init__.py": "",
        # comm/ has no __init__.py: an implicit namespace package (PEP 420)
        "python/pkg/srt/comm/encoder/__init__.py": "",
        "python/pkg/srt/comm/encoder/receiver.py": RECEIVER,
        "python/pkg/srt/comm/encoder/util.py": "from .receiver import Receiver\n",
        "python/pkg/models/__init__.py": "",
        "python/pkg/models/mm.py": '''
            from pkg.srt.comm.encoder.receiver import Receiver
            from pkg.srt.comm.encoder import util


            class MultimodalReceiver(Receiver):
                def _on_chunk(self, chunk):
                    return chunk


            class ViaRelative(util.Receiver):
                def _on_chunk(self, chunk, final=False):
                    return chunk
        ''',
    })
    result = audit([root], Options(use_cache=False, history=False))
    assert not [e for e in result.errors if "cannot resolve" in e.message], result.errors
    found = {f"{f.code} {f.symbol}": f for f in result.findings}
    assert "HG002 pkg.models.mm.MultimodalReceiver._on_chunk" in errors(found)
    assert "HG002 pkg.models.mm.ViaRelative._on_chunk" not in found


def test_a_package_imported_under_two_names_keeps_the_one_most_imports_use(
    tmp_path: Path,
) -> None:
    root = write_tree(tmp_path / "repo", {
        # A src layout: src/ has no __init__.py, and one test imports ``src.pkg`` from the root.
        "src/pkg/__init__.py": "",
        "src/pkg/receiver.py": RECEIVER,
        "src/pkg/streams.py": "from pkg.receiver import Receiver\n",
        "examples/audio.py": '''
            from pkg.receiver import Receiver


            class AudioReceiver(Receiver):
                def _on_chunk(self, chunk):
                    return chunk
        ''',
        "tests/test_receiver.py": '''
            from src.pkg.receiver import Receiver


            class TestReceiver(Receiver):
                def _on_chunk(self, chunk, final=False):
                    return chunk

                def test_run(self):
                    assert self.run([1]) is None
        ''',
    })
    result = audit([root], Options(use_cache=False, history=False))
    assert not [e for e in result.errors if "cannot resolve" in e.message], result.errors
    found = {f"{f.code} {f.symbol}": f for f in result.findings}
    assert "HG002 audio.AudioReceiver._on_chunk" in errors(found)
    assert not [k for k in found if "TestReceiver" in k]  # resolved through the other name


SCHEDULER_V1 = '''
from pkg.worker import Worker


class Scheduler:
    def __init__(self, worker: Worker):
        self.worker = worker

    def step(self, batch):
        return self.worker.forward_batch(batch)
'''


def test_drift_through_composition_fires_in_check_mode(git_repo: Callable[..., GitRepo]) -> None:
    repo = git_repo()
    repo.commit("worker family", {
        "pkg/__init__.py": "",
        "pkg/worker.py": "class Worker:\n"
                         "    def forward_batch(self, batch, proxy=None):\n"
                         "        return batch\n",
        "pkg/scheduler.py": SCHEDULER_V1,
        "pkg/spec.py": "from pkg.worker import Worker\n\n\n"
                       "class DraftWorker(Worker):\n"
                       "    def forward_batch(self, batch):\n        return batch\n\n\n"
                       "class EagleWorker(Worker):\n"
                       "    def forward_batch(self, batch, **kwargs):\n        return batch\n",
    })
    base = repo.git("rev-parse", "HEAD").strip()
    repo.commit("Pass pipeline proxies to the worker", {
        "pkg/scheduler.py": SCHEDULER_V1.replace("forward_batch(batch)",
                                                 "forward_batch(batch, proxy=[])")})
    result = run_gate(repo.root, base, "HEAD", False, Options(use_cache=False))
    found = {f"{f.code} {f.symbol}": f for f in result.findings}
    # ``worker: Worker`` is an annotation: which worker the scheduler holds is not proven, so
    # the drift is a warning (issue 23); constructed into the member, it is an error.
    assert set(found) == {"HG002 pkg.spec.DraftWorker.forward_batch"} and not errors(found)
    assert "self.worker" in found["HG002 pkg.spec.DraftWorker.forward_batch"].message
    repo.commit("The scheduler builds its draft worker", {
        "pkg/scheduler.py": SCHEDULER_V1.replace(
            "from pkg.worker import Worker", "from pkg.spec import DraftWorker").replace(
            "def __init__(self, worker: Worker):\n        self.worker = worker",
            "def __init__(self):\n        self.worker = DraftWorker()").replace(
            "forward_batch(batch)", "forward_batch(batch, proxy=[])")})
    built = run_gate(repo.root, base, "HEAD", False, Options(use_cache=False))
    found = {f"{f.code} {f.symbol}": f for f in built.findings}
    assert set(errors(found)) == {"HG002 pkg.spec.DraftWorker.forward_batch"}


def test_calls_on_members_of_unknown_class_are_not_bound(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {
        "pkg/__init__.py": "",
        "pkg/worker.py": "class Worker:\n"
                         "    def forward_batch(self, batch, proxy=None):\n"
                         "        return batch\n\n\n"
                         "class DraftWorker(Worker):\n"
                         "    def forward_batch(self, batch):\n        return batch\n",
        "pkg/scheduler.py": "from pkg.worker import make_worker\n\n\n"
                            "class Scheduler:\n"
                            "    def __init__(self, worker):\n"
                            "        self.worker = worker\n"
                            "        self.other = make_worker()\n\n"
                            "    def step(self, batch):\n"
                            "        self.other.forward_batch(batch, proxy=1)\n"
                            "        return self.worker.forward_batch(batch, proxy=[])\n",
    })
    assert not [f for f in findings(root).values() if f.code == "HG002"]


def test_each_copy_of_a_package_resolves_within_itself(tmp_path: Path) -> None:
    copy = {
        "tgi/__init__.py": "",
        "tgi/models/__init__.py": "",
        "tgi/models/batch.py": "class Batch:\n"
                               "    def prepare(self):\n        return self\n\n"
                               "    def run(self):\n        return self.prepare()\n",
        "tgi/models/vlm.py": "from tgi.models.batch import Batch\n\n\n"
                             "class VlmBatch(Batch):\n"
                             "    def prepare(self):\n"
                             "        return super().prepare()\n",
    }
    gaudi = {f"backends/gaudi/server/{k}": v.replace("def prepare(self)",
                                                     "def prepare(self, cache, slots)")
             for k, v in copy.items() if k.endswith("batch.py") or k.endswith("__init__.py")}
    root = write_tree(tmp_path / "repo", {
        **{f"server/{k}": v for k, v in copy.items()},
        **gaudi,
        "backends/gaudi/server/tgi/models/vlm.py": "from tgi.models.batch import Batch\n\n\n"
                                                   "class VlmBatch(Batch):\n"
                                                   "    def prepare(self):\n"
                                                   "        return super().prepare()\n",
    })
    found = findings(root)
    # server/'s copy fits its own Batch; the Gaudi copy's VlmBatch really drops two arguments.
    assert "HG002 tgi.models.vlm.VlmBatch.prepare" not in found
    gaudi_key = "HG002 backends.gaudi.server.tgi.models.vlm.VlmBatch.prepare"
    assert gaudi_key in errors(found), found


MIXIN_V1 = '''
class Mixin:
    def run(self):
        return self.on_step(1)

    def on_step(self, x):
        return x


class Mid(Mixin):
    pass


class Base(Mid):
    pass
'''
MIXIN_V2 = MIXIN_V1.replace("on_step", "on_batch")

OVERRIDES = {
    "examples/train.py": "from pkg.base import Base\n\n\n"
                         "class ExampleCallback(Base):\n"
                         "    def on_step(self, x):\n        return x\n",
    "pkg/factory.py": "from pkg.base import Base\n\n\n"
                      "def make():\n"
                      "    class Local(Base):\n"
                      "        def on_step(self, x):\n            return x\n"
                      "    return Local()\n",
    "tests/test_cb.py": "import unittest\nfrom pkg.base import Base\n\n\n"
                        "class CallbackTest(Base, unittest.TestCase):\n"
                        "    def on_step(self, x):\n        return x\n",
}


def gate(repo: GitRepo, base: str) -> dict[str, Finding]:
    result = run_gate(repo.root, base, "HEAD", False, Options(use_cache=False))
    return {f"{f.code} {f.symbol}": f for f in result.findings}


def test_a_rename_in_a_mixin_reaches_examples_local_classes_and_tests(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = git_repo()
    repo.commit("v1", {"pkg/__init__.py": "", "pkg/base.py": MIXIN_V1, **OVERRIDES})
    base = repo.git("rev-parse", "HEAD").strip()
    repo.commit("Rename on_step to on_batch", {"pkg/base.py": MIXIN_V2})
    assert errors(gate(repo, base)) == {
        "HG001 train.ExampleCallback.on_step",
        "HG001 pkg.factory.make.<locals>.Local.on_step",
        "HG001 test_cb.CallbackTest.on_step",
    }


def test_a_rename_that_updates_every_override_reports_nothing(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = git_repo()
    repo.commit("v1", {"pkg/__init__.py": "", "pkg/base.py": MIXIN_V1, **OVERRIDES})
    base = repo.git("rev-parse", "HEAD").strip()
    repo.commit("Rename on_step to on_batch everywhere", {
        "pkg/base.py": MIXIN_V2,
        **{path: text.replace("on_step", "on_batch") for path, text in OVERRIDES.items()},
    })
    assert gate(repo, base) == {}


HOOKS_V1 = '''
class Base:
    def run(self):
        return self.on_step(1)

    def on_step(self, x):
        return x

    @classmethod
    def build(cls, cfg):
        return cls.make(cfg)

    @classmethod
    def make(cls, cfg):
        return cls()

    def go(self):
        return self.norm(2)

    @staticmethod
    def norm(v):
        return v
'''
HOOKS_V2 = (HOOKS_V1.replace("self.on_step(1)", "self.on_step(1, final=True)")
            .replace("def on_step(self, x)", "def on_step(self, x, final=False)")
            .replace("cls.make(cfg)", "cls.make(cfg, device=None)")
            .replace("def make(cls, cfg)", "def make(cls, cfg, device=None)")
            .replace("self.norm(2)", "self.norm(2, eps=1)")
            .replace("def norm(v)", "def norm(v, eps=0)"))
SUBCLASS = '''
from pkg.base import Base


class Plugin(Base):
    def on_step(self, x):
        return x

    @classmethod
    def make(cls, cfg):
        return cls()

    @staticmethod
    def norm(v):
        return v


class Tolerant(Base):
    def on_step(self, x, **kwargs):
        return x

    @classmethod
    def make(cls, cfg, *args, **kwargs):
        return cls()

    @staticmethod
    def norm(v, eps=0):
        return v
'''


def test_new_keywords_reach_plain_class_and_static_method_hooks(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = git_repo()
    repo.commit("v1", {"pkg/__init__.py": "", "pkg/base.py": HOOKS_V1, "pkg/plugin.py": SUBCLASS})
    base = repo.git("rev-parse", "HEAD").strip()
    repo.commit("Pass final=, device= and eps=", {"pkg/base.py": HOOKS_V2})
    assert errors(gate(repo, base)) == {
        "HG002 pkg.plugin.Plugin.on_step",
        "HG002 pkg.plugin.Plugin.make",
        "HG002 pkg.plugin.Plugin.norm",
    }


def test_a_constructed_member_holds_exactly_its_class(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {
        "pkg/__init__.py": "",
        "pkg/proc.py": "class Processor:\n"
                       "    def preprocess(self, image, height=None):\n        return image\n\n\n"
                       "class DepthProcessor(Processor):\n"
                       "    def preprocess(self, rgb, depth):\n        return rgb\n\n\n"
                       "class FastProcessor(Processor):\n"
                       "    def preprocess(self, image):\n        return image\n",
        "pkg/pipe.py": "from pkg.proc import FastProcessor, Processor\n\n\n"
                       "class Pipeline:\n"
                       "    def __init__(self):\n"
                       "        self.processor = Processor()\n"
                       "        self.fast = FastProcessor()\n\n"
                       "    def __call__(self, image):\n"
                       "        self.fast.preprocess(image, height=64)\n"
                       "        return self.processor.preprocess(image, height=64)\n",
    })
    found = findings(root)
    # Only a Processor is ever behind self.processor; self.fast is a FastProcessor, whose
    # override drops the height= that Processor.preprocess accepts.
    assert errors(found) == {"HG002 pkg.proc.FastProcessor.preprocess"}


ROOT_TEST = '''
import unittest


class TestRoot(unittest.TestCase):
    def setUp(self):
        self.obj = self._get_obj()

    def _get_obj(self):
        return 1


class TestA(TestRoot):
    def _get_obj(self):
        return 2


class TestB(TestA):
    def _get_obj(self):
        return 3


class TestC(TestB):
    def _get_obj(self):
        return 4
'''


def test_a_same_file_test_hierarchy_renamed_halfway_down(git_repo: Callable[..., GitRepo]) -> None:
    repo = git_repo()
    repo.commit("v1", {"tests/test_offsite.py": ROOT_TEST})
    base = repo.git("rev-parse", "HEAD").strip()
    stub = "def _get_obj(self):\n        return {}"
    renamed = (ROOT_TEST.replace("self._get_obj()", "dict(self._get_args())")
               .replace(stub.format(1), stub.format(1).replace("_get_obj", "_get_args"))
               .replace(stub.format(2), stub.format(2).replace("_get_obj", "_get_args"))
               .replace("return 4", "return 5"))  # the commit even edits a stale override
    repo.commit("Build the object from _get_args", {"tests/test_offsite.py": renamed})
    # TestB's override is stale; TestC's overrides TestB's, which nothing calls either: the
    # whole chain is dead (issue 23: it was once reported at its first link only).
    assert errors(gate(repo, base)) == {"HG001 test_offsite.TestB._get_obj",
                                        "HG001 test_offsite.TestC._get_obj"}


PIPELINE_V1 = '''
def later(fn, *args):
    return fn(*args)


class MediaPipeline:
    def process(self, request):
        return later(self.download, request)  # a bound method passed on, not called here

    def download(self, request):
        return request
'''


def test_a_removed_hook_the_base_passed_as_a_bound_method(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = git_repo()
    repo.commit("v1", {
        "pkg/__init__.py": "",
        "pkg/media.py": PIPELINE_V1,
        "pkg/test_media.py": "from pkg.media import MediaPipeline\n\n\n"
                             "class Mocked(MediaPipeline):\n"
                             "    def download(self, request):\n"
                             "        self.seen = request\n"
                             "        return super().download(request)\n",
    })
    base = repo.git("rev-parse", "HEAD").strip()
    repo.commit("Download through the crawler engine", {"pkg/media.py": PIPELINE_V1.replace(
        "return later(self.download, request)  # a bound method passed on, not called here",
        "return self.crawler.fetch(request)").replace(
        "\n    def download(self, request):\n        return request\n", "\n")})
    found = gate(repo, base)
    assert errors(found) == {"HG001 pkg.test_media.Mocked.download"}


WRAPPER_V1 = '''
class Module:
    def predict(self, batch):
        return batch


class Wrapper:
    def __init__(self, module: Module):
        self.module = module

    def forward(self, batch):
        return self.module.predict(batch)
'''


def test_a_hook_renamed_where_its_only_caller_is_a_composed_member(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = git_repo()
    repo.commit("v1", {
        "pkg/__init__.py": "",
        "pkg/core.py": WRAPPER_V1,
        "tests/test_amp.py": "from pkg.core import Module\n\n\n"
                             "class AMPModel(Module):\n"
                             "    def predict(self, batch):\n        return batch * 2\n",
    })
    base = repo.git("rev-parse", "HEAD").strip()
    repo.commit("Rename predict to predict_step",
                {"pkg/core.py": WRAPPER_V1.replace("predict(", "predict_step(")})
    finding = gate(repo, base)["HG001 test_amp.AMPModel.predict"]
    assert finding.severity is Severity.ERROR


MODULE_V1 = '''
class Module:
    def validation_epoch_end(self, outputs):
        return outputs

    def test_epoch_end(self, outputs):
        return outputs
'''
LOOP_V1 = '''
def call_hook(module, name, *args):
    return getattr(module, name)(*args)


class Loop:
    def __init__(self, testing):
        self.testing = testing

    def end(self, module, outputs):
        name = "test_epoch_end" if self.testing else "validation_epoch_end"
        return call_hook(module, name, outputs)
'''
LOOP_V2 = '''
from pkg.validator import check_removed


class Loop:
    def end(self, module, outputs):
        check_removed(module)
        return outputs
'''
VALIDATOR = '''
def check_removed(module, stage="val"):
    name = "validation_epoch_end" if stage == "val" else "test_epoch_end"
    if callable(getattr(module, name, None)):  # looked up by name, to refuse it
        raise NotImplementedError(f"{name} was removed")
'''


def test_a_removed_hook_the_framework_called_by_name(git_repo: Callable[..., GitRepo]) -> None:
    repo = git_repo()
    repo.commit("v1", {
        "pkg/__init__.py": "",
        "pkg/module.py": MODULE_V1,
        "pkg/loop.py": LOOP_V1,
        "examples/seg.py": "from pkg.module import Module\n\n\n"
                           "class SegModel(Module):\n"
                           "    def validation_epoch_end(self, outputs):\n        return 1\n",
        "tests/test_ipu.py": "from pkg.module import Module\n\n\n"
                             "class IPUModel(Module):  # a model, not a test class\n"
                             "    def test_epoch_end(self, outputs):\n        return 1\n",
    })
    base = repo.git("rev-parse", "HEAD").strip()
    repo.commit("Remove the *_epoch_end hooks", {
        "pkg/module.py": "class Module:\n    pass\n",
        "pkg/loop.py": LOOP_V2,
        "pkg/validator.py": VALIDATOR,
        "tests/test_removed.py": "import pytest\nfrom pkg.loop import Loop\n"
                                 "from pkg.module import Module\n\n\n"
                                 "def test_refused():\n"
                                 "    class Legacy(Module):\n"
                                 "        def validation_epoch_end(self, outputs):\n"
                                 "            return outputs\n"
                                 "    with pytest.raises(NotImplementedError):\n"
                                 "        Loop().end(Legacy(), [])\n",
    })
    found = gate(repo, base)
    # The example's override is dead; the test's class, written by the same change to check
    # that the removed hook is refused, is no forgotten override. (A string dropped in the
    # hook's own file would prove nothing: deprecation messages name the methods they retire.)
    assert errors(found) == {"HG001 seg.SegModel.validation_epoch_end",
                             "HG001 test_ipu.IPUModel.test_epoch_end"}
    result = audit([repo.root], Options(use_cache=False))
    assert "HG001 seg.SegModel.validation_epoch_end" in {
        f"{f.code} {f.symbol}" for f in result.findings if f.severity is Severity.ERROR}


def test_a_deprecation_message_naming_a_removed_method_is_no_dispatch(
    git_repo: Callable[..., GitRepo],
) -> None:
    mixin = ('from pkg.utils import deprecate\n\n\n'
             'class Mixin:\n'
             '    def enable_tiling(self):\n'
             '        deprecate("enable_tiling", "0.40", "use vae.enable_tiling()")\n'
             '        self.tiling = True\n\n'
             '    def run(self):\n        return 1\n')
    repo = git_repo()
    repo.commit("v1", {
        "pkg/__init__.py": "",
        "pkg/utils.py": "def deprecate(*args):\n    return args\n",
        "pkg/mixin.py": mixin,
        "pkg/sd.py": "from pkg.mixin import Mixin\nfrom pkg.utils import deprecate\n\n\n"
                     "class StableDiffusion(Mixin):\n"
                     "    def enable_tiling(self):\n"
                     "        deprecate(\"enable_tiling\", \"0.40\")\n"
                     "        return super().enable_tiling()\n",
        "examples/faithdiff.py": "from pkg.mixin import Mixin\n\n\n"
                                 "class FaithDiff(Mixin):\n"
                                 "    def enable_tiling(self):\n"
                                 "        self.tiling = 'own'\n",
    })
    base = repo.git("rev-parse", "HEAD").strip()
    repo.commit("Remove deprecated methods", {
        "pkg/mixin.py": mixin.split("    def enable")[0] + "    def run(self):\n        return 1\n",
        "pkg/sd.py": "from pkg.mixin import Mixin\n\n\nclass StableDiffusion(Mixin):\n"
                     "    pass\n",
    })
    assert errors(gate(repo, base)) == set()


def test_bases_through_sys_modules_and_mirrored_packages(tmp_path: Path) -> None:
    files = {
        "src/lightning/__init__.py": "",
        "src/lightning/pytorch/__init__.py": "from lightning.pytorch.core import Module\n",
        "src/lightning/pytorch/core.py": "class Module:\n"
                                         "    def fit(self, batch):\n"
                                         "        return self.step(batch, index=0)\n\n"
                                         "    def step(self, batch, index=0):\n"
                                         "        return batch\n",
        "src/lightning/compat.py": "import sys\nimport lightning.pytorch.core as core\n\n"
                                   'sys.modules["lightning.old_core"] = core\n',
        # pytorch_lightning is generated from lightning.pytorch when the package is built.
        "src/pytorch_lightning/__about__.py": "version = '2.0'\n",
        "examples/seg.py": "import pytorch_lightning as pl\n\n\n"
                           "class SegModel(pl.Module):\n"
                           "    def step(self, batch):\n        return batch\n",
        "examples/legacy.py": "from lightning.old_core import Module\n\n\n"
                              "class Legacy(Module):\n"
                              "    def step(self, batch):\n        return batch\n",
    }
    root = write_tree(tmp_path / "repo", files)
    found = findings(root)
    assert "HG002 legacy.Legacy.step" in errors(found)  # through sys.modules
    assert "HG002 seg.SegModel.step" not in found  # the mirror is unknown without config
    (root / "pyproject.toml").write_text(
        '[tool.hookguard]\nmodule-aliases = { pytorch_lightning = "lightning.pytorch" }\n')
    assert "HG002 seg.SegModel.step" in errors(findings(root))


MODEL_V1 = '''
from pkg.layer import LoraLayer


class LoraModel:
    def unload(self, modules, names=None):
        for target in modules:
            if isinstance(target, LoraLayer):
                target.merge(safe=True)
            target.merge(safe=True, names=names)  # not narrowed: proves nothing
'''


def test_a_new_keyword_through_an_isinstance_narrowed_name(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = git_repo()
    repo.commit("v1", {
        "pkg/__init__.py": "",
        "pkg/layer.py": "class TunerLayer:\n"
                        "    def merge(self, *args):  # a declaration only\n"
                        "        raise NotImplementedError\n\n\n"
                        "class LoraLayer(TunerLayer):\n"
                        "    pass\n",
        "pkg/model.py": MODEL_V1,
        "pkg/bnb.py": "import torch.nn as nn\nfrom pkg.layer import LoraLayer\n\n"
                      "if __import__('os').environ.get('BNB'):\n"
                      "    class Linear8bit(nn.Module, LoraLayer):\n"
                      "        def merge(self, safe=False):\n            return None\n",
    })
    base = repo.git("rev-parse", "HEAD").strip()
    repo.commit("Merge only the named adapters", {"pkg/model.py": MODEL_V1.replace(
        "target.merge(safe=True)\n", "target.merge(safe=True, names=names)\n", 1)})
    assert errors(gate(repo, base)) == {"HG002 pkg.bnb.Linear8bit.merge"}


ATTENTION_V1 = '''
class MultiheadAttention:
    def forward(self, weights):
        return self.apply_sparse_mask(weights, 4)

    def apply_sparse_mask(self, weights, size):
        return weights
'''
ATTENTION_V2 = ATTENTION_V1.replace(
    "self.apply_sparse_mask(weights, 4)", "MultiheadAttention.apply_sparse_mask(weights, 4)"
).replace("    def apply_sparse_mask(self, weights, size):",
          "    @staticmethod\n    def apply_sparse_mask(weights, size):")


def test_a_hook_the_base_stops_calling_through_self(git_repo: Callable[..., GitRepo]) -> None:
    sparse = ("from pkg.attention import MultiheadAttention\n\n\n"
              "class SparseAttention(MultiheadAttention):\n"
              "    @staticmethod\n"
              "    def apply_sparse_mask(weights, size):\n        return weights * 0\n")
    repo = git_repo()
    repo.commit("v1", {"pkg/__init__.py": "", "pkg/attention.py": ATTENTION_V1,
                       "pkg/sparse.py": sparse})
    base = repo.git("rev-parse", "HEAD").strip()
    repo.commit("Make attention scriptable", {"pkg/attention.py": ATTENTION_V2})
    finding = gate(repo, base)["HG001 pkg.sparse.SparseAttention.apply_sparse_mask"]
    assert finding.severity is Severity.ERROR and "no longer calls" in finding.message
    # Dispatching through self again clears it.
    repo.commit("Dispatch the mask through self again", {"pkg/attention.py": ATTENTION_V2.replace(
        "MultiheadAttention.apply_sparse_mask(weights, 4)", "self.apply_sparse_mask(weights, 4)")})
    assert gate(repo, base) == {}


AMQP_V1 = '''
class AMQPBackend:
    def get_many(self, task_ids):
        return self._many_bindings(task_ids)

    def _many_bindings(self, ids):
        return list(ids)
'''


def test_a_removed_hook_that_only_a_test_calls_directly_is_dead(
    git_repo: Callable[..., GitRepo],
) -> None:
    """Dead for the framework; its own unit test calling it directly keeps it "running" in the
    tests only, which is the bug (three verified incidents of the corpus: celery 3ef4f0cd and
    97d3d1fe, Lightning 04611079)."""
    rpc = ("from pkg.amqp import AMQPBackend\n\n\nclass RPCBackend(AMQPBackend):\n"
           "    def _many_bindings(self, ids):\n        return []\n")
    test = ("from pkg.rpc import RPCBackend\n\n\ndef test_many_bindings():\n"
            "    assert RPCBackend()._many_bindings(['a']) == []\n")
    repo = git_repo()
    repo.commit("v1", {"pkg/__init__.py": "", "pkg/amqp.py": AMQP_V1, "pkg/rpc.py": rpc,
                       "tests/test_rpc.py": test})
    base = repo.git("rev-parse", "HEAD").strip()
    repo.commit("Async results", {
        "pkg/amqp.py": "class AMQPBackend:\n    def get_many(self, task_ids):\n"
                       "        return list(task_ids)\n",
        "pkg/rpc.py": rpc + "\n    def close(self):\n        return None\n",  # file touched
    })
    assert errors(gate(repo, base)) == {"HG001 pkg.rpc.RPCBackend._many_bindings"}
    # Called as obj._many_bindings() by code (not a test), it is live: nothing to report.
    repo.commit("A user of the method", {"pkg/user.py": "def drain(backend):\n"
                                                        "    return backend._many_bindings([])\n"})
    assert gate(repo, base) == {}


def test_a_name_narrowed_to_a_framework_root_proves_nothing(tmp_path: Path) -> None:
    layers = "".join(
        f"class Dense{i}(Layer):\n    def build(self, input_shape):\n        return None\n\n\n"
        for i in range(45))
    root = write_tree(tmp_path / "repo", {
        "pkg/__init__.py": "",
        "pkg/layer.py": "class Layer:\n    def build(self, input_shape):\n        return None\n\n\n"
                        + layers
                        + "class Attention(Layer):\n"
                          "    def build(self, query_shape, value_shape):\n        return None\n",
        "pkg/rnn.py": "from pkg.layer import Layer\n\n\n"
                      "class StackedCells:\n"
                      "    def build(self, cells, input_shape):\n"
                      "        for cell in cells:\n"
                      "            if isinstance(cell, Layer):\n"
                      "                cell.build(input_shape)\n",
    })
    # 46 layers derive from Layer: which of them a cell is, the code does not say.
    assert "HG002 pkg.layer.Attention.build" not in findings(root)


NAMESPACE_V1 = '''
class Namespace:
    def apply(self):
        for module in self.modules():
            self.import_module(module)

    def modules(self):
        return []

    def import_module(self, module):
        return module
'''
NAMESPACE_V2 = '''
class Namespace:
    def apply(self):
        return self.steps()

    def steps(self):
        return []
'''


def test_a_removed_hook_overridden_in_a_class_a_test_method_defines(
    git_repo: Callable[..., GitRepo],
) -> None:
    tests = '''
        import sys
        import unittest

        from pkg.namespace import Namespace


        class TestNamespace(unittest.TestCase):
            def test_apply(self):
                class MyNS(Namespace):  # defined by the test method itself
                    def modules(self):
                        return ["a", "b"]

                assert MyNS().apply() == []
                assert "pkg" in sys.modules  # an attribute of a module, not of a Namespace
    '''
    repo = git_repo()
    repo.commit("namespace", {"pkg/__init__.py": "", "pkg/namespace.py": NAMESPACE_V1,
                              "tests/__init__.py": "",
                              "tests/test_namespace.py": textwrap.dedent(tests)})
    repo.commit("Namespaces no longer import modules", {"pkg/namespace.py": NAMESPACE_V2})
    result = audit([repo.root], Options(use_cache=False))
    stale = {f.symbol: f.severity for f in result.findings if f.code == "HG001"}
    local = "tests.test_namespace.TestNamespace.test_apply.<locals>.MyNS.modules"
    assert stale == {local: Severity.ERROR}
    # The look-alike: code that reads ``.modules`` on objects (not on a module) may mean it.
    (repo.root / "pkg" / "report.py").write_text("def report(ns):\n    return ns.modules()\n")
    result = audit([repo.root], Options(use_cache=False))
    assert not [f for f in result.findings if f.code == "HG001"]


def test_an_override_whose_bases_the_change_replaced_loses_its_hook(
    git_repo: Callable[..., GitRepo],
) -> None:
    mixin = ("class LoraLoaderMixin:\n    def unload(self):\n        self._remove_patch()\n\n"
             "    def _remove_patch(self):\n        return None\n")
    base_mixin = ("def _remove_patch(model):\n    return model\n\n\n"
                  "class LoraBaseMixin:\n    def unload(self):\n        _remove_patch(self)\n")
    community = '''
        from pkg.{module} import {base}


        class LongPromptPipeline({base}):  # untouched body: its override stops running
            def _remove_patch(self):
                self.patched = False


        class OwnCleanup({base}):  # calls its method itself: it runs
            def _remove_patch(self):
                self.patched = False

            def close(self):
                self._remove_patch()
    '''
    repo = git_repo()
    repo.commit("lora", {"pkg/__init__.py": "", "pkg/lora.py": mixin, "examples/__init__.py": "",
                         "examples/community.py": textwrap.dedent(
                             community.format(module="lora", base="LoraLoaderMixin"))})
    base = repo.git("rev-parse", "HEAD").strip()
    (repo.root / "pkg" / "lora.py").unlink()
    repo.commit("Split the LoRA loaders", {
        "pkg/lora_base.py": base_mixin,
        "examples/community.py": textwrap.dedent(
            community.format(module="lora_base", base="LoraBaseMixin")),
    })
    assert errors(gate(repo, base)) == {"HG001 examples.community.LongPromptPipeline._remove_patch"}


def test_a_call_through_a_property_on_a_member_one_path_constructs(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {
        "pkg/__init__.py": "",
        "pkg/optim.py": '''
            class Optimizer:
                def clip_grad_norm(self, max_norm, aggregate_norm_fn=None):
                    return max_norm


            class BMUF(Optimizer):  # wraps another optimizer; kept the old signature
                def __init__(self, inner):
                    self.inner = inner

                def clip_grad_norm(self, max_norm):
                    return self.inner.clip_grad_norm(max_norm)


            class Sharded(Optimizer):  # never constructed into the trainer's optimizer
                def clip_grad_norm(self, max_norm):
                    return max_norm


            def build_optimizer(args):
                return Optimizer()
        ''',
        "pkg/trainer.py": '''
            from pkg import optim


            class Trainer:
                def __init__(self, args):
                    self.args = args
                    self._optimizer = None

                @property
                def optimizer(self):
                    if self._optimizer is None:
                        self._build_optimizer()
                    return self._optimizer

                def _build_optimizer(self):
                    self._optimizer = optim.build_optimizer(self.args)
                    if self.args.use_bmuf:
                        self._optimizer = optim.BMUF(self._optimizer)

                def clip_grad_norm(self, clip_norm):
                    return self.optimizer.clip_grad_norm(clip_norm, aggregate_norm_fn=None)
        ''',
    })
    found = findings(root)
    assert "HG002 pkg.optim.BMUF.clip_grad_norm" in errors(found)
    assert "HG002 pkg.optim.Sharded.clip_grad_norm" not in found


def test_a_base_hook_a_decorator_wraps_is_no_disproof(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {
        "pkg/__init__.py": "",
        "pkg/auth.py": '''
            from pkg.concurrent import return_future


            class OAuthMixin:
                def on_access_token(self, token):
                    return self.get_user_future(token)  # the decorator supplies the callback

                @return_future
                def get_user_future(self, token, callback):
                    callback(token)


            class TwitterMixin(OAuthMixin):  # wrapped the same way: the base's shape
                @return_future
                def get_user_future(self, token, callback):
                    callback(token)


            class GoogleMixin(OAuthMixin):  # not wrapped: the call lacks its callback
                def get_user_future(self, token, callback):
                    callback(token)


            class GithubMixin(OAuthMixin):  # not wrapped, and takes what the call passes
                def get_user_future(self, token):
                    return token
        ''',
        "pkg/concurrent.py": '''
            import functools


            def return_future(f):
                @functools.wraps(f)
                def wrapper(*args, **kwargs):
                    return f(*args, callback=lambda result: result, **kwargs)
                return wrapper
        ''',
    })
    found = findings(root)
    assert errors(found) == {"HG002 pkg.auth.GoogleMixin.get_user_future"}
    assert not [k for k in found if "Twitter" in k or "Github" in k]


UPGRADER = '''
class Model:
    def __init__(self, children):
        self.children = children

    def upgrade_all(self, state):
        for name, child in self.children:
            if hasattr(child, "upgrade_named"):
                child.upgrade_named(state, name)
            elif hasattr(child, "upgrade"):
                child.upgrade(state)
'''


def test_a_renamed_hook_left_only_in_a_hasattr_fallback_is_dead_for_the_family(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = git_repo()
    repo.commit("v1", {
        "pkg/__init__.py": "",
        "pkg/model.py": UPGRADER,
        "pkg/decoder.py": "class Decoder:\n    def upgrade(self, state):\n        return state\n",
        "pkg/conv.py": "from pkg.decoder import Decoder\n\n\n"
                       "class ConvDecoder(Decoder):\n"
                       "    def upgrade(self, state):\n        state['conv'] = 1\n",
        "pkg/plain.py": "class Plain:  # no Decoder: the fallback is how the model reaches it\n"
                        "    def upgrade(self, state):\n        state['plain'] = 1\n",
    })
    base = repo.git("rev-parse", "HEAD").strip()
    repo.commit("upgrade -> upgrade_named", {
        "pkg/decoder.py": "class Decoder:\n"
                          "    def upgrade_named(self, state, name):\n        return state\n",
    })
    found = gate(repo, base)
    # Every Decoder has upgrade_named now: the elif never runs for ConvDecoder.
    assert errors(found) == {"HG001 pkg.conv.ConvDecoder.upgrade"}
    assert "HG001 pkg.plain.Plain.upgrade" not in found
    result = audit([repo.root], Options(use_cache=False))  # the same from history
    assert {f"{f.code} {f.symbol}" for f in result.findings
            if f.severity is Severity.ERROR} == {"HG001 pkg.conv.ConvDecoder.upgrade"}


def test_a_hook_the_checkout_also_looks_up_plainly_stays_a_warning(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = git_repo()
    repo.commit("v1", {
        "pkg/__init__.py": "",
        "pkg/model.py": UPGRADER + "\n\ndef legacy(child, state):\n"
                        "    return getattr(child, 'upgrade')(state)\n",
        "pkg/decoder.py": "class Decoder:\n    def upgrade(self, state):\n        return state\n",
        "pkg/conv.py": "from pkg.decoder import Decoder\n\n\n"
                       "class ConvDecoder(Decoder):\n"
                       "    def upgrade(self, state):\n        state['conv'] = 1\n",
    })
    base = repo.git("rev-parse", "HEAD").strip()
    repo.commit("upgrade -> upgrade_named", {
        "pkg/decoder.py": "class Decoder:\n"
                          "    def upgrade_named(self, state, name):\n        return state\n",
    })
    found = gate(repo, base)
    assert found["HG001 pkg.conv.ConvDecoder.upgrade"].severity is Severity.WARNING


LOADABLE_V1 = '''
class Model:
    def load_state_dict(self, state, strict=True):
        return state
'''
LOADABLE_V2 = '''
class Model:
    def load_state_dict(self, state, strict=True, args=None):
        return state
'''
LOADABLES = {
    "pkg/multi.py": "from pkg.model import Model\n\n\n"
                    "class Multi(Model):\n"
                    "    def load_state_dict(self, state, strict=True):\n        return state\n",
    "pkg/flexible.py": "from pkg.model import Model\n\n\n"
                       "class Flexible(Model):\n"
                       "    def load_state_dict(self, state, **kwargs):\n        return state\n",
}
LOADER = '''
def load(task, state):
    model = task.build_model()
    model.load_state_dict(state, strict=True)
    return model
'''


def test_a_keyword_the_change_passes_to_a_hook_it_widened_reaches_every_override(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = git_repo()
    repo.commit("v1", {"pkg/__init__.py": "", "pkg/model.py": LOADABLE_V1,
                       "pkg/loader.py": LOADER, **LOADABLES})
    base = repo.git("rev-parse", "HEAD").strip()
    repo.commit("pass args to load_state_dict", {
        "pkg/model.py": LOADABLE_V2,
        # ``model`` comes from a factory: only the change says what it is
        "pkg/loader.py": LOADER.replace("strict=True)", "strict=True, args=task.args)"),
    })
    found = gate(repo, base)
    assert errors(found) == {"HG002 pkg.multi.Multi.load_state_dict"}
    finding = found["HG002 pkg.multi.Multi.load_state_dict"]
    assert finding.evidence["missing"] == ["args"]
    assert finding.evidence["calls"][0]["path"] == "pkg/loader.py"  # type: ignore[index]
    # an audit has no change to read the call's meaning from
    result = audit([repo.root], Options(use_cache=False))
    assert not [f for f in result.findings if f.code == "HG002"]


def test_a_base_gaining_kwargs_makes_the_new_keyword_reach_overrides(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = git_repo()
    repo.commit("v1", {"pkg/__init__.py": "", "pkg/model.py": LOADABLE_V1,
                       "pkg/loader.py": LOADER, **LOADABLES})
    base = repo.git("rev-parse", "HEAD").strip()
    repo.commit("tools", {
        "pkg/model.py": LOADABLE_V1.replace("strict=True)", "strict=True, **kwargs)"),
        "pkg/loader.py": LOADER.replace("strict=True)", "strict=True, tools=[])"),
    })
    assert errors(gate(repo, base)) == {"HG002 pkg.multi.Multi.load_state_dict"}


def test_keywords_the_change_did_not_teach_the_base_say_nothing_of_its_family(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = git_repo()
    repo.commit("v1", {"pkg/__init__.py": "", "pkg/model.py": LOADABLE_V1,
                       "pkg/loader.py": LOADER, **LOADABLES})
    base = repo.git("rev-parse", "HEAD").strip()
    # The base hook is unchanged: ``optimizer.load_state_dict(..., args=)`` is someone else's.
    repo.commit("an optimizer call", {
        "pkg/loader.py": LOADER + "\n\ndef restore(optimizer, state):\n"
                         "    optimizer.load_state_dict(state, args=None)\n",
    })
    assert gate(repo, base) == {}
    # The base widened, but the only call passing the keyword was there before the change.
    repo2 = git_repo("repo2")
    repo2.commit("v1", {"pkg/__init__.py": "", "pkg/model.py": LOADABLE_V1,
                        "pkg/loader.py": LOADER.replace("strict=True)", "args=1)"),
                        **LOADABLES})
    base2 = repo2.git("rev-parse", "HEAD").strip()
    repo2.commit("widen only", {"pkg/model.py": LOADABLE_V2})
    assert errors(gate(repo2, base2)) == set()


def test_a_keyword_passed_only_where_the_change_checks_the_callee_takes_it_is_tolerated(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = git_repo()
    repo.commit("v1", {"pkg/__init__.py": "", "pkg/model.py": LOADABLE_V1,
                       "pkg/loader.py": LOADER, **LOADABLES})
    base = repo.git("rev-parse", "HEAD").strip()
    guarded = LOADER.replace(
        "    model.load_state_dict(state, strict=True)\n",
        "    if 'args' in inspect.getfullargspec(model.load_state_dict).args:  # old models\n"
        "        model.load_state_dict(state, strict=True, args=task.args)\n"
        "    else:\n"
        "        model.load_state_dict(state, strict=True)\n",
    )
    repo.commit("pass args where it is taken", {
        "pkg/model.py": LOADABLE_V2,
        "pkg/loader.py": "import inspect\n" + guarded,
        # another call passes it unguarded: the change still says overrides may lack it
        "pkg/restore.py": "def restore(model, state):\n"
                          "    model.load_state_dict(state, args=None)\n",
    })
    assert errors(gate(repo, base)) == set()


EXECUTORS_V1 = {
    "pkg/executor.py": '''
        class ExecutorBase:
            def p2p_connect(self, conn_request):
                raise NotImplementedError


        class RayExecutor(ExecutorBase):
            def p2p_connect(self, conn_request):
                return conn_request
    ''',
    "pkg/uni.py": "from pkg.executor import ExecutorBase\n\n\n"
                  "class UniExecutor(ExecutorBase):\n"
                  "    def p2p_connect(self, conn_request):\n        return conn_request\n",
    "pkg/conn.py": "def connect(engine, request):\n"
                   "    return engine.executor.p2p_connect(conn_request=request)\n",
}


def test_a_keyword_one_sibling_learned_reaches_the_family_that_declares_the_hook(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = git_repo()
    repo.commit("v1", {"pkg/__init__.py": "", **EXECUTORS_V1})
    base = repo.git("rev-parse", "HEAD").strip()
    repo.commit("remote engines", {
        "pkg/executor.py": EXECUTORS_V1["pkg/executor.py"].replace(
            "def p2p_connect(self, conn_request):\n                return conn_request",
            "def p2p_connect(self, remote_engine_id, conn_request):\n"
            "                return conn_request"),
        "pkg/conn.py": "def connect(engine, request):\n"
                       "    return engine.executor.p2p_connect(remote_engine_id=1, "
                       "conn_request=request)\n",
    })
    assert errors(gate(repo, base)) == {"HG002 pkg.uni.UniExecutor.p2p_connect"}


OPTIMIZERS = '''
class ZeroOptimizer:
    pass


class Stage2(ZeroOptimizer):
    def load_state_dict(self, states, folder=None):
        return states


class Stage3(ZeroOptimizer):
    def load_state_dict(self, states, folder=None):
        return states
'''


def test_a_keyword_several_classes_learned_reaches_the_base_they_share(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = git_repo()
    repo.commit("v1", {
        "pkg/__init__.py": "", "pkg/zero.py": OPTIMIZERS,
        "pkg/bf16.py": "from pkg.zero import ZeroOptimizer\n\n\n"
                       "class BF16(ZeroOptimizer):\n"
                       "    def load_state_dict(self, states, folder=None):\n"
                       "        return states\n",
        "pkg/other.py": "class Cache:  # not a ZeroOptimizer\n"
                        "    def load_state_dict(self, states):\n        return states\n",
        "pkg/engine.py": "def load(engine, states):\n"
                         "    engine.optimizer.load_state_dict(states, folder='x')\n",
    })
    base = repo.git("rev-parse", "HEAD").strip()
    repo.commit("load serially", {
        "pkg/zero.py": OPTIMIZERS.replace("folder=None)", "folder=None, load_serial=None)"),
        "pkg/engine.py": "def load(engine, states):\n"
                         "    engine.optimizer.load_state_dict(states, folder='x', "
                         "load_serial=None)\n",
    })
    assert errors(gate(repo, base)) == {"HG002 pkg.bf16.BF16.load_state_dict"}


MODULES_V1 = {
    "pkg/module.py": '''
        def state_default(module, prefix):
            if hasattr(module, "sharded_state"):  # any child with the method
                return module.sharded_state(prefix=prefix)
            return {}


        class Module:
            def sharded_state(self, prefix=""):
                return {}


        class Block(Module):
            pass
    ''',
    "pkg/gpt.py": '''
        from pkg.module import Block, Module


        class GPT(Module):
            def __init__(self):
                self.decoder = Block()

            def sharded_state(self, prefix=""):
                return self.decoder.sharded_state(prefix=prefix + "decoder.")
    ''',
    "pkg/bert.py": "from pkg.module import Module\n\n\n"
                   "class Bert(Module):  # only ever the root model\n"
                   "    def sharded_state(self, prefix=''):\n        return {}\n",
}


def test_a_keyword_a_hook_passes_down_to_its_parts_says_nothing_of_the_root(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = git_repo()
    repo.commit("v1", {"pkg/__init__.py": "", **MODULES_V1})
    base = repo.git("rev-parse", "HEAD").strip()
    widened = {path: text.replace('prefix=""):', 'prefix="", metadata=None):')
               .replace("prefix=prefix)", "prefix=prefix, metadata=metadata)")
               .replace('prefix + "decoder.")', 'prefix + "decoder.", metadata=metadata)')
               .replace("def state_default(module, prefix):",
                        "def state_default(module, prefix, metadata=None):")
               for path, text in MODULES_V1.items() if path != "pkg/bert.py"}
    repo.commit("metadata for every part", widened)
    # The helper's receiver is any child with the method; GPT passes it to its decoder, a
    # Block the model knows; nothing shown passes it to a Bert.
    assert errors(gate(repo, base)) == set()


def test_a_same_named_method_outside_the_family_that_delegates_still_speaks_for_it(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = git_repo()
    connection = ("class EngineConnection:\n"
                  "    def __init__(self, engine):\n        self.engine = engine\n\n"
                  "    def p2p_connect(self, request):\n"
                  "        return self.engine.executor.p2p_connect(conn_request=request)\n")
    repo.commit("v1", {"pkg/__init__.py": "", **EXECUTORS_V1, "pkg/conn.py": connection})
    base = repo.git("rev-parse", "HEAD").strip()
    repo.commit("remote engines", {
        "pkg/executor.py": EXECUTORS_V1["pkg/executor.py"].replace(
            "def p2p_connect(self, conn_request):\n                return conn_request",
            "def p2p_connect(self, remote_engine_id, conn_request):\n"
            "                return conn_request"),
        "pkg/conn.py": connection.replace("(conn_request=request)",
                                          "(remote_engine_id=1, conn_request=request)"),
    })
    assert errors(gate(repo, base)) == {"HG002 pkg.uni.UniExecutor.p2p_connect"}


# -- a dispatch over registered objects, dropped with the hook (sphinx's can_document_member) --
DOCUMENTERS = '''
class Documenter:
    priority = 0

    @classmethod
    def can_document_member(cls, member):
        return False


class FunctionDocumenter(Documenter):
    @classmethod
    def can_document_member(cls, member):
        return callable(member)


def pick(registry, member):
    return max(
        (cls for cls in registry.values() if cls.can_document_member(member)),
        key=lambda cls: cls.priority,
        default=None,
    )
'''

PICKED = '''
class Documenter:
    priority = 0


class FunctionDocumenter(Documenter):
    pass


def pick(registry, member):
    return registry["function"] if callable(member) else None
'''

TUTORIAL = '''
from pkg.documenters import Documenter


class IntEnumDocumenter(Documenter):
    priority = 10

    @classmethod
    def can_document_member(cls, member):
        return isinstance(member, int)
'''


def _dispatch_removed(repo: GitRepo, after: str) -> str:
    repo.commit("documenters", {"pkg/__init__.py": "", "pkg/documenters.py": DOCUMENTERS,
                                "docs/examples/intenum.py": TUTORIAL})
    base = repo.git("rev-parse", "HEAD").strip()
    repo.commit("Pick documenters by a table", {"pkg/documenters.py": after})
    return base


SYMBOL = "HG001 intenum.IntEnumDocumenter.can_document_member"


def test_a_dispatch_over_registered_objects_dropped_with_the_hook_proves_it(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = git_repo()
    base = _dispatch_removed(repo, PICKED)
    assert errors(gate(repo, base)) == {SYMBOL}
    audit_found = {f"{f.code} {f.symbol}": f for f in audit(
        [repo.root], Options(use_cache=False, workers=1)).findings}
    assert audit_found[SYMBOL].severity is Severity.ERROR


def test_a_dispatch_the_change_only_moves_proves_nothing(
    git_repo: Callable[..., GitRepo],
) -> None:
    """The loop is rewritten elsewhere, still asking every registered class: the hook runs."""
    moved = PICKED.replace(
        '    return registry["function"] if callable(member) else None\n',
        "    found = [cls for cls in registry.values() if cls.can_document_member(member)]\n"
        "    return found[0] if found else None\n")
    repo = git_repo()
    base = _dispatch_removed(repo, moved)
    assert not errors(gate(repo, base))


# -- an optional hook the base probed with hasattr and stopped calling (tornado's get_error_html)
HANDLER = '''
class RequestHandler:
    def write_error(self, status_code):
        if hasattr(self, "get_error_html"):
            self.finish(self.get_error_html(status_code))
        else:
            self.finish("<html>%d</html>" % status_code)

    def finish(self, text):
        self.text = text
'''

TEST_HANDLER = '''
from pkg.web import RequestHandler


class TestRequestHandler(RequestHandler):
    def get_error_html(self, status_code):
        return "got expected exception"
'''


def _probe_dropped(repo: GitRepo, after: str) -> str:
    repo.commit("handlers", {"pkg/__init__.py": "", "pkg/web.py": HANDLER,
                             "tests/test_stack.py": TEST_HANDLER})
    base = repo.git("rev-parse", "HEAD").strip()
    repo.commit("Remove get_error_html", {"pkg/web.py": after})
    return base


def test_an_optional_hook_the_base_stopped_calling_is_dead(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = git_repo()
    base = _probe_dropped(repo, HANDLER.replace(
        '        if hasattr(self, "get_error_html"):\n'
        "            self.finish(self.get_error_html(status_code))\n        else:\n    ", ""))
    found = gate(repo, base)
    assert errors(found) == {"HG001 test_stack.TestRequestHandler.get_error_html"}, found
    assert "optional hook" in found["HG001 test_stack.TestRequestHandler.get_error_html"].message


def test_an_optional_hook_still_probed_elsewhere_in_the_line_runs(
    git_repo: Callable[..., GitRepo],
) -> None:
    """The probe and call move to another method of the class: the hook is still called."""
    moved = HANDLER.replace(
        '        if hasattr(self, "get_error_html"):\n'
        "            self.finish(self.get_error_html(status_code))\n        else:\n    ",
        "").replace(
        "    def finish(self, text):\n",
        "    def send_error(self, status_code):\n"
        '        if hasattr(self, "get_error_html"):\n'
        "            return self.get_error_html(status_code)\n\n"
        "    def finish(self, text):\n")
    repo = git_repo()
    base = _probe_dropped(repo, moved)
    assert not errors(gate(repo, base))


SYSTEM = '''
class System:
    def __init__(self, ops):
        self.ops = ops

    def add_feedback(self, key):
        for op in self.ops:
            op.add_feedback(key)


class NonMarkovianSystem(System):
    def add_feedback(self, key):
        raise NotImplementedError("no feedback here")
'''


def test_a_loop_forwarding_the_method_to_its_objects_proves_no_hook(
    git_repo: Callable[..., GitRepo],
) -> None:
    """qutip's ``add_feedback`` (after-fix run of round 9): the loop lives in ``def
    add_feedback`` itself, forwarding it to the operators; removing both says nothing about
    a caller of the hook, in check or in the history."""
    repo = git_repo()
    repo.commit("systems", {"pkg/__init__.py": "", "pkg/system.py": SYSTEM})
    base = repo.git("rev-parse", "HEAD").strip()
    repo.commit("Feedback as a class method", {"pkg/system.py": SYSTEM.replace(
        "    def add_feedback(self, key):\n        for op in self.ops:\n"
        "            op.add_feedback(key)\n", "    pass\n")})
    assert not errors(gate(repo, base))
    found = audit([repo.root], Options(use_cache=False, workers=1)).findings
    assert not [f for f in found if f.severity is Severity.ERROR], found
