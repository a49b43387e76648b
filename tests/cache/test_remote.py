"""The remote cache tier against real servers: Redis, an S3-compatible endpoint, a shared directory.

A "machine" is a local cache directory of its own: the test switches ``COMPILE_ENGINE_COMPAT_
CACHE_DIR`` and clears the engine. Every scenario of the issue is a test here: two machines
share one store and the second compiles nothing; forged, bit-flipped, truncated, unsigned and
mismatched entries are refused (counted by reason) and never loaded; a killed server, a hung
server and a full store cost a miss, never a failure or a stall; four processes write the same
keys at once.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
import tvm
from _builders import build
from tvm import relax

from compile_engine_compat import cli
from compile_engine_compat.cache import backends, remote, signing, stats
from compile_engine_compat.cache import disk as _disk_cache
from compile_engine_compat.cache.artifact import (
    Artifact,
    ArtifactKey,
    RemoteCacheWarning,
    fields,
)
from compile_engine_compat.facade.engine import CompileEngine
from compile_engine_compat.runtime.kernel import Kernel

R = relax.op
#: The fleet's signing key in these tests (long enough; the tests never print it).
TEST_KEY = "test-fleet-key-" + "0123456789abcdef" * 3
KEY = signing.SigningKey(TEST_KEY.encode(), "test")


def _func(width: int) -> relax.Function:
    return build(
        "main",
        [("x", (4, width), "float32")],
        lambda bb, x: R.nn.relu(bb.emit(R.add(x, x))),
    )


def _check(kernel: Kernel, width: int) -> None:
    x = np.arange(4 * width, dtype="float32").reshape(4, width) - 50
    out = np.empty_like(x)
    kernel(x, out)
    np.testing.assert_array_equal(out, np.maximum(x + x, 0))


def _was_loaded(kernel: Kernel) -> bool:
    # tvm.compile gives an Executable; a library loaded from a cache is a plain runtime Module.
    return not isinstance(kernel.module, tvm.runtime.Executable)


class Fleet:
    """Machines (separate local cache directories) sharing one remote store."""

    def __init__(
        self, engine: CompileEngine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str
    ) -> None:
        self.engine = engine
        self.tmp_path = tmp_path
        self.env = monkeypatch
        self.url = url
        for name in (signing.KEY_FILE_ENV, _disk_cache.CACHE_SIZE_ENV):
            monkeypatch.delenv(name, raising=False)

    def machine(self, name: str, **settings: str) -> Path:
        """Switch to machine ``name``: its own local directory, the shared store, the key."""
        remote.flush(30)  # what the previous machine queued is published first
        local = self.tmp_path / "machines" / name
        local.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.env.setenv(_disk_cache.CACHE_DIR_ENV, str(local))
        self.env.setenv(remote.REMOTE_ENV, self.url)
        self.env.setenv(signing.KEY_ENV, settings.pop("key", TEST_KEY))
        for env in (remote.MODE_ENV, remote.TIMEOUT_ENV, remote.ENTRY_MB_ENV, remote.QUEUE_ENV):
            self.env.delenv(env, raising=False)  # each machine has only the settings it names
        for env, value in settings.items():
            self.env.setenv(env, value)
        self.engine.clear()
        return local

    def jit(self, width: int) -> Kernel:
        self.engine.clear()  # forget the in-memory kernel: the next jit goes to the caches
        kernel = self.engine.jit(_func(width), "llvm")
        _check(kernel, width)
        return kernel

    def backend(self) -> backends.Backend:
        return backends.open_backend(self.url, 10)

    def entries(self, kind: str | None = None) -> list[str]:
        return [n for n in self.backend().names("") if kind is None or f"/{kind}/" in n]

    def rewrite(self, change: Callable[[str, bytes], bytes | None]) -> int:
        """Replace each stored entry by ``change(name, blob)`` (None: leave it); count them."""
        store = self.backend()
        changed = 0
        for name in self.entries():
            blob = store.get(name, 1 << 30)
            assert blob is not None
            new = change(name, blob)
            if new is not None:
                store.delete(name)
                assert store.put(name, new, None)
                changed += 1
        return changed


@pytest.fixture
def fleet(engine, tmp_path, monkeypatch, remote_url) -> Fleet:
    return Fleet(engine, tmp_path, monkeypatch, remote_url)


@pytest.fixture
def redis_fleet(engine, tmp_path, monkeypatch, redis_server) -> Fleet:
    redis_server.client.flushall()
    return Fleet(engine, tmp_path, monkeypatch, redis_server.url)


class Counted:
    """The counters a block of code adds (``stats`` counts per process)."""

    def __init__(self) -> None:
        self.before = stats.snapshot()
        self.delta: dict[str, int] = {}

    def __enter__(self) -> Counted:
        return self

    def __exit__(self, *exc: object) -> None:
        remote.flush(30)
        after = stats.snapshot()
        self.delta = {k: v - self.before.get(k, 0) for k, v in after.items()}
        self.delta = {k: v for k, v in self.delta.items() if v}

    def __getitem__(self, name: str) -> int:
        return self.delta.get(name, 0)


@contextlib.contextmanager
def remote_warnings() -> Iterator[list[str]]:
    """Record the remote tier's warnings (its writer thread's too) as their messages."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RemoteCacheWarning)
        messages: list[str] = []
        yield messages
        remote.flush(30)
    messages += [str(w.message) for w in caught if issubclass(w.category, RemoteCacheWarning)]


def _resealed(blob: bytes, key: signing.SigningKey | None, **changes: str) -> bytes:
    """Open a real entry and seal it again with ``key``, its key material fields changed."""
    artifact = signing.verify_entry(blob, KEY)
    material = artifact.key.material
    for name, value in changes.items():
        material = material.replace(f"\n{name}={fields(material)[name]}", f"\n{name}={value}")
    changed = Artifact(ArtifactKey(artifact.key.kind, material), artifact.files, artifact.meta)
    return signing.seal(changed, key)


# -- two machines, one store: the second compiles nothing ----------------------------------------


def test_a_second_machine_loads_everything_and_compiles_nothing(fleet, traces):
    widths = [8, 12, 16]
    fleet.machine("first")
    with Counted() as first:
        for width in widths:
            assert not _was_loaded(fleet.jit(width))
        fleet.engine.jit_many([_func(20), _func(24)], "llvm")
    assert first["remote.published"] == 2 * len(widths) + 4  # a kernel and an index record each
    assert len(fleet.entries("kernel")) == len(widths) + 2
    traced = len(traces)

    fleet.machine("second")
    with remote_warnings() as messages, Counted() as second:
        kernels = [fleet.jit(width) for width in widths]
        many = fleet.engine.jit_many([_func(20), _func(24)], "llvm")
    assert all(_was_loaded(k) for k in kernels + many)
    assert len(traces) == traced  # nothing traced, lowered or compiled on the second machine
    _check(many[1], 24)
    assert second["remote.hit.index"] == len(widths) + 2
    assert second["remote.hit.kernel"] == len(widths) + 2
    assert second["remote.published"] == 0 and not second["remote.rejected.bad-signature"]
    assert messages == []
    # Pulled entries are local entries now: a third jit on this machine never asks the remote.
    with Counted() as third:
        assert _was_loaded(fleet.jit(widths[0]))
    assert third["local.hit.index"] == 1 and not any(k.startswith("remote.") for k in third.delta)


def test_whole_module_artifacts_go_through_the_same_tier(fleet, tmp_path):
    """What relay.build's cache will do: store_artifact/load_artifact around a whole module."""
    x = relax.Var("x", relax.TensorType([8], "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        bb.emit_func_output(bb.emit(R.multiply(R.add(x, x), x)))
    module = bb.get()
    key = _disk_cache.artifact_key("module", target="llvm", structural_hash=hash(module.script()))

    fleet.machine("builder")
    assert _disk_cache.load_artifact(key) is None
    built = tvm.compile(module, target="llvm")
    staging = tmp_path / "export"
    staging.mkdir()
    library = _disk_cache.export_library(built, staging)
    assert _disk_cache.store_artifact(key, {"module.so": library}, {"entry": "main"})

    fleet.machine("user")
    with Counted() as counted:
        stored = _disk_cache.load_artifact(key)
    assert stored is not None and counted["remote.hit.module"] == 1
    assert stored.meta == {"entry": "main"} and stored.files == ("module.so",)
    vm = relax.VirtualMachine(tvm.runtime.load_module(str(stored.path("module.so"))), tvm.cpu())
    data = np.arange(8, dtype="float32")
    np.testing.assert_array_equal(
        vm["main"](tvm.runtime.tensor(data)).numpy(), (data + data) * data
    )


# -- trust: forged, damaged, unsigned and mismatched entries are never loaded -------------------


def _populate(fleet: Fleet, widths: list[int]) -> None:
    fleet.machine("writer")
    for width in widths:
        fleet.jit(width)
    remote.flush(30)


def _evil_library(fleet: Fleet) -> Callable[[str, bytes], bytes | None]:
    """Return a rewrite giving every kernel entry another function's library, signed wrongly."""
    fleet.machine("attacker", **{remote.REMOTE_ENV: (fleet.tmp_path / "elsewhere").as_uri()})
    evil = fleet.engine.jit(
        build("main", [("x", (4, 8), "float32")], lambda bb, x: R.negative(x)), "llvm"
    )
    staging = fleet.tmp_path / "evil"
    staging.mkdir()
    library = _disk_cache.export_library(evil.module, staging).read_bytes()
    attacker = signing.SigningKey(b"a" * 48, "attacker")

    def forge(name: str, blob: bytes) -> bytes | None:
        artifact = signing.verify_entry(blob, KEY)
        files = dict(artifact.files)
        if "kernel.so" in files:
            files["kernel.so"] = library  # a valid library that computes something else
        return signing.seal(Artifact(artifact.key, files, artifact.meta), attacker)

    return forge


def test_a_forged_entry_is_refused_and_never_loaded(fleet, traces):
    widths = [8, 12]
    _populate(fleet, widths)
    forge = _evil_library(fleet)
    assert fleet.rewrite(forge) == 2 * len(widths)
    fleet.machine("victim")
    with remote_warnings() as messages, Counted() as counted:
        for width in widths:
            assert not _was_loaded(fleet.jit(width))  # compiled here, and right (_check)
    assert counted["remote.rejected.bad-signature"] == 2 * len(widths)  # records and kernels
    assert counted["remote.hit.kernel"] == counted["remote.hit.index"] == 0
    assert len([m for m in messages if "bad-signature" in m]) == 1  # warned once, then counted
    assert "never loaded" in messages[0]


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        pytest.param(lambda b: b[: len(b) * 2 // 3], "truncated", id="truncated"),
        pytest.param(lambda b: b[:-300] + bytes([b[-300] ^ 0x10]) + b[-299:], "corrupt",
                     id="bit-flip"),
        pytest.param(lambda b: _resealed(b, None), "unsigned", id="unsigned"),
        pytest.param(lambda b: b[:-1] + bytes([b[-1] ^ 1]), "bad-signature", id="signature-flip"),
    ],
)  # fmt: skip
def test_a_damaged_entry_is_refused_by_reason(redis_fleet, traces, damage, reason):
    fleet = redis_fleet  # the checks are the tier's, whatever the store: one store suffices
    _populate(fleet, [8])
    fleet.rewrite(lambda name, blob: damage(blob) if "/kernel/" in name else None)
    fleet.rewrite(lambda name, blob: None)
    fleet.backend().delete(fleet.entries("index")[0])  # the kernel's own lookup is the one tested
    fleet.machine("reader")
    with remote_warnings() as messages, Counted() as counted:
        assert not _was_loaded(fleet.jit(8))
    assert counted[f"remote.rejected.{reason}"] == 1 and counted["remote.hit.kernel"] == 0
    assert len(messages) == 1 and f"({reason}:" in messages[0]
    # The refused entry left nothing behind: the machine's only entry is its own compile.
    assert len([p for p in (fleet.tmp_path / "machines" / "reader" / "v2").iterdir()]) == 1


@pytest.mark.parametrize("field", ["tvm", "shim", "rules", "target"])
def test_a_signed_entry_of_another_build_is_refused(redis_fleet, traces, field):
    fleet = redis_fleet
    _populate(fleet, [8])
    # Validly signed with the fleet's key, under this build's name, made by another build.
    assert fleet.rewrite(lambda name, blob: _resealed(blob, KEY, **{field: "other"})) == 2
    fleet.machine("reader")
    with remote_warnings() as messages, Counted() as counted:
        assert not _was_loaded(fleet.jit(8))
    assert counted[f"remote.rejected.other-{field}"] == 2
    assert len(messages) == 1 and f"{field} is other" in messages[0]


def test_an_index_record_naming_a_kernel_of_another_build_is_refused(redis_fleet, traces):
    fleet = redis_fleet
    _populate(fleet, [8])

    def other_rules_kernel(name: str, blob: bytes) -> bytes | None:
        if "/index/" not in name:
            return None
        artifact = signing.verify_entry(blob, KEY)
        meta = dict(artifact.meta)
        meta["kernel_material"] = meta["kernel_material"].replace("\nrules=", "\nrules=older-")
        meta["kernel"] = ArtifactKey("kernel", meta["kernel_material"]).digest
        return signing.seal(Artifact(artifact.key, artifact.files, meta), KEY)

    assert fleet.rewrite(other_rules_kernel) == 1
    fleet.machine("reader")
    traced = len(traces)
    with remote_warnings() as messages, Counted() as counted:
        kernel = fleet.jit(8)
    assert counted["remote.rejected.other-rules"] == 1
    assert len(messages) == 1 and "names a kernel of another build" in messages[0]
    assert len(traces) == traced + 1  # the record was not trusted: the function was traced,
    assert _was_loaded(kernel) and counted["remote.hit.kernel"] == 1  # its own key then hit


# -- never a stall, never a failure ----------------------------------------------------------------


def test_a_server_killed_mid_run_is_a_miss_and_one_warning(
    engine, tmp_path, monkeypatch, own_redis
):
    fleet = Fleet(engine, tmp_path, monkeypatch, own_redis.url)
    _populate(fleet, [8, 12])
    fleet.machine("second")
    with remote_warnings() as messages, Counted() as counted:
        assert _was_loaded(fleet.jit(8))  # the server is up: a hit
        own_redis.stop()
        started = time.perf_counter()
        for width in (12, 16, 20):
            fleet.jit(width)  # right results (_check), compiled here
        elapsed = time.perf_counter() - started
    assert counted["remote.error"] >= remote.BREAKER_ERRORS and counted["remote.skipped"] >= 1
    assert counted["remote.wait_us"] < 1_000_000 and elapsed < 60
    failed = [m for m in messages if "failed (" in m]
    assert len(failed) == 1 and "ConnectionError" in failed[0]
    assert len([m for m in messages if "errors in a row" in m]) == 1
    assert len(messages) == 2


def test_the_breaker_asks_again_after_its_cooldown(engine, tmp_path, monkeypatch, own_redis):
    monkeypatch.setattr(remote, "BREAKER_COOLDOWN_S", 0.3)
    fleet = Fleet(engine, tmp_path, monkeypatch, own_redis.url)
    fleet.machine("only")
    own_redis.stop()
    tier = remote.tier()
    assert tier is not None
    key = _disk_cache.artifact_key("module", target="llvm", structural_hash=1)
    with remote_warnings(), Counted() as counted:
        for _ in range(remote.BREAKER_ERRORS + 2):
            assert tier.fetch(key) is None
        time.sleep(0.4)
        assert tier.fetch(key) is None  # one try after the cooldown, which fails: open again
        assert tier.fetch(key) is None
    assert counted["remote.error"] == remote.BREAKER_ERRORS + 1
    assert counted["remote.skipped"] == 3


def test_a_replaced_tier_publishes_its_queue_then_its_writer_ends(
    engine, tmp_path, monkeypatch, own_redis
):
    fleet = Fleet(engine, tmp_path, monkeypatch, own_redis.url)
    fleet.machine("first")
    first = remote.tier()
    assert first is not None
    fleet.jit(8)  # queued for the first store
    writer = first._writer
    assert writer is not None and writer.is_alive()
    monkeypatch.setenv(remote.TIMEOUT_ENV, "3")  # another environment: another tier
    second = remote.tier()
    assert second is not None and second is not first
    writer.join(10)
    assert not writer.is_alive()
    assert fleet.entries("kernel")  # what the first tier queued was published
    with Counted() as counted:
        first.publish(lambda: None)  # a retired tier publishes nothing more
    assert counted["remote.dropped"] == 1


@pytest.mark.parametrize("store", ["redis", "s3"])
def test_a_hung_server_costs_the_timeout_once(
    engine, tmp_path, monkeypatch, hung_server, s3_environment, store
):
    url = f"redis://127.0.0.1:{hung_server.port}/0"
    if store == "s3":
        s3_environment(f"http://127.0.0.1:{hung_server.port}")
        url = "s3://bucket/prefix"
    fleet = Fleet(engine, tmp_path, monkeypatch, url)
    fleet.machine("runner", **{remote.TIMEOUT_ENV: "0.5"})
    remote.tier()  # made now: importing the client is not the server's time
    with remote_warnings() as messages, Counted() as counted:
        for width in (8, 12, 16):
            fleet.jit(width)  # right results (_check), compiled here
        started = time.perf_counter()
        remote.flush(5)  # nothing to wait for: with the tier off, nothing more is queued
        assert time.perf_counter() - started < 0.2
    assert counted["remote.timeout"] == 1
    # The timeout, once (the slack is for a loaded machine: the waiting thread must be scheduled).
    assert 500_000 <= counted["remote.wait_us"] < 500_000 + 1_000_000
    assert counted["remote.skipped"] == 3 * 2 - 1  # every later lookup: not asked
    assert counted["remote.dropped"] == 3 * 2  # and nothing is queued for publishing
    assert len(messages) == 1 and "no answer within 0.5 s" in messages[0]
    assert len(hung_server.accepted) >= 1  # it really was asked, and really hung


_EXITS_PROMPTLY = """
import sys, time, warnings
sys.path.insert(0, {tests!r})
from _builders import build
from tvm import relax
from compile_engine_compat import CompileEngineDeprecationWarning, compile_engine
warnings.simplefilter("ignore", CompileEngineDeprecationWarning)
engine = compile_engine.get()
for width in (8, 12):
    engine.jit(build("main", [("x", (4, width), "float32")], lambda bb, x: relax.op.abs(x)), "llvm")
print(time.time(), flush=True)  # then exit: the queued entries must not hold the process
"""


def test_a_process_with_a_hung_server_exits_at_once(tmp_path, hung_server):
    local = tmp_path / "local"
    local.mkdir(mode=0o700)
    env = {
        **_child_env(),
        _disk_cache.CACHE_DIR_ENV: str(local),
        remote.REMOTE_ENV: f"redis://127.0.0.1:{hung_server.port}/0",
        remote.TIMEOUT_ENV: "0.5",
        remote.FLUSH_ENV: "60",  # were the exit to wait for the queue, it would wait a minute
        signing.KEY_ENV: TEST_KEY,
    }
    script = _EXITS_PROMPTLY.format(tests=str(Path(__file__).resolve().parents[1]))
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    exited = time.time()
    assert done.returncode == 0, done.stderr
    # The interpreter's own exit (TVM's teardown: ~1 s, more on a loaded machine), no wait.
    assert exited - float(done.stdout.split()[-1]) < 20
    assert done.stderr.count("no answer within 0.5 s") == 1


def test_a_full_store_refuses_writes_and_still_serves_reads(
    engine, tmp_path, monkeypatch, own_redis
):
    fleet = Fleet(engine, tmp_path, monkeypatch, own_redis.url)
    widths = [8, 12, 16, 20]
    _populate(fleet, widths[:2])
    # Full from now on: Redis refuses writes past maxmemory under the noeviction policy (below
    # what it uses already: a new client's buffers or a freed one never make room for a write).
    used = int(own_redis.client.info("memory")["used_memory"])
    own_redis.client.config_set("maxmemory-policy", "noeviction")
    own_redis.client.config_set("maxmemory", used // 2)
    fleet.machine("writer-2")
    with remote_warnings() as messages, Counted() as written:
        for width in widths[2:]:
            fleet.jit(width)  # never fails: right results (_check)
    assert written["remote.store_full"] == 1 and written["remote.published"] == 0
    assert written["remote.dropped"] >= 1  # after the store said it was full: not even tried
    assert len(messages) == 1 and "the store is full" in messages[0]
    fleet.machine("reader")
    with remote_warnings() as messages, Counted() as read:
        loaded = [_was_loaded(fleet.jit(width)) for width in widths]
    assert loaded == [True, True, False, False]  # what was written is still served
    assert len(messages) == 1 and "the store is full" in messages[0]  # its own publishing
    assert read["remote.hit.kernel"] == 2


# -- concurrent writers: four processes write the same keys at once -----------------------------

_WRITER = """
import json, os, sys, time, warnings
sys.path.insert(0, {tests!r})
from _builders import build
from tvm import relax
from compile_engine_compat import compile_engine
from compile_engine_compat.cache import remote, stats
warnings.simplefilter("ignore")
engine = compile_engine.get()
funcs = [build("main", [("x", (4, w), "float32")],
               lambda bb, x: relax.op.nn.relu(bb.emit(relax.op.add(x, x)))) for w in (8, 12, 16)]
# All four start together: each says it is ready, then waits for the others.
open(os.path.join({barrier!r}, str(os.getpid())), "w").close()
while len(os.listdir({barrier!r})) < 4:
    time.sleep(0.01)
for func in funcs:
    engine.jit(func, "llvm")
engine.jit_many([build("main", [("x", (4, w), "float32")],
                       lambda bb, x: relax.op.nn.relu(bb.emit(relax.op.add(x, x))))
                 for w in (20, 24)], "llvm")
assert remote.flush(60)
print(json.dumps(stats.snapshot()))
"""


def _child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPILE_ENGINE_COMPAT_")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    return env


@pytest.mark.fleet  # four processes each import TVM (~35 s): CI runs it with -m fleet
@pytest.mark.parametrize("store", ["file", "redis"])
def test_four_processes_writing_the_same_keys_at_once(
    engine, tmp_path, monkeypatch, traces, store, request
):
    if store == "redis":
        server = request.getfixturevalue("redis_server")
        server.client.flushall()
        url = server.url
    else:
        (tmp_path / "shared").mkdir()
        url = (tmp_path / "shared").as_uri()
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    script = _WRITER.format(tests=str(Path(__file__).resolve().parents[1]), barrier=str(barrier))
    procs = []
    for index in range(4):
        local = tmp_path / f"process-{index}"
        local.mkdir(mode=0o700)
        env = {
            **_child_env(),
            _disk_cache.CACHE_DIR_ENV: str(local),
            remote.REMOTE_ENV: url,
            signing.KEY_ENV: TEST_KEY,
        }
        command = [sys.executable, "-c", script]
        procs.append(
            subprocess.Popen(
                command, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        )
    published = 0
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        counts = json.loads(out.splitlines()[-1])
        assert not any(k.startswith(("remote.rejected", "remote.error")) for k in counts), counts
        published += counts.get("remote.published", 0)
    fleet = Fleet(engine, tmp_path, monkeypatch, url)
    names = fleet.entries()
    assert len(names) == 2 * 5  # one kernel and one record per function, whoever wrote them
    assert published >= len(names)  # (a file system's rename lets a later equal entry replace)
    if store == "file":
        assert not list((tmp_path / "shared").rglob(".tmp-*"))  # no writer's leftovers
    fleet.machine("fifth")
    assert cli.main(["cache", "verify"]) == 0
    traced = len(traces)
    kernels = [fleet.jit(width) for width in (8, 12, 16)]
    assert all(_was_loaded(k) for k in kernels) and len(traces) == traced


# -- configuration: off, and saying why; read-only runners; the size cap -------------------------


@pytest.mark.parametrize(
    ("setup", "why"),
    [
        pytest.param(lambda env: env.delenv(signing.KEY_ENV), "no signing key", id="no-key"),
        pytest.param(lambda env: env.setenv(signing.KEY_ENV, "short"), "fewer than 32",
                     id="short-key"),
        pytest.param(lambda env: env.setenv(remote.MODE_ENV, "sometimes"),
                     "is not read-write, read-only or verify-only", id="bad-mode"),
        pytest.param(lambda env: env.setenv(remote.TIMEOUT_ENV, "soon"), "not a finite number",
                     id="bad-timeout"),
        pytest.param(lambda env: env.setenv(remote.REMOTE_ENV, "nowhere"), "names no store",
                     id="bad-url"),
    ],
)  # fmt: skip
def test_a_tier_that_cannot_be_on_says_why_once(engine, tmp_path, monkeypatch, setup, why):
    shared = tmp_path / "shared"
    shared.mkdir()
    fleet = Fleet(engine, tmp_path, monkeypatch, shared.as_uri())
    fleet.machine("runner")
    setup(monkeypatch)
    with remote_warnings() as messages, Counted() as counted:
        for width in (8, 12):
            fleet.jit(width)
        assert _was_loaded(fleet.jit(8))  # the local tier works on alone
    assert len(messages) == 1 and messages[0].startswith("remote compile cache off: ")
    assert why in messages[0]
    assert not any(k.startswith("remote.") for k in counted.delta)
    assert list(shared.iterdir()) == []  # nothing written: no unsigned entries, ever
    assert why in remote.off_reason()


def test_the_remote_needs_the_local_directory(monkeypatch, tmp_path):
    monkeypatch.delenv(_disk_cache.CACHE_DIR_ENV, raising=False)
    monkeypatch.setenv(remote.REMOTE_ENV, tmp_path.as_uri())
    monkeypatch.setenv(signing.KEY_ENV, TEST_KEY)
    with pytest.warns(RemoteCacheWarning, match="needs a local cache directory too"):
        assert remote.tier() is None


@pytest.mark.parametrize(("module", "extra"), [("redis", "remote-redis"), ("s3fs", "remote-s3")])
def test_a_missing_package_names_its_extra(monkeypatch, tmp_path, module, extra):
    monkeypatch.setitem(sys.modules, module, None)  # as if not installed: import raises
    url = "redis://127.0.0.1:1/0" if module == "redis" else "s3://bucket/prefix"
    with pytest.raises(ImportError, match=rf"pip install 'compile-engine-compat\[{extra}\]'"):
        backends.open_backend(url, 1)
    monkeypatch.setenv(_disk_cache.CACHE_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(remote.REMOTE_ENV, url)
    monkeypatch.setenv(signing.KEY_ENV, TEST_KEY)
    with pytest.warns(RemoteCacheWarning, match=rf"off: .*\[{extra}\]"):
        assert remote.tier() is None  # the jit path: the local tier works on alone


def test_a_read_only_runner_reads_and_never_writes(redis_fleet, traces):
    fleet = redis_fleet
    _populate(fleet, [8])
    before = sorted(fleet.entries())
    fleet.machine("fork-pull-request", **{remote.MODE_ENV: "verify-only"})
    with Counted() as counted:
        assert _was_loaded(fleet.jit(8))  # verified and loaded
        assert not _was_loaded(fleet.jit(12))  # compiled here, published nowhere
    assert counted["remote.hit.kernel"] == 1 and counted["remote.published"] == 0
    assert sorted(fleet.entries()) == before
    assert "read-only" in remote.off_reason()


def test_the_size_cap_holds_both_ways(redis_fleet):
    fleet = redis_fleet
    fleet.machine("small-cap", **{remote.ENTRY_MB_ENV: "0.001"})  # about 1 KB
    with remote_warnings() as messages, Counted() as counted:
        fleet.jit(8)
    assert counted["remote.published"] == 0  # the kernel and its index record: both over
    assert counted["remote.dropped"] == 2 and len(messages) == 1 and "over the cap" in messages[0]
    _populate(fleet, [12])
    fleet.machine("reader", **{remote.ENTRY_MB_ENV: "0.001"})
    with remote_warnings(), Counted() as counted:
        assert not _was_loaded(fleet.jit(12))
    assert counted["remote.rejected.too-large"] == 2  # read no further than the cap, refused


# -- tooling: cache info, push, pull, verify ------------------------------------------------------


def test_cache_info_shows_both_tiers_with_counts(redis_fleet, capsys):
    fleet = redis_fleet
    _populate(fleet, [8, 12])
    fleet.machine("reader")
    fleet.jit(8)
    stats.persist_all()  # what the process's exit does
    assert cli.main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert "local: 0 hits, 2 misses" in out  # the index record and the kernel: both missed here
    assert "remote: 2 hits, 0 misses, 0 rejected" in out
    assert f"remote cache: {fleet.url} (on)" in out and "maxmemory-policy" in out
    assert "entries: 1 (kernel 1)" in out


@pytest.mark.parametrize("remote_url", ["redis", "file"], indirect=True)  # s3: listings are slow
def test_push_pull_and_verify(fleet, traces, capsys):
    fleet.machine("warm", **{remote.REMOTE_ENV: (fleet.tmp_path / "unused").as_uri()})
    for width in (8, 12):
        fleet.jit(width)
    fleet.machine("warm")  # the same local directory, now with the fleet's store
    assert cli.main(["cache", "push"]) == 0
    assert "pushed 4 entries" in capsys.readouterr().out
    assert cli.main(["cache", "push"]) == 0
    assert "0 entries" in capsys.readouterr().out and len(fleet.entries()) == 4

    fleet.machine("fresh-runner")
    assert cli.main(["cache", "pull"]) == 0
    assert "pulled 4 entries" in capsys.readouterr().out
    fleet.env.delenv(remote.REMOTE_ENV)  # pulled: no remote needed any more
    traced = len(traces)
    assert all(_was_loaded(fleet.jit(width)) for width in (8, 12)) and len(traces) == traced

    fleet.machine("checker")
    assert cli.main(["cache", "verify"]) == 0
    assert "4 entries verified, 0 refused" in capsys.readouterr().out
    fleet.rewrite(lambda name, blob: blob[:-5] if "/kernel/" in name else None)
    assert cli.main(["cache", "verify"]) == 1
    out = capsys.readouterr().out
    assert "2 refused (truncated 2)" in out and "truncated" in out
    assert cli.main(["cache", "verify", "--delete"]) == 1
    assert len(fleet.entries()) == 2 and cli.main(["cache", "verify"]) == 0


def test_push_refuses_on_a_read_only_runner(redis_fleet, capsys):
    redis_fleet.machine("ro", **{remote.MODE_ENV: "read-only"})
    assert cli.main(["cache", "push"]) == 1
    assert "read-only" in capsys.readouterr().err


def test_a_forked_child_starts_with_its_own_tier_and_counters(redis_fleet):
    fleet = redis_fleet
    fleet.machine("parent")
    fleet.jit(8)
    parent_tier = remote.tier()
    assert parent_tier is not None and stats.snapshot()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: no writer thread, no counts of the parent's, a tier of its own
        try:
            child_tier = remote.tier()
            ok = not stats.snapshot() and child_tier is not None and child_tier is not parent_tier
            os.write(write, b"ok" if ok else b"no")
        finally:
            os._exit(0)
    os.close(write)
    assert os.read(read, 2) == b"ok"
    os.waitpid(pid, 0)
