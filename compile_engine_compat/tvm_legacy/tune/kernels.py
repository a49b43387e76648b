"""The kernels ``relay.build`` makes for a module: one tuning task per distinct kernel."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from compile_engine_compat.facade.model_builds import resolve_target
from compile_engine_compat.pipeline.model.vm_executable import kernels_to_schedule
from compile_engine_compat.relay.build_module import bind_module_params

__all__ = [
    "KernelTask",
    "ProgramKernels",
    "block_reduces",
    "extract_kernels",
    "kernel_args",
    "workload_key",
]


def workload_key(func: tirx.PrimFunc) -> str:
    """The key of an unscheduled kernel: its structural hash, as the shim's kernel cache keys."""
    return f"{tvm_ffi.structural_hash(func) & 0xFFFFFFFFFFFFFFFF:016x}"


def kernel_args(func: tirx.PrimFunc) -> tuple[tuple[str, tuple[int, ...], str], ...]:
    """AutoTVM's ``task.args`` of a kernel: ``("TENSOR", shape, dtype)`` per buffer parameter
    (scalar parameters, the dimensions a kernel reads of a dynamic shape, left out).

    Raises
    ------
    ValueError
        For a buffer of a dynamic shape.
    """
    args = []
    for param in func.params:
        buffer = param.ty
        if not isinstance(buffer, tirx.BufferType):
            continue
        if not all(isinstance(d, tirx.IntImm) for d in buffer.shape):
            raise ValueError(f"parameter {param} has a dynamic shape {list(buffer.shape)}")
        args.append(("TENSOR", tuple(int(d) for d in buffer.shape), str(buffer.dtype)))
    return tuple(args)


@dataclass(frozen=True)
class KernelTask:
    """One kernel of a module's build, to tune.

    Attributes
    ----------
    name : str
        The kernel's name in the build (``fused_conv2d_add_relu``).
    func : tvm.tirx.PrimFunc
        The unscheduled kernel, without a global symbol (what the build schedules).
    target : tvm.target.Target
        The build's target (a plain ``llvm`` resolved to this machine's CPU).
    weight : int
        How many times the module's ``main`` calls it.
    """

    name: str
    func: tirx.PrimFunc
    target: tvm.target.Target
    weight: int

    @property
    def workload_key(self) -> str:
        """:func:`workload_key` of :attr:`func`."""
        return workload_key(self.func)

    @property
    def flop(self) -> float:
        """The floating-point operations of one call (TVM's estimate)."""
        from tvm.s_tir.analysis import estimate_tir_flops

        try:
            return float(estimate_tir_flops(tvm.IRModule({"main": self.func})))
        except Exception:
            return 0.0

    def blocks(self) -> list[tuple[Any, list[int]]]:
        """The kernel's top-level blocks, each with the constant extents of its loops."""
        sch, root = _schedule_and_root(self.func)
        found = []
        for block in sch.get_child_blocks(root):
            extents = [sch.get(loop).extent for loop in sch.get_loops(block)]
            constant = [int(e) for e in extents if isinstance(e, tirx.IntImm)]
            found.append((sch.get(block), constant))
        return found

    @property
    def compute_only(self) -> bool:
        """Whether every block of the kernel computes one element (TE ``compute`` stages),
        none an extern or hand-written loop nest (``te.extern``, TVM 0.19's hybrid script): as
        Ansor's ``ComputeDAG``, which refused those ops, only such kernels are its tasks."""
        sch, root = _schedule_and_root(self.func)
        pending = [root]
        while pending:
            block = pending.pop()
            children = list(sch.get_child_blocks(block))
            if not children and not isinstance(sch.get(block).body, tirx.BufferStore):
                return False
            pending.extend(children)
        return True

    @property
    def measurable(self) -> bool:
        """Whether MetaSchedule can time the kernel: every parameter is a buffer (a kernel
        reading a dimension of a dynamic shape takes it as a scalar and is not timed)."""
        return all(isinstance(param.ty, tirx.BufferType) for param in self.func.params)

    @property
    def has_reduction(self) -> bool:
        """Whether a block of the kernel reduces (convolutions, dense, matmul, pooling...)."""
        return any(block_reduces(block) for block, _ in self.blocks())

    @property
    def args(self) -> tuple[tuple[str, tuple[int, ...], str], ...]:
        """:func:`kernel_args` of :attr:`func`."""
        return kernel_args(self.func)


def _schedule_and_root(func: tirx.PrimFunc) -> tuple[Any, Any]:
    """An ``s_tir`` schedule of ``func`` and its root block (``root``, or the extern block a
    ``te.extern`` kernel is made of)."""
    from tvm import s_tir

    sch = s_tir.Schedule(func.with_attr("global_symbol", "main"))
    return sch, sch.get_sblock(func.body.block.name_hint)


def block_reduces(block: Any) -> bool:
    """Whether an ``s_tir`` block has a reduction iteration variable."""
    return any(int(var.iter_type) == 2 for var in block.iter_vars)  # 2: CommReduce


def extract_kernels(mod: Any, params: Mapping[str, Any] | None, target: Any) -> list[KernelTask]:
    """The distinct kernels ``relay.build(mod, target, params=params)`` schedules.

    Parameters
    ----------
    mod : tvm.IRModule or relay.Function
        What ``relay.build`` takes.
    params : mapping of str to array, or None
        Bound by name, as ``relay.build`` binds them (constant weights are folded).
    target : str, dict or tvm.target.Target
        An ``llvm`` target (legacy strings translated); the tuned kernels are CPU kernels.

    Kernels of dynamic shapes are left out; a kernel whose buffers are static but which reads
    dimensions of a dynamic shape as scalars (``shape_of``'s) is kept.

    Raises
    ------
    ValueError
        For a target of another kind than ``llvm``: the shim tunes CPU kernels only.
    """
    resolved = _resolved(target)
    if resolved.kind.name != "llvm":
        raise ValueError(
            f"tuning tasks are extracted for llvm targets only, got {resolved.kind.name!r}: "
            "the shim's builds for GPU targets use TVM's dlight rules, which are not tuned"
        )
    bound = bind_module_params(mod, params)
    return [
        KernelTask(name, func, resolved, max(calls, 1))
        for name, func, calls in kernels_to_schedule(bound, resolved)
        if _static(func)
    ]


def _resolved(target: Any) -> tvm.target.Target:
    return resolve_target(tvm.target.Target.current(allow_none=True) if target is None
                          else target)  # fmt: skip


class ProgramKernels:
    """A program to tune: its Relax module, its target, and the kernels its build schedules,
    extracted on first use (task extraction reads the module's ops; tuning needs the kernels).

    Parameters
    ----------
    mod, params, target
        As :func:`extract_kernels` takes them.
    """

    def __init__(self, mod: Any, params: Mapping[str, Any] | None, target: Any) -> None:
        self.module = bind_module_params(mod)
        self.params = params
        self.target = _resolved(target)
        self._kernels: list[KernelTask] | None = None

    def kernels(self) -> list[KernelTask]:
        """:func:`extract_kernels` of the program (once).

        Raises
        ------
        ValueError
            For a target of another kind than ``llvm``.
        """
        if self._kernels is None:
            self._kernels = extract_kernels(self.module, self.params, self.target)
        return self._kernels


def _static(func: tirx.PrimFunc) -> bool:
    """Whether every buffer of the kernel has a constant shape (MetaSchedule measures only
    those; kernels of dynamic shapes keep the shim's schedule, as TVM 0.19 extracted no task)."""
    try:
        kernel_args(func)
    except (TypeError, ValueError):
        return False
    return True
