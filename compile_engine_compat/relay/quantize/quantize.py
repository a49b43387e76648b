"""``relay.quantize.quantize``: a float Relay module to an integer one, as TVM 0.19 did.

The steps are TVM 0.19's: :func:`prerequisite_optimize` (parameters bound,
``SimplifyInference``, ``FoldConstant``), annotation (which values become integers,
:mod:`.annotation`), calibration (their scales, :mod:`.calibration`) and realization (the integer
graph, :mod:`.realization`). The shim runs them as one rewrite of the Relay graph;
``annotate()``, ``calibrate()``, ``realize()`` and ``partition()`` as separate passes are
refused at the call, naming :func:`quantize`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, NoReturn

import tvm

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl.to_relax import infer

from ..analysis import post_order_visit
from ..expr import Call, Expr
from ..function import Function
from ..transform.relay_module import relay_functions, to_module
from ..ty import TensorType
from .annotation import QuantizeRewriter
from .calibration import FixedScales, PointCollector, calibrate_scales
from .prerequisites import bind_params, simplify_inference
from .qconfig import current_qconfig

__all__ = [
    "annotate",
    "calibrate",
    "partition",
    "prerequisite_optimize",
    "quantize",
    "realize",
    "register_annotate_function",
]


def _main(mod: Any) -> tuple[dict[Any, Function], Any]:
    if isinstance(mod, Function):
        mod = tvm.IRModule.from_expr(mod)
    if not isinstance(mod, tvm.IRModule):
        raise TypeError(f"relay.quantize: expected a tvm.IRModule, got {type(mod).__name__}")
    functions = relay_functions(mod, "quantize")
    for gvar in functions:
        if gvar.name_hint == "main":
            return functions, gvar
    raise ValueError("relay.quantize: the module has no 'main' function")


def prerequisite_optimize(mod: Any, params: Mapping[str, Any] | None = None) -> tvm.IRModule:
    """``relay.quantize.prerequisite_optimize(mod, params=None)``: ``params`` bound to
    ``main``'s inputs by name, batch norms folded into multiply-add (``SimplifyInference``),
    constant subexpressions folded (:mod:`.prerequisites`). TVM 0.19 also ran
    ``FoldScaleAxis`` and ``CanonicalizeOps``, which change no value."""
    functions, main = _main(mod)
    func = bind_params(functions[main], params) if params else functions[main]
    functions[main] = simplify_inference(func)
    return to_module(functions, mod.attrs if isinstance(mod, tvm.IRModule) else None)


@legacy_api("relay.quantize")
def quantize(
    mod: Any,
    params: Mapping[str, Any] | None = None,
    dataset: Iterable[Mapping[str, Any]] | None = None,
) -> tvm.IRModule:
    """``relay.quantize.quantize(mod, params=None, dataset=None)``: ``mod`` with int8
    convolutions and dense layers, under the current :func:`~.qconfig.qconfig`.

    Parameters
    ----------
    mod : tvm.IRModule
        A float module built by the Relay front end.
    params : dict of str to array, optional
        Values bound to ``main``'s inputs of those names (weights become constants).
    dataset : iterable of dict, optional
        Calibration inputs ({input name: array} per batch), for ``kl_divergence`` and
        ``percentile``.

    Returns
    -------
    tvm.IRModule
        ``main`` computing in integers where TVM 0.19 quantized; its inputs and outputs stay
        float.

    Raises
    ------
    NotImplementedError
        Under ``qconfig(do_simulation=True)``.
    AssertionError
        With ``partition_conversions="fully_integral"``, when a float op remains between the
        input quantizations and the output dequantizations (TVM 0.19 asserted the same).
    """
    cfg = current_qconfig()
    if cfg.do_simulation:
        raise NotImplementedError(
            "relay.quantize.quantize: qconfig(do_simulation=True) (the float graph with "
            "simulated_quantize ops) is not served; quantize with do_simulation=False and compare "
            "the integer module's outputs with the float module's"
        )
    mod = prerequisite_optimize(mod, params)
    functions, main = _main(mod)
    func = infer(functions[main])
    collector = PointCollector()
    QuantizeRewriter(cfg, collector).visit(func)
    scales = calibrate_scales(cfg, func, collector.points, dataset)
    rewriter = QuantizeRewriter(cfg, FixedScales(scales))
    new = infer(rewriter.visit(func))
    if cfg.partition_conversions == "fully_integral":
        _check_fully_integral(new, rewriter.helpers)
    functions[main] = new
    return to_module(functions, mod.attrs)


def _check_fully_integral(func: Function, edges: set[int]) -> None:
    found: list[str] = []

    def look(node: Expr) -> None:
        if isinstance(node, Call) and id(node) not in edges:
            typ = node.checked_type
            if isinstance(typ, TensorType) and str(typ.dtype).startswith("float"):
                found.append(str(getattr(node.op, "name", node.op)))

    post_order_visit(func, look)
    if found:
        raise AssertionError(
            "relay.quantize: partition_conversions='fully_integral' but these ops stay float "
            f"between the quantized inputs and outputs: {sorted(set(found))}"
        )


def _stage(name: str) -> Callable[..., NoReturn]:
    def refused(*args: Any, **kwargs: Any) -> NoReturn:
        raise NotImplementedError(
            f"relay.quantize.{name}() as a separate pass is not served: the shim runs "
            "annotation, calibration and realization as one rewrite. Call "
            "relay.quantize.quantize(mod, params, dataset) under relay.quantize.qconfig(...)"
        )

    refused.__name__ = name
    refused.__doc__ = f"``relay.quantize.{name}``: refused at the call (use :func:`quantize`)."
    return refused


annotate = _stage("annotate")
calibrate = _stage("calibrate")
realize = _stage("realize")
partition = _stage("partition")
register_annotate_function = _stage("register_annotate_function")
