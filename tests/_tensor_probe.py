"""Call a kernel with misaligned DLPack-made tensors; run as a script by test_kernel_arguments.py.

Before the kernel checked alignment, these crashed the process (SIGSEGV), so they run out of the
test process. Prints one line per wrong case and exits 1 if there was any; 0 when every case
computed the right result, and every argument TVM refuses was refused with a ValueError.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any

import numpy as np
import tvm
import tvm_ffi

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
warnings.simplefilter("ignore")

from _builders import add3  # noqa: E402

from compile_engine_compat import compile_engine  # noqa: E402

N = 64  # long enough for the vectorized loop whose aligned loads crashed


def misaligned(offset: int, count: int = N, stride: int = 1) -> tuple[np.ndarray, Any]:
    """A float32 NumPy view starting ``offset`` bytes past a 64-byte boundary, and the TVM
    tensor sharing its memory (made through DLPack, as a user's foreign tensor would be)."""
    buffer = np.zeros(count * stride * 4 + 128, np.uint8)
    start = (-buffer.ctypes.data) % 64 + offset
    raw = np.frombuffer(buffer, np.uint8, count * stride * 4, start)
    view = raw.view(np.float32)[::stride]
    tensor = tvm_ffi.from_dlpack(view, require_alignment=0, require_contiguous=False)
    assert tensor.data_ptr() % 64 == offset % 64
    return view, tensor


def main() -> int:
    kernel = compile_engine.get().jit(add3((N,)), "llvm")
    x = np.arange(N, dtype="float32")
    wrong: list[str] = []
    for offset in range(1, 64):
        view, tensor = misaligned(offset)
        view[...] = x
        for calls in range(2):  # the first call and the fast path after it
            out = tvm.runtime.empty((N,), "float32")
            kernel(tensor, out)
            if not np.array_equal(out.numpy(), 3 * x):
                wrong.append(f"input at offset {offset}, call {calls}")
            view[...] = 0
            kernel(tvm.runtime.tensor(x), tensor)
            if not np.array_equal(view, 3 * x):
                wrong.append(f"output at offset {offset}, call {calls}")
            view[...] = x
        kernel(tensor, tensor)  # misaligned and aliased: computes in place through temporaries
        if not np.array_equal(view, 3 * x):
            wrong.append(f"in-place at offset {offset}")
    view, tensor = misaligned(4, stride=2)
    view[...] = x
    out = tvm.runtime.empty((N,), "float32")
    kernel(tensor, out)
    if not np.array_equal(out.numpy(), 3 * x):
        wrong.append("strided misaligned input")
    base = tvm.runtime.tensor(np.arange(N + 16, dtype="float32"))
    shifted = base._create_view((N,), "float32", 4)  # a byte offset of one element
    kernel(shifted, out)
    if not np.array_equal(out.numpy(), 3 * np.arange(1, N + 1, dtype="float32")):
        wrong.append("view with a byte offset")
    # What TVM's generated code checks itself: a clean ValueError, never a crash.
    aligned_strided = misaligned(64, stride=2)[1]
    shared = misaligned(64, count=2 * N)[1]  # aligned: the input, and every other element
    strided_over_it = tvm_ffi.from_dlpack(
        np.from_dlpack(shared)[::2], require_alignment=0, require_contiguous=False
    )
    refusals = {
        "aligned strided output": lambda: kernel(tvm.runtime.tensor(x), aligned_strided),
        "aligned strided output over the input": lambda: kernel(
            shared._create_view((N,), "float32", 0), strided_over_it
        ),
        "output on another device": lambda: kernel(
            tvm.runtime.tensor(x), tvm.runtime.empty((N,), "float32", tvm.cpu(1))
        ),
        "aligned view with a byte offset": lambda: kernel(
            base._create_view((N,), "float32", 64), out
        ),
    }
    for name, call in refusals.items():
        for _ in range(2):
            try:
                call()
                wrong.append(f"{name}: accepted")
            except ValueError:
                pass
    for line in wrong:
        print(line)
    print(f"{len(wrong)} wrong")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
