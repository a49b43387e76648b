"""relay.frontend.from_tflite on a real TFLite file, against the interpreter's recorded outputs.

``data/small_cnn.tflite`` and ``data/small_cnn_io.npz`` were made once by
``data/make_tflite.py`` with tensorflow-cpu in a side environment (TensorFlow is no dependency).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tvm

tflite = pytest.importorskip("tflite")

from compile_engine_compat import relay  # noqa: E402
from compile_engine_compat.tvm_legacy import graph_executor  # noqa: E402

DATA = Path(__file__).parent / "data"


def test_small_cnn_matches_the_tflite_interpreter():
    model = tflite.Model.GetRootAsModel((DATA / "small_cnn.tflite").read_bytes(), 0)
    recorded = np.load(DATA / "small_cnn_io.npz")
    name = str(recorded["input_name"])
    mod, params = relay.frontend.from_tflite(
        model, shape_dict={name: (1, 8, 8, 3)}, dtype_dict={name: "float32"}
    )
    assert params == {}
    lib = relay.build(mod, target="llvm", params=params)
    module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    module.set_input(name, recorded["input"])
    module.run()
    np.testing.assert_allclose(module.get_output(0).numpy(), recorded["output"], atol=1e-5)
