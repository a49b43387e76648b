"""The opt-in import alias, its ``tvm.relay`` stub, feature detection, and legacy programs."""

from __future__ import annotations

import importlib
import logging
import pathlib
import runpy
import sys
import warnings

import pytest
import tvm

import compile_engine_compat
from compile_engine_compat.surfaces import import_alias as _import_alias

PROGRAMS = pathlib.Path(__file__).resolve().parents[1] / "legacy_programs"


@pytest.fixture
def alias():
    compile_engine_compat.install()
    yield
    compile_engine_compat.uninstall()


def test_off_by_default():
    assert not _import_alias.installed()
    assert not hasattr(tvm, "relay")
    with pytest.raises(ModuleNotFoundError, match=r"No module named 'tvm\.relay'"):
        importlib.import_module("tvm.relay.backend.compile_engine")


def test_every_legacy_import_form_resolves_to_the_shim(alias):
    import tvm.relay.backend.compile_engine as ce
    from tvm.relay.backend import compile_engine, te_compiler

    assert compile_engine is ce is compile_engine_compat.compile_engine
    assert te_compiler is compile_engine_compat.te_compiler
    assert tvm.relay.backend.te_compiler is te_compiler
    # The shim modules keep their own identity.
    assert ce.__spec__ is not None
    assert ce.__spec__.name == "compile_engine_compat.compile_engine"
    assert ce.__name__ == "compile_engine_compat.compile_engine"


def test_relay_is_the_front_end(alias):
    from tvm import relay

    import compile_engine_compat.relay as front_end

    assert relay is front_end and tvm.relay is front_end
    assert relay.backend.compile_engine is compile_engine_compat.compile_engine
    assert relay.backend.te_compiler is compile_engine_compat.te_compiler


def test_relay_era_imports_resolve_to_the_front_end(alias):
    import tvm.relay.op
    import tvm.relay.testing
    from tvm.relay import analysis, nn, transform
    from tvm.relay.testing import run_infer_type
    from tvm.relay.testing.temp_op_attr import TempOpAttr

    from compile_engine_compat.relay import testing

    assert tvm.relay.testing is testing and run_infer_type is testing.run_infer_type
    assert TempOpAttr.__module__ == "compile_engine_compat.relay.testing.temp_op_attr"
    assert nn.conv2d is tvm.relay.op.nn.conv2d and transform.InferType and analysis.free_vars
    # The module keeps its own identity, as the engine aliases do.
    assert tvm.relay.testing.__spec__ is not None
    assert tvm.relay.testing.__spec__.name == "compile_engine_compat.relay.testing"
    x = tvm.relay.var("x", shape=(2,))
    assert run_infer_type(tvm.relay.exp(x)).checked_type == tvm.relay.TensorType((2,))


@pytest.mark.parametrize(
    ("statement", "why"),
    [
        ("tvm.relay.prelude", "prelude"),
        ("tvm.relay.qnn.op", "QNN"),
        ("tvm.relay.If", "relax.If"),
        ("tvm.relay.no_such_thing", "does not provide it"),
    ],
)
def test_other_attributes_name_the_replacement(alias, statement, why):
    import tvm.relay

    with pytest.raises(AttributeError) as info:
        eval(statement, {"tvm": tvm})
    assert isinstance(info.value, _import_alias.RelayRemovedError)
    _assert_helpful(str(info.value))
    assert why in str(info.value)


@pytest.mark.parametrize(
    ("source", "why"),
    [
        ("import tvm.relay.qnn.op", "QNN"),
        ("from tvm.relay.qnn.op import quantize", "QNN"),
        ("from tvm.relay.backend import vm", "Relay VM"),
        ("from tvm.relay.prelude import Prelude", "prelude"),
        ("import tvm.relay.adt", "ADTs"),
        ("from tvm.relay.backend import executor", "does not provide it"),
    ],
)
def test_other_modules_name_the_replacement(alias, source, why):
    with pytest.raises(ModuleNotFoundError) as info:
        exec(source, {})
    assert isinstance(info.value, _import_alias.RelayRemovedImportError)
    _assert_helpful(str(info.value))
    assert why in str(info.value)


def _assert_helpful(message: str) -> None:
    assert "Relay was removed in TVM 0.20" in message
    assert "compile_engine_compat.relay" in message
    assert "compile_engine_compat.compile_engine" in message


def test_feature_detection_while_installed(alias):
    # Documented: hasattr(tvm, "relay") turns True once tvm.relay is imported, and
    # "from tvm import relay" succeeds; probes for removed parts stay False.
    assert not hasattr(tvm, "relay")
    from tvm import relay

    assert hasattr(tvm, "relay")
    assert hasattr(relay, "var") and not hasattr(relay, "prelude")
    assert hasattr(relay, "backend") and hasattr(relay.backend, "compile_engine")
    assert hasattr(tvm, "relax")  # the reliable probe for modern TVM


def test_uninstall_restores_everything():
    compile_engine_compat.install()
    compile_engine_compat.install()  # idempotent
    from tvm.relay.backend import compile_engine  # noqa: F401

    compile_engine_compat.uninstall()
    assert not hasattr(tvm, "relay")
    assert not any(n == "tvm.relay" or n.startswith("tvm.relay.") for n in sys.modules)
    assert not _import_alias.installed()
    with pytest.raises(ModuleNotFoundError, match=r"No module named 'tvm\.relay'"):
        importlib.import_module("tvm.relay")
    assert (
        sys.modules["compile_engine_compat.compile_engine"] is compile_engine_compat.compile_engine
    )


# -- legacy programs, untouched but for their Relax sources ------------------------------------


def _run(name: str) -> dict:
    namespace = runpy.run_path(str(PROGRAMS / name))
    return namespace["main"]()


def test_legacy_te_compiler_program(alias, engine):
    result = _run("te_compiler_program.py")
    assert result["names"][0].startswith("tvmgen_default_fused_add_add")
    assert result["use_counts"] == [1, 3]  # te_compiler counts from 1: 2 lowers + 1 jit


def test_legacy_alter_layout_program(alias, caplog):
    with caplog.at_level(logging.INFO, logger="compile_engine"), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the once-per-process use_autotvm note
        impl_name, shape = _run("alter_layout_program.py")
    assert (impl_name, shape) == ("conv2d_nchw_wide.x86", [1, 8, 5, 5])
    assert "Using conv2d_nchw_wide.x86 for relax.nn.conv2d based on highest priority (20)" in (
        caplog.text
    )


def test_legacy_build_script_program(alias, engine):
    result = _run("build_script_program.py")
    assert result["cached_inside"] == 0 and result["distinct"]
    assert result["names"][0] != result["names"][1]


def test_legacy_ffi_program(alias, engine):
    result = _run("ffi_program.py")
    assert result["out"] == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    assert result["items"] == 1
