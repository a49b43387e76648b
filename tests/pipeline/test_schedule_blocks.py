"""Block analysis: what the rules read from a block and from the target."""

from __future__ import annotations

import pytest
import tvm

from compile_engine_compat.pipeline.schedule.blocks import target_isa


@pytest.mark.parametrize(
    ("target", "bits", "registers"),
    [
        ("llvm", 128, 16),
        ({"kind": "llvm", "mcpu": "x86-64-v3"}, 256, 16),
        ({"kind": "llvm", "mcpu": "rocketlake"}, 256, 32),
        ({"kind": "llvm", "mcpu": "rocketlake", "mattr": ["-prefer-256-bit"]}, 512, 32),
        ({"kind": "llvm", "mcpu": "znver5"}, 512, 32),  # AVX-512 with no 256-bit preference
        ({"kind": "llvm", "mcpu": "znver5", "mattr": ["+prefer-256-bit"]}, 256, 32),
        ({"kind": "llvm", "mtriple": "aarch64-linux-gnu"}, 128, 16),
    ],
)
def test_vector_unit_comes_from_the_target(target, bits, registers):
    isa = target_isa(tvm.target.Target(target))
    assert (isa.vector_bits, isa.registers) == (bits, registers)
