"""The TVM <=0.19 names of ``tvm.target``, served by ``install()`` on ``tvm.target`` (see
:mod:`compile_engine_compat.surfaces.moved_names`):

* ``generic_func`` and ``override_native_generic_func``;
* ``Target("llvm -mcpu=skylake-avx512")``: while installed, ``Target.__init__`` is
  :func:`legacy_target_init`, which gives TVM the dict form of a command-line string
  (:func:`compile_engine_compat.targets.legacy_target_value`), so programs that build their own
  ``Target`` (PyTorch's old Dynamo TVM backend) run;
* the constructor functions of TVM 0.19 (``cuda``, ``rocm``, ``mali``, ``intel_graphics``,
  ``arm_cpu``, ``rasp``, ``bifrost``, ``create``), which build the same targets.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import tvm

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.targets import legacy_target_value, translate

__all__ = [
    "TVM_TARGET_INIT",
    "GenericFunc",
    "adreno",
    "arm_cpu",
    "bifrost",
    "create",
    "cuda",
    "generic_func",
    "get_native_generic_func",
    "intel_graphics",
    "legacy_target_init",
    "mali",
    "max_function_args",
    "override_native_generic_func",
    "rasp",
    "riscv_cpu",
    "rocm",
    "stm32",
]


class GenericFunc:
    """``tvm.target.generic_func``: dispatches on the current target's keys."""

    def __init__(self, default: Callable[..., Any], name: str | None = None) -> None:
        self.default = default
        self.name = name or default.__name__
        self._dispatch: dict[str, Callable[..., Any]] = {}
        self.__doc__ = default.__doc__

    def register(self, key: str | list[str], override: bool = False) -> Callable[..., Any]:
        """``@f.register(["cpu"])``: the implementation for targets with those keys."""
        keys = [key] if isinstance(key, str) else list(key)

        def add(func: Callable[..., Any]) -> Callable[..., Any]:
            for k in keys:
                if k in self._dispatch and not override:
                    raise ValueError(f"key {k!r} is already registered for {self.name}")
                self._dispatch[k] = func
            return func

        return add

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        target = tvm.target.Target.current(allow_none=True)
        for key in list(target.keys) if target is not None else []:
            if str(key) in self._dispatch:
                return self._dispatch[str(key)](*args, **kwargs)
        return self.default(*args, **kwargs)


def generic_func(fdefault: Callable[..., Any]) -> GenericFunc:
    """``@tvm.target.generic_func``."""
    return GenericFunc(fdefault)


#: The named generic functions (TVM 0.19 kept them in C++; a Python registry here).
_NATIVE: dict[str, GenericFunc] = {}


def get_native_generic_func(name: str) -> GenericFunc:
    """``tvm.target.get_native_generic_func(name)``: the generic function of that name (made
    the first time, with no default: a call no registered target key matches raises)."""
    found = _NATIVE.get(name)
    if found is None:

        def no_default(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError(
                f"generic function {name} has no default, and nothing is registered for the "
                f"current target ({tvm.target.Target.current(allow_none=True)})"
            )

        found = _NATIVE.setdefault(name, GenericFunc(no_default, name))
    return found


def override_native_generic_func(func_name: str) -> Callable[[Callable[..., Any]], GenericFunc]:
    """``@tvm.target.override_native_generic_func(name)``: the named generic function, with
    the decorated function as its default."""

    def override(fdefault: Callable[..., Any]) -> GenericFunc:
        func = get_native_generic_func(func_name)
        func.default = fdefault
        func.__doc__ = fdefault.__doc__
        return func

    return override


# -- Target construction (Relay programs end to end) --------------------------------------------
#: TVM's own ``Target.__init__``, which :func:`legacy_target_init` calls (taken before any patch:
#: install() imports this module before it sets the patch).
TVM_TARGET_INIT = tvm.target.Target.__init__


def legacy_target_init(self: Any, target: Any, host: Any = None) -> None:
    """``tvm.target.Target(target, host=None)`` accepting TVM <=0.19's command-line strings."""
    host = legacy_target_value(host) if host is not None else None
    TVM_TARGET_INIT(self, legacy_target_value(target), host)


def _max_function_args(self: Any) -> int:
    """``Target.max_function_args``: the kind's limit on kernel arguments, 0 for none (TVM
    0.19's property; TVM 0.27 answers only for kinds that set it, such as opencl and metal)."""
    return int(self.attrs.get("max_function_args", 0))


#: Served as ``tvm.target.Target.max_function_args`` (``relay.transform.SplitArgs`` reads it).
max_function_args = property(_max_function_args)


def _options(base: list[str], extra: str | Sequence[str] | None) -> list[str]:
    """``base`` then the ``extra`` options (a string or a list) not already in it."""
    more = extra.split() if isinstance(extra, str) else list(extra or [])
    return base + [option for option in more if option not in base]


def _build(kind: str, options: list[str]) -> tvm.target.Target:
    # The constructor's own row warned; the string it builds is the shim's, so no second warning.
    text = " ".join([kind, *options])
    return tvm.target.Target(translate(text) or text)


@legacy_api("target.constructors")
def cuda(
    model: str = "unknown", arch: str | None = None, options: str | Sequence[str] | None = None
) -> tvm.target.Target:
    """``tvm.target.cuda(model, arch, options)``: a CUDA target (warns without an arch)."""
    opts = _options([f"-model={model}"], options)
    if arch:
        opts = _options([f"-arch={arch}"], opts)
    if not any(option.startswith("-arch") for option in opts):
        warnings.warn(
            "Try specifying cuda arch by adding 'arch=sm_xx' to your target.", stacklevel=2
        )
    return _build("cuda", opts)


@legacy_api("target.constructors")
def rocm(model: str = "unknown", options: str | Sequence[str] | None = None) -> tvm.target.Target:
    """``tvm.target.rocm(model, options)``."""
    return _build("rocm", _options([f"-model={model}"], options))


@legacy_api("target.constructors")
def mali(model: str = "unknown", options: str | Sequence[str] | None = None) -> tvm.target.Target:
    """``tvm.target.mali(model, options)``: OpenCL on an ARM Mali GPU."""
    return _build("opencl", _options(["-device=mali", f"-model={model}"], options))


@legacy_api("target.constructors")
def intel_graphics(
    model: str = "unknown", options: str | Sequence[str] | None = None
) -> tvm.target.Target:
    """``tvm.target.intel_graphics(model, options)``: OpenCL, warp size 16."""
    base = ["-device=intel_graphics", f"-model={model}", "-thread_warp_size=16"]
    return _build("opencl", _options(base, options))


@legacy_api("target.constructors")
def adreno(model: str = "unknown", options: str | Sequence[str] | None = None) -> tvm.target.Target:
    """``tvm.target.adreno(model, options)``: OpenCL on a Qualcomm Adreno GPU."""
    return _build("opencl", _options(["-device=adreno", f"-model={model}"], options))


@legacy_api("target.constructors")
def bifrost(
    model: str = "unknown", options: str | Sequence[str] | None = None
) -> tvm.target.Target:
    """``tvm.target.bifrost(model, options)``: OpenCL on a Mali Bifrost GPU."""
    return _build("opencl", _options(["-device=bifrost", f"-model={model}"], options))


#: The boards ``arm_cpu(model)`` knew: model -> (SoC, triple, attributes, cpu or "").
_ARM_BOARDS: dict[str, tuple[str, str, str, str]] = {
    "pixel2": ("snapdragon835", "arm64-linux-android", "+neon", ""),
    "mate10": ("kirin970", "arm64-linux-android", "+neon", ""),
    "mate10pro": ("kirin970", "arm64-linux-android", "+neon", ""),
    "p20": ("kirin970", "arm64-linux-android", "+neon", ""),
    "p20pro": ("kirin970", "arm64-linux-android", "+neon", ""),
    "rasp3b": ("bcm2837", "armv7l-linux-gnueabihf", "+neon", ""),
    "rasp4b": ("bcm2711", "armv8l-linux-gnueabihf", "+neon", "cortex-a72"),
    "rasp4b64": ("bcm2711", "aarch64-linux-gnu", "+neon", "cortex-a72"),
    "rk3399": ("rk3399", "aarch64-linux-gnu", "+neon", ""),
    "pynq": ("pynq", "armv7a-linux-eabi", "+neon", ""),
    "ultra96": ("ultra96", "aarch64-linux-gnu", "+neon", ""),
    "beagleai": ("beagleai", "armv7a-linux-gnueabihf", "+neon,+vfp4,+thumb2", "cortex-a15"),
    "stm32mp1": ("stm32mp1", "armv7a-linux-gnueabihf", "+neon,+vfp4,+thumb2", "cortex-a7"),
    "thunderx": ("thunderx", "aarch64-linux-gnu", "+neon,+crc,+lse", "thunderxt88"),
}


@legacy_api("target.constructors")
def arm_cpu(
    model: str = "unknown", options: str | Sequence[str] | None = None
) -> tvm.target.Target:
    """``tvm.target.arm_cpu(model, options)``: LLVM for a known board, or ``-model=<model>``.

    TVM 0.19 also downloaded pre-tuned AutoTVM parameters here; there are none to fetch now.
    """
    board = _ARM_BOARDS.get(model)
    if board is None:
        known = [f"-model={model}"]
    else:
        soc, triple, attrs, cpu = board
        known = [f"-model={soc}", f"-mtriple={triple}", f"-mattr={attrs}"]
        known += [f"-mcpu={cpu}"] if cpu else []
    return _build("llvm", _options(["-keys=arm_cpu,cpu", "-device=arm_cpu", *known], options))


#: The RISC-V cores ``riscv_cpu(model)`` knew: model -> (triple, ABI); the cpu is the model.
_RISCV_CORES: dict[str, tuple[str, str]] = {
    "sifive-e31": ("riscv32-unknown-linux-gnu", "ilp32"),
    "sifive-e76": ("riscv32-unknown-linux-gnu", "ilp32"),
    "sifive-u54": ("riscv64-unknown-linux-gnu", "lp64d"),
    "sifive-u74": ("riscv64-unknown-linux-gnu", "lp64d"),
}


@legacy_api("target.constructors")
def riscv_cpu(
    model: str = "sifive-u54", options: str | Sequence[str] | None = None
) -> tvm.target.Target:
    """``tvm.target.riscv_cpu(model, options)``: LLVM for a SiFive core (TVM 0.19 gave these the
    ``arm_cpu`` keys, and so does this)."""
    core = _RISCV_CORES.get(model)
    known = [f"-model={model}"]
    if core is not None:
        known += [f"-mtriple={core[0]}", f"-mcpu={model}", f"-mabi={core[1]}"]
    return _build("llvm", _options(["-keys=arm_cpu,cpu", "-device=arm_cpu", *known], options))


@legacy_api("target.constructors")
def rasp(options: str | Sequence[str] | None = None) -> tvm.target.Target:
    """``tvm.target.rasp()``: ``arm_cpu("rasp3b")`` (TVM 0.19 already warned it would go)."""
    warnings.warn(
        'tvm.target.rasp() is deprecated: use tvm.target.arm_cpu("rasp3b")',
        DeprecationWarning,
        stacklevel=2,
    )
    return arm_cpu("rasp3b", options)


#: The STM32 series ``stm32(series)`` knew -> the Cortex-M core of the series.
_STM32_CORES: dict[str, str] = {
    "stm32H7xx": "cortex-m7",
    "stm32F7xx": "cortex-m7",
    "stm32F4xx": "cortex-m4",
    "stm32F2xx": "cortex-m3",
    "stm32G0xx": "cortex-m0+",
    "stm32F0xx": "cortex-m0",
    "stm32F1xx": "cortex-m3",
    "stm32G4xx": "cortex-m4",
    "stm32F3xx": "cortex-m4",
    "stm32U5xx": "cortex-m33",
    "stm32L5xx": "cortex-m33",
    "stm32L4xx": "cortex-m4",
    "stm32L1xx": "cortex-m3",
    "stm32L0xx": "cortex-m0+",
}


@legacy_api("target.constructors")
def stm32(series: str = "unknown", options: str | Sequence[str] | None = None) -> tvm.target.Target:
    """``tvm.target.stm32(series, options)``: C for the series' Cortex-M core (H7 also gives
    ``-march=armv7e-m``); a ValueError for a series TVM 0.19 did not know."""
    core = _STM32_CORES.get(series)
    if core is None:
        raise ValueError(f"Series {series} is not supported by tvm.target.stm32.")
    known = ["-keys=arm_cpu,cpu", "-device=arm_cpu", f"-mcpu={core}"]
    known += ["-march=armv7e-m"] if series == "stm32H7xx" else []
    return _build("c", _options(known, options))


@legacy_api("target.constructors")
def create(target: Any) -> tvm.target.Target:
    """``tvm.target.create(target)`` (before TVM 0.8): ``tvm.target.Target(target)``."""
    return tvm.target.Target(legacy_target_value(target))
