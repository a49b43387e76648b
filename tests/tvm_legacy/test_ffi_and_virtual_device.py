"""tvm._ffi / tvm._ffi.base names and tvm.target.VirtualDevice under install()."""

from __future__ import annotations

import ctypes

import pytest

from compile_engine_compat.surfaces.import_alias import install, installed, uninstall


@pytest.fixture
def tvm_installed():
    was = installed()
    install()
    import tvm

    yield tvm
    if not was:
        uninstall()


def test_ffi_base_names_as_tvm_019(tvm_installed):
    from tvm._ffi.base import TVMError, c_array, c_str, py_str, string_types

    assert py_str(b"relay") == "relay" and string_types == (str,)
    assert c_str("x").value == b"x"
    assert list(c_array(ctypes.c_int, [1, 2])) == [1, 2]
    assert issubclass(tvm_installed.error.InternalError, TVMError)


def test_ffi_registry_functions(tvm_installed):
    import tvm._ffi

    assert tvm._ffi.get_global_func("no.such.function", allow_missing=True) is None
    with pytest.raises(Exception, match=r"no\.such\.function"):
        tvm._ffi.get_global_func("no.such.function")
    names = tvm._ffi.list_global_func_names()
    assert all(isinstance(n, str) for n in names) and len(names) > 100


def test_virtual_device_fields_equality_and_relax_vdevice(tvm_installed):
    tvm = tvm_installed
    unconstrained = tvm.target.VirtualDevice(memory_scope="global")
    assert unconstrained.device_type == -1 and unconstrained.memory_scope == "global"
    assert not unconstrained.is_fully_unconstrained()
    assert tvm.target.VirtualDevice().is_fully_unconstrained()
    cpu = tvm.target.VirtualDevice(tvm.cpu(0), "llvm")
    assert cpu.device_type == 1 and cpu == tvm.target.VirtualDevice(tvm.cpu(0), "llvm")
    assert cpu.as_vdevice().memory_scope == "global"
    with pytest.raises(ValueError, match="without a target"):
        unconstrained.as_vdevice()


def test_removed_relay_global_function_is_refused_at_the_call(tvm_installed):
    import tvm._ffi

    from compile_engine_compat.surfaces.import_alias import RelayRemovedCallError

    # upstream's backend tests fetch it at import: the fetch succeeds, the call says why
    lower_te = tvm._ffi.get_global_func("relay.tec.LowerTE")
    with pytest.raises(RelayRemovedCallError, match=r"relay\.tec\.LowerTE.*LegalizeOps"):
        lower_te("test", None)
    # a program probing for it still sees it missing
    assert tvm._ffi.get_global_func("relay.tec.LowerTE", allow_missing=True) is None


def test_device_planning_is_refused_at_the_call_not_at_the_lookup(tvm_installed):
    from compile_engine_compat.surfaces.import_alias import RelayRemovedCallError

    recover = tvm_installed._ffi.get_global_func("relay.transform.RecoverVirtualDeviceMap")
    with pytest.raises(RelayRemovedCallError, match="RealizeVDevice"):
        recover(None, None)
    with pytest.raises(RelayRemovedCallError, match="RealizeVDevice"):
        tvm_installed.target.make_compilation_config(None, [])
    with pytest.raises(ValueError, match="no_such_global"):
        tvm_installed._ffi.get_global_func("no_such_global")
    assert tvm_installed._ffi.get_global_func("no_such_global", allow_missing=True) is None
