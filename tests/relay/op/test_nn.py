"""``relay.op.nn``: every neural-network op, against NumPy or the hand-written Relax op."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import tvm.topi.testing as ref
from tvm import relax

from compile_engine_compat import relay
from compile_engine_compat.relay.op import nn

from .cases import RNG, X4, Case, data, family_tests, unary

W4 = data((8, 4, 3, 3))
G4, B4 = data((4,), kind="pos"), data((4,))
R = relax.op


_X3 = data((1, 2, 5))
_X5 = data((1, 2, 3, 2, 2))
_X44 = data((1, 1, 4, 4))
_GRAD = data((1, 1, 2, 2))
_PACKED = data((2, 3, 2))
_K3 = data((2, 1, 3, 3))
_K44 = data((4, 4, 3, 3))
_GRAD_OUT = data((1, 3, 4, 4))
_KD = data((4, 1, 3, 3))
_BITS_A = RNG.integers(0, 4, (2, 8)).astype("uint8")
_BITS_B = RNG.integers(0, 4, (3, 8)).astype("uint8")
#: Winograd F(2x2, 3x3)'s kernel transform (Lavin and Gray, 2015), at TVM's interpolation
#: points in TVM's order (0, -1, 1, infinity).
_G_F2_3 = np.array([[1, 0, 0], [0.5, -0.5, 0.5], [0.5, 0.5, 0.5], [0, 0, 1]], "float32")

CASES: dict[str, Case] = {
    "nn.conv1d": Case(
        [data((1, 3, 9)), data((4, 3, 3))],
        {"strides": 2, "padding": 1},
        relax_ref=lambda x, w: R.nn.conv1d(x, w, strides=2, padding=1),
    ),
    "nn.conv2d": Case(
        [X4, W4],
        {"padding": (1, 1), "channels": 8, "kernel_size": 3},
        relax_ref=lambda x, w: R.nn.conv2d(x, w, padding=(1, 1, 1, 1)),
        rtol=1e-4,
    ),
    "nn.conv3d": Case(
        [data((1, 2, 4, 4, 4)), data((3, 2, 2, 2, 2))],
        {"dilation": 1},
        relax_ref=lambda x, w: R.nn.conv3d(x, w),
        rtol=1e-4,
    ),
    "nn.conv1d_transpose": Case(
        [data((1, 3, 5)), data((3, 2, 3))],
        {"strides": 2},
        relax_ref=lambda x, w: R.nn.conv1d_transpose(x, w, strides=2),
        rtol=1e-4,
    ),
    "nn.conv2d_transpose": Case(
        [data((1, 3, 4, 4)), data((3, 2, 3, 3))],
        {"strides": (2, 2), "padding": (1, 1), "output_padding": (1, 1)},
        relax_ref=lambda x, w: R.nn.conv2d_transpose(
            x, w, strides=(2, 2), padding=(1, 1, 1, 1), output_padding=(1, 1)
        ),
        rtol=1e-4,
    ),
    "nn.conv3d_transpose": Case(
        [data((1, 2, 3, 3, 3)), data((2, 4, 3, 3, 3))],
        {"strides": (2, 2, 2), "padding": (1, 1, 1), "output_padding": (1, 1, 1)},
        relax_ref=lambda x, w: R.nn.conv3d_transpose(
            x, w, strides=2, padding=(1, 1, 1, 1, 1, 1), output_padding=1
        ),
        rtol=1e-4,
    ),
    "nn.max_pool1d": Case(
        [data((1, 2, 8))], {"pool_size": 2, "strides": 2}, lambda x: x.reshape(1, 2, 4, 2).max(-1)
    ),
    "nn.avg_pool1d": Case(
        [data((1, 2, 8))], {"pool_size": 2, "strides": 2}, lambda x: x.reshape(1, 2, 4, 2).mean(-1)
    ),
    "nn.max_pool2d": Case(
        [X4],
        {"pool_size": (2, 2), "strides": (2, 2)},
        lambda x: x.reshape(1, 4, 3, 2, 3, 2).max((3, 5)),
    ),
    "nn.avg_pool2d": Case(
        [X4],
        {"pool_size": 3, "padding": 1, "count_include_pad": True},
        relax_ref=lambda x: R.nn.avg_pool2d(
            x, pool_size=(3, 3), padding=(1, 1, 1, 1), count_include_pad=True
        ),
    ),
    "nn.max_pool3d": Case(
        [data((1, 1, 4, 4, 4))],
        {"pool_size": 2, "strides": 2},
        lambda x: x.reshape(1, 1, 2, 2, 2, 2, 2, 2).max((3, 5, 7)),
    ),
    "nn.avg_pool3d": Case(
        [data((1, 1, 4, 4, 4))],
        {"pool_size": 2, "strides": 2},
        lambda x: x.reshape(1, 1, 2, 2, 2, 2, 2, 2).mean((3, 5, 7)),
    ),
    "nn.global_max_pool2d": Case([X4], {}, lambda x: x.max((2, 3), keepdims=True)),
    "nn.global_avg_pool2d": Case([X4], {}, lambda x: x.mean((2, 3), keepdims=True)),
    "nn.adaptive_avg_pool1d": Case(
        [data((1, 2, 8))], {"output_size": 4}, lambda x: x.reshape(1, 2, 4, 2).mean(-1)
    ),
    "nn.adaptive_avg_pool2d": Case(
        [X4], {"output_size": (3, 3)}, lambda x: x.reshape(1, 4, 3, 2, 3, 2).mean((3, 5))
    ),
    "nn.adaptive_avg_pool3d": Case(
        [data((1, 1, 4, 4, 4))],
        {"output_size": 2},
        lambda x: x.reshape(1, 1, 2, 2, 2, 2, 2, 2).mean((3, 5, 7)),
    ),
    "nn.dense": Case([data((2, 4)), data((3, 4))], {"units": 3}, lambda x, w: x @ w.T, rtol=1e-4),
    "nn.matmul": Case(
        [data((4, 2)), data((3, 4))],
        {"transpose_a": True, "transpose_b": True},
        lambda a, b: a.T @ b.T,
        rtol=1e-4,
    ),
    "nn.batch_matmul": Case(
        [data((2, 3, 4)), data((2, 5, 4))], {}, lambda a, b: a @ b.transpose(0, 2, 1), rtol=1e-4
    ),
    "nn.bias_add": Case([X4, data((4,))], {}, lambda x, b: x + b.reshape(1, 4, 1, 1)),
    "nn.relu": unary(lambda x: np.maximum(x, 0)),
    "nn.leaky_relu": Case([data((2, 3))], {"alpha": 0.2}, lambda x: np.where(x > 0, x, 0.2 * x)),
    "nn.prelu": Case(
        [X4, data((4,), kind="pos")], {}, lambda x, a: np.where(x > 0, x, a.reshape(4, 1, 1) * x)
    ),
    "nn.softmax": Case(
        [data((2, 5))],
        {"axis": 1},
        lambda x: np.exp(x) / np.exp(x).sum(1, keepdims=True),
    ),
    "nn.fast_softmax": Case(
        [data((2, 5))], {}, lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True)
    ),
    "nn.log_softmax": Case(
        [data((2, 5))], {}, lambda x: x - np.log(np.exp(x).sum(-1, keepdims=True))
    ),
    "nn.batch_flatten": Case([X4], {}, lambda x: x.reshape(1, -1)),
    "nn.batch_norm": Case(
        [X4, G4, B4, data((4,)), data((4,), kind="pos")],
        {"epsilon": 1e-3},
        lambda x, g, b, m, v: [
            (x - m.reshape(4, 1, 1)) / np.sqrt(v.reshape(4, 1, 1) + 1e-3) * g.reshape(4, 1, 1)
            + b.reshape(4, 1, 1),
            m,
            v,
        ],
        rtol=1e-4,
    ),
    "nn.layer_norm": Case(
        [data((2, 5)), data((5,)), data((5,))],
        {},
        lambda x, g, b: (
            (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) * g + b
        ),
        rtol=1e-4,
    ),
    "nn.group_norm": Case(
        [X4, G4, B4],
        {"num_groups": 2},
        relax_ref=lambda x, g, b: R.nn.group_norm(x, g, b, 2, 1, [2, 3]),
        rtol=1e-4,
    ),
    "nn.instance_norm": Case(
        [X4, G4, B4],
        {},
        relax_ref=lambda x, g, b: R.nn.instance_norm(x, g, b, 1, [2, 3]),
        rtol=1e-4,
    ),
    "nn.pad": Case(
        [data((2, 3))],
        {"pad_width": ((1, 0), (0, 2)), "pad_value": 1.5},
        lambda x: np.pad(x, ((1, 0), (0, 2)), constant_values=1.5),
    ),
    "nn.upsampling": Case(
        [X4],
        {"scale_h": 2, "scale_w": 2},
        lambda x: x.repeat(2, axis=2).repeat(2, axis=3),
    ),
    "nn.dropout": unary(lambda x: x),
    "nn.deformable_conv2d": Case(
        [X4, data((1, 18, 4, 4), kind="unit"), data((5, 4, 3, 3))],
        {"kernel_size": (3, 3), "channels": 5},
        lambda x, off, w: ref.deformable_conv2d_nchw_python(
            x, off, w, (1, 1), (0, 0), (1, 1), 1, 1
        ),
        rtol=1e-4,
    ),
    "nn.nll_loss": Case(
        [data((3, 5)), np.array([0, 2, 4], "int64"), data((5,), kind="pos")],
        {},
        lambda p, t, w: ref.nll_loss(p, t, w, "mean", -100),
        rtol=1e-4,
    ),
    "nn.adaptive_max_pool2d": Case(
        [X4], {"output_size": (3, None)}, lambda x: ref.adaptive_pool(x, (3, 6), "max", "NCHW")
    ),
    "nn.adaptive_max_pool3d": Case(
        [data((1, 2, 4, 4, 4))],
        {"output_size": 2},
        lambda x: ref.adaptive_pool(x, (2, 2, 2), "max", "NCDHW"),
    ),
    "nn.adaptive_max_pool1d": Case(
        [data((1, 3, 8))], {"output_size": 3}, lambda x: ref.adaptive_pool(x, (3,), "max", "NCW")
    ),
    "nn.space_to_batch_nd": Case(
        [data((1, 4, 4, 2))],
        {"block_shape": [2, 2], "paddings": [[0, 0], [0, 0]]},
        # (TVM's space_to_batch_nd_python calls NumPy 2's removed reshape(newshape=).)
        lambda x: x.reshape(1, 2, 2, 2, 2, 2).transpose(2, 4, 0, 1, 3, 5).reshape(4, 2, 2, 2),
    ),
    "nn.batch_to_space_nd": Case(
        [data((4, 2, 2, 2))],
        {"block_shape": [2, 2], "crops": [[0, 0], [0, 0]]},
        lambda x: x.reshape(2, 2, 1, 2, 2, 2).transpose(2, 3, 0, 4, 1, 5).reshape(1, 4, 4, 2),
    ),
    "nn.upsampling3d": Case(
        [data((1, 2, 2, 3, 2))],
        {"scale_d": 2, "scale_h": 2, "scale_w": 3, "coordinate_transformation_mode": "asymmetric"},
        lambda x: x.repeat(2, 2).repeat(2, 3).repeat(3, 4),
    ),
    "nn.correlation": Case(
        [data((1, 3, 6, 6)), data((1, 3, 6, 6))],
        {"kernel_size": 3, "max_displacement": 1, "stride1": 1, "stride2": 1, "padding": 2},
        lambda a, b: ref.correlation_nchw_python(a, b, 3, 1, 1, 1, 2, True),
        rtol=1e-4,
    ),
    "nn.lrn": Case(
        [data((1, 6, 3, 3))],
        {"size": 3, "axis": 1, "bias": 1.5, "alpha": 0.01, "beta": 0.75},
        lambda x: ref.lrn_python(x, 3, 1, 1.5, 0.01, 0.75),
    ),
    "nn.l2_normalize": Case(
        [data((2, 3, 4))],
        {"eps": 1e-3, "axis": [1, 2]},
        lambda x: x / np.sqrt(np.maximum((x * x).sum((1, 2), keepdims=True), 1e-3)),
    ),
    "nn.depth_to_space": Case(
        [data((1, 8, 2, 3))],
        {"block_size": 2, "mode": "CRD"},
        # (TVM's depth_to_space_python calls NumPy 2's removed reshape(newshape=).)
        lambda x: x.reshape(1, 2, 2, 2, 2, 3).transpose(0, 1, 4, 2, 5, 3).reshape(1, 2, 4, 6),
    ),
    "nn.space_to_depth": Case(
        [data((1, 2, 4, 6))],
        {"block_size": 2},
        lambda x: x.reshape(1, 2, 2, 2, 3, 2).transpose(0, 3, 5, 1, 2, 4).reshape(1, 8, 2, 3),
    ),
    "nn.global_max_pool1d": Case([_X3], {}, lambda x: x.max(2, keepdims=True)),
    "nn.global_avg_pool1d": Case([_X3], {}, lambda x: x.mean(2, keepdims=True)),
    "nn.global_max_pool3d": Case([_X5], {}, lambda x: x.max((2, 3, 4), keepdims=True)),
    "nn.global_avg_pool3d": Case([_X5], {}, lambda x: x.mean((2, 3, 4), keepdims=True)),
    # 2x2 windows, stride 2: the gradient goes to each window's maximum, or is spread evenly.
    "nn.max_pool2d_grad": Case(
        [_GRAD, _X44], {"pool_size": (2, 2), "strides": (2, 2)}, lambda g, x: _max_grad(g, x)
    ),
    "nn.avg_pool2d_grad": Case(
        [_GRAD, _X44],
        {"pool_size": (2, 2), "strides": (2, 2)},
        lambda g, x: np.repeat(np.repeat(g, 2, 2), 2, 3) / 4,
    ),
    "nn.mirror_pad": Case(
        [_X44],
        {"pad_width": ((0, 0), (0, 0), (1, 2), (2, 1)), "mode": "REFLECT"},
        lambda x: np.pad(x, ((0, 0), (0, 0), (1, 2), (2, 1)), "reflect"),
    ),
    "nn.dilate": Case([_X44], {"strides": (1, 1, 2, 2)}, lambda x: _dilate(x)),
    "nn.cross_entropy": Case(
        [data((2, 3), kind="pos"), data((2, 3))], {}, lambda p, t: -(np.log(p) * t).sum() / 2
    ),
    "nn.cross_entropy_with_logits": Case(
        [data((2, 3)), data((2, 3))], {}, lambda p, t: -(p * t).sum() / 2
    ),
    "nn.bitpack": Case(
        [np.array([[1, 0, 1, 1, 0, 0, 0, 1]], "uint8")],
        {"bits": 1, "pack_axis": 1, "bit_axis": 2, "pack_type": "uint8"},
        lambda x: np.array([[[0b10110001]]], "uint8"),
    ),
    # The packed weight [units // 2, in, 2] is the plain [units, in] weight, two rows a block.
    "nn.contrib_dense_pack": Case(
        [data((2, 3)), _PACKED],
        {"weight_layout": "NC2n"},
        lambda x, w: x @ w.transpose(0, 2, 1).reshape(4, 3).T,
    ),
    # Unsigned 2-bit operands: the bit-serial product is the integer product.
    "nn.bitserial_dense": Case(
        [_BITS_A, _BITS_B],
        {"data_bits": 2, "weight_bits": 2, "pack_dtype": "uint8", "unipolar": False},
        lambda a, b: a.astype("int16") @ b.T.astype("int16"),
    ),
    # NCHW4c data and OIHW4i4o kernel: the NCHW convolution, blocked.
    "nn.contrib_conv2d_nchwc": Case(
        [
            X4.reshape(1, 1, 4, 6, 6).transpose(0, 1, 3, 4, 2),
            _K44.reshape(1, 4, 1, 4, 3, 3).transpose(0, 2, 4, 5, 3, 1),
        ],
        {
            "kernel_size": (3, 3),
            "channels": 4,
            "data_layout": "NCHW4c",
            "kernel_layout": "OIHW4i4o",
        },
        lambda x, k: _conv_nchw(X4, _K44).reshape(1, 1, 4, 4, 4).transpose(0, 1, 3, 4, 2),
        rtol=1e-4,
    ),
    # The weight gradient of conv2d(x, w) (stride 1, padding 1) for an output gradient g.
    "nn.contrib_depthwise_conv2d_nchwc": Case(
        [
            X4.reshape(1, 1, 4, 6, 6).transpose(0, 1, 3, 4, 2),
            _KD.reshape(1, 4, 1, 1, 3, 3).transpose(0, 2, 4, 5, 3, 1),
        ],
        {
            "kernel_size": (3, 3),
            "channels": 4,
            "groups": 4,
            "data_layout": "NCHW4c",
            "kernel_layout": "OIHW1i4o",
        },
        lambda x, k: (
            np.einsum(
                "nchwyx,cyx->nchw",
                np.lib.stride_tricks.sliding_window_view(X4, (3, 3), axis=(2, 3)),
                _KD[:, 0],
            )
            .reshape(1, 1, 4, 4, 4)
            .transpose(0, 1, 3, 4, 2)
        ),
        rtol=1e-4,
    ),
    "nn.conv2d_backward_weight": Case(
        [_GRAD_OUT, X4[:, :2, :4, :4]],
        {"kernel_size": (3, 3), "padding": (1, 1), "channels": 3},
        lambda g, x: np.einsum(
            "noyx,niyxhw->oihw",
            g,
            np.lib.stride_tricks.sliding_window_view(
                np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))), (3, 3), axis=(2, 3)
            ),
        ),
        rtol=1e-4,
    ),
    "nn.contrib_conv2d_winograd_weight_transform": Case(
        [_K3], {"tile_size": 2}, lambda k: np.einsum("ar,oirs,bs->aboi", _G_F2_3, k, _G_F2_3)
    ),
    "nn.contrib_conv3d_winograd_weight_transform": Case(
        [_K3[..., None, :, :].repeat(3, 2)],
        {"tile_size": 2},
        lambda k: np.einsum("ar,bs,ct,oirst->abcoi", _G_F2_3, _G_F2_3, _G_F2_3, k),
    ),
}


def _max_grad(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    windows = x.reshape(1, 1, 2, 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(1, 1, 2, 2, 4)
    hot = np.eye(4, dtype=x.dtype)[windows.argmax(-1)] * g[..., None]
    return hot.reshape(1, 1, 2, 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(1, 1, 4, 4)


def _conv_nchw(x: np.ndarray, k: np.ndarray) -> np.ndarray:
    windows = np.lib.stride_tricks.sliding_window_view(x, k.shape[2:], axis=(2, 3))
    return np.einsum("nihwyx,oiyx->nohw", windows, k)


def _dilate(x: np.ndarray) -> np.ndarray:
    out = np.zeros((1, 1, 7, 7), x.dtype)
    out[:, :, ::2, ::2] = x
    return out


test_every_row_has_a_case, test_relay_op_matches_reference = family_tests(nn, CASES)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_deformable_conv2d_infers_untyped_offset_and_weight_as_relay_did(layout):
    shape = (2, 4, 9, 9) if layout == "NCHW" else (2, 9, 9, 4)
    x = relay.var("x", shape=shape)
    offset, weight = relay.var("offset"), relay.var("weight")
    call = relay.nn.deformable_conv2d(
        x,
        offset,
        weight,
        strides=(2, 2),
        padding=(1, 1),
        data_layout=layout,
        kernel_layout="OIHW" if layout == "NCHW" else "HWIO",
        kernel_size=(3, 3),
        deformable_groups=2,
        channels=6,
    )
    typed = relay.testing.run_infer_type(call)
    taps = 2 * 3 * 3 * 2  # (y, x) per tap per deformable group
    if layout == "NCHW":
        want = [(2, taps, 5, 5), (6, 4, 3, 3), (2, 6, 5, 5)]
    else:
        want = [(2, 5, 5, taps), (3, 3, 4, 6), (2, 5, 5, 6)]
    got = [typed.args[1].checked_type, typed.args[2].checked_type, typed.checked_type]
    assert got == [relay.TensorType(s) for s in want]


def test_matmul_transposes_swap_the_last_two_axes_of_an_nd_operand():
    a, b = data((2, 3, 5, 4)), data((6, 5))
    x, w = relay.var("x", shape=a.shape), relay.var("w", shape=b.shape)
    y = relay.nn.matmul(x, w, transpose_a=True, transpose_b=True)
    assert relay.testing.run_infer_type(y).checked_type == relay.TensorType((2, 3, 4, 6))
    got = relay.create_executor("graph", target="llvm").evaluate(relay.Function([x, w], y))(a, b)
    np.testing.assert_allclose(got.numpy(), np.swapaxes(a, -1, -2) @ b.T, rtol=1e-4)


@pytest.mark.parametrize(
    ("data_layout", "kernel_layout"), [("NCHW", "OIHW"), ("NHWC", "HWOI"), ("NHWC", "IOHW")]
)
def test_conv2d_transpose_in_any_relay_layout_builds_and_matches(data_layout, kernel_layout):
    # TVM 0.27 lowers only NCHW/IOHW: the other layouts are permuted into those and back.
    x_nchw, w_iohw = data((1, 3, 4, 5)), data((3, 2, 3, 3))
    x = x_nchw.transpose(["NCHW".index(c) for c in data_layout])
    w = w_iohw.transpose(["IOHW".index(c) for c in kernel_layout])
    xv, wv = relay.var("x", shape=x.shape), relay.var("w", shape=w.shape)
    y = relay.nn.conv2d_transpose(
        xv,
        wv,
        strides=(2, 2),
        padding=(1, 1),
        output_padding=(1, 1),
        channels=2,
        kernel_size=(3, 3),
        data_layout=data_layout,
        kernel_layout=kernel_layout,
    )
    got = relay.create_executor("graph", target="llvm").evaluate(relay.Function([xv, wv], y))(x, w)
    want = ref.conv2d_transpose_nchw_python(x_nchw, w_iohw, 2, 1, (1, 1))
    got_nchw = got.numpy().transpose([data_layout.index(c) for c in "NCHW"])
    np.testing.assert_allclose(got_nchw, want, rtol=1e-4, atol=1e-5)


def test_pad_with_a_tensor_pad_value_pads_with_its_value():
    x = data((2, 3))
    xv = relay.var("x", shape=x.shape)
    value = relay.var("value", shape=(), dtype="float32")
    body = relay.nn.pad(xv, ((1, 0), (2, 1)), pad_value=value)
    typed = relay.testing.run_infer_type(body)
    assert typed.checked_type == relay.TensorType((3, 6), "float32")
    func = relay.Function([xv, value], body)
    got = relay.create_executor("graph", target="llvm").evaluate(func)(x, np.array(-7, "float32"))
    np.testing.assert_array_equal(got.numpy(), np.pad(x, ((1, 0), (2, 1)), constant_values=-7))


@pytest.mark.parametrize(("size", "axis", "dtype"), [(4, 1, "float32"), (6, 3, "float16")])
def test_lrn_of_an_even_size_sums_half_the_size_on_each_side(size, axis, dtype):
    # TOPI refuses even sizes (TVM 0.19 typed the call, then failed at its build).
    x = data((1, 5, 4, 7)).astype(dtype)
    xv = relay.var("x", shape=x.shape, dtype=dtype)
    y = relay.nn.lrn(xv, size=size, axis=axis, bias=0.5, alpha=0.01, beta=0.75)
    assert relay.testing.run_infer_type(y).checked_type == relay.TensorType(x.shape, dtype)
    got = relay.create_executor("graph", target="llvm").evaluate(relay.Function([xv], y))(x)
    want = ref.lrn_python(x, size, axis, 0.5, 0.01, 0.75)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5 if dtype == "float32" else 2e-3)


@pytest.mark.parametrize(("transpose_a", "transpose_b", "want"), [
    (False, False, (5, 2)), (True, False, (4, 2)), (False, True, (2, 5))])  # fmt: skip
def test_matmul_infers_an_untyped_second_operand_from_units(transpose_a, transpose_b, want):
    x = relay.var("x", shape=(3, 4, 5))
    w = relay.var("w", relay.IncompleteType())
    y = relay.nn.matmul(x, w, units=2, transpose_a=transpose_a, transpose_b=transpose_b)
    typed = relay.testing.run_infer_type(y)
    assert typed.args[1].checked_type == relay.TensorType(want)
    assert typed.checked_type.shape[-1] == 2


def test_pools_print_their_pool_size_even_at_its_default():
    x = relay.var("x", shape=(1, 2, 4, 4))
    assert "pool_size=[1, 1]" in relay.nn.max_pool2d(x).astext()
    assert "pool_size=[1]" in relay.nn.avg_pool1d(relay.var("y", shape=(1, 2, 4))).astext()
    assert "strides=" not in relay.nn.max_pool2d(x).astext()


def test_an_untyped_weight_of_a_packed_layout_conv2d_is_inferred():
    # NCHW4n4c data holds 8 x 4 channels; OIHW4o4i weights split O and I by 4 each.
    x = relay.var("x", relay.TensorType((1, 8, 10, 10, 4, 4), "int8"))
    packed = {"data_layout": "NCHW4n4c", "kernel_layout": "OIHW4o4i", "out_dtype": "int32"}
    y = relay.nn.conv2d(x, relay.var("w"), kernel_size=3, padding=1, channels=16, **packed)
    typed = relay.testing.run_infer_type(y)
    assert typed.args[1].checked_type == relay.TensorType((4, 8, 3, 3, 4, 4), "int8")
    assert typed.checked_type == relay.TensorType((1, 4, 10, 10, 4, 4), "int32")


def _conv_transpose_numpy(x, w, stride, pad, out_pad):
    """NCHW data, IOHW weights: the whole transposed convolution, cropped by ``pad`` before and
    ``pad - out_pad`` after (zeros past its end)."""
    n, _, h, wd = x.shape
    k = w.shape[2]
    full = np.zeros((n, w.shape[1], *((d - 1) * stride + k + out_pad for d in (h, wd))))
    for i, j in itertools.product(range(h), range(wd)):
        full[:, :, i * stride : i * stride + k, j * stride : j * stride + k] += np.einsum(
            "ni,iokl->nokl", x[:, :, i, j], w
        )
    size = [(d - 1) * stride - 2 * pad + k + out_pad for d in (h, wd)]
    return full[:, :, pad : pad + size[0], pad : pad + size[1]]


@pytest.mark.parametrize(("stride", "pad", "out_pad"), [(1, 0, 1), (1, 1, 2), (2, 1, 2)])
def test_conv2d_transpose_takes_an_output_padding_of_a_stride_or_more(stride, pad, out_pad):
    # Relax refuses it; TVM 0.19 cropped less of the whole transposed convolution, then zeros.
    x, w = data((1, 2, 4, 3)), data((2, 3, 3, 3))
    xv, wv = relay.var("x", shape=x.shape), relay.var("w", shape=w.shape)
    y = relay.nn.conv2d_transpose(xv, wv, strides=stride, padding=pad, output_padding=out_pad,
                                  channels=3, kernel_size=3)  # fmt: skip
    got = relay.create_executor("graph", target="llvm").evaluate(relay.Function([xv, wv], y))(x, w)
    want = _conv_transpose_numpy(x, w, stride, pad, out_pad)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-5)
