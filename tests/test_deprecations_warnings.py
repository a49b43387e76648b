"""Warnings: at the caller's line, naming the replacement, filterable, never swallowed."""

from __future__ import annotations

import sys
import threading
import warnings

import pytest
from _builders import add3

import compile_engine_compat
from compile_engine_compat import CompileEngineDeprecationWarning, compile_engine

pytestmark = pytest.mark.warnings_visible


def test_warning_points_at_the_callers_line():
    with pytest.warns(CompileEngineDeprecationWarning) as record:
        engine = compile_engine.get()
        line = sys._getframe().f_lineno - 1
    assert record[0].filename == __file__
    assert record[0].lineno == line
    with pytest.warns(CompileEngineDeprecationWarning) as record:
        engine.lower(add3((3,)), "llvm")
        line = sys._getframe().f_lineno - 1
    assert [(w.filename, w.lineno) for w in record] == [(__file__, line)]


def test_message_names_the_replacement_version_and_docs():
    with pytest.warns(CompileEngineDeprecationWarning) as record:
        compile_engine.get().jit(add3((3,)), "llvm")
    warning = next(w.message for w in record if "jit" in str(w.message))
    text = str(warning)
    assert "tvm.compile(" in text and "relax.VirtualMachine" in text
    assert "TVM 0.8" in text and "compile-engine-compat 1.0" in text
    assert "MIGRATION.md#compile-engine-compileengine-jit" in text
    assert isinstance(warning, CompileEngineDeprecationWarning)
    assert warning.api == "compile_engine.CompileEngine.jit"
    assert issubclass(CompileEngineDeprecationWarning, DeprecationWarning)


@pytest.mark.parametrize(
    ("call", "replacement"),
    [
        (lambda e: e.lower(add3((3,)), "llvm"), "te.create_prim_func("),
        (lambda e: e.clear(), "tvm.compile"),
        (lambda e: e.items(), "StructuralKey"),
    ],
)
def test_each_entry_point_names_its_replacement(call, replacement):
    engine = compile_engine_compat.facade.engine.global_engine()
    with pytest.warns(CompileEngineDeprecationWarning, match=replacement.replace("(", r"\(")):
        call(engine)


def test_error_filter_turns_calls_into_errors_and_is_not_swallowed():
    engine = compile_engine_compat.facade.engine.global_engine()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        with pytest.raises(CompileEngineDeprecationWarning):
            engine.lower(add3((3,)), "llvm")
        with pytest.raises(CompileEngineDeprecationWarning):
            engine.lower(42, "llvm")  # would be a LoweringError without the filter
        with pytest.raises(CompileEngineDeprecationWarning):
            compile_engine.get()


def test_ignore_filter_by_category():
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=CompileEngineDeprecationWarning)
        compile_engine.get().clear()
    assert record == []


def test_ledger_counts_every_call_even_when_silenced():
    compile_engine_compat.reset_ledger()
    engine = compile_engine_compat.facade.engine.global_engine()
    with compile_engine_compat.silenced(), warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for _ in range(3):
            engine.items()
        line = sys._getframe().f_lineno - 1
    assert record == []
    entries = [e for e in compile_engine_compat.ledger() if e.api.endswith(".items")]
    assert [(e.filename, e.lineno, e.count) for e in entries] == [(__file__, line, 3)]


def test_silenced_is_exception_safe():
    with pytest.raises(KeyError), compile_engine_compat.silenced():
        raise KeyError("boom")
    with pytest.warns(CompileEngineDeprecationWarning):
        compile_engine.get()


def test_ledger_is_exact_under_threads():
    compile_engine_compat.reset_ledger()
    engine = compile_engine_compat.facade.engine.global_engine()

    def work():
        for _ in range(200):
            engine.get_current_ccache_key()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    total = sum(e.count for e in compile_engine_compat.ledger() if "ccache_key" in e.api)
    assert total == 1600


def test_command_line_error_flag_wins_over_the_default_display():
    """``python -W error::DeprecationWarning`` turns a legacy call into an error (fresh process)."""
    import subprocess

    code = "from compile_engine_compat import compile_engine; compile_engine.get()"
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert shown.returncode == 0
    assert "CompileEngineDeprecationWarning" in shown.stderr  # displayed by default
    failed = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", code],
        capture_output=True,
        text=True,
    )
    assert failed.returncode == 1
    assert "CompileEngineDeprecationWarning: compile_engine.get is deprecated" in failed.stderr


@pytest.mark.warnings_visible
def test_an_ignore_filter_skips_building_the_warning_but_the_ledger_still_counts():
    from compile_engine_compat import deprecations as _deprecation

    api = "compile_engine.CompileEngine.lower"
    frame = sys._getframe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileEngineDeprecationWarning)
        assert _deprecation._filtered_out(api, frame, frame.f_lineno)
        before = sum(e.count for e in compile_engine_compat.ledger() if e.api == api)
        _deprecation.warn_legacy(api)
        after = sum(e.count for e in compile_engine_compat.ledger() if e.api == api)
        assert after == before + 1
    for action in ("error", "always", "default", "once"):
        with warnings.catch_warnings():
            warnings.simplefilter(action, CompileEngineDeprecationWarning)
            assert not _deprecation._filtered_out(api, frame, frame.f_lineno)
    with warnings.catch_warnings():
        # A filter for another message, or another module, does not apply.
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", message="something else")
        warnings.filterwarnings("ignore", category=CompileEngineDeprecationWarning, module="x.y")
        assert not _deprecation._filtered_out(api, frame, frame.f_lineno)
        warnings.filterwarnings("ignore", message="compile_engine.CompileEngine.lower is")
        assert _deprecation._filtered_out(api, frame, frame.f_lineno)
