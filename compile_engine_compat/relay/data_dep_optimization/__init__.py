"""``relay.data_dep_optimization``: Relay's rewrites that change a model's parameters.

:mod:`.simplify_fc_transpose` is served (the Relay graph rewrite ``SimplifyFCTranspose`` with the
weights transposed in NumPy); :mod:`.bsr_dense` and :mod:`.bsr_conv2d` (sparse weights) are
refused when called, naming what replaces them.
"""

from __future__ import annotations

from . import bsr_conv2d, bsr_dense, simplify_fc_transpose

__all__ = ["bsr_conv2d", "bsr_dense", "simplify_fc_transpose"]
