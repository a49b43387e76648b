"""``relay.data_dep_optimization.bsr_dense``: sparse weights, refused when called."""

from __future__ import annotations

from compile_engine_compat.relay.transform.refused import SPARSE_WHY
from compile_engine_compat.surfaces.import_alias import refused_name

__all__ = ["convert"]

convert = refused_name("tvm.relay.data_dep_optimization.bsr_dense.convert", SPARSE_WHY)
