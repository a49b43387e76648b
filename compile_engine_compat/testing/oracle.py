"""The equivalence oracle: ``engine.jit`` vs ``tvm.compile`` + ``relax.VirtualMachine`` vs NumPy.

Tolerances
----------
Integers and ``bool`` must be **bit-exact** on every comparison.

Floats are compared with ``|actual - expected| <= atol * scale + rtol * |expected|``, where
``scale = max(1, max |expected|)`` over the finite values, and NaN/inf must sit at the same
places (with the same sign for inf).

============  =====================  =====================
dtype         jit vs new path        either vs NumPy
============  =====================  =====================
float32       rtol 1e-5, atol 1e-5   rtol 1e-4, atol 1e-4
float16       rtol 4e-3, atol 4e-3   rtol 3e-2, atol 3e-2
============  =====================  =====================

NumPy does not judge an output that depends *discontinuously* on a rounded float intermediate
(a comparison, ``floor``, ``argmax`` or float-to-int cast of a computed float: ``tanh(x) == x``
in float16 flips on one ulp); the two TVM paths must still agree bit for bit there. See
:mod:`.interpret`.

Why floats are not bit-exact between the two TVM paths: both compute the same TE expressions,
but the shim builds ONE kernel with injective stages inlined, while the new path runs one kernel
per op. Inlined, LLVM sees whole expression trees and may keep intermediates in registers
(float16 arithmetic is done in float32 and may skip the rounding to half between two inlined
ops) and fold differently. Why NumPy is looser still: its kernels (``exp``, ``erf``, pairwise
summation) are different algorithms, and the reference computes each op in float64 then rounds
once, while TVM rounds inside reductions and norms.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import tvm
from tvm import relax

from compile_engine_compat.pipeline.trace import TRACE_LOCK, flatten, source_function
from compile_engine_compat.targets import as_target
from compile_engine_compat.testing.interpret import FRAGILE, interpret

__all__ = [
    "PATH_TOLERANCES",
    "REFERENCE_TOLERANCES",
    "EquivalenceError",
    "Tolerance",
    "assert_matches_new_path",
    "compare",
    "format_report",
    "numpy_reference",
    "run_jit",
    "run_new_path",
]


class EquivalenceError(AssertionError):
    """The shim and the modern path (or NumPy) disagree; the message is the full report."""


@dataclass(frozen=True)
class Tolerance:
    """Float tolerance: ``|a - e| <= atol * max(1, max|e|) + rtol * |e|``."""

    rtol: float
    atol: float


PATH_TOLERANCES: dict[str, Tolerance] = {
    "float32": Tolerance(1e-5, 1e-5),
    "float16": Tolerance(4e-3, 4e-3),
}
REFERENCE_TOLERANCES: dict[str, Tolerance] = {
    "float32": Tolerance(1e-4, 1e-4),
    "float16": Tolerance(3e-2, 3e-2),
}


def compare(actual: np.ndarray, expected: np.ndarray, tolerances: dict[str, Tolerance]) -> str:
    """Return "" when ``actual`` matches ``expected``, else a one-line reason."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    if actual.shape != expected.shape:
        return f"shape {actual.shape} != {expected.shape}"
    if actual.dtype != expected.dtype:
        return f"dtype {actual.dtype} != {expected.dtype}"
    tol = tolerances.get(str(expected.dtype))
    if tol is None:  # integers, bool: bit-exact
        bad = actual != expected
        if not bad.any():
            return ""
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        first = f"{actual[index]} != {expected[index]}"
        return f"{int(bad.sum())} element(s) differ, first at {index}: {first}"
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    if not np.array_equal(np.isnan(a), np.isnan(e)):
        return "NaN at different places"
    inf_a, inf_e = np.isinf(a), np.isinf(e)
    if not np.array_equal(inf_a, inf_e) or not np.array_equal(a[inf_a], e[inf_e]):
        return "inf at different places or with different signs"
    finite = np.isfinite(e)
    if not finite.any():
        return ""
    scale = max(1.0, float(np.abs(e[finite]).max()))
    err = np.abs(a[finite] - e[finite])
    allowed = tol.atol * scale + tol.rtol * np.abs(e[finite])
    if (err <= allowed).all():
        return ""
    worst = int(np.argmax(err - allowed))
    return (
        f"{int((err > allowed).sum())} element(s) beyond rtol={tol.rtol}, "
        f"atol={tol.atol}*{scale:g}; worst {a[finite][worst]!r} vs {e[finite][worst]!r}"
    )


# -- the two TVM paths --------------------------------------------------------------------------


def run_new_path(func: Any, arrays: Sequence[np.ndarray], target: Any = "llvm") -> list[np.ndarray]:
    """Run ``func`` through ``tvm.compile`` + ``relax.VirtualMachine``; flat NumPy outputs."""
    return [t.numpy() for t in flatten(new_path_callable(func, target)(arrays))]


def new_path_callable(func: Any, target: Any = "llvm") -> Any:
    """Compile ``func`` the modern way; return ``call(arrays) -> VM result`` (nested tensors).

    ``target`` means what it means to the engine: a plain ``"llvm"`` is this machine's CPU
    (:func:`compile_engine_compat.schedules.host_target`, the modern spelling the migration guide
    gives), so both paths build the same instructions. Against generic x86-64 code, FMA
    contraction alone moves ill-conditioned results (a variance of two close values) beyond the
    float32 tolerance.
    """
    func = source_function(func).with_attr("global_symbol", "main")
    with TRACE_LOCK:  # relax tvm.compile runs topi (LegalizeOps), which is not thread-safe
        executable = tvm.compile(tvm.IRModule({"main": func}), target=as_target(target))
        machine = relax.VirtualMachine(executable, tvm.cpu())
    entry = machine["main"]

    def call(arrays: Sequence[np.ndarray]) -> Any:
        result = entry(*[tvm.runtime.tensor(np.asarray(a, order="C")) for a in arrays])
        return _as_list(result)

    return call


def _as_list(value: Any) -> Any:
    if isinstance(value, tvm.runtime.Tensor):
        return value
    return [_as_list(v) for v in value]


def run_jit(
    func: Any, arrays: Sequence[np.ndarray], like: Sequence[np.ndarray], target: Any = "llvm"
) -> list[np.ndarray]:
    """Run ``engine.jit(func, target)`` destination-passing, outputs shaped like ``like``.

    Goes through the engine's un-warned core (:meth:`CompileEngine.kernel_for`), so it neither
    counts as a legacy call in the ledger nor runs shadow mode.
    """
    from compile_engine_compat.facade.engine import global_engine

    kernel = global_engine().kernel_for(func, target)
    if kernel.num_outputs != len(like):
        raise EquivalenceError(
            f"jit kernel has {kernel.num_outputs} outputs, the new path returned {len(like)}"
        )
    device = kernel.device
    inputs = [tvm.runtime.tensor(np.asarray(a, order="C"), device) for a in arrays]
    outputs = [tvm.runtime.empty(o.shape, str(o.dtype), device) for o in like]
    kernel(*inputs, *outputs)
    return [o.numpy() for o in outputs]


# -- the NumPy reference ------------------------------------------------------------------------


def numpy_reference(func: Any, arrays: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    """Interpret ``func`` with the registry's NumPy references; None if an op has none.

    Each op computes in float64 (or its integer dtype) and is then cast to its Relax dtype.
    """
    found = interpret(func, arrays)
    return None if found is None else found[0]


# -- the report ---------------------------------------------------------------------------------


def _show(array: np.ndarray) -> str:
    return np.array2string(np.asarray(array), threshold=64, precision=6, separator=", ")


def format_report(
    func: Any,
    arrays: Sequence[np.ndarray],
    seed: Any,
    problems: Sequence[str],
    outputs: Mapping[str, Sequence[np.ndarray] | None],
) -> str:
    """The failure report: problems, seed, inputs, the function's TVMScript and all outputs."""
    lines = ["the shim and the modern path disagree:"]
    lines += [f"  - {p}" for p in problems]
    lines.append(f"seed: {seed if seed is not None else 'not given (explicit inputs)'}")
    for i, a in enumerate(arrays):
        lines.append(f"input {i} ({np.asarray(a).dtype}{list(np.shape(a))}): {_show(a)}")
    lines.append("function:")
    lines.append(str(source_function(func).script(show_meta=False)))
    for label, outs in outputs.items():
        if outs is None:
            continue
        for i, o in enumerate(outs):
            lines.append(
                f"{label} output {i} ({np.asarray(o).dtype}{list(np.shape(o))}): {_show(o)}"
            )
    return "\n".join(lines)


def compare_all(
    got: Sequence[np.ndarray],
    want: Sequence[np.ndarray],
    names: tuple[str, str],
    tolerances: dict[str, Tolerance],
    indices: Sequence[int] | None = None,
) -> list[str]:
    """Compare two output lists; one line per differing output (numbered by ``indices``)."""
    if len(got) != len(want):
        return [f"{names[0]} gives {len(got)} outputs, {names[1]} gives {len(want)}"]
    problems = []
    for i, g, w in zip(indices or range(len(got)), got, want):
        reason = compare(g, w, tolerances)
        if reason:
            problems.append(f"output {i}: {names[0]} vs {names[1]}: {reason}")
    return problems


def assert_matches_new_path(
    func: Any,
    *arrays: np.ndarray,
    target: Any = "llvm",
    seed: Any = None,
    reference: bool = True,
) -> list[np.ndarray]:
    """Assert that ``engine.jit(func, target)`` computes what the modern path computes.

    Runs ``func`` on ``arrays`` through ``tvm.compile`` + ``relax.VirtualMachine`` and through
    the shim's ``jit`` kernel (destination-passing), and, when every op of ``func`` has a NumPy
    reference, through NumPy. See the module docstring for the per-dtype tolerances.

    Parameters
    ----------
    func : relax.Function or tvm.IRModule
    *arrays : numpy.ndarray
        One per parameter.
    target : str, dict or tvm.target.Target
    seed : optional
        Shown in the report so the inputs can be rebuilt (``Inputs.seed``).
    reference : bool
        Also compare with the NumPy reference when available.

    Returns
    -------
    list of numpy.ndarray
        The jit outputs, flattened.

    Raises
    ------
    EquivalenceError
        An ``AssertionError`` whose message holds the problems, the seed, the inputs, the
        function's TVMScript and every output.
    """
    arrays = tuple(np.asarray(a) for a in arrays)
    expected = run_new_path(func, arrays, target)
    actual = run_jit(func, arrays, expected, target)
    problems = compare_all(actual, expected, ("jit", "new path"), PATH_TOLERANCES)
    found = interpret(func, arrays) if reference else None
    ref = None
    if found is not None:
        ref, statuses = found
        # Outputs that hinge on one ulp of a rounded intermediate are the two paths' to agree on.
        keep = [i for i, s in enumerate(statuses) if s != FRAGILE]
        pick = [[outs[i] for i in keep] for outs in (actual, expected, ref)]
        if len(ref) != len(actual):
            problems.append(f"jit gives {len(actual)} outputs, NumPy gives {len(ref)}")
        else:
            for got, label in ((pick[0], "jit"), (pick[1], "new path")):
                names = (label, "NumPy")
                problems += compare_all(got, pick[2], names, REFERENCE_TOLERANCES, keep)
    if problems:
        outputs = {"jit": actual, "new path": expected, "NumPy": ref}
        raise EquivalenceError(format_report(func, arrays, seed, problems, outputs))
    return actual
