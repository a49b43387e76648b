"""Python sources for ``scan`` and ``fix``: walk folders, read ``.py`` files and notebooks.

A notebook's code cells are joined into one module so that an import in one cell resolves the
names of the next; IPython magics and shell escapes become ``pass`` lines so that line numbers
still map back to (cell, line).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["SKIP_DIRS", "Source", "iter_sources", "read_source"]

#: Folders never walked into (virtual environments, caches, build output, VCS metadata).
SKIP_DIRS = frozenset(
    {"__pycache__", "node_modules", "build", "dist", "site-packages", ".git", ".tox", ".venv"}
)


@dataclass
class Source:
    """One file's Python code.

    Attributes
    ----------
    path : pathlib.Path
        The file on disk.
    display : str
        The path to report: relative to the scanned folder (POSIX separators).
    code : str
        The Python code (for a notebook: its code cells, joined).
    cell_starts : list of (int, int)
        Notebooks only: ``(cell index, first line of the cell in code)``, in order.
    """

    path: Path
    display: str
    code: str
    cell_starts: list[tuple[int, int]] = field(default_factory=list)

    @property
    def is_notebook(self) -> bool:
        """True for a ``.ipynb`` file."""
        return self.path.suffix == ".ipynb"

    def locate(self, line: int) -> tuple[int, int | None]:
        """Map a line of :attr:`code` to ``(line in its cell, cell index)``; cell None for .py."""
        if not self.is_notebook:
            return line, None
        cell, first = 0, 1
        for index, start in self.cell_starts:
            if start > line:
                break
            cell, first = index, start
        return line - first + 1, cell


def _cell_lines(cell: dict[str, object]) -> list[str]:
    source = cell.get("source", "")
    text = "".join(source) if isinstance(source, list) else str(source)
    lines = text.split("\n")
    if lines and lines[0].startswith("%%"):  # a cell magic: the whole cell is not Python
        return ["pass" if i == 0 else "" for i in range(len(lines))]
    out = []
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith(("%", "!")) or (stripped.endswith("?") and stripped[:1] != "#"):
            line = line[: len(line) - len(stripped)] + "pass"
        out.append(line)
    return out


def _notebook_code(path: Path) -> tuple[str, list[tuple[int, int]]]:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    lines: list[str] = []
    starts: list[tuple[int, int]] = []
    for index, cell in enumerate(notebook.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        starts.append((index, len(lines) + 1))
        lines += _cell_lines(cell)
    return "\n".join(lines) + "\n", starts


def read_source(path: Path, display: str) -> Source:
    """Read one ``.py`` or ``.ipynb`` file.

    Raises
    ------
    OSError, UnicodeDecodeError, ValueError
        If the file cannot be read or the notebook is not valid JSON.
    """
    if path.suffix == ".ipynb":
        code, starts = _notebook_code(path)
        return Source(path, display, code, starts)
    return Source(path, display, path.read_text(encoding="utf-8"))


def _walk(folder: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(files):
            if name.endswith((".py", ".ipynb")):
                yield Path(root) / name


def iter_sources(paths: Sequence[str]) -> Iterator[tuple[Path, str]]:
    """Every ``.py``/``.ipynb`` file under ``paths`` with its display path.

    A folder's files display relative to that folder; a file argument displays as given.

    Raises
    ------
    FileNotFoundError
        If a path does not exist.
    """
    for arg in paths:
        path = Path(arg)
        if path.is_dir():
            for file in _walk(path):
                yield file, file.relative_to(path).as_posix()
        elif path.is_file():
            yield path, path.as_posix()
        else:
            raise FileNotFoundError(f"no such file or folder: {arg}")
