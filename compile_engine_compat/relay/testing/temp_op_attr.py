"""``relay.testing.temp_op_attr.TempOpAttr``: set an op attribute for the duration of a block."""

from __future__ import annotations

from typing import Any

from ..op.op import get

__all__ = ["TempOpAttr"]


class TempOpAttr:
    """``with TempOpAttr(op_name, attr_key, attr_value):`` as in Relay.

    Parameters
    ----------
    op_name : str
        A Relay op name (``"nn.conv2d"``).
    attr_key : str
        The attribute; ``"FTVMStrategy"`` is honoured by the engine's strategy selection.
    attr_value : object
        The value while the block runs.
    """

    def __init__(self, op_name: str, attr_key: str, attr_value: Any) -> None:
        self.op = get(op_name)
        self.attr_key = attr_key
        self.attr_value = attr_value
        self.older_attr: Any = None

    def __enter__(self) -> TempOpAttr:
        self.older_attr = self.op.get_attr(self.attr_key)
        self.op.reset_attr(self.attr_key)
        self.op.set_attr(self.attr_key, self.attr_value)
        return self

    def __exit__(self, *exc: object) -> None:
        self.op.reset_attr(self.attr_key)
        if self.older_attr is not None:
            self.op.set_attr(self.attr_key, self.older_attr)
