"""Legacy program: a TOPI alter-layout hook picking the conv2d implementation (pre-0.8 style).

``topi/x86/conv2d_alter_op.py`` called ``relay.backend.compile_engine.select_implementation`` with
the op, its attrs, the input tensors, the output type and the target, and read the chosen impl.
Here the op strategy is the shim's registry, with a user implementation as FTVMStrategy allowed.
"""

from __future__ import annotations

import logging

import tvm

# relay is the tvm.relay stub of compile_engine_compat.install(): it holds backend only.
from tvm import relax, relay, te, topi

from compile_engine_compat import OpImplementation, temp_strategy


def _compute_conv2d(attrs, inputs, out_type):
    data, kernel = inputs
    return [topi.nn.conv2d_nchw(data, kernel, 1, 0, 1)]


def alter_conv2d_layout(attrs, inputs, tinfos, out_type):
    target = tvm.target.Target.current(allow_none=False)
    # was: relay.op.get("nn.conv2d")
    impl, outs = relay.backend.compile_engine.select_implementation(
        tvm.ir.Op.get("relax.nn.conv2d"), attrs, tinfos, out_type, target
    )
    return impl.name, [int(d) for d in outs[0].shape]


def main():
    x = relax.Var("x", relax.TensorType((1, 16, 7, 7), "float32"))
    w = relax.Var("w", relax.TensorType((8, 16, 3, 3), "float32"))
    call = relax.op.nn.conv2d(x, w)
    tinfos = [te.placeholder((1, 16, 7, 7), name="data"), te.placeholder((8, 16, 3, 3), name="w")]
    impls = [
        OpImplementation("conv2d_nchw.x86", _compute_conv2d, plevel=10),
        OpImplementation(
            "conv2d_nchw_wide.x86",
            _compute_conv2d,
            plevel=20,
            condition=lambda inputs: inputs[0].shape[1] >= 16,
        ),
    ]
    logger = logging.getLogger("compile_engine")
    level = logger.level
    logger.setLevel(logging.INFO)  # the docs' way to see which implementation is picked
    try:
        with tvm.target.Target("llvm"), temp_strategy("nn.conv2d", impls):
            return alter_conv2d_layout(call.attrs, [x, w], tinfos, None)
    finally:
        logger.setLevel(level)


if __name__ == "__main__":
    import compile_engine_compat

    compile_engine_compat.install()
    print(main())
