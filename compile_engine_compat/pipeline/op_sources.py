"""Where each op's TE comes from, in one place.

The tracer (:mod:`.trace`) asks, for every op call of a function, in this order:

1. **a user strategy**: a ``relay.backend.lower_call`` override, else the implementations
   registered with ``register_implementation``/``temp_strategy`` (:mod:`.implementations`), the
   one of highest ``plevel`` whose condition holds;
2. **rejected**: :data:`REJECTED_OPS`, constructs with no single-kernel TE form (an error);
3. **a fallback**: :data:`FALLBACK_LOWERINGS`, ops the new path lowers with a dedicated pass
   rather than a legalization (sort, scans, top-k, bucketize), on the same topi kernels;
4. **the legalization**: the op's ``FLegalize`` attribute, the very TE the new path's
   ``relax.transform.LegalizeOps`` uses.

:func:`te_source` answers the question for one op, naming the Python function and file;
``compile-engine-compat op relax.sort`` prints it. Beside the TE: :data:`NUMPY_FOLDINGS`, what the
ops that whole-module builds fold on constants at build time are in NumPy (:mod:`.model.fold`).
"""

from __future__ import annotations

import argparse
import inspect
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import tvm
from tvm import te, topi
from tvm.relax.transform import legalize_ops

__all__ = [
    "FALLBACK_LOWERINGS",
    "MODULE_LAYOUTS",
    "MODULE_LEGALIZATIONS",
    "NUMPY_FOLDINGS",
    "REJECTED_OPS",
    "NotFoldable",
    "OpSource",
    "connect_user_source",
    "main",
    "static_shape",
    "te_source",
]

TEValue = Any  # a te.Tensor, a PrimExpr, or a (nested) list of them


def _scan(topi_fn: Callable[..., Any]) -> Callable[[Any, list[TEValue]], TEValue]:
    def lower(call: Any, args: list[TEValue]) -> TEValue:
        axis = call.attrs.axis
        axis = None if axis is None else int(axis)
        return topi_fn(args[0], axis, call.attrs.dtype, call.attrs.exclusive)

    return lower


def _sort(call: Any, args: list[TEValue]) -> TEValue:
    return topi.sort(args[0], int(call.attrs.axis), not bool(call.attrs.descending))


def _argsort(call: Any, args: list[TEValue]) -> TEValue:
    attrs = call.attrs
    return topi.argsort(
        args[0], axis=int(attrs.axis), is_ascend=not bool(attrs.descending), dtype=attrs.dtype
    )


def _topk(call: Any, args: list[TEValue]) -> TEValue:
    attrs = call.attrs
    return topi.topk(
        args[0],
        k=int(attrs.k),
        axis=int(attrs.axis),
        ret_type=str(attrs.ret_type),
        is_ascend=not bool(attrs.largest),
        dtype=str(attrs.dtype),
    )


def _bucketize(call: Any, args: list[TEValue]) -> TEValue:
    out_dtype = "int32" if call.attrs.out_int32 else "int64"
    return topi.searchsorted(args[1], args[0], bool(call.attrs.right), out_dtype)


#: Ops lowered by dedicated passes (DispatchSortScan, ...) rather than FLegalize: op -> a function
#: (call, te_args) -> TE tensor(s), built on the same topi kernels those passes use.
FALLBACK_LOWERINGS: dict[str, Callable[[Any, list[TEValue]], TEValue]] = {
    "relax.cumsum": _scan(topi.cumsum),
    "relax.cumprod": _scan(topi.cumprod),
    "relax.sort": _sort,
    "relax.argsort": _argsort,
    "relax.topk": _topk,
    "relax.bucketize": _bucketize,
}

#: Constructs that a user may reasonably write but that have no single-kernel TE form.
REJECTED_OPS: dict[str, str] = {
    "relax.call_tir": "relax.call_tir (the body is already lowered TIR)",
    "relax.call_tir_inplace": "relax.call_tir_inplace (the body is already lowered TIR)",
    "relax.call_dps_packed": "relax.call_dps_packed (an opaque packed function)",
    "relax.call_pure_packed": "relax.call_pure_packed (an opaque packed function)",
    "relax.call_packed": "relax.call_packed (an opaque packed function)",
}


SourceKind = Literal["user strategy", "lower_call override", "rejected", "fallback", "legalization"]


@dataclass(frozen=True)
class OpSource:
    """Where one op's TE comes from.

    Attributes
    ----------
    op : str
        The Relax op name, e.g. ``"relax.sort"``.
    kind : str
        ``"user strategy"``, ``"lower_call override"``, ``"rejected"``, ``"fallback"`` or
        ``"legalization"``.
    where : str
        The function that makes the TE, as ``module.qualname (file:line)``, or the reason a
        rejected op is rejected.
    then : OpSource or None
        For a user strategy: the source the op falls back to when no implementation applies.
    """

    op: str
    kind: SourceKind
    where: str
    then: OpSource | None = None

    def __str__(self) -> str:
        text = f"{self.op}: {self.kind}: {self.where}"
        return (
            text
            if self.then is None
            else f"{text}\n  otherwise {self.then.kind}: {self.then.where}"
        )


# -- build-time folding in NumPy ------------------------------------------------------------------

Array = np.ndarray


def static_shape(call: Any) -> tuple[int, ...] | None:
    """The call's static result shape, or None."""
    ty = call.ty if hasattr(call, "ty") else None
    shape = getattr(ty, "shape", None)
    if shape is None or not hasattr(shape, "values"):
        return None
    try:
        return tuple(int(v) for v in shape.values)
    except TypeError:  # a symbolic dimension
        return None


def _reshaped(call: Any, x: Array) -> Array | None:
    shape = static_shape(call)
    return None if shape is None else np.reshape(x, shape)


def _permute(call: Any, x: Array) -> Array:
    axes = call.attrs.axes
    return np.transpose(x, None if axes is None else [int(a) for a in axes])


def _broadcast(call: Any, x: Array) -> Array | None:
    shape = static_shape(call)
    return None if shape is None else np.broadcast_to(x, shape)


def _unary(fn: Callable[[Array], Array]) -> Callable[[Any, Array], Array]:
    return lambda call, x: fn(x)


def _binary(fn: Callable[[Array, Array], Array]) -> Callable[[Any, Array, Array], Array]:
    return lambda call, a, b: fn(a, b)


def _rsqrt(x: Array) -> Array:
    return np.asarray(1, x.dtype) / np.sqrt(x)


def _divide(a: Array, b: Array) -> Array:
    if np.issubdtype(np.result_type(a, b), np.integer):
        raise NotFoldable  # Relax's integer division floors toward minus infinity per dtype
    return np.divide(a, b)


class NotFoldable(Exception):
    """The call is left as it is (NumPy would not give Relax's result)."""


def _integer_sum(call: Any, x: Array) -> Array:
    """``sum`` of integers (exact in any order; NumPy's float sums are ordered otherwise)."""
    dtype = str(call.ty.dtype)
    if not np.issubdtype(np.dtype(dtype), np.integer):
        raise NotFoldable
    axis = None if call.attrs.axis is None else tuple(int(a) for a in call.attrs.axis)
    return np.sum(x, axis=axis, keepdims=bool(call.attrs.keepdims), dtype=dtype)


def _constant_pad(call: Any, x: Array) -> Array:
    """``nn.pad`` with a constant border (weights padded to whole vectors at build time)."""
    if str(call.attrs.pad_mode) != "constant":
        raise NotFoldable
    widths = [int(w) for w in call.attrs.pad_width]
    pairs = list(zip(widths[::2], widths[1::2]))
    return np.pad(x, pairs, constant_values=np.array(call.attrs.pad_value).astype(x.dtype))


#: Relax op -> ``fn(call, *argument arrays)``: the call's result in NumPy (None: not foldable).
#: Whole-module builds fold these ops' calls on constants at build time
#: (:func:`.fold.FoldConstantOps`) instead of compiling a kernel for each.
NUMPY_FOLDINGS: dict[str, Callable[..., Array | None]] = {
    "relax.reshape": lambda call, x, _shape_arg=None: _reshaped(call, x),
    "relax.expand_dims": lambda call, x: _reshaped(call, x),
    "relax.squeeze": lambda call, x: _reshaped(call, x),
    "relax.flatten": lambda call, x: _reshaped(call, x),
    "relax.broadcast_to": lambda call, x, _shape_arg=None: _broadcast(call, x),
    "relax.permute_dims": _permute,
    "relax.astype": lambda call, x: x.astype(str(call.attrs.dtype)),
    "relax.negative": _unary(np.negative),
    "relax.abs": _unary(np.abs),
    "relax.sqrt": _unary(np.sqrt),
    "relax.rsqrt": _unary(_rsqrt),
    "relax.exp": _unary(np.exp),
    "relax.isnan": _unary(np.isnan),
    "relax.add": _binary(np.add),
    "relax.subtract": _binary(np.subtract),
    "relax.multiply": _binary(np.multiply),
    "relax.divide": _binary(_divide),
    "relax.maximum": _binary(np.maximum),
    "relax.minimum": _binary(np.minimum),
    "relax.where": lambda call, c, a, b: np.asarray(np.where(c, a, b)),
    "relax.sum": _integer_sum,
    "relax.nn.pad": _constant_pad,
}


# -- whole-module builds' own legalizations --------------------------------------------------------


def _float32(call: Any) -> bool:
    return str(getattr(call.args[0].ty, "dtype", "")) == "float32"


def _default_legalization(op: str) -> Callable[[Any, Any], Any]:
    """TVM's own legalization of ``op`` (its ``FLegalize`` attribute)."""
    return tvm.ir.Op.get(op).get_attr("FLegalize")


def _fast(fast: Callable[[Any], Any], default: str) -> Callable[[Any, Any], Any]:
    """Legalize a float32 call with ``fast`` (a vectorizable polynomial), others by default."""

    def legalize(bb: Any, call: Any) -> Any:
        if not _float32(call):
            return _default_legalization(default)(bb, call)
        return bb.call_te(fast, call.args[0], primfunc_name_hint=default.rsplit(".", 1)[-1])

    return legalize


def _fast_gelu(x: Any) -> Any:
    half = tvm.tirx.const(0.5, x.dtype)
    return x * (half + topi.fast_erf(x * tvm.tirx.const(0.5**0.5, x.dtype)) * half)


def _softmax(bb: Any, call: Any) -> Any:
    if not _float32(call):
        return _default_legalization("relax.nn.softmax")(bb, call)
    return bb.call_te(topi.nn.fast_softmax, call.args[0], int(call.attrs.axis))


def _static_or_symbolic(dim: Any) -> Any:
    """A static dimension as an int, a symbolic one (``relay.Any()``, a symbolic ONNX dim) as
    the PrimExpr it is."""
    return int(dim) if isinstance(dim, tvm.tirx.IntImm) else dim


def _conv2d_nhwc(bb: Any, call: Any) -> Any:
    """conv2d in NHWC/OHWI, groups 1, summed over (channel, kernel row, kernel column): the
    order of the NCHW convolution it was converted from, and one the packed GEMM rule can
    cut into cache-sized chunks of channels (TOPI's NHWC sums the channels innermost).
    Symbolic dimensions stay symbolic: the schedule rules take the ones they can."""
    attrs = call.attrs
    default = _default_legalization("relax.nn.conv2d")
    if (
        attrs.data_layout != "NHWC"
        or attrs.kernel_layout != "OHWI"
        or attrs.out_layout != "NHWC"
        or int(attrs.groups) != 1
        or (attrs.out_dtype and attrs.out_dtype != call.args[0].ty.dtype)
    ):
        return default(bb, call)

    def conv(data: Any, weight: Any) -> Any:
        top, left, bottom, right = (int(p) for p in attrs.padding)
        (sh, sw), (dh, dw) = (int(s) for s in attrs.strides), (int(d) for d in attrs.dilation)
        padded = topi.nn.pad(data, [0, top, left, 0], [0, bottom, right, 0], name="pad_temp")
        n, h, w, _ = (_static_or_symbolic(d) for d in padded.shape)
        out_c, kh, kw, in_c = (_static_or_symbolic(d) for d in weight.shape)
        out_h, out_w = (h - (kh - 1) * dh - 1) // sh + 1, (w - (kw - 1) * dw - 1) // sw + 1
        rc = te.reduce_axis((0, in_c), name="rc")
        ry = te.reduce_axis((0, kh), name="ry")
        rx = te.reduce_axis((0, kw), name="rx")
        return te.compute(
            (n, out_h, out_w, out_c),
            lambda b, y, x, f: te.sum(
                padded[b, y * sh + ry * dh, x * sw + rx * dw, rc] * weight[f, ry, rx, rc],
                axis=[rc, ry, rx],
            ),
            name="conv2d_nhwc",
        )

    return bb.call_te(conv, call.args[0], call.args[1], primfunc_name_hint="conv2d")


#: Relax op -> its layouts in whole-module builds (``relax.transform.ConvertLayout``'s desired
#: layouts): convolutions channels-last, where the channels are the contiguous axis of input,
#: weights and output (the depthwise rule vectorizes over them, the packed GEMM rule writes
#: whole vectors of output channels). The weights' transposes are folded at build time.
MODULE_LAYOUTS: dict[str, list[str]] = {"relax.nn.conv2d": ["NHWC", "OHWI"]}

#: Relax op -> ``legalize(bb, call)``: how whole-module builds (``relay.build``) legalize it
#: instead of TVM's default, for speed. ``erf``, ``tanh``, ``gelu`` and ``softmax`` in float32
#: use TOPI's vectorizable polynomials (``fast_erf``, ``fast_tanh``, ``fast_exp``; largest
#: relative errors measured over the float32 range: 4.2e-7, 3.6e-7, 4.1e-6 against libm); NHWC
#: convolutions sum in the NCHW order. ``jit`` keeps the default legalizations.
MODULE_LEGALIZATIONS: dict[str, Callable[[Any, Any], Any]] = {
    "relax.erf": _fast(topi.fast_erf, "relax.erf"),
    "relax.tanh": _fast(topi.fast_tanh, "relax.tanh"),
    "relax.nn.gelu": _fast(_fast_gelu, "relax.nn.gelu"),
    "relax.nn.softmax": _softmax,
    "relax.nn.conv2d": _conv2d_nhwc,
}


def _where(func: Any) -> str:
    name = f"{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', func)}"
    try:
        file = inspect.getsourcefile(func)
        line = inspect.getsourcelines(func)[1]
    except (TypeError, OSError):
        return name  # a C++ function
    return f"{name} ({file}:{line})"


def _default_source(name: str) -> OpSource:
    if name in REJECTED_OPS:
        return OpSource(name, "rejected", REJECTED_OPS[name])
    fallback = FALLBACK_LOWERINGS.get(name)
    if fallback is not None:
        return OpSource(name, "fallback", _where(fallback))
    legalize = tvm.ir.Op.get(name).get_attr("FLegalize")
    if legalize is None:
        return OpSource(name, "rejected", f"{name} has no legalization (FLegalize) and no fallback")
    return OpSource(name, "legalization", _registration_site(name) or _where(legalize))


def _registration_site(name: str) -> str | None:
    """Where TVM registers ``name``'s legalization, as ``file:line: the line``.

    FLegalize holds an FFI function that does not lead back to its Python source, so the
    registration is found in the legalize_ops package's text.
    """
    package = Path(legalize_ops.__file__).parent
    quoted = f'"{name}"'
    for path in sorted(package.glob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if quoted in line and "register_legalize" in line:
                return f"{path}:{number}: {line.strip()}"
    return None


def te_source(op: str | Any) -> OpSource:
    """Where the engine takes ``op``'s TE from, right now in this process.

    Parameters
    ----------
    op : str or tvm.ir.Op
        ``"relax.sort"``, ``"sort"`` or the Op.

    Returns
    -------
    OpSource

    Raises
    ------
    ValueError
        For a name that is not a registered op.
    """
    name = op if isinstance(op, str) else op.name
    name = name if name.startswith("relax.") else f"relax.{name}"
    try:
        tvm.ir.Op.get(name)
    except Exception as exc:  # TVMError: not registered
        raise ValueError(f"{name!r} is not a registered op") from exc
    default = _default_source(name)
    user = _user_source(name, default) if _user_source is not None else None
    return default if user is None else user


#: The strategy registry's answer for an op (a user strategy or ``lower_call`` override), set by
#: :mod:`.implementations` when it loads: it imports the tracer, which imports this module.
#: Without it loaded no user implementation can exist.
UserSource = Callable[[str, OpSource], OpSource | None]
_user_source: UserSource | None = None


def connect_user_source(lookup: UserSource) -> None:
    """Let ``lookup(op_name, default)`` name the user's source of an op (the strategy registry)."""
    global _user_source
    _user_source = lookup


def main(argv: Sequence[str] | None = None) -> int:
    """``compile-engine-compat op NAME...``: print where each op's TE comes from."""
    parser = argparse.ArgumentParser(
        prog="compile-engine-compat op", description="Print where each op's TE comes from."
    )
    parser.add_argument("ops", nargs="+", metavar="NAME", help="relax.sort, sort, nn.conv2d, ...")
    args = parser.parse_args(argv)
    status = 0
    for op in args.ops:
        try:
            print(te_source(op))
        except ValueError as exc:
            print(f"compile-engine-compat op: {exc}", file=sys.stderr)
            status = 2
    return status


if __name__ == "__main__":
    sys.exit(main())
