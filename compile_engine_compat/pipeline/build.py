"""Build: compile a lowered module with ``tvm.compile`` into a destination-passing kernel."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import tvm
from tvm import tirx

from compile_engine_compat.pipeline.prefetch import tir_pipeline

logger = logging.getLogger("compile_engine")

__all__ = ["Kernel", "build_kernel", "compile_kernels", "device_for"]


class Kernel:
    """A built kernel, called destination-passing style: ``kernel(*inputs, *outputs)``.

    Inputs and outputs may be ``tvm.runtime.Tensor`` (no copies, the fast path) or NumPy arrays
    (copied into aligned memory; outputs are copied back). Non-scalar constants of the source
    function are bound here, so they never appear in the caller's argument list.

    What TVM's generated code does not check, the kernel does, so that no argument can crash the
    process or silently give a wrong result:

    * a ``Tensor`` whose data is not 64-byte aligned (DLPack can make one; the code assumes the
      alignment of TVM's allocator) is copied through an aligned temporary, outputs copied back;
      on a device other than the CPU it is refused with ``ValueError``;
    * an output that shares memory with an input is computed into a temporary and copied back
      (a matmul reads its inputs after it started writing); two outputs sharing memory are
      refused with ``ValueError`` naming both.

    Shapes, dtypes, strides, byte offsets and devices are checked by TVM (``ValueError`` or
    ``TypeError``), unless the kernel was built under ``tirx.disable_assert``.

    Attributes
    ----------
    name : str
        The kernel's function name in ``module``.
    module : tvm.runtime.Executable
        The built module.
    num_inputs, num_outputs : int
        The calling arity.
    device : tvm.runtime.Device
        Where it runs (its arguments' device).
    """

    __slots__ = (
        "_arity",
        "_constants",
        "_func",
        "_itemsizes",
        "_run",
        "_single",
        "device",
        "module",
        "name",
        "num_inputs",
        "num_outputs",
    )

    def __init__(
        self,
        module: Any,
        name: str,
        num_inputs: int,
        num_outputs: int,
        constants: Sequence[Any],
        device: Any,
    ) -> None:
        self.module = module
        self.name = name
        self._func = module[name]
        self.num_inputs = num_inputs
        self.num_outputs = num_outputs
        self._constants = tuple(tvm.runtime.tensor(c.numpy(), device) for c in constants)
        self.device = device
        self._arity = num_inputs + num_outputs
        # Bytes per element of each argument, learnt from the first call that ran (TVM checked
        # the dtypes then): the fast path's overlap test needs sizes, and a Tensor's dtype costs
        # ~0.4 us to read. None until then: the first call takes the checked path.
        self._itemsizes: tuple[int, ...] | None = None
        # For one-output kernels once learnt: (arity, the output's itemsize, the widest one).
        self._single: tuple[int, int, int] | None = None
        # The fast path calls this with the caller's arguments: the raw function itself when
        # there are no constants to splice in after the inputs.
        self._run = self._with_constants if self._constants else self._func

    def __repr__(self) -> str:
        return f"<Kernel {self.name}: {self.num_inputs} inputs, {self.num_outputs} outputs>"

    def __call__(self, *args: Any) -> None:
        # Hot path: per argument a type test, an alignment test of its data pointer and an
        # overlap test against the output, then the call. Written out for the usual one output,
        # since each Python operation here is a measurable part of a small kernel's call. Inputs
        # are sized with the widest itemsize: a wider range can only send a call to the checked
        # path, which measures exactly.
        single = self._single
        if single is not None:
            arity, out_itemsize, widest = single
            out: Any = args[-1] if len(args) == arity else None
            if out.__class__ is _TENSOR:
                low = out.data_ptr()
                high = low + out.numel() * out_itemsize
                for arg in args[:-1]:
                    if arg.__class__ is not _TENSOR:
                        break
                    start = arg.data_ptr()
                    if start & _MISALIGNED or (start < high and low < start + arg.numel() * widest):
                        break
                else:
                    if not low & _MISALIGNED:
                        self._run(*args)
                        return None
        elif (
            self._itemsizes is not None
            and len(args) == self._arity
            and _all_fit(args, self.num_inputs, self._itemsizes)
        ):
            self._run(*args)
            return None
        self._call_checked(args)
        return None

    def _with_constants(self, *args: Any) -> None:
        n = self.num_inputs
        self._func(*args[:n], *self._constants, *args[n:])

    def _call_checked(self, args: Sequence[Any]) -> None:
        if len(args) != self._arity:
            raise TypeError(
                f"{self.name} takes {self.num_inputs} input(s) followed by {self.num_outputs} "
                f"output(s) (destination-passing style), got {len(args)} argument(s)"
            )
        self._call_converting(args)

    def _describe(self, index: int) -> str:
        if index < self.num_inputs:
            return f"input {index}"
        return f"output {index - self.num_inputs} (argument {index})"

    def _call_converting(self, args: Sequence[Any]) -> None:
        for index, arg in enumerate(args):
            if not isinstance(arg, _TENSOR | np.ndarray):
                kind = "output" if index >= self.num_inputs else "input"
                raise TypeError(
                    f"{self.name}: {kind} argument {index} must be a tvm.runtime.Tensor or a "
                    f"numpy.ndarray, got {type(arg).__module__}.{type(arg).__qualname__}"
                )
        # Memory ranges matter for several outputs (they must not share memory) and for a Tensor
        # output (written in place); a lone NumPy output is staged anyway. Skipped otherwise: a
        # NumPy array's bounds and a Tensor's dtype cost a microsecond each.
        ranges: list[tuple[int, int]] = []
        outputs = args[self.num_inputs :]
        if len(outputs) > 1 or any(isinstance(out, _TENSOR) for out in outputs):
            ranges = [_byte_range(arg) for arg in args]
            overlap = _overlapping_outputs(ranges, self.num_inputs)
            if overlap is not None:
                first, second = overlap
                raise ValueError(
                    f"{self.name}: {self._describe(first)} and {self._describe(second)} share "
                    "memory; each output needs its own"
                )
        converted: list[Any] = []
        write_back: list[tuple[Any, Any]] = []
        for index, arg in enumerate(args):
            is_output = index >= self.num_inputs
            if isinstance(arg, _TENSOR):
                if not arg.data_ptr() & _MISALIGNED:
                    if (
                        is_output
                        and _overlaps_an_input(ranges, index, self.num_inputs)
                        and arg.is_contiguous()  # else TVM refuses its strides, as it should
                    ):
                        # The kernel may read an input after writing this output (a matmul
                        # does): compute into a temporary, copy it in afterwards.
                        staged = tvm.runtime.empty(arg.shape, arg.dtype, arg.device)
                        write_back.append((arg, staged))
                        converted.append(staged)
                    else:
                        converted.append(arg)
                    continue
                arg = self._host_view(arg, index)
            if is_output:
                if not arg.flags.writeable:
                    raise ValueError(f"{self.name}: output {index} is a read-only array")
                staged = tvm.runtime.empty(arg.shape, str(arg.dtype), self.device)
                write_back.append((arg, staged))
            else:
                # Copies into 64-byte-aligned memory: unaligned or strided NumPy memory
                # handed to a kernel directly crashes the process. Not ascontiguousarray:
                # it turns a 0-d array into shape (1,).
                staged = tvm.runtime.tensor(np.asarray(arg, order="C"), self.device)
            converted.append(staged)
        self._run(*converted)
        if self._itemsizes is None:
            self._learn_itemsizes(converted)
        for target, staged in write_back:
            if isinstance(target, np.ndarray):
                np.copyto(target, staged.numpy())
            else:
                target.copyfrom(staged)

    def _learn_itemsizes(self, tensors: Sequence[Any]) -> None:
        """Keep the itemsizes of a call that ran (TVM checked its dtypes) for the fast path."""
        itemsizes = tuple(_itemsize(tensor) for tensor in tensors)
        if self.num_outputs == 1:
            self._single = (self._arity, itemsizes[-1], max(itemsizes))
        self._itemsizes = itemsizes

    def _host_view(self, tensor: Any, index: int) -> np.ndarray:
        """A NumPy view of a misaligned CPU ``tensor`` (copied like any NumPy array then)."""
        if tensor.device.dlpack_device_type() != _CPU:
            raise ValueError(
                f"{self.name}: {self._describe(index)} is not {_ALIGNMENT}-byte aligned (data "
                f"at {tensor.data_ptr():#x} on {tensor.device}); TVM kernels assume aligned "
                "data: allocate it with tvm.runtime.empty or tvm.runtime.tensor"
            )
        try:
            return np.from_dlpack(tensor)
        except (BufferError, TypeError, ValueError, RuntimeError) as err:  # e.g. bfloat16
            raise ValueError(
                f"{self.name}: {self._describe(index)} is not {_ALIGNMENT}-byte aligned and "
                f"NumPy cannot view it to copy it ({err}); allocate it with tvm.runtime.empty"
            ) from err


#: The alignment TVM's allocator gives and its generated code assumes (aligned vector loads).
_ALIGNMENT = 64
_MISALIGNED = _ALIGNMENT - 1
_CPU = 1  # kDLCPU


def _all_fit(args: Sequence[Any], first_output: int, itemsizes: Sequence[int]) -> bool:
    """Whether every argument is an aligned ``Tensor`` and no output overlaps another argument.

    The fast path's test for kernels with several outputs: data pointers and element counts.
    """
    for arg in args:
        if arg.__class__ is not _TENSOR or arg.data_ptr() & _MISALIGNED:
            return False
    count = len(args)
    for out in range(first_output, count):
        tensor = args[out]
        low = tensor.data_ptr()
        high = low + tensor.numel() * itemsizes[out]
        for other in range(count):
            if other != out:
                arg = args[other]
                start = arg.data_ptr()
                if start < high and low < start + arg.numel() * itemsizes[other]:
                    return False
    return True


def _byte_range(arg: Any) -> tuple[int, int]:
    """The bytes ``arg`` (a Tensor or a NumPy array) spans: ``(start, end)``."""
    if isinstance(arg, np.ndarray):
        low, high = _byte_bounds(arg)
        return int(low), int(high)
    start = arg.data_ptr()
    return start, start + arg.numel() * _itemsize(arg)


# NumPy 2 moved it; NumPy 1 has it at the top level.
_byte_bounds = getattr(np.lib, "array_utils", np).byte_bounds


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether two non-empty byte ranges share a byte."""
    return a[0] < a[1] and b[0] < b[1] and a[0] < b[1] and b[0] < a[1]


def _overlaps_an_input(ranges: Sequence[tuple[int, int]], index: int, num_inputs: int) -> bool:
    return any(_overlaps(ranges[index], ranges[i]) for i in range(num_inputs))


def _overlapping_outputs(
    ranges: Sequence[tuple[int, int]], first_output: int
) -> tuple[int, int] | None:
    """The first pair of outputs (argument indices) whose memory overlaps, if any."""
    for i in range(first_output, len(ranges)):
        for j in range(i + 1, len(ranges)):
            if _overlaps(ranges[i], ranges[j]):
                return i, j
    return None


def _itemsize(arg: Any) -> int:
    return int(arg.dtype.itemsize)


_TENSOR = tvm.runtime.Tensor


def device_for(target: tvm.target.Target) -> Any:
    """Return the device a kernel built for ``target`` runs on."""
    kind = target.kind.name
    return tvm.cpu(0) if kind in ("llvm", "c") else tvm.device(kind, 0)


def build_kernel(
    funcs: tvm.IRModule,
    name: str,
    target: tvm.target.Target,
    num_inputs: int,
    num_outputs: int,
    constants: Sequence[Any] = (),
    module: Any = None,
    plain: Callable[[], tirx.PrimFunc] | None = None,
    plain_target: tvm.target.Target | None = None,
) -> Kernel:
    """Build ``funcs`` with ``tvm.compile`` and return its ``name`` function as a :class:`Kernel`.

    Parameters
    ----------
    funcs : tvm.IRModule
        Holds the PrimFunc ``name``; its parameters are inputs, then constants, then outputs.
    name : str
        The PrimFunc to call.
    target : tvm.target.Target
        The compilation target.
    num_inputs, num_outputs : int
        The caller-visible arity (constants excluded).
    constants : sequence of tvm.runtime.Tensor
        Values bound after the inputs.
    module : tvm.runtime.Module, optional
        An already built module holding ``name`` (loaded from the persistent cache, or built for
        many functions at once): no compile then.
    plain : callable, optional
        Returns the same function before inlining and scheduling (``CachedFunc.prim_func``),
        built instead when TVM fails to build ``funcs``; its failure re-raises the first one.
    plain_target : tvm.target.Target, optional
        The target to build ``plain`` for (default ``target``): without the LLVM ``opt-level``
        chosen for the scheduled kernel, since the unscheduled function is not vectorized.

    Returns
    -------
    Kernel
    """
    if module is None:
        module = _compile(funcs, name, target, plain, plain_target or target)
    return Kernel(module, name, num_inputs, num_outputs, constants, device_for(target))


def compile_kernels(
    funcs: tvm.IRModule | Mapping[str, tirx.PrimFunc], target: tvm.target.Target
) -> Any:
    """``tvm.compile`` of kernels, with the shim's ``tir_pipeline``: the one build every kernel,
    built alone (:func:`build_kernel`) or many at once (``jit_many``), goes through, so that one
    cache key always means one code.

    Parameters
    ----------
    funcs : tvm.IRModule or mapping of str to tirx.PrimFunc
        The PrimFuncs, by symbol.
    target : tvm.target.Target
        The compilation target.

    Returns
    -------
    tvm.runtime.Module
        The compiled library, holding every function of ``funcs``.
    """
    module = funcs if isinstance(funcs, tvm.IRModule) else tvm.IRModule(dict(funcs))
    return tvm.compile(module, target=target, tir_pipeline=tir_pipeline(target))


def _compile(
    funcs: tvm.IRModule,
    name: str,
    target: tvm.target.Target,
    plain: Callable[[], tirx.PrimFunc] | None,
    plain_target: tvm.target.Target,
) -> Any:
    # LLVM's optimizer can emit invalid IR for some inlined index arithmetic (adaptive pooling
    # with uneven windows: "Instruction does not dominate all uses") where the same function
    # with its stages apart builds; the new path then builds too, so the shim must not fail.
    try:
        return compile_kernels(funcs, target)
    except Exception as err:
        if plain is None:
            raise
        fallback = _compile_or_none(plain, name, plain_target)
        if fallback is None:
            raise
        reason = (str(err).strip().splitlines() or [type(err).__name__])[0]
        logger.warning(
            "%s: TVM failed to build the scheduled kernel (%s); built the PrimFunc before "
            "inlining and scheduling instead: same results, unscheduled speed",
            name,
            reason,
        )
        return fallback


def _compile_or_none(
    plain: Callable[[], tirx.PrimFunc], name: str, target: tvm.target.Target
) -> Any | None:
    try:
        func = plain().with_attr("global_symbol", name)
        return compile_kernels({name: func}, target)
    except Exception:  # the caller re-raises the scheduled kernel's error, the one to report
        return None
