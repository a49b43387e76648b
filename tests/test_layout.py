"""The package's layout, read from its imports: floors that only point down, no private reach-ins.

The house is built in floors (docs/architecture.md): the foundation (the API table, the
boundary), the runtime (kernels, the thread pool), the deprecation machinery and targets, the
legacy surfaces beside TVM, the pipeline (the five stages and the whole-model route) and the
cache (which only stores), the facade that composes them, the front ends, and the tooling on
top. A module may import its own floor or the floors below it, never above; the pipeline and the
cache never import each other; the kernel stages never import the model route; there are no
import circles, between modules or between top-level folders; and no module imports another
module's underscore names (a private package, ``relay._impl``, only its own package imports).
Read statically with ``ast``: nothing is imported.
"""

from __future__ import annotations

import ast
import itertools
import re
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
    "runtime": 1,
    "deprecations": 2,
    "targets": 2,
    "virtual_devices": 2,
    "surfaces": 3,
    "pipeline": 4,
    "cache": 4,
    "facade": 5,
    "schedules": 6,
    "relay": 6,
    "tvm_legacy": 7,
    "testing": 7,
    "migrate": 7,
    "compile_engine": 7,
    "te_compiler": 7,
    "thread_pool": 7,
    "cli": 8,
    "pytest_plugin": 8,
    "examples": 8,
    "__init__": 8,
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


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _import_graph(depth: int | None = None) -> dict[str, set[str]]:
    """Who imports whom (every import, the lazy ones in functions too), by module or, given
    ``depth``, by the folder or module that many names deep (2: the top-level ones)."""
    graph: dict[str, set[str]] = {}
    for path in SOURCES:
        here = ".".join(_module_name(path).split(".")[:depth])
        for _, imported, _ in _imports(path):
            there = ".".join(imported.split(".")[:depth])
            if there != here:
                graph.setdefault(here, set()).add(there)
    return graph


def test_no_import_circles():
    """No module reaches itself through imports, and no top-level folder or module does."""
    assert _circles(_import_graph()) == []
    assert _circles(_import_graph(depth=2)) == []


def test_the_circle_check_can_fail():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_the_kernel_stages_never_import_the_model_route():
    """pipeline/model/ (relay.build's route) builds on the kernel stages, never the reverse."""
    model = f"{PACKAGE}.pipeline.model"
    climbs = [
        f"{path.relative_to(PACKAGE_DIR.parent)}:{line}: {imported}"
        for path in SOURCES
        if path.is_relative_to(PACKAGE_DIR / "pipeline")
        and not path.is_relative_to(PACKAGE_DIR / "pipeline" / "model")
        for line, imported, _ in _imports(path)
        if imported == model or imported.startswith(model + ".")
    ]
    assert climbs == []


def test_the_architecture_page_names_every_folder_and_module():
    """docs/architecture.md names each folder and module (and the C source) of the package."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "architecture.md").read_text()
    named = set()
    for span in re.findall(r"`([^`]+)`", page):
        named |= set(re.findall(r"[A-Za-z_]\w*", span))
    missing = sorted(
        str(path.relative_to(PACKAGE_DIR))
        for path in PACKAGE_DIR.rglob("*")
        if "__pycache__" not in path.parts
        and (path.is_dir() or (path.suffix in (".py", ".c") and path.name != "__init__.py"))
        and (path.name if path.is_dir() else path.stem) not in named
    )
    assert missing == []


def test_the_cache_imports_nothing_from_the_pipeline():
    cache = [p for p in SOURCES if p.is_relative_to(PACKAGE_DIR / "cache")]
    assert cache
    for path in cache:
        for line, imported, _ in _imports(path):
            assert not imported.startswith(f"{PACKAGE}.pipeline"), f"{path}:{line}"


#: Modules outside a private package's own package that may still import it, with the reason.
PRIVATE_FRIENDS = {
    # tvm.IRModule's Relay face under install(): mod[name] = relay_func keeps the Relay function
    # (relay._impl.origin) and mod.astext() prints it (relay._impl.printer).
    f"{PACKAGE}.tvm_legacy.ir_module": f"{PACKAGE}.relay._impl",
    # tvm.ir.EnvFunc.get("tvm.relay.type_relation.<name>") registers Relay's type relations
    # (relay._impl.relation_functions) on first use.
    f"{PACKAGE}.tvm_legacy.ir_node": f"{PACKAGE}.relay._impl",
}


def _may_import(module: str, imported: str) -> bool:
    """Whether ``module`` may import ``imported``: a private package (``relay._impl``) is private
    to the package that holds it (and its :data:`PRIVATE_FRIENDS`); any other private module, to
    itself."""
    friend = PRIVATE_FRIENDS.get(module)
    if friend is not None and (imported == friend or imported.startswith(friend + ".")):
        return True
    parts = imported.split(".")
    for depth, part in enumerate(parts[1:], start=1):
        if _private(part):
            owner = ".".join(parts[:depth])
            if module != owner and not module.startswith(owner + "."):
                return False
    return True


def _private_reach_ins(path: Path, module: str | None = None) -> Iterator[str]:
    module = module or _module_name(path)
    tree = ast.parse(path.read_text(), str(path))
    aliases: dict[str, str] = {}
    for line, imported, names in _imports(path, module):
        if not _may_import(module, imported):
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
    sample.write_text("from compile_engine_compat.relay._impl import registry\n")
    assert list(_private_reach_ins(sample, f"{PACKAGE}.relay.op.probe")) == []
    assert len(list(_private_reach_ins(sample, f"{PACKAGE}.facade.probe"))) == 1


def _repeated_decorators(path: Path) -> list[str]:
    """Decorators applied twice in a row to one definition (a merge leaves them behind, and a
    repeated ``legacy_api`` warns twice per call)."""
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            texts = [ast.unparse(d) for d in node.decorator_list]
            pairs = itertools.pairwise(texts)
            found += [f"{path.name}:{node.lineno} @{a}" for a, b in pairs if a == b]
    return found


def test_no_definition_repeats_a_decorator(tmp_path):
    repeated = [r for p in sorted(PACKAGE_DIR.rglob("*.py")) for r in _repeated_decorators(p)]
    assert repeated == []
    sample = tmp_path / "sample.py"
    sample.write_text("@f('a')\n@f('a')\ndef g():\n    pass\n")
    assert _repeated_decorators(sample) == ["sample.py:3 @f('a')"]
