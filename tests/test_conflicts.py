"""apache-tvm-tirx next to apache-tvm: a clear ImportError at ``import compile_engine_compat``.

The real wheels abort the interpreter when both are imported (``.ci/run`` checks that step with
the real ``apache-tvm-tirx`` wheel). Here a stand-in ``tvm_tirx`` package on ``PYTHONPATH``
proves the detection, and, since the stand-in writes a marker and raises if it is ever
imported, that the check never imports it. Each case runs in a subprocess: the check runs at
package import, and the test process has imported the package already.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import compile_engine_compat
from compile_engine_compat import TvmTirxConflictError
from compile_engine_compat.conflicts import OFF_ENV

# The directory holding the package under test, so that the child imports this very copy.
_PACKAGE_ROOT = str(Path(compile_engine_compat.__file__).resolve().parent.parent)

_STAND_IN = """\
from pathlib import Path
Path({marker!r}).write_text("imported")
raise RuntimeError("the stand-in tvm_tirx was imported; the check must only locate it")
"""

# Fails the child (exit code 3) if tvm was imported before the check raised.
_IMPORT_PACKAGE = """\
import sys
try:
    import compile_engine_compat
except ImportError:
    if "tvm" in sys.modules:
        sys.exit(3)
    raise
print("imported")
"""


def _stand_in(tmp_path: Path, *, namespace: bool = False) -> tuple[Path, Path]:
    """Write a ``tvm_tirx`` package under ``tmp_path/site``; return (site, import marker)."""
    site = tmp_path / "site"
    marker = tmp_path / "tvm_tirx_was_imported"
    package = site / "tvm_tirx"
    package.mkdir(parents=True)
    if not namespace:
        (package / "__init__.py").write_text(_STAND_IN.format(marker=str(marker)))
    return site, marker


def _run(
    script: str, tmp_path: Path, *, site: Path | None = None, check: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``script`` in a fresh interpreter with ``site`` first on ``PYTHONPATH``."""
    paths = [str(site)] if site is not None else []
    paths += [_PACKAGE_ROOT, os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    env.pop(OFF_ENV, None)
    if check is not None:
        env[OFF_ENV] = check
    # cwd: an empty directory, so that '' on sys.path adds no other copy of the package.
    workdir = tmp_path / "cwd"
    workdir.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _assert_conflict_error(proc: subprocess.CompletedProcess[str], *, where: str) -> None:
    # Exit code 1: an uncaught exception. An abort would be -6 (SIGABRT) or 134.
    assert proc.returncode == 1, f"exit code {proc.returncode}:\n{proc.stderr[-3000:]}"
    last = proc.stderr.strip().splitlines()
    error = "\n".join(last[-4:])
    assert "compile_engine_compat.conflicts.TvmTirxConflictError: " in proc.stderr
    assert "apache-tvm-tirx (package 'tvm_tirx'" in error
    assert f"{where} next to apache-tvm (package 'tvm')" in error
    assert "Global Function `device_api.cpu` is already registered" in error
    assert "pip uninstall apache-tvm-tirx" in error
    assert "separate virtual environments" in error
    assert "terminate called" not in proc.stderr


def test_error_class_is_an_import_error() -> None:
    assert issubclass(TvmTirxConflictError, ImportError)


# Any value but "off" keeps the check on.
@pytest.mark.parametrize("check", [None, "", "on"])
def test_installed_tvm_tirx_raises_without_importing_it(tmp_path: Path, check: str | None) -> None:
    site, marker = _stand_in(tmp_path)
    proc = _run(_IMPORT_PACKAGE, tmp_path, site=site, check=check)
    _assert_conflict_error(proc, where="is installed")
    assert f"{OFF_ENV}=off" in proc.stderr
    assert not marker.exists(), "the check imported tvm_tirx"


def test_imported_tvm_tirx_raises(tmp_path: Path) -> None:
    script = (
        "import sys, types\n"
        "stand_in = types.ModuleType('tvm_tirx')\n"
        "stand_in.__file__ = '/somewhere/tvm_tirx/__init__.py'\n"
        "sys.modules['tvm_tirx'] = stand_in\n" + _IMPORT_PACKAGE
    )
    proc = _run(script, tmp_path)
    _assert_conflict_error(proc, where="is already imported in this process")
    assert "/somewhere/tvm_tirx/__init__.py" in proc.stderr


def test_tvm_tirx_imported_after_the_package_stops_the_lazy_names(tmp_path: Path) -> None:
    script = (
        "import sys, types\n"
        "import compile_engine_compat\n"
        "sys.modules['tvm_tirx'] = types.ModuleType('tvm_tirx')\n"
        "try:\n"
        "    compile_engine_compat.compile_engine\n"
        "except compile_engine_compat.TvmTirxConflictError as error:\n"
        "    assert 'tvm' not in sys.modules\n"
        "    print('refused:', str(error).splitlines()[0])\n"
    )
    proc = _run(script, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "refused: " in proc.stdout
    assert "is already imported in this process" in proc.stdout


def test_off_switch_skips_the_check(tmp_path: Path) -> None:
    site, marker = _stand_in(tmp_path)
    proc = _run(_IMPORT_PACKAGE, tmp_path, site=site, check="off")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "imported"
    assert not marker.exists()


def test_namespace_directory_is_not_the_wheel(tmp_path: Path) -> None:
    # A bare tvm_tirx/ directory (e.g. a source checkout's folder) loads no TVM runtime.
    site, _ = _stand_in(tmp_path, namespace=True)
    proc = _run(_IMPORT_PACKAGE, tmp_path, site=site)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "imported"
