"""``tvm.runtime.name_transforms`` of TVM 0.19 (served by ``install()``): ``sanitize_name``."""

from __future__ import annotations

__all__ = ["sanitize_name"]


def sanitize_name(original_name: str) -> str:
    """The name with every character but ASCII letters and digits replaced by ``_``.

    Parameters
    ----------
    original_name : str
        A name to write into a compiler artifact.

    Returns
    -------
    str
        ``"input+"`` is ``"input_"``, ``"woof:1"`` is ``"woof_1"``.

    Raises
    ------
    RuntimeError
        When the name is empty (``tvm.TVMError`` under ``install()``, as TVM 0.19 raised).
    TypeError
        When the name is not a str.
    """
    if not isinstance(original_name, str):
        raise TypeError(f"name must be a str, not {type(original_name).__name__}")
    if not original_name:
        raise RuntimeError("Name is empty")
    return "".join(c if c.isascii() and c.isalnum() else "_" for c in original_name)
