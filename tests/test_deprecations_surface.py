"""The legacy surface is made from the API table, through one decorator (issue 14, item 2)."""

from __future__ import annotations

import ast
import importlib
import inspect
import pathlib
import warnings
from typing import Any, cast

import deprecation
import pytest
import tvm
from _builders import add3

from compile_engine_compat import CompileEngineDeprecationWarning, compile_engine, te_compiler
from compile_engine_compat.api_table import (
    API_TABLE,
    CONFIG_KEYS,
    GLOBAL_ROWS,
    MODULE_SHIMS,
    LegacyApi,
)
from compile_engine_compat.deprecations import (
    INTERNAL,
    LegacyObject,
    ledger,
    legacy_api,
    reset_ledger,
)
from compile_engine_compat.facade import ffi_globals as _globals
from compile_engine_compat.facade.te_compiler_impl import global_compiler
from compile_engine_compat.migrate import fix as _fix
from compile_engine_compat.surfaces import import_alias, passconfig

PACKAGE = pathlib.Path(compile_engine.__file__).parent
# Rows of the shim modules that are not called: the modules themselves, and the cache value the
# engine alone makes (users only read it).
_NOT_CALLED = {
    "compile_engine",
    "te_compiler",
    "compile_engine.CCacheValue",
    "te_compiler.CCacheValue",
}


def _core(row: LegacyApi) -> Any:
    module, _, attribute = row.core.partition(":")
    value: Any = importlib.import_module(module)
    for part in attribute.split("."):
        value = getattr(value, part)
    return value


def _shim_object(row: LegacyApi) -> Any:
    module, _, name = row.name.partition(".")
    value: Any = compile_engine if module == "compile_engine" else te_compiler
    for part in name.split("."):
        value = getattr(value, part)
    return value


def _apis(record: Any) -> list[str]:
    return [cast(CompileEngineDeprecationWarning, w.message).api for w in record]


def _note(row: LegacyApi) -> str:
    """What the deprecation package appends to a docstring for this row."""

    def bare() -> None:
        pass

    return deprecation.deprecated(
        deprecated_in=f"TVM {row.since}",
        removed_in=f"compile-engine-compat {row.removed_in}",
        details=f"Use {row.replacement}. See {row.docs}",
    )(bare).__doc__.strip()


_SHIM_ROWS = [
    row
    for row in API_TABLE.values()
    if row.name.split(".")[0] in ("compile_engine", "te_compiler") and row.name not in _NOT_CALLED
]


@pytest.mark.parametrize("row", _SHIM_ROWS, ids=lambda row: row.name)
def test_every_shim_row_is_made_by_the_decorator_with_its_note(row):
    obj = _shim_object(row)
    assert obj.__legacy_api__ == row.name
    assert obj.__doc__.rstrip().endswith(_note(row))
    assert obj.__doc__.count(".. deprecated::") == 1


def test_rows_with_a_core_are_that_core_under_the_legacy_name():
    made = 0
    for row in API_TABLE.values():
        if not row.core:
            continue
        parent, _, name = row.name.rpartition(".")
        if parent == "relay.backend":
            function = _globals.GLOBAL_NAMES[name]
        else:
            function = getattr(compile_engine if parent == "compile_engine" else te_compiler, name)
            assert function.__module__ == row.shim.rpartition(".")[0]
        assert function.__wrapped__ is _core(row), row.name
        assert function.__name__ == name
        assert not hasattr(_core(row), "__legacy_api__"), f"{row.core} must be un-warned"
        made += 1
    # compile_engine: 5 functions, te_compiler: 6, relay.backend: 17 globals.
    assert made == 28


def test_one_core_serves_both_modules():
    for name in ("get_shape", "lower_call", "select_implementation", "get_valid_implementations"):
        assert getattr(compile_engine, name).__wrapped__ is getattr(te_compiler, name).__wrapped__


def test_every_name_in_all_exists():
    for module in (compile_engine, te_compiler):
        for name in module.__all__:
            assert hasattr(module, name), f"{module.__name__}.{name}"


def test_registered_globals_are_the_table_rows():
    assert list(_globals.GLOBAL_NAMES) == [
        row.name.removeprefix("relay.backend.") for row in GLOBAL_ROWS
    ]
    for row in GLOBAL_ROWS:
        assert tvm.get_global_func(row.name, allow_missing=True) is not None, row.name


def test_side_tables_are_derived_from_the_table():
    assert _fix._SHIM_OF is MODULE_SHIMS
    assert import_alias._ALIASES is MODULE_SHIMS
    assert MODULE_SHIMS == {
        "tvm.relay.backend.compile_engine": "compile_engine_compat.compile_engine",
        "tvm.relay.backend.te_compiler": "compile_engine_compat.te_compiler",
    }
    assert (
        passconfig.KEYS
        == CONFIG_KEYS
        == (
            "relay.backend.use_auto_scheduler",
            "relay.backend.disable_compile_engine_cache",
        )
    )


def test_internal_flag_runs_the_core_without_warning_or_counting(engine):
    func = add3((3,))
    reset_ledger()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cached = engine.lower(func, "llvm", **INTERNAL)
        assert engine.jit(func, "llvm", **INTERNAL) is engine.jit(func, "llvm", **INTERNAL)
        assert str(te_compiler.get_shape([2, 3], **INTERNAL)[0].ty) == "int64"
    assert ledger() == []
    with pytest.warns(CompileEngineDeprecationWarning) as record:
        assert engine.lower(func, "llvm") is cached
    assert _apis(record) == ["compile_engine.CompileEngine.lower"]
    assert [entry.api for entry in ledger()] == ["compile_engine.CompileEngine.lower"]


def test_te_compiler_warns_once_as_itself(engine):
    func = add3((5,))
    compiler = global_compiler()
    with pytest.warns(CompileEngineDeprecationWarning) as record:
        compiler.lower(func, "llvm")
        compiler.jit(func, "llvm")
        compiler.items()
        compiler.clear()
    assert _apis(record) == [
        "te_compiler.TECompiler.lower",
        "te_compiler.TECompiler.jit",
        "te_compiler.TECompiler.items",
        "te_compiler.TECompiler.clear",
    ]


def test_a_subclass_row_warns_as_itself_only():
    with pytest.warns(CompileEngineDeprecationWarning) as record:
        te_compiler.LoweredOutput([], None)
        compile_engine.LoweredOutput([], None)
    assert _apis(record) == [
        "te_compiler.LoweredOutput",
        "compile_engine.LoweredOutput",
    ]


def test_decorator_keeps_the_signature_and_warns_at_the_callers_line():
    @legacy_api("compile_engine.get_shape")
    def shaped(shape: list[int], *, twice: bool = False) -> list[int]:
        """Double it."""
        return shape * (2 if twice else 1)

    assert inspect.signature(shaped) == inspect.signature(inspect.unwrap(shaped))
    with pytest.warns(CompileEngineDeprecationWarning) as record:
        assert shaped([1], twice=True) == [1, 1]
    assert record[0].filename == __file__


def test_same_as_is_written_once():
    defined = [
        node.name
        for path in PACKAGE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef) and node.name == "same_as"
    ]
    # LegacyObject's identity, and te_compiler's cache-value view (it compares the entry it wraps).
    assert len(defined) == 2
    for cls in (
        compile_engine.CompileEngine,
        te_compiler.TECompiler,
        compile_engine.CCacheKey,
        compile_engine.CachedFunc,
        compile_engine.CCacheValue,
        compile_engine.LoweredOutput,
    ):
        assert cls.same_as is LegacyObject.same_as, cls


#: Names a legacy module exports that are not rows of the API table (never warned), and why.
NOT_ROWS = {
    "compile_engine": {
        "CachedFunc": "a record the engine returns; constructing one was never an API",
        "LoweringError": "the shim's exception (a RuntimeError, as legacy raised)",
        "OpImplementation": "the modern strategy record (replaces relay.op.OpImplementation)",
        "register_implementation": "modern strategy registration",
        "unregister_implementation": "modern strategy registration",
        "temp_strategy": "modern strategy registration",
        "logger": "a logging.Logger, as legacy had",
        "autotvm_logger": "a logging.Logger, as legacy had",
    },
    "te_compiler": {
        "CachedFunc": "a record the engine returns; constructing one was never an API",
        "OpImplementation": "the modern strategy record (replaces relay.op.OpImplementation)",
        "logger": "a logging.Logger, as legacy had",
        "autotvm_logger": "a logging.Logger, as legacy had",
    },
}


@pytest.mark.parametrize("module_name", sorted(NOT_ROWS))
def test_all_is_the_tables_rows_plus_the_declared_extras(module_name):
    module = importlib.import_module(f"compile_engine_compat.{module_name}")
    rows = {
        name.split(".", 1)[1]
        for name in API_TABLE
        if name.startswith(f"{module_name}.") and name.count(".") == 1
    }
    assert set(module.__all__) == rows | set(NOT_ROWS[module_name])


@pytest.mark.parametrize("module_name", sorted(NOT_ROWS))
def test_the_stub_declares_exactly_all(module_name):
    module = importlib.import_module(f"compile_engine_compat.{module_name}")
    stub = ast.parse((PACKAGE / f"{module_name}.pyi").read_text())
    declared: set[str] = set()
    for node in stub.body:
        if isinstance(node, ast.ImportFrom):
            declared |= {a.asname for a in node.names if a.asname and a.asname == a.name}
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            declared.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            declared.add(node.target.id)
        elif isinstance(node, ast.Assign):
            declared |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    declared.discard("__all__")
    assert declared == set(module.__all__)
