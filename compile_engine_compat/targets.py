"""The target a kernel is built for, and the build context around it: one module below the rest.

Three jobs, each a section below:

* **Legacy spellings.** TVM <=0.19 target strings, translated to the dict form that TVM 0.27 takes.
* **The host CPU.** A plain ``llvm`` target means this machine's CPU: host-speed kernels by default.
* **Normalisation and fingerprints.** :func:`as_target` turns what users pass (a str, a dict, a
  Target, None) into the Target the shim builds for; :func:`target_text` and
  :func:`pass_context_text` are the build context every cache key holds.

Cache, pipeline, facade and surfaces all call down to it; it imports nothing of the package but
the boundary and the deprecation machinery.

Legacy spellings
----------------
TVM 0.27 rejects the command-line form (``Target("llvm -mcpu=core-avx2")`` raises "CLI target
string form ... is no longer supported"), which nearly every performance-minded legacy program
passes. The translation is driven by TVM's own option schema
(``TargetKind.options_from_name(kind)``: name -> ``"str"``, ``"int"``, ``"bool"``,
``"Array<str>"``, ``"target.Target"``), so a flag TVM still has is converted to its type, and a
flag it lacks is named in the error. Flags that configured the Relay build rather than the code
generator moved out of the target in TVM 0.9 and have no place in it now: :data:`DROPPED_FLAGS`
are dropped (they do not change a jitted kernel) and :data:`REMOVED_FLAGS` are refused.

Legacy grammar (``src/target/target.cc``, v0.7-v0.19): ``kind -name=value -name=v1,v2 -flag``,
with ``--name`` accepted for ``-name`` and quotes around a value (``-host='llvm -mcpu=x'``).

The host CPU
------------
With ``"llvm"`` alone TVM 0.27 generates generic x86-64 (SSE2) code: a 512x512 matmul ran 2.8x
slower than with AVX2, and ``{"mcpu": "native"}`` is ignored. A kernel the shim jits runs in the
process that built it, so the host's instruction set is known and safe to use:
:func:`host_target` adds the host CPU (``llvm_get_system_cpu``) as ``mcpu``, plus ``mattr``
entries that switch off any feature that CPU name implies but this host lacks (a hypervisor may
hide AVX-512 from a CPU whose model has it), so the code never uses an instruction the machine
cannot run. On AVX-512 CPUs that LLVM tunes for 256-bit vectors, the preference is cleared: the
shim's compute-bound kernels ran 1.2-1.6x faster with 512-bit vectors.

Only a *plain* ``llvm`` target changes: one naming ``mcpu``, ``mattr``, ``mabi`` or a
``mtriple`` other than the host's (a cross-compilation, or a choice the user made) is kept as
given. The substituted target is what ``CachedFunc.target`` and ``CCacheKey.target`` show, and it
is part of every cache key, the persistent cache's included, so a cache shared between machines
never hands one machine's kernel to another.

``COMPILE_ENGINE_COMPAT_GENERIC_CPU=1`` restores TVM's generic code (read on every call, so a
test or a process can switch it).
"""

from __future__ import annotations

import functools
import json
import os
import shlex
from typing import Any

import tvm

from compile_engine_compat.boundary import env_raw, handle_of
from compile_engine_compat.deprecations import warn_legacy

__all__ = [
    "DROPPED_FLAGS",
    "GENERIC_CPU_ENV",
    "REMOVED_FLAGS",
    "LegacyTargetError",
    "as_target",
    "dropped_flags",
    "host_cpu",
    "host_target",
    "legacy_spelling",
    "pass_context_text",
    "target_text",
    "translate",
]

# -- legacy spellings ---------------------------------------------------------------------------

#: Flags of TVM 0.7/0.8 targets that only told ``relay.build`` how to package the module, each
#: with its modern spelling. A jitted kernel is loaded in-process: dropping them keeps it the same.
DROPPED_FLAGS: dict[str, str] = {
    "system-lib": "tvm.relax.build(mod, target, system_lib=True)",
    "link-params": "relax.transform.BindParams('main', params) before tvm.compile",
}
#: Flags that selected a Relay executor or runtime, which TVM 0.27 does not have.
REMOVED_FLAGS: dict[str, str] = {
    "runtime": "the Relay C/C++ runtime selector (microTVM); Relax runs on relax.VirtualMachine",
    "executor": "the Relay graph/AOT executor selector; Relax runs on relax.VirtualMachine",
    "interface-api": "an AOT executor option; Relax has no AOT executor",
    "unpacked-api": "an AOT executor option; Relax has no AOT executor",
}
_TRUE = ("1", "true")
_FALSE = ("0", "false")


class LegacyTargetError(ValueError):
    """A TVM <=0.19 target string that cannot be translated: the message names the flag."""


def _option_types(kind: str) -> dict[str, str]:
    if kind not in tvm.target.Target.list_kinds():
        raise LegacyTargetError(
            f"unknown target kind {kind!r}; TVM {tvm.__version__} has: "
            + ", ".join(sorted(tvm.target.Target.list_kinds()))
        )
    return {str(k): str(v) for k, v in tvm.target.TargetKind.options_from_name(kind).items()}


def _convert(kind: str, name: str, value: str | None, type_name: str) -> Any:
    flag = f"-{name}"
    if type_name == "bool":
        if value is None or value.lower() in _TRUE:
            return True
        if value.lower() in _FALSE:
            return False
        raise LegacyTargetError(f"target flag {flag}={value} of {kind!r} takes true or false")
    if value is None:
        raise LegacyTargetError(f"target flag {flag} of {kind!r} needs a value ({flag}=...)")
    if type_name == "int":
        try:
            return int(value)
        except ValueError:
            raise LegacyTargetError(
                f"target flag {flag}={value} of {kind!r} takes an integer"
            ) from None
    if type_name.startswith("Array"):
        return [item for item in value.split(",") if item]
    if type_name == "target.Target":
        return translate(value) or {"kind": value}
    return value


def translate(text: str) -> dict[str, Any] | None:
    """Translate a legacy command-line target string to TVM 0.27's dict form.

    Parameters
    ----------
    text : str
        A target string, e.g. ``"llvm -mcpu=core-avx2 -mattr=+avx2,+fma"``.

    Returns
    -------
    dict or None
        The dict form, or None when ``text`` is not in the command-line form (a bare kind, a tag
        or JSON), which TVM takes as it is.

    Raises
    ------
    LegacyTargetError
        For an unknown kind, an unknown or removed flag, or a value of the wrong type; the message
        names the flag.
    """
    stripped = text.strip()
    if stripped.startswith("{"):
        return None
    try:
        tokens = shlex.split(stripped)
    except ValueError as err:  # an unbalanced quote
        raise LegacyTargetError(f"cannot parse target string {text!r}: {err}") from None
    if len(tokens) < 2 or tokens[0].startswith("-"):
        return None
    kind, flags = tokens[0], tokens[1:]
    types = _option_types(kind)
    result: dict[str, Any] = {"kind": kind}
    for token in flags:
        if not token.startswith("-"):
            raise LegacyTargetError(
                f"target string {text!r}: {token!r} is not a flag (flags are -name=value)"
            )
        name, sep, raw = token.lstrip("-").partition("=")
        value = raw if sep else None
        if name in DROPPED_FLAGS:
            continue
        if name in REMOVED_FLAGS:
            raise LegacyTargetError(
                f"target flag -{name} was removed with Relay: it was {REMOVED_FLAGS[name]}"
            )
        if name not in types or name == "kind":
            known = ", ".join(f"-{option}" for option in types if option != "kind")
            raise LegacyTargetError(
                f"unknown target flag -{name} for kind {kind!r}; known: {known}"
            )
        result[name] = _convert(kind, name, value, types[name])
    return result


def dropped_flags(text: str) -> list[str]:
    """The :data:`DROPPED_FLAGS` a legacy target string uses, in order."""
    try:
        tokens = shlex.split(text)
    except ValueError:
        return []
    names = [token.lstrip("-").partition("=")[0] for token in tokens[1:]]
    return [name for name in names if name in DROPPED_FLAGS]


@functools.lru_cache(maxsize=256)
def legacy_spelling(text: str) -> str | None:
    """The modern spelling of a legacy target string, for its warning; None if not legacy.

    Parameters
    ----------
    text : str
        A target string.

    Returns
    -------
    str or None
        ``tvm.target.Target({...})`` with the translated dict, plus the replacement of each
        dropped flag.
    """
    translated = translate(text)
    if translated is None:
        return None
    spelling = f"tvm.target.Target({json.dumps(translated)})"
    for name in dropped_flags(text):
        spelling += f"; -{name} is not a target option any more: {DROPPED_FLAGS[name]}"
    return spelling


# -- the host CPU -------------------------------------------------------------------------------

#: Set to 1 (or true/yes/on) for TVM's generic code on a plain ``llvm`` target.
GENERIC_CPU_ENV = "COMPILE_ENGINE_COMPAT_GENERIC_CPU"
# Attributes that make an llvm target someone's deliberate choice (or another machine's).
_CHOSEN = ("mcpu", "mtriple", "mattr", "mabi")


_ON = ("1", "true", "yes", "on")


def _generic_requested() -> bool:
    # Read on every call (a test or a process may switch it), on the hot path of every cache-hit
    # lower: os.environ.get costs ~0.8 us (key encoding, a KeyError when unset), the raw read
    # ~0.05 us (see boundary.env_raw).
    value = env_raw(_ENV_KEY)
    return value is not None and value.decode(errors="replace").strip().lower() in _ON


_ENV_KEY = os.fsencode(GENERIC_CPU_ENV)


@functools.cache
def host_cpu() -> tuple[str, tuple[str, ...]] | None:
    """(LLVM CPU name, ``mattr`` switching off what the name implies but the host lacks).

    None when LLVM does not know this CPU (``"generic"``) or cannot say.
    """
    codegen = tvm.target.codegen
    try:
        name = str(codegen.llvm_get_system_cpu())
        if not name or name == "generic":
            return None
        implied = {str(f) for f in codegen.llvm_get_cpu_features(_plain({"mcpu": name}))}
        present = tvm.get_global_func("tvm.codegen.llvm.GetHostCPUFeatures")()
    except Exception:  # no LLVM in this build, or a TVM without these queries: stay generic
        return None
    # A feature the host reports as absent; features it does not report are left to the name.
    missing = sorted(f for f in implied if f in present and not bool(present[f]))
    mattr = [f"-{f}" for f in missing]
    if "prefer-256-bit" in implied and bool(present.get("avx512f", False)):
        # LLVM splits vectors to 256 bits on AVX-512 CPUs that "prefer" it (Ice/Rocket Lake,
        # Skylake-SP). The shim's kernels are compute-bound loops, and 512-bit vectors ran them
        # 1.2-1.6x faster on all nine matmul/conv2d benchmark shapes (bench/RESULTS.md).
        mattr.append("-prefer-256-bit")
    return name, tuple(mattr)


@functools.cache
def _system_triple() -> str:
    try:
        return str(tvm.target.codegen.llvm_get_system_triple())
    except Exception:  # no LLVM: no triple is the host's
        return ""


def _plain(extra: dict[str, object]) -> tvm.target.Target:
    return tvm.target.Target({"kind": "llvm", **extra})


_substituted: dict[tvm.target.Target, tvm.target.Target] = {}


def host_target(target: tvm.target.Target) -> tvm.target.Target:
    """``target`` with the host CPU filled in when it is a plain ``llvm`` target.

    Parameters
    ----------
    target : tvm.target.Target
        Any target; only ``llvm`` without ``mcpu``/``mtriple``/``mattr``/``mabi`` changes, and
        not when ``COMPILE_ENGINE_COMPAT_GENERIC_CPU`` is set.

    Returns
    -------
    tvm.target.Target
        The target the shim builds for.
    """
    done = _substituted.get(target)
    if done is not None:  # seen before (only llvm targets are recorded)
        return target if _generic_requested() else done
    if target.kind.name != "llvm" or _generic_requested():
        return target
    attrs = target.attrs
    chosen = [key for key in _CHOSEN if key in attrs]
    # TVM fills in the host's own triple on a bare "llvm": that is not a choice.
    if chosen == ["mtriple"] and str(attrs["mtriple"]) == _system_triple():
        chosen = []
    cpu = None if chosen else host_cpu()
    if cpu is None:
        result = target
    else:
        config = dict(target.export())
        config["mcpu"], mattr = cpu
        if mattr:
            config["mattr"] = list(mattr)
        result = tvm.target.Target(config)
    if len(_substituted) > 256:  # targets are few and long-lived; bounded anyway
        _substituted.clear()
    _substituted[target] = result
    return result


# -- normalisation and fingerprints -------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def _target_from_str(text: str) -> tvm.target.Target:
    # A TVM <=0.19 command-line string warns once (this cache), with its dict spelling. Warning
    # before TVM parses it keeps -W error raising at the caller's line.
    spelling = legacy_spelling(text)
    if spelling is None:
        return tvm.target.Target(text)
    warn_legacy("target.cli_string", spelling)
    return tvm.target.Target(translate(text))


# -- tvm.target.Target itself, under install() (Relay programs end to end) -----------------------
#: Set to off (or 0/false/no) to make tvm.target.Target take only what TVM 0.27 takes, even
#: under install() (the process patch's off switch; see boundary.PROCESS_PATCHES).
LEGACY_TARGETS_ENV = "COMPILE_ENGINE_COMPAT_LEGACY_TARGETS"


@functools.lru_cache(maxsize=256)
def _warn_cli_string(text: str, spelling: str) -> None:
    """Warn about one legacy string once (this cache), naming its dict spelling."""
    warn_legacy("target.cli_string", spelling)


def legacy_target_value(value: Any) -> Any:
    """What TVM 0.27's ``Target(value)`` needs for a value a TVM <=0.19 program passed.

    A command-line string (``"llvm -mcpu=core-avx2"``) becomes its dict form, warning once per
    string with that spelling; anything else (a bare kind, a tag, JSON, a dict, a Target) is
    returned as it is. Off (returned as is) when :data:`LEGACY_TARGETS_ENV` is ``off``.

    Raises
    ------
    LegacyTargetError
        For an unknown or removed flag, naming it.
    """
    if not isinstance(value, str):
        return value
    switch = (env_raw(os.fsencode(LEGACY_TARGETS_ENV)) or b"").decode().strip().lower()
    if switch in ("off", "0", "false", "no"):
        return value
    spelling = legacy_spelling(value)
    if spelling is None:
        return value
    _warn_cli_string(value, spelling)
    return translate(value)


def as_target(target: Any, host: bool = True) -> tvm.target.Target | None:
    """Convert a ``str`` or dict target to ``tvm.target.Target``; pass a Target through.

    ``None`` means the target of the enclosing ``with target:`` scope, if any. With ``host``
    (the engine's case), a plain ``llvm`` target becomes the host CPU's
    (:func:`host_target`; the
    ``COMPILE_ENGINE_COMPAT_GENERIC_CPU`` switch turns that off).

    Raises
    ------
    ValueError
        For an empty string (legacy: ``"Need target when source_func is a Function"``) or a
        string TVM cannot parse. A TVM <=0.19 command-line string (``"llvm -mcpu=core-avx2"``)
        is translated to the dict form, warning once per string; an unknown flag raises
        :class:`LegacyTargetError` (a ``ValueError``)
        naming it.
    TypeError
        For any other type.
    """
    resolved: tvm.target.Target | None
    if isinstance(target, tvm.target.Target):
        resolved = target
    elif isinstance(target, str):
        if not target:
            raise ValueError("Need target when source_func is a Function")
        resolved = _target_from_str(target)
    elif isinstance(target, dict):
        resolved = tvm.target.Target(target)
    elif target is None:
        resolved = tvm.target.Target.current(allow_none=True)
    else:
        raise TypeError(
            f"target must be a tvm.target.Target, a str or a dict, got {type(target).__qualname__}"
        )
    return host_target(resolved) if host and resolved is not None else resolved


_target_texts: dict[Any, str] = {}


def target_text(target: tvm.target.Target) -> str:
    """Return ``str(target)`` (its canonical JSON), memoized per Target object.

    Equal targets have equal text (legacy keys compared ``target->str()``). Target objects are
    few and long-lived; the memo is bounded anyway.
    """
    text = _target_texts.get(target)
    if text is None:
        if len(_target_texts) > 1024:
            _target_texts.clear()
        text = _target_texts[target] = str(target)
    return text


# PassContext handle -> (context, text). The context is held so that its handle is not reused
# while it is a key here. Contexts are few (one per ``with`` a user writes); bounded anyway.
_context_texts: dict[int, tuple[Any, str]] = {}
_MAX_CONTEXTS = 256


def pass_context_text() -> str:
    """Describe the current PassContext: everything in it that changes the code ``tvm.compile``
    builds (opt level, config, required and disabled passes; not the instruments).

    The one build-context fingerprint: the in-memory cache key and the persistent cache's keys
    both hold it. Memoized per PassContext object (a context's fields never change), so a cache
    hit pays one ``PassContext.current()`` and a dict lookup.

    Returns
    -------
    str
        JSON text, equal for contexts that build the same code.
    """
    context = tvm.transform.PassContext.current()
    handle = handle_of(context)
    entry = _context_texts.get(handle)
    if entry is not None:
        return entry[1]
    text = json.dumps(
        [
            int(context.opt_level),
            sorted((str(k), str(v)) for k, v in context.config.items()),
            sorted(str(p) for p in context.required_pass),
            sorted(str(p) for p in context.disabled_pass),
        ]
    )
    if len(_context_texts) >= _MAX_CONTEXTS:
        _context_texts.clear()
    _context_texts[handle] = (context, text)
    return text
