"""The ``relay.analysis`` names with no meaning on TVM 0.27's Relax modules: each refused when
called (not when imported), naming what replaces it."""

from __future__ import annotations

from compile_engine_compat.surfaces.import_alias import refused_name

__all__ = [
    "analyze_operations_distribution",
    "get_calibration_data",
    "sparse_process_params",
]

_PARTITION = (
    "BYOC partitioning (compiler regions, Compiler/Composite functions) is done on Relax: "
    "tvm.relax.transform.FuseOpsByPattern and MergeCompositeFunctions"
)
analyze_operations_distribution = refused_name(
    "tvm.relay.analysis.operations_distribution.analyze_operations_distribution", _PARTITION
)
get_calibration_data = refused_name(
    "tvm.relay.analysis.get_calibration_data",
    "it ran functions partitioned for an external compiler: partition with "
    "tvm.relax.transform.FuseOpsByPattern and run the module with relax.VirtualMachine",
)
_SPARSE = (
    "sparse weight conversion (relay.data_dep_optimization) has no Relax pass: keep the weights "
    "dense, or write the sparse kernel in TIR and call it with relax.call_tir"
)


def sparse_process_params(module: str) -> object:
    """``process_params`` of ``relay.analysis.<module>`` (sparse_dense, sparse_conv2d), refused."""
    return refused_name(f"tvm.relay.analysis.{module}.process_params", _SPARSE)
