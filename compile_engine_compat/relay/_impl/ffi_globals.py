"""What a Relay ``_ffi_api`` module answers for a C++ global of TVM <=0.19 the shim does not
serve: the module ``__getattr__`` of the ``_ffi_api`` modules of ``relay.transform`` and
``relay.analysis`` (their served globals are defined in those modules themselves)."""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

__all__ = ["unserved_globals"]


def unserved_globals(module: str, public: str, modern: str) -> Callable[[str], NoReturn]:
    """A module ``__getattr__`` refusing every other name of the ``_ffi_api`` of ``relay.<module>``.

    Parameters
    ----------
    module : str
        ``"transform"`` or ``"analysis"``: the Relay module whose ``_ffi_api`` this is.
    public : str
        What the public counterpart of a global is called there ("pass", "function").
    modern : str
        The TVM 0.27 replacement to name.

    Returns
    -------
    callable
        ``__getattr__(name)``: an ``AttributeError`` naming the public counterpart and
        ``modern`` (plain ``AttributeError`` for dunder names, which ``hasattr`` probes).
    """

    def __getattr__(name: str) -> NoReturn:
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(
            f"relay.{module}'s _ffi_api.{name} is a C++ global of TVM <=0.19 that "
            f"compile-engine-compat does not serve: call the public {public} of relay.{module} "
            f"(relay.{module}.{name.lstrip('_')}) or {modern} instead"
        )

    return __getattr__
