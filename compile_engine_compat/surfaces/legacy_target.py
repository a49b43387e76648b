"""TVM <=0.19 target strings, translated to the dict form that TVM 0.27 takes.

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
"""

from __future__ import annotations

import functools
import json
import shlex
from typing import Any

import tvm

__all__ = ["DROPPED_FLAGS", "REMOVED_FLAGS", "LegacyTargetError", "legacy_spelling", "translate"]

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
