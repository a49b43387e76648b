"""The bounds of one call to a remote store: its deadline, and the size its reply may have.

A call's deadline starts at the lookup timeout and grows with the size the store announces
(:data:`S_PER_MIB` per MiB, for reads as for writes), so one big entry over a slow link is not
taken for a hung server. A reply announced over the entry size cap is refused as announced
(:class:`OversizedReply`), before a byte of it is read.
"""

from __future__ import annotations

import math
import threading
import time

__all__ = ["MIB", "S_PER_MIB", "Deadline", "OversizedReply"]

MIB = 1024 * 1024
#: A call moving an entry may take this much longer per MiB than the lookup timeout.
S_PER_MIB = 0.25


class OversizedReply(Exception):
    """The store announced a reply larger than the entry size cap: it is not read.

    Attributes
    ----------
    size : int
        The size announced, in bytes.
    limit : int
        The cap, in bytes.
    """

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"the store announced {size} bytes, over the cap of {limit}")
        self.size = size
        self.limit = limit


class Deadline:
    """The time left to one lookup (its calls share it).

    Parameters
    ----------
    seconds : float
        The time from now.
    """

    def __init__(self, seconds: float) -> None:
        self._lock = threading.Lock()
        self._end = time.monotonic() + seconds
        self._given = seconds
        self._expired = False

    def left(self) -> float:
        """Return the seconds left (0 when past, or after :meth:`expire`)."""
        return max(0.0, self._end - time.monotonic())

    def seconds(self) -> float:
        """Return the whole time this deadline gives, extensions included."""
        return self._given

    def extend_for(self, size: int) -> None:
        """Give a call moving ``size`` bytes :data:`S_PER_MIB` more per MiB (not once expired)."""
        with self._lock:
            if not self._expired:
                self._end += S_PER_MIB * size / MIB
                self._given += S_PER_MIB * size / MIB

    def expire(self) -> None:
        """End the deadline now, for good: the waiter gave up, the call must stop too."""
        with self._lock:
            self._expired = True
            self._end = -math.inf
