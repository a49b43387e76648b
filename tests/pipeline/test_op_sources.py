"""One hop to an op's TE (issue 14, item 3): pipeline/op_sources.py says where it comes from."""

from __future__ import annotations

import ast
import pathlib

import pytest
from tvm import topi

from compile_engine_compat import cli
from compile_engine_compat.pipeline import op_sources
from compile_engine_compat.pipeline.implementations import OpImplementation, temp_strategy
from compile_engine_compat.pipeline.op_sources import te_source

PIPELINE = pathlib.Path(op_sources.__file__).parent


def test_a_fallback_names_its_function_and_file():
    source = te_source("relax.sort")
    assert source.kind == "fallback"
    assert "compile_engine_compat.pipeline.op_sources._sort" in source.where
    assert "op_sources.py:" in source.where


def test_a_legalization_names_where_tvm_registers_it():
    source = te_source("add")
    assert source.kind == "legalization"
    assert "legalize_ops/binary.py:" in source.where
    assert 'register_legalize("relax.add"' in source.where
    assert te_source("nn.conv2d").where.endswith('@register_legalize("relax.nn.conv2d")')


def test_rejected_and_unknown_ops():
    assert te_source("relax.call_tir").kind == "rejected"
    with pytest.raises(ValueError, match=r"'relax\.no_such_op' is not a registered op"):
        te_source("no_such_op")


def test_a_user_strategy_comes_first_and_says_what_it_falls_back_to():
    def compute(attrs, inputs, out_type):
        return [topi.exp(inputs[0])]

    with temp_strategy("exp", [OpImplementation("my_exp", compute, plevel=20)]):
        source = te_source("exp")
        assert source.kind == "user strategy"
        assert "my_exp" in source.where
        assert source.then is not None and source.then.kind == "legalization"
        assert "otherwise legalization" in str(source)
    assert te_source("exp").kind == "legalization"


def test_the_command_prints_the_source(capsys):
    assert cli.main(["op", "relax.topk", "add"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(
        "relax.topk: fallback: compile_engine_compat.pipeline.op_sources._topk"
    )
    assert out[1].startswith("relax.add: legalization: ")
    assert cli.main(["op", "bogus"]) == 2


def test_op_facts_of_the_pipeline_live_in_op_sources_only():
    # No other pipeline module keeps a table keyed by op names: one hop to an op's TE.
    offenders = []
    for path in PIPELINE.glob("*.py"):
        if path.name == "op_sources.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Dict) and any(
                isinstance(key, ast.Constant)
                and isinstance(key.value, str)
                and key.value.startswith("relax.")
                for key in node.keys
            ):
                offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []


def test_the_fallbacks_are_the_ops_lowered_by_dedicated_passes():
    assert set(op_sources.FALLBACK_LOWERINGS) == {
        "relax.cumsum",
        "relax.cumprod",
        "relax.sort",
        "relax.argsort",
        "relax.topk",
        "relax.bucketize",
    }
    assert all(callable(f) for f in op_sources.FALLBACK_LOWERINGS.values())
