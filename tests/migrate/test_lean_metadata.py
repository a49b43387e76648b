"""``LeanMetadataWrapper`` resolves the same metadata as libcst's ``MetadataWrapper``."""

from __future__ import annotations

import subprocess
import sys

import libcst as cst
import libcst.metadata as md

from compile_engine_compat.migrate.lean_libcst import LeanMetadataWrapper

CODE = """\
import tvm
from tvm import relay as r
class Engine:
    def jit(self, x=[y for y in range(3)]):
        global tvm
        e = r.backend.compile_engine.get()
        return lambda q: e.jit(q) + x
try:
    from tvm.relay.backend import te_compiler
except ImportError:
    te_compiler = None
"""


class _Names(md.BatchableMetadataProvider[str]):
    """A provider that works per node (``visit_Name``): walked as libcst walks it."""

    def visit_Name(self, node: cst.Name) -> None:
        self.set_metadata(node, node.value.upper())


class _Nothing(md.BatchableMetadataProvider[str]):
    """A provider with no visit method at all."""


PROVIDERS = (
    md.ExpressionContextProvider,
    md.ScopeProvider,
    md.QualifiedNameProvider,
    md.ParentNodeProvider,
    _Names,
    _Nothing,
)


class _Collect(cst.CSTVisitor):
    """Every node in walk order, with what each provider says about it."""

    METADATA_DEPENDENCIES = PROVIDERS

    def __init__(self) -> None:
        super().__init__()
        self.nodes: list[cst.CSTNode] = []
        self.said: list[list[object]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.nodes.append(node)
        self.said.append([self.get_metadata(provider, node, None) for provider in PROVIDERS])
        return True


def _described(wrapper: md.MetadataWrapper) -> list[tuple[str, list[object]]]:
    """The metadata of every node, with nodes named by their walk index (the two wrappers hold
    different module objects)."""
    collect = _Collect()
    wrapper.visit(collect)
    index = {id(node): number for number, node in enumerate(collect.nodes)}

    def plain(value: object) -> object:
        if isinstance(value, cst.CSTNode):
            return index.get(id(value))
        if isinstance(value, md.Scope):
            return type(value).__name__, index.get(id(getattr(value, "node", None)))
        if isinstance(value, set | frozenset):
            return sorted(getattr(item, "name", str(item)) for item in value)
        return value

    return [
        (type(node).__name__, [plain(value) for value in said])
        for node, said in zip(collect.nodes, collect.said, strict=True)
    ]


def test_the_same_metadata_as_libcsts_wrapper() -> None:
    expected = _described(md.MetadataWrapper(cst.parse_module(CODE)))
    assert _described(LeanMetadataWrapper(cst.parse_module(CODE))) == expected
    # The sample exercises every provider (a provider with no methods gives nothing).
    for column in range(len(PROVIDERS) - 1):
        assert any(said[column] is not None for _, said in expected), PROVIDERS[column]
    assert all(said[-1] is None for _, said in expected)


def test_libcst_is_patched_on_the_first_wrapper_not_at_import():
    """The providers' cached get_visitors is a process patch: made through the boundary (listed
    by active_patches) when the first wrapper is made, never by importing the module."""
    code = (
        "import libcst as cst, libcst.metadata as md\n"
        "from compile_engine_compat import boundary\n"
        "from compile_engine_compat.migrate import lean_libcst\n"
        "before = 'get_visitors' in vars(md.ScopeProvider)\n"
        "lean_libcst.parsed('x = 1\\n')\n"
        "after = 'get_visitors' in vars(md.ScopeProvider)\n"
        "print(before, after, 'libcst.metadata.scope_provider.ScopeProvider.get_visitors' "
        "in boundary.active_patches())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True", "True"], done.stdout
