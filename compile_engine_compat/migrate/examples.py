"""MIGRATION.md's example programs: each row's legacy code and the modern code that does the same.

Data, like the rows of :mod:`compile_engine_compat.api_table`, kept beside the guide's generator
(:mod:`.docs`) instead of in the table: :func:`example` gives a row's pair. ``before`` is
legacy code using the row's name, run under ``compile_engine_compat.install()``; ``after`` is
the modern code that does the same on TVM 0.27. Both follow :data:`GUIDE_PRELUDE` and set
``result``; tests/migrate/test_guide_blocks.py runs every pair and compares the results. Where a
row's note states a difference, both also set ``observed``, which must differ.
"""

from __future__ import annotations

from compile_engine_compat.api_table import LEGACY_CONFIG_KEYS, LegacyApi

__all__ = ["GUIDE_PRELUDE", "example"]


# -- the migration guide's before/after blocks --------------------------------------------------
# Data, like the rows: each row's example in MIGRATION.md, legacy code (``before``, run under
# ``compile_engine_compat.install()``) and the modern code that does the same on TVM 0.27
# (``after``). tests/migrate/test_guide_blocks.py runs every pair and compares ``result``.

#: What every block follows: a two-op Relax function, a target, a device and two inputs.
GUIDE_PRELUDE = '''\
import numpy as np
import tvm
import tvm_ffi
from tvm import relax, te
from tvm.ir import IRModule


def add_exp():
    """exp(x + y) on two float32[4]: two ops, which the legacy engine fused into one kernel."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType([4], "float32"))
    y = relax.Var("y", relax.TensorType([4], "float32"))
    with bb.function("main", [x, y]):
        with bb.dataflow():
            total = bb.emit(relax.op.add(x, y))
            out = bb.emit_output(relax.op.exp(total))
        bb.emit_func_output(out)
    return bb.get()["main"]


func = add_exp()
target = tvm.target.Target("llvm")
dev = tvm.cpu()
a = tvm.runtime.tensor(np.arange(4, dtype="float32"), dev)
b = tvm.runtime.tensor(np.ones(4, dtype="float32"), dev)
'''
_CE = "from tvm.relay.backend import compile_engine\n\n"
_VM = """\
ex = tvm.compile(IRModule({"main": func}), target)
vm = relax.VirtualMachine(ex, dev)
result = vm["main"](a, b).numpy()
"""
_RUN_KERNEL = """\
out = tvm.runtime.empty((4,), "float32", dev)
kernel(a, b, out)
result = out.numpy()
"""
_JIT_AND_RUN = "kernel = compile_engine.get().jit(func, target)\n" + _RUN_KERNEL
_RUN_CACHED = """\
lib = tvm.compile(cached.funcs, target)
out = tvm.runtime.empty((4,), "float32", dev)
lib[cached.prim_fn_var.name_hint](a, b, out)
result = out.numpy()
"""
_CACHE_OWN = """\
executables = {}  # tvm.compile keeps no cache: keep your own, keyed by structure and target
key = (tvm_ffi.StructuralKey(func), str(target))
executables[key] = tvm.compile(IRModule({"main": func}), target)
"""
_SHAPE_RANK_AFTER = """\
ex = tvm.compile(IRModule({"main": func}), target)  # VMShapeLower computes shapes in the VM
result = [len(relax.VirtualMachine(ex, dev)["main"](a, b).shape)]
"""
_KEY_AFTER = """\
key = tvm_ffi.StructuralKey(func)  # keep the key of what you compiled last
tvm.compile(IRModule({"main": func}), target)
result = key == tvm_ffi.StructuralKey(func)
"""
_TE_OUTPUTS = """\
x = te.placeholder((4,), name="x")
outputs = [te.compute((4,), lambda i: x[i] + 1.0, name="y")]
result = [int(d) for d in outputs[0].shape]
"""
_LEGALIZE_ADD = """\
call = func.body.blocks[0].bindings[0].value  # the add
bb = relax.BlockBuilder()
with bb.function("f", list(func.params)):
    legalized = bb.emit(tvm.ir.Op.get("relax.add").get_attr("FLegalize")(bb, call))
    bb.emit_func_output(legalized)
result = [int(d) for d in legalized.ty.shape]
"""
_ADD_INPUTS = 'inputs = [te.placeholder((4,), name="x"), te.placeholder((4,), name="y")]\n'
_TWO_FUNCS_AFTER = """\
f0 = func.with_attr("global_symbol", "f0")
f1 = add_exp().with_attr("global_symbol", "f1")
mod = IRModule({"f0": f0, "f1": f1})
vm = relax.VirtualMachine(tvm.compile(mod, target), dev)  # one build for both
result = np.stack([vm["f0"](a, b).numpy(), vm["f1"](a, b).numpy()])
"""


def _indented(code: str) -> str:
    return "".join(f"    {line}\n" for line in code.splitlines())


_ENGINE_BLOCKS: dict[str, tuple[str, str]] = {
    "compile_engine": (_CE + _JIT_AND_RUN, _VM),
    "compile_engine.get": (
        _CE + "engine = compile_engine.get()  # the process-wide engine and its cache\n"
        "kernel = engine.jit(func, target)\n" + _RUN_KERNEL,
        _VM,
    ),
    "compile_engine.CompileEngine": (
        _CE + "engine: compile_engine.CompileEngine = compile_engine.get()\n"
        "kernel = engine.jit(func, target)\n" + _RUN_KERNEL,
        _VM,
    ),
    "compile_engine.CompileEngine.lower": (
        _CE + "cached = compile_engine.get().lower(func, target)\n"
        "observed = len(cached.funcs.functions)  # 1: one fused PrimFunc for add and exp\n"
        + _RUN_CACHED,
        """\
mod = relax.transform.LegalizeOps()(IRModule({"main": func}))
observed = sum(isinstance(f, tvm.tirx.PrimFunc) for f in mod.functions.values())  # 2: one per op
vm = relax.VirtualMachine(tvm.compile(mod, target), dev)
result = vm["main"](a, b).numpy()
""",
    ),
    "compile_engine.CompileEngine.jit": (
        _CE
        + """\
kernel = compile_engine.get().jit(func, target)
out = tvm.runtime.empty((4,), "float32", dev)
returned = kernel(a, b, out)  # destination-passing: writes into out
observed = returned is None
result = out.numpy()
""",
        """\
ex = tvm.compile(IRModule({"main": func}), target)
vm = relax.VirtualMachine(ex, dev)
returned = vm["main"](a, b)  # the VM allocates the output and returns it
observed = returned is None
result = returned.numpy()
""",
    ),
    "compile_engine.CompileEngine.clear": (
        _CE + "engine = compile_engine.get()\nengine.jit(func, target)\nengine.clear()\n"
        "result = len(engine.items())\n",
        _CACHE_OWN + "executables.clear()\nresult = len(executables)\n",
    ),
    "compile_engine.CompileEngine.items": (
        _CE + "engine = compile_engine.get()\nengine.clear()\nengine.jit(func, target)\n"
        "result = [key.source_func.same_as(func) for key, value in engine.items()]\n",
        _CACHE_OWN + "result = [key[0] == tvm_ffi.StructuralKey(func) for key in executables]\n",
    ),
    "compile_engine.CompileEngine.lower_shape_func": (
        _CE
        + """\
cached = compile_engine.get().lower_shape_func(func, target)
lib = tvm.compile(cached.funcs, target)
shapes = [tvm.runtime.tensor(np.array([4], "int64"), dev) for _ in cached.inputs]
out = tvm.runtime.empty((1,), "int64", dev)
lib[cached.prim_fn_var.name_hint](*shapes, out)
result = list(out.numpy())
""",
        """\
ex = tvm.compile(IRModule({"main": func}), target)  # VMShapeLower computes shapes in the VM
result = list(relax.VirtualMachine(ex, dev)["main"](a, b).shape)
""",
    ),
    "compile_engine.CompileEngine.shape_func_items": (
        _CE
        + """\
engine = compile_engine.get()
engine.lower_shape_func(func, target)
key, value = engine.shape_func_items()[-1]
result = [int(d) for d in value.cached_func.outputs[0].shape]  # a 1-D shape of rank 1
""",
        _SHAPE_RANK_AFTER,
    ),
    "compile_engine.CompileEngine.get_current_ccache_key": (
        _CE + "engine = compile_engine.get()\nengine.jit(func, target)\n"
        "key = engine.get_current_ccache_key()\n"
        "result = tvm_ffi.structural_equal(key.source_func, func)\n",
        _KEY_AFTER,
    ),
    "compile_engine.CompileEngine.dump": (
        _CE + "engine = compile_engine.get()\nengine.jit(func, target)\n"
        'result = "exp" in engine.dump()\n',
        'mod = relax.transform.LegalizeOps()(IRModule({"main": func}))\n'
        'result = "exp" in mod.script()\n',
    ),
    "compile_engine.CCacheKey": (
        _CE
        + """\
engine = compile_engine.get()
first = engine.lower(compile_engine.CCacheKey(func, target))
again = engine.lower(compile_engine.CCacheKey(func, tvm.target.Target("llvm")))
observed = again is first  # an equal key hits the cache
result = first.funcs is not None
""",
        """\
cache = {(tvm_ffi.StructuralKey(func), str(target)): tvm.compile(IRModule({"main": func}), target)}
observed = (tvm_ffi.StructuralKey(func), tvm.target.Target("llvm")) in cache  # never: by identity
result = (tvm_ffi.StructuralKey(add_exp()), str(tvm.target.Target("llvm"))) in cache
""",
    ),
    "compile_engine.CCacheValue": (
        _CE + "engine = compile_engine.get()\nengine.jit(func, target)\n"
        "key, value = engine.items()[-1]\n"
        "result = isinstance(value, compile_engine.CCacheValue)\n",
        'ex = tvm.compile(IRModule({"main": func}), target)\n'
        "result = isinstance(ex, tvm.runtime.Executable)\n",
    ),
    "compile_engine.LoweredOutput": (
        _CE
        + """\
x = te.placeholder((4,), name="x")
y = te.compute((4,), lambda i: x[i] + 1.0, name="y")
lowered = compile_engine.LoweredOutput([y], None)
result = [int(d) for d in lowered.outputs[0].shape]
""",
        _TE_OUTPUTS,
    ),
    "compile_engine.lower_call": (
        _CE
        + "call = func.body.blocks[0].bindings[0].value  # the add\n"
        + _ADD_INPUTS
        + "lowered = compile_engine.lower_call(call, inputs, target)\n"
        "result = [int(d) for d in lowered.outputs[0].shape]\n",
        _LEGALIZE_ADD,
    ),
    "compile_engine.get_shape": (
        _CE + "result = [int(d) for d in compile_engine.get_shape([4, 8])]\n",
        'result = [int(d) for d in relax.TensorType([4, 8], "float32").shape.values]\n',
    ),
    "compile_engine.select_implementation": (
        _CE + _ADD_INPUTS + "impl, outputs = compile_engine.select_implementation(\n"
        '    "relax.add", None, inputs, None, target\n)\n'
        "result = [int(d) for d in outputs[0].shape]\n",
        _LEGALIZE_ADD,
    ),
    "compile_engine.get_valid_implementations": (
        _CE + _ADD_INPUTS + "implementations = compile_engine.get_valid_implementations(\n"
        '    "relax.add", None, inputs, None, target\n)\n'
        "result = len(implementations) >= 1\n",
        'result = tvm.ir.Op.get("relax.add").get_attr("FLegalize") is not None\n',
    ),
    "compile_engine.CompileEngine.lower_many": (
        _CE
        + """\
result = []
for cached in compile_engine.get().lower_many([func, add_exp()], target):
    lib = tvm.compile(cached.funcs, target)
    out = tvm.runtime.empty((4,), "float32", dev)
    lib[cached.prim_fn_var.name_hint](a, b, out)
    result.append(out.numpy())
result = np.stack(result)
""",
        _TWO_FUNCS_AFTER,
    ),
    "compile_engine.CompileEngine.jit_many": (
        _CE
        + """\
result = []
for kernel in compile_engine.get().jit_many([func, add_exp()], target):
    out = tvm.runtime.empty((4,), "float32", dev)
    kernel(a, b, out)
    result.append(out.numpy())
result = np.stack(result)
""",
        _TWO_FUNCS_AFTER,
    ),
}


def _te_spelling(code: str) -> str:
    """A compile_engine block in te_compiler's names (TVM 0.8-0.19 mirrored the API)."""
    return code.replace("compile_engine", "te_compiler").replace("CompileEngine", "TECompiler")


_TE_BLOCKS = {
    _te_spelling(name): (_te_spelling(before), after)
    for name, (before, after) in _ENGINE_BLOCKS.items()
}
_TE_BLOCKS["te_compiler.lower_to_primfunc"] = (
    _te_spelling(_CE)
    + """\
prim = te_compiler.lower_to_primfunc(func, target)  # one PrimFunc for the whole function
lib = tvm.compile(IRModule({"main": prim}), target)
out = tvm.runtime.empty((4,), "float32", dev)
lib["main"](a, b, out)
result = out.numpy()
""",
    """\
mod = relax.transform.LegalizeOps()(IRModule({"main": func}))  # one PrimFunc per op
vm = relax.VirtualMachine(tvm.compile(mod, target), dev)
result = vm["main"](a, b).numpy()
""",
)


def _global_blocks() -> dict[str, tuple[str, str]]:
    """The registered globals' blocks: each called through ``tvm.get_global_func``."""
    blocks: dict[str, tuple[str, str]] = {}
    key = 'key = tvm.get_global_func("relay.backend._make_CCacheKey")(func, target)\n'
    for prefix, module in (("_CompileEngine", "compile_engine"), ("_TECompiler", "te_compiler")):
        setup = (
            f"import tvm.relay.backend.{module}  # registers relay.backend.*, as TVM did\n\n"
            f'engine = tvm.get_global_func("relay.backend.{prefix}Global")()\n'
        )

        def call(name: str, args: str, prefix: str = prefix) -> str:
            return f'tvm.get_global_func("relay.backend.{prefix}{name}")({args})'

        blocks[f"relay.backend.{prefix}Global"] = (
            setup + "kernel = engine.jit(func, target)\n" + _RUN_KERNEL,
            _VM,
        )
        blocks[f"relay.backend.{prefix}Clear"] = (
            setup + f"engine.jit(func, target)\n{call('Clear', 'engine')}\n"
            "result = len(engine.items())\n",
            _CACHE_OWN + "executables.clear()\nresult = len(executables)\n",
        )
        blocks[f"relay.backend.{prefix}Lower"] = (
            setup
            + key
            + f"cached = {call('Lower', 'engine, key, MOD_NAME')}\n".replace(
                "MOD_NAME", '"default"'
            )
            + _RUN_CACHED,
            _VM,
        )
        blocks[f"relay.backend.{prefix}JIT"] = (
            setup + key + f"kernel = {call('JIT', 'engine, key')}\n" + _RUN_KERNEL,
            _VM,
        )
        blocks[f"relay.backend.{prefix}ListItems"] = (
            setup + "engine.clear()\nengine.jit(func, target)\n"
            f"flat = {call('ListItems', 'engine')}\nresult = len(flat)  # key, value, ...\n",
            _CACHE_OWN + "result = len([part for item in executables.items() for part in item])\n",
        )
    setup = "import tvm.relay.backend.compile_engine  # registers relay.backend.*, as TVM did\n\n"
    engine = 'engine = tvm.get_global_func("relay.backend._CompileEngineGlobal")()\n'
    blocks["relay.backend._make_LoweredOutput"] = (
        setup
        + """\
x = te.placeholder((4,), name="x")
y = te.compute((4,), lambda i: x[i] + 1.0, name="y")
lowered = tvm.get_global_func("relay.backend._make_LoweredOutput")([y], None)
result = [int(d) for d in lowered.outputs[0].shape]
""",
        _TE_OUTPUTS,
    )
    blocks["relay.backend._make_CCacheKey"] = (
        setup + key + "result = tvm_ffi.structural_equal(key.source_func, func)\n",
        "key = (tvm_ffi.StructuralKey(func), str(target))\n"
        "result = key[0] == tvm_ffi.StructuralKey(add_exp())\n",
    )
    blocks["relay.backend._CompileEngineLowerShapeFunc"] = (
        setup
        + engine
        + key
        + 'lower = tvm.get_global_func("relay.backend._CompileEngineLowerShapeFunc")\n'
        + "cached = lower(engine, key)\n"
        "result = [int(d) for d in cached.outputs[0].shape]  # a 1-D shape of rank 1\n",
        _SHAPE_RANK_AFTER,
    )
    blocks["relay.backend._CompileLowerExternalFunctions"] = (
        setup
        + engine
        + 'external = tvm.get_global_func("relay.backend._CompileLowerExternalFunctions")\n'
        + "result = list(external(engine))\n",
        'mod = IRModule({"main": func})  # external (BYOC) functions carry a "Codegen" attribute\n'
        "result = [\n"
        "    gv\n"
        "    for gv, f in mod.functions.items()\n"
        '    if f.attrs is not None and "Codegen" in f.attrs\n'
        "]\n",
    )
    blocks["relay.backend._CompileEngineListShapeFuncItems"] = (
        setup + engine + "engine.lower_shape_func(func, target)\n"
        'items = tvm.get_global_func("relay.backend._CompileEngineListShapeFuncItems")\n'
        "flat = items(engine)\n"
        "result = [int(d) for d in flat[-1].cached_func.outputs[0].shape]\n",
        _SHAPE_RANK_AFTER,
    )
    blocks["relay.backend._CompileEngineGetCurrentCCacheKey"] = (
        setup + engine + "engine.jit(func, target)\n"
        'key = tvm.get_global_func("relay.backend._CompileEngineGetCurrentCCacheKey")(engine)\n'
        "result = tvm_ffi.structural_equal(key.source_func, func)\n",
        _KEY_AFTER,
    )
    blocks["relay.backend.lower_call"] = (
        setup
        + "call = func.body.blocks[0].bindings[0].value  # the add\n"
        + _ADD_INPUTS
        + 'lowered = tvm.get_global_func("relay.backend.lower_call")(call, inputs, target)\n'
        "result = [int(d) for d in lowered.outputs[0].shape]\n",
        _LEGALIZE_ADD,
    )
    return blocks


_RELAY_GRAPH = """\
from tvm import relay

x = relay.var("x", shape=(4,), dtype="float32")
y = relay.var("y", shape=(4,), dtype="float32")
mod = tvm.IRModule.from_expr(relay.Function([x, y], relay.exp(relay.add(x, y))))
"""
_RELAY_BUILD_AND_RUN = """\
lib = relay.build(mod, target="llvm")
from tvm.contrib import graph_executor

module = graph_executor.GraphModule(lib["default"](dev))
module.set_input("x", a)
module.set_input("y", b)
module.run()
result = module.get_output(0).numpy()
"""
_RELAY_BUILD = _RELAY_GRAPH + _RELAY_BUILD_AND_RUN
# -- Relay programs end to end (frontends, export and reload): the examples' texts ----------
_ONNX_MODEL = """\
import onnx
from onnx import TensorProto, helper

x_info = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
y_info = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
out_info = helper.make_tensor_value_info("out", TensorProto.FLOAT, [4])
nodes = [helper.make_node("Add", ["x", "y"], ["s"]), helper.make_node("Exp", ["s"], ["out"])]
graph = helper.make_graph(nodes, "add_exp", [x_info, y_info], [out_info])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
"""
_ONNX_BEFORE = """\
from tvm import relay
from tvm.contrib import graph_executor

mod, params = relay.frontend.from_onnx(model, {"x": (4,), "y": (4,)})
lib = relay.build(mod, target="llvm", params=params)
module = graph_executor.GraphModule(lib["default"](dev))
module.set_input("x", a)
module.set_input("y", b)
module.run()
result = module.get_output(0).numpy()
"""
_ONNX_AFTER = """\
from tvm.relax.frontend.onnx import from_onnx

mod = from_onnx(model, {"x": (4,), "y": (4,)}, sanitize_input_names=False)
vm = relax.VirtualMachine(tvm.compile(mod, target), dev)
result = vm["main"](a, b).numpy()
"""
_TORCH_MODEL = """\
import torch


class AddExp(torch.nn.Module):
    def forward(self, x, y):
        return torch.exp(x + y)


example = (torch.zeros(4), torch.zeros(4))
"""
_TORCH_BEFORE = """\
from tvm import relay

traced = torch.jit.trace(AddExp(), example)
mod, params = relay.frontend.from_pytorch(traced, [("x", (4,)), ("y", (4,))])
run = relay.create_executor("graph", mod=mod, device=dev, target="llvm").evaluate()
result = run(a, b, **params).numpy()
"""
_TORCH_AFTER = """\
from tvm.relax.frontend.torch import from_exported_program

program = torch.export.export(AddExp(), example)
mod = from_exported_program(program, unwrap_unit_return_tuple=True)
vm = relax.VirtualMachine(tvm.compile(mod, target), dev)
result = vm["main"](a, b).numpy()
"""
_RELOAD_BEFORE = """\
import os
import tempfile

from tvm.contrib import graph_executor

lib = relay.build(mod, target="llvm")
path = os.path.join(tempfile.mkdtemp(), "deploy.so")
lib.export_library(path)
loaded = tvm.runtime.load_module(path)
module = graph_executor.GraphModule(loaded["default"](dev))
module.set_input("x", a)
module.set_input("y", b)
module.run()
result = module.get_output(0).numpy()
"""
_RELOAD_AFTER = """\
import os
import tempfile

path = os.path.join(tempfile.mkdtemp(), "deploy.so")
tvm.compile(IRModule({"main": func}), target).export_library(path)
vm = relax.VirtualMachine(tvm.runtime.load_module(path), dev)
result = vm["main"](a, b).numpy()
"""
_OTHER_BLOCKS: dict[str, tuple[str, str]] = {
    "relay.backend.use_auto_scheduler": (
        _CE
        + 'with tvm.transform.PassContext(config={"relay.backend.use_auto_scheduler": True}):\n'
        + _indented(_JIT_AND_RUN),
        _VM,
    ),
    "relay.backend.disable_compile_engine_cache": (
        _CE
        + "with tvm.transform.PassContext(\n"
        + '    config={"relay.backend.disable_compile_engine_cache": True}\n'
        + "):\n"
        + _indented(_JIT_AND_RUN),
        _VM,
    ),
    "target.cli_string": (
        _CE + 'kernel = compile_engine.get().jit(func, "llvm -opt-level=2")\n' + _RUN_KERNEL,
        'modern = tvm.target.Target({"kind": "llvm", "opt-level": 2})\n'
        'ex = tvm.compile(IRModule({"main": func}), modern)\n'
        'result = relax.VirtualMachine(ex, dev)["main"](a, b).numpy()\n',
    ),
    "relay.build": (_RELAY_BUILD, _VM),
    "relay.create_executor": (
        _RELAY_GRAPH
        + 'run = relay.create_executor("vm", mod=mod, device=dev, target="llvm").evaluate()\n'
        "result = run(a, b).numpy()\n",
        _VM,
    ),
    "relay.building": (
        _RELAY_GRAPH + "ex = tvm.compile(mod, target)  # the front end built a Relax function\n"
        'result = relax.VirtualMachine(ex, dev)["main"](a, b).numpy()\n',
        _VM,
    ),
    "relay.op.strategy.wrap_topi_schedule": (
        """\
from tvm.relay.op.strategy import wrap_topi_schedule


def schedule_my_op(outs):  # a TE schedule: it no longer runs
    return None


schedule = wrap_topi_schedule(schedule_my_op)
result = callable(schedule)
""",
        """\
def schedule(sch, block_names):  # a tvm.s_tir.Schedule, and the op's block names
    for name in block_names:
        sch.get_loops(sch.get_block(name))


result = callable(schedule)
""",
    ),
    "relay.unsupported": (
        """\
from tvm.relay.backend import graph_executor_codegen

# gone: refused at the call, naming the replacement
codegen = graph_executor_codegen.GraphExecutorCodegen(None, "llvm")
result = callable(codegen)
""",
        "result = callable(tvm.compile)  # relay.build and tvm.compile replace the codegen\n",
    ),
    "relay.prelude": (
        """\
from tvm import relay

mod = tvm.IRModule()
prelude = relay.prelude.Prelude(mod)
_, cons, nil = mod.get_type("List")
x, y = relay.var("x", shape=(4,)), relay.var("y", shape=(4,))
xs = cons(relay.const(a.numpy()), cons(relay.const(b.numpy()), nil()))
total = prelude.foldl(relay.Function([x, y], x + y), relay.const(np.zeros(4, "float32")), xs)
result = relay.create_executor("debug", mod=mod).evaluate(total).numpy()
""",
        """\
values = [a.numpy(), b.numpy()]  # a Python list replaces the prelude's List
result = np.zeros(4, "float32")
for value in values:
    result = result + value
""",
    ),
    "relay.testing.run_as_python": (
        """\
from tvm import relay

x = relay.const(a.numpy()) + relay.const(b.numpy())
result = relay.testing.run_as_python(relay.exp(x)).numpy()
""",
        _VM,
    ),
    "relay.qnn.op": (
        """\
from tvm import relay
from tvm.contrib import graph_executor

x = relay.var("x", shape=(4,), dtype="float32")
q = relay.qnn.op.quantize(x, relay.const(0.5), relay.const(3, "int32"), out_dtype="int8")
lib = relay.build(tvm.IRModule.from_expr(relay.Function([x], q)), target="llvm")
module = graph_executor.GraphModule(lib["default"](dev))
module.set_input("x", a)
module.run()
result = module.get_output(0).numpy()
""",
        """\
bb = relax.BlockBuilder()
x = relax.Var("x", relax.TensorType([4], "float32"))
with bb.function("main", [x]):
    with bb.dataflow():
        scale, zero_point = relax.const(0.5, "float32"), relax.const(3, "int8")
        out = bb.emit_output(relax.op.quantize(x, scale, zero_point, out_dtype="int8"))
    bb.emit_func_output(out)
result = relax.VirtualMachine(tvm.compile(bb.get(), target), dev)["main"](a).numpy()
""",
    ),
    "relay.quantize": (
        """\
from tvm import relay

x = relay.var("x", shape=(1, 4), dtype="float32")
w = relay.const(np.array([[0.5, -0.5, 0.25, 0.75], [0.75, 0.5, -0.25, 0.5]], "float32"))
mod = tvm.IRModule.from_expr(relay.Function([x], relay.nn.dense(x, w)))
with relay.quantize.qconfig(global_scale=4.0, skip_dense_layer=False):
    qmod = relay.quantize.quantize(mod)  # int8 dense, int32 accumulation
run = relay.create_executor("vm", mod=qmod, device=dev, target="llvm").evaluate()
result = run(a.numpy().reshape(1, 4)).numpy()
""",
        """\
w = np.array([[0.5, -0.5, 0.25, 0.75], [0.75, 0.5, -0.25, 0.5]], "float32")
w_int8 = np.round(w * 128).astype("int8")  # weight scale 1/128, input scale 1/32
bb = relax.BlockBuilder()
x = relax.Var("x", relax.TensorType([1, 4], "float32"))
with bb.function("main", [x]):
    with bb.dataflow():
        scaled = relax.op.round(relax.op.multiply(x, relax.const(32.0, "float32")))
        x_int8 = bb.emit(relax.op.astype(relax.op.clip(scaled, -127, 127), "int8"))
        acc = bb.emit(relax.op.matmul(x_int8, relax.const(w_int8.T), out_dtype="int32"))
        real = relax.op.multiply(relax.op.astype(acc, "float32"), relax.const(1 / 4096, "float32"))
        out = bb.emit_output(real)
    bb.emit_func_output(out)
vm = relax.VirtualMachine(tvm.compile(bb.get(), target), dev)
result = vm["main"](tvm.runtime.tensor(a.numpy().reshape(1, 4), dev)).numpy()
""",
    ),
    "tvm.contrib.graph_executor.GraphModule": (_RELAY_BUILD, _VM),
    # -- Relay programs end to end: frontends, export and reload, the Relay VM ----------------
    "relay.frontend.from_onnx": (_ONNX_MODEL + _ONNX_BEFORE, _ONNX_MODEL + _ONNX_AFTER),
    "relay.frontend.from_pytorch": (_TORCH_MODEL + _TORCH_BEFORE, _TORCH_MODEL + _TORCH_AFTER),
    "relay.frontend.from_tflite": (
        "from tvm.relay.frontend import from_tflite\n\nresult = callable(from_tflite)\n",
        "from tvm.relax.frontend.tflite import from_tflite\n\nresult = callable(from_tflite)\n",
    ),
    "relay.frontend.unserved": (
        "from tvm import relay\n\n"
        "result = relay.frontend.from_keras(None)  # refused: names tf2onnx\n",
        "from tvm.relax.frontend.onnx import from_onnx  # after tf2onnx\n\n"
        "result = callable(from_onnx)\n",
    ),
    "tvm.runtime.load_module": (_RELAY_GRAPH + _RELOAD_BEFORE, _RELOAD_AFTER),
    "relay.vm": (
        _RELAY_GRAPH
        + """\
exe = relay.vm.compile(mod, target="llvm")
vm = tvm.runtime.vm.VirtualMachine(exe, dev)
result = vm.run(a, b).numpy()
""",
        _VM,
    ),
    "relay.save_param_dict": (
        """\
from tvm import relay

blob = relay.save_param_dict({"w": a})
result = relay.load_param_dict(blob)["w"].numpy()
""",
        'blob = tvm.runtime.save_param_dict({"w": a})\n'
        'result = tvm.runtime.load_param_dict(blob)["w"].numpy()\n',
    ),
    "tvm.autotvm.apply_history_best": (
        "from tvm import autotvm\n"
        + _CE
        + "with autotvm.apply_history_best(None):  # no records: nothing is applied\n"
        + _indented(_JIT_AND_RUN),
        _VM,
    ),
    "tvm.nd": (
        'x = tvm.nd.array(np.arange(4, dtype="float32"), dev)\nresult = x.asnumpy()\n',
        'x = tvm.runtime.tensor(np.arange(4, dtype="float32"), dev)\nresult = x.numpy()\n',
    ),
    "tvm.context": (
        'result = str(tvm.context("cpu", 0))\n',
        'result = str(tvm.device("cpu", 0))\n',
    ),
    "tvm.device": (
        'result = str(tvm.device("llvm", 0))\n',
        'result = str(tvm.device("cpu", 0))\n',
    ),
    "tvm.gpu": ("result = str(tvm.gpu(0))\n", "result = str(tvm.cuda(0))\n"),
    "tvm.cl": ("result = str(tvm.cl(0))\n", "result = str(tvm.opencl(0))\n"),
    "tvm.mtl": ("result = str(tvm.mtl(0))\n", "result = str(tvm.metal(0))\n"),
    "tvm.autotvm": (
        """\
from tvm import autotvm


@autotvm.register_topi_compute("guide_add_one.generic")
def add_one(cfg, x):
    return te.compute(x.shape, lambda i: x[i] + 1.0, name="add_one")


out = add_one(te.placeholder((4,), name="x"))
result = [int(d) for d in out.shape]
""",
        """\
def add_one(x):
    return te.compute(x.shape, lambda i: x[i] + 1.0, name="add_one")


out = add_one(te.placeholder((4,), name="x"))
result = [int(d) for d in out.shape]
""",
    ),
}
# -- Relay programs end to end: passes, workloads, tuning, targets, nd (i28b) -------------------
_PASSES_BEFORE = """\
from tvm import relay

x = relay.var("x", shape=(4,), dtype="float32")
y = relay.var("y", shape=(4,), dtype="float32")
mod = tvm.IRModule.from_expr(relay.Function([x, y], relay.exp(relay.add(x, y))))
seq = tvm.transform.Sequential([relay.transform.InferType(), relay.transform.FoldConstant()])
with tvm.transform.PassContext(opt_level=3):
    mod = seq(mod)
ex = tvm.compile(mod, target)
result = relax.VirtualMachine(ex, dev)["main"](a, b).numpy()
"""
_PASSES_AFTER = """\
seq = tvm.transform.Sequential([relax.transform.FoldConstant()])
with tvm.transform.PassContext(opt_level=3):
    mod = seq(IRModule({"main": func}))
ex = tvm.compile(mod, target)
result = relax.VirtualMachine(ex, dev)["main"](a, b).numpy()
"""
_BIND_BEFORE = """\
from tvm import relay

mod = IRModule({"main": func})
mod["main"] = relay.build_module.bind_params_by_name(mod["main"], {"y": b})
result = relax.VirtualMachine(tvm.compile(mod, target), dev)["main"](a).numpy()
"""
_BIND_AFTER = """\
mod = relax.transform.BindParams("main", {"y": b})(IRModule({"main": func}))
result = relax.VirtualMachine(tvm.compile(mod, target), dev)["main"](a).numpy()
"""
_ANALYSIS_BEFORE = """\
from tvm import relay

x = relay.var("x", shape=(4,), dtype="float32")
y = relay.var("y", shape=(4,), dtype="float32")
result = sorted(v.name_hint for v in relay.analysis.free_vars(relay.add(x, relay.exp(y))))
"""
_ANALYSIS_AFTER = """\
result = sorted(v.name for v in relax.analysis.free_vars(func.body))
"""
_WORKLOAD_BEFORE = """\
from tvm import relay

mod, params = relay.testing.mlp.get_workload(batch_size=1, image_shape=(1, 4, 4), num_classes=3)
result = sorted((name, tuple(value.shape)) for name, value in params.items())
"""
_WORKLOAD_AFTER = """\
from tvm.relax.frontend import nn


class MLP(nn.Module):
    def __init__(self):
        self.fc1 = nn.Linear(16, 128)
        self.fc2 = nn.Linear(128, 64)
        self.fc3 = nn.Linear(64, 3)


shapes = {name: tuple(p.shape) for name, p in MLP().named_parameters()}
result = sorted((n.replace(".weight", "_weight").replace(".", "_"), s) for n, s in shapes.items())
"""
_TUNING_BEFORE = """\
from tvm import autotvm, relay

x = relay.var("x", shape=(4,), dtype="float32")
mod = tvm.IRModule.from_expr(relay.Function([x], relay.exp(x)))
tasks = autotvm.task.extract_from_program(mod["main"], target="llvm", params={})
result = isinstance(tasks, list)  # exp has no reduction: no task to tune
"""
_TUNING_AFTER = """\
from tvm.s_tir import meta_schedule

result = callable(meta_schedule.tune_tir)
"""
_AUTO_SCHEDULER_BEFORE = """\
from tvm import auto_scheduler

with auto_scheduler.ApplyHistoryBest(None):  # no records: nothing is applied
    ex = tvm.compile(IRModule({"main": func}), target)
result = relax.VirtualMachine(ex, dev)["main"](a, b).numpy()
"""
_META_SCHEDULE_BEFORE = """\
from tvm import meta_schedule as ms, relay

x = relay.var("x", shape=(4,), dtype="float32")
mod = tvm.IRModule.from_expr(relay.Function([x], relay.exp(x)))
tasks = ms.relay_integration.extract_tasks(mod, target="llvm", params={})
result = isinstance(tasks, list)
"""
_META_SCHEDULE_AFTER = """\
from tvm.s_tir.meta_schedule import relax_integration

result = callable(relax_integration.tune_relax) and callable(relax_integration.compile_relax)
"""
_TARGET_BEFORE = """\
result = str(tvm.target.Target("llvm -mcpu=core-avx2").attrs["mcpu"])
"""
_TARGET_AFTER = """\
result = str(tvm.target.Target({"kind": "llvm", "mcpu": "core-avx2"}).attrs["mcpu"])
"""
_DLPACK_BEFORE = """\
x = tvm.nd.from_dlpack(tvm.nd.array(np.arange(4, dtype="float32"), dev).to_dlpack())
result = x.asnumpy()
"""
_DLPACK_AFTER = """\
x = tvm.runtime.from_dlpack(tvm.runtime.tensor(np.arange(4, dtype="float32"), dev))
result = x.numpy()
"""
_MORE_PASSES_BEFORE = """\
from tvm import relay

x = relay.var("x", shape=(4,), dtype="float32")
y = relay.var("y", shape=(4,), dtype="float32")
mod = tvm.IRModule.from_expr(relay.Function([x, y], relay.exp(relay.add(x, y))))
passes = [relay.transform.SimplifyExpr(), relay.transform.FastMath(), relay.transform.LambdaLift()]
with tvm.transform.PassContext(opt_level=4):
    mod = tvm.transform.Sequential(passes)(mod)
ex = tvm.compile(mod, target)
result = relax.VirtualMachine(ex, dev)["main"](a, b).numpy()
"""
_MORE_PASSES_AFTER = """\
passes = [relax.transform.FastMathTransform(), relax.transform.LambdaLift()]
with tvm.transform.PassContext(opt_level=4):
    mod = tvm.transform.Sequential(passes)(IRModule({"main": func}))
ex = tvm.compile(mod, target)
result = relax.VirtualMachine(ex, dev)["main"](a, b).numpy()
"""
_EXPR_FUNCTOR_BEFORE = """\
from tvm import relay


class AddToSubtract(relay.ExprMutator):
    def visit_call(self, call):
        call = super().visit_call(call)
        if call.op == relay.op.get("add"):
            return relay.subtract(call.args[0], call.args[1])
        return call


x = relay.var("x", shape=(4,), dtype="float32")
y = relay.var("y", shape=(4,), dtype="float32")
func = AddToSubtract().visit(relay.Function([x, y], relay.exp(relay.add(x, y))))
ex = tvm.compile(tvm.IRModule.from_expr(func), target)
result = relax.VirtualMachine(ex, dev)["main"](a, b).numpy()
"""
_EXPR_FUNCTOR_AFTER = """\
@relax.expr_functor.mutator
class AddToSubtract(relax.PyExprMutator):
    def visit_call_(self, call):
        call = super().visit_call_(call)
        if call.op == tvm.ir.Op.get("relax.add"):
            return relax.op.subtract(call.args[0], call.args[1])
        return call


ex = tvm.compile(IRModule({"main": AddToSubtract().visit_expr(func)}), target)
result = relax.VirtualMachine(ex, dev)["main"](a, b).numpy()
"""
_PROGRAM_BLOCKS: dict[str, tuple[str, str]] = {
    "relay.transform": (_PASSES_BEFORE, _PASSES_AFTER),
    "relay.build_module.bind_params_by_name": (_BIND_BEFORE, _BIND_AFTER),
    "relay.analysis": (_ANALYSIS_BEFORE, _ANALYSIS_AFTER),
    "relay.transform.more_passes": (_MORE_PASSES_BEFORE, _MORE_PASSES_AFTER),
    "relay.expr_functor": (_EXPR_FUNCTOR_BEFORE, _EXPR_FUNCTOR_AFTER),
    "relay.testing.workloads": (_WORKLOAD_BEFORE, _WORKLOAD_AFTER),
    "tvm.autotvm.tuning": (_TUNING_BEFORE, _TUNING_AFTER),
    "tvm.auto_scheduler": (_AUTO_SCHEDULER_BEFORE, _VM),
    "tvm.meta_schedule.relay_integration": (_META_SCHEDULE_BEFORE, _META_SCHEDULE_AFTER),
    "target.constructors": (_TARGET_BEFORE, _TARGET_AFTER),
    "tvm.nd.dlpack": (_DLPACK_BEFORE, _DLPACK_AFTER),
}
# -- end of the Relay-programs blocks -----------------------------------------------------------

# -- the vendors' path (BYOC): exp(add(x, y)) as one composite, partitioned, run by a codegen --
_PATTERN_IMPORT = "from tvm.relay.dataflow_pattern import is_op, wildcard\n"
_BYOC_GRAPH = _PATTERN_IMPORT + _RELAY_GRAPH
_TABLE_BEFORE = 'table = [("guide.add_exp", is_op("exp")(is_op("add")(wildcard(), wildcard())))]\n'
_PARTITION_BEFORE = """\
mod = relay.transform.MergeComposite(table)(mod)
mod = relay.transform.AnnotateTarget(["guide"])(mod)  # composites named guide.*
mod = relay.transform.MergeCompilerRegions()(mod)
mod = relay.transform.PartitionGraph()(mod)
"""
_PATTERNS_AFTER = """\
from tvm.relax.dpl import is_op, wildcard

patterns = [("guide.add_exp", is_op("relax.exp")(is_op("relax.add")(wildcard(), wildcard())))]
"""
_FUSE_AFTER = 'mod = relax.transform.FuseOpsByPattern(patterns)(IRModule({"main": func}))\n'
_RUN_MOD = """\
vm = relax.VirtualMachine(tvm.compile(mod, target), dev)
result = vm["main"](a, b).numpy()
"""
#: The codegens' work: a partition becomes a kernel exported under its global_symbol.
_PARTITION_KERNEL = """\


def exp_add_kernel(symbol):  # exp(x + y), as the accelerator's library would run it
    x = te.placeholder((4,), name="x")
    y = te.placeholder((4,), name="y")
    out = te.compute((4,), lambda i: te.exp(x[i] + y[i]), name="out")
    prim = te.create_prim_func([x, y, out]).with_attr("global_symbol", symbol)
    return tvm.tirx.build(prim, target)


"""
_BYOC_BLOCKS: dict[str, tuple[str, str]] = {
    "relay.dataflow_pattern": (
        _BYOC_GRAPH
        + """\
pattern = is_op("exp")(is_op("add")(wildcard(), wildcard()))
total = relay.add(x, y)
result = [pattern.match(relay.exp(total)), pattern.match(total)]
""",
        """\
from tvm.relax.dpl import is_op, wildcard

pattern = is_op("relax.exp")(is_op("relax.add")(wildcard(), wildcard()))
var2val = relax.analysis.get_var2val(func)  # Relax binds each call to a variable
total, exp = (binding.value for binding in func.body.blocks[0].bindings)
result = [pattern.match(exp, var2val), pattern.match(total, var2val)]
""",
    ),
    "relay.op.contrib.register_pattern_table": (
        _PATTERN_IMPORT
        + """\
from tvm.relay.op.contrib.register import get_pattern_table, register_pattern_table


@register_pattern_table("guide")
def guide_patterns():
    return [("guide.add_exp", is_op("exp")(is_op("add")(wildcard(), wildcard())))]


result = [entry[0] for entry in get_pattern_table("guide")]
""",
        "from tvm.relax.backend import pattern_registry\n"
        + _PATTERNS_AFTER
        + "pattern_registry.register_patterns(patterns)\n"
        'result = [entry.name for entry in pattern_registry.get_patterns_with_prefix("guide.")]\n',
    ),
    "relay.transform.MergeComposite": (
        _BYOC_GRAPH
        + _TABLE_BEFORE
        + "mod = relay.transform.MergeComposite(table)(mod)\n"
        + _RELAY_BUILD_AND_RUN,
        _PATTERNS_AFTER + _FUSE_AFTER + _RUN_MOD,
    ),
    "relay.transform.PartitionGraph": (
        _BYOC_GRAPH
        + _TABLE_BEFORE
        + _PARTITION_BEFORE
        + "result = len(mod.functions)  # main and one partition for compiler guide\n",
        _PATTERNS_AFTER
        + _FUSE_AFTER
        + "mod = relax.transform.MergeCompositeFunctions()(mod)  # Codegen: guide\n"
        "result = len(mod.functions)\n",
    ),
    "relay.ext": (
        _BYOC_GRAPH
        + _PARTITION_KERNEL
        + """\
@tvm.register_func("relay.ext.guide")
def guide_codegen(partition):  # the partition's Relay function in, a runtime module out
    return exp_add_kernel(str(partition.attrs["global_symbol"]))


"""
        + _TABLE_BEFORE
        + _PARTITION_BEFORE
        + _RELAY_BUILD_AND_RUN,
        _PATTERNS_AFTER.replace('"guide.', '"guide_relax.')
        + _PARTITION_KERNEL
        + """\
@tvm.register_global_func("relax.ext.guide_relax")
def guide_codegen(partitions, options, constant_names):  # Relax functions in, modules out
    return [exp_add_kernel(str(f.attrs["global_symbol"])) for f in partitions]


fuse = relax.transform.FuseOpsByPattern(patterns, annotate_codegen=True)
mod = relax.transform.RunCodegen()(fuse(IRModule({"main": func})))
"""
        + _RUN_MOD,
    ),
}

_BLOCKS: dict[str, tuple[str, str]] = {
    **_ENGINE_BLOCKS,
    **_TE_BLOCKS,
    **_global_blocks(),
    **_OTHER_BLOCKS,
    **_PROGRAM_BLOCKS,
    **_BYOC_BLOCKS,
}


def _config_blocks(key: str, new: str | None) -> tuple[str, str]:
    """A legacy pass-config key's blocks: the config a PassContext ends up with."""
    value = _CONFIG_VALUES.get(key, "True")
    read = "    result = {key: str(value) for key, value in ctx.config.items()}\n"
    before = f"with tvm.transform.PassContext(config={{{key!r}: {value}}}) as ctx:\n" + read
    if new is not None:
        after = f"with tvm.transform.PassContext(config={{{new!r}: {value}}}) as ctx:\n" + read
    else:
        after = "with tvm.transform.PassContext(config={}) as ctx:  # the key is dropped\n" + read
    return before, after


#: A value of each legacy pass-config key that is not a flag (True for the others): what the
#: TVM 0.27 key it became accepts (a config object takes {} for its defaults).
_CONFIG_VALUES = {
    "tir.RemoveNoOp": "{}",
    "tir.UnrollLoop": "{}",
    "tir.add_lower_pass": "[]",
    "tir.vtcm_capacity": "1",
    "tir.HoistExpression": "{}",
    "tir.HoistIfThenElse": "{}",
    "tir.InjectDoubleBuffer": "{}",
    "tir.LoopPartition": "{}",
    "tir.lwp_max_depth": "1",
    "tir.lwp_min_height": "1",
    "tir.Simplify": "{}",
    "relay.FuseOps.max_depth": "1",
    "relay.fallback_device_type": "1",
}


def example(row: LegacyApi) -> tuple[str, str]:
    """The row's example for the guide: ``(before, after)``, or two empty strings if none."""
    if row.name in _BLOCKS:
        return _BLOCKS[row.name]
    if row.name in LEGACY_CONFIG_KEYS:
        return _config_blocks(row.name, LEGACY_CONFIG_KEYS[row.name][0])
    return "", ""
