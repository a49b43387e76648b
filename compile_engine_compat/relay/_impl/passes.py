"""``relay.transform``'s passes, as real ``tvm.transform.Pass`` objects over Relax modules.

A module made by this front end (``tvm.IRModule.from_expr(relay_func)``, a frontend, a
workload) holds Relax functions, so each Relay pass is served by the Relax pass that does its
job, wrapped in a module pass that carries Relay's name and opt level. That keeps what Relay-era
code relies on: the pass goes into ``tvm.transform.Sequential``, is skipped when the
``PassContext`` opt level is below Relay's, and is named in ``disabled_pass`` and
``required_pass`` by Relay's name.

Each pass here is either a real transform or an identity, and its docstring says which and why
(:data:`PASS_KINDS` is the same list as data, which the docs page and tests read):

===========================  =========  ====================================================
Relay pass                   opt level  served by
===========================  =========  ====================================================
``InferType``                0          identity: Relax functions are typed when built
``ConvertLayout``            3          ``relax.transform.ConvertLayout``
``ToMixedPrecision``         0          the Relay graph (``relay/transform/to_mixed_precision``)
``DeadCodeElimination``      1          the Relay graph (``dead_code``)
``CanonicalizeOps``          3          identity: ``bias_add`` is emitted as reshape + add
``RemoveUnusedFunctions``    1          the Relay graph (``remove_unused_functions``)
``AnnotateSpans``            0          identity: no Relay text for spans to point into
===========================  =========  ====================================================

``InferTypeLocal(expr)`` is not a pass: it types a Relay expression in place.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import tvm
from tvm import relax

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl.carried import settled_module

__all__ = [
    "PASS_KINDS",
    "AnnotateSpans",
    "CanonicalizeOps",
    "ConvertLayout",
    "InferType",
    "InferTypeLocal",
]

#: Relay pass -> "real: <the Relax pass>" or "identity: <why>", for the docs and the tests.
PASS_KINDS: dict[str, str] = {
    "InferType": "identity: Relax functions carry their types (struct info) from the moment "
    "they are built, so there is nothing left to infer",
    "ConvertLayout": "real: relax.transform.ConvertLayout (op names get the relax. prefix; "
    "'default' kernel layouts are resolved as Relay did; ops other than convolutions and "
    "resize2d follow their input's layout)",
    "ToMixedPrecision": "real: TVM 0.19's rewrite of the Relay graph, its op lists and casts "
    "(relay/transform/to_mixed_precision.py): float16, bfloat16 or float64",
    "DeadCodeElimination": "real: on the Relay graph (relay/transform/dead_code.py), unused "
    "pure let bindings removed, with inline_once a pure value used once inlined; functions "
    "with no Relay graph through relax.transform.DeadCodeElimination",
    "CanonicalizeOps": "identity: the only op Relay canonicalized, nn.bias_add, is already "
    "emitted as a reshape and a broadcasting add",
    "RemoveUnusedFunctions": "real: the functions no entry function reaches (calls, global "
    "functions used as values) are removed, as Relay did (relay/transform/"
    "remove_unused_functions.py)",
    "AnnotateSpans": "identity: Relay gave each node a span into the module's printed text; "
    "Relax nodes keep the spans the front end was given, and no text is re-parsed",
}

#: Relay's kernel layout for ``"default"``, by op and data layout (Relay's ConvertLayout rule).
_DEFAULT_KERNEL_LAYOUTS: dict[str, dict[str, str]] = {
    "nn.conv1d": {"NCW": "OIW", "NWC": "WIO"},
    "nn.conv2d": {"NCHW": "OIHW", "NHWC": "HWIO", "HWNC": "HWOI"},
    "nn.conv3d": {"NCDHW": "OIDHW", "NDHWC": "DHWIO"},
    "nn.conv2d_transpose": {"NCHW": "IOHW", "NHWC": "HWOI"},
}
#: The ops without a kernel whose Relax layout inference takes a desired layout.
_OTHER_DESIRED = frozenset({"image.resize2d"})
#: Relay ops the front end emits as another op's Relax call (QNN convolutions are lowered to
#: ``relax.nn.conv2d`` on integers): their desired layouts are that op's, and so is "default".
_CONVERTED_AS: dict[str, str] = {
    "qnn.conv2d": "nn.conv2d",
    "qnn.conv2d_transpose": "nn.conv2d_transpose",
}


def relay_pass(name: str, opt_level: int, run: Callable[[tvm.IRModule], tvm.IRModule]) -> Any:
    """A module pass named ``name`` at Relay's ``opt_level`` whose body is ``run(mod)``.

    Parameters
    ----------
    name : str
        Relay's pass name (what ``disabled_pass``/``required_pass`` spell).
    opt_level : int
        Relay's opt level: ``Sequential`` skips the pass below it unless it is required.
    run : callable
        ``IRModule -> IRModule``.

    Returns
    -------
    tvm.transform.Pass
    """

    def pass_func(mod: tvm.IRModule, ctx: Any) -> tvm.IRModule:
        # A function the pass rebuilt may carry its kernels: the module holds them instead. A
        # module the pass left alone comes back as it was given.
        out = run(mod)
        return out if out.same_as(mod) else settled_module(out)

    return tvm.transform.module_pass(pass_func, opt_level=opt_level, name=name)


def _identity(mod: tvm.IRModule) -> tvm.IRModule:
    return mod


def identity_pass(name: str, opt_level: int) -> Any:
    """A pass named ``name`` at Relay's ``opt_level`` that returns the module unchanged."""
    return relay_pass(name, opt_level, _identity)


def _refuse(pass_name: str, argument: str, why: str) -> ValueError:
    return ValueError(f"relay.transform.{pass_name}({argument}): {why}")


@legacy_api("relay.transform")
def InferType() -> Any:
    """``relay.transform.InferType()``: an identity (opt level 0).

    Relax functions carry their types from the moment they are built, so the module comes back
    unchanged; ``relay.testing.run_infer_type(expr)`` types a Relay expression.
    """
    return relay_pass("InferType", 0, _identity)


def _relax_layouts(desired_layouts: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    if not isinstance(desired_layouts, Mapping):
        raise TypeError(
            "relay.transform.ConvertLayout(desired_layouts) takes a dict of op name -> layouts, "
            f"e.g. {{'nn.conv2d': ['NHWC', 'default']}}, got {desired_layouts!r}"
        )
    out: dict[str, list[str]] = {}
    for op_name, layouts in desired_layouts.items():
        layouts = [str(v) for v in layouts]
        op_name = _CONVERTED_AS.get(op_name, op_name)
        if op_name not in _DEFAULT_KERNEL_LAYOUTS and op_name not in _OTHER_DESIRED:
            # Relax takes no desired layout for the other ops (pools, batch_norm, reductions:
            # their InferLayout refuses one) and carries their input's layout through them.
            continue
        if len(layouts) > 1 and layouts[1] == "default":
            kernel = _DEFAULT_KERNEL_LAYOUTS.get(op_name, {}).get(layouts[0])
            if kernel is None:
                raise _refuse(
                    "ConvertLayout",
                    f"{{{op_name!r}: {layouts!r}}}",
                    "no default kernel layout is known for this op and data layout: name the "
                    "kernel layout explicitly",
                )
            layouts[1] = kernel
        out[op_name if op_name.startswith("relax.") else f"relax.{op_name}"] = layouts
    return out


@legacy_api("relay.transform")
def ConvertLayout(desired_layouts: Mapping[str, Sequence[str]]) -> Any:
    """``relay.transform.ConvertLayout(desired_layouts)``: ``relax.transform.ConvertLayout``.

    A real transform (opt level 3). Relay's op names (``"nn.conv2d"``) are given Relax's prefix,
    and a ``"default"`` kernel layout becomes the one Relay chose (``HWIO`` for ``NHWC``
    conv2d, ``OIHW`` for ``NCHW``); ``qnn.conv2d`` is the ``nn.conv2d`` it lowers to. Relax
    takes desired layouts for convolutions and ``image.resize2d`` only: the other ops named
    (pools, ``batch_norm``) follow their input's layout, as they do after a converted
    convolution in Relay, but one whose input stays in its layout is not converted.
    """
    return relay_pass(
        "ConvertLayout", 3, relax.transform.ConvertLayout(_relax_layouts(desired_layouts))
    )


@legacy_api("relay.transform")
def CanonicalizeOps() -> Any:
    """``relay.transform.CanonicalizeOps()``: an identity (opt level 3).

    Relay rewrote ``nn.bias_add`` into ``expand_dims`` + ``add``; the front end emits it as a
    reshape and a broadcasting add already.
    """
    return relay_pass("CanonicalizeOps", 3, _identity)


# -- upstream Relay test files (test_type_infer, test_any): AnnotateSpans, InferTypeLocal -------
@legacy_api("relay.transform")
def AnnotateSpans() -> Any:
    """``relay.transform.AnnotateSpans()``: an identity (opt level 0).

    Relay printed the module and parsed it back so that every node got a span into that text,
    for its diagnostics. The front end's modules are Relax, whose errors are Python exceptions
    naming the Relay op; nodes keep the spans they were built with (``span=``).
    """
    return relay_pass("AnnotateSpans", 0, _identity)


@legacy_api("relay.transform")
def InferTypeLocal(expr: Any) -> Any:
    """``relay.transform.InferTypeLocal(expr)``: type a Relay expression in place.

    Every node of ``expr`` gets its ``checked_type`` (as after ``relay.testing.run_infer_type``),
    found by building its Relax function; the free variables must have types. A program with no
    Relax form (functions passed as values, ``let``-bound polymorphic functions, references) is
    typed by Relay's own inference instead (unification, type parameters instantiated per call).

    Parameters
    ----------
    expr : relay.Expr
        The expression (a ``relay.Function`` included).

    Returns
    -------
    relay.Type
        ``expr.checked_type``.
    """
    from compile_engine_compat.relay._impl.to_relax import (
        infer,  # the emitter sits beside this package, not below it
    )

    return infer(expr).checked_type
