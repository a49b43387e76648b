"""``relay.transform.FlexibleShapeDispatch``: ``main`` made to take any size on one axis of
its inputs, on the Relay graph.

TVM 0.19 copied ``main`` once per bucket size (each copy static, inputs padded up to the next
bucket with ``auto_pad``) behind an ``If`` on the input's size, with a dynamic copy for every
other size. Relax compiles one function for symbolic shapes, so the closest substitute, and the
one served, is that dynamic copy alone: the chosen inputs get ``relay.Any()`` on ``axis``. The
results are those of TVM 0.19 for every size; the buckets, padding and ``affects_output`` only
chose kernels and are not used.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compile_engine_compat.deprecations import legacy_api

from ..expr import Var, bind
from ..function import Function
from ..ty import Any as AnyDim
from ..ty import TensorType
from .graph_rewrites import graph_pass

__all__ = ["FlexibleShapeDispatch"]


def _dynamic(axis: int, indices: Sequence[int]) -> Any:
    def rewrite(func: Function) -> Function:
        params = list(func.params)
        mapping: dict[Var, Var] = {}
        for index in indices:
            if not 0 <= index < len(params):
                raise ValueError(
                    f"FlexibleShapeDispatch(input_indices={list(indices)}): main has "
                    f"{len(params)} parameters"
                )
            param = params[index]
            ty = param.type_annotation
            if not isinstance(ty, TensorType) or not -len(ty.shape) <= axis < len(ty.shape):
                raise ValueError(
                    f"FlexibleShapeDispatch(axis={axis}): parameter {param.name_hint!r} of type "
                    f"{ty} has no such axis"
                )
            shape = list(ty.shape)
            shape[axis] = AnyDim()
            params[index] = mapping[param] = Var(param.name_hint, TensorType(shape, ty.dtype))
        body = bind(func.body, mapping)
        return Function(params, body, None, func.type_params, func.attrs)

    return rewrite


@legacy_api("relay.transform.more_passes")
def FlexibleShapeDispatch(
    buckets: Sequence[int],
    axis: int = 0,
    auto_pad: bool = False,
    pad_value: float = 0,
    input_indices: Sequence[int] | None = None,
    affects_output: bool = True,
) -> Any:
    """``relay.transform.FlexibleShapeDispatch(buckets, axis=0, ...)`` (opt level 0).

    The inputs ``input_indices`` (the first by default) of each function take any size on
    ``axis`` (``relay.Any()``), which serves every size TVM 0.19's buckets and fallback served,
    with the same results; see the module docstring for what is not used.
    """
    if not buckets or not all(isinstance(b, int) and b > 0 for b in buckets):
        raise ValueError(
            f"FlexibleShapeDispatch(buckets) takes positive sizes, got {list(buckets or [])!r}"
        )
    indices = [0] if input_indices is None else [int(i) for i in input_indices]
    return graph_pass("FlexibleShapeDispatch", 0, _dynamic(int(axis), indices))
