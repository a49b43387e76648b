"""One spec per op (issue 14): every fact the test tooling knows about an op lives in its OpSpec.

The registry (``testing.op_plans.OPS``) maps each op to one spec that holds its NumPy reference,
input domains, discontinuity and drawing facts. These tests keep it that way: each op has exactly
one spec with a reference, and no module of ``compile_engine_compat/testing/`` keeps a side table
of op names (a dict, set or string list at module level, or a branch on an op's name) where a new
fact could drift away from the spec again.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from compile_engine_compat.testing import op_plans
from compile_engine_compat.testing.op_plans import (
    INDEX,
    NONZERO,
    OPS,
    POSITIVE,
    OpSpec,
    spec_for,
)

TESTING = Path(op_plans.__file__).resolve().parent
SPEC_MODULE = Path(op_plans.__file__).resolve()
#: The one module-level statement of the spec module that may name ops: the spec list itself.
SPEC_LIST = "_SPECS"
NAMES = frozenset(OPS)
TOKEN = re.compile(r"[A-Za-z0-9_.]+")


def _op_names_in(text: str) -> set[str]:
    """The registry ops that ``text`` names, bare (``"sort"``) or Relax (``"relax.sort"``)."""
    return {t.removeprefix("relax.") for t in TOKEN.findall(text)} & NAMES


def _strings(node: ast.AST) -> Iterator[tuple[ast.Constant, str]]:
    """Each string constant under ``node``, with its value."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            yield sub, sub.value


def _docstrings(tree: ast.Module) -> set[int]:
    """``id`` of every docstring constant (module, class, function)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Module- and class-level statements, not function bodies and not imports."""
    for stmt in body:
        if isinstance(stmt, ast.ClassDef):
            yield from _top_level(stmt.body)
        elif not isinstance(
            stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.Import | ast.ImportFrom
        ):
            yield stmt


def _assigns(stmt: ast.stmt, name: str) -> bool:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
    return any(isinstance(t, ast.Name) and t.id == name for t in targets)


def _is_a_name(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr.endswith("name")
    return isinstance(node, ast.Name) and node.id.endswith("name")


def _side_tables(path: Path) -> list[str]:
    """Where ``path`` keeps per-op facts outside the spec list: ``line: why`` each."""
    tree = ast.parse(path.read_text(), str(path))
    docs = _docstrings(tree)
    found = []
    for stmt in _top_level(tree.body):
        if path == SPEC_MODULE and _assigns(stmt, SPEC_LIST):
            continue
        for const, text in _strings(stmt):
            names = _op_names_in(text)
            if id(const) not in docs and names:
                found.append(f"{const.lineno}: module-level op names {sorted(names)}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            # A branch on an op's name is a per-op fact too; a bare name ("max") only counts
            # against a name (``spec.name``, ``op_name``): a pool's kind "max" is no op.
            sides = (node.left, *node.comparators)
            by_name = any(_is_a_name(side) for side in sides)
            for _, text in (pair for side in sides for pair in _strings(side)):
                if text.startswith("relax.") or (by_name and text in NAMES):
                    found.append(f"{node.lineno}: compares with the op name {text!r}")
    for const, text in _strings(tree):
        if id(const) not in docs and text.startswith("relax.") and text[6:] in NAMES:
            found.append(f"{const.lineno}: names the Relax op {text!r}")
    return sorted(set(found))


def _spec_calls() -> list[str]:
    """The first argument of every ``OpSpec(...)`` in the spec module, in order."""
    tree = ast.parse(SPEC_MODULE.read_text())
    return [
        text
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "OpSpec"
        and node.args
        for const, text in _strings(node.args[0])
    ]


def test_every_op_has_exactly_one_spec_and_it_holds_a_reference() -> None:
    written = _spec_calls()
    assert sorted(written) == sorted(OPS), "an op written twice, or a spec outside OPS"
    for name, spec in OPS.items():
        assert spec.name == name
        has = (spec.reference is not None, spec.shaped_reference is not None)
        assert has in ((True, False), (False, True)), f"{name}: one reference, plain or shaped"


def test_a_spec_without_a_reference_or_with_both_is_refused() -> None:
    add = OPS["add"]
    with pytest.raises(ValueError, match="exactly one"):
        OpSpec("x", add.dtypes, add.plan, add.build)
    with pytest.raises(ValueError, match="exactly one"):
        dataclasses.replace(add, shaped_reference=OPS["reshape"].shaped_reference)


def test_spec_facts_are_read_only_and_well_formed() -> None:
    for name, spec in OPS.items():
        assert set(spec.domains.values()) <= {POSITIVE, NONZERO, INDEX}, name
        assert all(isinstance(i, int) and i >= 0 for i in spec.domains), name
        assert spec.dtypes and spec.needs <= set(op_plans.ALL_DTYPES), name
    with pytest.raises(TypeError):
        OPS["log"].domains[0] = NONZERO  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        OPS["log"].discontinuous = True  # type: ignore[misc]


def test_spec_for_finds_a_spec_by_its_relax_name() -> None:
    assert spec_for("relax.sort") is OPS["sort"]
    assert spec_for("relax.nn.conv2d") is OPS["nn.conv2d"]
    assert spec_for("sort") is None  # a Relax name always has the prefix
    assert spec_for("relax.nn.batch_flatten") is None  # no spec: the oracle has no reference


def test_the_facts_that_moved_into_the_specs_kept_their_values() -> None:
    # What DISCONTINUOUS (interpret.py) and DOMAINS (op_references.py) said before the move.
    discontinuous = {n for n, s in OPS.items() if s.discontinuous}
    assert discontinuous == {
        "floor", "ceil", "sign", "equal", "not_equal", "less", "greater_equal", "argmax",
        "argmin", "argsort", "topk", "floor_divide", "floor_mod", "astype",
    }  # fmt: skip
    domains = {n: dict(s.domains) for n, s in OPS.items() if s.domains}
    assert domains == {
        "log": {0: POSITIVE},
        "sqrt": {0: POSITIVE},
        "rsqrt": {0: POSITIVE},
        "divide": {1: NONZERO},
        "floor_divide": {1: NONZERO},
        "floor_mod": {1: NONZERO},
        "power": {0: POSITIVE},
        "take": {1: INDEX},
    }
    assert {n for n, s in OPS.items() if s.shaped_reference} == {"reshape", "broadcast_to"}


@pytest.mark.parametrize("path", sorted(TESTING.glob("*.py")), ids=lambda p: p.name)
def test_no_testing_module_keeps_a_side_table_of_op_names(path: Path) -> None:
    assert _side_tables(path) == [], f"{path.name}: put the per-op fact in the op's OpSpec"


def test_the_side_table_check_finds_the_tables_it_forbids(tmp_path: Path) -> None:
    module = tmp_path / "tables.py"
    module.write_text(
        '"""Names sort and relax.topk in a docstring: allowed."""\n'
        'DOMAINS = {"relax.log": {0: "positive"}}\n'
        'DISCONTINUOUS = frozenset("floor ceil".split())\n'
        "def status(spec, kind):\n"
        '    """relax.sort"""\n'
        '    return spec.name == "argsort" or kind in ("relax.floor",)\n'
        "def domains(call):\n"
        '    return {"relax.take": 1}.get(call.op.name)\n'
        "def fill(kind):\n"
        '    return 0.0 if kind == "max" else {"max": 1}\n'  # a pool's kind, not an op: allowed
    )
    assert {int(line.split(":")[0]) for line in _side_tables(module)} == {2, 3, 6, 8}


def test_the_variance_conditioning_bound_follows_the_reference_tolerances() -> None:
    from compile_engine_compat.testing.op_references import MAX_VARIANCE_CONDITIONING
    from compile_engine_compat.testing.oracle import REFERENCE_TOLERANCES

    unit_roundoff = {"float32": 2.0**-24, "float16": 2.0**-11}
    for dtype, bound in MAX_VARIANCE_CONDITIONING.items():
        assert bound == REFERENCE_TOLERANCES[dtype].rtol / (8 * unit_roundoff[dtype])
