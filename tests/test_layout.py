"""The package's layout, read from its imports: floors that only point down, no private reach-ins.

The house is built in floors (README, "Architecture"): the foundation (the API table, the
boundary, the deprecation machinery, targets), the legacy surfaces beside TVM, the pipeline's
five stages and the cache (which only stores), the facade that composes them, the front ends, and
the tooling on top. A module may import its own floor or the floors below it, never above; the
pipeline and the cache never import each other; and no module imports another module's
underscore names. Read statically with ``ast``: nothing is imported.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import compile_engine_compat

PACKAGE_DIR = Path(compile_engine_compat.__file__).resolve().parent
PACKAGE = "compile_engine_compat"

#: Top-level module or folder of the package -> its floor (0 is the foundation).
FLOORS: dict[str, int] = {
    "version": 0,
    "boundary": 0,
    "conflicts": 0,
    "api_table": 0,
    "library_files": 0,
    "new_files": 0,
    "thread_pool": 0,
    "threads": 0,
    "deprecations": 1,
    "targets": 1,
    "surfaces": 2,
    "pipeline": 3,
    "cache": 3,
    "facade": 4,
    "schedules": 5,
    "relay": 5,
    "tvm_legacy": 6,
    "testing": 6,
    "migrate": 6,
    "compile_engine": 6,
    "te_compiler": 6,
    "cli": 7,
    "pytest_plugin": 7,
    "examples": 7,
    "__init__": 7,
}
#: Folders on one floor that must not know each other.
STRANGERS = {frozenset({"pipeline", "cache"})}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _is_module(name: str) -> bool:
    path = PACKAGE_DIR.parent / name.replace(".", "/")
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _imports(path: Path, module: str | None = None) -> Iterator[tuple[int, str, list[str]]]:
    """(line, imported module, names taken from it) for every package import in ``path``."""
    module = module or _module_name(path)
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == PACKAGE:
                    yield node.lineno, alias.name, []
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source.split(".")[0] != PACKAGE:
                continue
            names = [alias.name for alias in node.names]
            submodules = [f"{source}.{n}" for n in names if _is_module(f"{source}.{n}")]
            if submodules and len(submodules) == len(names):
                for sub in submodules:  # ``from pkg import module``: an import of the module
                    yield node.lineno, sub, []
            else:
                yield node.lineno, source, names


def _floor_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


SOURCES = sorted(PACKAGE_DIR.rglob("*.py"))


def test_every_top_level_module_has_a_floor():
    top = {p.stem if p.is_file() else p.name for p in PACKAGE_DIR.iterdir()}
    top = {name for name in top if not name.startswith((".", "__pycache__")) and name != "py"}
    modules = {n for n in top if (PACKAGE_DIR / f"{n}.py").is_file() or (PACKAGE_DIR / n).is_dir()}
    modules.discard("__pycache__")
    assert modules - set(FLOORS) == set(), "give each new module or folder a floor in FLOORS"


def test_imports_only_point_down():
    climbs = []
    for path in SOURCES:
        here = _floor_of(_module_name(path))
        for line, imported, _ in _imports(path):
            there = _floor_of(imported)
            if here == there:
                continue
            if FLOORS.get(there, 0) > FLOORS.get(here, 0) or frozenset({here, there}) in STRANGERS:
                climbs.append(f"{path.relative_to(PACKAGE_DIR.parent)}:{line}: {imported}")
    assert climbs == []


def test_the_cache_imports_nothing_from_the_pipeline():
    cache = [p for p in SOURCES if p.is_relative_to(PACKAGE_DIR / "cache")]
    assert cache
    for path in cache:
        for line, imported, _ in _imports(path):
            assert not imported.startswith(f"{PACKAGE}.pipeline"), f"{path}:{line}"


def _private_reach_ins(path: Path, module: str | None = None) -> Iterator[str]:
    module = module or _module_name(path)
    tree = ast.parse(path.read_text(), str(path))
    aliases: dict[str, str] = {}
    for line, imported, names in _imports(path, module):
        if any(_private(part) for part in imported.split(".")[1:]):
            yield f"{line}: imports the private module {imported}"
        for name in names:
            if _private(name):
                yield f"{line}: imports {imported}.{name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == PACKAGE and alias.asname:
                    aliases[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if full.startswith(PACKAGE) and _is_module(full):
                    aliases[alias.asname or alias.name] = full
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and aliases[node.value.id] != module
            and _private(node.attr)
        ):
            yield f"{node.lineno}: reads {aliases[node.value.id]}.{node.attr}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE_DIR)))
def test_no_module_imports_another_modules_underscore_names(path):
    assert list(_private_reach_ins(path)) == []


def test_the_checks_can_fail(tmp_path):
    """The reach-in reader sees each form it forbids (the checks above are not vacuous)."""
    sample = tmp_path / "probe.py"
    sample.write_text(
        "from compile_engine_compat.facade.engine import _get_cache_key\n"
        "from compile_engine_compat import deprecations as d\n"
        "d._ledger\n"
    )
    found = list(_private_reach_ins(sample, f"{PACKAGE}.facade.probe"))
    assert len(found) == 2, found
