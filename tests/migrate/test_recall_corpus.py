"""The must-find corpus: every binding form of the legacy API, each with the findings it must give.

Each form is a small project (file -> code). A line that must produce findings ends with
``# expect: CEC101 CEC102`` (one rule id per finding, in any order); every other line must produce
none. Rule ids, not row names: a form that finds the right line under the wrong rule fails.
"""

from __future__ import annotations

import ast
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from compile_engine_compat import cli
from compile_engine_compat.migrate.scan import scan_paths

_EXPECT = re.compile(r"# expect: ((?:CEC\d{3}\s*)+)$")

#: name -> {relative path: code}. A path under a folder with ``__init__.py`` files is a package.
FORMS: dict[str, dict[str, str]] = {
    "import_dotted": {
        "app.py": (
            "import tvm.relay.backend.compile_engine  # expect: CEC101\n"
            "engine = tvm.relay.backend.compile_engine.get()  # expect: CEC102\n"
        )
    },
    "import_dotted_as": {
        "app.py": (
            "import tvm.relay.backend.compile_engine as ce  # expect: CEC101\n"
            "key = ce.CCacheKey(f, t)  # expect: CEC112\n"
        )
    },
    "from_backend_import": {
        "app.py": (
            "from tvm.relay.backend import compile_engine  # expect: CEC101\n"
            "compile_engine.get().clear()  # expect: CEC102 CEC106\n"
        )
    },
    "from_backend_import_as_get": {
        "app.py": (
            "from tvm.relay.backend import compile_engine as ce  # expect: CEC101\n"
            "ce.get()  # expect: CEC102\n"
        )
    },
    "from_backend_import_as_get_jit": {
        "app.py": (
            "from tvm.relay.backend import compile_engine as ce  # expect: CEC101\n"
            "kernel = ce.get().jit(f, t)  # expect: CEC102 CEC105\n"
        )
    },
    "from_backend_import_as_engine_variable": {
        "app.py": (
            "from tvm.relay.backend import compile_engine as ce  # expect: CEC101\n"
            "eng = ce.get(); eng.lower(f, t)  # expect: CEC102 CEC104\n"
        )
    },
    "from_backend_import_as_other_name": {
        "app.py": (
            "import numpy as np\n"
            "from tvm.relay.backend import compile_engine as _engine_module  # expect: CEC101\n"
            "\n"
            "def build(f, t):\n"
            "    key = _engine_module.CCacheKey(f, t)  # expect: CEC112\n"
            "    return np.zeros(3), key\n"
        )
    },
    "from_module_import_as": {
        "app.py": (
            "from tvm.relay.backend.compile_engine import get as get_engine  # expect: CEC102\n"
            "kernel = get_engine().jit(f, t)  # expect: CEC102 CEC105\n"
        )
    },
    "star_from_module": {
        "app.py": (
            "from tvm.relay.backend.compile_engine import *  # expect: CEC101\n"
            "cached = get().lower(f, t)  # expect: CEC102 CEC104\n"
            "key = CCacheKey(f, t)  # expect: CEC112\n"
            "other = obj.get()\n"
        )
    },
    "star_from_backend_package": {
        "app.py": (
            "from tvm.relay.backend import *\nengine = compile_engine.get()  # expect: CEC102\n"
        )
    },
    "chain_from_tvm_import_relay": {
        "app.py": (
            "from tvm import relay\nengine = relay.backend.compile_engine.get()  # expect: CEC102\n"
        )
    },
    "chain_import_tvm": {
        "app.py": "import tvm\ntvm.relay.backend.te_compiler.get()  # expect: CEC202\n"
    },
    "chain_import_tvm_as": {
        "app.py": "import tvm as t\nt.relay.backend.compile_engine.get()  # expect: CEC102\n"
    },
    "chain_import_relay_as": {
        "app.py": "import tvm.relay as R\nR.backend.compile_engine.get()  # expect: CEC102\n"
    },
    "chain_from_tvm_import_relay_as_then_engine": {
        "app.py": (
            "from tvm import relay as r\n"
            "eng = r.backend.compile_engine.get()  # expect: CEC102\n"
            "eng.jit(f, t)  # expect: CEC105\n"
        )
    },
    "chain_from_relay_import_backend": {
        "app.py": (
            "from tvm.relay import backend\nbackend.compile_engine.get()  # expect: CEC102\n"
        )
    },
    "chain_from_relay_import_backend_as": {
        "app.py": (
            "from tvm.relay import backend as B\n"
            "B.te_compiler.get().lower(f, t)  # expect: CEC202 CEC204\n"
        )
    },
    "getattr_module_from_backend_chain": {
        "app.py": (
            "from tvm import relay\n"
            'ce = getattr(relay.backend, "compile_engine")  # expect: CEC101\n'
        )
    },
    "getattr_module_from_backend_name": {
        "app.py": (
            "from tvm.relay import backend\n"
            'tc = getattr(backend, "te_compiler")  # expect: CEC201\n'
        )
    },
    "getattr_member_of_alias": {
        "app.py": (
            "from tvm.relay.backend import compile_engine as ce  # expect: CEC101\n"
            'jit = getattr(ce.get(), "jit")  # expect: CEC102 CEC105\n'
        )
    },
    "importlib_chain": {
        "app.py": (
            "import importlib\n"
            'importlib.import_module("tvm.relay.backend.compile_engine").get()'
            "  # expect: CEC101 CEC102\n"
        )
    },
    "importlib_then_getattr": {
        "app.py": (
            "import importlib\n"
            'ce = importlib.import_module("tvm.relay.backend.te_compiler")  # expect: CEC201\n'
            'getattr(ce, "lower_to_primfunc")(f, t)  # expect: CEC215\n'
        )
    },
    "module_alias_by_assignment": {
        "app.py": (
            "from tvm.relay.backend import compile_engine  # expect: CEC101\n"
            "ce2 = compile_engine\n"
            "ce2.get()  # expect: CEC102\n"
        )
    },
    "module_alias_on_self": {
        "app.py": (
            "from tvm.relay.backend import compile_engine  # expect: CEC101\n"
            "class Runner:\n"
            "    def __init__(self):\n"
            "        self.ce = compile_engine\n"
            "    def run(self, f, t):\n"
            "        return self.ce.get().jit(f, t)  # expect: CEC102 CEC105\n"
        )
    },
    "engine_on_self": {
        "app.py": (
            "from tvm.relay.backend import compile_engine as ce  # expect: CEC101\n"
            "class Runner:\n"
            "    def __init__(self):\n"
            "        self.engine = ce.get()  # expect: CEC102\n"
            "    def run(self, f, t):\n"
            "        return self.engine.lower(f, t)  # expect: CEC104\n"
        )
    },
    "function_local_import": {
        "app.py": (
            "def build(f, t):\n"
            "    from tvm.relay.backend import compile_engine as ce  # expect: CEC101\n"
            "    return ce.get().jit(f, t)  # expect: CEC102 CEC105\n"
        )
    },
    "conditional_import": {
        "app.py": (
            "import sys\n"
            "if sys.version_info >= (3, 6):\n"
            "    from tvm.relay.backend import compile_engine as ce  # expect: CEC101\n"
            "engines = [ce.get() for _ in range(2)]  # expect: CEC102\n"
        )
    },
    "multiline_parenthesized_import": {
        "app.py": (
            "from tvm.relay.backend import (\n"
            "    compile_engine as ce,  # expect: CEC101\n"
            ")\n"
            "ce.get(  # expect: CEC102 CEC106\n"  # a node's finding is where it starts
            ").clear()\n"
        )
    },
    "annotation_and_isinstance": {
        "app.py": (
            "from tvm.relay.backend import compile_engine as ce  # expect: CEC101\n"
            "def check(engine: ce.CompileEngine, key) -> bool:  # expect: CEC103\n"
            "    return isinstance(key, ce.CCacheKey)  # expect: CEC112\n"
        )
    },
    "te_compiler_lower_to_primfunc_as": {
        "app.py": (
            "from tvm.relay.backend.te_compiler import lower_to_primfunc as l2p"
            "  # expect: CEC215\n"
            "prim = l2p(f, t)  # expect: CEC215\n"
        )
    },
    "te_compiler_module": {
        "app.py": (
            "from tvm.relay.backend import te_compiler  # expect: CEC201\n"
            "te_compiler.get().items()  # expect: CEC202 CEC207\n"
        )
    },
    "backend_ffi_namespace": {
        "app.py": (
            "from tvm.relay.backend import _backend\n"
            "engine = _backend._CompileEngineGlobal()  # expect: CEC303\n"
        )
    },
    "registered_global_by_name": {
        "app.py": (
            "import tvm\n"
            'lower = tvm.get_global_func("relay.backend._CompileEngineLower")  # expect: CEC305\n'
        )
    },
    "pass_config_keys": {
        "app.py": (
            "import tvm\n"
            "with tvm.transform.PassContext(\n"
            '    config={"relay.backend.use_auto_scheduler": True,  # expect: CEC401\n'
            '            "tir.disable_vectorize": True}):  # expect: CEC608\n'
            "    pass\n"
        )
    },
    "relative_in_a_tvm_tree": {
        "python/tvm/__init__.py": "",
        "python/tvm/relay/__init__.py": "",
        "python/tvm/relay/transform/__init__.py": "",
        "python/tvm/relay/transform/memory_alloc.py": (
            "from ..backend import compile_engine  # expect: CEC101\n"
            "engine = compile_engine.get()  # expect: CEC102\n"
        ),
    },
    "relative_inside_another_package": {
        "myproj/__init__.py": "",
        "myproj/sub/__init__.py": "",
        "myproj/sub/lowering.py": (
            "from ..backend import compile_engine  # expect: CEC101\n"
            "engine = compile_engine.get()  # expect: CEC102\n"
        ),
    },
    "relative_to_the_projects_own_module_is_not_legacy": {
        "myproj/__init__.py": "",
        "myproj/backend/__init__.py": "",
        "myproj/backend/compile_engine.py": "def get():\n    return None\n",
        "myproj/sub/__init__.py": "",
        "myproj/sub/lowering.py": (
            "from ..backend import compile_engine\nengine = compile_engine.get()\n"
        ),
    },
    "relative_outside_any_package": {
        "loose.py": (
            "from ..relay.backend import compile_engine as ce  # expect: CEC101\n"
            "ce.get()  # expect: CEC102\n"
        )
    },
    "tvm_tree_definition_files_are_not_reported": {
        "python/tvm/__init__.py": "",
        "python/tvm/relay/__init__.py": "",
        "python/tvm/relay/backend/__init__.py": "from . import compile_engine\n",
        "python/tvm/relay/backend/_backend.py": 'tvm._ffi._init_api("relay.backend", __name__)\n',
        "python/tvm/relay/backend/compile_engine.py": (
            "from . import _backend\n"
            "@tvm._ffi.register_func('relay.backend.lower_call')\n"
            "def lower_call(call, inputs, target):\n"
            "    return _backend._CompileEngineLower(None, None, None)\n"
        ),
        "python/tvm/relay/backend/graph_codegen.py": (
            "from . import compile_engine  # expect: CEC101\n"
            "engine = compile_engine.get()  # expect: CEC102\n"
        ),
    },
    "guarded_import_and_prose_are_not_reported": {
        "app.py": (
            '"""Uses tvm.relay.backend.compile_engine.get() in prose."""\n'
            "try:\n"
            "    from tvm.relay.backend import compile_engine as ce\n"
            "except ImportError:\n"
            "    ce = None\n"
            "# ce.get().jit(f, t)\n"
            'message = "compile_engine.get"\n'
        )
    },
    "noqa_suppresses_one_rule": {
        "app.py": (
            "from tvm.relay.backend import compile_engine as ce  # noqa: CEC101\n"
            "ce.get()  # expect: CEC102\n"
        )
    },
    "notebook_cells": {
        "nb.ipynb": "",  # written by _write from NOTEBOOK_CELLS
    },
}

NOTEBOOK_CELLS = [
    "from tvm.relay.backend import compile_engine as ce  # expect: CEC101\n",
    "%matplotlib inline\nengine = ce.get()  # expect: CEC102\nengine.jit(f, t)  # expect: CEC105\n",
]


def _write(root: Path, files: dict[str, str]) -> None:
    import json

    for name, code in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if name.endswith(".ipynb"):
            cells = [
                {"cell_type": "code", "metadata": {}, "outputs": [], "source": cell}
                for cell in NOTEBOOK_CELLS
            ]
            code = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
        path.write_text(code, encoding="utf-8")


def _expected(files: dict[str, str]) -> Counter:
    expected: Counter = Counter()
    for name, code in files.items():
        cells = NOTEBOOK_CELLS if name.endswith(".ipynb") else [code]
        for index, text in enumerate(cells):
            cell = index if name.endswith(".ipynb") else None
            for number, line in enumerate(text.splitlines(), start=1):
                match = _EXPECT.search(line)
                if match:
                    for code_id in match.group(1).split():
                        expected[(name, cell, number, code_id)] += 1
    return expected


def test_the_corpus_has_at_least_thirty_forms_each_expecting_something_or_nothing_on_purpose():
    assert len(FORMS) >= 30
    empty = {name for name, files in FORMS.items() if not _expected(files)}
    assert empty == {
        "relative_to_the_projects_own_module_is_not_legacy",
        "guarded_import_and_prose_are_not_reported",
    }


@pytest.mark.parametrize("form", sorted(FORMS))
def test_each_form_gives_exactly_its_findings(tmp_path, form):
    _write(tmp_path, FORMS[form])
    findings, skipped = scan_paths([str(tmp_path)])
    assert skipped == []
    found = Counter((f.path, f.cell, f.line, f.code) for f in findings)
    assert found == _expected(FORMS[form])
    # No two findings are the same (issue: duplicated findings on apache/tvm v0.7.0).
    assert len({(f.path, f.cell, f.line, f.col, f.code, f.detail) for f in findings}) == len(
        findings
    )


@pytest.mark.parametrize(
    "form",
    sorted(
        name
        for name, files in FORMS.items()
        if _expected(files)
        and all(path.endswith(".py") for path in files)
        and "noqa" not in str(files)  # fix keeps what noqa covers: test_fix covers it
    ),
)
def test_fix_leaves_only_what_needs_a_person(tmp_path, form):
    """After ``fix``, every safe finding is gone and the code still parses."""
    _write(tmp_path, FORMS[form])
    before, _ = scan_paths([str(tmp_path)])
    assert cli.main(["fix", str(tmp_path)]) == 0
    after, skipped = scan_paths([str(tmp_path)])
    assert skipped == []
    assert all(f.fix == "manual" for f in after), [(f.line, f.code, f.fix) for f in after]
    # What the shim now serves is no longer legacy: only fewer manual findings, never new ones.
    assert Counter(f.code for f in after) <= Counter(f.code for f in before if f.fix == "manual")
    for path in tmp_path.rglob("*.py"):
        ast.parse(path.read_text(encoding="utf-8"))
    shutil.rmtree(tmp_path)


def test_fix_leaves_a_tvm_trees_definition_files_alone(tmp_path):
    files = FORMS["tvm_tree_definition_files_are_not_reported"]
    _write(tmp_path, files)
    assert cli.main(["fix", "--isolated", "--unsafe", str(tmp_path)]) == 0
    backend = "python/tvm/relay/backend/"
    for name in ("__init__.py", "_backend.py", "compile_engine.py"):
        assert (tmp_path / backend / name).read_text() == files[backend + name], name
    # The tree's other files that use the engine are fixed.
    assert "compile_engine_compat" in (tmp_path / backend / "graph_codegen.py").read_text()
