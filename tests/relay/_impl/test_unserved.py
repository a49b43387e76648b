"""The importers with no Relax counterpart import, and refuse at the call naming the route; a
missing framework raises an ImportError naming the extra."""

from __future__ import annotations

import sys

import pytest

from compile_engine_compat import relay
from compile_engine_compat.relay._impl import unserved
from compile_engine_compat.relay.frontend import (
    MissingFrontendDependencyError,
    UnservedFrontendError,
)
from compile_engine_compat.surfaces.import_alias import install, installed, uninstall


@pytest.mark.parametrize("name", sorted(unserved.ROUTES))
def test_unserved_importer_refuses_at_the_call_naming_the_route(name):
    importer = getattr(relay.frontend, name)  # the attribute and the import succeed
    with pytest.raises(UnservedFrontendError, match="from_onnx") as raised:
        importer(None, shape={"x": (1,)})
    assert name in str(raised.value)
    assert isinstance(raised.value, NotImplementedError)


def test_keras_and_tensorflow_name_tf2onnx_and_the_tflite_converter():
    for importer in (relay.frontend.from_keras, relay.frontend.from_tensorflow):
        with pytest.raises(UnservedFrontendError, match=r"tf2onnx.*TFLiteConverter"):
            importer(None)


def test_tvm_relay_frontend_imports_under_install():
    was = installed()
    install()
    try:
        import tvm
        from tvm.relay.frontend import from_keras, from_onnx  # noqa: F401

        assert tvm.relay.frontend.from_onnx is relay.frontend.from_onnx
    finally:
        if not was:
            uninstall()


def test_a_missing_framework_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)  # Python's "import blocked" marker
    with pytest.raises(MissingFrontendDependencyError, match=r"compile-engine-compat\[onnx\]"):
        relay.frontend.from_onnx(object())
    assert issubclass(MissingFrontendDependencyError, ImportError)
