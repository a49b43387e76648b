"""``tvm.relay.quantize._annotate``: the helpers TVM 0.19's quantizer annotated graphs with.

``QAnnotateKind`` is served (:mod:`.qconfig`'s). ``attach_simulated_quantize`` inserted Relay's
``relay.op.annotation.simulated_quantize``, an op of the quantizer's own that the shim's
quantizer does not emit (it annotates and realizes in one rewrite, :mod:`.annotation`): it is
refused when called, naming what quantizes now.
"""

from __future__ import annotations

from compile_engine_compat.surfaces.import_alias import refused_name

from .qconfig import QAnnotateKind

__all__ = ["QAnnotateKind", "attach_simulated_quantize"]

attach_simulated_quantize = refused_name(
    "tvm.relay.quantize._annotate.attach_simulated_quantize",
    "the quantizer's simulated_quantize annotation is not served: quantize with "
    "relay.quantize.quantize(mod, params) under relay.quantize.qconfig(...), or simulate one "
    "tensor's quantization with relay.qnn.op.simulated_quantize",
)
