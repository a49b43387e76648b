"""Files written whole under a new name in their folder, then renamed over their target.

A rename gives the target a new inode, atomically: a reader sees the old file or the new one,
never a mix, and a program that loaded the old file (a shared library is mapped, not read) keeps
its bytes. Rewriting a loaded library in place instead changes the code under the program that
runs it: wrong results, then a crash. So every export, copy and store of the package goes
through :func:`replacing`, as ccache, sccache and Bazel write their outputs.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["replacing", "umask"]


def umask() -> int:
    """The process's umask, read without changing it where Linux says it (``/proc``)."""
    with contextlib.suppress(OSError, ValueError, StopIteration):
        with open("/proc/self/status", encoding="ascii") as status:
            line = next(line for line in status if line.startswith("Umask:"))
        return int(line.split()[1], 8)
    return 0o022  # the usual one; never widens a mode past what is asked


@contextlib.contextmanager
def replacing(target: str | os.PathLike[str], mode: int = 0o666) -> Iterator[Path]:
    """Yield a new file's path beside ``target``; once the block ends, rename it over ``target``.

    The staging file has ``target``'s suffix (writers that pick a format by it, such as TVM's
    ``export_library``, pick the same one) and is removed if the block raises.

    Parameters
    ----------
    target : str or os.PathLike
        The file to (re)place.
    mode : int
        Its permissions before the umask: ``0o777`` for a library or program, as a compiler
        makes them, ``0o666`` for data.

    Raises
    ------
    OSError
        When the folder cannot be written (the target is then untouched).
    """
    path = Path(os.fspath(target))
    handle, name = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=f".tmp{path.suffix}", dir=path.parent
    )
    os.close(handle)
    staging = Path(name)
    try:
        yield staging
        os.chmod(staging, mode & ~umask())
        os.replace(staging, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            staging.unlink()
