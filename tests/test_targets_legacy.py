"""TVM <=0.19 command-line target strings, translated to the dict form as the shim takes them."""

from __future__ import annotations

import json
import warnings
from typing import Any

import numpy as np
import pytest
import tvm
from _builders import add3, dense_bias_relu, run_jit

from compile_engine_compat import CompileEngineDeprecationWarning
from compile_engine_compat import targets as _cache
from compile_engine_compat import targets as _legacy_target
from compile_engine_compat.targets import (
    DROPPED_FLAGS,
    REMOVED_FLAGS,
    LegacyTargetError,
    host_target,
)


@pytest.fixture(autouse=True)
def _fresh_translations():
    """Each distinct string warns once per process: start every test with none seen."""
    _cache._target_from_str.cache_clear()
    _legacy_target.legacy_spelling.cache_clear()
    yield
    _cache._target_from_str.cache_clear()
    _legacy_target.legacy_spelling.cache_clear()


# One row per legacy flag: the string and what its dict form must hold.
FLAG_CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "mcpu": ("llvm -mcpu=core-avx2", {"kind": "llvm", "mcpu": "core-avx2"}),
    "mtriple": ("llvm -mtriple=aarch64-linux-gnu", {"mtriple": "aarch64-linux-gnu"}),
    "mattr": ("llvm -mattr=+avx2,+fma", {"mattr": ["+avx2", "+fma"]}),
    "keys": ("llvm -keys=arm_cpu,cpu", {"keys": ["arm_cpu", "cpu"]}),
    "device": ("llvm -device=arm_cpu", {"device": "arm_cpu"}),
    "model": ("llvm -model=rasp3b", {"model": "rasp3b"}),
    "libs": ("llvm -libs=cblas", {"libs": ["cblas"]}),
    "arch": ("cuda -arch=sm_80", {"kind": "cuda", "arch": "sm_80"}),
    "max_num_threads": ("cuda -max_num_threads=512", {"max_num_threads": 512}),
    "double_dash_flag": ("llvm --mcpu=skylake", {"mcpu": "skylake"}),
    "host": (
        "cuda -arch=sm_80 -host='llvm -mcpu=x86-64-v3'",
        {"host": {"kind": "llvm", "mcpu": "x86-64-v3"}},
    ),
    "bool_flag": ("llvm -fast-math", {"fast-math": True}),
    "system-lib": ("llvm --system-lib", {"kind": "llvm"}),
    "-system-lib": ("llvm -system-lib -mcpu=skylake", {"mcpu": "skylake"}),
    "link-params": ("llvm -link-params=1", {"kind": "llvm"}),
}


def _warned_replacement(record: list[warnings.WarningMessage]) -> str:
    legacy = [w.message for w in record if isinstance(w.message, CompileEngineDeprecationWarning)]
    assert len(legacy) == 1, [str(w.message) for w in record]
    assert legacy[0].api == "target.cli_string"
    return legacy[0].replacement


@pytest.mark.parametrize("case", list(FLAG_CASES), ids=str)
def test_each_flag_translates_and_warns_with_its_dict_spelling(case):
    text, expected = FLAG_CASES[case]
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        target = _cache.as_target(text)
    exported = json.loads(str(target))
    for key, value in expected.items():
        if isinstance(value, dict):
            assert {k: exported[key][k] for k in value} == value
        else:
            assert exported[key] == value, (key, exported)
    replacement = _warned_replacement(record)
    assert replacement.startswith("tvm.target.Target({")
    spelled = json.loads(replacement[len("tvm.target.Target(") :].split(")")[0])
    # The spelling is the translation; a plain llvm one then runs on the host CPU (_host_cpu).
    translated = host_target(tvm.target.Target(spelled))
    assert translated == target or str(translated) == str(target)
    for name in DROPPED_FLAGS:
        if name in text:
            assert f"-{name} is not a target option any more" in replacement


def test_a_string_warns_once_per_process():
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        first = _cache.as_target("llvm -mcpu=haswell")
        second = _cache.as_target("llvm -mcpu=haswell")
    assert first is not None
    assert first.same_as(second)
    _warned_replacement(record)


def test_warning_points_at_the_callers_line(engine):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        engine.lower(add3((4,)), "llvm -mcpu=x86-64")  # the line the warning must name
    target_warnings = [
        w
        for w in record
        if isinstance(w.message, CompileEngineDeprecationWarning)
        and w.message.api == "target.cli_string"
    ]
    assert len(target_warnings) == 1
    assert target_warnings[0].filename == __file__


def test_plain_kinds_tags_and_json_pass_through_without_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plain = _cache.as_target("llvm")
        assert plain is not None and plain.kind.name == "llvm"
        from_json = _cache.as_target('{"kind": "llvm", "mcpu": "skylake"}')
        assert from_json is not None and from_json.attrs["mcpu"] == "skylake"
    assert _legacy_target.translate("llvm") is None


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("llvm -mcpux=skylake", "-mcpux"),
        ("cuda -mattr=+avx2", "-mattr"),
        ("llvm -num-cores=four", "-num-cores=four"),
        ("llvm -mcpu", "-mcpu"),
        ("llvm -fast-math=maybe", "-fast-math=maybe"),
        ("llvm mcpu=skylake", "'mcpu=skylake'"),
        ("llvmx -mcpu=skylake", "'llvmx'"),
        ("llvm -host='llvm -mcpu", "cannot parse"),
    ],
)
def test_bad_flags_raise_naming_the_flag_at_the_call(engine, text, named):
    with pytest.raises(LegacyTargetError, match=named.replace("+", r"\+")) as info:
        engine.lower(add3((4,)), text)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("flag", sorted(REMOVED_FLAGS))
def test_relay_executor_and_runtime_flags_are_refused(flag):
    with pytest.raises(LegacyTargetError, match=f"-{flag} was removed with Relay"):
        _cache.as_target(f"llvm -{flag}=c")


def test_lower_shows_the_translated_target_and_jit_computes(engine):
    cached = engine.lower(dense_bias_relu(), "llvm -mcpu=x86-64-v3 -mattr=+avx2,+fma")
    assert cached.target.attrs["mcpu"] == "x86-64-v3"
    assert list(cached.target.attrs["mattr"]) == ["+avx2", "+fma"]
    kernel = engine.jit(dense_bias_relu(), "llvm -mcpu=x86-64-v3 -mattr=+avx2,+fma")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8)).astype("float32")
    w = rng.standard_normal((8, 16)).astype("float32")
    b = rng.standard_normal((16,)).astype("float32")
    (out,) = run_jit(kernel, cached, x, w, b)
    np.testing.assert_allclose(out, np.maximum(x @ w + b, 0), rtol=1e-5, atol=1e-5)


def test_the_legacy_string_and_its_dict_share_one_cache_entry(engine):
    legacy = engine.lower(add3((4,)), "llvm -mcpu=skylake")
    modern = engine.lower(add3((4,)), {"kind": "llvm", "mcpu": "skylake"})
    assert legacy is modern
    assert len(engine.items()) == 1
