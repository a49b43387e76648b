"""The bad-input table (:mod:`tests.hostile.cases`), run in a child process: never a signal.

One child runs every case in turn and prints one JSON line per case as it goes; a case that kills
the child (a segfault, an abort) shows up as the last case started without an outcome. Running
them all in one child keeps the cost at one ``import tvm`` (~3 s) for the whole table.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from .cases import CASES, Case

_RUNNER = """
import builtins, json, sys, traceback, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, {tests!r})
from hostile.cases import CASES, PRELUDE
scope = {{}}
exec(PRELUDE, scope)
for case in CASES:
    print(json.dumps({{"start": case.name}}), flush=True)
    try:
        exec(case.code, dict(scope))
    except BaseException as err:
        mro = [cls.__name__ for cls in type(err).__mro__]
        record = {{"case": case.name, "raised": mro, "message": str(err)[:2000]}}
        print(json.dumps(record), flush=True)
    else:
        print(json.dumps({{"case": case.name, "raised": None}}), flush=True)
"""


@pytest.fixture(scope="module")
def outcomes() -> dict[str, Any]:
    tests = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "COMPILE_ENGINE_COMPAT_WARN": "off"}
    env.pop("COMPILE_ENGINE_COMPAT_CACHE_DIR", None)
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_RUNNER.format(tests=tests))],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    results: dict[str, Any] = {}
    started = None
    for line in proc.stdout.splitlines():
        record = json.loads(line)
        if "start" in record:
            started = record["start"]
        else:
            results[record["case"]] = record
            started = None
    results["<exit>"] = {"returncode": proc.returncode, "died_in": started, "stderr": proc.stderr}
    return results


def test_the_child_ends_normally(outcomes):
    end = outcomes["<exit>"]
    assert end["returncode"] == 0 and end["died_in"] is None, (
        f"the child died (exit {end['returncode']}) in case {end['died_in']!r}:\n"
        + end["stderr"][-3000:]
    )


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_case_ends_in_a_clear_error(outcomes, case: Case):
    assert case.name in outcomes, f"{case.name} never finished: see test_the_child_ends_normally"
    got = outcomes[case.name]
    if not case.raises:
        assert got["raised"] is None, f"{case.name} raised {got['raised'][0]}: {got['message']}"
        return
    assert got["raised"] is not None, f"{case.name} returned instead of raising {case.raises}"
    assert set(case.raises) & set(got["raised"]), (
        f"{case.name} raised {got['raised'][0]}, expected one of {case.raises}: {got['message']}"
    )
    assert re.search(case.match, got["message"], re.IGNORECASE | re.DOTALL), (
        f"{case.name}: the message does not name the problem ({case.match!r}): {got['message']}"
    )
    assert "Segmentation" not in got["message"]
