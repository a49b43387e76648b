"""``relay.annotation``: ``checkpoint`` and the compiler-region marks (``compiler_begin``,
``compiler_end``: ``PartitionGraph`` removes them) are the value itself when built."""

from __future__ import annotations

from compile_engine_compat.relay.op import annotation

from .cases import Case, data, family_tests

CASES: dict[str, Case] = {
    "annotation.checkpoint": Case([data((2, 3))], {}, lambda x: x),
    "annotation.compiler_begin": Case([data((2, 3))], {"compiler": "ccompiler"}, lambda x: x),
    "annotation.compiler_end": Case([data((2, 3))], {"compiler": "ccompiler"}, lambda x: x),
}

test_every_row_has_a_case, test_relay_op_matches_reference = family_tests(annotation, CASES)
