"""``relay.quantize.qconfig``: the quantization settings, a context as in TVM 0.19.

``with qconfig(nbit_input=8, calibrate_mode="global_scale", ...):`` makes a :class:`QConfig`
current for :func:`~.quantize.quantize`; :func:`current_qconfig` reads it. Defaults are TVM
0.19's. As there, a keyword TVM 0.19 did not know is ignored (upstream's own tests misspell
one); the shim warns, naming it.
"""

from __future__ import annotations

import threading
import warnings
from types import TracebackType
from typing import Any

from compile_engine_compat.deprecations import legacy_api

__all__ = ["QAnnotateKind", "QConfig", "current_qconfig", "qconfig"]


class QAnnotateKind:
    """TVM 0.19's kinds of quantized value: what a simulated quantization point feeds."""

    IDENTITY = 0
    INPUT = 1
    WEIGHT = 2
    ACTIVATION = 3


#: TVM 0.19's ``QConfig`` fields and defaults.
DEFAULTS: dict[str, Any] = {
    "nbit_input": 8,
    "nbit_weight": 8,
    "nbit_activation": 32,
    "dtype_input": "int8",
    "dtype_weight": "int8",
    "dtype_activation": "int32",
    "calibrate_mode": "global_scale",
    "global_scale": 8.0,
    "weight_scale": "power2",
    "skip_dense_layer": True,
    "skip_conv_layers": [0],
    "do_simulation": False,
    "round_for_shift": True,
    "debug_enabled_ops": None,
    "rounding": "UPWARD",
    "calibrate_chunk_by": -1,
    "partition_conversions": "disabled",
}

CALIBRATE_MODES = ("global_scale", "kl_divergence", "percentile")
WEIGHT_SCALES = ("power2", "max")
PARTITION_MODES = ("disabled", "enabled", "fully_integral")


class QConfig:
    """The settings of one quantization (TVM 0.19's ``relay.quantize.QConfig``).

    Parameters
    ----------
    **fields
        The fields of :data:`DEFAULTS`; each is an attribute.
    """

    nbit_input: int
    nbit_weight: int
    nbit_activation: int
    dtype_input: str
    dtype_weight: str
    dtype_activation: str
    calibrate_mode: str
    global_scale: float
    weight_scale: str
    skip_dense_layer: bool
    skip_conv_layers: list[int] | None
    do_simulation: bool
    round_for_shift: bool
    debug_enabled_ops: list[str] | None
    rounding: str
    calibrate_chunk_by: int
    partition_conversions: str

    def __init__(self, **fields: Any) -> None:
        values = {**DEFAULTS, **fields}
        _check(values)
        self.__dict__.update(values)
        self._outer: QConfig | None = None

    def get_nbit_by_kind(self, kind: int) -> int:
        """The bit width of a :class:`QAnnotateKind`."""
        found: int = {
            QAnnotateKind.INPUT: self.nbit_input,
            QAnnotateKind.WEIGHT: self.nbit_weight,
            QAnnotateKind.ACTIVATION: self.nbit_activation,
        }[kind]
        return found

    def dtype_by_kind(self, kind: int) -> str:
        """The integer dtype of a :class:`QAnnotateKind`."""
        found: str = {
            QAnnotateKind.INPUT: self.dtype_input,
            QAnnotateKind.WEIGHT: self.dtype_weight,
            QAnnotateKind.ACTIVATION: self.dtype_activation,
        }[kind]
        return found

    def guard(self, ref_call: Any) -> bool:
        """TVM 0.19's ``debug_enabled_ops`` check: whether ``ref_call``'s op may be quantized."""
        if self.debug_enabled_ops is None:
            return True
        return str(ref_call.op.name) in [str(n) for n in self.debug_enabled_ops]

    def __enter__(self) -> QConfig:
        self._outer = current_qconfig()
        _STATE.current = self
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        _STATE.current = self._outer

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={getattr(self, k)!r}" for k in DEFAULTS)
        return f"qconfig({shown})"


def _check(values: dict[str, Any]) -> None:
    for key, allowed in (
        ("calibrate_mode", CALIBRATE_MODES),
        ("weight_scale", WEIGHT_SCALES),
        ("partition_conversions", PARTITION_MODES),
    ):
        if values[key] not in allowed:
            raise ValueError(f"qconfig: {key}={values[key]!r} is not one of {allowed}")
    for key in ("nbit_input", "nbit_weight", "nbit_activation"):
        if not isinstance(values[key], int) or not 2 <= values[key] <= 32:
            raise ValueError(f"qconfig: {key} must be an int from 2 to 32, got {values[key]!r}")
    if float(values["global_scale"]) <= 0:
        raise ValueError(f"qconfig: global_scale must be positive, got {values['global_scale']}")


class _State(threading.local):
    current: QConfig | None = None


_STATE = _State()


def current_qconfig() -> QConfig:
    """The :class:`QConfig` of the innermost ``with qconfig(...)`` (TVM 0.19's defaults
    outside any)."""
    return _STATE.current if _STATE.current is not None else QConfig()


@legacy_api("relay.quantize")
def qconfig(**kwargs: Any) -> QConfig:
    """``relay.quantize.qconfig(**kwargs)``: a :class:`QConfig` to use with ``with``.

    Parameters
    ----------
    **kwargs
        Fields of :data:`DEFAULTS` (``nbit_input``, ``calibrate_mode``, ``global_scale``,
        ``skip_conv_layers``...). An unknown keyword is ignored, as in TVM 0.19, with a
        ``UserWarning`` naming it.

    Returns
    -------
    QConfig
    """
    unknown = sorted(set(kwargs) - set(DEFAULTS))
    if unknown:
        warnings.warn(
            f"relay.quantize.qconfig ignores {unknown} (not a QConfig field; TVM 0.19 ignored "
            f"it too). Fields: {sorted(DEFAULTS)}",
            UserWarning,
            stacklevel=2,
        )
    return QConfig(**{k: v for k, v in kwargs.items() if k in DEFAULTS})
