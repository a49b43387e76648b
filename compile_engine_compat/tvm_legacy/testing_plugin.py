"""``tvm.testing.plugin`` of TVM <=0.19: the ``target`` / ``dev`` fixtures and their marks.

Enabled in a pytest session by ``compile_engine_compat.install()`` (a conftest holding
``import compile_engine_compat; compile_engine_compat.install()`` is enough: the package's pytest
plugin registers this one once ``install()`` has run), by ``-p
compile_engine_compat.tvm_legacy.testing_plugin``, or by ``pytest_plugins =
["tvm.testing.plugin"]`` under ``install()``.

What it does, as TVM 0.19's did:

* a test taking ``target`` (or ``dev``) and not parametrized over it runs once per target of
  :func:`~compile_engine_compat.tvm_legacy.testing.test_targets`; each instance carries its
  target's requirement, so ``llvm`` runs and GPU targets skip naming what is missing;
  ``exclude_targets`` leaves kinds out, ``known_failing_targets`` marks them ``xfail``;
* ``dev`` is the device of ``target``;
* the fixtures of one ``tvm.testing.parameters(...)`` call are parametrized together;
* the marks of every requirement (``gpu``, ``cuda``, ``llvm``, ``x86_vnni``...) are registered.
"""

from __future__ import annotations

from typing import Any

import pytest

from compile_engine_compat.tvm_legacy import testing

__all__ = [
    "dev",
    "pytest_collection_modifyitems",
    "pytest_configure",
    "pytest_generate_tests",
]


def pytest_configure(config: Any) -> None:
    """Register the requirement marks."""
    for requirement in testing.REQUIREMENTS.values():
        config.addinivalue_line(
            "markers", f"{requirement.name}: the test needs {requirement.long_name}"
        )


def pytest_generate_tests(metafunc: Any) -> None:
    """Parametrize correlated parameters and ``target``; mark each target's instances."""
    _parametrize_groups(metafunc)
    if "target" not in metafunc.fixturenames:
        return
    explicit = [
        name.strip()
        for mark in metafunc.definition.iter_markers("parametrize")
        for name in (mark.args[0].split(",") if isinstance(mark.args[0], str) else mark.args[0])
    ]
    if "target" not in explicit:
        excluded = set(getattr(metafunc.function, "tvm_excluded_targets", ()))
        failing = set(getattr(metafunc.function, "tvm_known_failing_targets", ()))
        values = [
            pytest.param(t, marks=_marks(t, failing))
            for t in testing.test_targets()
            if testing.target_kind(t) not in excluded
        ]
        metafunc.parametrize("target", values, scope="session")
        return
    for mark in metafunc.definition.iter_markers("parametrize"):
        _mark_explicit_targets(mark)


def _marks(target: Any, failing: set[str]) -> list[Any]:
    marks = testing.target_marks(target)
    kind = testing.target_kind(target)
    if kind in failing:
        marks.append(pytest.mark.xfail(reason=f'Known failing test for target "{kind}"'))
    return marks


def _mark_explicit_targets(mark: Any) -> None:
    """Give an explicit ``parametrize("target", ...)``'s values their targets' requirements."""
    names = mark.args[0]
    names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
    if "target" not in names or len(mark.args) < 2 or not isinstance(mark.args[1], list):
        return
    where = names.index("target")
    values = mark.args[1]
    for i, value in enumerate(values):
        if hasattr(value, "values") and hasattr(value, "marks"):  # already a pytest.param
            target, params, marks = value.values[where], value.values, list(value.marks)
        else:
            params = (value,) if len(names) == 1 else tuple(value)
            target, marks = params[where], []
        values[i] = pytest.param(*params, marks=testing.target_marks(target) + marks)


def _parametrize_groups(metafunc: Any) -> None:
    """The fixtures of one ``tvm.testing.parameters`` call, parametrized as one group."""
    groups: dict[int, list[tuple[str, Any]]] = {}
    for name, definitions in metafunc.definition._fixtureinfo.name2fixturedefs.items():
        func = definitions[-1].func
        if hasattr(func, "parametrize_group") and hasattr(func, "parametrize_values"):
            groups.setdefault(func.parametrize_group, []).append((name, func))
    for members in groups.values():
        names = ",".join(name for name, _ in members)
        ids = members[0][1].parametrize_ids
        if len(members) == 1:
            values: Any = members[0][1].parametrize_values
        else:
            values = list(zip(*(func.parametrize_values for _, func in members)))
        metafunc.parametrize(names, values, indirect=True, ids=ids)


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    """Apply ``xfail_parameterizations`` / ``skip_parameterizations`` to the instances named."""
    del config
    for item in items:
        marked = getattr(getattr(item, "function", None), "tvm_marked_parameterizations", None)
        callspec = getattr(item, "callspec", None)
        if not marked or callspec is None:
            continue
        for param, mark in marked.items():
            if param in callspec.id:
                item.add_marker(mark)


@pytest.fixture
def dev(target: Any) -> Any:
    """The device of ``target`` (the CPU for ``llvm``)."""
    return testing.device_of(target)
