"""``relay.analysis``'s counts, features, layers, call graph and fused functions."""

from __future__ import annotations

import tvm

from compile_engine_compat import relay

A = relay.analysis


def _net() -> tvm.IRModule:
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(4, 3, 3, 3))
    y = relay.nn.conv2d(x, w, channels=4, kernel_size=(3, 3), padding=(1, 1))
    z = relay.nn.relu(y + y)
    fw = relay.var("fw", shape=(256, 10))
    d = relay.nn.dense(relay.nn.batch_flatten(z), relay.transpose(fw, [1, 0]))
    return tvm.IRModule.from_expr(relay.Function([x, w, fw], d))


def test_mac_count_of_conv_and_dense():
    mod = relay.transform.InferType()(_net())
    assert A.get_total_mac_number(mod["main"]) == 4 * 64 * 27 + 10 * 256


def test_mac_count_of_a_depthwise_conv_and_a_batch_matmul():
    x = relay.var("x", shape=(1, 8, 6, 6))
    conv = relay.nn.conv2d(x, relay.var("w", shape=(8, 1, 3, 3)), kernel_size=(3, 3), groups=8)
    assert A.get_total_mac_number(conv) == 8 * 4 * 4 * 9
    bm = relay.nn.batch_matmul(relay.var("a", shape=(2, 3, 5)), relay.var("b", shape=(2, 4, 5)))
    assert A.get_total_mac_number(bm) == 2 * 3 * 4 * 5


def test_op_freqs_layers_features_and_fc_transpose():
    mod = _net()
    freqs = A.list_op_freqs(mod)
    assert freqs == {
        "nn.conv2d": 1,
        "add": 1,
        "nn.relu": 1,
        "nn.batch_flatten": 1,
        "transpose": 1,
        "nn.dense": 1,
    }
    assert A.count_layers(mod, ["nn.conv2d", "nn.dense"]) == 2
    assert A.count_layers(mod, ["nn.relu"]) == 1
    feats = A.detect_feature(mod["main"])
    assert feats == {
        A.Feature.fVar,
        A.Feature.fFunction,
        A.Feature.fOp,
        A.Feature.fCall,
        A.Feature.fGraph,  # y + y: one value, two uses
    }
    assert A.search_fc_transpose(mod["main"]) == ["fw"]


def test_extract_intermediate_expr_numbers_values_in_post_order():
    mod = _net()
    first = A.extract_intermdeiate_expr(mod, 0)
    assert [p.name for p in first["main"].params] == ["x", "w"]
    assert "R.Tensor((1, 4, 8, 8)" in first.script()
    last = A.extract_intermdeiate_expr(mod, 5)
    assert [p.name for p in last["main"].params] == ["x", "w", "fw"]


def test_extract_fused_functions_returns_relays_primitive_functions():
    # TVM 0.19's groups: conv2d + add + relu, batch_flatten, transpose, dense
    funcs = A.extract_fused_functions(_net())
    assert all(int(f.attrs["Primitive"]) == 1 for f in funcs.values())
    heads = sorted(f.body.op.name for f in funcs.values())
    assert heads == ["nn.batch_flatten", "nn.dense", "nn.relu", "transpose"]


def test_call_graph_counts_references_and_calls(installed_alias):
    # install(): mod[name] = relay.Function stores its Relax form (TVM 0.27 alone drops it)
    mod = tvm.IRModule({})
    a, b = relay.var("a", shape=(2,)), relay.var("b", shape=(2,))
    g0 = relay.GlobalVar("g0")
    mod[g0] = relay.Function([a, b], a + b)
    p = relay.var("p", shape=(2,))
    mod["main"] = relay.Function([p], g0(p, p) * g0(p, p))
    graph = A.CallGraph(mod)
    assert graph.ref_count(g0) == 2 and graph.ref_count("main") == 0
    assert graph.global_call_count("main") == 2 and graph.global_call_count(g0) == 0
    assert not graph.is_recursive("main")
    assert "#refs = 2" in graph.print_var("g0") and str(graph).index("main") < str(graph).index(
        "Call graph node: g0"
    )
    assert graph.module.same_as(mod)


def test_detect_feature_sees_references_constructors_matches_and_global_calls():
    header = relay.GlobalTypeVar("Opt")
    some = relay.Constructor("Some_", [relay.TypeVar("a")], header)
    x, r = relay.Var("x"), relay.Var("r")
    match = relay.Match(some(relay.const(1)), [relay.Clause(relay.PatternVar(x), x)])
    body = relay.Let(r, relay.RefCreate(match), relay.RefWrite(r, relay.RefRead(r)))
    F = A.Feature
    found = A.detect_feature(relay.Function([], body))
    assert {F.fConstructor, F.fMatch, F.fRefCreate, F.fRefRead, F.fRefWrite} <= found
    assert F.fGraph not in found
    assert F.fGlobalVar in A.detect_feature(relay.Call(relay.GlobalVar("g"), [relay.const(1)]))
