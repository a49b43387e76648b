"""The persistent compile cache: hits across engines and processes, faults, safety rules."""

from __future__ import annotations

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
from tvm import relax

from compile_engine_compat import _disk_cache, cli
from compile_engine_compat._disk_cache import CacheDirectoryError, CompileCacheWarning

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


def _jit_and_check(engine, func: relax.Function, width: int = 32) -> object:
    engine.clear()  # forget the in-memory kernel: the next jit must go to the disk cache
    kernel = engine.jit(func, "llvm")
    x = np.arange(4 * width, dtype="float32").reshape(4, width) - 60
    out = np.empty_like(x)
    kernel(x, out)
    np.testing.assert_array_equal(out, np.maximum(x + x, 0))
    return kernel


def _was_loaded(kernel) -> bool:
    # tvm.compile gives an Executable; a library loaded from disk is a plain runtime Module.
    return not isinstance(kernel.module, tvm.runtime.Executable)


def test_a_stored_kernel_is_loaded_instead_of_compiled(engine, cache_root):
    func = _func()
    assert not _was_loaded(_jit_and_check(engine, func))
    (entry,) = _entries(cache_root)
    assert {p.name for p in entry.iterdir()} == {"kernel.so", "meta.json", "source.tvmscript"}
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


def test_a_hash_collision_never_loads_the_other_function(engine, cache_root):
    func = _func()
    _jit_and_check(engine, func)
    (entry,) = _entries(cache_root)
    # Same key material, another function's text (with a valid checksum): a collision.
    (entry / "source.tvmscript").write_text("# another function\n")
    _rewrite_meta(entry, source_sha256=_disk_cache._sha256(entry / "source.tvmscript"))
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
    monkeypatch.setattr(_disk_cache, "RULES_VERSION", "next")
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


def test_cli_info_and_clear(engine, cache_root, capsys):
    _jit_and_check(engine, _func())
    assert cli.main(["cache", "info"]) == 0
    assert "entries: 1" in capsys.readouterr().out
    assert cli.main(["cache", "clear"]) == 0
    assert "removed 1" in capsys.readouterr().out
    assert _entries(cache_root) == []
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


def test_two_processes_writing_the_same_key_at_once(engine, cache_root):
    start = time.time() + 8  # both processes have imported TVM and lowered by then
    script = _WRITER.format(tests=str(Path(__file__).parent), start=start)
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


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])


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
    assert len({(e / "kernel.so").stat().st_ino for e in entries}) == 1  # one library, linked
    engine.clear()
    kernels = engine.jit_many(funcs, "llvm")
    assert all(_was_loaded(k) for k in kernels)
    x = np.full((4, 16), -1.5, "float32")
    out = np.empty_like(x)
    kernels[1](x, out)
    np.testing.assert_array_equal(out, np.zeros_like(x))
