# Generated from compile_engine_compat/api_table.py by `python -m compile_engine_compat.migrate.stubs`.
# Do not edit: PEP 702 marks for type checkers; the runtime warnings come from the shim itself.

from compile_engine_compat.compile_engine import *  # noqa: F403
