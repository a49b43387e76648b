"""The TVM/CPython boundary (issue 14): every private name resolves, and fails loudly when moved."""

from __future__ import annotations

from pathlib import Path

import pytest

from compile_engine_compat import _boundary

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("key", sorted(_boundary.PRIVATE_NAMES))
def test_each_private_name_resolves_on_this_tvm(key: str) -> None:
    # Fails, naming the TVM or Python change of the entry, the day a release moves the name.
    assert _boundary.resolve(key) is not None


def test_a_moved_name_is_an_import_error_naming_the_change(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = _boundary.PRIVATE_NAMES["te_ffi"]
    monkeypatch.setitem(
        _boundary.PRIVATE_NAMES,
        "te_ffi",
        _boundary.PrivateName(entry.module, "_ffi_api_moved", entry.why, entry.breaks_when),
    )
    with pytest.raises(ImportError, match=r"tvm\.te\._ffi_api_moved .*gone: TVM renames te's FFI"):
        _boundary.resolve("te_ffi")


def test_the_accessors_return_what_the_pipeline_calls() -> None:
    assert callable(_boundary.te_ffi().ComputeOp) and callable(_boundary.te_ffi().TensorLoad)
    assert callable(_boundary.schedule_ffi().ScheduleComputeInline)
    frame = _boundary.caller_frame(0)
    assert (
        frame is not None
        and frame.f_code.co_name == "test_the_accessors_return_what_the_pipeline_calls"
    )


def test_env_raw_reads_what_os_environ_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPILE_ENGINE_COMPAT_BOUNDARY_PROBE", "on")
    assert _boundary.env_raw(b"COMPILE_ENGINE_COMPAT_BOUNDARY_PROBE") == b"on"
    monkeypatch.delenv("COMPILE_ENGINE_COMPAT_BOUNDARY_PROBE")
    assert _boundary.env_raw(b"COMPILE_ENGINE_COMPAT_BOUNDARY_PROBE") is None


def test_the_package_names_no_private_tvm_or_cpython_name_outside_the_boundary() -> None:
    forbidden = ("._ffi_api", "sys._getframe", "environ._data", "import _ffi_api")
    offenders = [
        f"{path.relative_to(ROOT)}: {needle}"
        for path in (ROOT / "compile_engine_compat").rglob("*.py")
        if path.name != "_boundary.py"
        for needle in forbidden
        if needle in path.read_text(encoding="utf-8")
    ]
    assert offenders == []


@pytest.mark.parametrize("patch", _boundary.PROCESS_PATCHES, ids=lambda p: p.where)
def test_each_process_patch_names_its_off_switch_and_an_existing_test(
    patch: _boundary.ProcessPatch,
) -> None:
    assert patch.off
    for name in patch.test.split(", "):
        assert (ROOT / name).is_file(), name
