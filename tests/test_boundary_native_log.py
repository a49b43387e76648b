"""``boundary.tvm_warnings_dropped``: TVM's C++ warning lines written to file descriptor 2 during
the package's own steps are dropped; every other line is passed on, and all of them on an error.

Each case runs in a child process whose stderr is the pipe read here: the lines are written at
the file-descriptor level, as TVM's runtime writes its log.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from compile_engine_compat import boundary

TVM_LINE = "[12:00:00] /project/src/runtime/vm/executable.cc:276: Warning: Scope Saving: global"

CHILD = textwrap.dedent(
    f"""
    import os, sys
    from compile_engine_compat.boundary import tvm_warnings_dropped

    os.write(2, b"before\\n")
    try:
        with tvm_warnings_dropped():
            os.write(2, b"{TVM_LINE}\\n")
            os.write(2, b"a native line of the user's\\n")
            print("a Python line", file=sys.stderr)
            if sys.argv[1] == "raise":
                raise RuntimeError("the step failed")
    except RuntimeError:
        pass
    os.write(2, b"after\\n")
    """
)


def _stderr(mode: str, **env: str) -> list[str]:
    child = subprocess.run(
        [sys.executable, "-c", CHILD, mode],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
    )
    assert child.returncode == 0, child.stderr
    return child.stderr.splitlines()


def test_tvm_warning_lines_are_dropped_and_the_rest_passed_on_in_order():
    assert _stderr("ok") == ["before", "a native line of the user's", "a Python line", "after"]


def test_a_failed_step_keeps_every_line():
    lines = _stderr("raise")
    assert lines == ["before", TVM_LINE, "a native line of the user's", "a Python line", "after"]


def test_the_off_switch_lets_tvms_lines_through():
    lines = _stderr("ok", **{boundary.NATIVE_LOG_ENV: "show"})
    assert TVM_LINE in lines


def test_the_pattern_is_tvms_log_format_only():
    assert boundary.TVM_WARNING_LINE.match(TVM_LINE.encode())
    assert not boundary.TVM_WARNING_LINE.match(b"[12:00:00] x.cc:1: Error: something broke")
    assert not boundary.TVM_WARNING_LINE.match(b"Warning: a user's own line")
