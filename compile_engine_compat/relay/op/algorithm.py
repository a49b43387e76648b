"""``relay.op.algorithm``: Relay's sorting ops (``sort``, ``argsort``, ``topk``), as table rows."""

from __future__ import annotations

from compile_engine_compat.relay._impl import convert, normalize
from compile_engine_compat.relay._impl.registry import OpRow, Refusal, builders, missing_op

ROWS: tuple[OpRow, ...] = (
    OpRow(
        "sort",
        ("data",),
        (("axis", -1), ("is_ascend", 1)),
        "relax.sort",
        convert.direct("relax.sort", axis="axis", descending=lambda a, _: not a.is_ascend),
        "relay.attrs.ArgsortAttrs",
    ),
    OpRow(
        "argsort",
        ("data",),
        (("axis", -1), ("is_ascend", 1), ("dtype", "int32")),
        "relax.argsort",
        convert.direct(
            "relax.argsort",
            axis="axis",
            descending=lambda a, _: not a.is_ascend,
            dtype="dtype",
        ),
        "relay.attrs.ArgsortAttrs",
    ),
    OpRow(
        "topk",
        ("data",),
        (
            ("k", 1),
            ("axis", -1),
            ("ret_type", "both"),
            ("is_ascend", False),
            ("dtype", "int32"),
        ),
        "relax.topk",
        convert.direct(
            "relax.topk",
            k="k",
            axis="axis",
            ret_type="ret_type",
            largest=lambda a, _: not a.is_ascend,
            dtype="dtype",
        ),
        "relay.attrs.TopKAttrs",
        outputs=lambda a: 2 if a.ret_type == "both" else 0,
        normalize={"k": normalize.scalar_value},
        refusals=(Refusal("k", lambda v: isinstance(v, int), "k must be a Python int in Relax"),),
        dynamic=("k",),
    ),
)


#: None: every op of this family has a Relax form.
REFUSED: dict[str, str] = {}

BUILDERS = builders(ROWS, REFUSED)
globals().update(BUILDERS)
__all__ = sorted(BUILDERS)


__getattr__ = missing_op("", __name__)  # an op this family lacks is refused, naming it
