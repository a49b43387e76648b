"""``tvm.contrib.nvcc`` of TVM <=0.19 (served by ``install()``): TVM 0.27's ``tvm.support.nvcc``.

The capability checks take a compute version, which a machine without CUDA does not have:
``have_fp16(tvm.cuda(0).compute_version)`` raised there before the check ran. Here
``have_fp16``, ``have_int8``, ``have_tensorcore``, ``have_bf16`` and ``have_fp8`` answer False
for a missing version (None, ``""``) or when called with no CUDA device present, and otherwise
ask ``tvm.support.nvcc`` (``have_cudagraph``: False without a CUDA toolkit).
"""

from __future__ import annotations

from typing import Any

from tvm.support import nvcc as _support_nvcc
from tvm.support.nvcc import (
    callback_libdevice_path,
    compile_cuda,
    find_cuda_path,
    find_libdevice_path,
    get_cuda_version,
    get_target_compute_version,
    parse_compute_version,
    tvm_callback_cuda_compile,
)

__all__ = [
    "callback_libdevice_path",
    "compile_cuda",
    "find_cuda_path",
    "find_libdevice_path",
    "get_cuda_version",
    "get_target_compute_version",
    "have_bf16",
    "have_cudagraph",
    "have_fp8",
    "have_fp16",
    "have_int8",
    "have_tensorcore",
    "parse_compute_version",
    "tvm_callback_cuda_compile",
]


def _known(compute_version: Any) -> bool:
    return compute_version is not None and str(compute_version).strip() != ""


def have_fp16(compute_version: Any) -> bool:
    """Whether that compute capability has fp16 arithmetic (False without a version)."""
    return _known(compute_version) and bool(_support_nvcc.have_fp16(compute_version))


def have_int8(compute_version: Any) -> bool:
    """Whether that compute capability has int8 dot products (False without a version)."""
    return _known(compute_version) and bool(_support_nvcc.have_int8(compute_version))


def have_bf16(compute_version: Any) -> bool:
    """Whether that compute capability has bf16 (False without a version)."""
    return _known(compute_version) and bool(_support_nvcc.have_bf16(compute_version))


def have_fp8(compute_version: Any) -> bool:
    """Whether that compute capability has fp8 (8.9 and later; False without a version)."""
    return _known(compute_version) and bool(_support_nvcc.have_fp8(compute_version))


def have_cudagraph() -> bool:
    """Whether the CUDA toolkit found has CUDA graphs (10.0 and later; False without one)."""
    try:
        return bool(_support_nvcc.have_cudagraph())
    except (RuntimeError, OSError):
        return False


def have_tensorcore(compute_version: Any = None, target: Any = None) -> bool:
    """Whether the GPU has Tensor Cores (False without CUDA: no version and no cuda target)."""
    if not _known(compute_version) and target is None:
        return False
    return bool(_support_nvcc.have_tensorcore(compute_version, target))
