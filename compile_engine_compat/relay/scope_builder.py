"""``relay.scope_builder`` (``tvm.relay.ScopeBuilder``): Relay's builder of nested Let and If.

A pure-Python helper over the front end's :class:`~.expr.Let` and :class:`~.expr.If`, with
Relay's methods and errors: ``let`` binds a value in the current scope, ``if_scope`` /
``else_scope`` open the two branches of an ``If`` (each a ``with`` block ending in ``ret``),
``ret`` sets the current scope's result and ``get`` returns the whole expression. The Lets and
Ifs it makes lower to Relax bindings and ``relax.If`` like any other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any as AnyT

from .expr import Expr, If, Let, Var, as_expr, var
from .ty import Type

__all__ = ["ScopeBuilder"]


class _PartialIf:
    """An ``If`` whose else branch is not built yet (Relay held ``If(cond, then, None)``)."""

    def __init__(self, cond: Expr, true_branch: Expr) -> None:
        self.cond = cond
        self.true_branch = true_branch


def _make_lets(bindings: list[tuple[Var, Expr]], ret_value: AnyT) -> Expr:
    """``let v1 = e1; ...; ret_value``, as Relay's ``_make_lets``."""
    if ret_value is None:
        raise RuntimeError("ret is not called in this scope")
    if isinstance(ret_value, _PartialIf):
        raise RuntimeError("Creating an If expression without else.")
    body = as_expr(ret_value)
    for variable, value in reversed(bindings):
        body = Let(variable, value, body)
    return body


class ScopeBuilder:
    """``relay.ScopeBuilder()``: build nested Let and If scopes.

    Examples
    --------
    >>> sb = relay.ScopeBuilder()
    >>> t1 = sb.let("t1", relay.log(x))
    >>> with sb.if_scope(cond):
    ...     sb.ret(t1)
    >>> with sb.else_scope():
    ...     sb.ret(x)
    >>> body = sb.get()
    """

    def __init__(self) -> None:
        self._bindings: list[list[tuple[Var, Expr]]] = [[]]
        self._ret_values: list[AnyT] = [None]

    def _enter_scope(self) -> None:
        self._bindings.append([])
        self._ret_values.append(None)

    def _exit_scope(self) -> tuple[list[tuple[Var, Expr]], AnyT]:
        return self._bindings.pop(), self._ret_values.pop()

    def let(self, var_or_name: Var | str | tuple[str, Type], value: AnyT) -> Var:
        """Bind ``value`` to a variable in the current scope; returns the variable.

        Parameters
        ----------
        var_or_name : relay.Var, str or (str, Type)
            The variable, or its name (and type) to make one.
        value : Expr
            The value bound.
        """
        if isinstance(var_or_name, tuple | list):
            if len(var_or_name) > 2:
                raise ValueError("Expect var to be Tuple[str, relay.Type]")
            variable = var(*var_or_name)
        elif isinstance(var_or_name, str):
            variable = var(var_or_name)
        elif isinstance(var_or_name, Var):
            variable = var_or_name
        else:
            raise TypeError(f"ScopeBuilder.let binds a relay.Var or a name, got {var_or_name!r}")
        self._bindings[-1].append((variable, as_expr(value)))
        return variable

    @contextmanager
    def _scope(self, on_exit: Callable[[list[tuple[Var, Expr]], AnyT], None]) -> Iterator[None]:
        self._enter_scope()
        yield
        on_exit(*self._exit_scope())

    def if_scope(self, cond: AnyT) -> AnyT:
        """A ``with`` block building the true branch of ``If(cond, ...)``."""

        def close(bindings: list[tuple[Var, Expr]], ret_value: AnyT) -> None:
            if self._ret_values[-1] is not None:
                raise RuntimeError("result already returned before if scope")
            self._ret_values[-1] = _PartialIf(as_expr(cond), _make_lets(bindings, ret_value))

        return self._scope(close)

    def else_scope(self) -> AnyT:
        """A ``with`` block building the false branch of the ``If`` just opened."""

        def close(bindings: list[tuple[Var, Expr]], ret_value: AnyT) -> None:
            partial = self._ret_values[-1]
            if not isinstance(partial, _PartialIf):
                raise RuntimeError("else scope must follows")
            false_branch = _make_lets(bindings, ret_value)
            self._ret_values[-1] = If(partial.cond, partial.true_branch, false_branch)

        return self._scope(close)

    def type_of(self, expr: Expr) -> AnyT:
        """The type of ``expr``: a variable's annotation (Relay's incomplete types for other
        expressions are not modelled: run ``relay.transform.InferTypeLocal`` instead)."""
        if isinstance(expr, Var):
            return expr.type_annotation
        raise NotImplementedError(
            "ScopeBuilder.type_of of a non-variable needs Relay's IncompleteType, which the "
            "front end does not model: use relay.transform.InferTypeLocal(expr)"
        )

    def ret(self, value: AnyT) -> None:
        """Set the result of the current scope."""
        if self._ret_values[-1] is not None:
            raise RuntimeError("ret value is already set in this scope.")
        self._ret_values[-1] = value

    def get(self) -> Expr:
        """The expression built (call at the outermost scope)."""
        if len(self._bindings) != 1:
            raise RuntimeError("can only call get at the outmost scope")
        return _make_lets(self._bindings[-1], self._ret_values[-1])
