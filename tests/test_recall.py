"""Classes of real incidents hookguard used to miss: each fires, and a look-alike does not."""

from __future__ import annotations

from pathlib import Path

from hookguard.engine import Options, audit
from hookguard.findings import Finding, Severity
from tests.conftest import write_tree


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
