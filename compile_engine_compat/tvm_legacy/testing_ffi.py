"""The FFI and process-pool helpers of TVM 0.19's ``tvm.testing`` (served by ``install()``).

TVM 0.19's tests of the FFI and of ``PopenPool`` called these: C++ test functions
(``nop``, ``echo``, ``run_check_signal``, ...) and the small workers ``popen_pool.py`` gave a
pool. The C++ ones TVM 0.27 still registers are its own (``testing.nop``, ``testing.echo``,
``testing.run_check_signal``); ``identity_cpp`` still crosses into C++ and back (TVM 0.27's
``testing.apply`` calls the Python function); the callback makers, ``device_test`` and
``timeout_job`` are written here in Python, as TVM 0.27 no longer registers them (``timeout_job``
sleeps in Python, where TVM 0.19 slept inside a C++ call: a pool's timeout ends it the same way).
``relay``, ``graph_executor``, ``codegen`` and ``TVMError`` are the modules and class TVM 0.19's
``tvm.testing`` imported, as the shim serves them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import tvm
import tvm_ffi
from tvm.target import codegen

from compile_engine_compat import relay
from compile_engine_compat.tvm_legacy import graph_executor
from compile_engine_compat.tvm_legacy.ffi.base import TVMError

__all__ = [
    "TVMError",
    "after_initializer",
    "call_cpp_ffi",
    "call_cpp_py_ffi",
    "call_py_ffi",
    "codegen",
    "device_test",
    "fast_summation",
    "generate_ref_data",
    "graph_executor",
    "identity_cpp",
    "initializer",
    "nop",
    "register_ffi",
    "relay",
    "run_check_signal",
    "slow_summation",
    "test_check_eq_callback",
    "test_raise_error_callback",
    "test_wrap_callback",
    "timeout_job",
]

_IDENTITY_PY = "testing.identity_py"
_NESTED_IDENTITY_PY = "testing.nested_identity_py"


def nop(*args: Any) -> None:
    """TVM's ``testing.nop``: takes anything, does nothing (the FFI's call overhead)."""
    tvm_ffi.get_global_func("testing.nop")(*args)


def run_check_signal(nsec: int) -> None:
    """TVM's ``testing.run_check_signal``: a C++ loop of ``nsec`` seconds that checks for
    signals (a ``KeyboardInterrupt`` reaches Python)."""
    tvm_ffi.get_global_func("testing.run_check_signal")(nsec)


def _identity_py(arg: Any) -> Any:
    return arg


def identity_cpp(arg: Any) -> Any:
    """``arg`` through C++ and back: TVM's ``testing.apply`` calls the Python
    ``testing.identity_py`` function with it."""
    if tvm_ffi.get_global_func(_IDENTITY_PY, allow_missing=True) is None:
        tvm_ffi.register_global_func(_IDENTITY_PY, _identity_py, override=True)
    return tvm_ffi.get_global_func("testing.apply")(tvm_ffi.get_global_func(_IDENTITY_PY), arg)


def test_wrap_callback(callback: Callable[..., Any]) -> Any:
    """A packed function that calls ``callback`` (TVM 0.19's ``testing.test_wrap_callback``)."""
    return tvm_ffi.convert(lambda: callback())


def test_raise_error_callback(message: str) -> Any:
    """A packed function that raises ``TVMError(message)``."""

    def raise_error() -> None:
        raise TVMError(message)

    return tvm_ffi.convert(raise_error)


def test_check_eq_callback(message: str) -> Any:
    """A packed function ``(x, y)`` that raises ``ValueError(message)`` unless ``x == y``."""

    def check_eq(x: Any, y: Any) -> None:
        if x != y:
            raise ValueError(message)

    return tvm_ffi.convert(check_eq)


def device_test(dev: Any, dev_type: int, dev_id: int) -> Any:
    """``dev`` itself, after checking that its type and index are ``dev_type`` and ``dev_id``."""
    if int(dev.dlpack_device_type()) != int(dev_type) or int(dev.index) != int(dev_id):
        raise ValueError(f"device {dev} is not ({dev_type}, {dev_id})")
    return dev


# -- the workers of TVM 0.19's tests of PopenPool -------------------------------------------------
_state: tuple[Any, Any, Any] = (0, 0, 0)


def initializer(state_1: Any, state_2: Any, state_3: Any) -> None:
    """A pool worker's initializer: keep three values in the worker."""
    global _state
    _state = (state_1, state_2, state_3)


def after_initializer() -> tuple[Any, Any, Any]:
    """The three values :func:`initializer` kept in this worker."""
    return _state


def register_ffi() -> None:
    """Register the Python global function ``testing.nested_identity_py`` in this process."""
    tvm_ffi.register_global_func(_NESTED_IDENTITY_PY, _identity_py, override=True)


def call_py_ffi(arg: Any) -> Any:
    """``arg`` through the function :func:`register_ffi` registered."""
    return tvm_ffi.get_global_func(_NESTED_IDENTITY_PY)(arg)


def call_cpp_ffi(arg: Any) -> Any:
    """``arg`` through TVM's C++ ``testing.echo``."""
    return tvm_ffi.get_global_func("testing.echo")(arg)


def call_cpp_py_ffi(arg: Any) -> Any:
    """``arg`` through C++ into Python and back (:func:`identity_cpp`)."""
    return identity_cpp(arg)


def fast_summation(n: int) -> int:
    """``0 + 1 + ... + n``, in closed form."""
    return n * (n + 1) // 2


def slow_summation(n: int) -> int:
    """``0 + 1 + ... + n``, one addition at a time."""
    total = 0
    for i in range(n + 1):
        total += i
    return total


def timeout_job(n: float) -> None:
    """Sleep ``1.5 * n`` seconds (a job a pool's timeout ends)."""
    time.sleep(n * 1.5)


def generate_ref_data(
    mod: Any, input_data: dict[str, Any], params: dict[str, Any] | None = None, target: str = "llvm"
) -> dict[str, Any]:
    """Run ``mod`` with ``relay.build`` and the graph executor, as TVM 0.19's reference runs did.

    Returns
    -------
    dict of str to numpy.ndarray
        The outputs, named by ``main``'s ``output_tensor_names`` attribute, else ``"output"``
        (one) or ``"output0"``, ``"output1"``, ...
    """
    with tvm.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target=target, params=params)
    runner = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    runner.set_input(**input_data)
    runner.run()
    count = runner.get_num_outputs()
    outputs = [runner.get_output(i).numpy() for i in range(count)]
    main = mod if isinstance(mod, relay.Function) else mod["main"]
    attrs = getattr(main, "attrs", None)
    if attrs is not None and "output_tensor_names" in attrs:
        names = [str(n) for n in attrs["output_tensor_names"]]
    else:
        names = ["output"] if count == 1 else [f"output{i}" for i in range(count)]
    return dict(zip(names, outputs, strict=True))
