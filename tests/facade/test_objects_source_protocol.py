"""Front ends hand the engine their functions through ``__relax_function__``, at every entry."""

from __future__ import annotations

from _builders import add3

from compile_engine_compat import te_compiler
from compile_engine_compat.facade.objects import CCacheKey


class _OtherSpelling:
    """A function built by some front end, which knows its Relax form."""

    def __init__(self) -> None:
        self.converted = 0

    def __relax_function__(self):
        self.converted += 1
        return add3((4,))


def test_lower_jit_and_keys_take_the_protocol_and_share_the_relax_entry(engine):
    other = _OtherSpelling()
    direct = engine.lower(add3((4,)), "llvm")
    assert engine.lower(other, "llvm") is direct
    assert engine.jit(other, "llvm") is engine.jit(add3((4,)), "llvm")
    key = CCacheKey(other, "llvm")
    assert engine.lower(key) is direct
    assert len(engine.items()) == 1
    assert other.converted == 3


def test_te_compiler_lower_to_primfunc_takes_the_protocol():
    prim = te_compiler.lower_to_primfunc(_OtherSpelling(), "llvm")
    assert len(prim.params) == 2
