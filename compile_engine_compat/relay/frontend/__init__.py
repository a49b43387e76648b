"""``relay.frontend`` (``tvm.relay.frontend`` under ``install()``): Relay's importers on Relax's.

Each returns Relay's ``(IRModule, params)`` with Relay's argument names and defaults, and the
module feeds ``relay.build`` unchanged:

* :func:`from_onnx`: Relax's ONNX importer (:mod:`.onnx`);
* :func:`from_pytorch`: TorchScript through ONNX, ``nn.Module`` through torch.export
  (:mod:`.pytorch`);
* :func:`from_tflite`: Relax's TFLite importer (:mod:`.tflite`);
* :func:`ChangeDatatype`: the pass retyping a program (:mod:`.change_datatype`);
* ``from_keras``, ``from_tensorflow``, ``from_mxnet`` and the others of :mod:`.unserved` refuse at
  the call, naming the route that works.

onnx, torch and tflite are optional: a frontend whose framework is missing raises
:class:`~.common.MissingFrontendDependencyError` (an ``ImportError``) naming the extra.
"""

from __future__ import annotations

from compile_engine_compat.relay._impl.unserved import (
    from_caffe,
    from_caffe2,
    from_coreml,
    from_darknet,
    from_keras,
    from_mxnet,
    from_oneflow,
    from_paddle,
    from_tensorflow,
)

from . import change_datatype, common
from .change_datatype import ChangeDatatype
from .common import FrontendOptionError, MissingFrontendDependencyError, UnservedFrontendError
from .onnx import from_onnx
from .pytorch import from_pytorch
from .tflite import from_tflite

__all__ = [
    "ChangeDatatype",
    "FrontendOptionError",
    "MissingFrontendDependencyError",
    "UnservedFrontendError",
    "change_datatype",
    "common",
    "from_caffe",
    "from_caffe2",
    "from_coreml",
    "from_darknet",
    "from_keras",
    "from_mxnet",
    "from_oneflow",
    "from_onnx",
    "from_paddle",
    "from_pytorch",
    "from_tensorflow",
    "from_tflite",
]
