"""``compile-engine-compat scan``: find every use of the legacy API without running the code.

Usage::

    compile-engine-compat scan [PATH...] [--format text|json|sarif|github] [--output FILE]
        [--select IDS] [--extend-select IDS] [--ignore IDS] [--exclude GLOBS] [--target-version V]
        [--baseline FILE [--update-baseline]] [--statistics] [--add-noqa] [--exit-zero]
        [--include-shim] [--force-exclude] [--config FILE | --isolated] [--no-cache] [--version]

Settings come from ``[tool.compile-engine-compat]`` in the closest ``pyproject.toml`` (see
:mod:`.config`); flags override them. Folders are walked as :mod:`.discovery` says (``.gitignore``
honoured in a git checkout).

Every import form of ``tvm.relay.backend.compile_engine`` / ``te_compiler``, attribute chains
(``relay.backend.compile_engine.get()``), calls through engine and module aliases (``engine =
get(); engine.jit(...)``), star imports, relative imports, ``importlib``/``getattr`` with literal
names, registered global names and the ``relay.backend.*`` pass-config keys. Code under
``try/except ImportError`` already copes and is not reported, nor is a line whose ``# noqa``
comment covers the rule (:mod:`.noqa`), nor a TVM <=0.19 tree's own definition of the API.
``--include-shim`` also reports calls that go through ``compile_engine_compat`` (the next step of
the burn-down).

Relay-era code (Relay building, ``relay.build`` and the executors, AutoTVM, ``tvm.nd``) is
classified by :mod:`.relay_uses` against what ``install()`` serves.

Each finding's ``fix`` says what ``compile-engine-compat fix`` can do: ``safe`` (the default fix
removes it and keeps behaviour), ``unsafe`` (only ``fix --unsafe``, a modern rewrite), ``manual``
(a person ports it; Relay-era findings say why in ``detail``), ``served`` (a Relay-era use that
runs as written under ``install()``; ``detail`` states the difference).

Exit codes follow ruff: 0 no findings (or ``--exit-zero``), 1 findings, 2 a usage error (a
missing path, bad arguments or settings) or an internal error. A file that cannot be read -- not
a regular file, too large, not decodable, not parsable, a notebook that is not one, nested too
deep for the parser, more legacy code than one parse may take -- is *skipped*: it is listed with
its reason in every output format and the rest of the run goes on. A skipped file that may hold
legacy code (its bytes spell a legacy name, searched in pieces, or it cannot be read to tell:
:func:`may_hold_legacy`) makes the exit code 1, as ruff exits 1 for a file it could not check:
the run cannot say the code is clean. Exclude such a file (``--exclude``) to accept it; a FIFO or
device, or a file that spells no legacy name, does not change the exit code.

Resources: a file that spells no legacy name is read and searched for words, nothing more; in
one that does, only the statements that can matter reach libcst, and never more than
:data:`.relevant_code.PARSE_LIMIT` of them (:func:`.relevant_code.relevant_part`), so one file costs
bounded time and memory up to the size cap.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import multiprocessing
import os
import stat
import sys
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst

from compile_engine_compat.api_table import API_TABLE, DEFINITION_MODULES, RULES, Fix, LegacyApi
from compile_engine_compat.migrate.baseline import (
    BaselineError,
    count,
    load_baseline,
    new_items,
    write_baseline,
)
from compile_engine_compat.migrate.cache import ResultCache
from compile_engine_compat.migrate.config import SCAN_FORMATS, Configs, Settings
from compile_engine_compat.migrate.discovery import Discovery
from compile_engine_compat.migrate.findings import (
    Finding,
    Skipped,
    format_findings,
    format_statistics,
    summary,
)
from compile_engine_compat.migrate.lean_libcst import parsed
from compile_engine_compat.migrate.legacy_uses import Use, find_uses
from compile_engine_compat.migrate.noqa import Noqa, add_noqa
from compile_engine_compat.migrate.options import add_options, configs_from
from compile_engine_compat.migrate.relay_uses import relay_uses, spells_relay_word
from compile_engine_compat.migrate.relevant_code import WHOLE_PARSE_LIMIT, relevant_part
from compile_engine_compat.migrate.sources import (
    DEEP_STACK_THREAD,
    SkipFile,
    Source,
    SourceFile,
    call_with_deep_stack,
    check_nesting,
    forget_folders,
    read_source,
    write_source,
)
from compile_engine_compat.migrate.terminal import Colour, plural, print_safely, visible
from compile_engine_compat.migrate.word_filter import literal_uses, spells_word

__all__ = [
    "Finding",
    "ScanRun",
    "Skipped",
    "format_findings",
    "main",
    "may_hold_legacy",
    "run_scan",
    "scan_file",
    "scan_paths",
    "scan_source",
    "skipped_for",
    "workers_for",
]


def skipped_for(display: str, exc: BaseException) -> Skipped:
    """The :class:`Skipped` record for an exception raised while reading or parsing a file.

    Shared by ``scan`` and ``fix`` so that both report a bad file with the same words.
    """
    if isinstance(exc, SkipFile):
        return Skipped(display, str(exc))
    if isinstance(exc, cst.ParserSyntaxError):
        return Skipped(display, f"failed to parse: {exc.message} (line {exc.raw_line})")
    first = str(exc).splitlines()[0] if str(exc) else ""
    return Skipped(display, f"internal error: {type(exc).__name__}: {first}", internal=True)


def finding_fix(use: Use) -> Fix:
    """What the fixer does about ``use`` (see the module docstring)."""
    if use.kind == "dynamic":  # importlib/getattr with a literal: nothing to swap mechanically
        return "manual"
    if use.origin == "legacy":
        return use.row.fix
    return "unsafe" if use.row.rewrite is not None else "manual"


def scan_source(source: Source, include_shim: bool = False) -> list[Finding]:
    """Findings in one parsed source, in source order, less those a ``noqa`` comment covers.

    Raises
    ------
    SkipFile
        If the code nests too deeply for the parser, or more of it uses legacy names than one
        parse may take.
    libcst.ParserSyntaxError
        If the code does not parse.
    """
    if source.module in DEFINITION_MODULES:
        return []  # a TVM <=0.19 tree's own definition of the legacy API
    # (row, line in the code, column, fix, detail) of each unguarded use of the wanted origins.
    # The engine's finder first: a file it cannot parse is skipped with libcst's message.
    hits = _engine_hits(source, include_shim) if spells_word(source.code) else []
    if spells_relay_word(source.code):  # with the test above, the only one most files see
        hits += _relay_hits(source)
    if not hits:
        return []
    # One finding per place, rule and detail (an import of two names from one refused module
    # would otherwise be reported twice, identically).
    hits = sorted(set(hits), key=lambda hit: (hit[1], hit[2], hit[0].rule_id, hit[4]))
    # Comments are read only when a suppression can exist: most files have none.
    noqa = Noqa(source.code) if "noqa" in source.code.lower() else None
    findings = []
    for row, code_line, col, fix, detail in hits:
        if noqa is not None and noqa.covers(code_line, row.rule_id):
            continue
        line, cell = source.locate(code_line)
        findings.append(
            Finding(
                source.display,
                line,
                col,
                row.name,
                row.replacement,
                fix,
                cell,
                detail,
                source_path=str(source.path),
            )
        )
    return findings


_Hit = tuple[LegacyApi, int, int, Fix, str]


def _relay_hits(source: Source) -> list[_Hit]:
    """Relay building, relay.build/executors and AutoTVM: served or manual (``_relay_uses``)."""
    return [
        (use.row, use.line, use.col, use.fix, use.detail)
        for use in relay_uses(source.code, source.package)
    ]


def _engine_hits(source: Source, include_shim: bool) -> list[_Hit]:
    """The compile_engine/te_compiler API, its globals and the config keys (libcst)."""
    hits: list[_Hit]
    literal = literal_uses(source.code) if len(source.code) <= WHOLE_PARSE_LIMIT else None
    if literal is not None:  # only pass-config keys (or nothing): no resolver, no libcst
        hits = [(use.row, use.line, use.col, use.row.fix, "") for use in literal if not use.guarded]
    else:
        relevant = relevant_part(source.code)
        if relevant is None:  # spells no legacy word: nothing to parse
            return []
        check_nesting(relevant.code)
        uses = call_with_deep_stack(_parse_and_find, relevant.code, source)
        origins = ("legacy", "shim") if include_shim else ("legacy",)
        hits = [
            (use.row, relevant.original_line(use.line), use.col, finding_fix(use), "")
            for use in uses
            if not use.guarded and use.origin in origins
        ]
    return hits


def _parse_and_find(code: str, source: Source) -> list[Use]:
    wrapper = parsed(code)  # (no deep copy: the module is ours alone)
    return find_uses(wrapper, source.package, source.local_module)


# -- one file, with the settings and the cache --------------------------------------------------

#: Cache folder -> its cache, in this process (a forked worker builds its own).
_CACHES: dict[Path, ResultCache] = {}


#: A skipped file is searched for legacy words this many bytes at a time (never read whole)...
_SEARCH_CHUNK = 1 << 20
#: ...each piece with the end of the one before (longer than any legacy word)...
_SEARCH_OVERLAP = 256
#: ...and past this much it is taken to hold some, unread.
_SEARCH_LIMIT = 1 << 30


def may_hold_legacy(path: Path) -> bool:
    """Could the file ``path``, which could not be scanned, hold legacy code?

    Yes when its bytes spell a legacy name anywhere (searched in pieces, in bounded memory), or
    when it cannot be read to tell (as ruff reports a file it cannot read); no for a file that
    is not a regular one (a FIFO, a device) or spells no legacy name.
    """
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as file:
            tail, read = "", 0
            while chunk := file.read(_SEARCH_CHUNK):
                text = tail + chunk.decode("latin-1")  # one character per byte: names are ASCII
                if spells_word(text) or spells_relay_word(text):
                    return True
                tail, read = text[-_SEARCH_OVERLAP:], read + len(chunk)
                if read >= _SEARCH_LIMIT:
                    return True
    except OSError:
        return True
    return False


def _cache_for(settings: Settings) -> ResultCache:
    folder = settings.cache_folder
    if folder not in _CACHES:
        _CACHES[folder] = ResultCache(folder)
    return _CACHES[folder]


def scan_file(
    file: SourceFile, settings: Settings, use_cache: bool = False
) -> tuple[list[Finding], Skipped | None]:
    """Scan one file: its findings that ``settings`` select, or why it was skipped.

    With ``use_cache``, a file that passes the word filter is looked up in (and stored to) the
    result cache of its settings (:mod:`.cache`); the selection is applied after the cache, so
    one entry serves every selection.
    """
    try:
        source = read_source(file.path, file.display)
    except Exception as exc:  # one bad file never ends the run
        unread = skipped_for(file.display, exc)
        return [], dataclasses.replace(unread, may_hold_legacy=may_hold_legacy(file.path))
    if not (spells_word(source.code) or spells_relay_word(source.code)):
        return [], None  # the one test most files see: a cache lookup would cost as much
    include_shim = settings.include_shim
    cache = _cache_for(settings) if use_cache else None
    key = ""
    entry = None
    if cache is not None:
        # A notebook's bytes: its cell numbering depends on the markdown cells too.
        data = source.raw if source.is_notebook else source.code.encode("utf-8", "surrogatepass")
        key = cache.key(data, source, include_shim)
        entry = cache.get(key, source)
    skip: Skipped | None = None
    if entry is not None:
        findings = [
            Finding(
                file.display,
                line,
                col,
                api,
                API_TABLE[api].replacement,
                fix,
                cell,
                detail,
                source_path=str(source.path),
            )
            for line, col, api, fix, cell, detail in entry["findings"]
        ]
        if entry.get("skipped"):
            skip = Skipped(file.display, entry["skipped"])
    else:
        try:
            findings = scan_source(source, include_shim)
        except Exception as exc:  # one bad file never ends the run
            findings, skip = [], skipped_for(file.display, exc)
        if cache is not None and not (skip is not None and skip.internal):
            stored = [[f.line, f.col, f.api, f.fix, f.cell, f.detail] for f in findings]
            reason = skip.reason if skip is not None else None
            cache.put(key, {"findings": stored, "skipped": reason, "probes": source.probes})
    ignored = settings.ignored_for(file.path)
    return [f for f in findings if settings.enabled(f.code, ignored)], skip


def _scan_one(
    item: tuple[SourceFile, Settings], use_cache: bool
) -> tuple[list[Finding], Skipped | None]:
    return scan_file(item[0], item[1], use_cache)


#: Below this many files a process pool costs more than it saves.
_PARALLEL_MIN_FILES = 200


def workers_for(files: int) -> int:
    """How many processes to scan ``files`` files with (1: in this process).

    Forked workers only: they start in milliseconds with everything imported (a spawned worker
    would import libcst again, ~0.3 s). Never when this process runs other threads, which a
    forked child would not have; the idle deep-stack parse thread is the exception (a child
    starts its own). ``COMPILE_ENGINE_COMPAT_JOBS=1`` scans in this process.
    """
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    jobs = os.environ.get("COMPILE_ENGINE_COMPAT_JOBS", "")
    limit = int(jobs) if jobs.isdigit() and int(jobs) > 0 else min(cpus or 1, 8)
    if (
        files < _PARALLEL_MIN_FILES
        or limit < 2
        or "fork" not in multiprocessing.get_all_start_methods()
        or any(
            thread is not threading.main_thread() and thread.name != DEEP_STACK_THREAD
            for thread in threading.enumerate()
        )
    ):
        return 1
    return limit


@dataclass
class ScanRun:
    """What a run found: findings in file order, skipped files, and notes for a person."""

    findings: list[Finding] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files: int = 0


def run_scan(
    paths: Sequence[str], configs: Configs | None = None, use_cache: bool = False
) -> ScanRun:
    """Scan every source under ``paths`` with the settings that apply to each file.

    Large trees are scanned by forked worker processes, one per CPU; results come back in the
    order of the files, as a sequential scan gives them.

    Raises
    ------
    FileNotFoundError
        If one of ``paths`` does not exist (a usage error).
    ConfigError
        If a ``pyproject.toml`` on the way has a bad section.
    """
    forget_folders()
    discovery = Discovery(configs)
    files = list(discovery.files(paths))
    scan_one = functools.partial(_scan_one, use_cache=use_cache)
    workers = workers_for(len(files))
    results: Iterable[tuple[list[Finding], Skipped | None]]
    if workers > 1:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            results = pool.map(scan_one, files, chunksize=max(1, len(files) // (workers * 8)))
    else:
        results = map(scan_one, files)
    run = ScanRun(notes=discovery.notes, files=len(files))
    for found, skip in results:
        run.findings += found
        if skip is not None:
            run.skipped.append(skip)
    return run


def scan_paths(
    paths: Sequence[str], include_shim: bool = False
) -> tuple[list[Finding], list[Skipped]]:
    """Scan every source under ``paths`` with the default settings (no ``pyproject.toml`` read,
    no cache): every rule, ``.gitignore`` honoured.

    Returns
    -------
    findings : list of Finding
    skipped : list of Skipped
        The files not scanned, with the reason.

    Raises
    ------
    FileNotFoundError
        If one of ``paths`` does not exist (a usage error).
    """
    run = run_scan(paths, Configs({"include_shim": include_shim}, isolated=True))
    return run.findings, run.skipped


# -- the command --------------------------------------------------------------------------------


def _baseline_key(finding: Finding) -> tuple[str, str]:
    return finding.path, finding.code


def project_settings(configs: Configs, paths: Sequence[str]) -> Settings:
    """The settings of the first path: where the run's own options (format, baseline) come
    from, as ruff takes them from the project it runs in."""
    first = Path(paths[0]) if paths else Path(".")
    return configs.for_folder(first if first.is_dir() else first.parent)


def main(argv: Sequence[str]) -> int:
    """Run ``compile-engine-compat scan``; returns 0 clean, 1 findings, 2 usage/internal error."""
    parser = argparse.ArgumentParser(
        prog="compile-engine-compat scan",
        description="Find uses of the legacy compile_engine / te_compiler API.",
        epilog="Exit codes (as ruff): 0 no findings, 1 findings, 2 usage or internal error. "
        "Files that cannot be read are skipped and listed with why; one that may hold legacy "
        "code (it spells a legacy name, or cannot be read to tell) makes the exit code 1 unless "
        "excluded (--exclude).",
    )
    add_options(parser)
    parser.add_argument(
        "--format", "--output-format", dest="format", choices=SCAN_FORMATS, default=None
    )
    parser.add_argument("--output", "-o", help="write the report here instead of stdout")
    parser.add_argument(
        "--include-shim", action="store_true", help="also report calls through the shim"
    )
    parser.add_argument(
        "--baseline", metavar="FILE", help="report (and fail on) only findings not in FILE"
    )
    parser.add_argument(
        "--update-baseline",
        action="store_true",
        help="write today's findings to the baseline FILE (exit 0)",
    )
    parser.add_argument(
        "--statistics", action="store_true", help="count the findings per rule instead"
    )
    parser.add_argument(
        "--add-noqa", action="store_true", help="add `# noqa: CECxxx` at every finding (exit 0)"
    )
    parser.add_argument(
        "--exit-zero", action="store_true", help="exit 0 even when there are findings"
    )
    args = parser.parse_args(list(argv))
    try:
        configs = configs_from(args)
        project = project_settings(configs, args.paths)
        fmt = args.format or project.output_format or "text"
        baseline = args.baseline or (str(project.baseline) if project.baseline else None)
        if args.update_baseline and not baseline:
            raise ValueError("--update-baseline needs --baseline FILE (or baseline in settings)")
        known = load_baseline(baseline) if baseline and not args.update_baseline else None
        run = run_scan(args.paths, configs, use_cache=not args.no_cache)
    except (FileNotFoundError, ValueError) as exc:  # ConfigError, BaselineError are ValueErrors
        print_safely(f"compile-engine-compat scan: {visible(str(exc))}", sys.stderr)
        return 2
    for note in run.notes:
        print_safely(f"compile-engine-compat scan: {visible(note)}", sys.stderr)
    findings, skipped = run.findings, run.skipped
    if args.add_noqa:
        return _add_noqa(findings)
    if args.update_baseline:
        assert baseline is not None
        try:
            write_baseline(baseline, count(findings, _baseline_key))
        except BaselineError as exc:
            print_safely(f"compile-engine-compat scan: {visible(str(exc))}", sys.stderr)
            return 2
        print_safely(
            f"Wrote {plural(len(findings), 'finding')} to the baseline {visible(baseline)}."
        )
        return 0
    hidden = 0
    if known is not None:
        new = new_items(findings, known, _baseline_key)
        hidden, findings = len(findings) - len(new), new
    colour = Colour(sys.stdout) if fmt == "text" and not args.output else None
    if args.statistics:
        report = format_statistics(findings, "json" if fmt == "json" else "text")
    else:
        report = format_findings(findings, fmt, skipped, colour)
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8", errors="backslashreplace") as out:
                out.write(report + "\n")
        except OSError as exc:
            where = visible(args.output)
            print_safely(f"compile-engine-compat scan: cannot write {where}: {exc}", sys.stderr)
            return 2
    elif report:
        print_safely(report)
    if known is not None:
        _baseline_summary(findings, hidden, baseline or "", fmt)
    if fmt != "text" or args.statistics:  # the skips are in the machine formats; tell a person
        for skip in skipped:
            print_safely(str(skip), sys.stderr)
        if args.statistics:
            print_safely(summary(findings, skipped), sys.stderr)
    if any(skip.internal for skip in skipped):
        return 2
    unchecked = any(skip.may_hold_legacy for skip in skipped)  # not known to be clean
    return 1 if (findings or unchecked) and not args.exit_zero else 0


def _baseline_summary(new: list[Finding], known: int, baseline: str, fmt: str) -> None:
    """On stderr: the new sites beyond the baseline, each named (path:line, rule, api, count)."""
    where = visible(baseline)
    if not new:
        print_safely(f"No legacy uses beyond the baseline {where} ({known} known).", sys.stderr)
        return
    sites: dict[tuple[str, int, str], int] = {}
    for f in new:
        key = (_site(f), f.line, f.code)
        sites[key] = sites.get(key, 0) + 1
    lines = [
        f"{plural(len(new), 'new legacy use')} beyond the baseline {where} "
        f"({plural(known, 'known finding')} not shown):"
    ]
    lines += [
        f"  {site}:{line} {code} {RULES[code].name} ({plural(n, 'use')})"
        for (site, line, code), n in sites.items()
    ]
    print_safely("\n".join(lines), sys.stderr)


def _site(finding: Finding) -> str:
    cell = f"[cell {finding.cell}]" if finding.cell is not None else ""
    return f"{visible(finding.path)}{cell}"


def _add_noqa(findings: list[Finding]) -> int:
    """``--add-noqa``: write a ``# noqa`` comment covering each finding; report what changed."""
    by_file: dict[str, dict[int, set[str]]] = {}
    displays: dict[str, str] = {}
    for f in findings:
        if f.cell is not None:
            continue  # notebooks: reported below
        by_file.setdefault(f.source_path, {}).setdefault(f.line, set()).add(f.code)
        displays[f.source_path] = f.path
    added = files = 0
    for notebook in sorted({f.path for f in findings if f.cell is not None}):
        print_safely(f"{visible(notebook)}: a notebook: add its noqa comments by hand", sys.stderr)
    for path, wanted in by_file.items():
        try:
            source = read_source(Path(path), displays[path])
        except SkipFile as exc:
            print_safely(f"{visible(displays[path])}: not changed: {exc}", sys.stderr)
            continue
        new_code, count_added = add_noqa(source.code, wanted)
        if not count_added:
            continue
        problem = write_source(source, new_code)
        if problem:
            print_safely(f"{visible(displays[path])}: {problem}", sys.stderr)
            continue
        added += count_added
        files += 1
    print_safely(f"Added {plural(added, 'noqa directive')} to {plural(files, 'file')}.")
    return 0
