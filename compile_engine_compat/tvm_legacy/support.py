"""``tvm.support.libinfo`` as TVM <=0.19 answered it, served by ``install()``.

TVM 0.27's ``libinfo()`` lists 15 build flags; TVM 0.19's listed the flags of features since
removed, and legacy code indexes them (``libinfo()["USE_BYODT_POSIT"] == "ON"`` decides whether
the posit datatype tests run). :func:`libinfo` is TVM 0.27's dictionary plus each flag of
:data:`REMOVED_FEATURES` as ``"OFF"``: the feature is in no 0.27 build.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

#: TVM's own ``libinfo`` (its submodule's function: ``tvm.support.libinfo`` is replaced while
#: installed).
_tvm_libinfo: Callable[[], dict[str, str]] = importlib.import_module("tvm.support.libinfo").libinfo

__all__ = ["REMOVED_FEATURES", "libinfo"]

#: TVM 0.19 build flags of features TVM 0.27 has in no build.
REMOVED_FEATURES: tuple[str, ...] = (
    "USE_BYODT_POSIT",  # custom datatypes (tvm.target.datatype) are gone
    "USE_PIPELINE_EXECUTOR",  # tvm.contrib.pipeline_executor
)


def libinfo() -> dict[str, str]:
    """The build flags of this TVM, with TVM 0.19's removed features as ``"OFF"``.

    Returns
    -------
    dict of str to str
        TVM 0.27's ``tvm.support.libinfo()``, plus :data:`REMOVED_FEATURES` where it lacks them.
    """
    info = dict(_tvm_libinfo())
    for flag in REMOVED_FEATURES:
        info.setdefault(flag, "OFF")
    return info
