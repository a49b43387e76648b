"""The table of TVM <=0.19 names outside ``tvm.relay``: what ``install()`` sets, and takes back."""

from __future__ import annotations

import ast
import importlib
import pathlib
import sys

import numpy as np
import pytest
import tvm

import compile_engine_compat
from compile_engine_compat.relay.op.op import SpecializedCondition
from compile_engine_compat.surfaces import import_alias, moved_names
from compile_engine_compat.surfaces.moved_names import MOVED_NAMES, MovedName
from compile_engine_compat.tvm_legacy import autotvm, graph_executor

SURFACES = pathlib.Path(moved_names.__file__).parent


@pytest.fixture
def alias():
    compile_engine_compat.install()
    yield
    compile_engine_compat.uninstall()


def _resolve(path: str) -> object:
    module, _, attribute = path.partition(":")
    value: object = importlib.import_module(module)
    for part in attribute.split(".") if attribute else ():
        value = getattr(value, part)
    return value


def _legacy_value(row: MovedName) -> object:
    """What legacy code finds at ``row.legacy`` now (a module is imported, as legacy code does)."""
    if ":" not in row.legacy:
        return importlib.import_module(row.legacy)
    if row.legacy.endswith(":*"):  # every name of the serving module, as one namespace
        owner = importlib.import_module(row.legacy.removesuffix(":*"))
        served = importlib.import_module(row.served_by)
        names = served.__all__
        return served if all(getattr(owner, n) is getattr(served, n) for n in names) else owner
    return _resolve(row.legacy)


def _tvm_lacks(module: str, name: str) -> bool:
    """True when ``module`` (imported if it can be) has no ``name``: a nested legacy module
    (``tvm._ffi.base``) is gone with its parent."""
    try:
        return not hasattr(importlib.import_module(module), name)
    except ImportError:
        return True


def test_install_serves_and_uninstall_removes_the_legacy_names(alias):
    import tvm.autotvm
    import tvm.contrib.graph_executor
    from tvm import autotvm as served

    assert served is autotvm and tvm.contrib.graph_executor is graph_executor
    assert tvm.tir.IntImm("int32", 3).value == 3
    assert tvm.te.SpecializedCondition is SpecializedCondition
    assert tvm.context("llvm") == tvm.cpu() == tvm.device("llvm")
    array = tvm.nd.array(np.arange(3, dtype="float32"), ctx=tvm.cpu())
    np.testing.assert_array_equal(array.asnumpy(), [0, 1, 2])
    assert tvm.nd.empty((2,), device=tvm.cpu()).shape == (2,)
    compile_engine_compat.uninstall()
    for name in ("context", "nd", "tir", "autotvm"):
        assert not hasattr(tvm, name), name
    assert not hasattr(tvm.te, "SpecializedCondition")
    assert not hasattr(tvm.runtime.Tensor, "asnumpy")
    assert "tvm.autotvm" not in sys.modules
    with pytest.raises(ValueError):
        tvm.device("llvm")
    compile_engine_compat.install()  # the fixture uninstalls again


@pytest.mark.parametrize("row", MOVED_NAMES, ids=lambda row: row.legacy)
def test_every_row_is_served_while_installed_and_only_then(row: MovedName) -> None:
    served = _resolve(row.served_by)
    before = None if not row.replaces else _resolve(row.legacy)
    compile_engine_compat.install()
    try:
        assert _legacy_value(row) is served
    finally:
        compile_engine_compat.uninstall()
    if row.replaces:
        assert _resolve(row.legacy) is before  # TVM's own is back
    elif row.legacy.endswith(":*"):
        legacy_module = importlib.import_module(row.legacy.removesuffix(":*"))
        served_module = importlib.import_module(row.served_by)
        names = served_module.__all__
        assert not any(getattr(legacy_module, n, None) is getattr(served_module, n) for n in names)
    elif ":" in row.legacy:
        module, _, attribute = row.legacy.partition(":")
        owner = _resolve(f"{module}:{attribute.rpartition('.')[0]}" if "." in attribute else module)
        assert not hasattr(owner, attribute.rpartition(".")[2])
    else:
        parent, _, child = row.legacy.rpartition(".")
        if parent in import_alias.LEGACY_MODULES:  # a submodule of a moved module: both gone
            assert parent not in sys.modules
        else:
            assert _tvm_lacks(parent, child)
        assert row.legacy not in sys.modules


def test_the_legacy_modules_the_finder_serves_are_the_tables_module_rows() -> None:
    assert import_alias.LEGACY_MODULES == {
        row.legacy: row.served_by for row in MOVED_NAMES if ":" not in row.legacy
    }
    assert len({row.legacy for row in MOVED_NAMES}) == len(MOVED_NAMES)


def test_adding_a_name_is_one_row(monkeypatch: pytest.MonkeyPatch) -> None:
    probe = MovedName("tvm.target:shim_probe_name", "compile_engine_compat.version:__version__")
    monkeypatch.setattr(import_alias, "MOVED_NAMES", (*MOVED_NAMES, probe))
    compile_engine_compat.install()
    try:
        assert tvm.target.shim_probe_name == compile_engine_compat.__version__
    finally:
        compile_engine_compat.uninstall()
    assert not hasattr(tvm.target, "shim_probe_name")


def test_a_name_tvm_has_is_left_alone_unless_the_row_replaces_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cpu = tvm.cpu
    row = MovedName("tvm:cpu", "compile_engine_compat.tvm_legacy.device:context")
    monkeypatch.setattr(import_alias, "MOVED_NAMES", (*MOVED_NAMES, row))
    compile_engine_compat.install()
    try:
        assert tvm.cpu is cpu
    finally:
        compile_engine_compat.uninstall()
    assert tvm.cpu is cpu


def test_the_table_is_data_and_the_surfaces_floor_imports_nothing_above_it() -> None:
    table = ast.parse((SURFACES / "moved_names.py").read_text(encoding="utf-8"))
    imported = [
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(table)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    ]
    assert set(imported) <= {"__future__", "dataclasses"}
    for path in SURFACES.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(
                    ("compile_engine_compat.relay", "compile_engine_compat.tvm_legacy")
                ), path.name
            if isinstance(node, ast.Import):
                for name in node.names:
                    assert not name.name.startswith("compile_engine_compat.relay"), path.name


def test_device_with_a_target_name_warns_under_its_own_name(alias) -> None:
    import warnings

    import tvm

    from compile_engine_compat.deprecations import CompileEngineDeprecationWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert tvm.device("llvm", 0) == tvm.cpu(0)
    messages = [str(w.message) for w in caught if w.category is CompileEngineDeprecationWarning]
    assert messages and all(m.startswith("tvm.device is deprecated") for m in messages)
    assert not any("tvm.context" in m for m in messages)


def test_tir_any_is_relays_any_dimension(alias):
    from compile_engine_compat import relay

    x = relay.var("x", shape=(tvm.tir.Any(), 3))
    func = relay.testing.run_infer_type(relay.Function([x], relay.nn.relu(x)))
    assert len(func.checked_type.ret_type.shape) == 2


def test_a_moved_modules_submodule_is_the_served_module_itself(alias):
    # importing tvm/tirx/op.py a second time as tvm.tir.op would register its global
    # functions twice (TVM raises "already registered")
    import tvm.tir.op
    import tvm.tirx.op
    from tvm.tir.op import call_pure_extern

    assert tvm.tir.op is tvm.tirx.op and call_pure_extern is tvm.tirx.op.call_pure_extern


def test_topi_target_schedule_modules_are_refused_at_use(alias):
    from tvm import topi

    assert import_alias.is_refused(topi.x86) and import_alias.is_refused(topi.arm_cpu)
    with pytest.raises(import_alias.RelayRemovedCallError, match=r"tvm\.topi\.x86.*dlight"):
        topi.x86.schedule_pool(None)
