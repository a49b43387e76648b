"""scan and fix tell the truth about Relay-era code (issue 13, item 7).

Each snippet is *run* under ``install()`` and *scanned*: a snippet that fails under the shim must
have a ``manual`` finding naming why, and one that runs must have none (only ``served`` findings,
each stating its difference). So the classification is checked against the real front end, not
against a second copy of its rules.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import compile_engine_compat
from compile_engine_compat import cli
from compile_engine_compat.api_table import API_TABLE
from compile_engine_compat.migrate import relay_surface as _relay_surface
from compile_engine_compat.migrate import stubs as _stubs
from compile_engine_compat.migrate.fix import fix_code
from compile_engine_compat.migrate.relay_uses import classify
from compile_engine_compat.migrate.scan import Finding, scan_paths

# (snippet, runs under install()?, the rows its findings must be, in order)
SNIPPETS: list[tuple[str, bool, list[tuple[str, str]]]] = [
    (
        "from tvm import relay\n"
        "x = relay.var('x', shape=(2, 3))\n"
        "f = relay.Function([x], relay.nn.relu(relay.add(x, relay.const(1.0))))\n",
        True,
        [("relay.building", "served")],
    ),
    (
        "import tvm\nimport tvm.relay\nf = tvm.relay.Function([], tvm.relay.const(1.0))\n",
        True,
        [("relay.building", "served")],
    ),
    (
        "from tvm.relay.testing import run_infer_type\n"
        "from tvm.relay.testing.temp_op_attr import TempOpAttr\n"
        "from tvm.relay import var as v\n"
        "run_infer_type\nTempOpAttr\nv('x', shape=(1,))\n",
        True,
        [("relay.building", "served")],
    ),
    (
        "from tvm import relay\nrelay.build\nrelay.create_executor\n",
        True,
        [("relay.build", "served"), ("relay.create_executor", "served")],
    ),
    (
        "from tvm.contrib import graph_executor\ngraph_executor.GraphModule\n",
        True,
        [("tvm.contrib.graph_executor.GraphModule", "served")],
    ),
    (
        "from tvm import autotvm\nautotvm.register_topi_compute('conv2d_nchw.x86')\n",
        True,
        [("tvm.autotvm", "served")],
    ),
    (
        "from tvm import relay\nrelay.op.strategy.wrap_topi_schedule\n",
        True,
        [("relay.op.strategy.wrap_topi_schedule", "served")],
    ),
    (
        "from tvm.relay.backend import graph_executor_codegen\n"
        "graph_executor_codegen.GraphExecutorCodegen(None, None)\n",
        False,
        [("relay.unsupported", "manual")] * 2,  # the import and the call
    ),
    (
        "from tvm import relay\nrelay.frontend.from_onnx\n",
        True,
        [("relay.frontend.from_onnx", "served")],
    ),
    (
        "from tvm import relay\n"
        "relay.backend.graph_executor_codegen.GraphExecutorCodegen(None, None)\n",
        False,
        [("relay.unsupported", "manual")],
    ),
    (
        "import tvm.relay.qnn.op\nassert callable(tvm.relay.qnn.op.quantize)\n",
        True,
        [("relay.qnn.op", "served")],
    ),
    (
        "from tvm.relay.backend import graph_executor_codegen\n"
        "graph_executor_codegen.GraphExecutorCodegen(None)\n",
        False,
        [("relay.unsupported", "manual")] * 2,  # the import and the call
    ),
    (
        "from tvm import relay\nrelay.transform.FoldConstant()\n",
        True,
        [("relay.transform", "served")],
    ),
    (
        "from tvm import relay\nrelay.transform.PartialEvaluate()\n",
        True,
        [("relay.transform.more_passes", "served")],
    ),
    (
        "from tvm import relay\nrelay.transform.ToCPS(None)\n",
        False,
        [("relay.unsupported", "manual")],
    ),
    (
        "from tvm import relay\nx = relay.var('x', shape=(4,))\nrelay.nn.fifo_buffer(x, x, 0)\n",
        False,
        [("relay.building", "served"), ("relay.unsupported", "manual")],
    ),
    (
        "from tvm import autotvm\nautotvm.tuner.XGBTuner.__name__\n",
        True,
        [("tvm.autotvm.tuning", "served")],
    ),
    (
        "from tvm.relay import SpanCheck\nSpanCheck(None, [])\n",
        False,
        [("relay.unsupported", "manual")] * 2,  # the import and the call
    ),
]


def _scan(tmp_path: Path, code: str) -> list[Finding]:
    path = tmp_path / "legacy.py"
    path.write_text(code)
    findings, skipped = scan_paths([str(path)])
    assert skipped == []
    return findings


def _runs_under_the_shim(code: str) -> bool:
    compile_engine_compat.install()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the served names warn; not what is tested here
            exec(compile(code, "<legacy>", "exec"), {})
        return True
    # Known names are refused at the call (RelayRemovedCallError, UnsupportedRelayError: both
    # NotImplementedError), unknown ones at the import or access.
    except (ImportError, AttributeError, NotImplementedError):  # NotImplementedError: a
        return False  # refusal at the call (RelayRemovedCallError, TuningRemovedError)
    finally:
        compile_engine_compat.uninstall()


@pytest.mark.parametrize("code, runs, rows", SNIPPETS, ids=[s[0].split("\n")[-2] for s in SNIPPETS])
def test_a_finding_is_manual_exactly_when_the_code_fails_under_the_shim(
    tmp_path: Path, code: str, runs: bool, rows: list[tuple[str, str]]
) -> None:
    assert _runs_under_the_shim(code) is runs
    findings = _scan(tmp_path, code)
    assert [(f.api, f.fix) for f in findings] == rows
    manual = [f for f in findings if f.fix == "manual"]
    assert bool(manual) is not runs
    for finding in findings:  # each names the use and why (manual) or its difference (served)
        assert finding.detail.startswith("tvm.")
    for finding in manual:
        reason = finding.detail.split(": ", 1)[1]
        assert "relax" in reason.lower() or "meta_schedule" in reason, finding.detail


def test_the_plain_building_finding_is_the_first_use_and_counts_the_rest(tmp_path: Path) -> None:
    code = SNIPPETS[0][0]
    [finding] = _scan(tmp_path, code)
    assert (finding.line, finding.col) == (2, 5)
    assert finding.detail.startswith("tvm.relay.var (and 4 more uses in this file): ")
    assert finding.detail.endswith(API_TABLE["relay.building"].note)


def test_guarded_relay_imports_and_tvm_sources_are_not_classified(tmp_path: Path) -> None:
    guarded = "try:\n    from tvm.relay import frontend\nexcept ImportError:\n    frontend = None\n"
    assert _scan(tmp_path, guarded) == []
    package = tmp_path / "tvm" / "relay"
    package.mkdir(parents=True)
    for folder in (tmp_path / "tvm", package):
        (folder / "__init__.py").write_text("")
    (package / "build_module.py").write_text("from . import frontend\nfrom .. import relay\n")
    assert scan_paths([str(tmp_path / "tvm")]) == ([], [])


def test_engine_and_relay_findings_merge_in_source_order_and_noqa_works(tmp_path: Path) -> None:
    code = (
        "from tvm import relay\n"
        "engine = relay.backend.compile_engine.get()\n"
        "m = relay.backend.graph_executor_codegen.GraphExecutorCodegen  # noqa: CEC805\n"
        "x = relay.var('x')\n"
    )
    findings = _scan(tmp_path, code)
    assert [(f.line, f.code) for f in findings] == [(2, "CEC102"), (4, "CEC804")]


def test_fix_reports_manual_relay_ports_and_never_zero_for_a_failing_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = (
        "from tvm import relay\nx = relay.var('x')\n"
        "mod = relay.backend.graph_executor_codegen.GraphExecutorCodegen(None, None)\n"
    )
    new, changes, manual = fix_code(code)
    assert new == code and changes == []
    assert [(m.line, m.kind) for m in manual] == [(3, "manual")]
    assert (
        "tvm.relay.backend.graph_executor_codegen.GraphExecutorCodegen: Relay's graph-executor"
        in (manual[0].message)
    )
    path = tmp_path / "model.py"
    path.write_text(code)
    assert cli.main(["fix", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Detected 1 legacy use needing a manual port." in out
    assert "Left 1 Relay-era use running as written under" in out
    assert f"{path}:2:5: INFO: relay.building runs as written under install()" in out
    assert f"{path}:3:7: WARNING: relay.unsupported needs a manual port" in out


def test_fix_of_a_notebook_places_relay_items_in_their_cells(tmp_path: Path) -> None:
    import json

    cells = [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": 1, "source": s}
        for s in (["from tvm import relay\n"], ["%time 1\n", "relay.vm.VirtualMachine\n"])
    ]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(notebook))
    findings, _ = scan_paths([str(path)])
    assert [(f.cell, f.line, f.fix) for f in findings] == [(1, 2, "manual")]


def test_classification_covers_every_refusal_with_its_reason() -> None:
    for name, why in _relay_surface.REFUSED.items():
        row, fix, detail = classify(name + ".anything") or (None, None, "")
        assert row is API_TABLE["relay.unsupported"] and fix == "manual"
        assert detail == f"{name}.anything: {why}"


def test_the_committed_surface_manifest_is_the_live_front_end() -> None:
    assert _stubs.RELAY_SURFACE.read_text(encoding="utf-8") == _stubs.relay_surface()


def test_apply_history_best_is_served_and_says_which_records_it_applies(tmp_path: Path) -> None:
    # Served since the shim tunes (docs/tuning.md): its own records apply, TVM 0.19's refuse.
    code = "from tvm import autotvm\nwith autotvm.apply_history_best('tuned.log'):\n    pass\n"
    [finding] = _scan(tmp_path, code)
    assert (finding.api, finding.fix) == ("tvm.autotvm.apply_history_best", "served")
    assert "TuningRecordsError" in finding.detail


# -- the text reader (_code_text): what the finder sees and what it must not -------------------

READER_CASES = [
    # (code, [(line, col, row, fix)]) -- each a form the ast reading handled the same way
    ('"relay.frontend.from_onnx"\n# relay.frontend\nfrom tvm import relay\n', []),
    ("from tvm import relay\ns = '''\nrelay.frontend.x\n'''\n", []),
    ("from tvm import relay\nrelay_res = 1\nrelay_res.frontend\n", []),
    (
        "from tvm.relay.testing import (\n    run_infer_type,\n"
        "    yolo_detection as c,  # why\n)\nc()\n",
        [(1, 1, "relay.unsupported", "manual"), (5, 1, "relay.unsupported", "manual")],
    ),
    (
        "import tvm; from tvm.relay.backend import graph_executor_codegen\n",
        [(1, 13, "relay.unsupported", "manual")],
    ),
    (
        "from tvm.relay.testing import yolo_detection as count\ndef count(): pass\nf(count=1)\n"
        "count = 2\n",
        [(1, 1, "relay.unsupported", "manual")],
    ),
    (
        "from tvm import autotvm\nautotvm.GLOBAL_SCOPE.silent = True\n",
        [(2, 1, "tvm.autotvm", "served")],
    ),
    (
        "try:\n    from tvm.relay import vm\n    vm.VirtualMachine\n"
        "except (ImportError, OSError):\n    vm = None\nelse:\n    pass\n"
        "from tvm import relay\nrelay.vm.VirtualMachine\n",
        [(9, 1, "relay.unsupported", "manual")],
    ),
    (
        "try:\n    from tvm.relay.backend import graph_executor_codegen\n"
        "except ValueError:\n    pass\n",
        [(2, 5, "relay.unsupported", "manual")],
    ),
    (
        "import tvm.relay as r\nr.backend.graph_executor_codegen.GraphExecutorCodegen\n",
        [(2, 1, "relay.unsupported", "manual")],
    ),
    (
        "import tvm\ntvm.relay.backend.graph_executor_codegen.GraphExecutorCodegen\n",
        [(2, 1, "relay.unsupported", "manual")],
    ),
    ("from tvm.relay import *\nfrom_onnx()\n", []),
    # columns count characters, not UTF-8 bytes (12 here)
    (
        "x = 'é' ; from tvm.relay.backend import graph_executor_codegen\n",
        [(1, 11, "relay.unsupported", "manual")],
    ),
]


@pytest.mark.parametrize("code, expected", READER_CASES)
def test_the_text_reader_sees_only_code(code: str, expected: list) -> None:
    from compile_engine_compat.migrate.relay_uses import relay_uses

    assert [(u.line, u.col, u.row.name, u.fix) for u in relay_uses(code)] == expected


def test_unterminated_strings_and_odd_text_never_raise() -> None:
    from compile_engine_compat.migrate.relay_uses import relay_uses

    for code in ("from tvm import relay\n'''\nrelay.vm", "from tvm import relay\n'x\nrelay.vm.y\n"):
        relay_uses(code)  # best effort on code that does not parse: no exception
    assert relay_uses("from tvm import relay\n'x\nrelay.vm.y\n")[0].line == 3


# A Relay-era program: each marked line uses a TVM 0.19 name that TVM 0.27 no longer has.
RELAY_ERA_PROGRAM = """\
import numpy as np
import tvm
import tvm._ffi  # gone
from tvm import relay
from tvm.contrib import graph_runtime  # gone
from tvm._ffi.base import py_str  # gone
from tvm.relay.analysis import post_order_visit  # gone
from tvm.autotvm.graph_tuner import DPTuner  # gone

dev = tvm.gpu(0)  # gone
ctx = tvm.context("cuda", 0)  # gone
x = relay.var("x", shape=(1, 4))  # gone
lib = relay.build(tvm.IRModule.from_expr(relay.Function([x], x)), target="llvm")  # gone
m = graph_runtime.create(lib.get_graph_json(), lib.get_lib(), tvm.cpu())  # gone
arr = tvm.nd.array(np.zeros((1, 4), "float32"))  # gone
v = tvm.runtime.ndarray.cl(0)  # gone
print(py_str(b"x"), tvm.target.VirtualDevice)  # gone
"""


def test_scan_reports_every_line_using_a_tvm_019_name_tvm_027_lacks(tmp_path: Path) -> None:
    findings = _scan(tmp_path, RELAY_ERA_PROGRAM)
    gone = {n for n, line in enumerate(RELAY_ERA_PROGRAM.splitlines(), 1) if "# gone" in line}
    assert gone <= {f.line for f in findings}, sorted(gone - {f.line for f in findings})
    by_name = {f.detail.split(":")[0]: f for f in findings}
    # Whether install() serves it or not, each names its route.
    assert (
        by_name["tvm.gpu"].fix == "served" and "MIGRATION.md#tvm-gpu" in by_name["tvm.gpu"].detail
    )
    assert by_name["tvm.contrib.graph_runtime"].fix == "served"
    assert by_name["tvm.target.VirtualDevice"].fix in ("manual", "served")
    assert "MIGRATION.md#" in by_name["tvm._ffi"].detail


@pytest.mark.parametrize(
    ("code", "runs"),
    [
        ("import tvm\ntvm.gpu(0)\n", True),
        ("import tvm\ntvm.lower(None, [])\n", False),
        ("import tvm\nfrom tvm.contrib import graph_runtime\n", True),
        ("import tvm\nx = tvm.runtime.ndarray.numpyasarray\nx(None)\n", False),
        ("from tvm.contrib import cc\ncc.get_cc\n", True),
    ],
)
def test_a_census_finding_is_manual_exactly_when_the_shim_refuses_it(
    tmp_path: Path, code: str, runs: bool
) -> None:
    assert _runs_under_the_shim(code) is runs
    findings = _scan(tmp_path, code)
    assert findings and all("TVM 0.27 has no" in f.detail for f in findings)
    assert any(f.fix == "manual" for f in findings) is not runs
