"""External codegens at relay.build: ccompiler served, errors naming compiler and partition."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import tvm

from compile_engine_compat.relay._impl.external_codegen import ExternalCodegenError
from compile_engine_compat.surfaces.import_alias import install, installed, uninstall


@pytest.fixture
def relay_alias() -> Iterator[Any]:
    was = installed()
    install()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from tvm import relay

        yield relay
    if not was:
        uninstall()


def _partitioned(relay: Any, compiler: str, ops: tuple[str, ...] = ("add", "multiply")) -> Any:
    """exp((x + y) * y) + x with ``ops`` offloaded to ``compiler`` (two partitions)."""
    from tvm.relay import transform

    for name in ops:
        tvm.ir.register_op_attr(name, f"target.{compiler}", lambda expr: True)
    try:
        x, y = relay.var("x", shape=(4, 4)), relay.var("y", shape=(4, 4))
        body = relay.add(relay.exp(relay.multiply(relay.add(x, y), y)), x)
        mod = tvm.IRModule.from_expr(relay.Function([x, y], body))
        mod = transform.AnnotateTarget([compiler])(mod)
        mod = transform.MergeCompilerRegions()(mod)
        return transform.PartitionGraph()(mod)
    finally:  # op attributes are process-wide: leave none behind for other tests
        for name in ops:
            relay.op.get(name).reset_attr(f"target.{compiler}")


def _inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {n: rng.uniform(0, 1, (4, 4)).astype("float32") for n in "xy"}


def _expected(v: dict[str, np.ndarray]) -> np.ndarray:
    return np.exp((v["x"] + v["y"]) * v["y"]) + v["x"]


def test_ccompiler_builds_exports_reloads_and_matches_numpy(relay_alias, tmp_path):
    relay = relay_alias
    from tvm.contrib import graph_executor

    mod = _partitioned(relay, "ccompiler")
    names = sorted(g.name_hint for g in mod.get_global_vars())
    assert names == ["main", "tvmgen_default_ccompiler_main_0", "tvmgen_default_ccompiler_main_1"]
    lib = relay.build(mod, target="llvm")
    lib.export_library(str(tmp_path / "cc.so"))
    module = graph_executor.GraphModule(
        tvm.runtime.load_module(str(tmp_path / "cc.so"))["default"](tvm.cpu())
    )
    values = _inputs()
    for name, value in values.items():
        module.set_input(name, value)
    module.run()
    np.testing.assert_allclose(module.get_output(0).numpy(), _expected(values), rtol=1e-5)


def test_ccompiler_refuses_an_op_it_cannot_compile(relay_alias):
    relay = relay_alias
    mod = _partitioned(relay, "ccompiler", ops=("add", "multiply", "exp"))
    with pytest.raises(
        ExternalCodegenError,
        match=r"relay\.ext\.ccompiler failed on partition "
        r"'tvmgen_default_ccompiler_main_0'.*not exp",
    ):
        relay.build(mod, target="llvm")


def test_a_codegen_that_raises_names_the_compiler_and_the_partition(relay_alias):
    relay = relay_alias

    def broken(func: Any) -> Any:
        raise RuntimeError("accelerator out of registers")

    tvm.register_func("relay.ext.brokenacc", broken, override=True)
    mod = _partitioned(relay, "brokenacc")
    with pytest.raises(ExternalCodegenError) as info:
        relay.build(mod, target="llvm")
    message = str(info.value)
    assert "relay.ext.brokenacc" in message and "tvmgen_default_brokenacc_main_" in message
    assert "accelerator out of registers" in message


def test_a_codegen_gets_the_relay_function_and_must_return_a_module(relay_alias):
    relay = relay_alias
    seen: list[Any] = []

    def lazy(func: Any) -> Any:
        seen.append(func)
        return "not a module"

    tvm.register_func("relay.ext.lazyacc", lazy, override=True)
    mod = _partitioned(relay, "lazyacc")
    with pytest.raises(ExternalCodegenError, match=r"returned str .* must return a runtime module"):
        relay.build(mod, target="llvm")
    assert isinstance(seen[0], relay.Function)
    assert seen[0].attrs["Compiler"] == "lazyacc"


def test_a_compiler_without_codegen_is_refused_not_run_on_the_host(relay_alias):
    relay = relay_alias
    mod = _partitioned(relay, "nowhereacc")
    with pytest.raises(
        ExternalCodegenError, match=r"no codegen for external compiler 'nowhereacc'"
    ):
        relay.build(mod, target="llvm")


def test_a_users_relax_ext_codegen_gets_the_relax_functions(relay_alias):
    import tvm_ffi
    from tvm import relax

    from compile_engine_compat.relay._impl import ccompiler
    from compile_engine_compat.relay._impl.origin import relay_origin

    relay = relay_alias
    seen: list[Any] = []

    def relax_codegen(functions: Any, options: Any, constants: Any) -> list[Any]:
        seen.extend(functions)
        # TVM 0.27's contract: Relax functions in, one module each out (built here with the
        # served ccompiler on the Relay graph behind each).
        return [ccompiler.codegen(relay_origin(f)) for f in functions]

    tvm_ffi.register_global_func("relax.ext.relaxacc", relax_codegen, override=True)
    for name in ("add", "multiply"):
        tvm.ir.register_op_attr(name, "target.relaxacc", lambda expr: True)
    try:
        x, y = relay.var("x", shape=(4, 4)), relay.var("y", shape=(4, 4))
        mod = tvm.IRModule.from_expr(relay.Function([x, y], relay.multiply(relay.add(x, y), y)))
        from tvm.relay import transform

        mod = transform.PartitionGraph()(
            transform.MergeCompilerRegions()(transform.AnnotateTarget("relaxacc")(mod))
        )
    finally:
        for name in ("add", "multiply"):
            relay.op.get(name).reset_attr("target.relaxacc")
    from tvm.contrib import graph_executor

    module = graph_executor.GraphModule(relay.build(mod, "llvm")["default"](tvm.cpu()))
    values = _inputs()
    for name, value in values.items():
        module.set_input(name, value)
    module.run()
    np.testing.assert_allclose(
        module.get_output(0).numpy(), (values["x"] + values["y"]) * values["y"], rtol=1e-5
    )
    assert seen and all(isinstance(f, relax.Function) for f in seen)
    assert str(seen[0].attrs["Codegen"]) == "relaxacc"
