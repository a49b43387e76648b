"""LLVM's optimization level, chosen per kernel from what the default schedule already did.

A cold ``jit`` of a small kernel is mostly LLVM's fixed cost: even a 16-element copy took ~12 ms
of code generation and ~13 ms of JIT at ``-O3``. A kernel whose every block is elementwise and was
vectorized by the shim's rules (:data:`.schedule.VECTORIZED_ELEMENTWISE`) leaves nothing to
``-O3``'s extra passes: its loops are in vector form already. At LLVM ``opt-level`` 1 such a
kernel builds faster and runs as fast. The benchmark's 10-op chain on 64x64 (``bench/run.py``,
interleaved medians on the 2-core machine): cold ``jit`` ~41-45 ms -> ~36-39 ms, its kernel
~12% faster (vectorized in TIR now); add/multiply chains from 16x40 to 1024x1024 and the 10-op
chain on 256x256 took 0.93-1.005x the time of their ``-O3`` builds (within the noise).

Everything else keeps the target's own level (LLVM's default 3): GEMM and convolution kernels
(conv2d ran 7% slower at ``-O1``), other reductions, broadcasts and transposes, kernels a rule did
not vectorize (LLVM's loop vectorizer only runs at ``-O2`` and up: an unvectorized 64x64 chain
ran 3x slower at ``-O1``), kernels a user schedule shaped, kernels built under a PassContext that
disables TIR vectorization (``tirx.disable_vectorize``, or ``tirx.VectorizeLoop`` disabled),
non-``llvm`` targets, and any target whose ``opt-level`` the user set (that choice is always
kept: ``{"kind": "llvm", "opt-level": 3}`` turns this off).

The choice is visible: ``CachedFunc.target`` carries ``"opt-level": 1`` and
``CachedFunc.llvm_opt_level`` is 1 (None when the target's own level applies). The persistent
cache's kernel key holds ``CachedFunc.target``, so kernels built at either level never share an
entry; the in-memory key needs nothing more, since the choice follows from the function, the
target, the PassContext (already in the key) and the rules (:data:`.schedule.RULES_VERSION`).
``jit_many`` builds one module per target, so it builds the ``-O1`` and ``-O3`` kernels of one
call in separate modules.
"""

from __future__ import annotations

from collections.abc import Collection

import tvm

from compile_engine_compat.pipeline.schedule import RuleOutcome

__all__ = ["LIGHT_OPT_LEVEL", "choose_opt_level", "with_opt_level", "without_opt_level"]

#: LLVM's optimization level for kernels the rules vectorized completely.
LIGHT_OPT_LEVEL = 1
_KEY = "opt-level"


def choose_opt_level(
    target: tvm.target.Target, outcome: RuleOutcome, user_blocks: Collection[str] = ()
) -> int | None:
    """The LLVM ``opt-level`` to build ``outcome.schedule`` at, or None for the target's own.

    Parameters
    ----------
    target : tvm.target.Target
        The target the function was scheduled for.
    outcome : RuleOutcome
        The default rules' result (:func:`.schedule.schedule_blocks`).
    user_blocks : collection of str
        Blocks a user schedule takes: any of them keeps the target's level.

    Returns
    -------
    int or None
        :data:`LIGHT_OPT_LEVEL` for an ``llvm`` target without an ``opt-level`` of its own whose
        every block is elementwise and vectorized by a default rule; otherwise None.
    """
    if target.kind.name != "llvm" or _KEY in target.attrs or user_blocks:
        return None
    if not outcome.all_vectorized_elementwise() or _vectorize_disabled():
        return None
    return LIGHT_OPT_LEVEL


def _vectorize_disabled() -> bool:
    """Whether the current PassContext turns TIR's vectorized loops back into serial ones.

    Then the kernel is not vectorized after all and needs LLVM's loop vectorizer (``-O2`` and
    up). The PassContext is part of every cache key, so the choice is cached with it.
    """
    context = tvm.transform.PassContext.current()
    disabled = context.config.get("tirx.disable_vectorize", False)
    return bool(disabled) or any(str(p) == "tirx.VectorizeLoop" for p in context.disabled_pass)


# (target, level) -> the same Target object every time: cache keys and build-pool groups read a
# target's text, memoized per Target object. Targets and levels are few; bounded anyway.
_with_level: dict[tuple[tvm.target.Target, int], tvm.target.Target] = {}


def with_opt_level(target: tvm.target.Target, level: int | None) -> tvm.target.Target:
    """``target`` with ``"opt-level": level`` (``target`` itself when ``level`` is None).

    Parameters
    ----------
    target : tvm.target.Target
        An ``llvm`` target (any target when ``level`` is None).
    level : int or None
        From :func:`choose_opt_level`.

    Returns
    -------
    tvm.target.Target
    """
    if level is None:
        return target
    done = _with_level.get((target, level))
    if done is None:
        if len(_with_level) > 256:
            _with_level.clear()
        config = dict(target.export())
        config[_KEY] = level
        done = _with_level[(target, level)] = tvm.target.Target(config)
    return done


def without_opt_level(target: tvm.target.Target) -> tvm.target.Target:
    """``target`` without its ``opt-level`` (what :func:`with_opt_level` added).

    Parameters
    ----------
    target : tvm.target.Target

    Returns
    -------
    tvm.target.Target
        ``target`` itself when it has no ``opt-level``.
    """
    if _KEY not in target.attrs:
        return target
    config = dict(target.export())
    del config[_KEY]
    return tvm.target.Target(config)
