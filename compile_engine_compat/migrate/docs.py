"""MIGRATION.md from the API table, and one row of it where the user is.

Usage::

    compile-engine-compat docs NAME-or-ID     # one row: old call, modern code, differences
    compile-engine-compat docs --path         # where the installed MIGRATION.md is
    compile-engine-compat docs [-o FILE] [--check FILE]   # the whole guide

``NAME-or-ID`` is a rule id (``CEC105``), a row name (``compile_engine.CompileEngine.jit``), an
old dotted path (``tvm.relay.backend.compile_engine.get``) or an anchor. The guide ships inside
the package (``compile_engine_compat/MIGRATION.md``, package data), so the ``MIGRATION.md#...``
references in warnings, errors and scan reports resolve in an installed copy; a test keeps that
file equal to :func:`generate`, as it does the repository's.

The hand-written parts (intro, behaviours that differ, fix kinds) live here as text, so that
regenerating the file loses nothing; every row section comes from :data:`API_TABLE`. A test keeps
the committed MIGRATION.md equal to :func:`generate`.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Sequence
from pathlib import Path

from compile_engine_compat.api_table import (
    API_TABLE,
    COMPILE_ENGINE_REMOVED_IN_TVM,
    RULES,
    SHIM_REMOVAL_VERSION,
    TE_COMPILER_REMOVED_IN_TVM,
    LegacyApi,
)
from compile_engine_compat.migrate.examples import GUIDE_PRELUDE, example

__all__ = ["PACKAGED", "find_row", "generate", "main", "row_text"]

#: The copy of MIGRATION.md installed with the package.
PACKAGED = Path(__file__).resolve().parent.parent / "MIGRATION.md"  # the package root

_INTRO = f"""\
# Migration guide: `tvm.relay.backend.compile_engine` and `te_compiler`

<!-- Generated from compile_engine_compat/api_table.py by `compile-engine-compat docs -o \
MIGRATION.md`. Do not edit by hand: change the table or compile_engine_compat/migrate/docs.py. -->

TVM removed `relay.backend.compile_engine` in {COMPILE_ENGINE_REMOVED_IN_TVM}, and `te_compiler`
with the rest of Relay in {TE_COMPILER_REMOVED_IN_TVM}. compile-engine-compat keeps both APIs
working on modern TVM (Relax, TE, `tvm.compile`) so that a legacy project moves in two steps:

1. **Swap the imports** (`compile-engine-compat fix PATH`): the code then runs unchanged through
   the shim, and every legacy call warns with its modern replacement.
2. **Port each call** to the modern code listed below, at your own pace; the pytest report and its
   baseline keep the count from growing. The shim drops the legacy surface in
   compile-engine-compat {SHIM_REMOVAL_VERSION}.

Each legacy name has a section below (the warning's link points at it): the old spelling, the
shim's drop-in, the modern code, what the fixer can do, what differs, and an example: the legacy
code and the modern code that does the same on TVM 0.27 (see "Running the examples").
"""

_EXAMPLES = """\
## Running the examples

Every section's example is two blocks that each start from this prelude and set `result`:
*before*, the legacy code, as a TVM <= 0.19 program wrote it (it runs on TVM 0.27 under
`compile_engine_compat.install()`, which serves `tvm.relay` and its `backend` modules), and
*after*, the modern code, which runs on TVM 0.27 alone. The test suite runs every pair
(`tests/migrate/test_guide_blocks.py`) and checks that both give the same `result`; where a
section's note states a difference, both blocks also set `observed`, and the test checks that it
differs. A *before* block for a name the shim cannot serve raises, and says which error.

```python
{prelude}```
"""

_DIFFERENCES = """\
## Legacy behaviours that differ

The shim keeps the legacy call signatures and results, except where modern TVM has no
equivalent object:

- **Source functions are Relax functions.** Relay no longer exists: `lower`, `jit`,
  `lower_shape_func` and `CCacheKey` take a `relax.Function` (built with `relax.BlockBuilder` or
  TVMScript) or an `IRModule` holding one. A `CCacheKey` built from anything else raises
  `TypeError`.
- **`CachedFunc.schedule` is a `tvm.s_tir.Schedule`**, not a `te.Schedule`: TE schedules
  (`te.create_schedule`, `s[op].split`) are gone. Schedule hooks receive the `s_tir.Schedule` and
  the block names.
- **`target=None` uses `tvm.target.Target.current()`** (the enclosing `with target:` scope), as the
  legacy C++ did; with no scope, lowering raises `ValueError` ("Need target ..."), as does an
  empty string.
- **One PrimFunc per function.** The whole Relax function is traced to one TE graph through each
  op's legalization (`FLegalize`); that is also each op's default strategy implementation.
- **No AutoTVM or auto-scheduler.** `select_implementation(..., use_autotvm=True)` selects by
  priority and says so once; `relay.backend.use_auto_scheduler` is accepted but schedules nothing.
- **The two `relay.backend.*` pass-config keys never reach C++**: read them with
  `compile_engine_compat.surfaces.passconfig.current_config()`, not `PassContext.current().config`.
- **`te_compiler`'s `use_count` counts from 1**, as upstream; `compile_engine`'s from 0. Both views
  share one cache.
- **TVM <=0.19 target strings and pass-config keys are translated** where the shim sees them:
  a target string passed to the shim (`"llvm -mcpu=core-avx2"`) becomes the dict form, and a
  renamed `PassContext` key (`tir.disable_vectorize`) its new name, each with a warning naming
  the new spelling. `tvm.target.Target("llvm -mcpu=...")` called directly still fails in TVM.
- **Cache lookups depend on the `PassContext`.** `CCacheKey(source_func, target)` is unchanged
  and compares by identity, but the engine looks entries up by function, target *and* the current
  `PassContext` (opt level, config, required and disabled passes): one key used inside and
  outside `PassContext(...)` finds two entries, two kernels and two `use_count`s. The legacy C++
  key ignored the context, and handed out a kernel built without argument checks anywhere.
- **After `os.fork()`, kernels run on one thread** in the child (`TVM_NUM_THREADS=1`, even if you
  set it): TVM cannot rebuild a thread pool whose workers did not survive the fork.
- **The Relay front end builds Relax.** `compile_engine_compat.relay` (and `tvm.relay` under
  `install()`) emits a Relax function: `from_expr(f)["main"]` is a `relax.Function`, `astext()`
  prints Relay's text and `.script()` the Relax TVMScript that runs, `InferType` is the
  identity, a parameter needs a shape unless a conv, dense, bias or norm use implies it, and
  some ops become several Relax ops (`dense` is a transposed `matmul`, `bias_add` a reshape and
  add). Frontends, QNN ops, `dyn.*` ops, running ADTs and
  control flow, and the Relay VM are refused naming the replacement. TE schedules are skipped with
  a warning; AutoTVM records are refused. `relay.build` returns a VM executable (`target_host`,
  `executor`, `runtime` ignored; `GraphModule` outputs flattened).
- **A plain `llvm` target is this machine's CPU.** `"llvm"` (no `mcpu`, `mattr`, `mabi`, or a
  `mtriple` other than the host's) builds for `llvm_get_system_cpu()` (with `mattr` switching
  off any feature the CPU name implies but the host lacks), where TVM builds generic x86-64
  (SSE2) code: matmul and conv2d run 2-3x faster. `CachedFunc.target` and `CCacheKey.target`
  show the `mcpu` used, and every cache key includes it, the persistent cache's too, so a cache
  shared between machines never hands one machine's kernel to another.
  `COMPILE_ENGINE_COMPAT_GENERIC_CPU=1` restores generic code. With FMA, LLVM contracts
  multiply-adds, so results differ from generic code in the last bits; the property suite's
  tolerances (against `tvm.compile` + VM and NumPy) are unchanged and hold.
- **Small elementwise kernels build at LLVM `-O1`.** A kernel whose every block is elementwise
  and vectorized by the default rules (in TIR) is built with `"opt-level": 1`: it runs as fast and
  builds ~5 ms faster. `CachedFunc.target` then carries `"opt-level": 1` (so it differs from
  `CCacheKey.target`), and `CachedFunc.llvm_opt_level` is 1 (None otherwise). Matmul, conv,
  reductions, user-scheduled kernels and any target that sets `opt-level` itself keep the
  target's level; `{"kind": "llvm", "opt-level": 3}` turns this off.
- **Kernels** from `jit` are destination-passing callables that accept `tvm.runtime.Tensor` or
  NumPy arrays (NumPy inputs are copied into aligned memory).

Three things change when you port to the modern code, beyond the spelling (each section's
example shows it):

- **`jit` (CEC105, CEC205): outputs.** The legacy kernel is destination-passing: you allocate the
  outputs and `kernel(*inputs, *outputs)` returns None. The VM allocates the output and returns
  it: `out = vm["main"](*inputs)`.
- **`lower` (CEC104, CEC204): PrimFuncs.** `relax.transform.LegalizeOps` gives one PrimFunc per
  op, where `lower` gave one fused PrimFunc for the whole function; `tvm.compile`'s pipeline
  (`FuseOps`, `FuseTIR`) fuses them again.
- **`CCacheKey` (CEC112, CEC208): your own cache's key.** Two `CCacheKey`s of one function and
  target were equal. A `(tvm_ffi.StructuralKey(func), Target)` pair never hits again, because a
  `Target` compares by identity: key your cache by `(tvm_ffi.StructuralKey(func), str(target))`.
"""

_FIX_KINDS = """\
## Fix kinds

| kind | meaning |
|---|---|
| safe | `compile-engine-compat fix` swaps the import (or attribute chain) to the shim; \
behaviour is kept |
| unsafe | `compile-engine-compat fix --unsafe` rewrites the call to modern code, which may \
behave differently (see the note) |
| manual | no mechanical fix: port it by hand (registered global names, pass-config keys, \
shim-only methods, Relay-era names the front end lacks: the finding says why) |
| served | Relay-era code that runs as written under `compile_engine_compat.install()`, with \
the difference the finding states; `fix` leaves it |

`compile-engine-compat scan --include-shim` lists the calls that still go through the shim; those
with a table rewrite show as `unsafe`, the rest as `manual`.
"""

_GROUPS = (
    ("compile_engine (removed in TVM 0.8)", "compile_engine"),
    ("te_compiler (TVM 0.8-0.19, removed in 0.20)", "te_compiler"),
    ("Registered global functions and pass-config keys", "relay.backend"),
    ("tir.*, te.* and other pass-config keys of TVM 0.19 and earlier", "tir"),
    ("Target strings of TVM 0.19 and earlier", "target"),
    ("Relay front end: relay.build, executors and strategies", "relay"),
    ("TVM 0.19 runtime and AutoTVM names served by install()", "tvm"),
)


def _group(row: LegacyApi) -> str:
    if not row.old_paths:  # added by the shim: no legacy path to group it under
        return "shim"
    if row.name.startswith(("relay.", "tvm.")) and row.old_paths[0].startswith("tvm."):
        # Python names of the Relay front end and around it; the other relay.* rows are
        # registered globals and pass-config keys (string literals, not tvm.* paths).
        return row.name.split(".")[0]
    first = row.name.split(".")[0]
    # te.keep_schedule_record, ir.*, cuda.* and relax.* keys sit with the tir keys.
    first = "tir" if first in ("te", "ir", "cuda", "relax") else first
    return next(prefix for _, prefix in _GROUPS if first == prefix.split(".")[0])


def _section(row: LegacyApi) -> str:
    fix: str = row.fix
    if row.rewrite is not None:
        rewrite = f"`{row.rewrite}`" if row.rewrite else "delete the call"
        fix += f"; `fix --unsafe` rewrites calls as {rewrite}"
    if row.old_paths:
        old = ", ".join(f"`{path}`" for path in row.old_paths)
        since = f"TVM {row.since}"
    else:
        # Added by the shim: nothing old to name; it warns because the engine it hangs on does.
        old = "none; added by compile-engine-compat on the legacy engine"
        since = f"warns as the engine does (deprecated since TVM {row.since})"
    lines = [
        f'<a id="{row.anchor}"></a>',
        f"### `{row.name}`",
        "",
        f"- **Rule:** `{row.rule_id}` (`# noqa: {row.rule_id}`, `scan --select {row.rule_id}`)",
        f"- **Old:** {old}",
        f"- **Drop-in:** `{row.shim}`",
        f"- **Modern:** `{row.replacement}`",
        f"- **Fix:** {fix}",
        f"- **Since:** {since}; removed in compile-engine-compat {row.removed_in}",
    ]
    if row.note:
        lines.append(f"- **Note:** {row.note}")
    lines += ["", *_example(row)]
    return "\n".join(lines) + "\n"


def _example(row: LegacyApi) -> list[str]:
    """The row's before/after blocks, as MIGRATION.md shows them."""
    before, after = example(row)
    if not (before and after):
        return []
    under = "raises " + row.before_raises + " under the shim" if row.before_raises else "legacy"
    return [
        "```python",
        f"# before ({under}): TVM <= 0.19",
        before.rstrip("\n"),
        "```",
        "",
        "```python",
        "# after: TVM 0.27",
        after.rstrip("\n"),
        "```",
    ]


def _index() -> str:
    lines = ["## Index", "", "| rule | legacy name | modern code | fix |", "|---|---|---|---|"]
    for row in API_TABLE.values():
        modern = row.replacement.replace("|", "\\|")
        lines.append(
            f"| `{row.rule_id}` | [`{row.name}`](#{row.anchor}) | `{modern}` | {row.fix} |"
        )
    return "\n".join(lines) + "\n"


def _relay_ops() -> str:
    """The Relay op table (``compile_engine_compat.relay``) as a guide section, one row per op.

    Imported late: the op table builds Relax calls, so it imports TVM, which the rest of the
    guide does not need.
    """
    from compile_engine_compat.relay import OP_TABLE, REFUSED_OPS

    lines = [
        "## Relay ops: what each becomes in Relax",
        "",
        "Generated from the op table of `compile_engine_compat.relay` (`relay/op/`): the",
        "Relay op, the Relax op the front end emits, Relay's attribute names (which `call.attrs`",
        "answers to, with Relay's defaults), and the attribute values refused at the builder call.",
        "Build new code with the Relax op directly (`relax.op.<name>` in a `relax.BlockBuilder`).",
        "",
        "| Relay op | Relax op | Relay attributes | refused |",
        "|---|---|---|---|",
    ]
    for name, row in sorted(OP_TABLE.items()):
        attrs = ", ".join(f"`{attr}`" for attr, _ in row.attrs) or "-"
        refused = "; ".join(
            f"`{refusal.attr}`: {refusal.replacement}" for refusal in row.refusals
        ).replace("|", "\\|")
        lines.append(f"| `relay.{name}` | `{row.relax_op}` | {attrs} | {refused or '-'} |")
    lines += ["", "Refused ops (the builder raises, naming the replacement):", ""]
    lines += [f"- `relay.{name}`: {why}" for name, why in sorted(REFUSED_OPS.items())]
    return "\n".join(lines) + "\n"


def generate() -> str:
    """The full text of MIGRATION.md."""
    parts = [_INTRO, _EXAMPLES.format(prelude=GUIDE_PRELUDE), _DIFFERENCES, _FIX_KINDS, _index()]
    titled = [*_GROUPS, ("Shim additions on the legacy engine", "shim")]
    for title, prefix in titled:
        rows = [row for row in API_TABLE.values() if _group(row) == prefix]
        parts.append(f"## {title}\n")
        parts += [_section(row) for row in rows]
    parts.append(_relay_ops())
    return "\n".join(parts)


def find_row(key: str) -> LegacyApi | None:
    """The row a rule id, row name, old dotted path or anchor names, if any."""
    key = key.strip()
    if key.upper() in RULES:
        return RULES[key.upper()]
    if key in API_TABLE:
        return API_TABLE[key]
    for row in API_TABLE.values():
        if key in row.old_paths or key == row.anchor or key == row.shim:
            return row
    return None


def row_text(row: LegacyApi) -> str:
    """One row as ``docs NAME`` prints it: its MIGRATION.md section, headed by the rule id."""
    # The HTML anchor is for the rendered guide, not a terminal.
    section = "\n".join(line for line in _section(row).splitlines() if not line.startswith("<a "))
    return f"{row.rule_id}  {row.name}\n\n{section}\n\nSee {PACKAGED}#{row.anchor}\n"


def main(argv: Sequence[str]) -> int:
    """Print one row, the guide's path, or MIGRATION.md (``-o`` writes it, ``--check`` checks)."""
    parser = argparse.ArgumentParser(
        prog="compile-engine-compat docs", description="MIGRATION.md from the API table."
    )
    parser.add_argument("name", nargs="?", metavar="NAME-or-ID", help="print only this row")
    parser.add_argument("--path", action="store_true", help="print the installed guide's path")
    parser.add_argument("-o", "--output", help="write here instead of printing")
    parser.add_argument("--check", metavar="FILE", help="exit 1 if FILE is not current")
    args = parser.parse_args(list(argv))
    if args.path:
        print(PACKAGED)
        return 0
    if args.name:
        row = find_row(args.name)
        if row is None:
            names = [*RULES, *API_TABLE]
            close = difflib.get_close_matches(args.name, names, n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            print(
                f"compile-engine-compat docs: no rule or name {args.name!r}{hint}", file=sys.stderr
            )
            return 2
        sys.stdout.write(row_text(row))
        return 0
    text = generate()
    if args.check:
        current = Path(args.check).read_text(encoding="utf-8") if Path(args.check).exists() else ""
        if current != text:
            print(f"{args.check} is out of date: run compile-engine-compat docs -o {args.check}")
            return 1
        return 0
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0
