"""TVM <=0.19 names around Relay that ``install()`` serves on modern TVM.

Modules (found through the import alias): ``tvm.autotvm``, ``tvm.nd``,
``tvm.contrib.graph_executor`` and ``tvm.tir`` (TVM 0.27's ``tvm.tirx``). Attributes, set by
:func:`patch` and removed by :func:`unpatch`: ``tvm.context`` (now ``tvm.device``),
``tvm.target.generic_func``/``override_native_generic_func``, ``tvm.te.SpecializedCondition``,
``tvm.runtime.Tensor.asnumpy``, and ``tvm.device`` taking target names (``"llvm"``).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

import tvm

from compile_engine_compat.boundary import patch_attribute, restore_attribute
from compile_engine_compat.deprecations import legacy_api, warn_legacy

from ..op.op import SpecializedCondition

__all__ = ["GenericFunc", "context", "device", "generic_func", "patch", "unpatch"]


#: Target names TVM 0.19's ``tvm.device``/``tvm.context`` took as device names.
_TARGET_DEVICES = {"llvm": "cpu", "c": "cpu", "stackvm": "cpu", "nvptx": "cuda"}
_device = tvm.device


def device(dev_type: Any, dev_id: int = 0) -> Any:
    """``tvm.device`` that also takes the target names TVM 0.19 did (``"llvm"`` -> cpu)."""
    if isinstance(dev_type, str) and dev_type.split()[0] in _TARGET_DEVICES:
        warn_legacy("tvm.context")
        dev_type = _TARGET_DEVICES[dev_type.split()[0]]
    return _device(dev_type, dev_id)


@legacy_api("tvm.nd")
def _asnumpy(self: Any) -> Any:
    """``Tensor.asnumpy()``: TVM <=0.19's name of ``numpy()``."""
    return self.numpy()


@legacy_api("tvm.context")
def context(dev_type: Any, dev_id: int = 0) -> Any:
    """``tvm.context`` (renamed ``tvm.device`` in TVM 0.8)."""
    if isinstance(dev_type, str) and dev_type.split()[0] in _TARGET_DEVICES:
        dev_type = _TARGET_DEVICES[dev_type.split()[0]]
    return _device(dev_type, dev_id)


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


def override_native_generic_func(func_name: str) -> Callable[[Callable[..., Any]], GenericFunc]:
    """``@tvm.target.override_native_generic_func(name)`` (no native registry: a Python one)."""
    return lambda fdefault: GenericFunc(fdefault, func_name)


_ATTRIBUTES: list[tuple[str, str, Any]] = [
    ("tvm", "context", context),
    ("tvm.target", "generic_func", generic_func),
    ("tvm.target", "override_native_generic_func", override_native_generic_func),
    ("tvm.te", "SpecializedCondition", SpecializedCondition),
]


def patch(modules: Mapping[str, str]) -> None:
    """Set the legacy attributes (never replacing one TVM has, but ``tvm.device``), and each
    legacy module of ``modules`` (legacy path -> the module serving it) on its parent."""
    if tvm.device is _device:
        patch_attribute(tvm, "device", device)
    if not hasattr(tvm.runtime.Tensor, "asnumpy"):
        patch_attribute(tvm.runtime.Tensor, "asnumpy", _asnumpy)
    for module_name, attr, value in _ATTRIBUTES:
        module = importlib.import_module(module_name)
        if not hasattr(module, attr):
            patch_attribute(module, attr, value)
    for legacy in modules:
        parent, _, child = legacy.rpartition(".")
        module = importlib.import_module(parent)
        if not hasattr(module, child):
            served = importlib.import_module(legacy)  # the import system sets module.child
            if module.__dict__.get(child) is not served:
                patch_attribute(module, child, served)


def unpatch(modules: Mapping[str, str]) -> None:
    """Remove what :func:`patch` set and the legacy modules of ``modules`` it imported."""
    if tvm.device is device:
        restore_attribute(tvm, "device")
    if tvm.runtime.Tensor.__dict__.get("asnumpy") is _asnumpy:
        restore_attribute(tvm.runtime.Tensor, "asnumpy")
    for module_name, attr, value in _ATTRIBUTES:
        module = sys.modules.get(module_name)
        if module is not None and module.__dict__.get(attr) is value:
            restore_attribute(module, attr)
    for legacy, name in modules.items():
        parent, _, child = legacy.rpartition(".")
        module = sys.modules.get(parent)
        served = sys.modules.get(name)
        if module is not None and served is not None and module.__dict__.get(child) is served:
            restore_attribute(module, child)
        if sys.modules.get(legacy) is served:
            sys.modules.pop(legacy, None)
