"""The checks made before native code is loaded: the folder and the file are the current user's
and private, the file is not a symlink, is not swapped while loaded and is a whole ELF file."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from compile_engine_compat.library_files import (
    UnsafeLibraryError,
    check_private_folder,
    check_whole_library,
    open_private_file,
    private_library,
)

#: Another user's uid: files are given to it with os.chown, which only root may do.
OTHER_UID = 4242
AS_ROOT = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0,
    reason="giving a file to another uid (os.chown) needs root",
)


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> Path:
    """A small real shared library (built with cc)."""
    if shutil.which("cc") is None:
        pytest.skip("builds a library with the C compiler, cc")
    folder = tmp_path_factory.mktemp("built")
    (folder / "lib.c").write_text("int answer(void) { return 42; }\n")
    subprocess.run(
        ["cc", "-shared", "-fPIC", "-o", str(folder / "lib.so"), str(folder / "lib.c")], check=True
    )
    return folder / "lib.so"


@pytest.fixture
def private(tmp_path, library) -> Path:
    """A copy of :func:`library` in a private folder of the current user's."""
    folder = tmp_path / "private"
    folder.mkdir(mode=0o700)
    shutil.copyfile(library, folder / "lib.so")
    return folder / "lib.so"


def test_a_private_library_is_accepted(private) -> None:
    with private_library(private) as path:
        assert path == str(private)
    check_whole_library(private)


@AS_ROOT
def test_another_users_folder_is_refused(private) -> None:
    os.chown(private.parent, OTHER_UID, OTHER_UID)
    with pytest.raises(UnsafeLibraryError, match=f"belongs to uid {OTHER_UID}, not to the current"):
        check_private_folder(private.parent)


@AS_ROOT
def test_another_users_file_is_refused(private) -> None:
    os.chown(private, OTHER_UID, OTHER_UID)
    with pytest.raises(UnsafeLibraryError, match=f"belongs to uid {OTHER_UID}"):
        with private_library(private):
            pytest.fail("loaded")


@pytest.mark.parametrize("mode", [0o770, 0o707])
def test_a_folder_others_may_write_is_refused(private, mode: int) -> None:
    private.parent.chmod(mode)
    with pytest.raises(UnsafeLibraryError, match=f"writable by group or others \\(mode {mode:o}"):
        with private_library(private):
            pytest.fail("loaded")


@pytest.mark.parametrize("mode", [0o664, 0o646])
def test_a_file_others_may_write_is_refused(private, mode: int) -> None:
    private.chmod(mode)
    with pytest.raises(UnsafeLibraryError, match="chmod go-w"):
        open_private_file(private)


def test_a_symlink_is_refused_even_to_a_private_file(private) -> None:
    link = private.with_name("link.so")
    link.symlink_to(private)
    with pytest.raises(UnsafeLibraryError, match="is a symlink"):
        with private_library(link):
            pytest.fail("loaded")


def test_a_folder_that_is_a_file_is_refused(private) -> None:
    with pytest.raises(UnsafeLibraryError, match="is not a directory"):
        check_private_folder(private)


def test_a_file_swapped_while_it_is_loaded_is_reported(private, library) -> None:
    with pytest.raises(UnsafeLibraryError, match="was replaced while it was loaded"):
        with private_library(private):
            staged = private.with_name("new.so")
            shutil.copyfile(library, staged)
            os.replace(staged, private)


@pytest.mark.parametrize("keep", [0.5, 0.9, 0.999])
def test_a_truncated_library_is_refused_before_it_is_mapped(private, keep: float) -> None:
    data = private.read_bytes()
    private.write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(UnsafeLibraryError, match="not a whole shared library"):
        check_whole_library(private)
    with pytest.raises(UnsafeLibraryError, match="not a whole shared library"):
        with private_library(private):
            pytest.fail("loaded")


def test_a_cut_elf_header_is_refused(private) -> None:
    private.write_bytes(private.read_bytes()[:20])
    with pytest.raises(UnsafeLibraryError, match="ELF header is cut"):
        check_whole_library(private)


def test_a_file_that_is_not_elf_is_left_to_the_loader(tmp_path) -> None:
    text = tmp_path / "notes.so"
    text.write_text("not a library")
    check_whole_library(text)  # the loader refuses it with an error of its own
