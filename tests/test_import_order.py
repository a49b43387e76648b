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


# -- each public entry module alone -------------------------------------------------------------

SUBSET_PROBE = """
import json, sys, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, {tests!r})
{entry}
import numpy as np
import tvm
from tvm import topi
from _builders import add3
from compile_engine_compat.api_table import CONFIG_KEYS, LEGACY_CONFIG_KEYS

def accepted(key, value):
    try:
        tvm.transform.PassContext(config={{key: value}})
    except Exception as err:
        return f"{{type(err).__name__}}: {{err}}"
    return True

VALUES = {{"bool": True, "int": 1, "ir.IntImm": 1, "ffi.Array": []}}
known = tvm.transform.PassContext.list_configs()
def value_for(key, new):
    if new is None:
        return True
    return VALUES.get(str(known[new]["type"]), {{}})

translated = {{key: new for key, (new, _) in LEGACY_CONFIG_KEYS.items()
               if new is not None or not key.startswith("tir.")}}
keys_before_use = {{key: accepted(key, value_for(key, new)) for key, new in translated.items()}}
keys_before_use.update({{key: accepted(key, True) for key in CONFIG_KEYS}})

# First use of the engine, the same call whatever the entry module was.
from compile_engine_compat.facade.engine import global_engine
from compile_engine_compat.pipeline import implementations
engine = global_engine()
keys_after_use = {{key: accepted(key, value_for(key, new)) for key, new in translated.items()}}
keys_after_use.update({{key: accepted(key, True) for key in CONFIG_KEYS}})

def run(n):
    # A shape per case: each lowering is new (the engine caches by function).
    kernel = engine.kernel_for(add3((n,)), "llvm")
    out = np.empty(n, "float32")
    kernel(np.full(n, 2.0, "float32"), out)
    return out.tolist()

impl = implementations.OpImplementation(
    "multiply_instead", lambda attrs, inputs, out_type: [topi.multiply(*inputs)], plevel=99
)
implementations.register_implementation("relax.add", impl)
with_strategy = run(4)
implementations.unregister_implementation("relax.add", impl)

calls = []
def override(call, inputs, target):
    calls.append(call.op.name)
    return [topi.subtract(*inputs)]
tvm.register_global_func("relay.backend.lower_call", override, override=True)
with_override = run(5)
print(json.dumps({{
    "keys_before_use": keys_before_use,
    "keys_after_use": keys_after_use,
    "strategy": with_strategy,
    "override": with_override,
    "override_calls": calls,
}}, sort_keys=True))
"""

#: Each public entry point a program may start from, as the line that imports it.
ENTRIES = {
    "compile_engine": "from compile_engine_compat import compile_engine",
    "te_compiler": "from compile_engine_compat import te_compiler",
    "relay": "from compile_engine_compat import relay",
    "testing": "from compile_engine_compat import testing; testing.OP_NAMES",
    "schedules": "from compile_engine_compat import schedules",
    "install": "import compile_engine_compat; compile_engine_compat.install()",
}


def _subset_probe(entry: str) -> dict[str, object]:
    script = SUBSET_PROBE.format(tests=str(TESTS), entry=ENTRIES[entry])
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_each_entry_module_alone_behaves_identically_after_first_use() -> None:
    probes = dict(zip(ENTRIES, _run_all(list(ENTRIES))))
    reference = probes["compile_engine"]
    for entry, probe in probes.items():
        for field in ("keys_after_use", "strategy", "override", "override_calls"):
            assert probe[field] == reference[field], (entry, field)
    keys = reference["keys_after_use"]
    assert isinstance(keys, dict) and keys and all(v is True for v in keys.values()), keys
    # add3 is x + x + x on 2.0: the strategy multiplies (8.0), the override subtracts (-2.0).
    assert reference["strategy"] == [8.0] * 4
    assert reference["override"] == [-2.0] * 5
    assert reference["override_calls"] == ["relax.add", "relax.add"]


def test_install_alone_and_the_legacy_modules_accept_every_translated_key_before_any_call():
    # install() and importing compile_engine/te_compiler are first uses: the keys MIGRATION.md
    # lists as translated work before the engine is ever called.
    for entry in ("install", "compile_engine", "te_compiler"):
        keys = _subset_probe(entry)["keys_before_use"]
        assert isinstance(keys, dict)
        assert {k: v for k, v in keys.items() if v is not True} == {}, entry


def _run_all(entries: list[str]) -> list[dict[str, object]]:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SUBSET_PROBE.format(tests=str(TESTS), entry=ENTRIES[e])],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for e in entries
    ]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-3000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results
