"""``tvm.utils.roofline`` of TVM <=0.19 (served by ``install()``): each name refused at the call.

TVM 0.19's roofline analysis ran a Relay module on the profiling VM (``profiler_vm``), read each
kernel's time and the FLOP and byte counts the profiler's collectors reported
(``tvm.runtime.profiling.Report``), and set them against the machine's peak FLOP/s and memory
bandwidth, measured by microbenchmarks over RPC (``x86.estimate_peak_fma_vector_flops``,
``estimate_peak_bandwidth_dram``, the ``cuda`` twins and the ``registry``'s generic functions).
TVM 0.27 has no profiler: no ``tvm.runtime.profiling``, no profiling VM, no per-kernel report.
``roofline_analysis`` and ``roofline_from_existing`` are refused at the call, as are the peak
estimates (the microbenchmarks are TVM 0.19 TIR; serving them on 0.27 is left undone).
"""

from __future__ import annotations

from compile_engine_compat.surfaces.import_alias import refused_name

__all__ = ["cuda", "registry", "roofline_analysis", "roofline_from_existing", "x86"]

#: Why the analysis is refused, and what to use instead.
PROFILER_WHY = (
    "TVM 0.27 has no profiler (tvm.runtime.profiling, the profiling VM and its per-kernel "
    "Report are gone), which the roofline analysis reads: time the built module with "
    "module.time_evaluator (relay.build's GraphModule.benchmark) and count FLOPs with "
    "tvm.s_tir.analysis.estimate_tir_flops on each kernel"
)
#: Why the peak estimates are refused.
ESTIMATE_WHY = (
    "TVM 0.19's peak FLOP/s and bandwidth microbenchmarks (tvm.utils.roofline.x86, .cuda, "
    ".registry) are not served on TVM 0.27: measure the peaks with a benchmark of your own "
    "(a tvm.compile'd kernel timed with time_evaluator)"
)

_MODULE = "tvm.utils.roofline"
roofline_analysis = refused_name(f"{_MODULE}.roofline_analysis", PROFILER_WHY)
roofline_from_existing = refused_name(f"{_MODULE}.roofline_from_existing", PROFILER_WHY)
x86 = refused_name(f"{_MODULE}.x86", ESTIMATE_WHY)
cuda = refused_name(f"{_MODULE}.cuda", ESTIMATE_WHY)
registry = refused_name(f"{_MODULE}.registry", ESTIMATE_WHY)
