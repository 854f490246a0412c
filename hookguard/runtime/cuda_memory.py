"""Is an integer the address of live CUDA memory? (the ``addresses = "cuda"`` value check)

Two sources, both host-side queries (no stream synchronisation):

* the CUDA driver (``cuPointerGetAttribute``): the address belongs to some device allocation
  (PyTorch's caching allocator, ``cudaMalloc`` or virtual-memory mappings of another allocator);
* PyTorch's caching allocator snapshot: an address inside one of its segments must lie in an
  *active* block; a block that was freed stays mapped by the driver, so only this catches a
  pointer to a pool that was released back to the cache.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Sequence
from typing import Any

import torch

__all__ = ["can_check", "dead_pointers"]

_CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2
_CU_MEMORYTYPE_DEVICE = 2
_CU_MEMORYTYPE_UNIFIED = 4
_CUDA_ERROR_INVALID_VALUE = 1


@functools.cache
def _driver() -> Any:
    for name in ("libcuda.so.1", "libcuda.so", "nvcuda.dll"):
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


def can_check() -> bool:
    """Only once CUDA is initialised: checking must never start a CUDA context by itself."""
    return bool(torch.cuda.is_available() and torch.cuda.is_initialized())  # type: ignore[no-untyped-call]


def _driver_says_device(pointer: int) -> bool | None:
    lib = _driver()
    if lib is None:
        return None
    kind = ctypes.c_uint(0)
    result = lib.cuPointerGetAttribute(
        ctypes.byref(kind),
        ctypes.c_int(_CU_POINTER_ATTRIBUTE_MEMORY_TYPE),
        ctypes.c_uint64(pointer),
    )
    if result == _CUDA_ERROR_INVALID_VALUE:
        return False  # not an address the driver knows
    if result != 0:
        return None  # no context on this thread, driver trouble: cannot tell
    return kind.value in (_CU_MEMORYTYPE_DEVICE, _CU_MEMORYTYPE_UNIFIED)


def _allocator_blocks() -> list[tuple[int, int, bool]]:
    """(address, size, active) of every block of PyTorch's caching allocator."""
    blocks: list[tuple[int, int, bool]] = []
    for segment in torch.cuda.memory_snapshot():  # type: ignore[no-untyped-call]
        address = int(segment["address"])
        for block in segment.get("blocks", []):
            size = int(block["size"])
            start = int(block.get("address", address))
            blocks.append((start, size, block.get("state") == "active_allocated"))
            address = start + size
    return blocks


def dead_pointers(pointers: Sequence[int]) -> list[tuple[int, str]]:
    """The non-zero pointers that do not point into live CUDA memory, with the reason."""
    candidates = [p for p in pointers if p]
    if not candidates:
        return []
    blocks = _allocator_blocks()
    bad: list[tuple[int, str]] = []
    for pointer in candidates:
        in_cache = next((b for b in blocks if b[0] <= pointer < b[0] + b[1]), None)
        if in_cache is not None:
            if not in_cache[2]:
                bad.append((pointer, "freed block of the PyTorch caching allocator"))
            continue
        device = _driver_says_device(pointer)
        if device is False:
            bad.append((pointer, "not a CUDA device allocation"))
    return bad
