"""``relay.backend.name_transforms``: TVM 0.19's C names of generated code, as pure strings.

``prefix_name``/``prefix_generated_name`` join name segments with ``_`` behind ``TVM_`` or
``TVMGen_``; ``to_c_function_style`` (``TVMGenModelRun``), ``to_c_variable_style``
(``tvmgen_model_run``) and ``to_c_constant_style`` (``TVMGEN_MODEL_RUN``) spell such a name for
C. Bad names raise ``RuntimeError`` (``tvm.TVMError`` under ``install()``) with TVM 0.19's text.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "prefix_generated_name",
    "prefix_name",
    "to_c_constant_style",
    "to_c_function_style",
    "to_c_variable_style",
]

_TVM = "TVM"


def _check_prefixed(original_name: str, kind: str) -> None:
    if not isinstance(original_name, str):
        raise TypeError(f"{kind} name must be a str, not {type(original_name).__name__}")
    if not original_name:
        raise RuntimeError(f"{kind} name is empty")
    if not original_name.startswith(_TVM):
        raise RuntimeError(f"{kind} not TVM prefixed: {original_name!r}")


def to_c_function_style(original_name: str) -> str:
    """``TVM_woof_woof`` as a C function name, ``TVMWoofWoof``.

    Parameters
    ----------
    original_name : str
        A name built by :func:`prefix_name` or :func:`prefix_generated_name`.

    Returns
    -------
    str
        ``TVM`` then each ``_``-separated block capitalized (letters only, as TVM 0.19 kept).

    Raises
    ------
    RuntimeError
        When the name is empty or does not start with ``TVM``.
    """
    _check_prefixed(original_name, "Function")
    letters = [_TVM]
    new_block = True
    for symbol in original_name[len(_TVM) :]:
        if symbol.isascii() and symbol.isalpha():
            letters.append(symbol.upper() if new_block else symbol.lower())
            new_block = False
        elif symbol == "_":
            new_block = True
    return "".join(letters)


def to_c_variable_style(original_name: str) -> str:
    """``TVM_woof_Woof`` as a C variable name, ``tvm_woof_woof``.

    Parameters
    ----------
    original_name : str
        A name starting with ``TVM``.

    Returns
    -------
    str
        The name in lower case.

    Raises
    ------
    RuntimeError
        When the name is empty or does not start with ``TVM``.
    """
    _check_prefixed(original_name, "Variable")
    return original_name.lower()


def to_c_constant_style(original_name: str) -> str:
    """``TVM_woof_Woof`` as a C constant name, ``TVM_WOOF_WOOF``.

    Parameters
    ----------
    original_name : str
        A name starting with ``TVM``.

    Returns
    -------
    str
        The name in upper case.

    Raises
    ------
    RuntimeError
        When the name is empty or does not start with ``TVM``.
    """
    _check_prefixed(original_name, "Constant")
    return original_name.upper()


def _combine(names: Sequence[str] | str) -> str:
    if isinstance(names, str):
        if not names:
            raise RuntimeError("Name is empty")
        names = [names]
    segments = [str(name) for name in names]
    if not segments:
        raise RuntimeError("Name segments empty")
    if any(not segment for segment in segments):
        raise RuntimeError(f"Name segment is empty in {segments!r}")
    return "_".join(segments)


def prefix_name(names: Sequence[str] | str) -> str:
    """``TVM_`` and the segments joined by ``_``: ``prefix_name(["woof", "moo"])`` is
    ``TVM_woof_moo``.

    Parameters
    ----------
    names : sequence of str or str
        The segments, or one name.

    Returns
    -------
    str
        The prefixed name.

    Raises
    ------
    RuntimeError
        When the name, the list of segments or one segment is empty.
    """
    return f"{_TVM}_{_combine(names)}"


def prefix_generated_name(names: Sequence[str] | str) -> str:
    """As :func:`prefix_name`, behind ``TVMGen_``: ``TVMGen_model_run``."""
    return f"{_TVM}Gen_{_combine(names)}"
