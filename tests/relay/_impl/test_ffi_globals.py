"""An ``_ffi_api`` global of TVM 0.19 the shim does not serve is refused by name, naming the
public counterpart and the modern replacement; the served ones are there."""

from __future__ import annotations

import pytest

from compile_engine_compat.relay.analysis import ffi_hooks as analysis_hooks
from compile_engine_compat.relay.transform import ffi_hooks as transform_hooks


@pytest.mark.parametrize(
    ("module", "public", "modern"),
    [
        (transform_hooks, "relay.transform.FuseOps", "relax.transform"),
        (analysis_hooks, "relay.analysis.FuseOps", "relax.analysis"),
    ],
)
def test_an_unserved_global_names_its_public_counterpart_and_replacement(module, public, modern):
    with pytest.raises(AttributeError, match=r"C\+\+ global of TVM <=0\.19") as raised:
        module.FuseOps  # noqa: B018
    assert public in str(raised.value) and modern in str(raised.value)
    assert not hasattr(module, "__wrapped__")  # a dunder probe is a plain miss


def test_the_served_globals_are_there():
    assert callable(transform_hooks.AnnotateUsedMemory)
    assert callable(analysis_hooks._test_type_solver)
