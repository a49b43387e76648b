"""The persistent compile cache: hits across engines and processes, faults, safety rules."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import tvm
from _builders import build
from tvm import relax, topi

from compile_engine_compat import cli
from compile_engine_compat.cache import disk as _disk_cache
from compile_engine_compat.cache.disk import CacheDirectoryError, CompileCacheWarning
from compile_engine_compat.facade.engine import CompileEngine
from compile_engine_compat.runtime.kernel import Kernel

R = relax.op


def _func(width: int = 32) -> relax.Function:
    return build(
        "main",
        [("x", (4, width), "float32")],
        lambda bb, x: R.nn.relu(bb.emit(R.add(x, x))),
    )


@pytest.fixture
def cache_root(tmp_path, monkeypatch):
    root = tmp_path / "kernels"
    root.mkdir(mode=0o700)
    monkeypatch.setenv(_disk_cache.CACHE_DIR_ENV, str(root))
    monkeypatch.delenv(_disk_cache.CACHE_SIZE_ENV, raising=False)
    return root


def _entries(root: Path) -> list[Path]:
    return [p for p in (root / _disk_cache.LAYOUT).iterdir() if not p.name.startswith(".")]


def _jit_and_check(engine: CompileEngine, func: relax.Function, width: int = 32) -> Kernel:
    engine.clear()  # forget the in-memory kernel: the next jit must go to the disk cache
    kernel = engine.jit(func, "llvm")
    x = np.arange(4 * width, dtype="float32").reshape(4, width) - 60
    out = np.empty_like(x)
    kernel(x, out)
    np.testing.assert_array_equal(out, np.maximum(x + x, 0))
    return kernel


def _was_loaded(kernel: Kernel) -> bool:
    # tvm.compile gives an Executable; a library loaded from disk is a plain runtime Module.
    return not isinstance(kernel.module, tvm.runtime.Executable)


def test_a_stored_kernel_is_loaded_instead_of_compiled(engine, cache_root):
    func = _func()
    assert not _was_loaded(_jit_and_check(engine, func))
    (entry,) = _entries(cache_root)
    assert {p.name for p in entry.iterdir()} == {
        "kernel.so",
        "meta.json",
        "source.tvmscript",
        "indexed",  # the source functions the index maps here, attested by the entry
        ".verified.json",  # the files' digest, size, mtime and inode when last hashed
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileCacheWarning)
        assert _was_loaded(_jit_and_check(engine, func))


def test_an_equal_kernel_under_another_name_shares_the_entry(engine, cache_root):
    _jit_and_check(engine, _func())
    engine.lower(_func(), "llvm", mod_name="other")  # takes a new unique name
    engine.clear()
    assert _was_loaded(_jit_and_check(engine, _func()))
    assert len(_entries(cache_root)) == 1


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda e: _flip_byte(e / "kernel.so"), id="corrupt-library"),
        pytest.param(lambda e: _truncate(e / "kernel.so"), id="truncated-library"),
        pytest.param(lambda e: (e / "meta.json").write_text("{not json"), id="corrupt-meta"),
        pytest.param(lambda e: (e / "source.tvmscript").unlink(), id="missing-file"),
        pytest.param(lambda e: _rewrite_meta(e, layout="v0"), id="foreign-layout"),
    ],
)
def test_a_damaged_entry_is_discarded_with_a_warning_and_recompiled(engine, cache_root, damage):
    func = _func()
    _jit_and_check(engine, func)
    (entry,) = _entries(cache_root)
    damage(entry)
    with pytest.warns(CompileCacheWarning, match="discarding"):
        kernel = _jit_and_check(engine, func)
    assert not _was_loaded(kernel)
    # Recompiled and stored again: the next process (here: the next engine) loads it.
    assert _was_loaded(_jit_and_check(engine, func))


def test_each_file_is_hashed_once_then_known_by_its_stamp(engine, cache_root):
    func = _func()
    _jit_and_check(engine, func)
    (entry,) = _entries(cache_root)
    meta = json.loads((entry / "meta.json").read_text())
    stamps = json.loads((entry / ".verified.json").read_text())
    for name, digest in meta["files"].items():
        status = (entry / name).stat()
        assert stamps[name] == [digest, status.st_size, status.st_mtime_ns, status.st_ino]
    # An entry of an older shim, without stamps: hashed at its next load, then stamped.
    (entry / ".verified.json").unlink()
    engine.clear()
    assert _was_loaded(_jit_and_check(engine, func))
    assert json.loads((entry / ".verified.json").read_text()) == stamps
    # A stamp that no longer matches (the file was replaced, as a rebuild or an attacker with
    # the user's rights would: never rewritten in place under the process that loaded it)
    # means hashing, which catches it.
    _replace_flipped(entry / "kernel.so")
    engine.clear()
    with pytest.warns(CompileCacheWarning, match="checksum mismatch"):
        assert not _was_loaded(_jit_and_check(engine, func))


#: Another user's uid: files are given to it with os.chown, which only root may do.
OTHER_UID = 4242


@pytest.mark.parametrize("how", ["another user's", "group-writable", "a symlink"])
def test_a_library_not_the_users_own_private_file_is_never_loaded(
    engine, cache_root, tmp_path, how
):
    if how == "another user's" and os.geteuid() != 0:
        pytest.skip("giving a file to another uid (os.chown) needs root")
    func = _func()
    _jit_and_check(engine, func)
    (entry,) = _entries(cache_root)
    library = entry / "kernel.so"
    if how == "a symlink":  # to a copy with a valid checksum, but outside the entry
        outside = tmp_path / "outside.so"
        outside.write_bytes(library.read_bytes())
        library.unlink()
        library.symlink_to(outside)
    elif how == "group-writable":
        library.chmod(0o664)
    else:
        os.chown(library, OTHER_UID, OTHER_UID)
    with pytest.warns(CompileCacheWarning, match="discarding"):
        assert not _was_loaded(_jit_and_check(engine, func))
    assert _was_loaded(_jit_and_check(engine, func))  # stored again, the user's own


def test_entries_stored_under_a_lax_umask_are_private_and_load(engine, cache_root):
    old = os.umask(0o002)
    try:
        _jit_and_check(engine, _func())
    finally:
        os.umask(old)
    (entry,) = _entries(cache_root)
    for name in ("kernel.so", "meta.json", "source.tvmscript"):
        assert (entry / name).stat().st_mode & 0o022 == 0, name
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileCacheWarning)
        assert _was_loaded(_jit_and_check(engine, _func()))


def test_an_entry_moved_under_another_key_is_foreign(engine, cache_root):
    _jit_and_check(engine, _func(32))
    (entry,) = _entries(cache_root)
    _jit_and_check(engine, _func(48), width=48)
    (other,) = [e for e in _entries(cache_root) if e != entry]
    # Put the 32-wide kernel where the 48-wide one's key points.
    for name in ("kernel.so", "meta.json", "source.tvmscript"):
        (other / name).write_bytes((entry / name).read_bytes())
    with pytest.warns(CompileCacheWarning, match="foreign"):
        assert not _was_loaded(_jit_and_check(engine, _func(48), width=48))


def _index_records(root: Path) -> list[Path]:
    return sorted((root / _disk_cache.INDEX).glob("*.json"))


def test_a_hash_collision_never_loads_the_other_function(engine, cache_root):
    func = _func()
    _jit_and_check(engine, func)
    (entry,) = _entries(cache_root)
    for record in _index_records(cache_root):  # go through the kernel's own key, not the index
        record.unlink()
    # Same key material, another function's text (with a valid checksum): a collision.
    (entry / "source.tvmscript").write_text("# another function\n")
    files = json.loads((entry / "meta.json").read_text())["files"]
    _rewrite_meta(entry, files={**files, "source.tvmscript": _sha256(entry / "source.tvmscript")})
    with pytest.warns(CompileCacheWarning, match="same structural hash"):
        assert not _was_loaded(_jit_and_check(engine, func))
    assert (entry / "source.tvmscript").read_text() == "# another function\n"  # left alone


def test_another_shim_version_misses(engine, cache_root, monkeypatch):
    func = _func()
    current = _disk_cache.__version__
    monkeypatch.setattr(_disk_cache, "__version__", "0.0.0-older")
    _jit_and_check(engine, func)
    monkeypatch.setattr(_disk_cache, "__version__", current)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileCacheWarning)
        assert not _was_loaded(_jit_and_check(engine, func))
    assert len(_entries(cache_root)) == 2


def test_another_schedule_rules_version_misses(engine, cache_root, monkeypatch):
    func = _func()
    _jit_and_check(engine, func)
    from compile_engine_compat.facade import kernels as _kernels

    monkeypatch.setattr(_kernels, "RULES_VERSION", "next")
    assert not _was_loaded(_jit_and_check(engine, func))
    assert len(_entries(cache_root)) == 2


def test_a_directory_writable_by_others_is_refused(engine, cache_root):
    cache_root.chmod(0o777)
    with pytest.raises(CacheDirectoryError, match=r"writable by group or others.*chmod go-w"):
        engine.jit(_func(), "llvm")
    assert cli.main(["cache", "info"]) == 1
    cache_root.chmod(0o700)


@pytest.mark.skipif(os.getuid() != 0, reason="changing a directory's owner needs root")
def test_a_directory_of_another_user_is_refused(engine, cache_root):
    os.chown(cache_root, 12345, 12345)
    with pytest.raises(CacheDirectoryError, match="belongs to uid 12345"):
        engine.jit(_func(), "llvm")
    os.chown(cache_root, 0, 0)


def test_the_size_limit_evicts_the_least_recently_used(engine, cache_root, monkeypatch):
    _jit_and_check(engine, _func(32))
    (first,) = _entries(cache_root)
    size = sum(f.stat().st_size for f in first.iterdir())
    monkeypatch.setenv(_disk_cache.CACHE_SIZE_ENV, str(1.5 * size / (1024 * 1024)))
    _jit_and_check(engine, _func(48), width=48)
    remaining = _entries(cache_root)
    assert len(remaining) == 1 and remaining[0] != first
    # The evicted kernel's index record goes with it; the other one points at what remains.
    (record,) = _index_records(cache_root)
    assert json.loads(record.read_text())["payload"]["kernel"] == remaining[0].name


def test_cli_info_and_clear(engine, cache_root, capsys):
    _jit_and_check(engine, _func())
    assert cli.main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert "entries: 1" in out and "indexed source functions: 1" in out
    assert cli.main(["cache", "clear"]) == 0
    assert "removed 1" in capsys.readouterr().out
    assert _entries(cache_root) == [] and _index_records(cache_root) == []
    assert cli.main(["cache", "bogus"]) == 2


_WRITER = textwrap.dedent(
    """
    import sys, time, warnings
    sys.path.insert(0, {tests!r})
    warnings.simplefilter("ignore")
    import numpy as np
    from _builders import build
    from tvm import relax
    from compile_engine_compat import compile_engine
    func = build("main", [("x", (4, 40), "float32")],
                 lambda bb, x: relax.op.nn.relu(bb.emit(relax.op.add(x, x))))
    engine = compile_engine.get()
    engine.lower(func, "llvm")  # import and lowering done: now race on the compile and store
    while time.time() < {start}:
        time.sleep(0.001)
    kernel = engine.jit(func, "llvm")
    x = np.ones((4, 40), "float32"); out = np.empty_like(x); kernel(x, out)
    assert (out == 2).all()
    """
)


@pytest.mark.long
def test_two_processes_writing_the_same_key_at_once(engine, cache_root):
    start = time.time() + 8  # both processes have imported TVM and lowered by then
    script = _WRITER.format(tests=str(Path(__file__).resolve().parents[1]), start=start)
    procs = [
        subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    assert len(_entries(cache_root)) == 1
    assert not [p for p in (cache_root / _disk_cache.LAYOUT).iterdir() if p.name.startswith(".")]
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileCacheWarning)
        assert _was_loaded(_jit_and_check(engine, _func(40), width=40))


def _flip_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _replace_flipped(path: Path) -> None:
    """Replace ``path`` by a copy with one byte flipped (a new file renamed over it)."""
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    staged = path.with_name(path.name + ".new")
    staged.write_bytes(bytes(data))
    staged.chmod(path.stat().st_mode)
    os.replace(staged, path)


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _rewrite_meta(entry: Path, **changes: object) -> None:
    meta = json.loads((entry / "meta.json").read_text())
    meta.update(changes)
    (entry / "meta.json").write_text(json.dumps(meta))


def test_jit_many_stores_one_library_for_all_and_loads_it_back(engine, cache_root):
    funcs = [_func(w) for w in (8, 16, 24)]
    engine.clear()
    assert not any(_was_loaded(k) for k in engine.jit_many(funcs, "llvm"))
    entries = _entries(cache_root)
    assert len(entries) == 3
    modules = {id(k.module) for k in engine.jit_many(funcs, "llvm")}
    # One library per module built (functions are built in chunks), linked into each entry.
    assert len({(e / "kernel.so").stat().st_ino for e in entries}) == len(modules) < 3
    engine.clear()
    kernels = engine.jit_many(funcs, "llvm")
    assert all(_was_loaded(k) for k in kernels)
    x = np.full((4, 16), -1.5, "float32")
    out = np.empty_like(x)
    kernels[1](x, out)
    np.testing.assert_array_equal(out, np.zeros_like(x))


# -- the source index: a warm jit loads the kernel without tracing -------------------------------


def test_a_warm_jit_loads_through_the_index_without_tracing(engine, cache_root, traces):
    func = _func()
    cold = _jit_and_check(engine, func)
    assert len(traces) == 1 and len(_index_records(cache_root)) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileCacheWarning)
        warm = _jit_and_check(engine, func)
    assert _was_loaded(warm) and len(traces) == 1  # loaded, never traced
    assert warm.name == cold.name
    # The CachedFunc is lowered when asked for (the kernel keeps the library's symbol).
    ((_, value),) = engine.items()
    assert value.cached_func.prim_fn_var.name_hint.startswith("fused_add_nn_relu")
    assert len(traces) == 2
    assert engine.jit(func, "llvm") is warm and value.use_count == 1


def test_the_index_ignores_the_function_name(engine, cache_root, traces):
    _jit_and_check(engine, _func())
    renamed = _func().with_attr("global_symbol", "renamed")
    assert _was_loaded(_jit_and_check(engine, renamed)) and len(traces) == 1


def test_an_index_collision_never_loads_the_other_function(engine, cache_root, traces):
    func = _func()
    _jit_and_check(engine, func)
    (record,) = _index_records(cache_root)
    data = json.loads(record.read_text())
    data["payload"]["source"] = "# another function\n"
    data["sha256"] = _disk_cache._record_digest(data["payload"])
    record.write_text(json.dumps(data))
    with pytest.warns(CompileCacheWarning, match="same structural hash"):
        _jit_and_check(engine, func)  # right results: traced and lowered, not the index's kernel
    assert len(traces) == 2


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda r: r.write_text("{not json"), id="corrupt"),
        pytest.param(lambda r: r.write_text(r.read_text()[:40]), id="truncated"),
        pytest.param(
            lambda r: r.write_text(r.read_text().replace('"arity"', '"arity_"')),
            id="checksum-mismatch",
        ),
    ],
)
def test_a_damaged_index_record_is_discarded_and_written_again(engine, cache_root, traces, damage):
    func = _func()
    _jit_and_check(engine, func)
    (record,) = _index_records(cache_root)
    damage(record)
    with pytest.warns(CompileCacheWarning, match="discarding.*index record"):
        _jit_and_check(engine, func)
    assert len(traces) == 2
    assert _was_loaded(_jit_and_check(engine, func)) and len(traces) == 2  # indexed again


def test_a_record_whose_kernel_was_removed_is_a_plain_miss(engine, cache_root, traces):
    func = _func()
    _jit_and_check(engine, func)
    (entry,) = _entries(cache_root)
    _disk_cache._remove(entry)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileCacheWarning)
        assert not _was_loaded(_jit_and_check(engine, func))
    assert len(traces) == 2


def test_a_user_strategy_turns_the_index_off(engine, cache_root, traces):
    from compile_engine_compat import compile_engine

    func = _func()
    _jit_and_check(engine, func)
    relu = compile_engine.OpImplementation(
        "relu_user", lambda attrs, inputs, out_type: [topi.nn.relu(inputs[0])], plevel=20
    )
    compile_engine.register_implementation("relax.nn.relu", relu)
    try:
        _jit_and_check(engine, func)
    finally:
        compile_engine.unregister_implementation("relax.nn.relu", relu)
    assert len(traces) == 2  # traced: the user's implementation decides the kernel


def test_functions_with_tensor_constants_are_not_indexed(engine, cache_root, traces):
    weights = relax.const(np.arange(8, dtype="float32").reshape(2, 4))
    func = build("main", [("x", (2, 4), "float32")], lambda bb, x: R.add(x, weights))
    engine.jit(func, "llvm")
    assert len(_entries(cache_root)) == 1 and _index_records(cache_root) == []
    engine.clear()
    kernel = engine.jit(func, "llvm")  # the kernel entry still serves, after a trace
    x = np.ones((2, 4), "float32")
    out = np.empty_like(x)
    kernel(x, out)
    np.testing.assert_array_equal(out, x + np.arange(8).reshape(2, 4))
    assert _was_loaded(kernel) and len(traces) == 2


def test_the_pass_context_is_part_of_both_keys(engine, cache_root, traces):
    func = _func()
    _jit_and_check(engine, func)
    with tvm.transform.PassContext(config={"tirx.disable_vectorize": True}):
        assert not _was_loaded(_jit_and_check(engine, func))
    assert len(_entries(cache_root)) == 2 and len(_index_records(cache_root)) == 2


# -- the index resolves only to entries inside <cache>/v2, attested for the function -------------


def _forge_record(record: Path, kernel: str) -> None:
    """Point ``record`` at ``kernel``, with a valid checksum: a consistent forgery."""
    data = json.loads(record.read_text())
    data["payload"]["kernel"] = kernel
    data["sha256"] = _disk_cache._record_digest(data["payload"])
    record.write_text(json.dumps(data))


def _mapped(path: Path) -> bool:
    """True when a file under ``path`` is mapped into this process (a loaded library)."""
    return str(path) in Path("/proc/self/maps").read_text()


@pytest.mark.parametrize("where", ["relative", "absolute"])
def test_an_index_record_pointing_outside_the_cache_is_refused(
    engine, cache_root, traces, tmp_path, where
):
    func = _func()
    _jit_and_check(engine, func)
    (entry,) = _entries(cache_root)
    (record,) = _index_records(cache_root)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # A whole, valid entry outside the cache (as if dropped into a world-writable directory).
    outside = elsewhere / entry.name
    outside.mkdir()
    for file in entry.iterdir():
        if file.is_file():
            (outside / file.name).write_bytes(file.read_bytes())
    _disk_cache._remove(entry)  # only the outside copy could serve the record now
    _forge_record(record, f"../../elsewhere/{entry.name}" if where == "relative" else str(outside))
    with pytest.warns(CompileCacheWarning, match="outside"):
        _jit_and_check(engine, func)  # right result: traced and compiled again
    assert len(traces) == 2
    assert not _mapped(elsewhere)
    assert (outside / "kernel.so").exists()  # what lies outside the cache is never touched


def test_an_entry_that_is_a_symlink_out_of_the_cache_is_refused(
    engine, cache_root, traces, tmp_path
):
    func = _func()
    _jit_and_check(engine, func)
    (entry,) = _entries(cache_root)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    outside = elsewhere / entry.name
    entry.rename(outside)
    entry.symlink_to(outside)
    with pytest.warns(CompileCacheWarning, match="symlink"):
        assert not _was_loaded(_jit_and_check(engine, func))
    assert not _mapped(elsewhere)
    assert (outside / "kernel.so").exists()  # the link is removed, never its target
    assert _was_loaded(_jit_and_check(engine, func))  # stored again, as a real entry


def test_an_index_record_pointing_at_another_functions_entry_is_refused(engine, cache_root, traces):
    _jit_and_check(engine, _func(48), width=48)
    (other,) = _entries(cache_root)
    func = _func(32)
    _jit_and_check(engine, func)
    assert len(traces) == 2
    (record,) = [
        r
        for r in _index_records(cache_root)
        if json.loads(r.read_text())["payload"]["kernel"] != other.name
    ]
    # A valid record for the 32-wide function, pointing at the 48-wide function's valid entry.
    _forge_record(record, other.name)
    with pytest.warns(CompileCacheWarning, match="not built from this function"):
        _jit_and_check(engine, func)  # right result: the 32-wide kernel, not the 48-wide one
    assert len(traces) == 3  # traced: the index was not trusted
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileCacheWarning)
        assert _was_loaded(_jit_and_check(engine, func)) and len(traces) == 3  # indexed again


def test_indexing_never_writes_through_a_symlinked_entry(tmp_path):
    # A record is written after its entry's attestation; through a symlink that would land
    # outside the cache, so nothing is written and nothing is indexed.
    outside = tmp_path / "outside"
    outside.mkdir()
    link = tmp_path / ("e" * 64)
    link.symlink_to(outside)
    assert not _disk_cache._attest(link, "a" * 64, "def main(): ...")
    assert list(outside.iterdir()) == []


# -- leftovers of killed writers: counted, cleared, and reclaimed once stale ---------------------


def _leftovers(root: Path, age_s: float) -> list[Path]:
    """Make what writers killed at various points leave behind, last touched ``age_s`` ago."""
    layout, index = root / _disk_cache.LAYOUT, root / _disk_cache.INDEX
    for directory in (layout, index):
        directory.mkdir(mode=0o700, exist_ok=True)
    staging = layout / ".tmp-killedwriter"
    staging.mkdir()
    (staging / "lib0.s").write_bytes(b"x" * 3000)
    trash = layout / f".del-{'0' * 64}-deadbeef"  # killed while deleting an entry
    trash.mkdir()
    (trash / "kernel.so").write_bytes(b"y" * 1000)
    record = index / ".tmp-abcdef.json"  # killed while writing an index record
    record.write_text("{")
    made = [staging, trash, record]
    then = time.time() - age_s
    for path in made:
        for part in [path, *path.iterdir()] if path.is_dir() else [path]:
            os.utime(part, (then, then))
    return made


def test_cache_info_counts_staging_leftovers(engine, cache_root, capsys):
    _jit_and_check(engine, _func())
    _leftovers(cache_root, age_s=3600)
    details = _disk_cache.info()
    assert details["leftovers"] == 3 and details["leftover_bytes"] == 4001
    assert cli.main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert "staging leftovers: 3 (killed writers; reclaimed after 10 min)" in out


def test_cache_clear_reclaims_staging_leftovers(engine, cache_root, capsys):
    _jit_and_check(engine, _func())
    made = _leftovers(cache_root, age_s=0)  # clear takes them all, however recent
    assert cli.main(["cache", "clear"]) == 0
    assert "removed 1 cached kernel(s) and 3 staging leftover(s)" in capsys.readouterr().out
    assert not any(path.exists() for path in made)


def test_the_lru_pass_reclaims_stale_leftovers_only(engine, cache_root):
    stale = _leftovers(cache_root, age_s=11 * 60)
    live = cache_root / _disk_cache.LAYOUT / ".tmp-livewriter"  # a writer at work right now
    live.mkdir()
    (live / "lib0.s").write_text("in progress")
    _jit_and_check(engine, _func())  # a store runs the LRU pass
    assert not any(path.exists() for path in stale)
    assert (live / "lib0.s").exists()
    assert _disk_cache.info()["leftovers"] == 1


# -- COMPILE_ENGINE_COMPAT_CACHE_SIZE_MB: a bad value is one warning and the default -------------

_BAD_SIZES = ["nan", "inf", "-inf", "1e400", "-5", "abc", "", " ", "12MB"]


@pytest.mark.parametrize("value", _BAD_SIZES)
def test_a_bad_size_limit_warns_once_and_uses_the_default(engine, cache_root, monkeypatch, value):
    monkeypatch.setenv(_disk_cache.CACHE_SIZE_ENV, value)
    func = _func()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CompileCacheWarning)
        _jit_and_check(engine, func)
    messages = [str(w.message) for w in caught if w.category is CompileCacheWarning]
    if value.strip():  # an empty value is unset: the default, silently
        (message,) = messages
        assert message == (
            f"compile cache: {_disk_cache.CACHE_SIZE_ENV}={value!r} is not a size in MiB (a "
            "finite number >= 0); using the default, 1024"
        )
    else:
        assert messages == []
    # Stored, indexed and kept: eviction ran with the default limit, it neither failed nor
    # emptied the cache (-5 used to evict every entry, the new one included).
    assert len(_entries(cache_root)) == 1 and len(_index_records(cache_root)) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileCacheWarning)  # the same warning, checked above
        assert _disk_cache.info()["limit_bytes"] == 1024 * 1024 * 1024


@pytest.mark.parametrize("value", ["nan", "inf", "1e400", "-5", "abc"])
def test_cache_info_with_a_bad_size_limit_prints_one_line(cache_root, monkeypatch, capsys, value):
    monkeypatch.setenv(_disk_cache.CACHE_SIZE_ENV, value)
    assert cli.main(["cache", "info"]) == 0
    out, err = capsys.readouterr()
    assert "size: 0.0 MiB of 1024 MiB" in out
    assert err.splitlines() == [
        f"compile-engine-compat cache: warning: {_disk_cache.CACHE_SIZE_ENV}={value!r} is not "
        "a size in MiB (a finite number >= 0); using the default, 1024"
    ]


@pytest.mark.parametrize("value", ["0", "0.5", "2048", " 16 ", "1e3"])
def test_a_valid_size_limit_is_used_silently(cache_root, monkeypatch, value):
    monkeypatch.setenv(_disk_cache.CACHE_SIZE_ENV, value)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileCacheWarning)
        assert _disk_cache.info()["limit_bytes"] == int(float(value) * 1024 * 1024)


def test_the_previous_layout_is_reclaimed_once_untouched(engine, cache_root):
    old_entry = cache_root / "v1" / ("0" * 64)
    old_entry.mkdir(parents=True)
    (old_entry / "kernel.so").write_bytes(b"z" * 500)
    old_index = cache_root / "index-v1"
    old_index.mkdir()
    assert _disk_cache.info()["leftovers"] == 2  # each older layout's directory, whole
    then = time.time() - 11 * 60
    for path in (old_entry / "kernel.so", old_entry, cache_root / "v1", old_index):
        os.utime(path, (then, then))
    _jit_and_check(engine, _func())  # a store runs the LRU pass
    assert not (cache_root / "v1").exists() and not old_index.exists()
