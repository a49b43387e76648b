"""``relay.save_param_dict`` / ``relay.load_param_dict``: TVM 0.27's ``tvm.runtime`` functions."""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping
from typing import Any

import numpy as np
import tvm

from compile_engine_compat.deprecations import legacy_api

__all__ = ["load_param_dict", "save_param_dict"]


@legacy_api("relay.save_param_dict")
def save_param_dict(params: Mapping[str, Any]) -> bytearray:
    """``relay.save_param_dict(params)``: the bytes ``tvm.runtime.save_param_dict`` writes.

    NumPy arrays are accepted as Relay accepted them; the result is a ``bytearray``, as Relay's
    was (TVM 0.27's function returns ``bytes``).
    """
    tensors = {
        name: value
        if isinstance(value, tvm.runtime.Tensor)
        else tvm.runtime.tensor(np.asarray(value))
        for name, value in params.items()
    }
    return bytearray(tvm.runtime.save_param_dict(tensors))  # TVM 0.19 returned a bytearray


@legacy_api("relay.save_param_dict")
def load_param_dict(param_bytes: Any) -> dict[str, Any]:
    """``relay.load_param_dict(blob)``: name -> ``tvm.runtime.Tensor``.

    The blob is read through first: TVM 0.27 fills the data a short blob lacks with zeros, or
    stops with an ``InternalError``.

    Raises
    ------
    ValueError
        For a blob that is not one ``save_param_dict`` wrote, or that ends before the tensors
        it declares (truncated): the message names the tensor and the bytes missing.
    TypeError
        For an argument that is not bytes.
    """
    if not isinstance(param_bytes, (bytes, bytearray, memoryview)):
        raise TypeError(
            f"load_param_dict takes the bytes of save_param_dict, not {type(param_bytes).__name__}"
        )
    _check_blob(memoryview(param_bytes).cast("B"))
    return dict(tvm.runtime.load_param_dict(param_bytes))


#: The magic numbers of TVM's parameter list and of each tensor in it (tvm/runtime/tensor.h).
_LIST_MAGIC = 0xF7E58D4F05049CB7
_TENSOR_MAGIC = 0xDD5E40F096B4A13F


class _Reader:
    """Little-endian fields of a parameter blob, each checked to lie inside it."""

    def __init__(self, blob: memoryview) -> None:
        self.blob = blob
        self.offset = 0

    def take(self, size: int, what: str) -> memoryview:
        end = self.offset + size
        if size < 0 or end > len(self.blob):
            raise ValueError(
                f"load_param_dict: the blob is truncated: {what} needs bytes {self.offset} to "
                f"{end}, but the blob has {len(self.blob)} bytes"
            )
        data = self.blob[self.offset : end]
        self.offset = end
        return data

    def unpack(self, form: str, what: str) -> tuple[Any, ...]:
        return struct.unpack("<" + form, self.take(struct.calcsize("<" + form), what))


def _check_blob(blob: memoryview) -> None:
    """Walk ``blob`` as TVM's ``LoadParams`` reads it; raise ValueError where it falls short."""
    read = _Reader(blob)
    magic, _ = read.unpack("QQ", "the header")
    if magic != _LIST_MAGIC:
        raise ValueError(
            "load_param_dict: not a parameter blob of save_param_dict (its first 8 bytes are "
            f"{bytes(blob[:8]).hex()}, not TVM's parameter-list magic)"
        )
    (count,) = read.unpack("Q", "the number of names")
    names = []
    for index in range(count):
        (length,) = read.unpack("Q", f"the length of name {index}")
        names.append(bytes(read.take(length, f"name {index}")).decode("utf-8", "replace"))
    (tensors,) = read.unpack("Q", "the number of tensors")
    if tensors != count:
        raise ValueError(f"load_param_dict: the blob names {count} tensors but holds {tensors}")
    for name in names:
        what = f"tensor {name!r}"
        magic, _, _, _, ndim = read.unpack("QQiii", f"the header of {what}")
        if magic != _TENSOR_MAGIC:
            raise ValueError(f"load_param_dict: {what} does not start with TVM's tensor magic")
        code, bits, lanes = read.unpack("BBH", f"the dtype of {what}")
        shape = read.unpack(f"{ndim}q", f"the shape of {what}") if ndim > 0 else ()
        (size,) = read.unpack("q", f"the data size of {what}")
        elements = math.prod(shape)
        expected = elements * ((bits * lanes + 7) // 8)
        if size != expected:
            raise ValueError(
                f"load_param_dict: {what} of shape {shape} (dtype code {code}, {bits} bits x "
                f"{lanes}) declares {size} bytes of data, not {expected}"
            )
        read.take(size, f"the data of {what} (shape {shape}, {size} bytes)")
