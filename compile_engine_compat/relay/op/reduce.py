"""``relay.op.reduce``: Relay's reductions (``sum``, ``mean``, ``argmax``...), as table rows.

Relay's ``exclude=True`` reduces over the axes not named, which :func:`.convert.reduce` resolves.
"""

from __future__ import annotations

from typing import Any

from compile_engine_compat.relay._impl import convert, convert_te
from compile_engine_compat.relay._impl.registry import OpRow, Refusal, builders, missing_op

#: What every reduction takes besides its data.
REDUCE_ATTRS: tuple[tuple[str, Any], ...] = (
    ("axis", None),
    ("keepdims", False),
    ("exclude", False),
)
_REDUCE = "relay.attrs.ReduceAttrs"

#: Relay's ``variance``/``std`` (and ``mean_variance``/``mean_std``) take ``unbiased`` too.
VARIANCE_ATTRS = (*REDUCE_ATTRS, ("unbiased", False))

ROWS: tuple[OpRow, ...] = (
    *(
        OpRow(n, ("data",), REDUCE_ATTRS, f"relax.{n}", convert.reduce(f"relax.{n}"), _REDUCE)
        for n in ("sum", "max", "min", "prod")
    ),
    OpRow("mean", ("data",), REDUCE_ATTRS, "relax.mean", convert.mean_reduce, _REDUCE),
    OpRow(
        "variance", ("data",), VARIANCE_ATTRS, "relax.variance", convert.variance_reduce, _REDUCE
    ),
    OpRow("std", ("data",), VARIANCE_ATTRS, "relax.std", convert.std_reduce, _REDUCE),
    *(
        OpRow(
            f"mean_{spread}",
            ("data",),
            VARIANCE_ATTRS,
            "relax.mean",
            convert.mean_and(spread),
            _REDUCE,
            outputs=lambda attrs: 2,
        )
        for spread in ("variance", "std")
    ),
    # Relay composed it in Python from max, exp, sum and log; here it is one row.
    OpRow(
        "logsumexp",
        ("data",),
        (("axis", None), ("keepdims", False)),
        "relax.sum",
        convert.logsumexp,
        _REDUCE,
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
