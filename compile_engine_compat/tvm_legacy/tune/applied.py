"""A record file applied to builds: each kernel gets the faster schedule its records name."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from compile_engine_compat.pipeline.tuned import applied

from .kernels import workload_key
from .records import read_records

__all__ = ["AppliedRecords", "applying"]


class AppliedRecords:
    """The best record per (kernel, target) of a record source, and the lookup builds ask.

    Parameters
    ----------
    source : str, os.PathLike or iterable
        A record file (:mod:`.records`), or records.

    Raises
    ------
    TuningRecordsError
        For TVM <=0.19's records or lines that are not the shim's.
    """

    def __init__(self, source: Any) -> None:
        self.best: dict[tuple[str, str], dict[str, Any]] = {}
        for record in read_records(source):
            key = (str(record.get("workload")), str(record.get("target")))
            if key not in self.best or _seconds(record) < _seconds(self.best[key]):
                self.best[key] = record
        self._loaded: dict[tuple[str, str], tuple[Any, Any]] = {}
        #: How many kernels builds got a tuned schedule from these records.
        self.applied = 0

    def __len__(self) -> int:
        return len(self.best)

    def lookup(self, func: tirx.PrimFunc, target: tvm.target.Target) -> tirx.PrimFunc | None:
        """The tuned schedule of ``func`` when its record says the tuned one was faster."""
        key = (workload_key(func), str(target))
        record = self.best.get(key)
        if record is None or record.get("use") != "tuned" or not record.get("schedule"):
            return None
        if key not in self._loaded:
            self._loaded[key] = (
                tvm.ir.load_json(record["kernel"]),
                tvm.ir.load_json(record["schedule"]),
            )
        kernel, scheduled = self._loaded[key]
        if not isinstance(scheduled, tirx.PrimFunc) or not tvm_ffi.structural_equal(kernel, func):
            return None  # a hash collision or a damaged record: the shim's rules
        self.applied += 1
        return scheduled


def _seconds(record: dict[str, Any]) -> float:
    """The seconds of the schedule a record uses (infinite when it measured nothing)."""
    chosen = record.get("tuned_seconds") if record.get("use") == "tuned" else \
        record.get("shim_seconds")  # fmt: skip
    return float(chosen) if isinstance(chosen, (int, float)) else float("inf")


@contextlib.contextmanager
def applying(records: AppliedRecords) -> Iterator[AppliedRecords]:
    """Within the block, ``relay.build`` schedules each kernel as ``records`` say."""
    with applied(records.lookup):
        yield records
