"""``relay.qnn.op.requantize_config``: the rounding and compute dtype a requantize without its
own (``"None"``) uses, as TVM 0.19's ``RequantizeConfig``.

The defaults are TVM 0.19's: rounding ``"UPWARD"``; compute dtype ``"float32"`` when the target
is an LLVM CPU target with SSE4.1, else ``"int64"``. TVM 0.19's ``relay.build`` lowered QNN under
its target; here the lowering runs when the graph becomes Relax, where no target may be current:
then the target is the build's default, ``llvm`` on this host.
"""

from __future__ import annotations

import contextvars
import platform
from typing import Any

import tvm

__all__ = [
    "RequantizeConfig",
    "current_requantize_config",
    "requantize_config",
    "resolved_compute_dtype",
    "resolved_rounding",
]

ROUNDINGS = ("UPWARD", "TONEAREST")
COMPUTE_DTYPES = ("int64", "float32", "float64")


def _host_has_sse41() -> bool:
    if platform.machine().lower() not in ("x86_64", "amd64", "i686", "x86"):
        return False
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            return "sse4_1" in info.read()
    except OSError:  # not Linux: every x86-64 CPU of the last 15 years has it
        return True


def _default_compute_dtype() -> str:
    target = tvm.target.Target.current(allow_none=True)
    if target is None:  # the build's default target: llvm on this host
        return "float32" if _host_has_sse41() else "int64"
    if str(target.kind.name) != "llvm":
        return "int64"
    triple = str(target.attrs.get("mtriple", "")).lower()
    if triple and not triple.startswith(("x86", "i686", "amd64")):
        return "int64"  # a cross target without SSE4.1 (AArch64, RISC-V, ...)
    return "float32" if _host_has_sse41() or triple else "int64"


class RequantizeConfig:
    """The requantize defaults in force (``with relay.qnn.op.requantize_config(...):``).

    Attributes
    ----------
    rounding : str
        ``"UPWARD"`` or ``"TONEAREST"``.
    compute_dtype : str
        ``"int64"``, ``"float32"`` or ``"float64"``.
    """

    def __init__(self, rounding: str | None = None, compute_dtype: str | None = None) -> None:
        if rounding is not None and rounding not in ROUNDINGS:
            raise ValueError(f"requantize rounding must be one of {ROUNDINGS}, got {rounding!r}")
        if compute_dtype is not None and compute_dtype not in COMPUTE_DTYPES:
            raise ValueError(
                f"requantize compute_dtype must be one of {COMPUTE_DTYPES}, got {compute_dtype!r}"
            )
        self._rounding = rounding
        self._compute_dtype = compute_dtype
        self._token: contextvars.Token[RequantizeConfig | None] | None = None

    @property
    def rounding(self) -> str:
        """The rounding (TVM 0.19's default: ``"UPWARD"``)."""
        return self._rounding or "UPWARD"

    @property
    def compute_dtype(self) -> str:
        """The compute dtype (TVM 0.19's default depends on the current target)."""
        return self._compute_dtype or _default_compute_dtype()

    def __enter__(self) -> RequantizeConfig:
        self._token = _CURRENT.set(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._token is not None:
            _CURRENT.reset(self._token)
            self._token = None

    def __repr__(self) -> str:
        return f"RequantizeConfig(rounding={self.rounding!r}, compute_dtype={self.compute_dtype!r})"


_CURRENT: contextvars.ContextVar[RequantizeConfig | None] = contextvars.ContextVar(
    "qnn_requantize_config", default=None
)


def requantize_config(**kwargs: Any) -> RequantizeConfig:
    """``relay.qnn.op.requantize_config(rounding=..., compute_dtype=...)``: a config to enter."""
    unknown = set(kwargs) - {"rounding", "compute_dtype"}
    if unknown:
        raise TypeError(
            f"requantize_config takes rounding and compute_dtype, not {sorted(unknown)}"
        )
    return RequantizeConfig(kwargs.get("rounding"), kwargs.get("compute_dtype"))


def current_requantize_config() -> RequantizeConfig:
    """``relay.qnn.op.current_requantize_config()``: the config in force."""
    return _CURRENT.get() or RequantizeConfig()


def resolved_rounding(rounding: str) -> str:
    """A call's rounding: its own, or the config's for ``"None"``; checked."""
    value = current_requantize_config().rounding if rounding in ("None", None) else rounding
    if value not in ROUNDINGS:
        raise ValueError(f"QNN requantize supports rounding UPWARD and TONEAREST, got {value!r}")
    return str(value)


def resolved_compute_dtype(compute_dtype: str) -> str:
    """A call's compute dtype: its own, or the config's for ``"None"``; checked."""
    value = (
        current_requantize_config().compute_dtype
        if compute_dtype in ("None", None)
        else compute_dtype
    )
    if value not in COMPUTE_DTYPES:
        raise ValueError(
            f"QNN requantize supports compute_dtype int64, float32 and float64, got {value!r}"
        )
    return str(value)
