"""The opt-in import alias, its ``tvm.relay`` stub, feature detection, and legacy programs."""

from __future__ import annotations

import importlib
import logging
import pathlib
import runpy
import subprocess
import sys
import warnings

import pytest
import tvm

import compile_engine_compat
from compile_engine_compat.relay._impl.registry import MissingRelayOpError
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
        ("tvm.relay.SpanCheck(1)", "span checker"),
    ],
)
def test_known_names_are_refused_at_the_call_naming_the_replacement(alias, statement, why):
    import tvm.relay

    with pytest.raises(_import_alias.RelayRemovedCallError) as info:
        eval(statement, {"tvm": tvm})
    _assert_helpful(str(info.value))
    assert why in str(info.value)


def test_relay_quantize_is_served(alias):
    import tvm.relay.quantize
    from tvm.relay.quantize import qconfig

    assert tvm.relay.quantize.__spec__ is not None
    assert tvm.relay.quantize.__spec__.name == "compile_engine_compat.relay.quantize"
    assert qconfig is tvm.relay.quantize.qconfig


def test_an_unknown_name_is_refused_on_access_naming_it(alias):
    import tvm.relay

    with pytest.raises(_import_alias.RelayRemovedError, match="does not provide it"):
        tvm.relay.no_such_thing  # noqa: B018


@pytest.mark.parametrize(
    ("source", "use", "why"),
    [
        (
            "from tvm.relay.backend.graph_executor_codegen import GraphExecutorCodegen",
            "GraphExecutorCodegen(1)",
            "graph-executor codegen",
        ),
    ],
)
def test_known_modules_import_and_refuse_at_the_call(alias, source, use, why):
    namespace: dict[str, object] = {}
    exec(source, namespace)  # importing a refused name never raises: the module may not use it
    with pytest.raises(_import_alias.RelayRemovedCallError) as info:
        exec(use, namespace)
    _assert_helpful(str(info.value))
    assert why in str(info.value)


def test_a_refusal_names_the_tvm_name_whatever_the_import_used(alias):
    from tvm.relay.backend import graph_executor_codegen

    with pytest.raises(_import_alias.RelayRemovedCallError) as info:
        graph_executor_codegen.GraphExecutorCodegen(None, None)
    assert str(info.value).startswith(
        "tvm.relay.backend.graph_executor_codegen.GraphExecutorCodegen does not exist"
    )


def test_subclassing_a_refused_class_defines_it_and_instantiating_refuses(alias):
    from tvm.relay.backend.graph_executor_codegen import GraphExecutorCodegen

    class Mine(GraphExecutorCodegen):  # a module defining it at its top level still imports
        pass

    with pytest.raises(_import_alias.RelayRemovedCallError, match="graph-executor codegen"):
        Mine()


def test_an_unknown_module_is_refused_at_import(alias):
    with pytest.raises(_import_alias.RelayRemovedImportError, match="does not provide it"):
        exec("from tvm.relay.backend import no_such_module", {})


def test_a_module_tvm_019_had_imports_and_refuses_at_the_call(alias):
    from tvm.relay.backend import aot

    with pytest.raises(_import_alias.RelayRemovedCallError, match=r"MIGRATION\.md#"):
        aot.AOTLowerMain("default", None, None)


@pytest.mark.parametrize(
    "module",
    ["tvm.relay._impl", "tvm.relay._impl.convert", "tvm.relay.op.convert", "tvm.relay.to_relax"],
)
def test_the_front_ends_machinery_is_no_tvm_relay_module(alias, module):
    """relay._impl holds what TVM never had: neither it nor its old paths are served."""
    with pytest.raises(_import_alias.RelayRemovedImportError, match="does not provide it"):
        importlib.import_module(module)


def test_a_missing_op_names_itself(alias):
    from tvm import relay

    for module, name in ((relay.nn, "no_such_op"), (relay.op, "no_such_op"), (relay.image, "x")):
        with pytest.raises(MissingRelayOpError, match=name):  # also an AttributeError
            getattr(module, name)
        assert not hasattr(module, name)
    with pytest.raises(AttributeError):  # private names stay plain (tools probe them)
        relay.nn.__wrapped__  # noqa: B018


def _assert_helpful(message: str) -> None:
    assert "Relay was removed in TVM 0.20" in message
    assert "compile_engine_compat.relay" in message
    assert "compile_engine_compat.compile_engine" in message


def test_feature_detection_while_installed(alias):
    # Documented: as in TVM 0.19 (whose "import tvm" imported relay), tvm.relay is an attribute
    # while installed (its first access imports it), and "from tvm import relay" succeeds;
    # removed parts are refused when used, not when probed.
    assert "relay" not in tvm.__dict__
    assert tvm.relay is sys.modules["tvm.relay"]
    from tvm import relay

    assert hasattr(tvm, "relay")
    # A known part the front end does not serve is a stand-in refused at the call.
    assert hasattr(relay, "var") and hasattr(relay, "loops")  # served: relay.loops.while_loop
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


def test_a_refused_tvm_module_outside_relay_imports_and_goes_with_uninstall():
    import sys

    compile_engine_compat.install()
    try:
        from tvm.topi.cuda.conv3d_winograd import _infer_tile_size

        with pytest.raises(_import_alias.RelayRemovedCallError, match=r"tvm\.topi\.cuda"):
            _infer_tile_size(1, 2)
    finally:
        compile_engine_compat.uninstall()
    assert "tvm.topi.cuda" not in sys.modules and not hasattr(tvm.topi, "cuda")


#: install() in a process without pytest (the [tvm] extra alone): ``sys.modules["pytest"] = None``
#: makes ``import pytest`` raise ModuleNotFoundError, as an environment without it does.
WITHOUT_PYTEST = """
import sys
sys.modules["pytest"] = None
import compile_engine_compat
compile_engine_compat.install()
from tvm import relay
x = relay.var("x", shape=(2,))
print(relay.Function([x], relay.nn.relu(x)).params[0].name_hint)
try:
    import tvm.testing
except ModuleNotFoundError as err:
    print("tvm.testing needs", err.name)
"""


def test_install_works_without_pytest_and_tvm_testing_says_what_it_needs():
    child = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", WITHOUT_PYTEST],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert child.returncode == 0, child.stderr[-3000:]
    assert child.stdout.splitlines() == ["x", "tvm.testing needs pytest"]
