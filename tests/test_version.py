"""One version: the CLI's ``--version``, ``__version__``, pyproject.toml and the metadata agree."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest

import compile_engine_compat
from compile_engine_compat.version import __version__

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def test_the_cli_prints_the_packages_version():
    cli = subprocess.run(
        [sys.executable, "-m", "compile_engine_compat.cli", "--version"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    assert cli.stdout == f"compile-engine-compat {compile_engine_compat.__version__}\n"
    assert compile_engine_compat.__version__ == __version__


def test_pyproject_reads_the_version_from_the_package():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    dynamic = project["tool"]["setuptools"]["dynamic"]["version"]
    assert dynamic == {"attr": "compile_engine_compat.version.__version__"}


def test_the_installed_metadata_says_the_same_version():
    try:
        installed = version("compile-engine-compat")
    except PackageNotFoundError:  # pragma: no cover - a checkout on sys.path, not installed
        pytest.skip("compile-engine-compat is not installed")
    assert installed == __version__
