"""``tvm.relay.quantize._annotate`` (``relay/quantize/simulated.py``): importable, refused when
called."""

from __future__ import annotations

import pytest

from compile_engine_compat.surfaces.import_alias import RelayRemovedCallError


def test_the_private_annotation_module_imports_and_refuses_the_call(installed_alias):
    from tvm.relay.quantize._annotate import QAnnotateKind, attach_simulated_quantize

    from compile_engine_compat.relay.quantize import QAnnotateKind as served

    assert QAnnotateKind is served
    with pytest.raises(RelayRemovedCallError, match=r"relay\.quantize\.quantize"):
        attach_simulated_quantize(None, QAnnotateKind.INPUT)
