"""Run upstream TVM's own Relay test files against the shim and print (or write) the pass table.

Not part of the default suite (``tests/conftest.py`` ignores this folder). It fetches nothing:
give it an apache/tvm checkout (or a tree extracted from one), for instance::

    git -C /path/to/tvm archive v0.19.0 tests/python | tar -x -C /tmp/tvm019
    PYTHONPATH=$PWD python tests/upstream/run_relay_tests.py /tmp/tvm019             # 15 files
    python tests/upstream/run_relay_tests.py /tmp/tvm019 --all --jobs 2 \
        --out tests/upstream/RESULTS.md                                           # the whole run

``--all`` runs every ``test_*.py`` of ``tests/python/relay``, subfolders included, except the
GPU-only folders of :data:`EXCLUDED_FOLDERS`, plus the ONNX and PyTorch frontends'
``test_forward.py`` (:data:`FRONTEND_FILES`). Files whose subject has an issue of its own
(:data:`OTHER_ISSUES`: the pattern language and partitioning, QNN and quantization, tuning) run
and are listed, but are left out of the total pass rate.

Each file is copied, byte for byte, into its own scratch directory at its path under
``tests/python`` (``relay/test_any.py``, ``frontend/onnx/test_forward.py``), with upstream's
helper folders beside it (``relay/utils``, which ``test_any.py`` imports as ``utils`` and the
frontends as ``relay.utils``) and a ``conftest.py`` holding only ``import compile_engine_compat;
compile_engine_compat.install()`` at the scratch root, and run by ``python -m pytest`` in its own
subprocess under a timeout (``--jobs`` at a time). A file that kills the interpreter or runs out
of time is a row that says so. The table counts collected, passed, failed, skipped and errored
test instances per file (from pytest's JUnit XML), and the total pass rate over the collected
instances that did not skip. ``--top N`` lists the N most frequent first error lines, to show
which missing piece blocks the most tests; ``--out FILE`` writes the table as Markdown with the
date, the package's commit and the TVM version of the run.
"""

from __future__ import annotations

import argparse
import ast
import collections
import concurrent.futures
import datetime
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

#: The files of ``tests/python/relay`` this script runs by default (upstream's names).
DEFAULT_FILES = (
    "test_op_level1.py",
    "test_op_level2.py",
    "test_op_level3.py",
    "test_op_level4.py",
    "test_op_level5.py",
    "test_op_level6.py",
    "test_op_level10.py",
    "test_ir_nodes.py",
    "test_backend_graph_executor.py",
    "test_backend_interpreter.py",
    "test_build_module.py",
    "test_type_infer.py",
    "test_vm.py",
    "test_any.py",
    "test_op_grad_level1.py",
)

#: Folders of ``tests/python/relay`` that run only on a GPU -> why they are not run.
EXCLUDED_FOLDERS: dict[str, str] = {
    "opencl_texture": "OpenCL texture memory on Adreno GPUs only",
    "collage": "Collage partitions for CUDA, cuBLAS and TensorRT targets only",
}

#: The frontend files run with ``--all`` (paths under ``tests/python``).
FRONTEND_FILES = ("frontend/onnx/test_forward.py", "frontend/pytorch/test_forward.py")

#: Subjects with an issue of their own: (pattern over the file's path, row label). Their rows
#: are listed, and left out of the total.
OTHER_ISSUES: tuple[tuple[str, str], ...] = (
    (
        r"dataflow_pattern|partition|merge_composite|annotate_target|merge_compiler_regions"
        r"|annotated_regions|compiler_function_utils",
        "other issue: pattern language and partitioning",
    ),
    (r"qnn|quantiz", "other issue: QNN and quantization"),
    (r"auto_scheduler|autotvm|meta_schedule|tuning", "other issue: tuning"),
)

#: Files that stay under 50% (or do not collect) on TVM 0.27 -> why, in the project's words;
#: the table shows the reason before the most frequent error.
REASONS: dict[str, str] = {
    "test_custom_datatypes.py": "TVM 0.27 has no custom data types (the custom[...] dtypes, "
    "their lowering hooks and LowerCustomDatatypes are gone): registering one is accepted, "
    "its use is refused naming why",
    "test_roofline.py": "TVM 0.27 has no profiler (tvm.runtime.profiling, the profiling VM) "
    "for roofline_analysis to read, and its RPCSession.device no longer takes a target string; "
    "tvm.utils.roofline is refused at the call (the peak microbenchmarks are left undone)",
    "test_cmp_op.py": "a script of module-level asserts with no test function: it collects "
    "0 tests, and its asserts pass at import",
    "backend/test_pass_lower_te.py": "tests Relay's C++ lowering (relay.tec.LowerTE, "
    "call_lowered): refused at the call, relay.build lowers through the shim's TE compiler",
    "backend/test_pass_remove_standalone_reshapes.py": "tests a pass over Relay's lowered "
    "call_lowered form, which TVM 0.27 has not: refused at the call",
    "strategy/test_select_implementation.py": "asserts the names of TVM 0.19's TOPI "
    "strategies (conv2d_NCHWc_int8.x86, ...arm_cpu): those schedules are gone from TVM 0.27",
    "test_json_compact.py": "TVM 0.19's JSON upgrader (tvm.ir.json_compact) and the node types "
    "it upgraded to (relay.Var, TypeVar, tir.Ramp of v0.15...) are gone from 0.27's "
    "tvm.ir.load_json, which refuses graphs older than 0.20",
    "test_target_hooks.py": "the example_target_hook target kind and its RelayToTIR hook are "
    "C++ test code of TVM 0.19's build (src/relay/backend/contrib/example_target_hooks), "
    "absent from the 0.27 wheel",
    "test_sparse_conv2d_convert.py": "tvm.topi.sparse (random_bsr_matrix) and the BSR "
    "conversion passes are gone from TVM 0.27; relay.data_dep_optimization.bsr_conv2d is "
    "refused when called, naming relax's sparse route",
    "test_sparse_dense_convert.py": "relay.data_dep_optimization.bsr_dense needs TVM 0.19's "
    "sparse_dense kernels (topi.nn.sparse), gone from 0.27; refused when called",
    "test_op_floordiv.py": "the test's expected TIR is TVMScript of TVM 0.19 (T.block on tvm.tir), "
    "which 0.27's parser (tvm.tirx.script) no longer reads",
    "test_op_grad_level3.py": "relax.transform.Gradient (TVM 0.27) has no gradient of "
    "clip, stack, squeeze, gather_nd, nor of arange/zeros with tensor arguments: "
    "relay.transform.gradient refuses naming the op (registering those gradients is left undone)",
    "test_op_grad_level4.py": "relax.transform.Gradient (TVM 0.27) has no gradient of max, "
    "the comparisons or strided_slice: relay.transform.gradient refuses naming the op; "
    "where's gradient of a broadcast operand is not reduced to its shape (a bug, left open)",
    "test_link_params.py": "asserts CRT's system-lib entry point and the C codegen's "
    ".rodata.tvm constant arrays, which TVM 0.27 has neither of (the shim binds params as "
    "constants)",
    "test_pass_plan_devices.py": "device planning across several devices is refused at the "
    "call (a build is for one device; Relax's R.to_vdevice/RealizeVDevice replace it); every "
    "test plans for a CPU and a GPU; the expected modules' parameter attributes "
    "(%a {virtual_device=...}) are not read by relay.parse (left undone)",
    "transform/test_capture_postdfsindex_in_spans.py": "asserts Relay's printed text with a "
    "span comment on every node and 0.19's binding order; CapturePostDfsIndexInSpans and span "
    "printing are left undone",
    "test_pass_alter_op_layout.py": "TVM 0.19's layout propagation around target layouts "
    "(NCHWc conv, inserted layout_transforms) is not served: users' FTVMAlterOpLayout "
    "functions are applied, relay.build picks its own layouts",
    "test_pass_convert_op_layout.py": "ConvertLayout runs Relax's pass: its layout_transform "
    "placement differs from 0.19's, and per-op FTVMConvertOpLayout rules are refused",
    "test_pass_to_cps.py": "ToCPS/un_cps are not served (refused at the call)",
    "test_pass_defunctionalization.py": "Defunctionalization is not served (refused at the call)",
    "test_op_fast_math.py": "asserts a fused kernel node's name in the graph JSON; relay.build's "
    "JSON describes the Relax VM's module",
    "test_analysis_extract_fused_functions.py": "FuseOps on the Relay graph groups ResNet's "
    "synthetic workload into 11 functions where 0.19 made 7; a bare call's module reads back "
    "as a Relax SeqExpr",
    "test_name_supply.py": "a module function with untyped parameters has no Relax form",
}

#: The whole conftest each copied file runs beside.
CONFTEST = "import compile_engine_compat; compile_engine_compat.install()\n"

#: What the frontend files' conftest adds: test-environment stand-ins, never the package's.
#: ``onnx.mapping`` (gone in onnx 1.23; the ONNX file reads its two dicts) is rebuilt from
#: ``onnx.helper``'s converters; the ONNX node-test data the 1.23 wheel no longer ships is an
#: empty list (those parametrized instances are not collected); models made without an opset
#: get onnxruntime's newest. Both files import
#: ``torchvision`` at the top; where it does not import (no PyPI release matches the
#: installed torch: torchvision 0.28.0, the one for torch 2.13, fails on torch 2.13.0+cpu
#: with "operator torchvision::nms does not exist"), a stand-in lets the files collect and
#: skips, with that reason, each test that touches it.
FRONTEND_CONFTEST = """
import sys, types

import numpy as np
import pytest

try:
    import onnx
    import onnx.helper
except ImportError:
    onnx = None
if onnx is not None and not hasattr(onnx, "mapping"):
    mapping = types.ModuleType("onnx.mapping")
    codes = [c for c in onnx.TensorProto.DataType.values() if c]
    mapping.TENSOR_TYPE_TO_NP_TYPE = {}
    for code in codes:
        try:
            mapping.TENSOR_TYPE_TO_NP_TYPE[code] = onnx.helper.tensor_dtype_to_np_dtype(code)
        except (KeyError, ValueError, TypeError):
            pass
    mapping.NP_TYPE_TO_TENSOR_TYPE = {
        np.dtype(v): k for k, v in reversed(list(mapping.TENSOR_TYPE_TO_NP_TYPE.items()))
    }
    onnx.mapping = sys.modules["onnx.mapping"] = mapping
if onnx is not None:
    # The ONNX file lists onnx's own node tests at import; the onnx 1.23 wheel ships none of
    # their data (onnx/backend/test/data/node): list none, so the rest of the file collects.
    import os

    _node_dir = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")
    _listdir = os.listdir

    def _listdir_or_none(path="."):
        if path == _node_dir and not os.path.isdir(path):
            return []
        return _listdir(path)

    os.listdir = _listdir_or_none

if onnx is not None and onnx.defs.onnx_opset_version() > 23:
    # helper.make_model without opset_imports makes onnx 1.23's newest opset (28), which
    # onnxruntime 1.32 does not run: such models get opset 23, onnxruntime's newest (upstream's
    # onnx and onnxruntime of 2024 matched).
    _make_model = onnx.helper.make_model

    def _make_model_ort_runs(graph, **kwargs):
        kwargs.setdefault("opset_imports", [onnx.helper.make_opsetid("", 23)])
        return _make_model(graph, **kwargs)

    onnx.helper.make_model = _make_model_ort_runs

try:
    import torchvision
except Exception as err:  # ImportError, or the RuntimeError of a mismatched build
    why = f"torchvision does not import beside this torch ({type(err).__name__}: {err})"

    class _Skip(types.ModuleType):
        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            pytest.skip(why)

    sys.modules["torchvision"] = _Skip("torchvision")
"""

#: Where the files sit inside an apache/tvm checkout.
RELAY_TESTS = Path("tests") / "python" / "relay"

REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass
class FileResult:
    """One file's counts, or why there are none."""

    name: str
    collected: int = 0
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    errors: int = 0
    wall_s: float = 0.0
    note: str = ""
    messages: list[str] = field(default_factory=list)
    #: Set for the files of :data:`OTHER_ISSUES`: the row's label; left out of the total.
    other_issue: str = ""


def relay_test_dir(tree: Path) -> Path:
    """The folder holding the Relay test files in ``tree`` (a checkout, or that folder itself)."""
    for candidate in (tree / RELAY_TESTS, tree):
        if (candidate / DEFAULT_FILES[0]).is_file():
            return candidate
    raise SystemExit(f"no {RELAY_TESTS}/{DEFAULT_FILES[0]} under {tree}: give an apache/tvm tree")


def first_line(text: str) -> str:
    """The line of a failure message that names the error (the last ``E`` line, else the first)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errors = [ln[1:].strip() for ln in lines if ln.startswith("E ")]
    line = errors[0] if errors else (lines[0] if lines else "")
    return line[:160]


def read_junit(path: Path, result: FileResult) -> None:
    """Fill ``result``'s counts from pytest's JUnit XML.

    A collection error is a ``testcase`` with no class name: an error, not a collected test.
    """
    root = ET.parse(path).getroot()
    for case in root.iter("testcase"):
        outcome = {child.tag for child in case}
        collection_error = not case.get("classname") and "error" in outcome
        if collection_error:
            result.errors += 1
            result.note = result.note or "collection error"
        elif "skipped" in outcome:
            result.skipped += 1
        elif "error" in outcome:
            result.errors += 1
        elif "failure" in outcome:
            result.failed += 1
        else:
            result.passed += 1
        if not collection_error:
            result.collected += 1
        for child in case:
            if child.tag in ("failure", "error"):
                text = child.get("message", "") + "\n" + (child.text or "")
                result.messages.append(first_line(text))


def other_issue(relpath: str) -> str:
    """The :data:`OTHER_ISSUES` label of the file at ``relpath``, or ``""``."""
    for pattern, label in OTHER_ISSUES:
        if re.search(pattern, relpath):
            return label
    return ""


def all_files(tests: Path) -> list[str]:
    """Every test file of the relay folder ``tests`` (subfolders included, GPU-only folders
    excluded) and the frontend files, as paths under ``tests/python``."""
    found = []
    for path in sorted(tests.rglob("test_*.py")):
        relative = path.relative_to(tests)
        if relative.parts[0] in EXCLUDED_FOLDERS:
            continue
        found.append(str(Path("relay") / relative))
    python = tests.parent
    found += [name for name in FRONTEND_FILES if (python / name).is_file()]
    return found


def resolve(tests: Path, name: str) -> str:
    """``name`` (``test_vm.py``, ``qnn/test_x.py``, ``frontend/onnx/test_forward.py``) as a
    path under ``tests/python``."""
    if name.startswith(("relay/", "frontend/")):
        return name
    return str(Path("relay") / name)


def sibling_modules(source: Path) -> list[Path]:
    """The modules beside ``source`` that it imports by name (``from test_dynamic_op_level3
    import verify_func``, ``from test_auto_scheduler_task_extraction import get_network``), and
    theirs in turn: upstream's runner had the file's folder on ``sys.path``, so they are copied
    beside the file, byte for byte."""
    found: list[Path] = []
    pending = [source]
    while pending:
        tree = ast.parse(pending.pop().read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                path = source.parent / f"{name.split('.')[0]}.py"
                if path.is_file() and path != source and path not in found:
                    found.append(path)
                    pending.append(path)
    return found


def run_file(
    python: Path, relpath: str, scratch: Path, timeout_s: float, extra: list[str]
) -> FileResult:
    """Copy the file at ``relpath`` under ``python`` (``tests/python``) beside the one-line
    conftest and upstream's helper folders, and run pytest on it in a subprocess."""
    source = python / relpath
    result = FileResult(relpath.removeprefix("relay/"), other_issue=other_issue(relpath))
    work = scratch / relpath.replace("/", "__").removesuffix(".py")
    target = work / relpath
    target.parent.mkdir(parents=True)
    shutil.copy2(source, target)
    # Upstream's helper packages, where its own tests find them: ``utils`` beside the file
    # (``from utils import ref_funcs``) and ``relay/utils`` (``from relay.utils.tag_span``).
    for helpers, place in ((source.parent / "utils", target.parent / "utils"),
                           (python / "relay" / "utils", work / "relay" / "utils")):  # fmt: skip
        if helpers.is_dir() and not place.exists():
            shutil.copytree(helpers, place)
    for sibling in sibling_modules(source):
        shutil.copy2(sibling, target.parent / sibling.name)
    frontend = relpath.startswith("frontend/")
    (work / "conftest.py").write_text(CONFTEST + (FRONTEND_CONFTEST if frontend else ""))
    junit = work / "junit.xml"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        relpath,
        "-q",
        "-p",
        "no:cacheprovider",
        "-W",
        "ignore::DeprecationWarning",
        f"--rootdir={work}",
        f"--junitxml={junit}",
        *extra,
    ]
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd, cwd=work, env=env, capture_output=True, text=True, timeout=timeout_s
        )
    except subprocess.TimeoutExpired:
        result.wall_s = time.perf_counter() - start
        result.note = f"timed out after {timeout_s:.0f} s"
        return result
    result.wall_s = time.perf_counter() - start
    if proc.returncode < 0 or proc.returncode > 5:
        signal = -proc.returncode if proc.returncode < 0 else proc.returncode - 128
        result.note = f"crashed (rc {proc.returncode}, signal {signal})"
    if junit.is_file():
        read_junit(junit, result)
    elif not result.note:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-1:] or [""]
        result.note = f"no report (rc {proc.returncode}): {tail[0][:100]}"
    return result


def _total(results: list[FileResult]) -> FileResult:
    total = FileResult("total")
    for r in results:
        for attr in ("collected", "passed", "failed", "skipped", "errors", "wall_s"):
            setattr(total, attr, getattr(total, attr) + getattr(r, attr))
    return total


def _rate(r: FileResult) -> float | None:
    ran = r.collected - r.skipped
    return 100.0 * r.passed / ran if ran else None


def _short(message: str) -> str:
    """An error line without its exception's module path (``RelayRemovedCallError: ...``)."""
    return re.sub(r"^(?:[A-Za-z_]\w*\.)+(?=[A-Za-z_]\w*(?:Error|Exception)\b)", "", message)


def _why(r: FileResult) -> str:
    """The row's reason: its note (with the error of a collection error), else (under 50 %)
    its most frequent error; either after the file's :data:`REASONS` entry, if it has one."""
    stated = REASONS.get(r.name, "")
    said = ""
    rate = _rate(r)
    if r.note:
        first = f": {_short(r.messages[0])}" if r.note == "collection error" and r.messages else ""
        said = r.note + first
    elif rate is not None and rate < 50 and r.messages:
        message, count = collections.Counter(r.messages).most_common(1)[0]
        said = f"{count}x {_short(message)}"
    if stated and (r.note or (rate is not None and rate < 50)):
        return f"**{stated}**" + (f"; {said}" if said else "")
    return said


def markdown(results: list[FileResult], commit: str, tvm_version: str, files: str) -> str:
    """The table as a Markdown page: the run's conditions, the totals, one row per file."""
    frontends = [r for r in results if r.name.startswith("frontend/")]
    counted = [r for r in results if not r.other_issue and r not in frontends]
    total = _total(counted)
    ran = total.collected - total.skipped
    rate = _rate(total)
    front = _total(frontends)
    front_line = (
        f" The frontends' files: {front.passed} of {front.collected - front.skipped} "
        f"({_rate(front) or 0.0:.1f}%)."
        if frontends
        else ""
    )
    lines = [
        "# Upstream TVM v0.19.0 Relay tests under compile-engine-compat",
        "",
        "<!-- Generated by tests/upstream/run_relay_tests.py --out; do not edit. -->",
        "",
        f"Run {datetime.date.today().isoformat()}, package commit {commit}, TVM {tvm_version}; "
        f"{files}. Each file byte-identical beside a one-line conftest "
        "(`compile_engine_compat.install()`), with upstream's helper folders beside it.",
        "",
        f"**Pass rate: {total.passed} of {ran} non-skipped test instances "
        f"({rate or 0.0:.1f}%)** over {len(counted)} files of tests/python/relay; "
        f"{len(results) - len(counted) - len(frontends)} files of subjects with their own issue "
        f"are listed and left out of it.{front_line}",
        "",
        "| file | collected | passed | failed | skipped | errors | pass % | wall s | note |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in sorted(results, key=lambda r: (bool(r.other_issue), r.name)):
        percent = _rate(r)
        shown = f"{percent:.0f}" if percent is not None else "-"
        note = "; ".join(x for x in (r.other_issue, _why(r)) if x)
        note = note.replace("|", "/").replace("`", "'")
        lines.append(
            f"| `{r.name}` | {r.collected} | {r.passed} | {r.failed} | {r.skipped} | "
            f"{r.errors} | {shown} | {r.wall_s:.0f} | {note} |"
        )
    lines.append("")
    lines.append(
        "Excluded folders (GPU only): "
        + "; ".join(f"`{k}/` ({v})" for k, v in EXCLUDED_FOLDERS.items())
        + "."
    )
    return "\n".join(lines) + "\n"


def table(results: list[FileResult]) -> str:
    """The pass table, per file and in total (the files of :data:`OTHER_ISSUES` left out)."""
    counts = " ".join(f"{h:>5}" for h in ("coll", "pass", "fail", "skip", "err"))
    head = f"{'file':44} {counts} {'wall s':>7}  note"
    rows = [head, "-" * len(head)]
    for r in results:
        rate = _rate(r)
        reason = REASONS.get(r.name) if r.note or (rate is not None and rate < 50) else None
        note = "; ".join(x for x in (r.other_issue, r.note, reason and f"why: {reason}") if x)
        rows.append(
            f"{r.name:44} {r.collected:5d} {r.passed:5d} {r.failed:5d} {r.skipped:5d} "
            f"{r.errors:5d} {r.wall_s:7.1f}  {note}"
        )
    total = _total([r for r in results if not r.other_issue])
    rows.append("-" * len(head))
    rows.append(
        f"{'total':44} {total.collected:5d} {total.passed:5d} {total.failed:5d} "
        f"{total.skipped:5d} {total.errors:5d} {total.wall_s:7.1f}"
    )
    ran = total.collected - total.skipped
    rate = _rate(total) or 0.0
    rows.append(f"pass rate: {total.passed}/{ran} collected, non-skipped instances ({rate:.1f}%)")
    return "\n".join(rows)


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return out.stdout.strip()


def _tvm_version() -> str:
    out = subprocess.run(
        [sys.executable, "-c", "import tvm; print(tvm.__version__)"],
        capture_output=True, text=True, cwd="/",
    )  # fmt: skip
    return out.stdout.strip() or "unknown"


def main(argv: list[str] | None = None) -> int:
    """Command line: ``run_relay_tests.py TREE [--files ... | --all] [--jobs N] [--timeout S]
    [--top N] [--out FILE] [-- ARGS]``."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("tree", type=Path, help="an apache/tvm checkout or extracted tree")
    parser.add_argument("--files", nargs="+", default=None, help="file names or relay/ paths")
    parser.add_argument("--all", action="store_true", help="the whole directory and frontends")
    parser.add_argument("--jobs", type=int, default=1, help="files run at once")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per file")
    parser.add_argument("--top", type=int, default=0, help="list the N most frequent errors")
    parser.add_argument("--out", type=Path, help="write the table as Markdown here")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    argv = list(sys.argv[1:] if argv is None else argv)
    # Everything after "--" goes to pytest untouched (``-- -k resize -x``).
    pytest_args = argv[argv.index("--") + 1 :] if "--" in argv else []
    args = parser.parse_args(argv[: len(argv) - len(pytest_args) - (1 if "--" in argv else 0)])
    tests = relay_test_dir(args.tree.resolve())
    python = tests.parent
    if args.all:
        names = all_files(tests)
        described = f"the whole tests/python/relay ({len(names)} files) and the frontends"
    else:
        names = [resolve(tests, n) for n in (args.files or DEFAULT_FILES)]
        described = f"{len(names)} named files: " + ", ".join(
            n.removeprefix("relay/") for n in names
        )
    scratch = Path(tempfile.mkdtemp(prefix="relay-upstream-"))

    def one(relpath: str) -> FileResult:
        if not (python / relpath).is_file():
            return FileResult(relpath, note="not in this tree")
        result = run_file(python, relpath, scratch, args.timeout, pytest_args)
        print(
            f"{relpath}: {result.passed}/{result.collected} passed {result.note}",
            file=sys.stderr,
            flush=True,
        )
        return result

    try:
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
            results = list(pool.map(one, names))
    finally:
        if args.keep:
            print(f"scratch kept at {scratch}", file=sys.stderr)
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    print(table(results))
    if args.out:
        page = markdown(results, _commit(), _tvm_version(), described)
        tmp = args.out.with_suffix(".tmp")
        tmp.write_text(page, encoding="utf-8")
        tmp.replace(args.out)
    if args.top:
        counts = collections.Counter(m for r in results for m in r.messages)
        print(f"\nmost frequent errors (of {sum(counts.values())}):")
        for message, n in counts.most_common(args.top):
            print(f"{n:5d}  {message}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
