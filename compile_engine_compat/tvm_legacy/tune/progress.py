"""Progress lines as the legacy ``autotvm.callback.progress_bar`` printed them."""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress"]


class Progress:
    """One task's progress: trials done, the current and best GFLOP/s, seconds since the start.

    Parameters
    ----------
    total : int
        The trials the task is given.
    prefix : str
        Printed first (the legacy ``progress_bar(total, prefix)``; ``"[Task  1/12] "``).
    stream : file, optional
        Default: standard output, as the legacy callback.
    """

    def __init__(self, total: int, prefix: str = "", stream: TextIO | None = None) -> None:
        self.total = total
        self.prefix = prefix
        self.stream = stream if stream is not None else sys.stdout
        self.done = 0
        self.current = 0.0
        self.best = 0.0
        self.start = time.monotonic()

    def update(self, trials: int, gflops: list[float]) -> None:
        """Count ``trials`` more trials, whose speeds were ``gflops`` (0 for a failed one)."""
        self.done += trials
        if gflops:
            self.current = gflops[-1]
            self.best = max(self.best, *gflops)
        self._write("\r")

    def finish(self) -> None:
        """End the task's line (``Done.``)."""
        self._write("\r")
        self.stream.write(" Done.\n")
        self.stream.flush()

    def _write(self, start: str) -> None:
        elapsed = time.monotonic() - self.start
        self.stream.write(
            f"{start}{self.prefix}Current/Best: {self.current:7.2f}/{self.best:7.2f} GFLOPS"
            f" | Progress: ({self.done}/{self.total}) | {elapsed:.2f} s"
        )
        self.stream.flush()
