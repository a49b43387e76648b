"""TVM 0.19's ``tvm.testing`` names and plugin under ``install()``: run by a real pytest."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

import compile_engine_compat
from compile_engine_compat.tvm_legacy import testing

pytest_plugins = ["pytester"]


@pytest.fixture
def alias():
    compile_engine_compat.install()
    yield
    compile_engine_compat.uninstall()


def test_install_sets_the_legacy_names_on_tvm_testing(alias):
    import tvm.testing

    for name in testing.__all__:
        assert getattr(tvm.testing, name) is getattr(testing, name), name
    assert tvm.testing.parameter is not testing  # TVM's own names are left alone
    compile_engine_compat.uninstall()
    assert not hasattr(tvm.testing, "uses_gpu")
    compile_engine_compat.install()


def test_requirements_skip_naming_what_is_missing_and_cpu_runs():
    assert testing.requires_llvm.missing() is None
    reason = testing.requires_cuda.missing()
    assert reason is not None and "cuda" in reason.lower()

    # uses_gpu only marks: the test also runs on the CPU.
    def probe() -> None: ...

    def probe2() -> None: ...

    marked = testing.uses_gpu(probe)
    assert [m.name for m in marked.pytestmark] == ["gpu"]
    skipped = testing.requires_gpu(probe2)
    skip = next(m for m in skipped.pytestmark if m.name == "skipif")
    assert skip.args == (True,) and "GPU" in skip.kwargs["reason"]
    with pytest.raises(ValueError, match="support_required"):
        testing.requires_gpu.marks("sometimes")


def test_a_suites_own_feature_checks_and_names_its_parents():
    widget = testing.Feature("cec_widget", "Widget", run_time_check=lambda: "no widget here")
    assert widget.missing() == "Widget: no widget here"
    child = testing.Feature(
        "cec_gadget", parent_features="cec_widget", compile_time_check=lambda: True
    )
    assert child.missing() == "Widget: no widget here"  # what its parent lacks
    assert testing.Feature("cec_llvm", target_kind_enabled="llvm").missing() is None

    def probe() -> None: ...

    skip = next(m for m in child(probe).pytestmark if m.name == "skipif")
    assert skip.args == (True,) and skip.kwargs["reason"] == "Widget: no widget here"


def test_dtype_ranges_span_scopes_and_byoc_requirements():
    assert testing.get_dtype_range("int8") == (-128, 127)
    assert testing.get_dtype_range("float16")[1] == np.finfo("float16").max
    with pytest.raises(TypeError, match="complex64"):
        testing.get_dtype_range("complex64")
    with testing.enable_span_filling(), testing.disable_span_filling():
        pass
    for requirement in (testing.requires_nnapi, testing.requires_vitis_ai, testing.requires_mrvl):
        assert "OFF" in (requirement.missing() or "OFF")  # a flag this wheel builds without
    assert "FVP" in (testing.requires_aprofile_aem_fvp.missing() or "")


def test_cpu_feature_requirements_follow_the_host():
    from tvm.target import codegen

    host = tvm.target.Target(
        {
            "kind": "llvm",
            "mtriple": codegen.llvm_get_system_triple(),
            "mcpu": codegen.llvm_get_system_cpu(),
        }
    )
    has_avx512 = bool(codegen.target_has_features("avx512f", host))
    assert (testing.requires_x86_avx512.missing() is None) == has_avx512
    assert testing.requires_arm_dot.missing() is not None or "aarch64" in str(
        codegen.llvm_get_system_triple()
    )


def test_the_contrib_ffi_and_error_names(alias):
    from tvm.contrib import nvcc, utils
    from tvm.error import TVMError
    from tvm.runtime import container

    assert nvcc.have_fp16(None) is False and nvcc.have_tensorcore() is False
    assert nvcc.have_fp16("7.0") is True
    assert nvcc.have_fp8("8.9") is True and nvcc.have_fp8("8.0") is False
    assert nvcc.have_fp8(None) is False and isinstance(nvcc.have_cudagraph(), bool)
    with utils.tempdir() as tmp:
        assert tmp.relpath("x").endswith("x")
    assert tvm._ffi.base.TVMError is TVMError is tvm.TVMError
    with pytest.raises(TVMError):
        tvm.testing.test_raise_error("InternalError", "boom")  # what TVM 0.27 raises
    assert tvm._ffi.get_global_func("testing.echo")(3) == 3
    assert list(container.tuple_object([1, 2])) == [1, 2]
    assert tvm.te.size_var("n").ty.dtype == "int32"
    assert tvm.ir.structural_equal(tvm.tir.const(1), tvm.tir.const(1))
    from tvm.script import tir as T

    assert T is tvm.script.tirx


def test_relay_backend_runtime_and_executor(alias):
    from tvm.relay.backend import Executor, Runtime

    assert Runtime("cpp").name == "cpp" and Executor("graph", {"link-params": True})["link-params"]
    with pytest.raises(ValueError, match="unknown 'gpaph'"):
        Executor("gpaph")
    assert not Executor("graph")["link-params"] and str(Runtime("crt")) == "crt"
    assert "aot" in Executor.list_registered()
    assert Executor.list_registered_options(Executor("aot"))["interface-api"] == "runtime.String"
    with pytest.raises(tvm.error.TVMError, match='Attribute "woof" is not available'):
        Executor("aot", {"woof": "bark"})
    with pytest.raises(RuntimeError, match=r'found "runtime\.BoxBool"'):
        Executor("aot", {"interface-api": True})
    with pytest.raises(RuntimeError, match='Runtime "woof" is not defined'):
        Runtime.list_registered_options("woof")


CONFTEST = "import compile_engine_compat; compile_engine_compat.install()\n"

SUITE = """
import numpy as np
import pytest
import tvm
import tvm.testing

size, dtype = tvm.testing.parameters((2, "float32"), (3, "int32"))


def test_correlated(size, dtype):
    assert (size, dtype) in ((2, "float32"), (3, "int32"))


def test_every_target(target, dev):
    assert tvm.testing.device_enabled(target) or target != "llvm"
    tvm.testing.assert_allclose(tvm.runtime.tensor(np.ones(2), dev).numpy(), [1, 1])


@tvm.testing.parametrize_targets("llvm", "cuda")
def test_named_targets(target):
    assert target == "llvm"


@tvm.testing.known_failing_targets("llvm")
def test_known_failing(target):
    assert target != "llvm"


@tvm.testing.uses_gpu
def test_uses_gpu_runs_on_cpu():
    pass


@tvm.testing.requires_cuda
def test_needs_cuda():
    raise AssertionError("never runs without CUDA")
"""


def test_the_plugin_serves_an_upstream_style_suite(pytester, alias):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("-p", "no:xdist", "-p", "no:cacheprovider", "-rs")
    outcomes = result.parseoutcomes()
    # correlated 2 + llvm + named llvm + gpu-optional = 5 passed; llvm known failing: 1 xfailed;
    # every GPU target of test_every_target/test_known_failing, named cuda, requires_cuda: skipped.
    assert outcomes["passed"] == 5, result.stdout.str()
    assert outcomes["xfailed"] == 1
    assert outcomes["skipped"] == 2 * (len(testing.DEFAULT_TARGETS) - 1) + 2
    assert "CUDA" in result.stdout.str()
    np.testing.assert_equal(outcomes.get("failed", 0), 0)
