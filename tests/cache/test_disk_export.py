"""The cache's export (assembly in memory, linked in a child) matches ``export_library``."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import tvm
from _builders import build
from tvm import relax

from compile_engine_compat.cache import disk as _disk_cache

R = relax.op
_HAS_BINUTILS = shutil.which("nm") is not None and shutil.which("readelf") is not None


def _func() -> relax.Function:
    return build(
        "main", [("x", (64, 64), "float32")], lambda bb, x: R.nn.relu(bb.emit(R.add(x, x)))
    )


def _symbols(library: Path) -> list[str]:
    out = subprocess.run(
        ["nm", "-D", "--defined-only", str(library)], capture_output=True, text=True, check=True
    ).stdout
    return sorted(line.split()[-1] for line in out.splitlines() if line.strip())


def _library_bin(library: Path) -> bytes:
    """Return the bytes of ``__tvm_ffi__library_bin`` (the packed device code) in ``library``."""
    sizes = subprocess.run(
        ["nm", "-S", "--defined-only", str(library)], capture_output=True, text=True, check=True
    ).stdout
    (address, size) = next(
        (int(p[0], 16), int(p[1], 16))
        for p in (line.split() for line in sizes.splitlines())
        if len(p) == 4 and p[3] == "__tvm_ffi__library_bin"
    )
    sections = subprocess.run(
        ["readelf", "-SW", str(library)], capture_output=True, text=True, check=True
    ).stdout
    data = library.read_bytes()
    for found in re.finditer(r"\]\s+\S+\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", sections):
        start, offset, length = (int(found.group(i), 16) for i in (1, 2, 3))
        if start <= address < start + length:
            begin = offset + address - start
            return data[begin : begin + size]
    raise AssertionError("no section holds __tvm_ffi__library_bin")


def _both(module: object, tmp_path: Path) -> tuple[Path, Path]:
    reference = tmp_path / "reference.so"
    module.export_library(str(reference))  # type: ignore[attr-defined]
    ours = tmp_path / "ours"
    ours.mkdir()
    return reference, _disk_cache._export(module, ours)


@pytest.mark.skipif(not _HAS_BINUTILS, reason="needs nm and readelf")
def test_a_cpu_kernel_exports_like_export_library_and_runs(engine, tmp_path):
    cached = engine.lower(_func(), "llvm")
    reference, ours = _both(tvm.compile(cached.funcs, target="llvm"), tmp_path)
    assert _symbols(ours) == _symbols(reference)
    assert sorted(p.name for p in ours.parent.iterdir()) == ["kernel.so"]  # the .s is gone
    kernel = tvm.runtime.load_module(str(ours))[cached.prim_fn_var.name_hint]
    x = np.arange(64 * 64, dtype="float32").reshape(64, 64) - 2000
    out = tvm.runtime.tensor(np.empty_like(x))
    kernel(tvm.runtime.tensor(x), out)
    np.testing.assert_array_equal(out.numpy(), np.maximum(x + x, 0))


def _cuda_can_build() -> bool:
    enabled = tvm.get_global_func("target.build.cuda", allow_missing=True) is not None
    return enabled and shutil.which("nvcc") is not None and _HAS_BINUTILS


@pytest.mark.skipif(not _cuda_can_build(), reason="TVM built without CUDA, or no nvcc/binutils")
def test_device_code_is_packed_like_export_library(engine, tmp_path):
    # Loading it needs a GPU runtime; the packed device code and the symbols must be TVM's own.
    cached = engine.lower(_func(), "cuda")
    reference, ours = _both(tvm.compile(cached.funcs, target="cuda"), tmp_path)
    assert _symbols(ours) == _symbols(reference)
    assert _library_bin(ours) == _library_bin(reference)


@pytest.mark.skipif(not _HAS_BINUTILS, reason="needs nm and readelf")
def test_a_vm_executables_constants_are_packed_byte_for_byte_like_export_library(tmp_path):
    # The VM's bytecode and constants are written as they are and included by the assembler
    # (.incbin) instead of printed as assembly: the same bytes under the same symbol, and the
    # library runs.
    weights = np.arange(3 * 64, dtype="float32").reshape(3, 64)
    func = build(
        "main",
        [("x", (3, 64), "float32")],
        lambda bb, x: R.multiply(x, relax.const(weights)),
    )
    executable = tvm.compile(tvm.IRModule({"main": func}), target="llvm")
    reference, ours = _both(executable, tmp_path)
    assert _symbols(ours) == _symbols(reference)
    assert _library_bin(ours) == _library_bin(reference)
    assert sorted(p.name for p in ours.parent.iterdir()) == ["kernel.so"]  # .s and .bin gone
    vm = relax.VirtualMachine(tvm.runtime.load_module(str(ours)), tvm.cpu())
    x = np.full((3, 64), 2.0, dtype="float32")
    np.testing.assert_array_equal(vm["main"](tvm.runtime.tensor(x)).numpy(), x * weights)
