"""``[tool.compile-engine-compat]`` settings and file discovery (.gitignore, exclusions)."""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from compile_engine_compat import cli
from compile_engine_compat.migrate.config import ConfigError, Configs, Glob, Settings
from compile_engine_compat.migrate.scan import run_scan

APP = textwrap.dedent(
    """\
    from tvm.relay.backend import compile_engine as ce
    from tvm.relay.backend import te_compiler
    ce.get().clear()
    te_compiler.get().jit(f, t)
    import tvm
    with tvm.transform.PassContext(config={"tir.noalias": True}):
        pass
    """
)

PYPROJECT = textwrap.dedent(
    """\
    [project]
    name = "downstream"

    [tool.compile-engine-compat]
    select = ["CEC1", "CEC2"]
    extend-select = ["CEC615"]
    ignore = ["CEC106"]
    per-file-ignores = {"tests/**" = ["CEC2"]}
    extend-exclude = ["generated/"]
    target-version = "0.27"
    output-format = "json"
    """
)
#: The same settings as flags, read with --isolated.
FLAGS = [
    "--isolated",
    "--select",
    "CEC1,CEC2",
    "--extend-select",
    "CEC615",
    "--ignore",
    "CEC106",
    "--extend-exclude",
    "generated/",
    "--format",
    "json",
]


def _project(root: Path, pyproject: str = PYPROJECT) -> Path:
    (root / "pyproject.toml").write_text(pyproject)
    for folder in ("src/app", "tests", "generated"):
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / "mod.py").write_text(APP)
    return root


def _json_scan(capsys: pytest.CaptureFixture[str], *args: str) -> Counter:
    cli.main(["scan", "--no-cache", *args])
    return Counter((d["path"], d["line"], d["code"]) for d in json.loads(capsys.readouterr().out))


def test_pyproject_settings_give_the_same_findings_as_the_flags(tmp_path, capsys, monkeypatch):
    root = _project(tmp_path)
    monkeypatch.chdir(root)
    configured = _json_scan(capsys, ".")
    flagged = _json_scan(capsys, *FLAGS, ".")
    # per-file-ignores has no flag: the flags run sees tests/mod.py's CEC2xx too.
    assert configured == Counter(
        {
            key: n
            for key, n in flagged.items()
            if not (key[0] == "tests/mod.py" and key[2].startswith("CEC2"))
        }
    )
    assert {code for _, _, code in configured} == {
        "CEC101",
        "CEC102",
        "CEC201",
        "CEC202",
        "CEC205",
        "CEC615",
    }
    assert not any(path.startswith("generated/") for path, _, _ in configured)
    assert {code for path, _, code in configured if path == "tests/mod.py"} == {
        "CEC101",
        "CEC102",
        "CEC615",
    }


def test_flags_override_the_pyproject(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(_project(tmp_path))
    only = _json_scan(capsys, "--select", "CEC615", ".")
    assert {code for _, _, code in only} == {"CEC615"}
    # --ignore adds to the section's ignore list.
    fewer = _json_scan(capsys, "--ignore", "CEC102", ".")
    assert "CEC102" not in {code for _, _, code in fewer}
    assert "CEC106" not in {code for _, _, code in fewer}


def test_target_version_reports_only_what_that_tvm_already_lacks(tmp_path, capsys):
    (tmp_path / "mod.py").write_text(APP)
    old_tvm = _json_scan(
        capsys, "--isolated", "--format", "json", "--target-version", "0.19", str(tmp_path)
    )
    codes = {code for _, _, code in old_tvm}
    # compile_engine went in 0.8: reported. te_compiler and the tir.* keys went in 0.20: not yet.
    assert "CEC101" in codes and not any(code.startswith(("CEC2", "CEC6")) for code in codes)


def test_the_closest_section_wins_and_a_pyproject_without_one_is_passed_over(tmp_path):
    _project(tmp_path)
    sub = tmp_path / "packages" / "lib"
    sub.mkdir(parents=True)
    (sub / "pyproject.toml").write_text('[project]\nname = "lib"\n')  # no section: passed over
    inner = tmp_path / "packages" / "other"
    inner.mkdir()
    (inner / "pyproject.toml").write_text('[tool.compile-engine-compat]\nselect = ["CEC6"]\n')
    configs = Configs()
    assert configs.for_folder(sub).source == tmp_path / "pyproject.toml"
    assert configs.for_folder(inner).select == ("CEC6",)
    (sub / "m.py").write_text(APP)
    (inner / "m.py").write_text(APP)
    run = run_scan([str(tmp_path / "packages")], configs)
    by_file = {(f.path, f.code) for f in run.findings}
    assert ("other/m.py", "CEC615") in by_file
    assert not any(path == "other/m.py" and code != "CEC615" for path, code in by_file)
    assert ("lib/m.py", "CEC101") in by_file


@pytest.mark.parametrize(
    "section, message",
    [
        ('selct = ["CEC1"]', "unknown key 'selct' (did you mean 'select'?)"),
        ('select = ["XYZ"]', "unknown rule id or prefix 'XYZ'"),
        ("select = 'CEC1'", "select must be a list of strings"),
        ('output-format = "xml"', "output-format must be one of text, json, sarif, github"),
        ('target-version = "new"', "target-version 'new' is not a TVM version"),
        ("[tool.compile-engine-compat.pytest]\nstrict = 1", "strict must be true or false"),
    ],
)
def test_a_bad_section_is_one_line_naming_the_file_and_key(tmp_path, capsys, section, message):
    (tmp_path / "pyproject.toml").write_text(f"[tool.compile-engine-compat]\n{section}\n")
    (tmp_path / "m.py").write_text(APP)
    assert cli.main(["scan", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert message in err and "pyproject.toml" in err and len(err.strip().splitlines()) == 1


def test_globs_follow_ruffs_rules():
    assert Glob("build").matches("a/b/build", is_dir=True)
    assert Glob("*_pb2.py").matches("src/x_pb2.py")
    assert Glob("src/gen/*.py").matches("src/gen/a.py")
    assert not Glob("src/gen/*.py").matches("other/src/gen/a.py")
    assert Glob("src/**/gen.py").matches("src/a/b/gen.py")
    assert Glob("src/**/gen.py").matches("src/gen.py")
    assert Glob("generated/").matches("x/generated", is_dir=True)
    assert not Glob("generated/").matches("x/generated", is_dir=False)


def test_selection_uses_the_longest_selector_and_the_target_version(tmp_path):
    settings = Settings(tmp_path, select=("CEC1",), ignore=("CEC10",), extend_select=("CEC105",))
    assert settings.enabled("CEC112") and settings.enabled("CEC105")
    assert not settings.enabled("CEC104") and not settings.enabled("CEC201")
    assert not Settings(tmp_path, target_version="0.7").enabled("CEC101")
    with pytest.raises(ConfigError, match="not a TVM version"):
        Settings(tmp_path, target_version="x").enabled("CEC101")


# -- discovery -----------------------------------------------------------------------------------


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture
def checkout(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    _git(tmp_path, "init", "-q")
    for folder in ("build/pkg", "venv", "node_modules/x", "ignored", "src"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "m.py").write_text(APP)
    (tmp_path / "venv" / "pyvenv.cfg").write_text("home = /usr\n")
    (tmp_path / ".gitignore").write_text("ignored/\n*.gen.py\n")
    (tmp_path / "src" / "x.gen.py").write_text(APP)
    return tmp_path


def _scanned(paths: list[str], configs: Configs | None = None) -> set[str]:
    return {f.path for f in run_scan(paths, configs).findings}


def test_a_git_checkout_scans_what_git_tracks_or_would(checkout):
    found = _scanned([str(checkout)])
    # A source package named build/ is scanned; git's ignores and the virtual env are not.
    assert found == {"build/pkg/m.py", "node_modules/x/m.py", "src/m.py"}


def test_outside_git_the_default_names_are_skipped(tmp_path):
    for folder in ("build/pkg", "venv", "dist", ".tox", "src"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "m.py").write_text(APP)
    assert _scanned([str(tmp_path)]) == {"src/m.py"}
    # exclude replaces the defaults (a folder with pyvenv.cfg would still be skipped).
    configs = Configs({"exclude": ("dist",)}, isolated=True)
    assert _scanned([str(tmp_path)], configs) == {
        ".tox/m.py",
        "build/pkg/m.py",
        "src/m.py",
        "venv/m.py",
    }


def test_force_exclude_applies_the_exclusions_to_named_files(checkout, capsys):
    ignored = str(checkout / "ignored" / "m.py")
    generated = str(checkout / "src" / "x.gen.py")
    assert _scanned([ignored, generated]) == {ignored, generated}  # named: read, as in ruff
    forced = Configs({"force_exclude": True}, isolated=True)
    assert _scanned([ignored, generated, str(checkout / "src" / "m.py")], forced) == {
        str(checkout / "src" / "m.py")
    }
    assert cli.main(["scan", "--isolated", "--force-exclude", ignored]) == 0
    assert cli.main(["scan", "--isolated", ignored]) == 1


def test_respect_gitignore_can_be_turned_off(checkout):
    configs = Configs({"respect_gitignore": False}, isolated=True)
    # Then the default names apply, as outside git.
    assert _scanned([str(checkout)], configs) == {"ignored/m.py", "src/m.py", "src/x.gen.py"}
