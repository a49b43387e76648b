"""``tvm.utils`` of TVM <=0.19 (served by ``install()``): its roofline analysis, refused at the
call (see :mod:`.roofline`)."""

from __future__ import annotations

from compile_engine_compat.tvm_legacy.utils import roofline
from compile_engine_compat.tvm_legacy.utils.roofline import roofline_analysis

__all__ = ["roofline", "roofline_analysis"]
