"""``tvm.nd`` under ``install()``: array/empty/from_dlpack, ``to_dlpack``/``copyfrom``/``asnumpy``
on tensors, and the DLPack hand-off with torch in both directions, sharing memory."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import tvm

import compile_engine_compat
from compile_engine_compat.surfaces.import_alias import installed as alias_installed

torch = pytest.importorskip("torch")


@pytest.fixture
def nd():
    was = alias_installed()
    compile_engine_compat.install()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield tvm.nd
    finally:
        if not was:
            compile_engine_compat.uninstall()


def test_arrays_answer_the_legacy_methods(nd):
    x = nd.array(np.arange(6, dtype="float32").reshape(2, 3))
    assert isinstance(x, nd.NDArray)
    np.testing.assert_array_equal(x.asnumpy(), np.arange(6).reshape(2, 3))
    y = nd.empty((2, 3), "float32")
    y.copyfrom(np.ones((2, 3), dtype="float32"))
    np.testing.assert_array_equal(y.asnumpy(), np.ones((2, 3)))
    y.copyfrom(x)
    np.testing.assert_array_equal(y.asnumpy(), x.asnumpy())


def test_tvm_to_torch_shares_memory(nd):
    x = nd.array(np.arange(4, dtype="float32"))
    t = torch.utils.dlpack.from_dlpack(x.to_dlpack())
    t[0] = 42.0
    assert x.asnumpy()[0] == 42.0  # the same memory, written through torch
    assert t.data_ptr() == x.data_ptr()


@pytest.mark.parametrize("form", ["tensor", "capsule"])
def test_torch_to_tvm_shares_memory(nd, form):
    t = torch.arange(4, dtype=torch.float32)
    source = t if form == "tensor" else torch.utils.dlpack.to_dlpack(t)
    x = nd.from_dlpack(source)
    t[1] = 7.0
    np.testing.assert_array_equal(x.asnumpy(), [0.0, 7.0, 2.0, 3.0])
    assert x.data_ptr() == t.data_ptr()


def test_from_dlpack_refuses_what_is_not_dlpack(nd):
    with pytest.raises((TypeError, ValueError)):
        nd.from_dlpack([1.0, 2.0])


def test_to_dlpack_is_gone_after_uninstall():
    was = alias_installed()
    compile_engine_compat.install()
    compile_engine_compat.uninstall()
    try:
        assert not hasattr(tvm.runtime.Tensor, "to_dlpack")
    finally:
        if was:
            compile_engine_compat.install()
