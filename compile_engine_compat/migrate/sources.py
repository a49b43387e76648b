"""Python sources for ``scan`` and ``fix``: read ``.py`` files and notebooks safely, write back.

Both commands promise what ruff promises: no file can crash or hang them. So every file is read
through :func:`read_source`, which

* opens without blocking (``O_NONBLOCK``) and reads regular files only, checked with ``fstat`` on
  the open descriptor so that a file swapped for a FIFO or a device after the walk is still caught
  (a FIFO named ``fifo.py``, ``zero.py -> /dev/zero``, ``rand.ipynb -> /dev/urandom``);
* caps the size (:data:`MAX_FILE_BYTES`);
* decodes as Python does: a UTF-8/16/32 byte-order mark, else a PEP 263 coding cookie, else UTF-8
  (``tokenize.detect_encoding``), and remembers the encoding so that ``fix`` writes the file back
  in it;
* checks a notebook's JSON shape before reading cells from it;
* measures the expression nesting from tokens (:func:`nesting_depth`) so that a pathological file
  never reaches libcst's native parser, which overflows its stack on a 20,000-deep chain.

Anything wrong raises :class:`SkipFile` with a one-line reason; the caller reports the file as
skipped and goes on with the next one.

A notebook's code cells are joined into one module so that an import in one cell resolves the
names of the next; IPython magics and shell escapes become ``pass`` lines so that line numbers
still map back to (cell, line).
"""

from __future__ import annotations

import codecs
import functools
import io
import json
import os
import queue
import stat
import sys
import threading
import tokenize
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from compile_engine_compat.runtime import threads

__all__ = [
    "DEEP_STACK_THREAD",
    "MAX_FILE_BYTES",
    "MAX_NESTING",
    "SkipFile",
    "Source",
    "SourceFile",
    "call_with_deep_stack",
    "cell_text",
    "forget_folders",
    "is_magic",
    "module_exists",
    "nesting_depth",
    "read_bytes",
    "read_source",
    "write_source",
]

#: Files larger than this are skipped: hand-written Python is far smaller, and a notebook this big
#: is its outputs (images), not its code.
MAX_FILE_BYTES = 32 * 1024 * 1024
#: Deepest expression nesting (as :func:`nesting_depth` counts it) handed to the parser. libcst's
#: visitors recurse a few Python frames per level and its attribute-chain metadata is quadratic in
#: the chain: 500 levels take well under a second on a deep stack, 20,000 crash the native parser.
MAX_NESTING = 500

_T = TypeVar("_T")

# Byte-order marks, longest first: the UTF-32-LE mark starts with the UTF-16-LE one.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
# Tokens that start a new operand at the same level rather than nesting one: they reset the
# chain count (see nesting_depth).
_RESETS = frozenset({",", ";", ":", "=", ":=", "->"})
_NESTING_WORDS = frozenset({"and", "or", "not", "if", "else", "lambda", "await", "in", "is"})
_OPENERS = frozenset("([{")
_CLOSERS = frozenset(")]}")


class SkipFile(Exception):
    """A file that ``scan``/``fix`` will not read; ``str(exc)`` is the one-line reason."""


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
        The Python code (for a notebook: its code cells, joined). Newlines are kept as in the
        file (no universal-newline translation), so a rewritten file keeps its CRLFs.
    cell_starts : list of (int, int)
        Notebooks only: ``(cell index, first line of the cell in code)``, in order.
    encoding : str
        The codec the file was decoded with (``utf-8``, ``latin-1``, ``utf-16-le``, ...).
    bom : bytes
        The byte-order mark the file started with, ``b""`` if none.
    notebook : dict or None
        Notebooks only: the parsed JSON, for ``fix`` to write cells back into.
    raw : bytes
        Notebooks only: the file's bytes, to check that a rewrite keeps the untouched parts.
    package : str or None
        The dotted package the file belongs to (from ``__init__.py`` files above it), used to
        resolve relative imports; None outside a package.
    """

    path: Path
    display: str
    code: str
    cell_starts: list[tuple[int, int]] = field(default_factory=list)
    encoding: str = "utf-8"
    bom: bytes = b""
    notebook: dict[str, Any] | None = None
    package: str | None = None
    raw: bytes = b""
    package_root: Path | None = None
    #: Dotted module -> whether the project has it, for each question :meth:`local_module` was
    #: asked (a cached result holds only while the answers are the same).
    probes: dict[str, bool] = field(default_factory=dict)

    @property
    def module(self) -> str | None:
        """The file's dotted module name, if it lies in a package (``__init__`` -> the package)."""
        if self.package is None:
            return None
        stem = self.path.stem
        return self.package if stem == "__init__" else f"{self.package}.{stem}"

    def local_module(self, dotted: str) -> bool:
        """Does the project hold the module ``dotted`` (a ``.py`` file or a package folder)?"""
        if dotted not in self.probes:
            self.probes[dotted] = module_exists(self.package_root, dotted)
        return self.probes[dotted]

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

    def encode(self, text: str) -> bytes:
        """``text`` as the file's bytes: its byte-order mark, then its encoding.

        Raises
        ------
        UnicodeEncodeError
            If ``text`` holds a character the file's encoding cannot represent.
        """
        return self.bom + text.encode(self.encoding)


class SourceFile(NamedTuple):
    """A file found under one of the paths given on the command line."""

    path: Path
    display: str
    #: The command-line argument it was found under (a folder, or the file's own folder).
    root: Path


def read_bytes(path: Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file, never blocking on a FIFO or reading from a device.

    Raises
    ------
    SkipFile
        If ``path`` is not a regular file, is larger than ``limit`` bytes, or cannot be read.
    """
    try:
        # Stat first: opening some devices has effects of its own. fstat again after opening,
        # because the path may have been swapped in between.
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise SkipFile(_not_regular(os.stat(path).st_mode))
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        raise SkipFile(f"cannot read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SkipFile(_not_regular(info.st_mode))
        if info.st_size > limit:
            raise SkipFile(f"larger than {limit // (1024 * 1024)} MiB ({info.st_size} bytes)")
        chunks = []
        total = 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:  # it grew while we read it
            raise SkipFile(f"larger than {limit // (1024 * 1024)} MiB")
        return b"".join(chunks)
    except OSError as exc:
        raise SkipFile(f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def _not_regular(mode: int) -> str:
    kind = (
        "a FIFO"
        if stat.S_ISFIFO(mode)
        else "a character device"
        if stat.S_ISCHR(mode)
        else "a block device"
        if stat.S_ISBLK(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a folder"
        if stat.S_ISDIR(mode)
        else "a special file"
    )
    return f"not a regular file ({kind})"


def decode_python(data: bytes) -> tuple[str, str, bytes]:
    """Decode Python source bytes as the interpreter would.

    Returns
    -------
    text : str
    encoding : str
        The codec to encode it back with.
    bom : bytes
        The byte-order mark to write back first (``b""`` if none).

    Raises
    ------
    SkipFile
        On a bad coding declaration, undecodable bytes or NUL bytes (a binary file).
    """
    for bom, codec in _BOMS:
        if data.startswith(bom):
            encoding, body = codec, data[len(bom) :]
            break
    else:
        bom, body = b"", data
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        except SyntaxError as exc:
            if b"coding" in b"\n".join(data.split(b"\n", 2)[:2]):
                raise SkipFile(f"bad coding declaration: {exc.msg}") from None
            # No cookie and not UTF-8 from the first line on.
            raise SkipFile("not valid utf-8 text: binary file?") from None
        if encoding == "utf-8-sig":  # detect_encoding's name for a UTF-8 BOM, handled above
            encoding = "utf-8"
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as exc:
        raise SkipFile(f"not valid {encoding} text (byte {exc.start}): binary file?") from None
    except LookupError as exc:  # a cookie naming a codec Python does not know
        raise SkipFile(f"bad coding declaration: {exc}") from None
    if "\x00" in text:
        raise SkipFile("binary file (contains NUL bytes)")
    return text, encoding, bom


def nesting_depth(code: str) -> tuple[int, int]:
    """An upper bound of the expression nesting libcst would build, from tokens alone.

    Brackets nest; inside one bracket level, each binary/unary operator, ``.``, keyword operator
    and implicitly concatenated string adds a level (``a.b.c`` and ``"s" + "s" + "s"`` parse as
    left-nested trees), and ``,``/``:``/``=`` start a new operand. Cheap: one pass of
    ``tokenize``, no tree.

    Parameters
    ----------
    code : str
        Python source.

    Returns
    -------
    depth : int
        The deepest nesting seen (0 for an empty file).
    line : int
        Where it was seen.
    """
    chains = [0]  # one running chain length per open bracket
    depth = deepest_line = 0
    previous = tokenize.ENDMARKER
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            kind, text = token.type, token.string
            if kind == tokenize.OP:
                if text in _OPENERS:
                    chains.append(0)
                elif text in _CLOSERS:
                    if len(chains) > 1:
                        chains.pop()
                elif text in _RESETS:
                    chains[-1] = 0
                else:
                    chains[-1] += 1
            elif kind == tokenize.NAME and text in _NESTING_WORDS:
                chains[-1] += 1
            elif kind == tokenize.STRING and previous == tokenize.STRING:
                chains[-1] += 1
            elif kind in (tokenize.NEWLINE, tokenize.ENDMARKER):
                chains = [0]
            if kind not in (tokenize.NL, tokenize.COMMENT):
                previous = kind
            level = len(chains) + sum(chains)
            if level > depth:
                depth, deepest_line = level, token.start[0]
    except (tokenize.TokenError, SyntaxError):
        pass  # the parser reports the error itself; what was measured so far still counts
    return depth, deepest_line


def check_nesting(code: str, limit: int = MAX_NESTING) -> None:
    """Raise :class:`SkipFile` if ``code`` nests deeper than ``limit`` (see nesting_depth)."""
    depth, line = nesting_depth(code)
    if depth > limit:
        raise SkipFile(
            f"expression nested {depth} deep at line {line} (the parser's limit here is {limit})"
        )


_deep_lock = threads.fork_safe(threading.Lock())
# One long-lived worker with a deep stack: starting a thread with a 256 MiB stack per file cost
# ~5 ms, as much as parsing a small file. A forked child finds it dead and starts its own.
_deep_worker: threading.Thread | None = None
#: The parse thread's name (a fork may ignore it: it is idle between parses, restarted in a child).
DEEP_STACK_THREAD = "compile-engine-compat-parse"
_deep_tasks: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()


def _deep_loop(tasks: queue.SimpleQueue[Callable[[], None]]) -> None:
    while True:
        tasks.get()()


def call_with_deep_stack(func: Callable[..., _T], *args: Any) -> _T:
    """Run ``func(*args)`` on a thread with a large stack and recursion limit, and return its
    result (or raise its exception).

    libcst's visitors recurse a few frames per nesting level; a valid 400-term ``"s" + "s" + ...``
    chain exceeds CPython's default limit of 1,000 frames. :func:`check_nesting` bounds the depth,
    so a fixed budget suffices.
    """
    global _deep_worker, _deep_tasks
    result: list[_T] = []
    error: list[BaseException] = []
    done = threading.Event()

    def run() -> None:
        try:
            result.append(func(*args))
        except BaseException as exc:  # re-raised in the caller's thread
            error.append(exc)
        finally:
            done.set()

    with _deep_lock:  # the recursion limit is per interpreter: one deep call at a time
        if _deep_worker is None or not _deep_worker.is_alive():
            _deep_tasks = queue.SimpleQueue()
            old_stack = threading.stack_size()
            threading.stack_size(256 * 1024 * 1024)
            try:
                _deep_worker = threading.Thread(
                    target=_deep_loop,
                    args=(_deep_tasks,),
                    name=DEEP_STACK_THREAD,
                    daemon=True,
                )
                _deep_worker.start()
            finally:
                threading.stack_size(old_stack)
        old_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old_limit, 40 * MAX_NESTING + 2_000))
        try:
            _deep_tasks.put(run)
            done.wait()
        finally:
            sys.setrecursionlimit(old_limit)
    if error:
        raise error[0]
    return result[0]


# -- notebooks ----------------------------------------------------------------------------------


def is_magic(line: str) -> bool:
    """An IPython magic, shell escape or help line: not Python."""
    stripped = line.lstrip()
    return stripped.startswith(("%", "!")) or (stripped.endswith("?") and stripped[:1] != "#")


def _cell_lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[0].startswith("%%"):  # a cell magic: the whole cell is not Python
        return ["pass" if i == 0 else "" for i in range(len(lines))]
    return [
        line[: len(line) - len(line.lstrip())] + "pass" if is_magic(line) else line
        for line in lines
    ]


def cell_text(cell: dict[str, Any]) -> str:
    """A validated cell's source as one string."""
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def load_notebook(data: bytes) -> dict[str, Any]:
    """Parse a notebook and check the shape ``scan``/``fix`` rely on.

    Raises
    ------
    SkipFile
        If it is not JSON, or not an object whose ``cells`` is a list of objects with a string
        ``cell_type`` and a string (or list of strings) ``source``.
    """
    try:
        notebook = json.loads(data)
    except (ValueError, RecursionError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SkipFile(f"not a notebook: invalid JSON ({reason})") from None
    if not isinstance(notebook, dict):
        raise SkipFile(f"not a notebook: the JSON is {type(notebook).__name__}, not an object")
    cells = notebook.get("cells", [])
    if not isinstance(cells, list):
        raise SkipFile(f"not a notebook: 'cells' is {type(cells).__name__}, not a list")
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict):
            raise SkipFile(f"not a notebook: cell {index} is {type(cell).__name__}, not an object")
        if not isinstance(cell.get("cell_type", ""), str):
            raise SkipFile(f"not a notebook: cell {index} has a non-string cell_type")
        source = cell.get("source", "")
        if not (
            isinstance(source, str)
            or (isinstance(source, list) and all(isinstance(s, str) for s in source))
        ):
            raise SkipFile(f"not a notebook: cell {index} has a source that is not text")
    return notebook


def notebook_code(notebook: dict[str, Any]) -> tuple[str, list[tuple[int, int]]]:
    """A validated notebook's code cells as one module, and where each cell starts in it."""
    lines: list[str] = []
    starts: list[tuple[int, int]] = []
    for index, cell in enumerate(notebook.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        starts.append((index, len(lines) + 1))
        lines += _cell_lines(cell_text(cell))
    return "\n".join(lines) + "\n", starts


# -- files --------------------------------------------------------------------------------------


def package_of(path: Path) -> str | None:
    """The dotted package of a module file, from the ``__init__.py`` files above it."""
    return _package_of_folder(_real_folder_of(path))[0]


def _real_folder_of(path: Path) -> str:
    """``str(path.resolve().parent)``, resolving each folder once: ``resolve`` asks the file
    system about every folder on the way, which cost as much as reading the file."""
    if os.path.islink(path):  # the folder of its target
        return str(path.resolve().parent)
    # Not abspath: it would fold ``link/..`` before the link is resolved.
    folder = os.path.dirname(path)
    return _real_folder(folder if os.path.isabs(folder) else os.path.join(os.getcwd(), folder))


@functools.lru_cache(maxsize=4096)
def _real_folder(folder: str) -> str:
    return os.path.realpath(folder)


def forget_folders() -> None:
    """Forget what was learnt about folders (their real paths and packages): a run calls it
    first, so that a long-lived process sees a tree changed between runs."""
    _real_folder.cache_clear()
    _package_of_folder.cache_clear()


@functools.lru_cache(maxsize=4096)  # every file of a folder shares the walk up
def _package_of_folder(folder_name: str) -> tuple[str | None, Path | None]:
    """(dotted package, the folder that holds its top-level package) of a folder."""
    parts: list[str] = []
    folder = Path(folder_name)
    while (folder / "__init__.py").is_file() and folder.name.isidentifier():
        parts.append(folder.name)
        if folder.parent == folder:
            break
        folder = folder.parent
    if not parts:
        return None, None
    return ".".join(reversed(parts)), folder


def module_exists(root: Path | None, dotted: str) -> bool:
    """Is ``dotted`` a module or package under ``root`` (the folder of the top-level package)?"""
    if root is None:
        return False
    base = root.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or base.is_dir()


def read_source(path: Path, display: str) -> Source:
    """Read one ``.py`` or ``.ipynb`` file (see the module docstring for the checks).

    Raises
    ------
    SkipFile
        With the reason, if the file is not read.
    """
    data = read_bytes(path)
    if path.suffix == ".ipynb":
        notebook = load_notebook(data)
        code, starts = notebook_code(notebook)
        return Source(path, display, code, starts, notebook=notebook, raw=data)
    text, encoding, bom = decode_python(data)
    package, root = _package_of_folder(_real_folder_of(path))
    return Source(
        path, display, text, encoding=encoding, bom=bom, package=package, package_root=root
    )


def write_source(source: Source, text: str) -> str:
    """Write ``text`` over ``source``'s file in its encoding and byte-order mark; returns ``""``
    or why it was not written."""
    try:
        data = source.encode(text)
    except UnicodeEncodeError as exc:
        return f"not written: the fix needs characters {source.encoding} cannot encode ({exc})"
    try:
        # O_NOFOLLOW: the path was checked not to be a symlink; never write through one that
        # replaced it since.
        fd = os.open(source.path, os.O_WRONLY | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "wb") as out:
            out.write(data)
    except OSError as exc:
        return f"not written: {exc.strerror or exc}"
    return ""
