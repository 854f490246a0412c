"""This process's place in a multi-process job: its device, its rank, and torchelastic's error file.

Nothing here talks to other processes: no collective operation, no store, no barrier. The rank
comes from the environment a launcher sets (``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``, as torchrun
does), else from ``torch.distributed`` when a process group is initialised (a local query).

``device = "cuda:current"`` in a contract means *this process's CUDA device*:

* ``cuda:$LOCAL_RANK`` when ``LOCAL_RANK`` is set and this process sees more than one CUDA device
  with that index (torchrun's convention: one local rank per visible device);
* otherwise ``torch.cuda.current_device()`` (one visible device per process, e.g. through
  ``CUDA_VISIBLE_DEVICES``, or no launcher).

``device = "current"`` is ``cuda:current`` where CUDA is available and ``cpu`` elsewhere (for
fixtures that also run on CPU-only machines, like ``cuda-if-available``).
"""

from __future__ import annotations

import json
import os
import socket
import time
import traceback
from dataclasses import dataclass

import torch

__all__ = [
    "RankInfo",
    "current_cuda_index",
    "known_cuda_index",
    "local_rank_device",
    "rank_info",
    "record_elastic_error",
]


def _env_int(name: str) -> int | None:
    text = os.environ.get(name, "").strip()
    try:
        return int(text) if text else None
    except ValueError:
        return None


def local_rank_device() -> int | None:
    """``LOCAL_RANK`` when it names one of several visible CUDA devices, else ``None``.

    Constant for the life of a process (the environment a launcher set), so generated checks
    fold it in.
    """
    local = _env_int("LOCAL_RANK")
    if local is None or local < 0 or not torch.cuda.is_available():
        return None
    count = torch.cuda.device_count()
    return local if count > 1 and local < count else None


def current_cuda_index() -> int:
    """The index of this process's CUDA device (see the module docstring)."""
    local = local_rank_device()
    if local is not None:
        return local
    return int(torch.cuda.current_device())


def known_cuda_index() -> int | None:
    """This process's CUDA device where that needs no new CUDA context (for messages)."""
    local = local_rank_device()
    if local is not None:
        return local
    if torch.cuda.is_available() and torch.cuda.is_initialized():  # type: ignore[no-untyped-call]
        return int(torch.cuda.current_device())
    return None


@dataclass(frozen=True)
class RankInfo:
    """Where a violation happened: rank, local rank and world size (``None`` outside a job)."""

    rank: int | None
    local_rank: int | None
    world_size: int | None
    host: str


def rank_info() -> RankInfo:
    """This process's rank from the launcher's environment or an initialised process group."""
    rank = _env_int("RANK")
    world = _env_int("WORLD_SIZE")
    if rank is None:
        dist = getattr(torch, "distributed", None)
        if dist is not None and dist.is_available() and dist.is_initialized():
            rank = int(dist.get_rank())  # local state, not a collective
            world = int(dist.get_world_size())
    return RankInfo(rank, _env_int("LOCAL_RANK"), world, socket.gethostname())


def record_elastic_error(error: BaseException) -> str | None:
    """Write ``error`` to torchelastic's error file, as its ``@record`` would; its path or None.

    Only under torchelastic (``TORCHELASTIC_ERROR_FILE`` set) and only when no error was
    recorded yet: the first failure is the root cause the launcher reports. Call it from inside
    the ``except`` block that handles ``error`` so the traceback is the real one. A later
    ``@record`` on the entry point writes the exception that ended the process over it.
    """
    path = os.environ.get("TORCHELASTIC_ERROR_FILE")
    if not path or os.path.exists(path):
        return None
    stack = traceback.format_exc()
    if stack.strip() in ("", "NoneType: None"):
        stack = "".join(traceback.format_exception(error))
    data = {
        "message": {
            "message": f"{type(error).__name__}: {error}",
            "extraInfo": {"py_callstack": stack, "timestamp": str(int(time.time()))},
        }
    }
    try:
        directory = os.path.dirname(path)
        if directory:
            os.makedirs(directory, exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(data, handle)
    except OSError:
        return None
    return path
