"""docs/relay-programs.md: its tutorial program runs as written (from_onnx -> relay.build ->
export_library -> load_module -> GraphModule -> benchmark / time_evaluator)."""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("onnx")

from compile_engine_compat.surfaces.import_alias import installed, uninstall

PAGE = Path(__file__).parents[2] / "docs" / "relay-programs.md"


def _program() -> str:
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 1, "the page shows one program"
    return blocks[0]


def test_the_documented_program_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # it writes deploy.so where it runs, as the tutorials do
    was = installed()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # every legacy call warns; not what is tested here
            namespace: dict[str, Any] = {"__name__": "relay_program"}
            exec(compile(_program(), str(PAGE), "exec"), namespace)
            assert namespace["ftimer"]().mean > 0
    finally:
        if not was:
            uninstall()
    printed = capsys.readouterr().out
    assert "mean (ms)" in printed
    assert "mean inference time:" in printed
    assert (tmp_path / "deploy.so").exists() and (tmp_path / "deploy.so.relay.json").exists()
