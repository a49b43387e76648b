"""Hypothesis strategies that draw random, well-typed Relax functions and inputs for them.

Use them with the oracle to prove, on your own op mix, that the shim computes what the modern
path computes::

    from hypothesis import given, strategies as st
    from compile_engine_compat.testing import relax_functions, input_arrays
    from compile_engine_compat.testing import assert_matches_new_path

    @given(st.data())
    def test_shim_matches(data):
        func = data.draw(relax_functions(max_ops=4, dtypes=["float32"]))
        inputs = data.draw(input_arrays(func))
        assert_matches_new_path(func, *inputs, seed=inputs.seed)

The registry (:data:`OP_NAMES`) holds elementwise unary and binary ops with broadcasting,
comparisons and logical ops, reductions with axes and keepdims, matmul, conv1d/2d, pooling,
softmax and layer/group/RMS norm, and shape ops (reshape, permute_dims, concat, split,
strided_slice, take, where, astype, clip, cumsum, sort, topk, ...). Drawn functions may have
several parameters, shared subexpressions, tuple outputs (also outputs that are parameters),
scalar and tensor constants, and one symbolic dim ``n``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import tvm
from hypothesis import strategies as st
from tvm import relax, tirx

from compile_engine_compat.pipeline.trace import source_function
from compile_engine_compat.testing.op_plans import (
    ALL_DTYPES,
    INDEX,
    MAX_SIDE,
    OPS,
    POSITIVE,
    CannotApply,
    Plan,
    Planner,
    build_function,
    spec_for,
    values,
)
from compile_engine_compat.testing.oracle import (
    EquivalenceError,
    assert_matches_new_path,
    numpy_reference,
)

__all__ = [
    "ALL_DTYPES",
    "OP_NAMES",
    "EquivalenceError",
    "Inputs",
    "arrays_for",
    "assert_matches_new_path",
    "build_function",
    "input_arrays",
    "numpy_reference",
    "relax_functions",
    "relax_plans",
]

#: Every op the strategies can draw, by registry name (the Relax op name without ``relax.``).
OP_NAMES: tuple[str, ...] = tuple(OPS)


def _select(ops: Iterable[str] | None, dtypes: Sequence[str]) -> list[Any]:
    names = list(OPS) if ops is None else [o.removeprefix("relax.") for o in ops]
    unknown = [n for n in names if n not in OPS]
    if unknown:
        raise ValueError(
            f"unknown ops {unknown}; choose from compile_engine_compat.testing.OP_NAMES"
        )
    bad = [d for d in dtypes if d not in ALL_DTYPES]
    if bad or not dtypes:
        raise ValueError(f"dtypes must be a non-empty subset of {ALL_DTYPES}, got {list(dtypes)}")
    allowed = set(dtypes)
    specs = [OPS[n] for n in names if OPS[n].dtypes & allowed and OPS[n].needs <= allowed]
    if not specs:
        raise ValueError(f"none of the ops {names} accepts the dtypes {list(dtypes)}")
    return specs


def relax_plans(
    ops: Iterable[str] | None = None,
    max_ops: int = 4,
    dtypes: Sequence[str] = ALL_DTYPES,
    symbolic: bool = False,
) -> st.SearchStrategy[Plan]:
    """Draw function *plans* (plain data); :func:`build_function` turns one into Relax.

    Useful to build variants of one function, e.g. with other parameter names. Arguments as in
    :func:`relax_functions`.
    """
    if max_ops < 1:
        raise ValueError(f"max_ops must be at least 1, got {max_ops}")
    specs = _select(ops, dtypes)
    dtypes = tuple(d for d in ALL_DTYPES if d in dtypes)

    @st.composite
    def plans(draw: Any) -> Plan:
        planner = Planner(draw, dtypes, symbolic)
        for _ in range(draw(st.integers(1, max_ops))):
            for _attempt in range(4):
                # Uniform over the ops (sampled_from favours some indices); shrinks to the first.
                spec = specs[draw(st.integers(0, 2**20)) % len(specs)]
                try:
                    step = spec.plan(planner, spec)
                except CannotApply:
                    continue
                if step is not None:
                    planner.add_step(step)
                    break
        plan = planner.plan
        if not plan.steps:
            from hypothesis import reject

            reject()
        last = len(plan.steps) - 1
        outputs = [i for i, o in enumerate(plan.origin) if o[0] == "step" and o[1] == last]
        extra = draw(st.lists(st.sampled_from(range(len(plan.nodes))), max_size=2))
        plan.outputs = outputs + extra
        return plan

    return plans()


def relax_functions(
    ops: Iterable[str] | None = None,
    max_ops: int = 4,
    dtypes: Sequence[str] = ALL_DTYPES,
    symbolic: bool = False,
) -> st.SearchStrategy[relax.Function]:
    """Draw random, well-typed, normalized Relax functions of 1 to ``max_ops`` ops.

    Parameters
    ----------
    ops : iterable of str, optional
        Registry names to draw from (``"add"``, ``"nn.conv2d"``; a ``relax.`` prefix is
        accepted). Default: all of :data:`OP_NAMES`.
    max_ops : int
        The most op applications in one function (at least 1).
    dtypes : sequence of str
        The tensor dtypes parameters and results may have, among ``float32``, ``float16``,
        ``int32``, ``int64`` and ``bool``. Each op uses those it allows.
    symbolic : bool
        Let parameters have the symbolic leading dim ``n`` (shared by all of them).

    Returns
    -------
    hypothesis.strategies.SearchStrategy of tvm.relax.Function
        Named ``main``, parameters ``p0``, ``p1``, ...

    Raises
    ------
    ValueError
        For an unknown op or dtype, or when no chosen op accepts any chosen dtype.
    """
    return relax_plans(ops, max_ops, dtypes, symbolic).map(build_function)


# -- inputs -------------------------------------------------------------------------------------


class Inputs(tuple):
    """The arrays for one call, with what reproduces them: ``arrays_for(func, seed, sizes)``.

    Attributes
    ----------
    seed : int
        The NumPy seed of the values.
    sizes : dict of str to int
        The value chosen for each symbolic dim, by name.
    """

    seed: int
    sizes: dict[str, int]

    def __new__(cls, arrays: Sequence[np.ndarray], seed: int, sizes: dict[str, int]) -> Inputs:
        self = super().__new__(cls, arrays)
        self.seed = seed
        self.sizes = sizes
        return self

    def __repr__(self) -> str:
        shapes = ", ".join(f"{a.dtype}{list(a.shape)}" for a in self)
        return f"Inputs(seed={self.seed}, sizes={self.sizes}, arrays=[{shapes}])"


def _tensor_params(func: relax.Function) -> list[relax.Var]:
    for param in func.params:
        ty = param.ty
        if not isinstance(ty, relax.TensorType) or not isinstance(ty.shape, relax.ShapeExpr):
            raise TypeError(
                f"input_arrays needs tensor parameters with a known shape; {param.name!r} is {ty}"
            )
    return list(func.params)


def _sym_vars(params: Sequence[relax.Var]) -> list[tirx.Var]:
    found: list[tirx.Var] = []
    for param in params:
        for dim in param.ty.shape.values:
            if isinstance(dim, tirx.Var) and not any(dim.same_as(v) for v in found):
                found.append(dim)
            elif not isinstance(dim, tirx.Var | tirx.IntImm):
                raise TypeError(
                    f"parameter {param.name!r} has the shape expression {dim}; input_arrays "
                    "can only choose plain symbolic dims"
                )
    return found


def _domains(func: relax.Function) -> dict[Any, tuple[str, Any]]:
    """Parameter -> (domain, detail) from the ops that consume it directly."""
    found: dict[Any, tuple[str, Any]] = {}
    params = set(func.params)

    def note(arg: Any, domain: tuple[str, Any]) -> None:
        if arg in params and found.get(arg, ("",))[0] != POSITIVE:
            found[arg] = domain

    for block in func.body.blocks:
        for binding in block.bindings:
            call = binding.value
            if not isinstance(call, tvm.ir.Call) or not isinstance(call.op, tvm.ir.Op):
                continue
            spec = spec_for(call.op.name)
            if spec is None:
                continue
            for index, domain in spec.domains.items():
                if domain != INDEX:
                    note(call.args[index], (domain, None))
                elif call.attrs.axis is not None:  # an index into argument 0 along the axis
                    data_shape = call.args[0].ty.shape.values
                    note(call.args[index], (INDEX, data_shape[int(call.attrs.axis)]))
    return found


def arrays_for(
    func: Any, seed: int, sizes: dict[str, int] | None = None, avoid_undefined: bool = True
) -> Inputs:
    """Deterministic inputs for ``func``: what :func:`input_arrays` draws for this seed.

    Parameters
    ----------
    func : relax.Function or tvm.IRModule
    seed : int
        NumPy seed of the values.
    sizes : dict of str to int, optional
        A value per symbolic dim name; missing ones are 1 + seed-derived.
    avoid_undefined : bool
        Give parameters consumed by ``log``/``sqrt``/``power`` positive values, integer divisors
        non-zero values, and ``take`` indices in range. False gives plain random values.
    """
    func = source_function(func)
    params = _tensor_params(func)
    rng = np.random.default_rng(seed)
    chosen = {v.name: int(rng.integers(1, MAX_SIDE + 1)) for v in _sym_vars(params)}
    chosen.update(sizes or {})

    def size(dim: Any) -> int:
        return chosen[dim.name] if isinstance(dim, tirx.Var) else int(dim)

    domains = _domains(func) if avoid_undefined else {}
    arrays = []
    for param in params:
        shape = tuple(size(d) for d in param.ty.shape.values)
        dtype = str(param.ty.dtype)
        domain, detail = domains.get(param, (None, None))
        if domain == INDEX:
            arrays.append(rng.integers(0, size(detail), shape).astype(dtype))
        else:
            arrays.append(values(rng, shape, dtype, domain))
    return Inputs(arrays, seed, chosen)


def input_arrays(func: Any, avoid_undefined: bool = True) -> st.SearchStrategy[Inputs]:
    """Draw NumPy inputs matching ``func``'s parameters (and a size for each symbolic dim).

    Values avoid points where an op is undefined (log of negatives, integer division by zero,
    out-of-range ``take`` indices) unless ``avoid_undefined=False``. The draw is a seed plus the
    symbolic sizes, so it shrinks to seed 0 and size 1 and is reproducible with
    :func:`arrays_for`.

    Returns
    -------
    hypothesis.strategies.SearchStrategy of Inputs
        A tuple of ``numpy.ndarray`` with ``.seed`` and ``.sizes``.
    """
    func = source_function(func)
    names = [v.name for v in _sym_vars(_tensor_params(func))]
    sizes = st.fixed_dictionaries({n: st.integers(1, MAX_SIDE) for n in names})
    return st.builds(
        lambda seed, chosen: arrays_for(func, seed, chosen, avoid_undefined),
        st.integers(0, 2**32 - 1),
        sizes,
    )
