"""``tvm.ir.diagnostics`` (TVM <= 0.19), served by ``install()``: the renderer hooks, refused
where they would matter.

Relay's type checker reported errors through a diagnostic context that a renderer printed;
``get_renderer()`` returned the renderer and ``override_renderer(fn)`` replaced it (upstream's
test helpers do both, the first when their module is imported). TVM 0.27 and the front end
report errors as Python exceptions (``tvm.error.DiagnosticError``, the front end's
``RelayTypeError`` naming the Relay op), so there is nothing to render: the current renderer can
be taken and put back (``override_renderer(None)``), and rendering or installing a custom
renderer is refused at the call, naming the replacement.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["DiagnosticRenderer", "get_renderer", "override_renderer"]

_NO_RENDERING = (
    "TVM 0.27 has no diagnostic renderer: errors are Python exceptions (tvm.error."
    "DiagnosticError; the Relay front end's RelayTypeError names the op); catch them with "
    "pytest.raises or try/except instead of rendering diagnostics"
)


class DiagnosticRenderer:
    """``tvm.ir.diagnostics.DiagnosticRenderer``: the default renderer, which renders nothing.

    Parameters
    ----------
    render_func : callable, optional
        Refused: TVM 0.27 never calls a renderer.
    """

    def __init__(self, render_func: Callable[..., Any] | None = None) -> None:
        if render_func is not None:
            raise NotImplementedError(_NO_RENDERING)

    def render(self, ctx: Any) -> None:
        """Refused: there are no diagnostic contexts to render."""
        raise NotImplementedError(_NO_RENDERING)


_DEFAULT = DiagnosticRenderer()


def get_renderer() -> DiagnosticRenderer:
    """The current (default) renderer."""
    return _DEFAULT


def override_renderer(render_func: Callable[..., Any] | None) -> None:
    """``override_renderer(None)`` keeps the default; a custom renderer is refused (it would
    never be called, so tests waiting for it would silently see nothing)."""
    if render_func is not None:
        raise NotImplementedError(_NO_RENDERING)
