"""fix on notebooks, and the two --unsafe bugs found on apache/tvm v0.7.0/v0.8.0 (issue 15)."""

from __future__ import annotations

import json
from pathlib import Path

from compile_engine_compat import cli
from compile_engine_compat.migrate.fix import fix_code
from compile_engine_compat.migrate.scan import scan_paths

# apache/tvm v0.7.0 tests/python/relay/dyn/test_dynamic_op_level3.py, lines 19-40 (trimmed):
# the engine is reached through ``relay`` and its only use is a call --unsafe removes.
DYNAMIC_OP_LEVEL3 = """\
import numpy as np
import tvm
from tvm import te
from tvm import relay
from tvm.relay import create_executor, transform
from tvm.relay.testing import check_grad, run_infer_type
import tvm.testing


def verify_func(func, data, ref_res):
    assert isinstance(data, list)
    for target, ctx in tvm.testing.enabled_targets():
        for kind in ["vm", "debug"]:
            mod = tvm.ir.IRModule.from_expr(func)
            intrp = relay.create_executor(kind, mod=mod, ctx=ctx, target=target)
            op_res = intrp.evaluate()(*data)
            tvm.testing.assert_allclose(op_res.asnumpy(), ref_res, rtol=1e-5)
            relay.backend.compile_engine.get().clear()
"""

# apache/tvm v0.7.0 tests/python/relay/test_json_runtime.py, lines 26-52 (trimmed).
JSON_RUNTIME = """\
from tvm import relay, runtime
from tvm.relay.backend import compile_engine


def check_result(mod, ref_mod, map_inputs, out_shape, tol=1e-5, target="llvm", params=None):
    if sys.platform == "win32":
        print("Skip test on Windows for now")
        return

    # Run the reference result
    compile_engine.get().clear()
    with tvm.transform.PassContext(opt_level=3):
        json, lib, param = relay.build(ref_mod, target=target, params=params)

    def check_vm_result():
        compile_engine.get().clear()
        with relay.build_config(opt_level=3):
            exe = relay.vm.compile(mod, target=target, params=params)
"""


def test_unsafe_adds_no_unused_shim_import():
    new, changes, _ = fix_code(DYNAMIC_OP_LEVEL3, unsafe=True)
    assert "compile_engine_compat" not in new  # was: import compile_engine_compat.compile_engine
    assert "relay.backend.compile_engine.get().clear()" not in new
    assert "from tvm import relay\n" in new  # still used
    assert sorted(c.kind for c in changes) == ["safe", "unsafe"]
    assert fix_code(new, unsafe=True)[0] == new  # idempotent


def test_unsafe_keeps_the_comment_above_a_removed_call():
    new, _, _ = fix_code(JSON_RUNTIME, unsafe=True)
    assert "    # Run the reference result\n    with tvm.transform.PassContext" in new
    assert "compile_engine" not in new
    assert "        with relay.build_config(opt_level=3):" in new
    assert fix_code(new, unsafe=True)[0] == new


def test_a_removed_call_with_a_comment_at_the_end_of_a_block():
    code = (
        "from tvm.relay.backend import compile_engine\n"
        "def f():\n"
        "    x = 1\n"
        "    # clear the cache\n"
        "    compile_engine.get().clear()\n"
        "def g():\n"
        "    # only this\n"
        "    compile_engine.get().clear()\n"
    )
    new, _, _ = fix_code(code, unsafe=True)
    assert new == (
        "def f():\n    x = 1\n    # clear the cache\ndef g():\n    # only this\n    pass\n"
    )
    compile(new, "<fixed>", "exec")


def _notebook(cells: list[dict]) -> dict:
    return {
        "cells": cells,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def _code(source: list[str], outputs: list | None = None) -> dict:
    return {
        "cell_type": "code",
        "execution_count": 3,
        "id": "abc",
        "metadata": {"tags": ["keep"]},
        "outputs": outputs or [],
        "source": source,
    }


def test_fix_rewrites_notebook_cells_and_keeps_outputs_byte_for_byte(tmp_path: Path):
    output = {"name": "stdout", "output_type": "stream", "text": ["héllo ✓\n"]}
    cells = [
        {"cell_type": "markdown", "id": "m", "metadata": {}, "source": ["# compile_engine\n"]},
        _code(["%matplotlib inline\n", "from tvm import relay\n"], [output]),
        _code(["!nvidia-smi\n", "engine = relay.backend.compile_engine.get()\n", "engine.jit"]),
        _code(["%%bash\n", "echo relay.backend.compile_engine\n"]),
    ]
    path = tmp_path / "nb.ipynb"
    # nbformat's own layout: indent=1, sorted keys, UTF-8 kept, final newline.
    text = json.dumps(_notebook(cells), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    path.write_text(text, encoding="utf-8")
    assert cli.main(["fix", str(path)]) == 0
    fixed = json.loads(path.read_text(encoding="utf-8"))
    assert fixed["cells"][1]["source"] == [
        "import compile_engine_compat.compile_engine\n",
        "\n",
        "%matplotlib inline\n",
    ]
    assert fixed["cells"][2]["source"] == [
        "!nvidia-smi\n",
        "engine = compile_engine_compat.compile_engine.get()\n",
        "engine.jit",
    ]
    assert fixed["cells"][3] == cells[3]  # a cell magic is not Python: untouched
    # Everything but the two sources is byte-for-byte the same.
    for index in (1, 2):
        fixed["cells"][index]["source"] = cells[index]["source"]
    assert json.dumps(fixed, indent=1, sort_keys=True, ensure_ascii=False) + "\n" == text
    assert scan_paths([str(path)])[0] == []
    assert cli.main(["fix", "--diff", str(path)]) == 0  # idempotent


def test_a_notebook_whose_layout_would_change_is_reported_not_rewritten(tmp_path: Path, capsys):
    path = tmp_path / "odd.ipynb"
    text = json.dumps(_notebook([_code(["from tvm.relay.backend import compile_engine\n"])]))
    path.write_text(text.replace(": ", ":   "))  # no json.dumps setting writes this
    assert cli.main(["fix", str(path)]) == 0
    assert "its JSON layout is not one json.dumps writes" in capsys.readouterr().out
    assert path.read_text() == text.replace(": ", ":   ")
