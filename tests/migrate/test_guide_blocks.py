"""MIGRATION.md's examples run: every row's "after" block on TVM 0.27, every "before" block under
``compile_engine_compat.install()``, and the two give the same ``result``."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

from compile_engine_compat.api_table import API_TABLE, LegacyApi
from compile_engine_compat.migrate.docs import generate
from compile_engine_compat.migrate.examples import GUIDE_PRELUDE, example
from compile_engine_compat.surfaces.import_alias import install, installed, uninstall

ROWS = sorted(API_TABLE)
#: The rows whose note states how the modern code behaves differently (observed must differ).
DIFFERENCES = {
    f"{module}.{name}"
    for module, engine in (("compile_engine", "CompileEngine"), ("te_compiler", "TECompiler"))
    for name in (f"{engine}.lower", f"{engine}.jit", "CCacheKey")
}


def _run(code: str, row: LegacyApi, which: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": f"guide_{which}"}
    exec(compile(GUIDE_PRELUDE + code, f"<{row.rule_id} {which}>", "exec"), namespace)
    return namespace


def _legacy(row: LegacyApi) -> dict[str, Any]:
    """Run the row's ``before`` block as a TVM <=0.19 program runs under the shim."""
    was_installed = installed()
    install()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # each legacy call warns; the warnings are tested
            return _run(example(row)[0], row, "before")
    finally:
        if not was_installed:
            uninstall()


def _same(before: Any, after: Any) -> bool:
    if isinstance(before, np.ndarray) or isinstance(after, np.ndarray):
        return np.shape(before) == np.shape(after) and np.allclose(before, after, rtol=1e-5)
    return bool(before == after)


def test_every_row_has_an_example_and_the_guide_shows_it():
    guide = generate()
    for name, row in API_TABLE.items():
        before, after = example(row)
        assert before and after, name
        assert after.rstrip("\n") in guide, name
    assert GUIDE_PRELUDE in guide


@pytest.mark.parametrize("name", ROWS)
def test_the_after_block_runs_on_tvm_and_matches_the_before_block_under_the_shim(name):
    row = API_TABLE[name]
    after_block = example(row)[1]
    after = _run(after_block, row, "after")
    assert "result" in after, f"{row.rule_id}'s after block sets no result"
    assert "tvm.relay" not in after_block and "compile_engine_compat" not in after_block
    if row.before_raises:
        with pytest.raises(Exception) as raised:
            _legacy(row)
        names = {cls.__name__ for cls in type(raised.value).__mro__}
        assert row.before_raises in names, raised.value
        return
    before = _legacy(row)
    assert _same(before["result"], after["result"]), (before["result"], after["result"])
    if name in DIFFERENCES:
        # The note's difference is real: the two blocks observe it.
        assert before["observed"] != after["observed"], row.note
        assert row.note
    else:
        assert "observed" not in before and "observed" not in after


def test_the_differences_are_the_three_rules_the_guide_names():
    assert {API_TABLE[name].rule_id for name in DIFFERENCES} == {
        "CEC104",
        "CEC105",
        "CEC112",
        "CEC204",
        "CEC205",
        "CEC208",
    }
