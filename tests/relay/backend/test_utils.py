"""relay.backend.utils.mangle_module_name as TVM 0.19 had it (relay/backend/utils.py)."""

from __future__ import annotations

import pytest

from compile_engine_compat.relay.backend.utils import mangle_module_name


@pytest.mark.parametrize(
    "name, mangled", [("default", "tvmgen_default"), ("", "tvmgen"), (None, "tvmgen")]
)
def test_mangle_module_name(name, mangled):
    assert mangle_module_name(name) == mangled


def test_a_name_no_c_symbol_can_hold_is_refused():
    with pytest.raises(ValueError, match="invalid characters"):
        mangle_module_name("\u018e")
