"""``relay.testing.init``: parameter initializers and ``create_workload`` (TVM <=0.19).

A workload is a Relay function whose only typed input is ``data``; every other parameter is a
weight whose shape inference finds from its use. :func:`create_workload` makes the module and
fills each weight by the ending of its name, as Relay's did: ``*weight`` by the initializer
(Xavier by default), ``*bias``/``*beta``/``*mean`` with 0, ``*gamma``/``*var`` with 1, drawing
from ``np.random`` after ``np.random.seed(seed)``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import tvm

__all__ = ["Constant", "Initializer", "Xavier", "create_workload"]

#: Name ending -> the constant Relay filled it with (checked in this order, as Relay did).
_FILLS: tuple[tuple[str, float | None], ...] = (
    ("weight", None),  # the initializer's own rule
    ("bias", 0.0),
    ("gamma", 1.0),
    ("beta", 0.0),
    ("mean", 0.0),
    ("var", 1.0),
)


class Initializer:
    """Relay's initializer base: ``init(name, array)`` fills ``array`` in place by ``name``.

    Subclasses implement :meth:`_init_weight`; names ending otherwise get Relay's constants.
    """

    def __init__(self, **kwargs: Any) -> None:
        self._kwargs = kwargs

    def __call__(self, desc: str, arr: np.ndarray) -> None:
        """Fill ``arr`` (a numpy array) for the parameter called ``desc``."""
        for ending, value in _FILLS:
            if desc.endswith(ending):
                if value is None:
                    self._init_weight(desc, arr)
                else:
                    arr[:] = value
                return
        raise ValueError(
            f"Unknown initialization pattern for {desc}: parameter names must end in weight, "
            "bias, gamma, beta, mean or var"
        )

    def _init_weight(self, name: str, arr: np.ndarray) -> None:
        raise NotImplementedError("an Initializer subclass must fill weights")


class Xavier(Initializer):
    """Xavier (Glorot) initialization of weights: uniform in ``+-sqrt(magnitude / factor)``.

    Parameters
    ----------
    rnd_type : {"uniform"}
        Only uniform draws, as in Relay.
    factor_type : {"avg", "in", "out"}
        Which fan the scale divides by (fans count the spatial window).
    magnitude : float
        The scale's numerator.
    """

    def __init__(self, rnd_type: str = "uniform", factor_type: str = "avg", magnitude: float = 3):
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def _init_weight(self, name: str, arr: np.ndarray) -> None:
        if arr.ndim < 2:
            raise ValueError(f"Xavier initializer needs a weight of rank 2 or more: {name}")
        window = math.prod(arr.shape[2:])
        fans = {"in": arr.shape[1] * window, "out": arr.shape[0] * window}
        fans["avg"] = (fans["in"] + fans["out"]) / 2.0
        if self.factor_type not in fans:
            raise ValueError(f"Incorrect factor type {self.factor_type!r}")
        # A depthwise kernel has one input channel per group: its fan is the window alone.
        factor = window if "depthwise" in name else fans[self.factor_type]
        if self.rnd_type != "uniform":
            raise ValueError(f"Unknown random type {self.rnd_type!r}")
        bound = math.sqrt(self.magnitude / factor)
        arr[:] = np.random.uniform(-bound, bound, size=arr.shape)


class Constant(Initializer):
    """Every weight is ``1 / size``, so each weight tensor sums to one."""

    def _init_weight(self, name: str, arr: np.ndarray) -> None:
        arr[:] = 1.0 / arr.size


def create_workload(
    net: Any, initializer: Initializer | None = None, seed: int = 0
) -> tuple[tvm.IRModule, dict[str, Any]]:
    """``relay.testing.create_workload(net, initializer=None, seed=0)``.

    Parameters
    ----------
    net : relay.Function
        The network; its parameter ``data`` is the input, the others are weights.
    initializer : Initializer, optional
        Default :class:`Xavier`.
    seed : int
        Seed of ``np.random`` for the draws.

    Returns
    -------
    mod : tvm.IRModule
        ``main`` is the network's Relax function.
    params : dict of str to tvm.runtime.Tensor
        Every weight by name.
    """
    mod = tvm.IRModule.from_expr(net)
    np.random.seed(seed)
    initializer = initializer if initializer is not None else Xavier()
    params: dict[str, Any] = {}
    for param in mod["main"].params:
        if param.name == "data":
            continue
        ty = param.ty
        value = np.zeros([int(d) for d in ty.shape], dtype=str(ty.dtype))
        initializer(param.name, value)
        params[param.name] = tvm.runtime.tensor(value, tvm.cpu(0))
    return mod, params
