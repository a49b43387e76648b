"""How a module build shares its kernels out between threads (``balanced_shares``)."""

from __future__ import annotations

import tvm
from tvm import te

from compile_engine_compat.pipeline.model.vm_executable import balanced_shares


def _plus_one(tensor: te.Tensor, name: str) -> te.Tensor:
    return te.compute((4,), lambda i: tensor[i] + 1.0, name=name)


def _module(ops_per_kernel: list[int]) -> tvm.IRModule:
    """One elementwise kernel per entry, with that many chained stages (its TIR grows with it)."""
    funcs = {}
    for index, ops in enumerate(ops_per_kernel):
        tensor = first = te.placeholder((4,), name="x")
        for op in range(ops):
            tensor = _plus_one(tensor, f"s{op}")
        funcs[f"k{index}"] = te.create_prim_func([first, tensor])
    return tvm.IRModule(funcs)


def test_the_heavy_kernels_are_spread_and_every_kernel_is_built_once():
    mod = _module([8, 8, 1, 1, 1, 1])
    kernels = list(mod.get_global_vars())
    shares = balanced_shares(mod, kernels, 2)
    assert sorted(g.name_hint for share in shares for g in share) == sorted(
        g.name_hint for g in kernels
    )
    heavy = [{g.name_hint for g in share} & {"k0", "k1"} for share in shares]
    assert heavy[0] and heavy[1]
    lights = [len({g.name_hint for g in share} - {"k0", "k1"}) for share in shares]
    assert lights == [2, 2]  # the light ones fill both shares evenly


def test_a_heavy_kernel_alone_outweighs_the_light_ones():
    mod = _module([1, 1, 1, 12])  # round robin would pair k1 with the heavy k3
    kernels = list(mod.get_global_vars())
    shares = [{g.name_hint for g in share} for share in balanced_shares(mod, kernels, 2)]
    assert {"k3"} in shares and {"k0", "k1", "k2"} in shares


def test_one_thread_or_one_kernel_keeps_a_single_share():
    mod = _module([1, 2])
    kernels = list(mod.get_global_vars())
    assert balanced_shares(mod, kernels, 1) == [kernels]
    assert balanced_shares(mod, kernels[:1], 3) == [kernels[:1], [], []]
