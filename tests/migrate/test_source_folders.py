"""The package a file lies in, with each folder resolved once per run (``read_source``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from compile_engine_compat.migrate.config import Configs
from compile_engine_compat.migrate.scan import run_scan
from compile_engine_compat.migrate.sources import forget_folders, read_source


def _package(root: Path, *parts: str) -> Path:
    """``root/parts...`` as a package (an ``__init__.py`` in each folder); returns its folder."""
    folder = root
    for part in parts:
        folder = folder / part
        folder.mkdir()
        (folder / "__init__.py").write_text("")
    return folder


def test_a_file_reached_through_a_symlinked_folder_has_its_real_package(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    real = _package(tmp_path / "real", "proj", "sub")
    (real / "mod.py").write_text("x = 1\n")
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    forget_folders()
    through_link = read_source(tmp_path / "link" / "mod.py", "mod.py")
    assert through_link.package == read_source(real / "mod.py", "mod.py").package == "proj.sub"


def test_a_symlinked_file_takes_the_package_of_its_target(tmp_path: Path) -> None:
    target = _package(tmp_path, "pkg")
    (target / "mod.py").write_text("x = 1\n")
    (tmp_path / "alias.py").symlink_to(target / "mod.py")
    forget_folders()
    assert read_source(tmp_path / "alias.py", "alias.py").package == "pkg"


def test_dot_dot_after_a_symlink_is_resolved_after_the_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # link -> deep/inner: ``link/..`` is ``deep`` (a package), not ``tmp_path`` (lexically).
    deep = _package(tmp_path, "deep")
    (deep / "inner").mkdir()
    (deep / "mod.py").write_text("x = 1\n")
    (tmp_path / "link").symlink_to(deep / "inner", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    forget_folders()
    assert read_source(Path("link/../mod.py"), "mod.py").package == "deep"


def test_a_run_sees_a_tree_changed_since_the_last(tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "mod.py").write_text("x = 1\n")
    _package(tmp_path / "b", "pkg")  # b/pkg: a package; a/: none
    os.replace(tmp_path / "b" / "mod.py", tmp_path / "b" / "pkg" / "mod.py")
    (tmp_path / "a" / "pkg").mkdir()
    os.replace(tmp_path / "a" / "mod.py", tmp_path / "a" / "pkg" / "mod.py")
    link = tmp_path / "current"
    link.symlink_to(tmp_path / "a", target_is_directory=True)
    forget_folders()
    assert read_source(link / "pkg" / "mod.py", "mod.py").package is None
    link.unlink()
    link.symlink_to(tmp_path / "b", target_is_directory=True)
    forget_folders()  # as run_scan and plan_paths do first
    assert read_source(link / "pkg" / "mod.py", "mod.py").package == "pkg"


def test_a_scan_sees_init_files_added_since_the_last_scan(tmp_path: Path) -> None:
    # TVM's own definition of the API is not reported; without the __init__.py files that make
    # it ``tvm.relay.backend.compile_engine``, it is code like any other.
    backend = tmp_path / "tvm" / "relay" / "backend"
    backend.mkdir(parents=True)
    (backend / "compile_engine.py").write_text(
        "import tvm.relay.backend.compile_engine as ce\nce.get()\n"
    )
    assert run_scan([str(tmp_path)], Configs(isolated=True)).findings
    for folder in (tmp_path / "tvm", tmp_path / "tvm" / "relay", backend):
        (folder / "__init__.py").write_text("")
    assert not run_scan([str(tmp_path)], Configs(isolated=True)).findings
