"""The two legacy ``relay.backend.*`` PassContext keys, and that nothing else changes."""

from __future__ import annotations

import threading

import pytest
import tvm
from _builders import add3
from tvm.ir.transform import PassContext

import compile_engine_compat
from compile_engine_compat import CompileEngineDeprecationWarning, ledger, reset_ledger
from compile_engine_compat import compile_engine as _ce  # noqa: F401  (installs the support)
from compile_engine_compat.surfaces import passconfig as _passconfig

USE_AS = "relay.backend.use_auto_scheduler"
NO_CACHE = "relay.backend.disable_compile_engine_cache"


@pytest.fixture
def reinstall():
    """Restore the support whatever the test did to it."""
    yield
    _passconfig.install()


def test_keys_are_accepted_and_never_reach_cpp():
    ctx = tvm.transform.PassContext(config={USE_AS: True, "tirx.disable_vectorize": True})
    assert dict(ctx.config) == {"tirx.disable_vectorize": True}
    assert _passconfig.current_config() == {}
    with ctx:
        assert PassContext.current().same_as(ctx)
        assert _passconfig.current_config() == {USE_AS: True}
    assert _passconfig.current_config() == {}


def test_config_given_positionally_and_int_values():
    with PassContext(3, None, None, None, {NO_CACHE: 1}) as ctx:
        assert ctx.opt_level == 3
        assert _passconfig.current_config() == {NO_CACHE: True}


def test_other_behaviour_is_tvms_own():
    with pytest.raises(AttributeError, match=r"Invalid config option 'relay\.backend\.no_such'"):
        PassContext(config={"relay.backend.no_such": True, USE_AS: True})
    with pytest.raises(AttributeError, match=r"Expect config tirx\.disable_vectorize"):
        PassContext(config={"tirx.disable_vectorize": "yes"})
    with pytest.raises(AttributeError, match=f"Expect config {USE_AS} to have type bool"):
        PassContext(config={USE_AS: "yes"})
    assert USE_AS not in PassContext.list_configs()
    plain = PassContext(opt_level=1, disabled_pass=["FoldConstant"])
    assert plain.opt_level == 1 and list(plain.disabled_pass) == ["FoldConstant"]


def test_innermost_context_wins_and_threads_are_separate():
    seen = {}

    def other_thread():
        seen["other"] = _passconfig.current_config()

    with PassContext(config={NO_CACHE: True}):
        with PassContext(opt_level=3):  # a context without the keys hides the outer one's
            assert _passconfig.current_config() == {}
            assert _passconfig.caching_enabled()
        assert not _passconfig.caching_enabled()
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
    assert seen["other"] == {}


def test_disable_compile_engine_cache_really_disables_caching(engine):
    func = add3((8,))
    with PassContext(config={NO_CACHE: True}):
        first = engine.lower(func, "llvm")
        second = engine.lower(func, "llvm")
        kernel = engine.jit(func, "llvm")
        assert engine.items() == []
    assert first is not second
    assert first.prim_fn_var.name_hint != second.prim_fn_var.name_hint  # fresh unique names
    assert callable(kernel)
    cached = engine.lower(func, "llvm")  # caching resumes outside the context
    assert engine.lower(func, "llvm") is cached and len(engine.items()) == 1


def test_disabled_cache_leaves_existing_entries_alone(engine):
    func = add3((9,))
    cached = engine.lower(func, "llvm")
    with PassContext(config={NO_CACHE: True}):
        assert engine.lower(func, "llvm") is cached  # lookups still hit, as in C++
    assert engine.items()[0][1].use_count == 1


@pytest.mark.warnings_visible
def test_each_use_warns():
    reset_ledger()
    for _ in range(2):
        with pytest.warns(CompileEngineDeprecationWarning, match=NO_CACHE):
            PassContext(config={NO_CACHE: False})
    counts = {e.api: e.count for e in ledger() if e.api == NO_CACHE}
    assert counts == {NO_CACHE: 2}


def test_off_switch(reinstall, monkeypatch):
    compile_engine_compat.uninstall_pass_config()
    assert not _passconfig.installed()
    with pytest.raises(AttributeError, match="Invalid config option"):
        PassContext(config={USE_AS: True})
    monkeypatch.setenv(_passconfig.OFF_ENV, "off")
    _passconfig.install_from_env()
    assert not _passconfig.installed()
    monkeypatch.delenv(_passconfig.OFF_ENV)
    _passconfig.install_from_env()
    assert _passconfig.installed()
    PassContext(config={USE_AS: True})
