"""The bad-input table: each case is code a hostile or careless user runs, and what must happen.

Every case must end in a Python exception of the listed type whose message matches ``match``
(the problem is named at the call), or, where ``raises`` is empty, return normally with a
correct result. None may kill the process: :mod:`tests.hostile.test_bad_inputs` runs them in a
child process and reports a signal with the case that caused it.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Run once in the child before the cases; names defined here are visible to every case.
PRELUDE = """
import numpy as np
import tvm
from tvm import relax
from tvm.relax import TensorType
from compile_engine_compat import compile_engine, te_compiler
from compile_engine_compat.facade.objects import CCacheKey

def add3(shape=(4,), dtype="float32"):
    x = relax.Var("x", TensorType(list(shape), dtype))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(relax.op.add(bb.emit(relax.op.add(x, x)), x))
        bb.emit_func_output(out)
    return bb.get()["main"]

def matmul(n=8):
    a = relax.Var("a", TensorType([n, n], "float32"))
    b = relax.Var("b", TensorType([n, n], "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [a, b]):
        with bb.dataflow():
            out = bb.emit_output(relax.op.matmul(a, b))
        bb.emit_func_output(out)
    return bb.get()["main"]

def unaligned(shape, offset, dtype="float32"):
    # A view at a byte offset inside a TVM tensor (DLPack refuses unaligned NumPy memory itself).
    count = int(np.prod(shape))
    base = tvm.runtime.tensor(np.zeros(count + 64, dtype))
    return base._create_view(tuple(shape), dtype, offset)

engine = compile_engine.get()
kernel = engine.jit(add3(), "llvm")
mm = engine.jit(matmul(64), "llvm")
x = np.ones(4, "float32")
out = np.zeros(4, "float32")
"""


@dataclass(frozen=True)
class Case:
    """One hostile input.

    Parameters
    ----------
    name : str
        Stable id (the test id).
    code : str
        Statements run after :data:`PRELUDE`.
    raises : tuple of str
        Names of acceptable exception classes (any subclass counts); empty: it must succeed.
    match : str
        A regex the exception message must match (case-insensitive): the problem, named.
    """

    name: str
    code: str
    raises: tuple[str, ...] = ()
    match: str = ""


CASES: tuple[Case, ...] = (
    # -- what is lowered, and for which target
    # lower/jit wrap every failure in LoweringError (a RuntimeError), as the legacy engine did; its
    # message carries the cause.
    Case("source_is_an_int", "engine.lower(42, 'llvm')", ("TypeError", "RuntimeError"), "int"),
    Case("source_is_none", "engine.jit(None, 'llvm')", ("TypeError",), "NoneType"),
    Case("target_is_an_int", "engine.lower(add3(), 42)", ("TypeError", "RuntimeError"), "target"),
    Case("target_is_empty", "engine.lower(add3(), '')", ("ValueError", "RuntimeError"), ""),
    Case(
        "target_flag_unknown",
        "engine.lower(add3(), 'llvm -mcpux=skylake')",
        ("ValueError",),
        "-mcpux",
    ),
    Case(
        "target_flag_removed",
        "engine.lower(add3(), 'llvm -runtime=c')",
        ("ValueError",),
        "-runtime",
    ),
    Case(
        "target_kind_unknown", "engine.lower(add3(), 'nokind -mcpu=x')", ("ValueError",), "nokind"
    ),
    Case("ccache_key_of_a_string", "CCacheKey('f', 'llvm')", ("TypeError",), "relax.Function"),
    Case(
        "module_without_a_relax_function",
        "engine.lower(tvm.IRModule({}), 'llvm')",
        ("TypeError", "RuntimeError"),
        "",
    ),
    Case(
        "lower_to_primfunc_of_none",
        "te_compiler.lower_to_primfunc(None, 'llvm')",
        ("TypeError", "RuntimeError"),
        "",
    ),
    Case(
        "jit_many_with_a_non_function",
        "engine.jit_many([add3(), 5], 'llvm')",
        ("TypeError", "RuntimeError"),
        "",
    ),
    # -- module names reach symbol names
    Case(
        "mod_name_with_newline",
        "engine.lower(add3(), 'llvm', mod_name='a\\n')",
        ("ValueError", "RuntimeError"),
        "mod_name",
    ),
    Case(
        "mod_name_with_nul",
        "engine.lower(add3(), 'llvm', mod_name='a\\x00')",
        ("ValueError", "RuntimeError"),
        "mod_name",
    ),
    Case(
        "mod_name_non_ascii",
        "engine.lower(add3(), 'llvm', mod_name='\\u00e9')",
        ("ValueError", "RuntimeError"),
        "mod_name",
    ),
    Case(
        "mod_name_not_a_string",
        "engine.lower(add3(), 'llvm', mod_name=5)",
        ("TypeError", "ValueError", "RuntimeError"),
        "",
    ),
    # -- kernel arguments
    Case("kernel_too_few_arguments", "kernel(x)", ("TypeError",), "argument"),
    Case("kernel_too_many_arguments", "kernel(x, out, out)", ("TypeError",), "argument"),
    Case("kernel_wrong_shape", "kernel(np.ones(5, 'float32'), out)", ("ValueError",), "shape"),
    Case(
        "kernel_wrong_dtype",
        "kernel(np.ones(4, 'int64'), out)",
        ("TypeError", "ValueError"),
        "dtype|float32",
    ),
    Case("kernel_python_list", "kernel([1.0, 2.0, 3.0, 4.0], out)", ("TypeError",), "list"),
    Case(
        "kernel_read_only_output",
        "o = np.zeros(4, 'float32'); o.setflags(write=False); kernel(x, o)",
        ("ValueError",),
        "read-only",
    ),
    Case(
        "kernel_non_contiguous_input",
        "kernel(np.ones(8, 'float32')[::2], out); assert (out == 3).all()",
    ),
    # Misaligned tensors (a view at a byte offset) are copied through aligned memory, outputs
    # copied back: the right result, never a crash.
    Case(
        "kernel_unaligned_tvm_input",
        """
for offset in range(1, 64):
    src = unaligned((4,), offset)
    src.copyfrom(np.arange(4, dtype="float32"))
    got = tvm.runtime.tensor(np.zeros(4, "float32"))
    kernel(src, got)
    assert np.array_equal(got.numpy(), 3 * np.arange(4, dtype="float32")), offset
""",
    ),
    Case(
        "kernel_unaligned_tvm_output",
        """
for offset in range(1, 64):
    dst = unaligned((4,), offset)
    kernel(tvm.runtime.tensor(np.arange(4, dtype="float32")), dst)
    assert np.array_equal(dst.numpy(), 3 * np.arange(4, dtype="float32")), offset
""",
    ),
    # An output that is also an input: refused naming both, or computed as if it were not.
    Case(
        "matmul_output_aliases_input",
        """
a = np.eye(64, dtype="float32") * 2
b = np.arange(64 * 64, dtype="float32").reshape(64, 64) / 64
bt = tvm.runtime.tensor(b)
try:
    mm(tvm.runtime.tensor(a), bt, bt)
except ValueError as err:
    assert "alias" in str(err) or "same memory" in str(err), err
else:
    assert np.allclose(bt.numpy(), a @ b), "aliased output: wrong result"
""",
    ),
    # -- pass configs
    Case(
        "unknown_config_key",
        "tvm.transform.PassContext(config={'tir.not_a_tvm_019_key': True})",
        ("AttributeError",),
        "tir.not_a_tvm_019_key",
    ),
    Case(
        "legacy_key_wrong_type",
        "tvm.transform.PassContext(config={'relay.backend.use_auto_scheduler': 'yes'})",
        ("AttributeError", "TypeError", "ValueError"),
        "use_auto_scheduler",
    ),
    # -- registered globals called from the FFI with the wrong things
    Case(
        "global_lower_with_a_string_key",
        "tvm.get_global_func('relay.backend._CompileEngineLower')(engine, 'key', 'default')",
        ("TypeError", "RuntimeError"),
        "",
    ),
    # -- libraries loaded back (tvm.runtime.load_module as install() serves it)
    Case(
        "load_module_of_a_truncated_library",
        """
import os, tempfile
from compile_engine_compat.tvm_legacy.runtime import load_module
path = os.path.join(tempfile.mkdtemp(), "half.so")
kernel.module.export_library(path)
data = open(path, "rb").read()
os.unlink(path)  # a new file: a truncated copy, as a full disk or a killed scp leaves
open(path, "wb").write(data[: len(data) // 2])
load_module(path)
""",
        ("OSError",),
        "not a whole shared library",
    ),
    Case(
        "load_module_beside_a_garbage_relay_marker",
        """
import os, tempfile
from compile_engine_compat.tvm_legacy.runtime import load_module
path = os.path.join(tempfile.mkdtemp(), "deploy.so")
kernel.module.export_library(path)
open(path + ".relay.json", "wb").write(bytes(range(256)))
load_module(path)
""",
        ("ValueError",),
        r"deploy\.so\.relay\.json: this marker .* cannot be read",
    ),
    Case(
        "relay_tuples_nested_50000_deep",
        """
from compile_engine_compat import relay
x = relay.var("x", shape=(2,), dtype="float32")
t = x
for _ in range(50_000):
    t = relay.Tuple([t])
for _ in range(50_000):
    t = relay.TupleGetItem(t, 0)
relay.build(tvm.IRModule.from_expr(relay.Function([x], relay.add(t, t))), target="llvm")
""",
        ("ValueError",),
        "nests tuples more than 250 deep",
    ),
)
