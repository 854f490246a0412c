"""Compact descriptions of values and code locations for reports; never a tensor's contents."""

from __future__ import annotations

import functools
import inspect
import numbers
import os
from collections.abc import Mapping

import torch

__all__ = ["cuda_available", "describe", "display_path", "source_location"]


@functools.cache
def cuda_available() -> bool:
    return bool(torch.cuda.is_available())


def source_location(func: object) -> str:
    """``file:line`` of a function (or ``?``)."""
    func = inspect.unwrap(func)  # type: ignore[arg-type]
    code = getattr(func, "__code__", None)
    if code is None:
        return "?"
    return f"{display_path(code.co_filename)}:{code.co_firstlineno}"


def display_path(path: str) -> str:
    """``path`` relative to the working directory when it lies below it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return path if relative.startswith(os.pardir) else relative


def describe(value: object) -> str:
    """Compact metadata of a value: ``int32[4, 2] cpu pinned``; never the tensor's contents."""
    if isinstance(value, torch.Tensor):
        dtype = str(value.dtype).removeprefix("torch.")
        text = f"{dtype}[{', '.join(str(d) for d in value.shape)}] {value.device}"
        if value.device.type == "cpu" and cuda_available() and value.is_pinned():
            text += " pinned"
        if value.device.type != "meta" and not value.is_contiguous():
            text += " non-contiguous"
        return text
    if value is None:
        return "None"
    if isinstance(value, list | tuple):
        return f"{type(value).__name__}[len={len(value)}]"
    if isinstance(value, Mapping):
        return f"{type(value).__name__}[len={len(value)}]"
    if isinstance(value, bool | numbers.Number):
        return f"{type(value).__name__} {value!r}"
    if isinstance(value, str):
        return f"str[len={len(value)}]"
    return type(value).__name__
