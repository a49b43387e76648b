"""The Relay importers TVM 0.27 has no counterpart for: each refuses at the call, naming the route
that works (convert the model to ONNX or TFLite outside TVM, then ``from_onnx``/``from_tflite``).

They are one module, not one each: none has any code but its refusal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compile_engine_compat.api_table import lookup
from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay.frontend.common import UnservedFrontendError

__all__ = [
    "ROUTES",
    "from_caffe",
    "from_caffe2",
    "from_coreml",
    "from_darknet",
    "from_keras",
    "from_mxnet",
    "from_oneflow",
    "from_paddle",
    "from_tensorflow",
]

_TF = (
    "convert the model with tf2onnx (python -m tf2onnx.convert) and import it with "
    "relay.frontend.from_onnx, or with tf.lite.TFLiteConverter and relay.frontend.from_tflite"
)
#: Relay importer -> the route that works on TVM 0.27.
ROUTES: dict[str, str] = {
    "from_keras": _TF,
    "from_tensorflow": _TF,
    "from_mxnet": "export the model to ONNX (mx.onnx.export_model), then relay.frontend.from_onnx",
    "from_darknet": "convert the model to ONNX (or to PyTorch) and use relay.frontend.from_onnx",
    "from_caffe": "convert the model to ONNX (caffe2onnx) and use relay.frontend.from_onnx",
    "from_caffe2": "export the model to ONNX (caffe2.python.onnx) and use relay.frontend.from_onnx",
    "from_coreml": "convert the model to ONNX (onnxmltools) and use relay.frontend.from_onnx",
    "from_paddle": "export the model to ONNX (paddle2onnx) and use relay.frontend.from_onnx",
    "from_oneflow": "export the model to ONNX (oneflow_onnx) and use relay.frontend.from_onnx",
}


def _refusal(name: str) -> Callable[..., Any]:
    @legacy_api("relay.frontend.unserved")
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise UnservedFrontendError(
            f"relay.frontend.{name} has no importer on TVM 0.27 (Relay's importers were "
            f"removed in TVM 0.20 and Relax has none for this framework): {ROUTES[name]}. "
            f"See {lookup('relay.frontend.unserved').docs}."
        )

    refuse.__name__ = refuse.__qualname__ = name
    refuse.__doc__ = f"``relay.frontend.{name}``: refused at the call; {ROUTES[name]}."
    refuse.__legacy_refused__ = True  # type: ignore[attr-defined]  # a refusal stand-in
    return refuse


from_keras = _refusal("from_keras")
from_tensorflow = _refusal("from_tensorflow")
from_mxnet = _refusal("from_mxnet")
from_darknet = _refusal("from_darknet")
from_caffe = _refusal("from_caffe")
from_caffe2 = _refusal("from_caffe2")
from_coreml = _refusal("from_coreml")
from_paddle = _refusal("from_paddle")
from_oneflow = _refusal("from_oneflow")
