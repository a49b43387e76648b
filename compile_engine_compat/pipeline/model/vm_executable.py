"""Whole-module builds: a Relax module -> a VM executable on the shim's schedules.

``relay.build``, ``create_executor`` and :func:`compile_engine_compat.schedules.relax_pipeline`
build whole models here. The Relax passes are TVM's CPU pipeline with the shim's parts in it::

    library dispatch                     (TVM's)
    ShiftInt8Data                        int8 x int8 products as uint8 x int8 (VNNI targets)
    FoldConstantOps                      constants folded in NumPy (.fold), no kernel compiled
    LegalizeOps (one thread at a time),
    AnnotateTIROpPattern,
    FuseOps, FuseTIR                     (TVM's) one PrimFunc per fused group, equal ones shared
    AttachAttrLayoutFreeBuffers          (TVM's) which kernel parameters are constant weights
    ScheduleKernels                      each distinct PrimFunc through schedule_prim_func, the
                                         very code ``jit`` schedules with; weight packing marked
    SplitLayoutRewritePreproc            (TVM's) the marked packing moved out of the kernels
    FoldWeightPacking                    ... and computed once, here, in NumPy
    dataflow lowering, finalization      (TVM's)

then the VM executable is built (``relax.build`` without a Relax pipeline, on the shim's TIR
pipeline: TVM's, then the weight prefetch of :mod:`..prefetch`). Kernels equal to one
scheduled before in this process (same PrimFunc, target and rules) reuse that schedule.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import tvm
import tvm_ffi
from tvm import relax, tirx

from compile_engine_compat.pipeline.build_pool import build_threads
from compile_engine_compat.pipeline.model import fold, pad_layout, raise_calls, shift_int8
from compile_engine_compat.pipeline.op_sources import MODULE_LAYOUTS, MODULE_LEGALIZATIONS
from compile_engine_compat.pipeline.prefetch import tir_pipeline
from compile_engine_compat.pipeline.schedule import RULES_VERSION, schedule_prim_func
from compile_engine_compat.pipeline.trace import TRACE_LOCK
from compile_engine_compat.pipeline.tuned import tuned_schedule

__all__ = [
    "ScheduleKernels",
    "balanced_shares",
    "build_executable",
    "forget_schedules",
    "kernels_to_schedule",
    "passes_before_scheduling",
    "relax_passes",
    "scheduled_kernels",
]

#: A PrimFunc with this attribute set was scheduled already (by dlight, by hand): left alone.
SCHEDULED_ATTR = "tirx.is_scheduled"

# (structural hash, target text, rules) -> scheduled PrimFunc: a model rebuilt, or two models
# sharing layers, schedule each kernel once per process. Bounded: kernels are small objects.
_scheduled: dict[tuple[int, str, str], tuple[tirx.PrimFunc, tirx.PrimFunc]] = {}
_scheduled_lock = threading.Lock()
_MEMO_LIMIT = 4096


def scheduled_kernels() -> int:
    """How many distinct kernels this process has scheduled for module builds (the memo's size)."""
    with _scheduled_lock:
        return len(_scheduled)


def forget_schedules() -> None:
    """Forget the kernels scheduled so far: the next module build schedules each one afresh
    (what a new process does; the benchmark's cold builds)."""
    with _scheduled_lock:
        _scheduled.clear()


def _is_scheduled(func: tirx.PrimFunc) -> bool:
    return bool(func.attrs and func.attrs.get(SCHEDULED_ATTR, False))


def _schedule_one(func: tirx.PrimFunc, name: str, target: tvm.target.Target) -> tirx.PrimFunc:
    bare = func.without_attr("global_symbol") if func.attrs and "global_symbol" in func.attrs \
        else func  # fmt: skip
    tuned = tuned_schedule(bare, target)  # a tuning records scope's schedule, if in force
    if tuned is not None:
        return _named(tuned, func)
    key = (tvm_ffi.structural_hash(bare), str(target), RULES_VERSION)
    with _scheduled_lock:
        done = _scheduled.get(key)
    if done is not None and tvm_ffi.structural_equal(done[0], bare):
        return _named(done[1], func)
    scheduled = schedule_prim_func(func, name, target).schedule.mod[name]
    with _scheduled_lock:
        if len(_scheduled) >= _MEMO_LIMIT:
            _scheduled.clear()
        _scheduled[key] = (bare, scheduled)
    return scheduled


def _named(scheduled: tirx.PrimFunc, original: tirx.PrimFunc) -> tirx.PrimFunc:
    """``scheduled`` with ``original``'s global symbol (or none, as ``original``)."""
    symbol = original.attrs.get("global_symbol") if original.attrs else None
    if symbol is None:
        return scheduled.without_attr("global_symbol") if scheduled.attrs and \
            "global_symbol" in scheduled.attrs else scheduled  # fmt: skip
    return scheduled.with_attr("global_symbol", symbol)


def ScheduleKernels(target: tvm.target.Target) -> tvm.transform.Pass:
    """A module pass scheduling every unscheduled PrimFunc with :func:`schedule_prim_func`.

    Parameters
    ----------
    target : tvm.target.Target
        Picks the rules (CPU for ``llvm``, dlight for GPU kinds).

    Returns
    -------
    tvm.transform.Pass
        Run it after ``relax.transform.FuseTIR`` (the PrimFuncs are then whole kernels).
    """

    @tvm.transform.module_pass(opt_level=0, name="compile_engine_compat.ScheduleKernels")
    def schedule_all(mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
        updates = {
            gvar: _schedule_one(func, gvar.name_hint, target)
            for gvar, func in mod.functions.items()
            if isinstance(func, tirx.PrimFunc) and not _is_scheduled(func)
        }
        for gvar, func in updates.items():
            mod[gvar] = func
        return mod

    return schedule_all


def passes_before_scheduling(target: tvm.target.Target) -> list[tvm.transform.Pass]:
    """The passes of :func:`relax_passes` before ``ScheduleKernels``: they make the kernels."""
    from tvm.relax.backend.cpu_generic import pipeline as cpu

    return [
        *cpu.library_dispatch_passes(target),
        raise_calls.RaiseElementwiseCalls(),
        _convert_layout_where_used,
        shift_int8.ShiftInt8Data(target),
        fold.FoldConstantOps(),
        _legalize_ops,
        relax.transform.AnnotateTIROpPattern(),
        relax.transform.FuseOps(),
        relax.transform.FuseTIR(),
        relax.transform.AttachAttrLayoutFreeBuffers(),
    ]


def kernels_to_schedule(
    mod: tvm.IRModule, target: tvm.target.Target
) -> list[tuple[str, tirx.PrimFunc, int]]:
    """The kernels a build of ``mod`` for an ``llvm`` ``target`` schedules: (name, func, calls).

    Each PrimFunc is unscheduled and without a global symbol, as ``ScheduleKernels`` (and a
    tuning records scope, :mod:`compile_engine_compat.pipeline.tuned`) sees it; kernels equal
    to one before appear once, under the first name, with the ``call_tir`` of all counted.
    """
    with target:
        made = tvm.transform.Sequential(passes_before_scheduling(target))(attach_prim_funcs(mod))
    calls: dict[str, int] = {}
    call_tir = tvm.ir.Op.get("relax.call_tir")

    def count(node: Any) -> None:
        if isinstance(node, relax.Call) and node.op.same_as(call_tir):
            name = getattr(node.args[0], "name_hint", None)
            if name is not None:
                calls[name] = calls.get(name, 0) + 1

    for func in made.functions.values():
        if isinstance(func, relax.Function):
            relax.analysis.post_order_visit(func.body, count)
    kernels: list[tuple[str, tirx.PrimFunc, int]] = []
    for gvar, func in made.functions.items():
        if not isinstance(func, tirx.PrimFunc) or _is_scheduled(func):
            continue
        if func.attrs and "global_symbol" in func.attrs:
            func = func.without_attr("global_symbol")
        found = calls.get(gvar.name_hint, 0)
        for index, (name, seen, seen_calls) in enumerate(kernels):
            if tvm_ffi.structural_equal(func, seen):
                kernels[index] = (name, seen, seen_calls + found)
                break
        else:
            kernels.append((gvar.name_hint, func, found))
    return kernels


def relax_passes(target: tvm.target.Target) -> list[tvm.transform.Pass]:
    """The Relax passes of a whole-module build for an ``llvm`` target (see the module doc)."""
    from tvm.relax.backend.cpu_generic import pipeline as cpu

    return [
        *passes_before_scheduling(target),
        ScheduleKernels(target),
        _split_layout_rewrite_preproc,
        fold.FoldWeightPacking(),
        *cpu.dataflow_lower_passes(target),
        *cpu.finalize_passes(target),
    ]


@tvm.transform.module_pass(opt_level=0, name="LegalizeOpsSerialized")
def _legalize_ops(mod: tvm.IRModule, ctx: Any) -> tvm.IRModule:
    """``LegalizeOps(MODULE_LEGALIZATIONS)``, one thread at a time (under ``TRACE_LOCK``).

    Legalizations call TOPI, whose op tag scope (``te.TagScope._current``) is one class
    attribute for the whole process: two threads inside it at once fail with "nested op_tag is
    not allowed for now", and a thread's ``te.compute`` may take another's tag. ``jit``'s traces
    and the Relay front end's TOPI calls hold the same lock; the rest of a build (fusion,
    scheduling, LLVM) runs in parallel.
    """
    with TRACE_LOCK:
        return relax.transform.LegalizeOps(customize_legalize_map=MODULE_LEGALIZATIONS)(mod)


@tvm.transform.module_pass(opt_level=0, name="ConvertLayoutWhereUsed")
def _convert_layout_where_used(mod: tvm.IRModule, ctx: Any) -> tvm.IRModule:
    """``ConvertLayout(MODULE_LAYOUTS)``, only on a module that calls one of those ops.

    Elsewhere it would change nothing, and TVM 0.27's pass raises on some ops it only walks past
    (``relax.stack`` of function parameters: "Index -1 out of bounds").
    """
    called: set[str] = set()

    def visit(node: Any) -> None:
        if isinstance(node, relax.Call) and isinstance(node.op, tvm.ir.Op):
            called.add(node.op.name)

    for func in mod.functions.values():
        if isinstance(func, relax.Function):
            relax.analysis.post_order_visit(func, visit)
    if called.isdisjoint(MODULE_LAYOUTS):
        return mod
    # A pad it leaves in the old layout between two permutations is padded in the new one.
    return pad_layout.fold_pad_permutes(relax.transform.ConvertLayout(MODULE_LAYOUTS)(mod))


@tvm.transform.module_pass(opt_level=0, name="SplitLayoutRewritePreprocIfMarked")
def _split_layout_rewrite_preproc(mod: tvm.IRModule, ctx: Any) -> tvm.IRModule:
    """TVM's ``SplitLayoutRewritePreproc``, run only when a kernel has weights to pack.

    TVM's pass fails an internal check on a kernel with no compute block (an extern kernel:
    ``topk``, ``sort``, the vision ops), even when nothing is to be split; modules without
    constant weights skip it, and so do modules where it fails that check.
    """
    marked = any(
        isinstance(func, tirx.PrimFunc) and func.attrs and func.attrs.get("layout_free_buffers")
        for func in mod.functions.values()
    )
    if not marked:
        return mod
    try:
        return relax.transform.SplitLayoutRewritePreproc()(mod)
    except tvm.error.InternalError as err:
        # A module with packed weights and an extern kernel (topk after a dequantize of a
        # constant): the packing stays in the kernels, the results are the same.
        if "compute block" not in str(err):
            raise
        return mod


#: A Relax function attribute: name -> PrimFunc of the kernels its ``call_tir`` calls refer to
#: (the Relay front end's TOPI-backed ops, whose function travels alone, without a module).
PRIM_FUNCS_ATTR = "compile_engine_compat.prim_funcs"


def carried_prim_funcs(func: Any) -> tuple[Any, dict[Any, Any]]:
    """``func`` without :data:`PRIM_FUNCS_ATTR`, and the PrimFuncs it carries there.

    Parameters
    ----------
    func : tvm.ir.BaseFunc
        A function of a module, or one travelling alone.

    Returns
    -------
    tuple
        The function without the attribute (``func`` itself when it carries nothing) and
        GlobalVar -> PrimFunc for each carried kernel, under the very GlobalVar its calls name.
    """
    if not isinstance(func, relax.Function) or PRIM_FUNCS_ATTR not in (func.attrs or {}):
        return func, {}
    carried = func.attrs[PRIM_FUNCS_ATTR]
    kernels = {
        used: carried[used.name_hint]
        for used in relax.analysis.all_global_vars(func)
        if used.name_hint in carried
    }
    return func.without_attr(PRIM_FUNCS_ATTR), kernels


def attach_prim_funcs(mod: tvm.IRModule) -> tvm.IRModule:
    """``mod`` with the PrimFuncs its Relax functions carry in :data:`PRIM_FUNCS_ATTR` added.

    Parameters
    ----------
    mod : tvm.IRModule
        A Relax module, perhaps made by ``tvm.IRModule.from_expr(relay_func)``.

    Returns
    -------
    tvm.IRModule
        ``mod`` itself when nothing is carried; otherwise a new module holding the kernels under
        the very GlobalVars the calls name, the attribute removed.
    """
    functions = dict(mod.functions.items())
    names = {gvar.name_hint for gvar in functions}
    changed = False
    for gvar, func in list(functions.items()):
        stripped, kernels = carried_prim_funcs(func)
        if stripped is func:
            continue
        for used, kernel in kernels.items():
            if used.name_hint not in names:
                functions[used] = kernel
                names.add(used.name_hint)
        functions[gvar] = stripped
        changed = True
    return tvm.IRModule(functions, attrs=mod.attrs) if changed else mod


def build_executable(mod: tvm.IRModule, target: tvm.target.Target, jit: bool = True) -> Any:
    """Build ``mod`` (parameters bound) for ``target`` into a VM executable.

    The kernels are compiled on every CPU this process may use: one share in this thread (by
    ``relax.build``, JIT-compiled when the first VM is made), the others on worker threads, each
    compiled and JIT-compiled there (``tvm.compile`` and the JIT release the GIL) while this
    thread compiles its own, and imported into the executable as modules the VM calls by symbol.

    Parameters
    ----------
    mod : tvm.IRModule
        A Relax module; ``main`` is what the executors run.
    target : tvm.target.Target
        Resolved already (a plain ``llvm`` is the host CPU by now). Non-``llvm`` targets get
        TVM's default pipeline for them (the GPU kinds' dlight rules are the shim's too).
    jit : bool, optional
        True (the default): every kernel is JIT-compiled by the time this returns, this thread's
        share too, so the executable may be run here and exported on another thread at once.
        False for an executable that will only be exported: nothing is JIT-compiled.

    Returns
    -------
    tvm.relax.Executable
    """
    mod = attach_prim_funcs(mod)
    if target.kind.name != "llvm":
        with TRACE_LOCK:  # TVM's whole pipeline, legalization (TOPI's tag scope) inside it
            return tvm.compile(mod, target=target)
    with target:
        lowered = tvm.transform.Sequential(relax_passes(target))(mod)
    kernels = [gvar for gvar, func in lowered.functions.items() if isinstance(func, tirx.PrimFunc)]
    shares = balanced_shares(lowered, kernels, build_threads())
    away = [share for share in shares[1:] if share]
    if not away:
        executable = relax.build(
            lowered, target=target, relax_pipeline=None, tir_pipeline=tir_pipeline(target)
        )
        if jit:
            _jit(executable, lowered, shares[0])
        return executable
    context = tvm.transform.PassContext.current()
    with ThreadPoolExecutor(len(away), thread_name_prefix="compile-engine-compat-build") as pool:
        futures = [pool.submit(_compiled, lowered, share, target, context, jit) for share in away]
        linked = _calling_by_symbol(lowered, [gvar for share in away for gvar in share])
        # This thread's share is compiled while the workers compile theirs; their libraries
        # are then imported into the executable, as relax.build imports ``external_mods``.
        executable = relax.build(
            linked, target=target, relax_pipeline=None, tir_pipeline=tir_pipeline(target)
        )
        if jit:  # while the workers still compile theirs
            _jit(executable, lowered, shares[0])
        for future in futures:
            executable.mod.import_module(future.result())
        return executable


def balanced_shares(mod: tvm.IRModule, kernels: list[Any], threads: int) -> list[list[Any]]:
    """Split ``kernels`` (GlobalVars of ``mod``) into ``threads`` shares of about equal LLVM time.

    LLVM's time for a kernel (its code generation and its JIT) grows with the kernel's TIR, and
    the length of its printed TIR follows it closely: ResNet-18's packed convolutions print about
    5x a transpose's text and take 3-6x its time. The heaviest kernel goes first, each to the
    share with the least so far (longest processing time first). Every share is compiled on its
    own thread (share 0 on the caller's, with the VM's own functions, which cost little); the
    build ends when the slowest is done. Which share a kernel lands in changes no code.

    Parameters
    ----------
    mod : tvm.IRModule
        Holds the kernels.
    kernels : list of tvm.ir.GlobalVar
        The PrimFuncs to share out, in module order.
    threads : int
        How many shares (at least 1).

    Returns
    -------
    list of list of tvm.ir.GlobalVar
        ``threads`` shares, each in module order; some may be empty.
    """
    if threads <= 1 or len(kernels) <= 1:
        return [list(kernels)] + [[] for _ in range(threads - 1)]
    weight = {gvar: _printed_length(mod[gvar]) for gvar in kernels}
    loads = [0] * threads
    chosen: dict[Any, int] = {}
    for gvar in sorted(kernels, key=lambda g: weight[g], reverse=True):
        lightest = loads.index(min(loads))
        chosen[gvar] = lightest
        loads[lightest] += weight[gvar]
    return [[gvar for gvar in kernels if chosen[gvar] == i] for i in range(threads)]


def _printed_length(func: tirx.PrimFunc) -> int:
    try:
        return len(str(func))
    except Exception:  # a weight only: a kernel TVMScript cannot print still builds
        return 1


def _jit(executable: Any, mod: tvm.IRModule, share: list[Any]) -> None:
    """JIT-compile the library of this thread's ``share`` of ``executable`` now, as the first
    VM made of it would do later, but while the worker threads still compile theirs."""
    if share:
        executable.mod.get_function(_symbol(mod[share[0]], share[0]), query_imports=True)


def _symbol(func: tirx.PrimFunc, gvar: Any) -> str:
    return str(func.attrs["global_symbol"]) if func.attrs and "global_symbol" in func.attrs \
        else gvar.name_hint  # fmt: skip


def _compiled(
    mod: tvm.IRModule, share: list[Any], target: tvm.target.Target, context: Any, jit: bool
) -> Any:
    """Compile the PrimFuncs ``share`` of ``mod`` into one library, JIT-compiled here if ``jit``."""
    with context:
        funcs = {gvar: mod[gvar].with_attr("global_symbol", _symbol(mod[gvar], gvar))
                 for gvar in share}  # fmt: skip
        library = tvm.compile(
            tvm.IRModule(funcs), target=target, tir_pipeline=tir_pipeline(target)
        ).mod
        for gvar, func in funcs.items() if jit else ():
            library.get_function(_symbol(func, gvar))  # the JIT compiles on first lookup
    return library


@relax.expr_functor.mutator
class _CallBySymbol(relax.PyExprMutator):
    """Calls of the given PrimFuncs become calls of their symbol (an ``ExternFunc``)."""

    def __init__(self, mod: tvm.IRModule, symbols: dict[Any, str]) -> None:
        super().__init__(mod)
        self.symbols = symbols

    def visit_call_(self, call: Any) -> Any:
        call = super().visit_call_(call)
        symbol = self.symbols.get(call.op) if isinstance(call.op, tvm.ir.GlobalVar) else None
        if symbol is None:
            return call
        return relax.Call(relax.ExternFunc(symbol), call.args, call.attrs, call.ty_args)


def _calling_by_symbol(mod: tvm.IRModule, moved: list[Any]) -> tvm.IRModule:
    """``mod`` without the PrimFuncs ``moved``, its Relax functions calling them by symbol."""
    symbols = {gvar: _symbol(mod[gvar], gvar) for gvar in moved}
    mutator = _CallBySymbol(mod, symbols)
    functions = {
        gvar: mutator.visit_expr(func) if isinstance(func, relax.Function) else func
        for gvar, func in mod.functions.items()
        if gvar not in symbols
    }
    return tvm.IRModule(functions, attrs=mod.attrs)
