"""Import order never changes behaviour (issue 14): wiring happens on first use, not by accident.

Each order runs in a fresh interpreter (a module is imported only once per process): every module
of the package is imported in that order, then one probe reads what the wiring decides -- the
registered globals and config keys, the import alias, shadow mode's hook, where a warning points,
the kernel name and the result of a lowering. Every order must print the same probe.
"""

from __future__ import annotations

import json
import pkgutil
import random
import subprocess
import sys
from pathlib import Path

import compile_engine_compat

TESTS = Path(__file__).resolve().parent
PROBE = """
import json, sys, warnings
sys.path.insert(0, {tests!r})
import importlib
for name in {order!r}:
    importlib.import_module(name)
import numpy as np
import tvm
from _builders import add3
import compile_engine_compat
from compile_engine_compat import CompileEngineDeprecationWarning, compile_engine
from compile_engine_compat.facade import engine as facade
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    engine = compile_engine.get()
    kernel = engine.jit(add3((4,)), "llvm")
    cached = engine.lower(add3((4,)), "llvm")
out = np.empty(4, "float32")
kernel(np.ones(4, "float32"), out)
legacy = [w for w in caught if issubclass(w.category, CompileEngineDeprecationWarning)]
def accepts_legacy_key():
    try:
        tvm.ir.transform.PassContext(config={{"relay.backend.use_auto_scheduler": True}})
    except Exception:
        return False
    return True
print(json.dumps({{
    "globals": [
        tvm.get_global_func(name, allow_missing=True) is not None
        for name in ("relay.backend._CompileEngineGlobal", "relay.backend._TECompilerGlobal")
    ],
    "config_key": accepts_legacy_key(),
    "alias_installed": compile_engine_compat.surfaces.import_alias.installed(),
    "tvm_has_relay": hasattr(tvm, "relay"),
    "kernel_hook": facade._kernel_hook is not None,
    "warnings_point_here": sorted({{w.filename for w in legacy}}) == ["<string>"],
    "kernel_name": cached.prim_fn_var.name_hint,
    "result": out.tolist(),
}}, sort_keys=True))
"""


def _modules() -> list[str]:
    names = [
        info.name
        for info in pkgutil.walk_packages(compile_engine_compat.__path__, "compile_engine_compat.")
    ]
    return sorted(name for name in names if not name.endswith(".__main__"))


def _orders() -> list[list[str]]:
    modules = _modules()
    shuffled = [random.Random(seed).sample(modules, len(modules)) for seed in (1, 2)]
    return [modules, modules[::-1], *shuffled]


def test_every_order_of_imports_gives_the_same_behaviour() -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", PROBE.format(tests=str(TESTS), order=order)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for order in _orders()
    ]
    probes = []
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err[-2000:]
        probes.append(json.loads(out.strip().splitlines()[-1]))
    assert all(probe == probes[0] for probe in probes), probes
    first = probes[0]
    assert first["globals"] == [True, True] and first["config_key"]
    assert not first["alias_installed"] and not first["tvm_has_relay"]
    assert not first["kernel_hook"] and first["warnings_point_here"]
    assert first["result"] == [3.0] * 4  # add3: x + x + x
