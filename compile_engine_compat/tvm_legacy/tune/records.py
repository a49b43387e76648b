"""The shim's tuning record file: JSON lines, each signed as the shim's, versioned.

One line per tuned kernel::

    {"signature": "compile-engine-compat/tuning-record", "version": 1,
     "workload": "<structural hash>", "task": "fused_conv2d_add_relu", "target": "<target>",
     "tuner": "XGBTuner", "trials": 4, "flop": 7.5e7,
     "shim_seconds": 1.2e-4, "tuned_seconds": 9.8e-5, "use": "tuned",
     "kernel": "<the unscheduled PrimFunc, tvm.ir.save_json>",
     "schedule": "<the tuned PrimFunc, tvm.ir.save_json, or null>", "timestamp": 1765000000.0}

``use`` says which schedule was faster when tuned (``"tuned"`` or ``"shim"``, the shim's own
rules): applying the file picks it. The file is rewritten whole (written beside, renamed over)
after each kernel, so an interrupted run keeps every kernel finished before.

TVM <=0.19's records describe another search space (AutoTVM's template knobs, Ansor's
transform steps) and are refused by format with :class:`TuningRecordsError`: they must be
re-tuned.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from compile_engine_compat import new_files

__all__ = ["RECORD_VERSION", "SIGNATURE", "TuningRecordsError", "append_record", "read_records"]

SIGNATURE = "compile-engine-compat/tuning-record"
RECORD_VERSION = 1

_RETUNE = (
    "they describe another search space than TVM 0.27's MetaSchedule tunes, and cannot be "
    "applied: re-tune on the shim (the same tuning program writes the shim's records)"
)


class TuningRecordsError(ValueError):
    """A record file the shim cannot apply: TVM <=0.19's records, or not tuning records."""


def append_record(path: str | os.PathLike[str], record: dict[str, Any]) -> None:
    """Add one record line to the file at ``path`` (created if absent), written beside, renamed.

    Raises
    ------
    TuningRecordsError
        When ``path`` holds lines that are not the shim's records (they are never overwritten).
    """
    target = Path(os.fspath(path))
    kept = target.read_text() if target.exists() else ""
    if kept.strip():
        list(read_records(target))  # refuses a file of someone else's records before touching it
    line = json.dumps({"signature": SIGNATURE, "version": RECORD_VERSION, **record})
    with new_files.replacing(target) as staging:
        staging.write_text(kept + ("" if not kept or kept.endswith("\n") else "\n") + line + "\n")


def read_records(source: Any) -> Iterator[dict[str, Any]]:
    """The records of a file path, or of an iterable of record dicts or JSON lines.

    Raises
    ------
    TuningRecordsError
        For TVM <=0.19's AutoTVM (``{"input": ..., "result": ...}``) or auto_scheduler
        (``{"i": ..., "r": ...}``) lines, for lines that are not JSON, and for records of a
        newer version.
    FileNotFoundError
        When the path does not exist.
    """
    if isinstance(source, (str, os.PathLike)):
        where = os.fspath(source)
        with open(where, encoding="utf-8") as handle:
            yield from _parsed(handle, where)
    elif isinstance(source, Iterable):
        yield from _parsed(source, "the records given")
    else:
        raise TypeError(
            f"tuning records are a file path or an iterable of records, got {type(source).__name__}"
        )


def _parsed(lines: Iterable[Any], where: str) -> Iterator[dict[str, Any]]:
    for number, line in enumerate(lines, 1):
        if isinstance(line, dict):
            record = line
        else:
            text = str(line).strip()
            if not text or text.startswith("#"):
                continue
            try:
                record = json.loads(text)
            except json.JSONDecodeError as error:
                raise TuningRecordsError(
                    f"{where}, line {number}: not a tuning record (not JSON: {error.msg})"
                ) from None
        yield _checked(record, where, number)


def _checked(record: Any, where: str, number: int) -> dict[str, Any]:
    if not isinstance(record, dict):
        raise TuningRecordsError(f"{where}, line {number}: not a tuning record (not an object)")
    if record.get("signature") == SIGNATURE:
        version = record.get("version")
        if not isinstance(version, int) or version > RECORD_VERSION:
            raise TuningRecordsError(
                f"{where}, line {number}: a record of version {version!r}; this release reads "
                f"version {RECORD_VERSION} and below: upgrade compile-engine-compat or re-tune"
            )
        return record
    if {"input", "result"} <= set(record):
        raise TuningRecordsError(
            f"{where}, line {number}: an AutoTVM record written by TVM <=0.19 "
            f"(its {{'input', 'config', 'result'}} lines): {_RETUNE}"
        )
    if {"i", "r"} <= set(record):
        raise TuningRecordsError(
            f"{where}, line {number}: an auto_scheduler (Ansor) record written by TVM <=0.19 "
            f"(its {{'i', 'r'}} lines): {_RETUNE}"
        )
    raise TuningRecordsError(
        f"{where}, line {number}: not a compile-engine-compat tuning record (no "
        f"{SIGNATURE!r} signature)"
    )
