"""``relay.op.tensor``: Relay's element-wise ops and tensor creation, as rows of the op table.

The rows are data (:class:`.registry.OpRow`); the builders (``relay.add``, ``relay.op.tensor.add``)
are made from them.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any

import tvm_ffi
from tvm import relax

from compile_engine_compat.relay._impl import convert, normalize
from compile_engine_compat.relay._impl.registry import REQUIRED, OpRow, builders, missing_op
from compile_engine_compat.virtual_devices import make_virtual_device

#: Relay's binary element-wise ops, each the Relax op of the same name.
BINARY = (
    "add subtract multiply divide floor_divide power maximum minimum mod floor_mod equal "
    "not_equal less less_equal greater greater_equal logical_and logical_or logical_xor "
    "bitwise_and bitwise_or bitwise_xor left_shift right_shift"
).split()
#: Relay's unary element-wise ops, each the Relax op of the same name.
UNARY = (
    "exp log sqrt rsqrt sigmoid tanh sin cos tan asin acos atan asinh acosh atanh abs "
    "negative sign floor ceil round trunc erf isnan isinf isfinite logical_not bitwise_not"
).split()
#: Relay's ``*_like`` creation ops, each the Relax op of the same name.
LIKE = ("zeros_like", "ones_like")
#: Relay's approximations -> the exact Relax op.
FAST = {"fast_exp": "exp", "fast_tanh": "tanh", "fast_erf": "erf"}


def _trunc_divide(args: list[Any]) -> Any:
    """``trunc_divide``: ``divide``, its float quotient rounded toward zero."""
    quotient = relax.op.divide(args[0], args[1])
    if str(args[0].ty.dtype).startswith(("float", "bfloat")):
        return relax.op.trunc(quotient)
    return quotient


_debug_lock = threading.Lock()
_debug_count = itertools.count()


def _debug_func_name(func: Any) -> str:
    """``debug(expr, debug_func)``'s attribute: the function registered as a global function
    (``debugger_func<N>``, as TVM 0.19 named it), or ``""`` for none."""
    if func is None or func == "":
        return ""
    if isinstance(func, str):
        return func
    if not callable(func):
        raise TypeError(f"relay.debug(debug_func=...) takes a function, got {func!r}")
    with _debug_lock:
        name = f"debugger_func{next(_debug_count)}"
        tvm_ffi.register_global_func(name, func, override=True)
    return name


ROWS: tuple[OpRow, ...] = (
    *(
        OpRow(
            n, ("lhs", "rhs"), (), f"relax.{n}", convert.direct(f"relax.{n}"), "relay.attrs.Attrs"
        )
        for n in BINARY
    ),
    *(OpRow(n, ("data",), (), f"relax.{n}", convert.direct(f"relax.{n}")) for n in UNARY),
    *(OpRow(n, ("data",), (), f"relax.{r}", convert.direct(f"relax.{r}")) for n, r in FAST.items()),
    OpRow("sinh", ("data",), (), "relax.sinh", convert.sinh),
    OpRow("cosh", ("data",), (), "relax.cosh", convert.cosh),
    OpRow("log2", ("data",), (), "relax.log", convert.log_base(2.0)),
    OpRow("log10", ("data",), (), "relax.log", convert.log_base(10.0)),
    OpRow(
        "clip",
        ("a",),
        (("a_min", REQUIRED), ("a_max", REQUIRED)),
        "relax.clip",
        convert.clip,
        "relay.attrs.ClipAttrs",
        normalize={"a_min": float, "a_max": float},
    ),
    *(
        OpRow(
            name,
            (),
            (("shape", REQUIRED), ("dtype", REQUIRED)),
            f"relax.{name}",
            convert.direct(f"relax.{name}", shape="shape", dtype="dtype"),
            "relay.attrs.InitOpAttrs",
            normalize={"shape": normalize.static_ints("shape"), "dtype": normalize.dtype},
            dynamic=("shape",),
        )
        for name in ("zeros", "ones")
    ),
    *(OpRow(n, ("data",), (), f"relax.{n}", convert.direct(f"relax.{n}")) for n in LIKE),
    OpRow(
        "concatenate",
        ("data",),
        (("axis", REQUIRED),),
        "relax.concat",
        convert.direct("relax.concat", axis="axis"),
        "relay.attrs.ConcatenateAttrs",
        tuple_input=True,
    ),
    OpRow("copy", ("data",), (), "(none: Relax values are immutable)", convert.identity),
    OpRow(
        "cast_like",
        ("data", "dtype_like"),
        (),
        "relax.astype",
        lambda bb, args, attrs: relax.op.astype(args[0], args[1].ty.dtype),
        "relay.attrs.Attrs",
    ),
    # Relay's truncating division: TIR's integer ``Div``/``Mod`` truncate already (``relax.divide``
    # and ``relax.mod`` on integers); floats truncate the quotient, and ``mod`` is ``fmod``.
    OpRow("trunc_divide", ("lhs", "rhs"), (), "relax.divide", lambda bb, a, _: _trunc_divide(a)),
    OpRow("trunc_mod", ("lhs", "rhs"), (), "relax.mod", convert.direct("relax.mod")),
    # A module of the shim builds for one device: the copy is the value itself (as ``copy``).
    # Its attributes are TVM 0.19's VirtualDevices (``device_copy`` below makes them).
    OpRow(
        "device_copy",
        ("data",),
        (("src_virtual_device", REQUIRED), ("dst_virtual_device", REQUIRED)),
        "(none: one device per build)",
        convert.identity,
        "relay.attrs.DeviceCopyAttrs",
    ),
    # The VM's end of a variable's lifetime (relay.transform.ManifestLifetimes inserts it after
    # a variable's last use): a Relax build frees what it no longer uses, so it is the empty
    # tuple Relay typed it as, and frees nothing itself.
    OpRow(
        "memory.kill", ("data",), (), "(none: Relax plans memory)", lambda bb, a, _: relax.Tuple([])
    ),
    # Relay's debugger hook: the interpreter (create_executor("debug")) calls the function with
    # the value; a compiled build runs the value through unchanged, as TVM 0.19's compute did.
    OpRow(
        "debug",
        ("expr",),
        (("debug_func", ""),),
        "identity",
        convert.identity,
        "relay.attrs.DebugAttrs",
        normalize={"debug_func": _debug_func_name},
    ),
    OpRow(
        "einsum",
        ("data",),
        (("equation", REQUIRED),),
        "relax.einsum",
        convert.einsum,
        "relay.attrs.EinsumAttrs",
        tuple_input=True,
    ),
)


#: None: every op of this family has a Relax form.
REFUSED: dict[str, str] = {}

BUILDERS = builders(ROWS, REFUSED)
_device_copy_row = BUILDERS["device_copy"]


def device_copy(data: Any, src_device: Any, dst_device: Any) -> Any:
    """Relay's ``device_copy(data, src_device, dst_device)``: the value itself in a build (one
    device per build); ``call.attrs.src_virtual_device``/``dst_virtual_device`` are the
    ``VirtualDevice`` of each device (a ``Device``, a name such as ``"cuda"``, or a
    ``VirtualDevice``).

    Raises
    ------
    ValueError
        For an unknown device name, as TVM 0.19 raised.
    """
    return _device_copy_row(data, make_virtual_device(src_device), make_virtual_device(dst_device))


BUILDERS["device_copy"] = device_copy
globals().update(BUILDERS)
__all__ = sorted(BUILDERS)


__getattr__ = missing_op("", __name__)  # an op this family lacks is refused, naming it
