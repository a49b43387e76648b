"""TVM <=0.19 names of features TVM 0.27 removed, under install(): importing and registering
work as in 0.19, the feature checks answer False, and each use is refused naming why
(tvm.target.datatype, tvm.support.libinfo, tvm.contrib.pipeline_executor*, tvm.utils.roofline)."""

from __future__ import annotations

import pytest
import tvm

from compile_engine_compat.surfaces.import_alias import RelayRemovedCallError


def test_a_custom_datatype_registers_and_its_use_is_refused(installed_alias):
    from tvm.target import datatype

    datatype.register("cecfloat", 201)
    datatype.register("cecfloat", 201)  # the same registration again is accepted
    assert datatype.get_type_code("cecfloat") == 201
    assert datatype.get_type_name(201) == "cecfloat"
    assert datatype.get_type_registered(201) and not datatype.get_type_registered(202)
    lower = datatype.create_lower_func({(32, 32): "FloatToCec32"})
    datatype.register_op(lower, "Cast", "llvm", "float", "cecfloat")
    datatype.register_min_func(
        datatype.create_min_lower_func({32: "MinCec"}, "cecfloat"), "cecfloat"
    )
    with pytest.raises(ValueError, match="above 128"):
        datatype.register("low", 100)
    with pytest.raises(ValueError, match="conflicts"):
        datatype.register("other", 201)
    with pytest.raises(KeyError, match="nothing"):
        datatype.get_type_code("nothing")
    # the use: any dtype parse of custom[cecfloat] (here a Relay cast) names why
    from tvm import relay

    x = relay.var("x", shape=(2,), dtype="float32")
    with pytest.raises(Exception, match=r"custom\[cecfloat\].*TVM 0.27 has no custom data types"):
        x.astype("custom[cecfloat]32")
    with pytest.raises(datatype.CustomDatatypeError, match="FloatToCec32"):
        lower(None)
    with pytest.raises(datatype.CustomDatatypeError, match="lower_ite"):
        datatype.lower_ite(None)


def test_lower_custom_datatypes_is_a_pass_refused_when_run(installed_alias):
    transform = tvm.tir.transform.LowerCustomDatatypes()  # made at class definition upstream
    assert isinstance(transform, tvm.transform.Pass)
    mod = tvm.IRModule({"f": tvm.tirx.PrimFunc([], tvm.tirx.Evaluate(0))})
    with pytest.raises(Exception, match=r"LowerCustomDatatypes: TVM 0\.27 has no custom"):
        transform(mod)


def test_libinfo_has_the_removed_flags_off(installed_alias):
    info = tvm.support.libinfo()
    assert info["USE_BYODT_POSIT"] == "OFF"
    assert info["USE_LLVM"] not in ("", None)  # TVM 0.27's own flags stay


def test_pipeline_executor_is_disabled_and_refused(installed_alias):
    from tvm.contrib import pipeline_executor, pipeline_executor_build

    assert pipeline_executor.pipeline_executor_enabled() is False
    assert pipeline_executor_build.pipeline_executor_build_enabled() is False
    with pytest.raises(RelayRemovedCallError, match="no pipeline executor"):
        pipeline_executor_build.PipelineConfig()
    with pytest.raises(RelayRemovedCallError, match="no pipeline executor"):
        pipeline_executor.PipelineModule(None)


def test_roofline_imports_and_is_refused_at_the_call(installed_alias):
    import tvm.utils

    with pytest.raises(RelayRemovedCallError, match="no profiler"):
        tvm.utils.roofline_analysis(None, {}, "llvm", tvm.cpu())
    with pytest.raises(RelayRemovedCallError, match="microbenchmarks"):
        tvm.utils.roofline.x86.estimate_peak_fma_vector_flops("llvm", tvm.cpu(), None, "float32")
