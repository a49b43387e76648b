"""TVM <=0.19 target spellings everywhere under ``install()``: ``tvm.target.Target`` takes the
command-line strings, and the constructor functions (``cuda``, ``arm_cpu``, ...) build targets.

The patch of ``Target.__init__`` is a process patch: opt-in, undone by ``uninstall()``, with an
environment off switch, and a probe of the TVM signature it wraps.
"""

from __future__ import annotations

import inspect
import warnings

import pytest
import tvm

import compile_engine_compat
from compile_engine_compat import CompileEngineDeprecationWarning
from compile_engine_compat.surfaces.import_alias import installed as alias_installed
from compile_engine_compat.targets import LEGACY_TARGETS_ENV, LegacyTargetError
from compile_engine_compat.tvm_legacy import target as legacy_target


@pytest.fixture
def installed():
    was = alias_installed()
    compile_engine_compat.install()
    try:
        yield
    finally:
        if not was:
            compile_engine_compat.uninstall()


def test_probe_tvms_target_init_is_what_the_patch_wraps():
    """The day TVM changes Target.__init__, this fails before any user program does."""
    original = legacy_target.tvm.target.Target.__dict__.get("__init__")
    wrapped = inspect.signature(legacy_target.TVM_TARGET_INIT).parameters
    ours = inspect.signature(legacy_target.legacy_target_init).parameters
    assert list(wrapped) == list(ours) == ["self", "target", "host"]
    assert wrapped["host"].default is None
    if not alias_installed():
        assert original is legacy_target.TVM_TARGET_INIT
        with pytest.raises(ValueError):  # TVM 0.27 alone rejects the command-line form
            tvm.target.Target("llvm -mcpu=core-avx2")


@pytest.mark.parametrize(
    ("text", "attr", "value"),
    [
        ("llvm -mcpu=skylake-avx512", "mcpu", "skylake-avx512"),
        ("llvm -mcpu=core-avx2", "mcpu", "core-avx2"),
        ("llvm -mtriple=aarch64-linux-gnu -mattr=+neon", "mtriple", "aarch64-linux-gnu"),
        ("cuda -arch=sm_80", "arch", "sm_80"),
    ],
)
def test_target_takes_legacy_strings_under_install(installed, text, attr, value):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        target = tvm.target.Target(text)
    assert str(target.attrs[attr]) == value
    assert isinstance(target, tvm.target.Target)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hosted = tvm.target.Target("llvm", host=text if text.startswith("llvm") else "llvm")
    assert hosted.host is not None
    assert str(tvm.target.Target("llvm").kind) == "llvm"  # modern spellings untouched
    assert str(tvm.target.Target({"kind": "llvm", "mcpu": "core-avx2"}).attrs["mcpu"])


def test_a_legacy_string_warns_once_with_its_dict_spelling(installed):
    text = "llvm -mcpu=x86-64 -opt-level=1"  # used by no other test: its first use is here
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tvm.target.Target(text)
        tvm.target.Target(text)
    ours = [w for w in caught if issubclass(w.category, CompileEngineDeprecationWarning)]
    assert len(ours) == 1
    assert '"mcpu": "x86-64"' in str(ours[0].message) and ours[0].filename == __file__


def test_bad_flags_still_raise_naming_the_flag(installed):
    with pytest.raises(LegacyTargetError, match="-nonsense"):
        tvm.target.Target("llvm -nonsense=1")


def test_the_constructor_functions_build_tvm_019s_targets(installed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cuda = tvm.target.cuda(model="a100", arch="sm_80")
        arm = tvm.target.arm_cpu("rasp4b64")
        mali = tvm.target.mali()
        graphics = tvm.target.intel_graphics()
        rasp = tvm.target.rasp()
        created = tvm.target.create("llvm -mcpu=core-avx2")
        rocm = tvm.target.rocm()
        bifrost = tvm.target.bifrost()
        adreno = tvm.target.adreno()
        riscv = tvm.target.riscv_cpu("sifive-e31")
        stm32 = tvm.target.stm32("stm32H7xx")
        with pytest.raises(ValueError, match=r"not supported by tvm\.target\.stm32"):
            tvm.target.stm32("stm32X9xx")
    assert str(stm32.kind) == "c" and str(stm32.attrs["mcpu"]) == "cortex-m7"
    assert str(stm32.attrs["march"]) == "armv7e-m"
    assert str(cuda.kind) == "cuda" and str(cuda.attrs["arch"]) == "sm_80"
    assert list(map(str, arm.keys)) == ["arm_cpu", "cpu"]
    assert str(arm.attrs["mtriple"]) == "aarch64-linux-gnu" and str(arm.attrs["mcpu"]) == (
        "cortex-a72"
    )
    assert "mali" in list(map(str, mali.keys)) and str(mali.kind) == "opencl"
    assert int(graphics.attrs["thread_warp_size"]) == 16
    assert str(rasp.attrs["mtriple"]) == "armv7l-linux-gnueabihf"
    assert str(created.attrs["mcpu"]) == "core-avx2"
    assert str(rocm.kind) == "rocm" and "bifrost" in list(map(str, bifrost.keys))
    assert "adreno" in list(map(str, adreno.keys))
    assert str(riscv.attrs["mabi"]) == "ilp32" and str(riscv.attrs["mcpu"]) == "sifive-e31"
    with pytest.warns(UserWarning, match="cuda arch"):
        tvm.target.cuda()
    with pytest.warns(CompileEngineDeprecationWarning, match="target.constructors"):
        tvm.target.arm_cpu(options="-mcpu=cortex-a53")


def test_off_switch_and_uninstall_give_tvms_own_target_back(monkeypatch):
    compile_engine_compat.install()
    monkeypatch.setenv(LEGACY_TARGETS_ENV, "off")
    with pytest.raises(ValueError):
        tvm.target.Target("llvm -mcpu=core-avx2")
    monkeypatch.delenv(LEGACY_TARGETS_ENV)
    compile_engine_compat.uninstall()
    assert tvm.target.Target.__dict__["__init__"] is legacy_target.TVM_TARGET_INIT
    assert not hasattr(tvm.target, "arm_cpu")
    with pytest.raises(ValueError):
        tvm.target.Target("llvm -mcpu=core-avx2")
