"""``relay.op.reduce``: Relay's reductions (``sum``, ``mean``, ``argmax``...), as table rows.

Relay's ``exclude=True`` reduces over the axes not named, which :func:`.convert.reduce` resolves.
"""

from __future__ import annotations

from typing import Any

from . import convert, convert_te
from .registry import OpRow, Refusal, builders, missing_op

#: What every reduction takes besides its data.
REDUCE_ATTRS: tuple[tuple[str, Any], ...] = (
    ("axis", None),
    ("keepdims", False),
    ("exclude", False),
)
_BIASED = Refusal("unbiased", lambda v: not v, "relax variance/std are biased")

ROWS: tuple[OpRow, ...] = (
    *(
        OpRow(
            n,
            ("data",),
            REDUCE_ATTRS + ((("unbiased", False),) if n in ("variance", "std") else ()),
            f"relax.{n}",
            convert.reduce(f"relax.{n}"),
            "relay.attrs.ReduceAttrs",
            refusals=(_BIASED,) if n in ("variance", "std") else (),
        )
        for n in ("sum", "mean", "max", "min", "prod", "variance", "std")
    ),
    *(
        OpRow(
            n,
            ("data",),
            (*REDUCE_ATTRS, ("select_last_index", False)),
            f"relax.{n}",
            convert.argreduce(f"relax.{n}"),
            "relay.attrs.ArgReduceAttrs",
            refusals=(
                Refusal(
                    "exclude",
                    lambda v: not v,
                    "relax.op.argmax/argmin take one axis: pass it directly",
                ),
                Refusal(
                    "select_last_index",
                    lambda v: not v,
                    "relax.op.argmax/argmin return the first index; flip the axis "
                    "(relax.op.flip) to find the last",
                ),
            ),
        )
        for n in ("argmax", "argmin")
    ),
    *(
        OpRow(
            n,
            ("data",),
            REDUCE_ATTRS,
            f"topi.{n}",
            convert_te.te_reduce(n),
            "relay.attrs.ReduceAttrs",
        )
        for n in ("all", "any")
    ),
)


#: None: every op of this family has a Relax form.
REFUSED: dict[str, str] = {}

BUILDERS = builders(ROWS, REFUSED)
globals().update(BUILDERS)
__all__ = sorted(BUILDERS)


__getattr__ = missing_op("", __name__)  # an op this family lacks is refused, naming it
