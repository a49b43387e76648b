"""``tvm._ffi`` of TVM <=0.19 (served by ``install()``): its names over ``tvm_ffi``.

``register_func``, ``get_global_func`` and ``register_object`` are ``tvm_ffi``'s
(``register_global_func`` was ``register_func``); ``base.TVMError`` is the base class of TVM
0.27's errors (see :mod:`.base`).
"""

from __future__ import annotations

import tvm_ffi

from . import base

__all__ = ["base", "get_global_func", "register_func", "register_object"]

register_func = tvm_ffi.register_global_func
get_global_func = tvm_ffi.get_global_func
register_object = tvm_ffi.register_object
