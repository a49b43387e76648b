"""``relay.build``'s lib prints its kernels, as Relay's host module did (``get_source``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import tvm
from tvm import relax

from compile_engine_compat import relay
from compile_engine_compat.relay._impl.host_library import HostLibrary


def _build() -> Any:
    x = relay.var("x", shape=(4, 8))
    return relay.build(relay.Function([x], relay.exp(x)), target="llvm")


def test_get_source_prints_the_kernels_assembly_and_llvm_ir():
    factory = _build()
    _, lib, _ = factory
    asm = lib.get_source("asm")
    assert ".text" in asm and "exp" in asm  # the kernel's symbol, in x86 assembly
    assert "define " in lib.get_source("ll")  # LLVM IR
    assert factory.lib.get_source("asm") == asm
    assert lib.imported_modules[0].type_key == "llvm"
    assert lib.imported_modules[0].get_source("asm") == asm


def test_the_lib_is_still_the_vm_executable():
    factory = _build()
    lib = factory.get_lib()
    assert isinstance(lib, HostLibrary) and isinstance(lib, relax.VMExecutable)
    x = np.linspace(-1, 1, 32, dtype="float32").reshape(4, 8)
    got = relax.VirtualMachine(lib, tvm.cpu())["main"](tvm.runtime.tensor(x)).numpy()
    np.testing.assert_allclose(got, np.exp(x), rtol=1e-6)


def test_an_unprintable_format_names_the_module():
    _, lib, _ = _build()
    with pytest.raises(ValueError, match=r"'llvm' module .* 'no-such-format'"):
        lib.get_source("no-such-format")


def test_a_build_from_the_compile_cache_says_it_keeps_no_source(tmp_path, monkeypatch):
    monkeypatch.setenv("COMPILE_ENGINE_COMPAT_CACHE_DIR", str(tmp_path))
    _build()  # stores the library
    cached = _build()
    assert cached.library is not None
    _, lib, _ = cached
    with pytest.raises(ValueError, match=r"compile cache .* keeps no source"):
        lib.get_source("asm")


def test_get_source_prints_every_kernel_when_the_build_made_several_modules():
    # The build pool compiles the kernels into several LLVM modules; Relay's one host module
    # printed them all (upstream's int8 tests look for vpdpbusd in the whole text).
    x = relay.var("x", shape=(16, 32))
    w = relay.var("w", shape=(24, 32))
    y = relay.nn.dense(relay.exp(x), w)
    lib = relay.build(relay.Function([x, w], relay.sigmoid(relay.transpose(y))), "llvm").lib
    asm = lib.get_source("asm")
    modules = lib.imported_modules
    assert len(modules) > 1
    assert all(module.get_source("asm") in asm for module in modules)
