"""Build many kernels at once: chunks of lowered functions compiled on a pool of threads.

``jit_many`` lowers its functions one by one (tracing holds the GIL and the trace lock) and hands
them here. Every ``chunk`` functions of one target go into one IRModule and one ``tvm.compile``
on a worker thread, while the caller lowers the next ones. Why chunks and threads, measured on
the 2-core machine (``bench/RESULTS.md``):

* LLVM's optimization and code generation are most of a kernel's build time (~30 ms of ~35 ms
  for ``tvm.compile``, then ~30 ms JIT at the first function lookup) and ``tvm.compile`` releases
  the GIL, so a second core halves it;
* one IRModule of 50 functions JITs at ~75 ms per function against ~30 ms at 8-20: the cost
  grows faster than the module, so one module for everything is slower than a few.

Workers run under the caller's PassContext (it is thread-local in TVM), so a user's pass config
or instruments apply to the pooled builds as to a ``jit`` in the caller's thread.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, TypeVar

import tvm

__all__ = ["MAX_CHUNK", "ChunkedBuilder", "build_threads", "chunk_sizes"]

#: Most functions in one IRModule; past this, bigger modules cost more per function.
MAX_CHUNK = 8

Item = TypeVar("Item")
Built = TypeVar("Built")


def build_threads() -> int:
    """The CPUs this process may run on: the build pool's size (at least 1)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def chunk_sizes(expected: int, threads: int) -> list[int]:
    """Split ``expected`` items into chunks of at most :data:`MAX_CHUNK`, as even as they can be,
    in a multiple of ``threads`` chunks so that no thread is left with a short tail alone."""
    if expected <= 0:
        return [1]
    rounds = math.ceil(expected / (threads * MAX_CHUNK))
    count = min(expected, threads * rounds)
    return [expected // count + (1 if i < expected % count else 0) for i in range(count)]


class ChunkedBuilder(Generic[Item, Built]):
    """Collect items by group; build each full chunk on the pool; :meth:`finish` waits for all.

    Parameters
    ----------
    expected : int
        About how many items will be added: chunks are sized so every thread gets work.
    build : callable
        ``build(items) -> results``, one result per item, run on a worker thread.
    """

    def __init__(self, expected: int, build: Callable[[list[Item]], list[Built]]) -> None:
        threads = build_threads()
        self._sizes = chunk_sizes(expected, threads)
        self._build = build
        self._context = tvm.transform.PassContext.current()
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="compile-engine-compat-build")
        self._groups: dict[str, list[Item]] = {}
        self._submitted: list[tuple[list[Item], Future[list[Built]]]] = []

    def add(self, group: str, item: Item) -> None:
        """Queue ``item`` in ``group`` (items of one group may share a module)."""
        items = self._groups.setdefault(group, [])
        items.append(item)
        if len(items) >= self._sizes[min(len(self._submitted), len(self._sizes) - 1)]:
            self._submit(self._groups.pop(group))

    def _submit(self, items: list[Item]) -> None:
        self._submitted.append((items, self._pool.submit(self._build_in_context, items)))

    def _build_in_context(self, items: list[Item]) -> list[Built]:
        with self._context:
            return self._build(items)

    def finish(self, on_built: Callable[[Item, Built], None]) -> None:
        """Build what is left, wait for every chunk and pass each ``(item, result)`` on.

        Parameters
        ----------
        on_built : callable
            Called in the caller's thread for every item of every chunk that built.

        Raises
        ------
        Exception
            The first failed chunk's error, once every chunk has finished and the others' results
            were passed on.
        """
        for items in self._groups.values():
            self._submit(items)
        self._groups.clear()
        first_error: BaseException | None = None
        try:
            for items, future in self._submitted:
                try:
                    results = future.result()
                except BaseException as err:  # re-raised below, after the other chunks
                    first_error = first_error or err
                    continue
                for item, result in zip(items, results):
                    on_built(item, result)
        finally:
            self._pool.shutdown(wait=True)
        if first_error is not None:
            raise first_error

    def cancel(self) -> None:
        """Drop what was not started and wait for the chunks already running."""
        self._pool.shutdown(wait=True, cancel_futures=True)
