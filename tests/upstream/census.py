"""The census of TVM 0.19's public Relay-era surface: which names the shim serves or refuses.

Three modes, one command each (run from the repository root)::

    # 1. read TVM v0.19.0's Python sources with ``ast`` and write the committed name list
    python tests/upstream/census.py --snapshot /work/tvm019/python/tvm
    # 2. classify every name of the list under ``compile_engine_compat.install()``
    python tests/upstream/census.py --check
    # 3. the same, written as the docs page (and the served names scan reads)
    python tests/upstream/census.py --docs docs/relay-surface.md

The snapshot (:data:`SNAPSHOT`, shipped inside the package because ``install()`` reads it to
refuse the names it does not serve) lists, per module, the public names of TVM 0.19's sources:
top-level definitions and assignments, ``__all__``, what a package's ``__init__`` re-exports
(``import *`` expanded through the sources), and the public methods of the six classes Relay-era
programs drive. It also records which of them the installed TVM 0.27 no longer has (without the
shim), which is what ``scan`` reports.

``--check`` imports each module and looks each name up under ``install()``, and classifies it:

* **served**: it exists and is not a refusal stand-in;
* **refused**: a stand-in that raises, when called, a typed ``NotImplementedError`` naming the
  replacement and the MIGRATION.md section;
* **missing**: a bare ``AttributeError``/``ImportError`` (or a stand-in that does not refuse
  properly). ``--check`` exits 1 when any name is missing.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import importlib
import json
import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:  # this checkout's package, not another editable install
    sys.path.insert(0, str(REPO_ROOT))
#: The committed name list (package data: ``install()`` refuses from it).
SNAPSHOT = REPO_ROOT / "compile_engine_compat" / "surfaces" / "v019_public_names.json"
#: The served names of the list, as census --docs found them (package data: ``scan`` reads it).
SERVED_FILE = SNAPSHOT.with_name("v019_served.json")
#: The generated docs page.
DOCS_PAGE = REPO_ROOT / "docs" / "relay-surface.md"

#: The modules whose public names are counted: Relay and what a Relay-era program imports.
MODULES: tuple[str, ...] = (
    "tvm",
    "tvm.relay",
    "tvm.relay.op",
    "tvm.relay.op.nn",
    "tvm.relay.op.image",
    "tvm.relay.op.vision",
    "tvm.relay.transform",
    "tvm.relay.analysis",
    "tvm.relay.frontend",
    "tvm.relay.frontend.common",
    "tvm.relay.testing",
    "tvm.relay.build_module",
    "tvm.relay.expr",
    "tvm.relay.ty",
    "tvm.relay.expr_functor",
    "tvm.relay.backend",
    "tvm.relay.backend.te_compiler",
    "tvm.relay.backend.executor_factory",
    "tvm.relay.backend.vm",
    "tvm.relay.data_dep_optimization",
    "tvm.contrib.graph_executor",
    "tvm.contrib.graph_runtime",
    "tvm.contrib.relay_viz",
    "tvm.contrib.utils",
    "tvm.contrib.download",
    "tvm.contrib.nvcc",
    "tvm.contrib.cc",
    "tvm.contrib.tar",
    "tvm.contrib.dlpack",
    "tvm.contrib.pickle_memoize",
    "tvm.contrib.debugger.debug_executor",
    "tvm.runtime",
    "tvm.runtime.vm",
    "tvm.runtime.ndarray",
    "tvm.runtime.container",
    "tvm.target",
    "tvm.autotvm",
    "tvm.autotvm.tuner",
    "tvm.autotvm.graph_tuner",
    "tvm.auto_scheduler",
    "tvm.testing",
    "tvm.testing.utils",
    "tvm._ffi",
    "tvm._ffi.base",
)

#: The classes whose public methods are counted, as ``module:Class``.
CLASSES: tuple[str, ...] = (
    "tvm.contrib.graph_executor:GraphModule",
    "tvm.runtime.vm:VirtualMachine",
    "tvm.runtime.vm:Executable",
    "tvm.relay.backend.executor_factory:GraphExecutorFactoryModule",
    "tvm.relay.expr_functor:ExprVisitor",
    "tvm.relay.expr_functor:ExprMutator",
)

#: Dunder methods that are part of a class's public protocol.
PROTOCOL_DUNDERS = frozenset({"__getitem__", "__setitem__", "__call__", "__iter__", "__len__"})
#: Module-level names that are plumbing, not API.
PLUMBING = frozenset({"logger", "absolute_import", "print_function", "division"})


# -- reading the sources ------------------------------------------------------------------------


class Sources:
    """TVM's Python sources under ``root`` (the folder holding ``tvm/``'s files), read once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._public: dict[str, set[str]] = {}
        self._star: dict[str, set[str]] = {}
        self._busy: set[str] = set()

    def path(self, module: str) -> Path | None:
        """The file of ``module`` (``tvm.relay.expr``), or None when the sources lack it."""
        parts = module.split(".")[1:]
        base = self.root.joinpath(*parts)
        for candidate in (base / "__init__.py", base.with_suffix(".py")):
            if candidate.is_file():
                return candidate
        return None

    def is_package(self, module: str) -> bool:
        """True when ``module`` is a package (an ``__init__.py``)."""
        found = self.path(module)
        return found is not None and found.name == "__init__.py"

    def _absolute(self, module: str, node: ast.ImportFrom) -> str | None:
        if node.level == 0:
            return node.module if node.module and node.module.startswith("tvm") else None
        package = module if self.is_package(module) else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        return f"{package}.{node.module}" if node.module else package

    def _read(self, module: str) -> None:
        found = self.path(module)
        defs: set[str] = set()
        reexports: set[str] = set()
        imported: set[str] = set()
        declared: list[str] | None = None
        if found is None or module in self._busy:
            self._public[module], self._star[module] = set(), set()
            return
        self._busy.add(module)
        tree = ast.parse(found.read_text(encoding="utf-8"), filename=str(found))
        for node in _top_level(tree.body):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defs.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    for name in _assigned(target):
                        if name == "__all__":
                            strings = _strings(node.value)
                            if isinstance(node, ast.AugAssign):
                                declared = [*(declared or []), *strings]
                            else:
                                declared = strings
                        else:
                            defs.add(name)
            elif (
                isinstance(node, ast.Expr)
                and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Attribute)
                and isinstance(node.value.func.value, ast.Name)
                and node.value.func.value.id == "__all__"
                and node.value.args
            ):
                declared = [*(declared or []), *_strings(node.value.args[0])]
            elif isinstance(node, ast.ImportFrom):
                origin = self._absolute(module, node)
                relative = node.level > 0
                for alias in node.names:
                    if alias.name == "*":
                        if origin is not None:
                            reexports |= self.star(origin)
                    elif relative:
                        reexports.add(alias.asname or alias.name)
                    elif origin is not None:  # from tvm.x import y: bound, so star-exported
                        imported.add(alias.asname or alias.name)
        self._busy.discard(module)
        public = {n for n in defs if not n.startswith("_") and n not in PLUMBING}
        if self.is_package(module) or declared is not None:
            public |= {n for n in reexports if not n.startswith("_")}
        public |= set(declared or ())
        self._public[module] = public
        # ``import *`` without ``__all__`` binds every public name, imported ones included
        # (``from .feature import Feature`` in relay/analysis/analysis.py).
        bound = {n for n in reexports | imported if not n.startswith("_")}
        self._star[module] = set(declared) if declared is not None else public | bound

    def public(self, module: str) -> set[str]:
        """The public names of ``module``."""
        if module not in self._public:
            self._read(module)
        return self._public[module]

    def star(self, module: str) -> set[str]:
        """What ``from module import *`` binds."""
        if module not in self._star:
            self._read(module)
        return self._star[module]

    def methods(self, module: str, cls: str) -> set[str]:
        """The public methods and attributes of ``module.cls`` (and its bases of that module)."""
        found = self.path(module)
        if found is None:
            return set()
        classes = {
            node.name: node
            for node in ast.parse(found.read_text(encoding="utf-8")).body
            if isinstance(node, ast.ClassDef)
        }
        names: set[str] = set()
        todo = [cls]
        while todo:
            node = classes.get(todo.pop())
            if node is None:
                continue
            todo += [b.id for b in node.bases if isinstance(b, ast.Name)]
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    names.add(item.name)
                elif isinstance(item, ast.Assign):
                    names |= {n for t in item.targets for n in _assigned(t)}
        return {n for n in names if not n.startswith("_") or n in PROTOCOL_DUNDERS}


def _top_level(body: Iterable[ast.stmt]) -> Iterable[ast.stmt]:
    """Module-level statements, looking into ``if``/``try``/``with`` blocks."""
    for node in body:
        if isinstance(node, ast.If):
            yield from _top_level(node.body)
            yield from _top_level(node.orelse)
        elif isinstance(node, ast.Try):
            yield from _top_level(node.body)
            for handler in node.handlers:
                yield from _top_level(handler.body)
            yield from _top_level(node.orelse)
        elif isinstance(node, ast.With):
            yield from _top_level(node.body)
        else:
            yield node


def _assigned(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for elt in target.elts for n in _assigned(elt)]
    return []


def _strings(value: ast.expr | None) -> list[str]:
    if isinstance(value, (ast.List, ast.Tuple)):
        return [
            e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
        ]
    return []


def snapshot(root: Path) -> dict[str, Any]:
    """The name list of TVM's sources under ``root`` (``.../python/tvm``)."""
    sources = Sources(root)
    modules = {m: sorted(sources.public(m)) for m in MODULES if sources.path(m) is not None}
    classes = {}
    for spec in CLASSES:
        module, _, cls = spec.partition(":")
        classes[spec] = sorted(sources.methods(module, cls))
    data: dict[str, Any] = {
        "source": "apache/tvm v0.19.0, python/tvm (read with ast by tests/upstream/census.py)",
        "modules": modules,
        "classes": classes,
        "submodules": sorted(_submodules(root)),
    }
    data["absent_in_tvm"] = _absent_without_shim(data)
    return data


#: The packages whose every module file is listed (a module TVM 0.19 had imports, refused).
SUBMODULE_PACKAGES = (
    "relay",
    "contrib",
    "autotvm",
    "auto_scheduler",
    "runtime",
    "testing",
    "_ffi",
    "target",
)


def _submodules(root: Path) -> set[str]:
    """Every public module file of :data:`SUBMODULE_PACKAGES` under ``root``."""
    found = set()
    for package in SUBMODULE_PACKAGES:
        for path in (root / package).rglob("*.py"):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            if any(p.startswith("_") for p in parts if p != "_ffi"):
                continue
            found.add(".".join(["tvm", *parts]))
    return found


_ABSENT_PROBE = r"""
import importlib, json, sys, warnings
warnings.simplefilter("ignore")
data = json.load(sys.stdin)
absent = {}
for module, names in data["modules"].items():
    try:
        mod = importlib.import_module(module)
    except Exception:
        absent[module] = ["*"]
        continue
    gone = [n for n in names if not hasattr(mod, n)]
    if gone:
        absent[module] = gone
for spec, names in data["classes"].items():
    module, _, cls = spec.partition(":")
    try:
        owner = getattr(importlib.import_module(module), cls)
    except Exception:
        absent[spec] = ["*"]
        continue
    gone = [n for n in names if not hasattr(owner, n)]
    if gone:
        absent[spec] = gone
print(json.dumps(absent))
"""


def _absent_without_shim(data: dict[str, Any]) -> dict[str, list[str]]:
    """The names of ``data`` the installed TVM lacks on its own (a fresh process, no shim)."""
    out = subprocess.run(
        [sys.executable, "-c", _ABSENT_PROBE],
        input=json.dumps(data),
        capture_output=True,
        text=True,
        check=True,
        cwd="/",
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


# -- classifying under install() ------------------------------------------------------------------

SERVED, REFUSED, MISSING = "served", "refused", "missing"


def _refusal_of(value: Any) -> str | None:
    """The refusal ``value`` raises when used, or None when it is not a refusal stand-in."""
    from compile_engine_compat.surfaces.import_alias import is_refused

    if not is_refused(value):
        return None
    if isinstance(value, ModuleType):  # a refused module: what a program calls of it
        value = value.any_name
    try:
        value()
    except NotImplementedError as error:
        text = str(error)
        return text if "MIGRATION.md#" in text else f"no MIGRATION.md section: {text[:80]}"
    except Exception as error:
        return f"wrong error {type(error).__name__}: {str(error)[:80]}"
    return "did not raise"


def _status(value: Any) -> tuple[str, str]:
    refusal = _refusal_of(value)
    if refusal is None:
        return SERVED, ""
    if "MIGRATION.md#" in refusal and not refusal.startswith(("no MIGRATION", "wrong", "did not")):
        return REFUSED, refusal
    return MISSING, refusal


def classify(data: dict[str, Any]) -> dict[str, dict[str, tuple[str, str]]]:
    """``{module or module:Class: {name: (status, detail)}}`` under ``install()``."""
    import warnings

    import compile_engine_compat

    warnings.simplefilter("ignore")
    compile_engine_compat.install()
    result: dict[str, dict[str, tuple[str, str]]] = {}
    for module, names in data["modules"].items():
        result[module] = _classify_owner(lambda m=module: importlib.import_module(m), names)
    for spec, names in data["classes"].items():
        module, _, cls = spec.partition(":")
        result[spec] = _classify_owner(
            lambda m=module, c=cls: getattr(importlib.import_module(m), c), names
        )
    return result


def _classify_owner(load: Any, names: list[str]) -> dict[str, tuple[str, str]]:
    try:
        owner = load()
    except (ImportError, AttributeError) as error:
        why = f"{type(error).__name__}: {str(error)[:100]}"
        return {name: (MISSING, why) for name in names}
    from compile_engine_compat.surfaces.import_alias import is_refused

    if is_refused(owner):  # a refused class: each of its methods is refused with it
        return {name: _status(owner) for name in names}
    out = {}
    for name in names:
        try:
            value = getattr(owner, name)
        except AttributeError as error:
            out[name] = (MISSING, f"{type(error).__name__}: {str(error)[:100]}")
            continue
        except Exception as error:
            out[name] = (MISSING, f"{type(error).__name__}: {str(error)[:100]}")
            continue
        out[name] = _status(value)
    return out


def figures(result: dict[str, dict[str, tuple[str, str]]]) -> list[tuple[str, int, int, int]]:
    """Per module: (module, served, refused, missing)."""
    rows = []
    for module, names in result.items():
        statuses = [s for s, _ in names.values()]
        rows.append(
            (module, statuses.count(SERVED), statuses.count(REFUSED), statuses.count(MISSING))
        )
    return rows


def _percent(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.0f}%" if whole else "-"


def summary(result: dict[str, dict[str, tuple[str, str]]]) -> str:
    """The per-module figures as a plain table."""
    lines = [f"{'module':62} {'names':>5} {'served':>6} {'%':>4} {'refused':>7} {'missing':>7}"]
    total = [0, 0, 0]
    for module, served, refused, missing in figures(result):
        n = served + refused + missing
        total = [total[0] + served, total[1] + refused, total[2] + missing]
        lines.append(
            f"{module:62} {n:5d} {served:6d} {_percent(served, n):>4} {refused:7d} {missing:7d}"
        )
    n = sum(total)
    lines.append(
        f"{'total':62} {n:5d} {total[0]:6d} {_percent(total[0], n):>4} {total[1]:7d} {total[2]:7d}"
    )
    return "\n".join(lines)


_REFUSAL = re.compile(
    r"(?:\.te_compiler\); |does not serve it: )(?P<why>.*?)\.(?: Instead: (?P<instead>.*?)\.)?"
    r" See (?P<section>\S+)",
    re.S,
)


def _short(detail: str) -> str:
    """The reason of a refusal, its replacement and its section, from the refusal's message."""
    found = _REFUSAL.search(detail)
    if found is None:
        return detail.replace("|", "/").replace("\n", " ")[:160]
    why, instead, section = found.group("why", "instead", "section")
    text = _escape(why.strip())
    if instead:
        text += "; instead: `" + instead.strip().replace("`", "'") + "`"
    return f"{text} ({section})".replace("|", "/").replace("\n", " ")


def _escape(text: str) -> str:
    """Markdown-safe prose: no links, emphasis or HTML out of a message."""
    for char in "\\[]*_<>`":
        text = text.replace(char, "\\" + char)
    return text


def markdown(result: dict[str, dict[str, tuple[str, str]]], source: str) -> str:
    """The docs page: figures per module, then every name and its status."""
    import tvm

    from compile_engine_compat import __version__

    figs = figures(result)
    served = sum(f[1] for f in figs)
    refused = sum(f[2] for f in figs)
    missing = sum(f[3] for f in figs)
    n = served + refused + missing
    out = [
        "# The TVM 0.19 surface",
        "",
        "<!-- Generated by `python tests/upstream/census.py --docs docs/relay-surface.md`; "
        "do not edit. -->",
        "",
        f"Every public name of TVM v0.19.0's Relay-era modules ({source}), looked up under "
        "`compile_engine_compat.install()` on the installed TVM: **served** (it exists and works "
        "as TVM 0.19's did, within the limits the migration guide states), **refused** (it "
        "imports, and using it raises a typed `NotImplementedError` naming the replacement and "
        "its MIGRATION.md section), or **missing** (a bare `AttributeError`/`ImportError`).",
        "",
        f"Generated {datetime.date.today().isoformat()} with compile-engine-compat {__version__} "
        f"on TVM {tvm.__version__}: **{served} of {n} names served ({_percent(served, n)})**, "
        f"{refused} refused at the call, {missing} missing.",
        "",
        "| module | names | served | % | refused | missing |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for module, s, r, m in figs:
        out.append(f"| `{module}` | {s + r + m} | {s} | {_percent(s, s + r + m)} | {r} | {m} |")
    out.append(f"| **total** | {n} | {served} | {_percent(served, n)} | {refused} | {missing} |")
    for module, names in result.items():
        out += ["", f"## `{module}`", ""]
        groups = {status: sorted(k for k, (s, _) in names.items() if s == status)
                  for status in (SERVED, REFUSED, MISSING)}  # fmt: skip
        if groups[SERVED]:
            out.append("Served: " + ", ".join(f"`{k}`" for k in groups[SERVED]) + ".")
            out.append("")
        if groups[REFUSED] or groups[MISSING]:
            out += ["| name | status | why, and the route |", "|---|---|---|"]
            for status in (MISSING, REFUSED):
                for k in groups[status]:
                    out.append(f"| `{k}` | {status} | {_short(names[k][1])} |")
    return "\n".join(out) + "\n"


def served_json(result: dict[str, dict[str, tuple[str, str]]]) -> str:
    """The dotted names of the modules' listed names found served (not class methods)."""
    served = sorted(
        f"{module}.{name}"
        for module, names in result.items()
        if ":" not in module
        for name, (status, _) in names.items()
        if status == SERVED
    )
    return json.dumps({"served": served}, indent=0) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Command line; see the module docstring."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--snapshot", type=Path, metavar="TVM_PY", help="write the name list")
    parser.add_argument("--check", action="store_true", help="classify; exit 1 if any missing")
    parser.add_argument("--docs", type=Path, metavar="PAGE", help="write the docs page")
    parser.add_argument("--json", type=Path, metavar="OUT", help="write the classification")
    args = parser.parse_args(argv)
    if args.snapshot:
        data = snapshot(args.snapshot.resolve())
        tmp = SNAPSHOT.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        tmp.replace(SNAPSHOT)
        count = sum(map(len, data["modules"].values())) + sum(map(len, data["classes"].values()))
        print(f"wrote {count} names to {SNAPSHOT.relative_to(REPO_ROOT)}")
    if not (args.check or args.docs or args.json):
        return 0
    data = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    result = classify(data)
    print(summary(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, sort_keys=True), encoding="utf-8")
    if args.docs:
        tmp = args.docs.with_suffix(".tmp")
        tmp.write_text(markdown(result, "read from its Python sources"), encoding="utf-8")
        tmp.replace(args.docs)
        tmp = SERVED_FILE.with_suffix(".tmp")
        tmp.write_text(served_json(result), encoding="utf-8")
        tmp.replace(SERVED_FILE)
    missing = [f"{m}.{k}" for m, names in result.items() for k, (s, _) in names.items()
               if s == MISSING]  # fmt: skip
    if args.check and missing:
        print(f"\n{len(missing)} missing, e.g.: " + ", ".join(missing[:20]))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
