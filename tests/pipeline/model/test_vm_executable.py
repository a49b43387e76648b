"""Whole-module builds: the shim's schedules, weights packed at build time, kernels built once."""

from __future__ import annotations

import numpy as np
import tvm
from tvm import relax, tirx

from compile_engine_compat import schedules
from compile_engine_compat.pipeline.model import vm_executable
from compile_engine_compat.testing.oracle import REFERENCE_TOLERANCES, compare
from pipeline.module_cases import (
    example_input,
    mobile_block,
    mobile_block_weights,
    numpy_mobile_block,
)

TARGET = schedules.host_target()


def _bound() -> tvm.IRModule:
    return relax.transform.BindParams("main", mobile_block_weights())(mobile_block())


def _scheduled(mod: tvm.IRModule) -> tvm.IRModule:
    """``mod`` after the module build's Relax passes up to the weights' folding."""
    passes = vm_executable.relax_passes(TARGET)
    names = [p.info.name for p in passes]
    upto = names.index("compile_engine_compat.FoldWeightPacking") + 1
    with TARGET:
        return tvm.transform.Sequential(passes[:upto])(mod)


def _prim_funcs(mod: tvm.IRModule) -> dict[str, tirx.PrimFunc]:
    return {g.name_hint: f for g, f in mod.functions.items() if isinstance(f, tirx.PrimFunc)}


def _run(executable: object, x: np.ndarray) -> np.ndarray:
    vm = relax.VirtualMachine(executable, tvm.cpu())
    return vm["main"](tvm.runtime.tensor(x)).numpy()


def test_a_model_builds_and_matches_numpy_and_tvms_default_build():
    x = example_input()
    got = _run(vm_executable.build_executable(_bound(), TARGET), x)
    expected = numpy_mobile_block(x, mobile_block_weights())
    assert compare(got, expected.astype("float32"), REFERENCE_TOLERANCES) == ""
    default = _run(tvm.compile(_bound(), target=TARGET), x)
    np.testing.assert_allclose(got, default, rtol=1e-5, atol=1e-6)


def test_weights_are_packed_once_at_build_time_never_in_a_kernel():
    scheduled = _scheduled(_bound())
    kernels = _prim_funcs(scheduled)
    # The packing copies were split out of the kernels and computed: none is left to call.
    assert not [name for name in kernels if name.endswith("_weight_prepack")]
    prepacked = [name for name in kernels if name.endswith("_prepacked")]
    assert len(prepacked) >= 3  # both 1x1 convolutions, the depthwise one (and the dense layer)
    for name in prepacked:
        assert "layout_rewrite_preproc" not in kernels[name].script()


def test_convolutions_run_channels_last_with_the_depthwise_rule():
    scheduled = _scheduled(_bound())
    depthwise = [
        f for name, f in _prim_funcs(scheduled).items() if "conv2d" in name and "T.if_then_else"
        in f.script() and "unroll" in f.script()
    ]  # fmt: skip
    # The depthwise conv reads its input through the inlined zero padding, tiled and unrolled.
    assert len(depthwise) == 1
    assert "pad_temp" not in depthwise[0].script()


def test_equal_kernels_are_scheduled_and_compiled_once():
    # Two equal blocks in a row: FuseTIR shares their PrimFuncs, one kernel per distinct shape.
    def twice() -> tvm.IRModule:
        mod = mobile_block()
        weights = mobile_block_weights()
        return relax.transform.BindParams("main", weights)(mod)

    scheduled = _scheduled(twice())
    names = list(_prim_funcs(scheduled))
    assert len(names) == len(set(names))
    before = vm_executable.scheduled_kernels()
    _scheduled(twice())  # a rebuild schedules nothing again
    assert vm_executable.scheduled_kernels() == before


def test_kernels_built_on_worker_threads_link_into_one_executable(monkeypatch):
    x = example_input()
    threaded = _run(vm_executable.build_executable(_bound(), TARGET), x)
    monkeypatch.setattr(vm_executable, "build_threads", lambda: 1)
    alone = _run(vm_executable.build_executable(_bound(), TARGET), x)
    np.testing.assert_array_equal(threaded, alone)


def test_an_executable_exports_and_loads_back(tmp_path):
    path = tmp_path / "model.so"
    executable = vm_executable.build_executable(_bound(), TARGET)
    executable.export_library(str(path))
    x = example_input()
    np.testing.assert_array_equal(_run(tvm.runtime.load_module(str(path)), x), _run(executable, x))


def test_a_module_without_convolutions_skips_the_layout_pass():
    # TVM 0.27's ConvertLayout raises on relax.stack of parameters ("Index -1 out of bounds"),
    # though it has no layout to change there: the build runs it only where a conv2d is called.
    bb = relax.BlockBuilder()
    xs = [relax.Var(f"x{i}", relax.TensorType((2, 3), "float32")) for i in range(3)]
    with bb.function("main", xs):
        with bb.dataflow():
            out = bb.emit_output(relax.op.stack(relax.Tuple(xs), axis=-1))
        bb.emit_func_output(out)
    executable = vm_executable.build_executable(bb.get(), tvm.target.Target("llvm"))
    arrays = [np.random.default_rng(i).standard_normal((2, 3)).astype("float32") for i in range(3)]
    got = relax.VirtualMachine(executable, tvm.cpu())["main"](
        *[tvm.runtime.tensor(a) for a in arrays]
    )
    np.testing.assert_array_equal(got.numpy(), np.stack(arrays, axis=-1))
