"""``relay.quantize``'s calibration: the scale of every quantization point.

As in TVM 0.19: a weight's scale is the power of two at or above its largest magnitude
(``weight_scale="power2"``) or that magnitude (``"max"``); every other point's threshold is
``global_scale`` (``calibrate_mode="global_scale"``) or is found from the values the point
takes when the float function runs on ``dataset`` (``"kl_divergence"``, ``"percentile"``).
Each scale is the threshold over the integer range, ``2^(nbit-1)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import tvm

from compile_engine_compat.deprecations import INTERNAL

from ..expr import Expr, Tuple
from ..function import Function
from .kl_divergence import kl_divergence_scale, percentile_scale
from .qconfig import QAnnotateKind, QConfig

__all__ = ["FixedScales", "PointCollector", "calibrate_scales"]


class PointCollector:
    """A :class:`~.annotation.ScaleSource` listing the points (each given scale 1)."""

    def __init__(self) -> None:
        self.points: list[tuple[Expr, int, np.ndarray | None]] = []

    def scale(self, source: Expr, kind: int, value: np.ndarray | None) -> float:
        self.points.append((source, kind, value))
        return 1.0


class FixedScales:
    """A :class:`~.annotation.ScaleSource` giving the calibrated scales in order."""

    def __init__(self, scales: Sequence[float]) -> None:
        self._scales = list(scales)
        self._next = 0

    def scale(self, source: Expr, kind: int, value: np.ndarray | None) -> float:
        found = self._scales[self._next]
        self._next += 1
        return found


def _weight_threshold(cfg: QConfig, value: np.ndarray) -> float:
    top = float(np.max(np.abs(value))) if value.size else 0.0
    if top == 0.0:
        return 1.0
    return float(2 ** math.ceil(math.log2(top))) if cfg.weight_scale == "power2" else top


def calibrate_scales(
    cfg: QConfig,
    func: Function,
    points: Sequence[tuple[Expr, int, np.ndarray | None]],
    dataset: Iterable[Mapping[str, Any]] | None,
) -> list[float]:
    """The scale of each point of ``points`` (listed by a :class:`PointCollector`).

    Raises
    ------
    ValueError
        For ``kl_divergence``/``percentile`` without a dataset, or a dataset entry missing an
        input of ``func``.
    """
    thresholds: dict[int, float] = {}
    measured = [
        i
        for i, (_, kind, value) in enumerate(points)
        if not (kind == QAnnotateKind.WEIGHT and value is not None)
    ]
    if cfg.calibrate_mode != "global_scale" and measured:
        find = kl_divergence_scale if cfg.calibrate_mode == "kl_divergence" else percentile_scale
        samples = _collect(func, [points[i][0] for i in measured], dataset, cfg)
        thresholds = {i: find(sample) for i, sample in zip(measured, samples)}
    scales = []
    for i, (_, kind, value) in enumerate(points):
        if kind == QAnnotateKind.WEIGHT and value is not None:
            threshold = _weight_threshold(cfg, value)
        else:
            threshold = thresholds.get(i, float(cfg.global_scale))
        scales.append(threshold / 2 ** (cfg.get_nbit_by_kind(kind) - 1))
    return scales


def _collect(
    func: Function,
    sources: Sequence[Expr],
    dataset: Iterable[Mapping[str, Any]] | None,
    cfg: QConfig,
) -> list[np.ndarray]:
    """The values each of ``sources`` takes over ``dataset``, flattened and joined."""
    if dataset is None:
        raise ValueError(
            f"relay.quantize.quantize: calibrate_mode={cfg.calibrate_mode!r} needs a dataset "
            "(a list of {input name: array}); pass dataset=, or use calibrate_mode='global_scale'"
        )
    batches = list(dataset)
    if not batches:
        raise ValueError("relay.quantize.quantize: the calibration dataset is empty")
    chunk = int(cfg.calibrate_chunk_by)
    chunk = len(sources) if chunk <= 0 else chunk
    out: list[np.ndarray] = []
    for start in range(0, len(sources), chunk):
        part = list(sources[start : start + chunk])
        run = _runner(func, part)
        values: list[list[np.ndarray]] = [[] for _ in part]
        for batch in batches:
            for slot, got in zip(values, run(*_inputs(func, batch))):
                slot.append(got.numpy().ravel())
        out.extend(np.concatenate(v) for v in values)
    return out


def _runner(func: Function, sources: list[Expr]) -> Any:
    from ..build_module import create_executor

    probe = Function(list(func.params), Tuple(sources))
    mod = tvm.IRModule.from_expr(probe)
    return create_executor("vm", mod=mod, device=tvm.cpu(0), target="llvm", **INTERNAL).evaluate()


def _inputs(func: Function, batch: Mapping[str, Any]) -> list[np.ndarray]:
    args = []
    for param in func.params:
        if param.name_hint not in batch:
            raise ValueError(
                f"relay.quantize.quantize: a calibration entry has no value for input "
                f"{param.name_hint!r} (it has {sorted(batch)})"
            )
        dtype = str(getattr(param.checked_type, "dtype", "float32"))
        value = batch[param.name_hint]
        args.append(np.asarray(value.numpy() if hasattr(value, "numpy") else value, dtype=dtype))
    return args
