"""The documentation: a README read in ten minutes whose examples run, and a site that builds.

The site (``docs/``) is built with Sphinx exactly as CI builds it, warnings as errors, so a page
left out of the toctree, a broken cross-reference or a docstring that does not parse fails here
too; the build is skipped when the ``docs`` extra is not installed. The README's Python examples
run in fresh interpreters (``install()`` changes the process), against this checkout.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
#: What a newcomer reads in ten minutes; the rest lives in docs/.
README_MAX_LINES = 200
#: The quick start, exactly: CI runs the second command (.ci/run).
QUICK_START = (
    'pip install ".[tvm]" && compile-engine-compat demo',
    'pip install ".[test]" && pytest',
)

_PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)
_LOCAL_LINK = re.compile(r"\]\((?!https?://|#)([^)#\s]+)(?:#[^)]*)?\)")


def _run_python(args: list[str], cwd: Path, timeout: int) -> subprocess.CompletedProcess[str]:
    """Run ``python *args`` in a child that imports this checkout, whatever copy is installed."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def test_readme_is_at_most_200_lines() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines: move the rest into docs/"


def test_readme_quick_start_is_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    quick_start = text.split("## Quick start", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    assert quick_start.splitlines() == list(QUICK_START)


def test_readme_links_point_at_files_of_the_checkout() -> None:
    prose = re.sub(r"^```.*?^```$", "", README.read_text(encoding="utf-8"), flags=re.M | re.S)
    links = _LOCAL_LINK.findall(prose)
    assert links, "the README links into docs/"
    missing = [link for link in links if not (ROOT / link).exists()]
    assert not missing, f"README.md links to files that do not exist: {missing}"


def _readme_examples() -> list[str]:
    return _PYTHON_BLOCK.findall(README.read_text(encoding="utf-8"))


def test_readme_has_its_examples() -> None:
    assert len(_readme_examples()) == 2  # Usage and Relay-era code


@pytest.mark.slow
@pytest.mark.parametrize("index", range(2), ids=["usage", "relay"])
def test_readme_example_runs(index: int, tmp_path: Path) -> None:
    # A fresh interpreter for each: the Relay example installs the import alias.
    result = _run_python(["-c", _readme_examples()[index]], tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]


@pytest.mark.slow
def test_docs_build_with_warnings_as_errors(tmp_path: Path) -> None:
    for module in ("sphinx", "numpydoc", "myst_parser"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed: pip install '.[docs]'")
    # What CI runs (.ci/run); -W fails on any warning, --keep-going reports them all first.
    command = ["-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html"]
    result = _run_python([*command, str(DOCS), str(tmp_path / "html")], ROOT, timeout=600)
    assert result.returncode == 0, result.stderr[-5000:]
    built = {
        path.relative_to(tmp_path / "html").with_suffix("").as_posix()
        for path in (tmp_path / "html").rglob("*.html")
    }
    # Every page of docs/ is in the site (an orphan would have been a warning already).
    sources = {
        path.relative_to(DOCS).with_suffix("").as_posix()
        for suffix in ("*.md", "*.rst")
        for path in DOCS.rglob(suffix)
        if "_build" not in path.parts
    }
    assert sources <= built, sorted(sources - built)
