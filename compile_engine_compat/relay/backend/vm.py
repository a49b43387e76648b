"""``relay.backend.vm`` (``tvm.relay.backend.vm`` under ``install()``): Relay's home of the VM
compiler, the same objects as :mod:`compile_engine_compat.relay.vm` (``relay.vm`` re-exported
them from here in TVM <= 0.19): ``compile``, ``VMCompiler`` and ``Executable``, on the Relax VM.
"""

from __future__ import annotations

from ..build_module import VMExecutor
from ..vm import Executable, VMCompiler, compile

__all__ = ["Executable", "VMCompiler", "VMExecutor", "compile"]
