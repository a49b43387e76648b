"""``tvm.ir.save_json`` never crashes under ``install()``: the guard of an apache-tvm-ffi bug.

apache-tvm-ffi 0.1.15.post1 and 0.1.15.post2 kill the interpreter in ``save_json`` of any typed
node with the 0.27 wheels; 0.1.14.post0 and 0.1.14.post1 (the declared range) serialize them. The
tests of each outcome run where the installed release has it: CI's environments hold the range's
floor and newest, the canary the newest on PyPI.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import tvm
import tvm_ffi
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from tvm import relax

import compile_engine_compat
from compile_engine_compat import boundary

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib


def test_the_probe_finds_the_crash_in_a_child_process():
    # apache-tvm-ffi 0.1.15.x crashes; a release that works is probed as such and left unguarded.
    crashes = boundary.save_json_crashes()
    child = subprocess.run(
        [sys.executable, "-c", "import tvm; tvm.ir.save_json(tvm.tirx.IntImm('int32', 3))"],
        capture_output=True,
    )
    assert crashes == (child.returncode != 0)


def test_the_guard_names_the_range_pyproject_declares():
    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    declared = [Requirement(r) for r in pyproject["project"]["optional-dependencies"]["tvm"]]
    ffi = next(r.specifier for r in declared if r.name == "apache-tvm-ffi")
    assert ffi == SpecifierSet(boundary.WORKING_FFI_RANGE)


@pytest.mark.skipif(
    tvm_ffi.__version__ not in SpecifierSet(boundary.WORKING_FFI_RANGE),
    reason="the installed apache-tvm-ffi is outside the declared range",
)
def test_no_release_in_the_declared_range_crashes():
    # The range's bound is what keeps `tvm.ir.save_json(tvm.tirx.IntImm("int32", 3))` alive.
    assert not boundary.save_json_crashes(), boundary.ffi_release()


@pytest.mark.parametrize(
    "node",
    [
        tvm.ir.Op.get("relax.add"),
        tvm.ir.GlobalVar("f"),
        tvm.ir.Span(tvm.ir.SourceName("a.py"), 1, 1, 1, 2),
        tvm_ffi.convert([1, 2, "x"]),
        tvm_ffi.convert({"a": 1}),
        relax.op.nn.conv2d(
            relax.Var("x", relax.TensorType((1, 3, 8, 8), "float32")),
            relax.Var("w", relax.TensorType((4, 3, 3, 3), "float32")),
        ).attrs,
    ],
    ids=["op", "global_var", "span", "array", "map", "attrs"],
)
def test_what_tvm_serializes_round_trips(node):
    back = tvm.ir.load_json(boundary.guarded_save_json(node))
    # A global variable is equal to itself only (by address): compare what it holds.
    assert tvm_ffi.structural_equal(back, node, map_free_vars=True)


def test_a_tensor_round_trips():
    tensor = tvm.runtime.tensor(np.arange(3, dtype="float32"))
    np.testing.assert_array_equal(
        tvm.ir.load_json(boundary.guarded_save_json(tensor)).numpy(), [0, 1, 2]
    )


@pytest.mark.skipif(not boundary.save_json_crashes(), reason="this FFI serializes typed nodes")
def test_a_node_the_ffi_would_crash_on_is_refused_naming_the_release():
    release = re.escape(f"apache-tvm-ffi {tvm_ffi.__version__} (with apache-tvm {tvm.__version__})")
    with pytest.raises(TypeError, match=rf"ir\.PrimType\.dtype.*{release}.*ToJSONGraph.*<0\.1\.15"):
        boundary.guarded_save_json(tvm.ir.PrimType("int32"))
    with pytest.raises(TypeError, match="crash"):
        boundary.guarded_save_json(tvm.tirx.const(1))


def test_install_serves_the_guard_and_uninstall_restores_tvms_own():
    own = tvm.ir.save_json
    compile_engine_compat.install()
    try:
        assert tvm.ir.save_json is boundary.guarded_save_json
    finally:
        compile_engine_compat.uninstall()
    assert tvm.ir.save_json is own


#: Every kind of node the front end builds, through the guarded save_json, in a child process:
#: a crash there is a failed test here, not a dead test session.
EVERY_NODE_KIND = textwrap.dedent(
    """
    import compile_engine_compat
    compile_engine_compat.install()
    import numpy as np
    import tvm
    from tvm import relay

    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(4, 3, 3, 3))
    conv = relay.nn.conv2d(x, w, padding=(1, 1), channels=4, kernel_size=(3, 3))
    tup = relay.Tuple([x, conv])
    let_var = relay.var("v", shape=(1, 3, 8, 8))
    func = relay.Function([x, w], relay.nn.relu(conv))
    nodes = {
        "var": x,
        "constant": relay.const(np.ones(2, "float32")),
        "call": conv,
        "attrs": conv.attrs,
        "tuple": tup,
        "tuple_get_item": relay.TupleGetItem(tup, 1),
        "let": relay.Let(let_var, x, relay.add(let_var, let_var)),
        "function": func,
        "module": tvm.IRModule.from_expr(func),
        "relax_function": tvm.IRModule.from_expr(conv)["main"],
        "tensor_type": relay.TensorType((2, 3), "float32"),
        "op": relay.op.get("nn.conv2d"),
    }
    for kind, node in nodes.items():
        try:
            text = tvm.ir.save_json(node)
        except TypeError as err:
            print(kind, "refused", str(err)[:60])
            continue
        back = tvm.ir.load_json(text)
        # As upstream's test_ir_nodes.check_json_roundtrip compares (a front-end node as Relax).
        print(kind, "round-trips", tvm.ir.structural_equal(back, node, map_free_vars=True))
    print("done")
    """
)


#: Front-end objects that hold no TVM node (Python-side attributes and types): TVM's own
#: serializer refuses them with a TypeError, whichever the FFI release.
PYTHON_ONLY = {"attrs", "tensor_type"}


def test_every_front_end_node_kind_round_trips_where_the_ffi_can():
    child = subprocess.run(
        [sys.executable, "-c", EVERY_NODE_KIND], capture_output=True, text=True, timeout=300
    )
    assert child.returncode == 0, child.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in child.stdout.splitlines() if " " in line)
    assert child.stdout.rstrip().endswith("done")
    assert len(lines) == 12, child.stdout
    crashes = boundary.save_json_crashes()
    for kind, outcome in lines.items():
        if crashes or kind in PYTHON_ONLY:
            assert outcome.startswith(("refused", "round-trips True")), (kind, outcome)
        else:  # a release that works: Relay modules and expressions round-trip, as in TVM 0.19
            assert outcome == "round-trips True", (kind, outcome)
