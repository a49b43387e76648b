"""Relay's layout strings (``"NCHW"``, ``"NCHW16c"``, ``"OIHW4o4i"``): their axes, in order.

One parser for the wing: the type relations, the layout folding of ``FoldScaleAxis`` and
``SimplifyExpr``'s layout rules all read layouts through :func:`layout_axes`.
"""

from __future__ import annotations

__all__ = ["axis_names", "layout_axes"]


def layout_axes(layout: str) -> list[tuple[str, int | None]]:
    """A layout's axes in order, each with its split factor.

    Parameters
    ----------
    layout : str
        A Relay layout string; a lower-case axis is the inner part of its upper-case axis,
        split by the number written before it.

    Returns
    -------
    list of (str, int or None)
        ``"OIHW4o4i"`` gives O, I, H, W (no factor), then ``("o", 4)`` and ``("i", 4)``.
    """
    axes: list[tuple[str, int | None]] = []
    digits = ""
    for char in str(layout):
        if char.isdigit():
            digits += char
            continue
        axes.append((char, int(digits) if digits else None))
        digits = ""
    return axes


def axis_names(layout: str) -> list[str]:
    """A layout's axis letters in order (``"NCHW4c"`` -> N, C, H, W, c)."""
    return [axis for axis, _ in layout_axes(layout)]
