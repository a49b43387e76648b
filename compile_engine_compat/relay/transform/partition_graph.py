"""``relay.transform.PartitionGraph``: each annotated region as a global function.

Every region an external compiler was given (``compiler_begin``/``compiler_end``) becomes a
global function ``tvmgen_<mod_name>_<compiler>_main_<n>`` with Relay's attributes ``Compiler``,
``global_symbol``, ``Primitive`` and ``Inline``; the caller calls it by its ``GlobalVar``. A
region with several outputs returns a tuple. With ``bind_constants`` a constant entering the
region is bound inside it. The host's regions (``"default"``) and stray annotations are removed.
The module's Relax form of each partition carries ``Codegen`` and ``global_symbol``, which
``relay.build`` hands to ``relax.transform.RunCodegen``.
"""

from __future__ import annotations

from typing import Any

import tvm

from compile_engine_compat.deprecations import INTERNAL, legacy_api
from compile_engine_compat.relay._impl.graph_walk import GraphMutator

from ..analysis.annotated_regions import AnnotatedRegion, AnnotatedRegionSet, is_annotation
from ..expr import Call, Constant, Tuple, TupleGetItem, Var
from ..function import Function
from .annotate_target import DEFAULT
from .relay_module import relay_graph_pass

__all__ = ["PartitionGraph", "partition_graph"]


def _one() -> Any:
    return tvm.tirx.IntImm("int32", 1)


class _Extract(GraphMutator):
    """A region's body: its inputs (the begins) replaced by parameters."""

    def __init__(self, params: dict[int, Any]) -> None:
        super().__init__()
        self.params = params

    def stops_at(self, node: Any) -> bool:
        return id(node) in self.params or isinstance(node, Function) or super().stops_at(node)

    def _dispatch(self, expr: Any) -> Any:
        if id(expr) in self.params:
            return self.params[id(expr)]
        if is_annotation(expr):
            return self.visit(expr.args[0])
        return super()._dispatch(expr)


class _Partitioner(GraphMutator):
    def __init__(self, regions: AnnotatedRegionSet, namer: Any, bind_constants: bool) -> None:
        super().__init__()
        self.regions = regions
        self.namer = namer
        self.bind_constants = bind_constants
        self.functions: dict[Any, Function] = {}
        #: id(region) -> (its call, its distinct outputs).
        self.calls: dict[int, tuple[Call, list[Any]]] = {}

    def stops_at(self, node: Any) -> bool:
        return isinstance(node, Function) or is_annotation(node) or super().stops_at(node)

    def _partitioned(self, node: Any) -> AnnotatedRegion | None:
        region = self.regions.get_region(node)
        return region if region is not None and region.target not in (None, DEFAULT) else None

    def _dispatch(self, expr: Any) -> Any:
        if isinstance(expr, Function):
            return expr
        if is_annotation(expr, "annotation.compiler_end"):
            region = self._partitioned(expr)
            if region is not None:
                call, outputs = self.call_of(region)
                if len(outputs) == 1:
                    return call
                index = next(i for i, o in enumerate(outputs) if o is expr.args[0])
                return TupleGetItem(call, index)
        if is_annotation(expr):
            return self.visit(expr.args[0])
        return super()._dispatch(expr)

    def call_of(self, region: AnnotatedRegion) -> tuple[Call, list[Any]]:
        """The call of ``region``'s function (made on first use)."""
        if id(region) in self.calls:
            return self.calls[id(region)]
        target = str(region.target)
        name = self.namer(target)
        params: dict[int, Any] = {}
        args: list[Any] = []
        seen: dict[int, Any] = {}
        for begin in region.args:
            value = begin.args[0]
            if self.bind_constants and isinstance(value, Constant):
                params[id(begin)] = value
                continue
            if id(value) in seen:
                params[id(begin)] = seen[id(value)]
                continue
            # Typed as the value it stands for (the graph was typed when the module was built).
            ty = value.type_annotation if isinstance(value, Var) else value._checked_type
            param = Var(f"{target}_{len(self.functions)}_i{len(args)}", ty)
            params[id(begin)] = seen[id(value)] = param
            args.append(self.visit(value))
        outputs: list[Any] = []
        for end in region.rets:
            if not any(o is end.args[0] for o in outputs):
                outputs.append(end.args[0])
        extract = _Extract(params)
        results = [extract.visit(o) for o in outputs]
        body = results[0] if len(results) == 1 else Tuple(results)
        order = [params[id(b)] for b in region.args if isinstance(params[id(b)], Var)]
        unique = list({id(p): p for p in order}.values())
        func = Function(unique, body)
        attrs: tuple[tuple[str, Any], ...] = (
            ("Primitive", _one()),
            ("Inline", _one()),
            ("Compiler", target),
            ("global_symbol", name),
        )
        for key, value in attrs:
            func = func.with_attr(key, value)
        gvar = tvm.ir.GlobalVar(name)
        self.functions[gvar] = func
        call = Call(gvar, args)
        self.calls[id(region)] = (call, outputs)
        return call, outputs


def partition_graph(
    functions: dict[Any, Function], mod_name: str = "default", bind_constants: bool = True
) -> dict[Any, Function]:
    """The functions with their annotated regions lifted to global functions."""
    counters: dict[str, int] = {}

    def namer(target: str) -> str:
        index = counters.get(target, 0)
        counters[target] = index + 1
        prefix = f"tvmgen_{mod_name}_" if mod_name else ""
        return f"{prefix}{target}_main_{index}"

    result: dict[Any, Function] = {}
    for gvar, func in functions.items():
        if "Compiler" in func.attrs:
            result[gvar] = func
            continue
        partitioner = _Partitioner(AnnotatedRegionSet(func.body, **INTERNAL), namer, bind_constants)
        body = partitioner.visit(func.body)
        result.update(partitioner.functions)
        result[gvar] = (
            func
            if body is func.body
            else Function(func.params, body, func.ret_type, func.type_params, func.attrs)
        )
    return result


@legacy_api("relay.transform.PartitionGraph")
def PartitionGraph(mod_name: str = "default", bind_constants: bool = True) -> Any:
    """Lift each external compiler's region to a global function (Relay's pass).

    Parameters
    ----------
    mod_name : str
        Part of the functions' names (``tvmgen_<mod_name>_<compiler>_main_<n>``).
    bind_constants : bool
        Bind the constants a region takes inside its function.

    Returns
    -------
    tvm.transform.Pass
    """
    if not isinstance(mod_name, str):
        raise TypeError(f"PartitionGraph's mod_name is a str, got {mod_name!r}")
    return relay_graph_pass(
        "PartitionGraph", lambda fs: partition_graph(fs, mod_name, bind_constants)
    )
