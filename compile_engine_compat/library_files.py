"""Checks made before the shim loads native code: whose the folder and file are, and whether the
file is a whole shared library.

Loading a shared library runs its constructors, so the shim loads one only from a place no one
else can write, as ccache, sccache and OpenSSH's ``StrictModes`` do:

- the **folder** holding it is owned by the current user and not writable by group or others
  (:func:`check_private_folder`), so no other user can add, replace or rename a file in it;
- the **file** is opened without following a symlink (``O_NOFOLLOW``) and is a regular file
  owned by the current user, not writable by group or others (:func:`open_private_file`);
- the file loaded is the one checked: :func:`private_library` holds the descriptor open while
  the caller loads the path, then checks the path still names the same file (device, inode).

:func:`check_whole_library` reads an ELF file's headers and refuses one whose program or section
headers, or whose loaded segments, reach past its end (a truncated or half-copied library):
mapping such a file kills the process with SIGBUS when a page past the end is touched.

One place for all of it: the thread pool (``thread_pool``), the cache's kernels and modules
(``cache.disk``, ``facade.modules``) and ``tvm.runtime.load_module`` under ``install()``
(completeness only: the user named that file) call these.
"""

from __future__ import annotations

import contextlib
import os
import stat
import struct
from collections.abc import Iterator
from pathlib import Path

__all__ = [
    "UnsafeLibraryError",
    "check_private_folder",
    "check_whole_library",
    "open_private_file",
    "private_library",
]

_ELF_MAGIC = b"\x7fELF"
_PT_LOAD = 1


class UnsafeLibraryError(OSError):
    """A shared library (or its folder) the shim refuses to load; the message says why."""


def check_private_folder(folder: Path, what: str = "a shared library") -> os.stat_result:
    """Check that ``folder`` is a directory of the current user's, not writable by others.

    A symlink to such a directory is accepted: its target is what is checked.

    Parameters
    ----------
    folder : pathlib.Path
        The directory a library is loaded from.
    what : str
        What is loaded from it, for the message.

    Returns
    -------
    os.stat_result
        The directory's status.

    Raises
    ------
    UnsafeLibraryError
        When it is not a directory, belongs to another user or is writable by group or others.
    OSError
        When it cannot be read.
    """
    status = folder.stat()
    if not stat.S_ISDIR(status.st_mode):
        raise UnsafeLibraryError(f"{folder} is not a directory; {what} is not loaded from it")
    _check_owner_and_mode(folder, status, what)
    return status


def open_private_file(path: Path, what: str = "a shared library") -> int:
    """Open ``path`` read-only without following a symlink, and check the file it is.

    Parameters
    ----------
    path : pathlib.Path
        The file.
    what : str
        What the file is, for the message.

    Returns
    -------
    int
        An open descriptor of a regular file of the current user's, not writable by group or
        others; the caller closes it.

    Raises
    ------
    UnsafeLibraryError
        For a symlink, a file that is not regular, another user's file or one others may write.
    OSError
        When it cannot be opened.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        if os.path.islink(path):
            raise UnsafeLibraryError(
                f"{path} is a symlink; {what} is loaded only from a file itself"
            ) from err
        raise
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise UnsafeLibraryError(f"{path} is not a regular file; {what} is not loaded from it")
        _check_owner_and_mode(path, status, what)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _check_owner_and_mode(path: Path, status: os.stat_result, what: str) -> None:
    uid = os.getuid()
    if status.st_uid != uid:
        raise UnsafeLibraryError(
            f"{path} belongs to uid {status.st_uid}, not to the current user (uid {uid}); "
            f"{what} runs code when loaded, so only the user's own files are loaded"
        )
    if status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UnsafeLibraryError(
            f"{path} is writable by group or others (mode {stat.S_IMODE(status.st_mode):o}); "
            f"{what} runs code when loaded. Fix it with: chmod go-w {path}"
        )


@contextlib.contextmanager
def private_library(path: Path, what: str = "a shared library") -> Iterator[str]:
    """Check ``path`` and its folder, then yield the path to load while the file is held open.

    On leaving, the path must still name the file that was checked (same device and inode):
    otherwise :class:`UnsafeLibraryError`. The file is also checked whole
    (:func:`check_whole_library`).

    Raises
    ------
    UnsafeLibraryError
        When the folder or the file fails a check (see :func:`check_private_folder`,
        :func:`open_private_file`) or the file is not a whole shared library.
    OSError
        When either cannot be read.
    """
    check_private_folder(path.parent, what)
    fd = open_private_file(path, what)
    try:
        checked = os.fstat(fd)
        _check_whole(fd, path, checked.st_size)
        yield str(path)
        now = os.stat(path, follow_symlinks=False)
        if (now.st_dev, now.st_ino) != (checked.st_dev, checked.st_ino):
            raise UnsafeLibraryError(f"{path} was replaced while it was loaded")
    finally:
        os.close(fd)


def check_whole_library(path: str | os.PathLike[str]) -> None:
    """Refuse an ELF file whose headers or loaded segments reach past its end.

    A file that does not start as an ELF file is left to the loader (which refuses it with an
    error, not a signal).

    Raises
    ------
    UnsafeLibraryError
        For a truncated ELF file, naming what lies past its end.
    OSError
        When the file cannot be read.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        _check_whole(fd, Path(path), os.fstat(fd).st_size)
    finally:
        os.close(fd)


def _check_whole(fd: int, path: Path, size: int) -> None:
    header = os.pread(fd, 64, 0)
    if not header.startswith(_ELF_MAGIC):
        return
    if len(header) < 52 or header[4] not in (1, 2) or header[5] not in (1, 2):
        raise UnsafeLibraryError(f"{path} is not a whole shared library: its ELF header is cut")
    wide = header[4] == 2
    order = "<" if header[5] == 1 else ">"
    if wide and len(header) < 64:
        raise UnsafeLibraryError(f"{path} is not a whole shared library: its ELF header is cut")
    if wide:
        phoff, shoff = struct.unpack_from(order + "QQ", header, 32)
        phentsize, phnum, shentsize, shnum = struct.unpack_from(order + "HHHH", header, 54)
    else:
        phoff, shoff = struct.unpack_from(order + "II", header, 28)
        phentsize, phnum, shentsize, shnum = struct.unpack_from(order + "HHHH", header, 42)
    for what, offset, count, entry in (
        ("program headers", phoff, phnum, phentsize),
        ("section headers", shoff, shnum, shentsize),
    ):
        if count and offset + count * entry > size:
            raise _truncated(path, what, offset + count * entry, size)
    table = os.pread(fd, phnum * phentsize, phoff) if phnum else b""
    for index in range(phnum):
        start = index * phentsize
        if wide:
            kind, _, offset, _, _, filesz = struct.unpack_from(order + "IIQQQQ", table, start)
        else:
            kind, offset, _, _, filesz = struct.unpack_from(order + "IIIII", table, start)
        if kind == _PT_LOAD and offset + filesz > size:
            raise _truncated(path, f"loaded segment {index}", offset + filesz, size)


def _truncated(path: Path, what: str, end: int, size: int) -> UnsafeLibraryError:
    return UnsafeLibraryError(
        f"{path} is not a whole shared library (truncated?): its {what} end at byte {end}, past "
        f"the end of the file ({size} bytes); loading it would crash the process"
    )
