"""The libcst fixer: exact import swaps, idempotence, guards, --unsafe, report, and one legacy
project taken through scan -> fix -> run on modern TVM -> scan."""

from __future__ import annotations

import importlib
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from compile_engine_compat import cli
from compile_engine_compat.migrate.fix import fix_code
from compile_engine_compat.migrate.scan import scan_paths

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.mark.parametrize(
    "before, after",
    [
        (
            "from tvm.relay.backend import compile_engine\n",
            "from compile_engine_compat import compile_engine\n",
        ),
        (
            "import tvm.relay.backend.compile_engine as ce\n",
            "from compile_engine_compat import compile_engine as ce\n",
        ),
        (
            "import tvm.relay.backend.compile_engine as compile_engine\n",
            "from compile_engine_compat import compile_engine\n",
        ),
        (
            "from tvm.relay.backend import te_compiler as tec, compile_engine  # both\n",
            "from compile_engine_compat import te_compiler as tec, compile_engine  # both\n",
        ),
        (
            "from tvm.relay.backend.te_compiler import get, lower_call  # keep me\n",
            "from compile_engine_compat.te_compiler import get, lower_call  # keep me\n",
        ),
        (
            "from tvm.relay.backend.compile_engine import *\n",
            "from compile_engine_compat.compile_engine import *\n",
        ),
        (
            "import tvm.relay.backend.te_compiler as tec\n",
            "from compile_engine_compat import te_compiler as tec\n",
        ),
    ],
)
def test_import_swap_is_one_line(before, after):
    new, changes, manual = fix_code(before)
    assert new == after
    assert [(c.line, c.col, c.kind) for c in changes] == [(1, 1, "safe")]
    assert manual == []


def test_mixed_import_keeps_other_names():
    code = "from tvm.relay.backend import compile_engine, graph_executor_codegen\n"
    new, _, _ = fix_code(code)
    assert new == (
        "from tvm.relay.backend import graph_executor_codegen\n"
        "from compile_engine_compat import compile_engine\n"
    )


def test_bare_import_chains_are_repointed_and_tvm_kept():
    code = (
        "import tvm.relay.backend.compile_engine\n"
        "\n"
        "engine = tvm.relay.backend.compile_engine.get()  # the engine\n"
        "target = tvm.target.Target('llvm')\n"
    )
    new, changes, _ = fix_code(code)
    assert "engine = compile_engine_compat.compile_engine.get()  # the engine\n" in new
    assert "import compile_engine_compat.compile_engine\n" in new
    assert "import tvm\n" in new  # tvm.target still needs the name the old import bound
    assert "relay" not in new
    assert len(changes) == 2


def test_relay_chain_drops_the_unused_relay_import():
    code = "from tvm import relay\n\nkernel = relay.backend.compile_engine.get().jit\n"
    new, _, _ = fix_code(code)
    assert new == (
        "import compile_engine_compat.compile_engine\n"
        "\n"
        "kernel = compile_engine_compat.compile_engine.get().jit\n"
    )


def test_relay_import_still_used_elsewhere_is_kept():
    code = "from tvm import relay\n\nx = relay.backend.compile_engine.get()\ny = relay.var\n"
    new, _, _ = fix_code(code)
    assert "from tvm import relay\n" in new and "compile_engine_compat.compile_engine.get()" in new


@pytest.mark.parametrize("path", sorted((FIXTURES / "scan").glob("*.py")), ids=lambda p: p.name)
def test_fix_then_scan_leaves_only_manual_and_is_idempotent(tmp_path, path):
    target = tmp_path / path.name
    shutil.copy(path, target)
    before = target.read_text()
    assert cli.main(["fix", str(target)]) == 0
    after = target.read_text()
    findings, errors = scan_paths([str(target)])
    assert errors == []
    assert {f.fix for f in findings} <= {"manual"}
    # Comments survive, and a second run changes nothing.
    assert after.count("# expect:") == before.count("# expect:")
    assert fix_code(after) == (after, [], fix_code(after)[2])


def test_guarded_code_is_left_alone():
    code = (FIXTURES / "scan" / "guarded.py").read_text()
    assert fix_code(code) == (code, [], [])


def test_unsafe_rewrites_through_legacy_and_shim():
    code = (
        "from tvm.relay.backend import compile_engine\n"
        "from compile_engine_compat.compile_engine import get_shape\n"
        "\n"
        "\n"
        "def f(shape):\n"
        "    compile_engine.get().clear()\n"
        "\n"
        "\n"
        "def g(shape):\n"
        "    return get_shape(shape), compile_engine.get_shape(shape)\n"
    )
    safe, _, _ = fix_code(code)
    assert "get_shape(shape)" in safe and "clear()" in safe
    new, changes, _ = fix_code(code, unsafe=True)
    assert new == (
        "\n\ndef f(shape):\n    pass\n\n\ndef g(shape):\n    return list(shape), list(shape)\n"
    )
    assert sorted(c.kind for c in changes) == ["safe", "unsafe", "unsafe", "unsafe"]
    assert fix_code(new, unsafe=True)[0] == new


def test_unsafe_leaves_calls_it_cannot_match():
    code = "from compile_engine_compat import compile_engine\nx = compile_engine.get_shape(*s)\n"
    assert fix_code(code, unsafe=True)[0] == code


def test_cli_diff_writes_nothing_and_report_lists_changes(tmp_path, capsys):
    target = tmp_path / "app.py"
    source = (FIXTURES / "scan" / "global_funcs.py").read_text()
    source = "from tvm.relay.backend import compile_engine\n" + source
    target.write_text(source)
    assert cli.main(["fix", "--diff", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert target.read_text() == source
    assert "-from tvm.relay.backend import compile_engine" in captured.out
    assert "+from compile_engine_compat import compile_engine" in captured.out
    report = captured.err.splitlines()
    assert report[1] == "Changed 1 of 1 file: 1 change."
    assert report[2] == "Detected 3 legacy uses needing a manual port."
    assert "app.py:1:1: INFO: Replaced 'from tvm.relay.backend import compile_engine'" in report[5]
    warning = "app.py:7:34: WARNING: relay.backend._CompileEngineGlobal"
    assert any(line.startswith(warning) for line in report)
    notebook = FIXTURES / "scan" / "notebook.ipynb"
    before = notebook.read_bytes()
    assert cli.main(["fix", str(notebook), "--diff"]) == 1  # notebooks are fixed too now
    assert '+    "from compile_engine_compat import compile_engine' in capsys.readouterr().out
    assert notebook.read_bytes() == before


def test_legacy_project_scan_fix_run_scan(tmp_path):
    """Several files, mixed forms: scan, fix, run the fixed code on modern TVM, scan again."""
    project = tmp_path / "legacy_project"
    shutil.copytree(FIXTURES / "legacy_project", project)
    findings, _ = scan_paths([str(project)])
    assert {f.path for f in findings} == {
        "legacy_app/runner.py",
        "legacy_app/lowering.py",
        "legacy_app/te_path.py",
        "legacy_app/registry.py",
    }
    manual_before = sorted((f.path, f.api) for f in findings if f.fix == "manual")
    assert len(manual_before) == 2 and len(findings) > 8

    assert cli.main(["fix", str(project)]) == 0

    findings, _ = scan_paths([str(project)])
    assert sorted((f.path, f.api) for f in findings) == manual_before
    sys.path.insert(0, str(project))
    try:
        runner = importlib.import_module("legacy_app.runner")
        lowering = importlib.import_module("legacy_app.lowering")
        te_path = importlib.import_module("legacy_app.te_path")
        registry = importlib.import_module("legacy_app.registry")
        rng = np.random.default_rng(0)
        x = rng.standard_normal(7).astype("float32")
        np.testing.assert_allclose(runner.run_add3(x), 3 * x, rtol=1e-6)
        a = rng.standard_normal((4, 8)).astype("float32")
        w = rng.standard_normal((8, 5)).astype("float32")
        np.testing.assert_allclose(te_path.dense_relu(a, w), np.maximum(a @ w, 0), rtol=1e-5)
        # The name map is per process and survives clear(): a repeat gets a _N suffix.
        assert re.search(r"fused_add_add(_\d+)?$", lowering.lowered_name(7))
        assert lowering.cache_size() >= 1
        assert registry.engine_via_global() is lowering.ce.get()
        with registry.uncached_context():
            pass
    finally:
        sys.path.remove(str(project))
        for name in [m for m in sys.modules if m == "legacy_app" or m.startswith("legacy_app.")]:
            del sys.modules[name]
