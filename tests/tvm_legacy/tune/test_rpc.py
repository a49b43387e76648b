"""AutoTVM's ``RPCRunner`` against TVM's own tracker and two servers on 127.0.0.1 (``-m tune``).

The tracker (``python -m tvm.exec.rpc_tracker``) and the servers (``python -m
tvm.exec.rpc_server --tracker``) are TVM's, started as a device farm starts them; a task is
tuned with its candidates timed on the servers, and the records are applied.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import numpy as np
import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay.testing import resnet
from compile_engine_compat.tvm_legacy import autotvm
from compile_engine_compat.tvm_legacy.autotvm.tuner import RandomTuner
from compile_engine_compat.tvm_legacy.graph_executor import GraphModule

pytestmark = [pytest.mark.tune, pytest.mark.filterwarnings("ignore")]

KEY = "compile-engine-compat-test"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def tracker(tmp_path):
    """A tracker and two servers registered under :data:`KEY` (their logs in ``server*.log``);
    the tracker's port."""
    port = _free_port()
    python = [sys.executable, "-m"]
    processes = [
        subprocess.Popen(
            [
                *python,
                "tvm.exec.rpc_tracker",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--port-end",
                str(port + 1),
            ]
        )
    ]
    try:
        for index in range(2):
            server_port = _free_port()
            log = open(tmp_path / f"server{index}.log", "w")
            processes.append(
                subprocess.Popen(
                    [
                        *python,
                        "tvm.exec.rpc_server",
                        "--tracker",
                        f"127.0.0.1:{port}",
                        "--key",
                        KEY,
                        "--host",
                        "127.0.0.1",
                        "--port",
                        str(server_port),
                        "--port-end",
                        str(server_port + 1),
                    ],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            )
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            query = [*python, "tvm.exec.query_rpc_tracker", "--host", "127.0.0.1",
                     "--port", str(port)]  # fmt: skip
            status = subprocess.run(query, capture_output=True, text=True).stdout
            line = next((ln for ln in status.splitlines() if ln.startswith(KEY)), "")
            if line.split()[1:2] == ["2"]:
                break
            time.sleep(2)
        else:
            pytest.fail(f"the two servers did not register with the tracker: {status}")
        yield port
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=30)


def test_autotvm_rpc_runner_tunes_on_the_tracker_servers(tracker, tmp_path):
    mod, params = resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 32, 32))
    tasks = autotvm.task.extract_from_program(mod["main"], target="llvm", params=params)
    log = tmp_path / "rpc.log"
    runner = autotvm.RPCRunner(KEY, "127.0.0.1", tracker, number=2, repeat=1, timeout=60)
    RandomTuner(tasks[0]).tune(
        n_trial=2,
        measure_option=autotvm.measure_option(builder=autotvm.LocalBuilder(), runner=runner),
        callbacks=[autotvm.callback.log_to_file(str(log))],
    )
    served = [(tmp_path / f"server{i}.log").read_text() for i in range(2)]
    assert any("load_module" in text for text in served), served  # a server ran candidates
    assert log.read_text().count("\n") == 1
    data = np.random.default_rng(0).random((1, 3, 32, 32), dtype="float32")

    def run():
        lib = relay.build(mod, target="llvm", params=params)
        module = GraphModule(lib["default"](tvm.cpu()))
        module.set_input("data", data)
        module.run()
        return module.get_output(0).numpy()

    untuned = run()
    with autotvm.apply_history_best(str(log)):
        np.testing.assert_allclose(run(), untuned, rtol=1e-4, atol=1e-5)
