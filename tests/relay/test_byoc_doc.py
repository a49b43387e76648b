"""docs/byoc.md: its vendor-style program runs as written (a DFPatternCallback rewrite, a pattern
table, MergeComposite -> AnnotateTarget -> MergeCompilerRegions -> PartitionGraph, a Python
relay.ext codegen emitting C, relay.build, export_library, load_module, GraphModule, NumPy)."""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

from compile_engine_compat.surfaces.import_alias import installed, uninstall

PAGE = Path(__file__).parents[2] / "docs" / "byoc.md"


def _program() -> str:
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 1, "the page shows one program"
    return blocks[0]


def test_the_documented_vendor_program_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # it writes myacc.so where it runs
    was = installed()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # every legacy call warns; not what is tested here
            namespace: dict[str, Any] = {"__name__": "byoc_program"}
            exec(compile(_program(), str(PAGE), "exec"), namespace)
    finally:
        if not was:
            uninstall()
    printed = capsys.readouterr().out
    assert "['main', 'tvmgen_default_myacc_main_0']" in printed  # one merged region
    assert "myacc matches NumPy" in printed
    assert (tmp_path / "myacc.so").exists()
    # The rewrite ran before partitioning: the composite took the add it made.
    mod = namespace["mod"]
    from compile_engine_compat.relay._impl.origin import relay_origin

    partition = relay_origin(mod["tvmgen_default_myacc_main_0"])
    assert partition.attrs["Compiler"] == "myacc"
    composites = [
        node.op.attrs["Composite"]
        for node in [partition.body, *partition.body.args]
        if hasattr(node, "op") and hasattr(node.op, "attrs")
    ]
    assert composites == ["myacc.add_relu"]
