"""``relay.testing`` workloads: each builds with Relay's arguments, runs through ``relay.build``
+ ``GraphModule``, and equals the same module run through ``tvm.compile`` + the Relax VM.

Small sizes run by default; the full-size ones (224x224 and the like) run with
``pytest -m workloads tests/relay/testing`` (several minutes on 2 cores).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import tvm
from tvm import relax

from compile_engine_compat import relay
from compile_engine_compat.tvm_legacy.graph_executor import GraphModule

T = relay.testing

#: name -> a get_workload call at a tiny size (default suite).
SMALL: dict[str, Callable[[], Any]] = {
    "mlp": lambda: T.mlp.get_workload(batch_size=1, image_shape=(1, 8, 8)),
    "resnet18_nchw": lambda: T.resnet.get_workload(image_shape=(3, 32, 32), num_classes=10),
    "resnet8_cifar_nhwc": lambda: T.resnet.get_workload(
        num_layers=8, image_shape=(16, 16, 3), layout="NHWC", num_classes=10
    ),
    "resnet8_cifar": lambda: T.resnet.get_workload(
        num_layers=8, image_shape=(3, 16, 16), num_classes=10
    ),
    "mobilenet": lambda: T.mobilenet.get_workload(image_shape=(3, 16, 16), num_classes=10),
    "squeezenet": lambda: T.squeezenet.get_workload(
        version="1.1", image_shape=(3, 48, 48), num_classes=10
    ),
    "vgg11": lambda: T.vgg.get_workload(1, image_shape=(3, 32, 32), num_classes=10),
    "dcgan": lambda: T.dcgan.get_workload(1, ngf=4, random_len=8),
    "synthetic": lambda: T.synthetic.get_workload(),
    "dqn": lambda: T.dqn.get_workload(1, num_actions=4, image_shape=(4, 36, 36)),
    "lstm": lambda: T.lstm.get_workload(iterations=3, num_hidden=4),
    "resnet_3d": lambda: T.resnet_3d.get_workload(
        num_layers=8, image_shape=(3, 4, 16, 16), num_classes=10
    ),
}

#: name -> a get_workload call at the tutorials' size (opt-in: -m workloads).
FULL: dict[str, Callable[[], Any]] = {
    "resnet18": lambda: T.resnet.get_workload(num_layers=18),
    "resnet34": lambda: T.resnet.get_workload(num_layers=34),
    "resnet50": lambda: T.resnet.get_workload(num_layers=50),
    "resnet50_nhwc": lambda: T.resnet.get_workload(
        num_layers=50, image_shape=(224, 224, 3), layout="NHWC"
    ),
    "mobilenet": lambda: T.mobilenet.get_workload(),
    "mobilenet_nhwc": lambda: T.mobilenet.get_workload(image_shape=(224, 224, 3), layout="NHWC"),
    "squeezenet1.0": lambda: T.squeezenet.get_workload(),
    "vgg16": lambda: T.vgg.get_workload(1, num_layers=16, batch_norm=True),
    "dcgan": lambda: T.dcgan.get_workload(1),
    "densenet121": lambda: T.densenet.get_workload(batch_size=1),
    "inception_v3": lambda: T.inception_v3.get_workload(),
}


def _input(mod: tvm.IRModule) -> np.ndarray:
    ty = mod["main"].params[0].ty
    shape = [int(d) for d in ty.shape]
    return np.random.default_rng(0).uniform(-1, 1, shape).astype(str(ty.dtype))


def _through_relay_build(mod: tvm.IRModule, params: dict[str, Any], data: np.ndarray) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lib = relay.build(mod, target="llvm", params=params)
        module = GraphModule(lib["default"](tvm.cpu()))
        module.set_input("data", data)
        module.run()
        return module.get_output(0).numpy()


def _through_tvm_compile(mod: tvm.IRModule, params: dict[str, Any], data: np.ndarray) -> Any:
    vm = relax.VirtualMachine(tvm.compile(mod, "llvm"), tvm.cpu())
    args = [tvm.runtime.tensor(data)] + [params[p.name] for p in mod["main"].params[1:]]
    return vm["main"](*args).numpy()


def _check(make: Callable[[], Any]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mod, params = make()
    assert mod["main"].params[0].name == "data"
    assert set(params) == {p.name for p in mod["main"].params[1:]}
    data = _input(mod)
    ours = _through_relay_build(mod, params, data)
    modern = _through_tvm_compile(mod, params, data)
    assert ours.shape == modern.shape and np.isfinite(ours).all()
    np.testing.assert_allclose(ours, modern, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_small_workload_matches_tvm_compile(name):
    _check(SMALL[name])


@pytest.mark.workloads
@pytest.mark.parametrize("name", sorted(FULL))
def test_full_size_workload_matches_tvm_compile(name):
    _check(FULL[name])


@pytest.mark.parametrize(
    ("make", "count"),
    [
        (lambda: T.densenet.get_workload(batch_size=1, classes=10), 606),
        (lambda: T.inception_v3.get_workload(num_classes=10), 472),
    ],
    ids=["densenet121", "inception_v3"],
)
def test_the_largest_workloads_build_at_full_size(make, count):
    """Built, not compiled, by default (compiling them takes minutes: -m workloads)."""
    mod, params = make()
    assert len(params) == count == len(mod["main"].params) - 1
    assert [int(d) for d in mod["main"].ret_ty.shape] == [1, 10]


def test_relays_initializers_and_names():
    _, params = T.mlp.get_workload(batch_size=2, num_classes=4, image_shape=(1, 3, 3))
    assert sorted(params) == [f"fc{i}_{k}" for i in (1, 2, 3) for k in ("bias", "weight")]
    assert params["fc1_weight"].shape == (128, 9) and params["fc3_weight"].shape == (4, 64)
    assert not params["fc1_bias"].numpy().any()
    bound = np.sqrt(3.0 / ((9 + 128) / 2.0))  # Xavier, uniform, factor "avg"
    weights = params["fc1_weight"].numpy()
    assert np.abs(weights).max() <= bound and np.abs(weights).max() > bound / 2
    again = T.mlp.get_workload(batch_size=2, num_classes=4, image_shape=(1, 3, 3))[1]
    np.testing.assert_array_equal(again["fc1_weight"].numpy(), weights)  # seed 0 each time
    _, resnet = T.resnet.get_workload(num_layers=18, image_shape=(3, 32, 32))
    assert not {"bn_data_gamma", "bn_data_moving_var"} - set(resnet)
    assert resnet["bn_data_moving_var"].numpy().min() == 1.0
    constant = T.synthetic.get_workload()[1]["conv_weight"].numpy()
    assert np.isclose(constant.sum(), 1.0)  # init.Constant: each weight sums to one


def test_layers_rand_and_bad_arguments():
    data = relay.var("data", shape=(1, 3, 8, 8))
    conv = T.layers.conv2d(data, channels=4, kernel_size=(3, 3), name="c")
    dense = T.layers.dense_add_bias(relay.nn.batch_flatten(conv), units=2, name="d")
    names = [v.name_hint for v in relay.analysis.free_vars(dense)]
    assert names == ["data", "c_weight", "d_weight", "d_bias"]
    assert T.layers.conv_kernel_layout("NHWC", is_depthwise=True) == "HWOI"
    x = T.rand("float32", 2, 3)
    assert x.shape == (2, 3) and str(x.dtype) == "float32"
    with pytest.raises(ValueError, match="num_layers 19"):
        T.resnet.get_workload(num_layers=19)
    with pytest.raises(ValueError, match=r"1\.0 or 1\.1"):
        T.squeezenet.get_workload(version="2.0")
    with pytest.raises(ValueError, match="11,13,16,19"):
        T.vgg.get_workload(1, num_layers=12)
    with pytest.raises(ValueError, match="64x64"):
        T.dcgan.get_workload(1, oshape=(3, 32, 32))
    with pytest.raises(ValueError, match="Unknown initialization pattern"):
        T.init.Xavier()("thing", np.zeros((2, 2)))


def test_a_tutorial_program_runs_under_install():
    """tune_relay_x86.py without the tuning: workload, Target string, passes, build, run."""
    import compile_engine_compat
    from compile_engine_compat.surfaces.import_alias import installed

    was = installed()
    compile_engine_compat.install()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from tvm import autotvm
            from tvm import relay as tvm_relay
            from tvm.contrib import graph_executor

            mod, params = tvm_relay.testing.resnet.get_workload(
                num_layers=8, image_shape=(3, 16, 16), num_classes=10
            )
            target = tvm.target.Target("llvm -opt-level=2")
            with autotvm.apply_history_best(None), tvm.transform.PassContext(opt_level=3):
                mod = tvm.transform.Sequential(
                    [tvm_relay.transform.SimplifyInference(), tvm_relay.transform.FoldConstant()]
                )(mod)
                lib = tvm_relay.build(mod, target=target, params=params)
            module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
            data = tvm.nd.array(_input(mod))
            module.set_input("data", data)
            module.run()
            out = module.get_output(0).asnumpy()
        np.testing.assert_allclose(out.sum(), 1.0, rtol=1e-5)  # softmax over 10 classes
        assert out.shape == (1, 10)
    finally:
        if not was:
            compile_engine_compat.uninstall()
