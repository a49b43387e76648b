"""The TVM/CPython boundary (issue 14): every private name resolves, and fails loudly when moved."""

from __future__ import annotations

from pathlib import Path

import pytest

from compile_engine_compat import boundary

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("key", sorted(boundary.PRIVATE_NAMES))
def test_each_private_name_resolves_on_this_tvm(key: str) -> None:
    # Fails, naming the TVM or Python change of the entry, the day a release moves the name.
    assert boundary.resolve(key) is not None


def test_a_moved_name_is_an_import_error_naming_the_change(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = boundary.PRIVATE_NAMES["te_ffi"]
    monkeypatch.setitem(
        boundary.PRIVATE_NAMES,
        "te_ffi",
        boundary.PrivateName(entry.module, "_ffi_api_moved", entry.why, entry.breaks_when),
    )
    with pytest.raises(ImportError, match=r"tvm\.te\._ffi_api_moved .*gone: TVM renames te's FFI"):
        boundary.resolve("te_ffi")


def test_the_accessors_return_what_the_pipeline_calls() -> None:
    assert callable(boundary.te_ffi().ComputeOp) and callable(boundary.te_ffi().TensorLoad)
    assert callable(boundary.schedule_ffi().ScheduleComputeInline)
    frame = boundary.caller_frame(0)
    assert (
        frame is not None
        and frame.f_code.co_name == "test_the_accessors_return_what_the_pipeline_calls"
    )


def test_env_raw_reads_what_os_environ_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPILE_ENGINE_COMPAT_BOUNDARY_PROBE", "on")
    assert boundary.env_raw(b"COMPILE_ENGINE_COMPAT_BOUNDARY_PROBE") == b"on"
    monkeypatch.delenv("COMPILE_ENGINE_COMPAT_BOUNDARY_PROBE")
    assert boundary.env_raw(b"COMPILE_ENGINE_COMPAT_BOUNDARY_PROBE") is None


def test_the_package_names_no_private_tvm_or_cpython_name_outside_the_boundary() -> None:
    forbidden = (
        "._ffi_api",
        "sys._getframe",
        "environ._data",
        "import _ffi_api",
        "__chandle__",
        "_begin_dataflow_block",
        "_end_block",
        "_filters_mutated",
        # process patches: only through the boundary's helpers
        "register_at_fork",
        "sys.meta_path.insert",
        "sys.meta_path.remove",
        "os.environ[",
        "filters.insert",
    )
    offenders = [
        f"{path.relative_to(ROOT)}: {needle}"
        for path in (ROOT / "compile_engine_compat").rglob("*.py")
        if path.name != "boundary.py"
        for needle in forbidden
        if needle in path.read_text(encoding="utf-8")
    ]
    assert offenders == []


@pytest.mark.parametrize("patch", boundary.PROCESS_PATCHES, ids=lambda p: p.where)
def test_each_process_patch_names_its_off_switch_and_an_existing_test(
    patch: boundary.ProcessPatch,
) -> None:
    assert patch.off
    for name in patch.test.split(", "):
        assert (ROOT / name).is_file(), name


def test_setattr_on_foreign_objects_only_in_the_boundary() -> None:
    # The one other setattr gives a legacy class of the package its warned __init__.
    users = {
        str(path.relative_to(ROOT))
        for path in (ROOT / "compile_engine_compat").rglob("*.py")
        if path.name != "boundary.py" and "setattr(" in path.read_text(encoding="utf-8")
    }
    assert users == {"compile_engine_compat/deprecations.py"}


def test_call_te_is_tvms_outside_the_shims_traces(engine) -> None:
    from _builders import add3
    from tvm import relax

    from compile_engine_compat.pipeline import trace

    original = trace._original_call_te
    assert relax.BlockBuilder.__dict__["call_te"] is original
    seen = []

    def lowering(call, inputs, default):
        seen.append(relax.BlockBuilder.__dict__["call_te"])
        return default()

    trace.trace(add3((3,)), lowering)
    assert seen and all(hook is trace._call_te_hook for hook in seen)
    assert relax.BlockBuilder.__dict__["call_te"] is original
    assert not any("call_te" in text for text in boundary.active_patches())


def test_patched_nests_and_restores_what_was_there() -> None:
    class Owner:
        value = "tvm's"

    with boundary.patched(Owner, "value", "shim's"):
        with boundary.patched(Owner, "value", "shim's"):
            assert Owner.value == "shim's"
        assert Owner.value == "shim's"
        assert any(text.endswith("Owner.value") for text in boundary.active_patches())
    assert Owner.value == "tvm's"
    boundary.patch_attribute(Owner, "added", 1)
    boundary.restore_attribute(Owner, "added")
    assert not hasattr(Owner, "added")


def test_install_patches_are_listed_and_uninstall_removes_them() -> None:
    import compile_engine_compat

    before = set(boundary.active_patches())
    compile_engine_compat.install()
    try:
        added = set(boundary.active_patches()) - before
        assert "sys.meta_path: _RelayFinder" in added
        assert any(text.endswith(".context") for text in added)  # tvm.context
    finally:
        compile_engine_compat.uninstall()
    assert set(boundary.active_patches()) == before


def test_pass_context_patch_has_its_off_switch() -> None:
    import tvm

    from compile_engine_compat.surfaces import passconfig

    assert passconfig.installed()
    passconfig.uninstall()
    try:
        assert not any("PassContext" in text for text in boundary.active_patches())
        with pytest.raises(AttributeError, match=r"relay\.backend\.use_auto_scheduler"):
            tvm.transform.PassContext(config={"relay.backend.use_auto_scheduler": True})
    finally:
        passconfig.install()
    assert passconfig.installed()


def test_pass_context_params_are_probed() -> None:
    assert boundary.pass_context_params()[-1] == "config"


def test_the_packed_imports_symbol_is_the_one_tvms_export_writes(tmp_path: Path) -> None:
    import tvm
    from tvm import relax

    symbol = boundary.packed_imports_symbol()
    assert symbol.isidentifier() and boundary.packed_imports_symbol() is symbol  # probed once
    x = relax.Var("x", relax.TensorType([2], "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        bb.emit_func_output(bb.emit(relax.op.add(x, relax.const([1.0, 2.0], "float32"))))
    library = tmp_path / "lib.so"
    tvm.compile(bb.get(), target="llvm").export_library(str(library))
    assert symbol.encode() in library.read_bytes()
