"""Without apache-tvm (the base install is the tooling), each public entry names the [tvm] extra.

A child process hides ``tvm`` behind a meta-path finder that refuses it, as an environment
without the wheel would; the package itself and its tooling still import.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

HIDE_TVM = textwrap.dedent(
    """
    import sys
    class NoTvm:
        def find_spec(self, name, path=None, target=None):
            if name == "tvm" or name.startswith("tvm.") or name.startswith("tvm_ffi"):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None
    sys.meta_path.insert(0, NoTvm())
    """
)


@pytest.mark.parametrize(
    "entry",
    [
        "from compile_engine_compat import compile_engine",
        "from compile_engine_compat import te_compiler",
        "from compile_engine_compat import relay",
        "from compile_engine_compat import schedules",
        "import compile_engine_compat; compile_engine_compat.install()",
        "import compile_engine_compat; compile_engine_compat.get",
        "from compile_engine_compat import testing; testing.relax_functions",
    ],
)
def test_each_entry_names_the_extra(entry: str) -> None:
    script = HIDE_TVM + textwrap.dedent(
        f"""
        from compile_engine_compat.conflicts import TvmMissingError
        try:
            {entry}
        except TvmMissingError as err:
            assert "pip install 'compile-engine-compat[tvm]'" in str(err), err
            assert isinstance(err, ImportError)
            print("named")
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "named"


def test_the_tooling_runs_without_tvm(tmp_path) -> None:
    (tmp_path / "legacy.py").write_text(
        "from tvm.relay.backend import compile_engine\ncompile_engine.get()\n"
    )
    script = HIDE_TVM + textwrap.dedent(
        f"""
        from compile_engine_compat import cli
        code = cli.main(["scan", "--exit-zero", {str(tmp_path / "legacy.py")!r}])
        assert "tvm" not in sys.modules
        print("scanned", code)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "scanned 0" in done.stdout
