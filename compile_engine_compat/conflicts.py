"""Wheels that cannot share a process with apache-tvm, detected before TVM is imported.

``apache-tvm-tirx`` (top-level package ``tvm_tirx``) ships its own ``libtvm_runtime.so`` and
registers the same FFI globals and type keys as ``apache-tvm`` 0.27 (``device_api.cpu``,
``ir.Expr``, ...). With both loaded, the second registration throws from a C++ static
initializer and the interpreter aborts (``terminate called after throwing an instance of
'tvm::ffi::Error' ... Global Function `device_api.cpu` is already registered``), in either import
order: no traceback, no ``except`` can catch it. So the package checks at import, before anything
imports ``tvm``, and raises :class:`TvmTirxConflictError` instead.

The check is cheap: a ``sys.modules`` lookup and one :func:`importlib.util.find_spec`, which
locates ``tvm_tirx`` without importing it (importing it is what would load its runtime).

Off switch: ``COMPILE_ENGINE_COMPAT_TVM_TIRX_CHECK=off``. It is for an environment that holds
both wheels but never imports both in one process (the pytest plugin, ``scan``/``fix`` and
``docs`` do not import TVM). With the check off, importing ``tvm`` and ``tvm_tirx`` together
still aborts the interpreter.
"""

from __future__ import annotations

import importlib.util
import os
import sys

__all__ = [
    "OFF_ENV",
    "TVM_EXTRA",
    "TvmMissingError",
    "TvmTirxConflictError",
    "check_tvm_tirx_conflict",
    "require_tvm",
]

OFF_ENV = "COMPILE_ENGINE_COMPAT_TVM_TIRX_CHECK"

#: The extra that installs the shim's runtime (apache-tvm, apache-tvm-ffi, numpy).
TVM_EXTRA = "tvm"

# The top-level package of the apache-tvm-tirx wheel (0.1.0a3, 0.1.0a4, 0.1.0).
_TIRX_PACKAGE = "tvm_tirx"


class TvmTirxConflictError(ImportError):
    """``apache-tvm-tirx`` is installed or imported next to ``apache-tvm``.

    The two wheels register the same TVM FFI globals, so loading both aborts the interpreter.
    Raised by ``import compile_engine_compat`` (and by the lazy TVM-backed names if ``tvm_tirx``
    was imported afterwards) so that the conflict surfaces as an exception, not an abort.
    """


def _check_disabled() -> bool:
    """Whether ``COMPILE_ENGINE_COMPAT_TVM_TIRX_CHECK=off`` turns the check off."""
    return os.environ.get(OFF_ENV, "").strip().lower() == "off"


def _installed_origin() -> str | None:
    """Where ``tvm_tirx`` would be imported from, or ``None`` if it is not importable.

    Returns
    -------
    str or None
        The file ``tvm_tirx`` would load (its ``__init__.py``). ``None`` when there is no such
        package, or only a namespace package (a bare directory named ``tvm_tirx``, e.g. a
        source checkout's folder in the working directory: it loads no TVM runtime).
    """
    try:
        # find_spec on a top-level name runs the path finders only: nothing is imported.
        spec = importlib.util.find_spec(_TIRX_PACKAGE)
    except (ImportError, ValueError):
        # A broken finder or a module whose __spec__ is None: not evidence of the wheel.
        return None
    if spec is None or spec.origin in (None, "namespace"):
        return None
    return spec.origin


def _message(origin: str, *, imported: bool) -> str:
    """The error text: the conflict, the two wheels, and the fix."""
    where = "is already imported in this process" if imported else "is installed"
    lines = [
        f"compile-engine-compat cannot run here: apache-tvm-tirx (package 'tvm_tirx', {origin}) "
        f"{where} next to apache-tvm (package 'tvm'), which compile-engine-compat needs.",
        "The two wheels register the same TVM FFI globals, so importing both in one process aborts "
        'the interpreter ("Global Function `device_api.cpu` is already registered").',
        "Fix: uninstall one of them (`pip uninstall apache-tvm-tirx`), or install "
        "apache-tvm-tirx and compile-engine-compat in separate virtual environments.",
    ]
    if not imported:
        lines.append(
            f"If this process never imports tvm_tirx, set {OFF_ENV}=off to skip this check."
        )
    return "\n".join(lines)


def check_tvm_tirx_conflict(*, installed: bool = True) -> None:
    """Raise if ``tvm_tirx`` is imported, or (``installed=True``) merely importable.

    Parameters
    ----------
    installed
        Also look for an importable ``tvm_tirx`` (one ``find_spec``), not only an imported one.
        The package import does; the lazy TVM-backed names only check ``sys.modules``, since
        the installed case was already checked when the package was imported.

    Raises
    ------
    TvmTirxConflictError
        ``tvm_tirx`` is in ``sys.modules``, or is importable and ``installed`` is true; unless
        ``COMPILE_ENGINE_COMPAT_TVM_TIRX_CHECK=off``.
    """
    if _check_disabled():
        return
    # ``sys.modules[name] = None`` is Python's "import blocked" marker: not imported.
    module = sys.modules.get(_TIRX_PACKAGE)
    if module is not None:
        origin = getattr(module, "__file__", None) or "origin unknown"
        raise TvmTirxConflictError(_message(origin, imported=True))
    if installed and _TIRX_PACKAGE not in sys.modules:
        origin = _installed_origin()
        if origin is not None:
            raise TvmTirxConflictError(_message(origin, imported=False), path=origin)


class TvmMissingError(ModuleNotFoundError):
    """The shim's runtime is used without apache-tvm installed (the base install is the tooling).

    A ``ModuleNotFoundError`` (so an ``ImportError``) whose message names the extra to install.
    """


def require_tvm(what: str) -> None:
    """Raise :class:`TvmMissingError` naming the ``[tvm]`` extra when apache-tvm is missing.

    The base install holds what ``scan``, ``fix``, ``docs`` and the pre-commit hooks need; the
    engine, the Relay front end and the equivalence tooling need TVM. Costs one
    :func:`importlib.util.find_spec` (nothing when ``tvm`` is imported already).

    Parameters
    ----------
    what : str
        What needs TVM, for the message (``"compile_engine_compat.compile_engine"``).
    """
    if sys.modules.get("tvm") is not None:
        return
    try:
        if importlib.util.find_spec("tvm") is not None:
            return
    except (ImportError, ValueError):  # a finder refused it, or a broken entry in sys.modules
        pass
    raise TvmMissingError(
        f"{what} needs apache-tvm, which is not installed: pip install "
        f"'compile-engine-compat[{TVM_EXTRA}]' (the base install has the migration tooling "
        "only: scan, fix, docs, the pytest report)",
        name="tvm",
    )
