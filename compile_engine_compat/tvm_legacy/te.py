"""``tvm.te.size_var`` of TVM <=0.19 (served by ``install()``).

TVM 0.27 removed ``SizeVar`` (a variable known to be non-negative): ``size_var`` makes a plain
``tvm.te.var`` of the same name and dtype, so the simplifier no longer assumes it is >= 0.
"""

from __future__ import annotations

from typing import Any

import tvm

__all__ = ["size_var"]


def size_var(name: str = "size", dtype: str = "int32", span: Any = None) -> Any:
    """A shape variable ``name`` of ``dtype`` (TVM 0.19: a ``tirx.SizeVar``)."""
    return tvm.te.var(name, dtype, span)
