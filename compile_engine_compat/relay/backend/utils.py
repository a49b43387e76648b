"""``relay.backend.utils``: ``mangle_module_name``, the C name prefix of a generated module, as
TVM 0.19's ``relay.backend.utils`` had it (no name, ``""`` or ``None``, is ``tvmgen``)."""

from __future__ import annotations

from compile_engine_compat.facade.engine import mangle_module_name as _engine_mangle

__all__ = ["mangle_module_name"]


def mangle_module_name(mod_name: str | None) -> str:
    """``tvmgen_<mod_name>``, or ``tvmgen`` for no name.

    Raises
    ------
    ValueError
        When the name holds characters a C symbol cannot.
    TypeError
        When the name is neither a str nor None.
    """
    return _engine_mangle("" if mod_name is None else mod_name)
