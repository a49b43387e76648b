"""``relay.function``: Relay's ``Function``, which the engine and TVM take as its Relax function."""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any as AnyT

from tvm import relax

from compile_engine_compat.relay._impl import origin
from compile_engine_compat.relay._impl.origin import remember

from .expr import UPPER, BaseFunc, Call, Var, as_expr, as_var
from .ty import Type

__all__ = ["Function", "PublicFunction", "named_relax_function"]


class Function(BaseFunc):
    """``relay.Function(params, body, ret_type=None, type_params=None, attrs=None)``.

    The engine takes it anywhere it takes a Relax function (``__relax_function__``), and TVM
    itself converts it to its Relax function (``__tvm_ffi_object__``), so
    ``tvm.IRModule.from_expr(func)`` holds that Relax function as ``"main"``.
    """

    def __init__(
        self,
        params: Sequence[Var],
        body: AnyT,
        ret_type: Type | None = None,
        type_params: Sequence[AnyT] | None = None,
        attrs: Mapping[str, AnyT] | None = None,
        span: AnyT = None,
    ) -> None:
        # Variables that went through tvm.runtime.convert come back as themselves.
        params = [as_var(p) for p in params]
        for p in params:
            if not isinstance(p, Var):
                raise TypeError(f"Function parameters must be relay.Var, got {p!r}")
        self.params = params
        self.body = as_expr(body)
        self.ret_type = ret_type
        self.type_params = list(type_params or [])
        self.attrs = dict(attrs or {})
        self.span = span
        self._relax: AnyT = None

    def with_attr(self, attr_key: str, attr_value: AnyT) -> Function:
        """A copy with one more attribute (Relay's ``Function.with_attr``).

        Attributes stay on the Relay function; the Relax function (and so the engine's cache
        key) does not see them.
        """
        return Function(
            self.params,
            self.body,
            self.ret_type,
            self.type_params,
            {**self.attrs, attr_key: attr_value},
        )

    def __call__(self, *args: AnyT) -> Call:
        return Call(self, list(args))

    def __relax_function__(self) -> relax.Function:
        """The Relax function of the same graph (built once; nodes are immutable)."""
        if self._relax is None:
            self._relax = UPPER.function_to_relax(self)
        # Remembered (again) on every use: mod["main"] reads back as this Relay function, and
        # the Relay passes and codegens find this function from its Relax form.
        origin.record(self._relax, self)
        return self._relax

    def __tvm_ffi_object__(self) -> relax.Function:
        """What TVM receives for this function: its Relax function (the interpreter's
        stand-in where Relax cannot express it, as ``mod[gv] = func`` stores it)."""
        out: relax.Function = UPPER.to_relax(self, stand_in=True)
        return out

    def __repr__(self) -> str:
        return f"fn ({', '.join(map(repr, self.params))})"


def named_relax_function(func: AnyT, name: str) -> AnyT:
    """``func``'s Relax form exported as ``name``, still mapped back to ``func``.

    Parameters
    ----------
    func : object with ``__relax_function__``
        A front-end function (``relay.Function``).
    name : str
        Its ``global_symbol`` in a module (the front end names every function "main").
    """
    return remember(func.__relax_function__().with_attr("global_symbol", name), func)


class _FunctionOrFrontEndRelax(type):
    """``isinstance(x, relay.Function)`` as Relay-era code asks it: a Relay function, or the
    Relax function a module holds for one (``mod["main"]``, which TVM 0.19 gave as Relay)."""

    def __instancecheck__(cls, obj: AnyT) -> bool:
        if isinstance(obj, Function):
            return True
        return isinstance(obj, relax.Function) and origin.relay_of(obj) is not None

    def __subclasscheck__(cls, sub: AnyT) -> bool:
        return isinstance(sub, type) and issubclass(sub, Function)

    def __call__(cls, *args: AnyT, **kwargs: AnyT) -> AnyT:
        if cls is PublicFunction:  # relay.Function(...) builds the one Function class
            return Function(*args, **kwargs)
        return super().__call__(*args, **kwargs)


class PublicFunction(Function, metaclass=_FunctionOrFrontEndRelax):
    """``relay.Function`` as the public name: it builds a :class:`Function`; ``isinstance`` also
    accepts the Relax function a module holds for a Relay function, so Relay-era code that
    reads ``mod["main"]`` back (``entry if isinstance(expr, relay.Function) else entry.body``)
    keeps the function."""


PublicFunction.__name__ = PublicFunction.__qualname__ = "Function"
PublicFunction.__signature__ = inspect.signature(Function)  # type: ignore[attr-defined]
