"""TVM <=0.19 PassContext keys: every one accepted; renamed ones translated, dead ones dropped,
each with one warning."""

from __future__ import annotations

import warnings

import pytest
import tvm
from tvm.ir.transform import PassContext

from compile_engine_compat import CompileEngineDeprecationWarning
from compile_engine_compat import compile_engine as _ce  # noqa: F401  (installs the support)
from compile_engine_compat.api_table import LEGACY_CONFIG_KEYS
from compile_engine_compat.surfaces import passconfig as _passconfig

RENAMED = {old: new for old, (new, _) in LEGACY_CONFIG_KEYS.items() if new is not None}
DROPPED = [old for old, (new, _) in LEGACY_CONFIG_KEYS.items() if new is None]

#: Every key TVM v0.19.0 registered (TVM_REGISTER_PASS_CONFIG_OPTION in its C++ sources,
#: src/ and include/), with a value of the type it registered.
TVM_019_KEYS: dict[str, object] = {
    **dict.fromkeys(
        (
            "tir.noalias", "tir.detect_global_barrier", "tir.instrument_bound_checkers",
            "tir.disable_assert", "tir.disable_vectorize", "tir.enable_buffer_level_predication",
            "tir.disable_cse_tir", "tir.enable_debug", "tir.enable_equiv_terms_in_cse_tir",
            "tir.disable_storage_rewrite", "tir.is_entry_func", "tir.debug_keep_trivial_loop",
            "tir.use_async_copy", "tir.merge_static_smem", "tir.instrument_lwp", "tir.ptx_ldg32",
            "tir.experimental_dma_bypass_cache", "ir.enable_si_builder",
            "relay.frontend.fill_span", "testing.immutable_module",
            "relax.transform.apply_legalize_ops", "relax.lift_transform_params.consume_params",
            "relax.backend.use_cuda_graph", "relay.backend.use_auto_scheduler",
            "relay.backend.use_meta_schedule", "relay.FuseOps.link_params",
            "relay.remove_standalone_reshapes.enable",
            "relay.ToMixedPrecision.keep_orig_output_dtype", "te.keep_schedule_record",
            "tir.lwp_disable_func_prof", "tir.instr_siblings", "tir.reset_start_id",
            "tir.usmp.enable", "tir.usmp.use_workspace_io",
        ),
        True,
    ),
    **dict.fromkeys(
        (
            "tir.vtcm_capacity", "relax.fallback_device_type", "relax.FuseOps.max_depth",
            "relay.ext.clml.target_version", "relay.backend.use_meta_schedule_dispatch",
            "relay.collage.tvm_max_depth", "relay.collage.byoc_max_depth",
            "relay.fallback_device_type", "relay.FuseOps.max_depth", "tir.lwp_max_depth",
            "tir.lwp_min_height",
        ),
        1,
    ),
    **dict.fromkeys(
        (
            "relay.ext.vitis_ai.options.target", "relay.ext.vitis_ai.options.build_dir",
            "relay.ext.vitis_ai.options.work_dir",
            "relay.ext.vitis_ai.options.export_runtime_module",
            "relay.ext.vitis_ai.options.load_runtime_module", "relay.backend.tir_converter",
            "cuda.kernels_output_dir", "tir.usmp.algorithm", "tir.usmp.custom_algorithm",
        ),
        "x",
    ),
    **{
        key: {}
        for key in (
            "relax.ext.tensorrt.options", "relay.ext.mrvl.options", "relay.ext.verilator.options",
            "relay.ext.vitis_ai.options", "tir.HoistExpression", "tir.HoistIfThenElse",
            "tir.InjectDoubleBuffer", "tir.LoopPartition",
            "tir.ReduceBranchingThroughOvercompute", "tir.RemoveNoOp", "tir.Simplify",
            "tir.UnrollLoop",
        )
    },
    "tir.add_lower_pass": [],
    "relay.collage.byoc_fusion_style": [],
}  # fmt: skip


def _valid_value(new_key: str) -> object:
    """A value TVM accepts for ``new_key``, from its own registered type."""
    type_name = str(PassContext.list_configs()[new_key]["type"])
    if type_name == "bool":
        return True
    if type_name in ("int", "ir.IntImm"):
        return 1
    if type_name.endswith("Array"):
        return []
    return {}  # a config object (UnrollLoop, LoopPartition, ...): all defaults


def _legacy_warnings(
    record: list[warnings.WarningMessage],
) -> list[CompileEngineDeprecationWarning]:
    return [w.message for w in record if isinstance(w.message, CompileEngineDeprecationWarning)]


def test_the_table_covers_the_tvm_0_19_tir_keys():
    # 36 tir.* keys were registered in TVM 0.19: 26 renamed by prefix, 2 renamed outright, 8 gone.
    tir_keys = [key for key in LEGACY_CONFIG_KEYS if key.startswith("tir.")]
    assert len(tir_keys) == 36
    assert len([key for key in DROPPED if key.startswith("tir.")]) == 8
    registered = set(PassContext.list_configs())
    assert all(new in registered for new in RENAMED.values()), set(RENAMED.values()) - registered


def test_every_key_tvm_0_19_registered_is_handled():
    assert len(TVM_019_KEYS) == 68
    registered = {str(key) for key in PassContext.list_configs()}
    unhandled = [
        key
        for key in TVM_019_KEYS
        if key not in registered and key not in LEGACY_CONFIG_KEYS and key not in _passconfig.KEYS
    ]
    assert unhandled == []


@pytest.mark.parametrize("key", sorted(TVM_019_KEYS))
def test_every_key_tvm_0_19_registered_is_accepted(key):
    registered = {str(k) for k in PassContext.list_configs()}
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        ctx = PassContext(config={key: TVM_019_KEYS[key]})
        with ctx:
            pass
    legacy = _legacy_warnings(record)
    if key in registered:  # TVM 0.27 still has it: TVM's own, untouched
        assert key in ctx.config and legacy == []
        return
    assert key not in ctx.config
    (warning,) = legacy  # exactly one warning, naming the key
    assert warning.api == key
    if key in RENAMED:
        assert RENAMED[key] in ctx.config
    elif key in LEGACY_CONFIG_KEYS:  # dropped: the warning says what it no longer does
        assert LEGACY_CONFIG_KEYS[key][1] in str(warning)


@pytest.mark.parametrize("old", sorted(RENAMED))
def test_renamed_key_reaches_tvm_under_its_new_name_with_a_warning(old):
    new = RENAMED[old]
    value = _valid_value(new)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        ctx = PassContext(config={old: value})
    assert new in ctx.config and old not in ctx.config
    (warning,) = _legacy_warnings(record)
    assert warning.api == old
    assert repr(new) in str(warning)
    assert record[0].filename == __file__


@pytest.mark.parametrize("old", DROPPED)
def test_dead_key_is_dropped_with_a_warning_naming_what_it_no_longer_does(old):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        ctx = PassContext(config={old: True, "tirx.disable_vectorize": True})
    assert dict(ctx.config) == {"tirx.disable_vectorize": True}
    (warning,) = _legacy_warnings(record)
    assert warning.api == old
    assert LEGACY_CONFIG_KEYS[old][1] in str(warning)


def test_translated_key_takes_effect_in_a_build():
    # tir.disable_vectorize must reach the TIR pipeline as tirx.disable_vectorize.
    with PassContext(config={"tir.disable_vectorize": True}):
        assert PassContext.current().config["tirx.disable_vectorize"]


def test_mixed_with_the_engine_keys_and_positional_config():
    ctx = PassContext(
        3, None, None, None, {"tir.noalias": False, _passconfig.USE_AUTO_SCHEDULER: 1}
    )
    assert dict(ctx.config) == {"tirx.noalias": False}
    with ctx:
        assert _passconfig.current_config() == {_passconfig.USE_AUTO_SCHEDULER: True}


def test_off_switch_lets_tvm_reject_the_legacy_keys():
    _passconfig.uninstall()
    try:
        with pytest.raises(AttributeError, match=r"Invalid config option 'tir\.disable_vectorize'"):
            PassContext(config={"tir.disable_vectorize": True})
    finally:
        _passconfig.install()
    assert "tirx.disable_vectorize" in PassContext(config={"tir.disable_vectorize": True}).config


def test_a_config_without_legacy_keys_is_untouched():
    config = {"tirx.disable_vectorize": True}
    assert dict(tvm.transform.PassContext(config=config).config) == config


def test_scan_reports_each_legacy_key_as_a_string_literal(tmp_path):
    from compile_engine_compat.migrate.scan import scan_paths

    keys = sorted(LEGACY_CONFIG_KEYS)
    lines = ["import tvm", *(f"tvm.transform.PassContext(config={{{key!r}: 1}})" for key in keys)]
    (tmp_path / "uses.py").write_text("\n".join(lines) + "\n")
    findings, skipped = scan_paths([str(tmp_path)])
    assert not skipped
    assert sorted(f.api for f in findings) == keys
    assert all(f.fix == "manual" for f in findings)


def test_fix_lists_each_legacy_key_as_manual_and_changes_nothing():
    from compile_engine_compat.migrate.fix import fix_code

    code = 'import tvm\nCONFIG = {"tir.noalias": False, "relay.FuseOps.max_depth": 2}\n'
    after, changes, manual = fix_code(code)
    assert after == code and changes == []
    assert [(m.line, m.col, m.message.split(" ")[0]) for m in manual] == [
        (2, 11, "tir.noalias"),
        (2, 33, "relay.FuseOps.max_depth"),
    ]
