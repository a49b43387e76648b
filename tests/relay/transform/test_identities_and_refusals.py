"""``relay.transform``'s identities, refusals and infrastructure classes."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm import relax

from compile_engine_compat import relay
from compile_engine_compat.relay.transform.graph_rewrites import GRAPH_REWRITE_KINDS
from compile_engine_compat.relay.transform.identities import IDENTITY_KINDS
from compile_engine_compat.relay.transform.module_functions import MODULE_PASS_KINDS
from compile_engine_compat.relay.transform.refused import REFUSED_PASSES
from compile_engine_compat.surfaces.import_alias import RelayRemovedCallError

T = relay.transform


def _module() -> tvm.IRModule:
    x = relay.var("x", shape=(2, 8))
    w1, w2 = relay.var("w1", shape=(4, 8)), relay.var("w2", shape=(4, 8))
    body = relay.Tuple([relay.exp(relay.nn.dense(x, w1)), relay.tanh(relay.nn.dense(x, w2))])
    return tvm.IRModule.from_expr(relay.Function([x, w1, w2], body))


def _run(mod: tvm.IRModule) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    args = [rng.random((2, 8), "float32"), rng.random((4, 8), "float32") / 4]
    vm = relax.VirtualMachine(tvm.compile(mod, "llvm"), tvm.cpu())
    out = vm["main"](*[tvm.runtime.tensor(a) for a in [args[0], args[1], args[1]]])
    return [o.numpy() for o in out]


def _make(name: str) -> tvm.transform.Pass:
    args = {"SplitArgs": (8,), "PlanDevices": (None,)}.get(name, ())
    return getattr(T, name)(*args)


@pytest.mark.parametrize("name", sorted(IDENTITY_KINDS))
def test_each_pass_is_a_tvm_pass_with_relays_name_that_keeps_the_numbers(name):
    mod = _module()
    p = _make(name)
    assert isinstance(p, tvm.transform.Pass) and p.info.name == name
    with tvm.transform.PassContext(opt_level=4):
        out = p(mod)
    for got, want in zip(_run(out), _run(mod)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    if name in IDENTITY_KINDS:
        assert out.same_as(mod)


def test_fast_math_replaces_exp_and_tanh():
    with tvm.transform.PassContext(opt_level=4):
        out = T.FastMath()(_module())
    assert set(relay.analysis.list_op_freqs(out)) == {"fast_exp", "fast_tanh", "nn.dense"}
    for got, want in zip(_run(out), _run(_module()), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5)


def test_the_kinds_tables_cover_every_pass_once():
    names = [*IDENTITY_KINDS, *GRAPH_REWRITE_KINDS, *REFUSED_PASSES]
    names += list(MODULE_PASS_KINDS)
    assert len(names) == len(set(names))
    for name in names:
        assert hasattr(T, name) and name in T.__all__


@pytest.mark.parametrize("name", sorted(REFUSED_PASSES))
def test_refused_passes_import_and_refuse_when_called(name):
    from compile_engine_compat.relay.transform import transform as legacy_path

    stand_in = getattr(T, name)  # the import works
    assert getattr(legacy_path, name) is stand_in
    with pytest.raises(RelayRemovedCallError, match=name):
        stand_in()


def test_layout_config_is_a_context_and_function_pass_is_relaxs_class():
    with T.LayoutConfig(skip_layers=[1]) as config:
        assert T.LayoutConfig.current is config
        assert [config.check_skip(), config.check_skip()] == [False, True]
    assert T.LayoutConfig.current is None
    assert T.FunctionPass is relax.transform.FunctionPass
    x = relay.var("x")
    assert T.ToANormalFormExpr(x) is x


def test_the_docs_page_gives_each_pass_its_kind_and_opt_level():
    from pathlib import Path

    page = Path(__file__).resolve().parents[3] / "docs" / "relay-passes-and-workloads.md"
    rows = {
        line.split("`")[1].split("(")[0]: line
        for line in page.read_text().splitlines()
        if line.startswith("| `")
    }
    args: dict[str, tuple[object, ...]] = {"ChangeBatch": ({},), "SimplifyFCTranspose": ([],)}
    args["FlexibleShapeDispatch"] = ([1],)
    kinds = {**GRAPH_REWRITE_KINDS, **IDENTITY_KINDS, **MODULE_PASS_KINDS}
    for name, kind in kinds.items():
        level = getattr(T, name)(*args.get(name, ())).info.opt_level if name != "SplitArgs" else 1
        assert f"| {level} | {kind} |" in rows[name], name
