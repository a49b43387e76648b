"""TVM 0.19's public names under ``install()``: served or refused at the call, never missing.

The census itself (``tests/upstream/census.py``) runs once, in a child process, over the
committed name list; the other tests check the refusal machinery on real names.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import types

import pytest

import compile_engine_compat
from compile_engine_compat.surfaces import import_alias as _import_alias
from compile_engine_compat.surfaces import v019_surface

ROOT = pathlib.Path(__file__).resolve().parents[2]
CENSUS = ROOT / "tests" / "upstream" / "census.py"
PAGE = ROOT / "docs" / "relay-surface.md"


@pytest.fixture
def alias():
    compile_engine_compat.install()
    yield
    compile_engine_compat.uninstall()


@pytest.fixture(scope="module")
def census(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, str, str]:
    out = tmp_path_factory.mktemp("census")
    proc = subprocess.run(
        [sys.executable, str(CENSUS), "--check", "--json", str(out / "c.json"),
         "--docs", str(out / "page.md")],
        capture_output=True, text=True, cwd=ROOT, timeout=600,
    )  # fmt: skip
    result = json.loads((out / "c.json").read_text()) if (out / "c.json").is_file() else {}
    page = (out / "page.md").read_text() if (out / "page.md").is_file() else ""
    return result, page, proc.stdout + proc.stderr


def test_the_name_list_covers_the_relay_era_surface():
    data = v019_surface.snapshot()
    assert len(data["modules"]) >= 40 and sum(map(len, data["modules"].values())) > 1000
    assert {"CallGraph", "post_order_visit", "well_formed"} <= v019_surface.module_names(
        "tvm.relay.analysis"
    )
    assert "get_input_info" in data["classes"]["tvm.contrib.graph_executor:GraphModule"]
    assert "tvm.autotvm.graph_tuner" in v019_surface.legacy_modules()
    assert "tvm.relay.frontend.common" in data["modules"]


def test_no_public_v019_name_is_missing(census):
    result, _, output = census
    assert result, output
    missing = [f"{m}.{n}: {why}" for m, names in result.items()
               for n, (status, why) in names.items() if status == "missing"]  # fmt: skip
    assert missing == [], "\n".join(missing[:30])
    listed = v019_surface.snapshot()
    assert set(result) == set(listed["modules"]) | set(listed["classes"])


def test_the_docs_page_is_up_to_date(census):
    _, page, output = census
    assert page, output

    def body(text: str) -> list[str]:  # all but the line stating the date and versions
        return [line for line in text.splitlines() if not line.startswith("Generated ")]

    stale = "stale: python tests/upstream/census.py --docs docs/relay-surface.md"
    assert body(page) == body(PAGE.read_text()), f"docs/relay-surface.md is {stale}"
    result = census[0]
    served = {f"{m}.{n}" for m, names in result.items() if ":" not in m
              for n, (status, _) in names.items() if status == "served"}  # fmt: skip
    assert served == v019_surface.served_names(), f"v019_served.json is {stale}"


@pytest.mark.parametrize(
    ("statement", "use"),
    [
        ("from tvm.relay.analysis import get_calibration_data", "get_calibration_data(None, {})"),
        ("import tvm.autotvm.graph_tuner as gt", "gt.DPTuner(None, {}, [], [], 'llvm')"),
        ("from tvm.relay import data_dep_optimization as ddo", "ddo.bsr_dense.convert(None, {})"),
        ("from tvm.contrib.debugger.debug_executor import create", "create('', None, None)"),
        ("import tvm", "tvm.runtime.ndarray.numpyasarray(None)"),
    ],
)
def test_an_unserved_name_imports_and_refuses_at_the_call(alias, statement, use):
    namespace: dict = {}
    exec(statement, namespace)  # the import never raises
    with pytest.raises(NotImplementedError, match=r"MIGRATION\.md#[a-z0-9-]+ \(run") as info:
        exec(use, namespace)
    assert isinstance(info.value, _import_alias.RelayRemovedCallError)


def test_a_refused_class_can_be_subclassed_and_refuses_when_instantiated(alias):
    from tvm.autotvm.graph_tuner import DPTuner

    class MyTuner(DPTuner):
        pass

    with pytest.raises(_import_alias.RelayRemovedCallError, match="tvm-autotvm-tuning"):
        MyTuner()


def test_a_served_definition_wins_over_the_refusal(alias):
    served = types.ModuleType("served_analysis")
    served.CallGraph = "the real one"  # type: ignore[attr-defined]
    _import_alias._refuse_unserved("tvm.relay.analysis", served)
    try:
        assert served.CallGraph == "the real one"
        assert _import_alias.is_refused(served.post_order_visit)
        with pytest.raises(AttributeError, match="no attribute 'not_a_v019_name'"):
            served.not_a_v019_name  # noqa: B018
        served.post_order_visit = "defined later"  # type: ignore[attr-defined]
        assert served.post_order_visit == "defined later"
    finally:
        _import_alias._restore_unserved()


def test_a_served_class_gets_refusals_only_for_the_methods_it_lacks(alias):
    from tvm.contrib.graph_executor import GraphModule

    listed = v019_surface.class_methods("tvm.contrib.graph_executor")["GraphModule"]
    refused = {m for m in listed if _import_alias.is_refused(getattr(GraphModule, m))}
    assert "set_input" not in refused and "run" not in refused
    for method in refused:
        with pytest.raises(_import_alias.RelayRemovedCallError, match="GraphModule"):
            getattr(GraphModule, method)()


def test_uninstall_removes_every_refusal():
    compile_engine_compat.install()
    import tvm
    import tvm.relay.analysis

    assert _import_alias.is_refused(tvm.relay.analysis.get_calibration_data)
    compile_engine_compat.uninstall()
    analysis = sys.modules["compile_engine_compat.relay.analysis"]
    assert "__getattr__" not in analysis.__dict__ or not getattr(
        analysis.__dict__["__getattr__"], "_legacy_fallback", False
    )
    assert not hasattr(tvm, "gpu")
