# Generated from compile_engine_compat/api_table.py by `python -m compile_engine_compat.migrate.stubs`.
# Do not edit: PEP 702 marks for type checkers; the runtime warnings come from the shim itself.

from typing import Any

from . import _backend as _backend
from . import compile_engine as compile_engine
from . import te_compiler as te_compiler

def __getattr__(name: str) -> Any: ...  # the rest is TVM's own, or absent
