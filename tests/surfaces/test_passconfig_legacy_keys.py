"""TVM <=0.19 PassContext keys: renamed ones translated, dead ones dropped or refused, warned."""

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
DROPPED = [old for old, (new, _) in LEGACY_CONFIG_KEYS.items() if new is None and "tir." != old[:4]]
REFUSED = [old for old, (new, _) in LEGACY_CONFIG_KEYS.items() if new is None and old[:4] == "tir."]


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
    # 32 tir.* keys were registered in TVM 0.19: 26 renamed by prefix, 2 renamed outright, 4 gone.
    tir_keys = [key for key in LEGACY_CONFIG_KEYS if key.startswith("tir.")]
    assert len(tir_keys) == 32
    assert len(REFUSED) == 4
    registered = set(PassContext.list_configs())
    assert all(new in registered for new in RENAMED.values()), set(RENAMED.values()) - registered


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
def test_dead_relay_key_is_dropped_with_a_warning_naming_its_replacement(old):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        ctx = PassContext(config={old: True, "tirx.disable_vectorize": True})
    assert dict(ctx.config) == {"tirx.disable_vectorize": True}
    (warning,) = _legacy_warnings(record)
    assert warning.api == old
    assert LEGACY_CONFIG_KEYS[old][1] in str(warning)


@pytest.mark.parametrize("old", REFUSED)
def test_removed_tir_key_raises_naming_it(old):
    with pytest.raises(AttributeError, match=f"Invalid config option '{old}'.*removed"):
        PassContext(config={old: True})


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
