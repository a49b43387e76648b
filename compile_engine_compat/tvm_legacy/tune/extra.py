"""The ``[tune]`` extra: what MetaSchedule needs and TVM's wheel does not install."""

from __future__ import annotations

import importlib.util

__all__ = ["TUNE_EXTRA", "require_tune_extra"]

#: The modules of ``pip install 'compile-engine-compat[tune]'``.
TUNE_EXTRA = ("psutil", "cloudpickle", "xgboost")


def require_tune_extra(what: str) -> None:
    """Raise an ImportError naming the ``[tune]`` extra when one of its modules is missing.

    Parameters
    ----------
    what : str
        The legacy call that needs it, for the message (``"autotvm.tuner.XGBTuner.tune"``).

    Raises
    ------
    ImportError
        When psutil, cloudpickle or xgboost cannot be imported.
    """
    missing = [name for name in TUNE_EXTRA if importlib.util.find_spec(name) is None]
    if missing:
        raise ImportError(
            f"tvm.{what} tunes with TVM's MetaSchedule, which needs {', '.join(missing)}: "
            "install the tuning extra, pip install 'compile-engine-compat[tune]'",
            name=missing[0],
        )
