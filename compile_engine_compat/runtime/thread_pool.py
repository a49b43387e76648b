"""The shim's own launcher for parallel kernels: claimed tasks, bounded pause-spinning workers.

Every parallel loop TVM compiles calls ``TVMBackendParallelLaunch`` through a context pointer
of its library. TVM 0.27's pool behind it forces a choice on a 2-core machine (bench/RESULTS.md):

- workers that spin (``sched_yield``, any ``TVM_THREAD_POOL_SPIN_COUNT`` above ~30) catch a
  model's next kernel at once, but next to NumPy's OpenBLAS, whose idle worker spins too, a
  kernel between NumPy calls lost a whole 4 ms time slice: 3.8-4.8x the two calls alone;
- workers that sleep (``TVM_THREAD_POOL_SPIN_COUNT=0``) cost a 20-35 us wake-up per parallel kernel:
  MobileNetV2 ran at 1.65x onnxruntime, back-to-back 256x256 matmul kernels at 145 us where
  spinning workers took 75-115 us.

``thread_pool.c`` (built here with the system C compiler, once per machine) keeps both. Tasks
are claimed: the calling thread runs whatever no worker took, so a late worker costs its own
task, not a wait. Workers spin with the CPU's ``pause`` for at most :data:`SPIN_MICROSECONDS`,
and only while launches follow each other that closely (a model's kernels); otherwise they sleep
at once (a kernel between NumPy calls). See docs/performance.md, "Threads: the shim's pool".

:func:`start` builds it and registers it as the ``__TVMBackendParallelLaunch`` of every library
TVM loads or JIT-compiles from then on (:func:`.boundary.register_context_symbol`). It is not
started, and TVM's own pool runs the kernels, when the user set
``COMPILE_ENGINE_COMPAT_THREAD_POOL=tvm``, ``TVM_THREAD_POOL_SPIN_COUNT`` or
``TVM_BIND_THREADS`` (settings of TVM's pool), off Linux, or with no working C compiler.
:func:`status` says which pool runs kernels and why.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from compile_engine_compat import boundary, library_files

__all__ = [
    "POOL_ENV",
    "SOURCE",
    "SPIN_MICROSECONDS",
    "WAIT_MICROSECONDS",
    "PoolStatus",
    "launches",
    "start",
    "status",
    "worker_tasks",
]

#: ``tvm`` keeps TVM's own pool; unset (or ``shim``) starts the shim's.
POOL_ENV = "COMPILE_ENGINE_COMPAT_THREAD_POOL"
#: The longest an idle worker spins for the next kernel (while kernels come this close).
SPIN_MICROSECONDS = 50
#: The longest the calling thread spins for its workers' tasks before it sleeps.
WAIT_MICROSECONDS = 50
SOURCE = Path(__file__).with_name("thread_pool.c")
#: Settings of TVM's own pool: a user who set one asked for TVM's pool.
_TVM_POOL_KNOBS = ("TVM_THREAD_POOL_SPIN_COUNT", "TVM_BIND_THREADS")
_COMPILE_TIMEOUT_S = 120


@dataclass(frozen=True)
class PoolStatus:
    """Which pool runs parallel kernels.

    Attributes
    ----------
    kind : str
        ``"shim"`` (thread_pool.c) or ``"tvm"`` (TVM's own pool).
    threads : int
        The shim pool's threads, the calling one included (0 for TVM's pool).
    reason : str
        Why this pool: a user setting, a missing compiler, ...
    """

    kind: str
    threads: int
    reason: str


_lock = threading.Lock()
_status: PoolStatus | None = None
_library: ctypes.CDLL | None = None


def start(threads: int) -> PoolStatus:
    """Start the shim's pool with ``threads`` threads, once per process; return :func:`status`.

    Call it before TVM loads or JIT-compiles the libraries whose kernels it should run: those
    already loaded keep TVM's pool. Never raises: a pool that cannot start says why in
    :attr:`PoolStatus.reason`, and TVM's pool runs the kernels.
    """
    global _status, _library
    with _lock:
        if _status is not None:
            return _status
        reason = _declined()
        if reason is not None:
            _status = PoolStatus("tvm", 0, reason)
            return _status
        try:
            library = _load_library()
            _initialize(library, threads)
            launch = ctypes.cast(library.cec_parallel_launch, ctypes.c_void_p).value or 0
            boundary.register_context_symbol("__TVMBackendParallelLaunch", launch)
        except (OSError, ImportError, RuntimeError, subprocess.SubprocessError) as exc:
            _status = PoolStatus("tvm", 0, f"the shim's pool could not start: {exc}")
            return _status
        _library = library
        _status = PoolStatus("shim", library.cec_pool_threads(), "the default")
        return _status


def status() -> PoolStatus:
    """Which pool runs the parallel kernels TVM compiles or loads from now on."""
    if _status is not None:
        return _status
    return PoolStatus("tvm", 0, "not started (no kernel built through the shim yet)")


def launches() -> int:
    """How many parallel launches the shim's pool has run in this process (0 if not started)."""
    if _library is None:
        return 0
    return int(_library.cec_pool_launches())


def worker_tasks() -> int:
    """How many tasks the shim pool's workers (not the calling threads) have run (0 if not
    started)."""
    if _library is None:
        return 0
    return int(_library.cec_pool_worker_tasks())


def _declined() -> str | None:
    """Why TVM's pool stays (a user's choice, this platform), or None."""
    choice = os.environ.get(POOL_ENV, "shim").strip().lower()
    if choice == "tvm":
        return f"{POOL_ENV}=tvm"
    if choice not in ("", "shim"):
        return f"{POOL_ENV}={choice!r} is neither 'shim' nor 'tvm'"
    for knob in _TVM_POOL_KNOBS:
        if boundary.set_by_user(knob):
            return f"{knob} is set (a setting of TVM's pool)"
    if not sys.platform.startswith("linux"):
        return f"the shim's pool runs on Linux only (this is {sys.platform})"
    return None


def _initialize(library: ctypes.CDLL, threads: int) -> None:
    library.cec_pool_init.restype = ctypes.c_int
    library.cec_pool_init.argtypes = [ctypes.c_int, ctypes.c_long, ctypes.c_long] + [
        ctypes.c_void_p
    ] * 4
    library.cec_pool_launches.restype = ctypes.c_uint64
    library.cec_pool_worker_tasks.restype = ctypes.c_uint64
    errors = [
        boundary.ffi_function_address(name)
        for name in (
            "TVMFFIErrorMoveFromRaised",
            "TVMFFIErrorSetRaised",
            "TVMFFIObjectDecRef",
            "TVMFFIErrorSetRaisedFromCStr",
        )
    ]
    spin_ns, wait_ns = SPIN_MICROSECONDS * 1000, WAIT_MICROSECONDS * 1000
    if library.cec_pool_init(threads, spin_ns, wait_ns, *errors) != 0:
        raise RuntimeError("pthread_atfork failed")


def _load_library() -> ctypes.CDLL:
    """thread_pool.c compiled for this machine, loaded: from a private folder of the user's.

    Each folder of :func:`_library_directories` is used only when it is the current user's and
    not writable by group or others, and a library in it only when it is a regular file of the
    user's that others cannot write (:mod:`.library_files`): another user cannot plant a library
    under the name this machine's build would have. When no such folder can be had, the pool is
    built into a new private temp folder (``tempfile.mkdtemp``), loaded, and the folder removed.
    """
    compiler = os.environ.get("CC") or "cc"
    name = _library_name(compiler)
    for directory, shared_parent in _library_directories():
        try:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            if shared_parent and directory.is_symlink():  # anyone may make it in the temp folder
                continue
            library_files.check_private_folder(directory, _WHAT)
        except OSError:  # read-only, no permission, another user's: the next one
            continue
        library = directory / name
        if library.exists() or library.is_symlink():
            try:
                return _load_private(library)
            except library_files.UnsafeLibraryError:  # not the user's own whole file: rebuilt
                pass
        if os.access(directory, os.W_OK):
            return _load_private(_compile(compiler, library))
    with tempfile.TemporaryDirectory(prefix="compile-engine-compat-pool-") as private:
        return _load_private(_compile(compiler, Path(private) / name))


def _library_name(compiler: str) -> str:
    """The file name of the pool built from this source by ``compiler`` for this machine."""
    source = SOURCE.read_bytes()
    key = hashlib.sha256(source + compiler.encode() + platform.machine().encode()).hexdigest()
    return f"thread-pool-{key[:16]}.so"


#: What the pool's library is, in the messages of :mod:`.library_files`.
_WHAT = "the shim's thread pool library"


def _load_private(library: Path) -> ctypes.CDLL:
    with library_files.private_library(library, _WHAT) as path:
        return ctypes.CDLL(path)


def _library_directories() -> list[tuple[Path, bool]]:
    """The per-user cache directory (if there is a home), then a per-user temp directory, each
    with whether its parent is shared (the temp folder: there a symlink is refused).

    Either is used only when it is the current user's and private (see :func:`_load_library`).
    """
    directories = []
    try:
        cache_home = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        directories.append((Path(cache_home) / "compile-engine-compat", False))
    except RuntimeError:  # no home directory (no HOME, no passwd entry)
        pass
    private = f"compile-engine-compat-{os.getuid()}" if hasattr(os, "getuid") else ""
    directories.append((Path(tempfile.gettempdir()) / (private or "compile-engine-compat"), True))
    return directories


def _compile(compiler: str, library: Path) -> Path:
    """Compile :data:`SOURCE` to ``library`` (written whole or not at all)."""
    words = shlex.split(compiler)  # CC may carry a launcher or flags: "ccache gcc", "gcc -m64"
    if not words or shutil.which(words[0]) is None:
        raise OSError(f"no C compiler {compiler!r} on PATH (set CC)")
    staging = library.with_name(f"{library.name}.{os.getpid()}.tmp")
    command = [*words, "-O2", "-shared", "-fPIC", "-pthread", "-o", str(staging), str(SOURCE)]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=_COMPILE_TIMEOUT_S, check=False
        )
        if done.returncode != 0:
            lines = [line for line in done.stderr.splitlines() if line.strip()]
            first = next((line for line in lines if "error" in line), lines[0] if lines else "")
            raise OSError(f"{compiler} could not build {SOURCE.name}: {first.strip()}")
        os.chmod(staging, 0o755)  # whatever the umask: a library others may write is refused
        os.replace(staging, library)  # atomic: a concurrent process sees all of it or nothing
    finally:
        staging.unlink(missing_ok=True)
    return library
