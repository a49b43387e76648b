"""``tvm.target.VirtualDevice`` of TVM <=0.19 (served by ``install()``), and the refused
``make_compilation_config``.

The class lives in :mod:`compile_engine_compat.virtual_devices`, below the Relay front end,
whose ``on_device`` and ``device_copy`` attributes hold one.
"""

from __future__ import annotations

from compile_engine_compat.surfaces.import_alias import refused_name
from compile_engine_compat.virtual_devices import VirtualDevice

__all__ = ["VirtualDevice", "make_compilation_config"]


#: Why Relay's device planning is refused, and what replaces it.
PLANNING_WHY = (
    "Relay's device planning across several targets (CompilationConfig, PlanDevices) is not "
    "served: place Relax tensors with R.to_vdevice and relax.transform.RealizeVDevice; "
    "relay.build compiles for one target"
)

#: ``tvm.target.make_compilation_config(ctxt, targets)``: TVM 0.19's ``CompilationConfig`` fed
#: Relay's device planning (``PlanDevices``) over several targets; refused when called.
make_compilation_config = refused_name("tvm.target.make_compilation_config", PLANNING_WHY)
