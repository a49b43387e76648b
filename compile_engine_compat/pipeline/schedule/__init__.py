"""Default schedules by target: what the legacy TOPI ``schedule_*`` functions did, on ``tvm.s_tir``.

Modern TVM has no TOPI schedules, and an unscheduled PrimFunc runs one scalar thread: a 512x512
matmul is ~100x slower than NumPy. :func:`schedule_for_target` gives ``lower``/``jit`` kernels:

* ``llvm`` (CPU), vector width and register count read from the target's CPU features:
  - float product-sums of two inputs with static shapes or a symbolic batch (matmul, dense with
    transposed weights, batch_matmul, conv2d NCHW of any stride, ...): the operand that carries a
    column axis the other lacks (B, the weights) is packed into column panels by its own parallel
    block; the first reduction loop is cut into chunks whose panel slice fits L1; a register
    micro-kernel (rows x 2-3 vectors, sized to the register file) accumulates in a local
    buffer per block of tiles (cut from the row axes it spans only, so that the buffer compacts
    to the block), the epilogue (bias, relu, ...) runs per block, blocks parallel (an unchunked
    reduction writes each tile back, epilogue and all, straight from registers); a symbolic
    batch stays an outer parallel loop, with a smaller tile (64-bit indices spill more).
    conv2d then vectorizes over output channels (its output's contiguous axis is too short);
  - uint8 x int8 -> int32 product-sums (quantized conv2d NHWC, dense, matmul, batch_matmul):
    the weights packed into ``vpdpbusd`` operands ([..., O/16, I/4, 16, 4]), a register tile of
    output pixels x 16-lane vectors tensorized on VNNI's ``vpdpbusd``, or, on CPUs without
    VNNI but with ``pmaddubsw`` (AVX-512BW, AVX2, SSSE3), on an exact nibble split of it
    (:mod:`.cpu_int8`); other 8-bit product-sums take the packed GEMM with widening
    multiplies. Integer sums are exact in any order;
  - other reductions whose innermost output axis is also the contiguous axis of an input:
    register-tiled (6 x 16 tiles on AVX2), the tile accumulated in a local buffer,
    vectorized, its epilogue computed per tile, the outer tiles parallel;
  - other reductions: the spatial loops parallel, the reduction loop left as it was;
  - injective stages: the innermost loop vectorized, the outer loops parallel;
  - small elementwise stages (every access is the output's own element, below the parallel
    threshold): the loops fused into one flat loop, split into vectors of 16, 8 or 4 lanes (4
    when the block calls a math library function such as ``exp``) when one of those divides its
    extent, the lanes vectorized. Left as a nest, LLVM vectorizes and unrolls every row for odd
    extents: a 16x40 kernel took ~230 ms to build against ~40 ms fused, and ran no faster.
    Vectorized here, the kernel needs no LLVM loop vectorizer, so it can be built at LLVM
    ``opt-level`` 1 (:mod:`compile_engine_compat.pipeline.opt_level`).
* GPU kinds (``cuda``, ``rocm``, ``metal``, ``vulkan``, ``opencl``, ``webgpu``): the
  ``s_tir.dlight`` GPU rules (Matmul, GEMV, Reduction, GeneralReduction, then Fallback thread
  binding for everything else), so the function builds into valid device code.
* any other target: unchanged.

Results never change on CPU: no rule reorders a reduction (each output element still accumulates
its terms in the same order: reduction loops are only split, chunk outside, both serial); rules
only tile, reorder spatial loops, copy operands into packed layouts, vectorize spatial loops and
run spatial loops in parallel. LLVM may contract multiply-adds into FMAs where the target has
them. Every rule runs on a copy of the schedule, which is kept only when
the whole rule applies: a rule that does not fit a block leaves that block as it was.

Bump :data:`RULES_VERSION` whenever a rule's output may change, or what is built from it (the
LLVM ``opt-level`` that :mod:`compile_engine_compat.pipeline.opt_level` chooses from the rules
kept): it is part of the persistent compile cache key. :func:`schedule_blocks` says which
rule each block kept.

The package, by job: :mod:`.driver` (this API: which rules run, on a copy, kept when whole;
user schedules; the coverage check), :mod:`.blocks` (what the rules read from a block),
:mod:`.cpu_rules` (the rule choice and the elementwise, injective and reduction rules),
:mod:`.cpu_gemm` (the packed GEMM rule), :mod:`.cpu_conv` (depthwise), :mod:`.cpu_int8` (VNNI)
and :mod:`.gpu` (dlight).
"""

from compile_engine_compat.pipeline.schedule.driver import (
    GPU_KINDS,
    RULES_VERSION,
    VECTORIZED_ELEMENTWISE,
    RuleOutcome,
    apply_user_schedules,
    schedule_blocks,
    schedule_cpu,
    schedule_for_target,
    schedule_prim_func,
    top_level_block_names,
    try_rule,
    uncovered_blocks,
    user_schedules,
)

__all__ = [
    "GPU_KINDS",
    "RULES_VERSION",
    "VECTORIZED_ELEMENTWISE",
    "RuleOutcome",
    "apply_user_schedules",
    "schedule_blocks",
    "schedule_cpu",
    "schedule_for_target",
    "schedule_prim_func",
    "top_level_block_names",
    "try_rule",
    "uncovered_blocks",
    "user_schedules",
]
