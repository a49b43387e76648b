"""scan and fix on hostile files: no crash, no hang, no write outside the tree (issue 17 item 7,
issue 18 items 5-7). Cases that could hang or kill the process run the CLI in a subprocess with a
timeout and assert it exited by itself, not by a signal."""

from __future__ import annotations

import codecs
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from compile_engine_compat import cli
from compile_engine_compat.migrate.fix import fix_code
from compile_engine_compat.migrate.scan import scan_paths
from compile_engine_compat.migrate.sources import MAX_NESTING, nesting_depth

ROOT = Path(__file__).resolve().parents[2]
LEGACY = "from tvm.relay.backend import compile_engine\n"
SHIM = "from compile_engine_compat import compile_engine\n"


def _cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run the console script in a fresh interpreter; a hang fails the test, never the run."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "compile_engine_compat.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    assert proc.returncode >= 0, f"killed by signal {-proc.returncode}: {proc.stderr[-2000:]}"
    return proc


@pytest.fixture
def special_tree(tmp_path: Path) -> Path:
    """A tree with one legacy file and the special files of issue 17 beside it."""
    tree = tmp_path / "src"
    tree.mkdir()
    (tree / "app.py").write_text(LEGACY)
    os.mkfifo(tree / "fifo.py")
    (tree / "zero.py").symlink_to("/dev/zero")
    (tree / "rand.ipynb").symlink_to("/dev/urandom")
    return tree


@pytest.mark.parametrize("command", ["scan", "fix"])
def test_special_files_are_skipped_without_blocking(special_tree: Path, command: str) -> None:
    proc = _cli(command, str(special_tree), timeout=30)
    out = proc.stdout + proc.stderr
    assert "fifo.py" in out and "zero.py" in out and "rand.ipynb" in out
    assert "Traceback" not in out
    if command == "scan":
        assert proc.returncode == 1  # the finding in app.py; skips do not change the code
        assert "fifo.py: skipped: not a regular file (a FIFO)" in out
        assert "zero.py: skipped: not a regular file (a character device)" in out
    else:
        assert proc.returncode == 0
        assert (special_tree / "app.py").read_text() == SHIM
        assert "Skipped fifo.py: not a regular file (a FIFO)" in out


def test_a_fifo_named_on_the_command_line_is_skipped(special_tree: Path) -> None:
    proc = _cli("scan", str(special_tree / "fifo.py"), timeout=30)
    assert proc.returncode == 0
    assert "skipped: not a regular file (a FIFO)" in proc.stdout


def test_a_20000_deep_chain_is_skipped_fast_in_both_commands(tmp_path: Path) -> None:
    (tmp_path / "deep.py").write_text(LEGACY + "x = a" + ".a" * 20_000 + "\n")
    (tmp_path / "other.py").write_text(LEGACY)
    for command in ("scan", "fix"):
        start = time.perf_counter()
        proc = _cli(command, str(tmp_path), timeout=60)
        assert time.perf_counter() - start < 20  # was: SIGSEGV after 70-90 s
        assert "deep.py" in proc.stdout and "nested 20001 deep at line 2" in proc.stdout
        assert "Traceback" not in proc.stdout + proc.stderr
    assert (tmp_path / "other.py").read_text() == SHIM  # the run went on after the bad file
    assert (tmp_path / "deep.py").read_text().startswith(LEGACY)


def test_a_valid_400_term_chain_is_scanned_and_fixed(tmp_path: Path) -> None:
    chain = " + ".join(['"s"'] * 400)
    code = LEGACY + f"x = {chain}\ny = compile_engine.get()\n"
    assert nesting_depth(code)[0] <= MAX_NESTING
    (tmp_path / "plus.py").write_text(code)
    findings, skipped = scan_paths([str(tmp_path)])
    assert skipped == []
    assert [(f.line, f.api) for f in findings] == [(1, "compile_engine"), (3, "compile_engine.get")]
    new, changes, _ = fix_code(code)  # in the caller's thread: cli.main uses a deep stack
    assert new == SHIM + f"x = {chain}\ny = compile_engine.get()\n" and len(changes) == 1
    assert cli.main(["fix", str(tmp_path)]) == 0
    assert (tmp_path / "plus.py").read_text() == new


def test_nesting_depth_counts_code_not_strings_or_flat_lists() -> None:
    assert nesting_depth("x = 1\n")[0] < 5
    flat = "x = [" + ", ".join(f"-{i}" for i in range(5000)) + "]\n"
    assert nesting_depth(flat)[0] < 5
    text = 'x = "' + "+" * 5000 + '"  # ' + "." * 5000 + "\n"
    assert nesting_depth(text)[0] < 5
    assert nesting_depth("x = a" + ".a" * 600 + "\n") == (601, 1)  # 600 dots + the line


@pytest.mark.parametrize(
    "text, reason",
    [
        ("[]", "not a notebook: the JSON is list, not an object"),
        ("null", "not a notebook: the JSON is NoneType, not an object"),
        ('{"cells":"abc"}', "not a notebook: 'cells' is str, not a list"),
        ('{"cells":[1]}', "not a notebook: cell 0 is int, not an object"),
        ('{"cells":[{"cell_type":"code","source":[1]}]}', "cell 0 has a source that is not text"),
        ("{", "not a notebook: invalid JSON"),
    ],
)
def test_notebook_shapes_are_checked(tmp_path: Path, text: str, reason: str) -> None:
    (tmp_path / "bad.ipynb").write_text(text)
    (tmp_path / "app.py").write_text(LEGACY)
    findings, skipped = scan_paths([str(tmp_path)])
    assert [f.path for f in findings] == ["app.py"]
    assert [s.path for s in skipped] == ["bad.ipynb"] and reason in skipped[0].reason
    assert cli.main(["fix", "--diff", str(tmp_path)]) == 1


@pytest.mark.parametrize(
    "encoding, prefix",
    [
        ("latin-1", "# -*- coding: latin-1 -*-\n"),
        ("cp1252", "# vim: set fileencoding=cp1252 :\n"),
        ("utf-8-sig", ""),
        ("utf-16", "# -*- coding: utf-16 -*-\n"),
        ("utf-16-be", ""),
        ("utf-32", ""),
    ],
)
def test_fix_writes_back_in_the_original_encoding(
    tmp_path: Path, encoding: str, prefix: str
) -> None:
    body = 's = "é€"\r\n' if encoding == "cp1252" else 's = "é"\n'
    before = prefix + LEGACY + body
    data = before.encode(encoding)
    if encoding == "utf-16-be":
        data = codecs.BOM_UTF16_BE + data
    target = tmp_path / "app.py"
    target.write_bytes(data)
    findings, skipped = scan_paths([str(target)])
    assert skipped == [] and [f.line for f in findings] == [2 if prefix else 1]
    assert cli.main(["fix", str(target)]) == 0
    expected = (prefix + SHIM + body).encode(encoding)
    if encoding == "utf-16-be":
        expected = codecs.BOM_UTF16_BE + expected
    assert target.read_bytes() == expected


def test_crlf_line_endings_survive_fix(tmp_path: Path) -> None:
    target = tmp_path / "app.py"
    target.write_bytes((LEGACY + "x = compile_engine.get()\n").replace("\n", "\r\n").encode())
    assert cli.main(["fix", str(target)]) == 0
    assert (
        target.read_bytes() == (SHIM + "x = compile_engine.get()\n").replace("\n", "\r\n").encode()
    )


@pytest.mark.parametrize(
    "data, reason",
    [
        (b"\x00\x01\xff\xfe\x00garbage", "binary"),
        (b"x = 1\x00\n", "binary file (contains NUL bytes)"),
        (b"# -*- coding: no-such-codec -*-\nx = 1\n", "bad coding declaration"),
        (b"# -*- coding: utf-8 -*-\nx = '\xff'\n", "not valid utf-8 text"),
    ],
)
def test_undecodable_files_are_skipped_alike_by_scan_and_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes, reason: str
) -> None:
    (tmp_path / "bad.py").write_bytes(data)
    (tmp_path / "app.py").write_text(LEGACY)
    assert cli.main(["scan", str(tmp_path)]) == 1
    scan_out = capsys.readouterr().out
    assert "bad.py: skipped: " in scan_out and reason in scan_out
    assert cli.main(["fix", str(tmp_path)]) == 0
    fix_out = capsys.readouterr().out
    assert "Skipped bad.py: " in fix_out and reason in fix_out
    assert (tmp_path / "bad.py").read_bytes() == data
    assert (tmp_path / "app.py").read_text() == SHIM


def _oversized(path: Path, tail: bytes) -> None:
    """A file just over the size cap (sparse: nothing written but ``tail``, at its end)."""
    from compile_engine_compat.migrate.sources import MAX_FILE_BYTES

    with open(path, "wb") as out:
        out.truncate(MAX_FILE_BYTES + 1024)
        out.seek(0, os.SEEK_END)
        out.write(tail)


def test_a_skipped_file_that_may_hold_legacy_code_fails_the_scan_unless_excluded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _oversized(tmp_path / "generated.py", b"\n" + LEGACY.encode())
    (tmp_path / "clean.py").write_text("x = 1\n")
    assert cli.main(["scan", "--isolated", "--no-cache", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "generated.py: skipped: larger than 32 MiB" in out
    assert "(it may hold legacy code)" in out and "(1 may hold legacy code)" in out
    assert cli.main(["scan", "--isolated", "--no-cache", "--exit-zero", str(tmp_path)]) == 0
    args = ["scan", "--isolated", "--no-cache", "--extend-exclude", "generated.py"]
    assert cli.main([*args, str(tmp_path)]) == 0


def test_a_skipped_file_that_spells_no_legacy_name_keeps_the_exit_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _oversized(tmp_path / "data.py", b"\nDATA = [0]\n")
    (tmp_path / "binary.py").write_bytes(b"x = '\xff'\n")
    assert cli.main(["scan", "--isolated", "--no-cache", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "data.py: skipped: larger than" in out and "binary.py: skipped: " in out
    assert "may hold legacy code" not in out


def test_a_legacy_name_across_two_pieces_of_a_skipped_file_is_seen(tmp_path: Path) -> None:
    from compile_engine_compat.migrate import scan

    split = tmp_path / "split.py"
    split.write_bytes(b"#" * (scan._SEARCH_CHUNK - 5) + LEGACY.encode())
    assert scan.may_hold_legacy(split)
    (tmp_path / "plain.py").write_bytes(b"#" * (scan._SEARCH_CHUNK * 2))
    assert not scan.may_hold_legacy(tmp_path / "plain.py")


def test_a_file_over_the_size_cap_is_skipped(tmp_path: Path) -> None:
    from compile_engine_compat.migrate.sources import SkipFile, read_bytes

    (tmp_path / "big.py").write_bytes(b"#" * 2048)
    with pytest.raises(SkipFile, match="larger than"):
        read_bytes(tmp_path / "big.py", limit=1024)


def test_fix_never_writes_through_a_symlink_out_of_the_tree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "vendored.py").write_text(LEGACY)
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.py").symlink_to("../outside/vendored.py")
    (src / "b.py").write_text(LEGACY)
    (src / "c.py").symlink_to("b.py")
    assert cli.main(["fix", str(src)]) == 0
    out = capsys.readouterr().out
    assert (outside / "vendored.py").read_text() == LEGACY
    assert (src / "b.py").read_text() == SHIM and (src / "c.py").is_symlink()
    assert f"Skipped a.py: symlink to a file outside {src.as_posix()}: not followed" in out
    assert f"Skipped c.py: symlink to a file inside {src.as_posix()}: not followed" in out
    # Named on the command line, the link is refused too.
    assert cli.main(["fix", str(src / "a.py")]) == 0
    assert (outside / "vendored.py").read_text() == LEGACY


HOSTILE_NAMES = [
    "x\n::error title=INJECTED::pwned\n.py",
    "a,line=999::fake.py",
    'q"uote\\back%25slash.py',
    "tab\there\r.py",
]


@pytest.fixture
def hostile_tree(tmp_path: Path) -> Path:
    for name in HOSTILE_NAMES:
        (tmp_path / name).write_text(LEGACY)
        (tmp_path / f"bad{name}").write_bytes(b"\x00")
    return tmp_path


def test_sarif_stays_valid_json_with_hostile_names(
    hostile_tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["scan", "--format", "sarif", str(hostile_tree)]) == 1
    sarif = json.loads(capsys.readouterr().out)
    run = sarif["runs"][0]
    uris = [
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]
    ]
    assert len(uris) == len(HOSTILE_NAMES)
    assert all("\n" not in uri and "\r" not in uri and '"' not in uri for uri in uris)
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert len(notes) == len(HOSTILE_NAMES) and run["invocations"][0]["executionSuccessful"]
    assert all(n["message"]["text"].startswith("skipped: ") for n in notes)


def test_github_output_cannot_be_injected_by_file_names(
    hostile_tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["scan", "--format", "github", str(hostile_tree)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 * len(HOSTILE_NAMES)  # one line each: no name broke a line
    for line in lines:
        assert line.startswith(("::warning file=", "::error file="))
        assert ",line=999" not in line.split("::")[1]  # the spoofed property is escaped
    assert not any(line.startswith("::error title=INJECTED") for line in lines)
    assert sum(",line=" in line.split("::")[1] for line in lines) == len(HOSTILE_NAMES)


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_every_format_lists_skipped_files_and_keeps_the_exit_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    (tmp_path / "broken.py").write_text("def (:\n    compile_engine.get()\n")
    (tmp_path / "clean.py").write_text("x = 1\n")
    assert cli.main(["scan", "--format", fmt, str(tmp_path)]) == 1  # it may hold legacy code
    out = capsys.readouterr().out
    assert "broken.py" in out and "failed to parse" in out
    if fmt == "json":
        assert json.loads(out) == [{"path": "broken.py", "skipped": json.loads(out)[0]["skipped"]}]
