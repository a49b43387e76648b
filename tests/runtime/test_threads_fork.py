"""A forked child never hangs on TVM's thread pool or the shim's locks (issue 18 items 2 and 3).

Each case runs tests/_fork_probe.py in its own process with a timeout: a hang fails the test
instead of the run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = Path(__file__).resolve().parents[1] / "_fork_probe.py"
ROOT = PROBE.parent.parent


@pytest.mark.long
@pytest.mark.parametrize("mode", ["fork", "fork-pool", "forkserver-pool", "locks", "during-jit"])
def test_a_forked_child_computes_after_parallel_kernels(mode):
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    env.pop("TVM_NUM_THREADS", None)  # the shim's default: every physical core, a real pool
    try:
        result = subprocess.run(
            [sys.executable, str(PROBE), mode],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    except subprocess.TimeoutExpired as err:
        pytest.fail(f"{mode}: the probe hung\n{err.stderr!r}")
    assert result.returncode == 0, f"{mode}:\n{result.stdout}\n{result.stderr}"
