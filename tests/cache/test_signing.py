"""Signed remote entries: each damage, forgery and mismatch is refused with its own reason."""

from __future__ import annotations

import os

import pytest

from compile_engine_compat.cache import signing
from compile_engine_compat.cache.artifact import (
    Artifact,
    ArtifactKey,
    fields,
    material_text,
    mismatch,
    valid_file_name,
)
from compile_engine_compat.cache.signing import Rejected, SigningKey, open_entry, seal

KEY = SigningKey(b"k" * 40, "test")
OTHER_KEY = SigningKey(b"o" * 40, "attacker")
MATERIAL = material_text(
    "kernel",
    {"tvm": "0.27.0", "shim": "0.1.0", "rules": "7", "target": '{"kind":"llvm"}', "hash": "42"},
)
EXPECTED = ArtifactKey("kernel", MATERIAL)
ARTIFACT = Artifact(
    EXPECTED, {"kernel.so": b"\x7fELF" + bytes(range(256)) * 8, "source.tvmscript": b"# f"}, {}
)


def _reason(blob: bytes, key: SigningKey = KEY, expected: ArtifactKey = EXPECTED) -> str:
    with pytest.raises(Rejected) as caught:
        open_entry(blob, key, expected)
    return caught.value.reason


def test_a_signed_entry_opens_whole():
    artifact = open_entry(seal(ARTIFACT, KEY), KEY, EXPECTED)
    assert artifact.files == ARTIFACT.files and artifact.key == EXPECTED


def test_an_entry_signed_with_another_key_is_a_bad_signature():
    forged = seal(ARTIFACT, OTHER_KEY)  # a valid format, consistent checksums, the wrong key
    with pytest.raises(Rejected, match=f"key id '{OTHER_KEY.key_id}'.*{KEY.key_id}") as caught:
        open_entry(forged, KEY, EXPECTED)
    assert caught.value.reason == "bad-signature"


def test_an_unsigned_entry_is_refused():
    assert _reason(seal(ARTIFACT, None)) == "unsigned"


@pytest.mark.parametrize("cut", [1, 10, 40, 200, -32, -1])
def test_a_truncated_entry_is_refused(cut):
    blob = seal(ARTIFACT, KEY)
    assert _reason(blob[:cut]) == "truncated"


def test_a_flipped_bit_in_a_file_is_corruption():
    blob = bytearray(seal(ARTIFACT, KEY))
    blob[-32 - 300] ^= 0x01  # inside the library
    assert _reason(bytes(blob)) == "corrupt"


def test_a_flipped_bit_in_the_signature_is_a_bad_signature():
    blob = bytearray(seal(ARTIFACT, KEY))
    blob[-1] ^= 0x01
    assert _reason(bytes(blob)) == "bad-signature"


def test_bytes_past_the_end_and_a_broken_header_are_corruption():
    blob = seal(ARTIFACT, KEY)
    assert _reason(blob + b"x") == "corrupt"
    assert _reason(b"GIF89a" + blob) == "corrupt"
    start = len(signing.MAGIC) + 8
    assert _reason(blob[:start] + b"[" + blob[start + 1 :]) == "corrupt"  # not JSON now


def test_an_edited_header_is_a_bad_signature():
    # The material edited in place (same length): the checksums of the files still hold.
    blob = seal(ARTIFACT, KEY).replace(b"hash=42", b"hash=43")
    assert _reason(blob, expected=ArtifactKey("kernel", MATERIAL.replace("=42", "=43"))) == (
        "bad-signature"
    )


@pytest.mark.parametrize(
    ("field", "reason"),
    [("tvm", "other-tvm"), ("shim", "other-shim"), ("rules", "other-rules"),
     ("target", "other-target"), ("hash", "other-key")],
)  # fmt: skip
def test_a_signed_entry_of_another_build_is_refused_by_field(field, reason):
    theirs = MATERIAL.replace(f"{field}={fields(MATERIAL)[field]}", f"{field}=something else")
    blob = seal(Artifact(ArtifactKey("kernel", theirs), ARTIFACT.files, {}), KEY)
    with pytest.raises(Rejected, match=f"{field} is something else") as caught:
        open_entry(blob, KEY, EXPECTED)
    assert caught.value.reason == reason


def test_another_kind_under_the_same_fields_is_refused():
    index = ArtifactKey("index", MATERIAL.replace("kind=kernel", "kind=index"))
    assert _reason(seal(Artifact(index, {"source.tvmscript": b"x"}, {}), KEY)) == "other-kind"


def test_the_size_cap_refuses_before_reading():
    blob = seal(ARTIFACT, KEY)
    with pytest.raises(Rejected) as caught:
        open_entry(blob, KEY, EXPECTED, max_bytes=len(blob) - 1)
    assert caught.value.reason == "too-large"
    assert open_entry(blob, KEY, EXPECTED, max_bytes=len(blob)).files == ARTIFACT.files


def test_file_names_never_leave_the_entry():
    assert valid_file_name("kernel.so") and valid_file_name("module_0.so")
    for bad in ["../x", "a/b", "", ".hidden", "meta.json", "indexed", "x" * 200, "/abs"]:
        assert not valid_file_name(bad)
    header_with_bad_name = seal(Artifact(EXPECTED, {"ok.so": b"x"}, {}), KEY).replace(
        b'"ok.so"', b'"../x"'
    )
    assert _reason(header_with_bad_name) == "corrupt"


def test_mismatch_names_the_first_differing_field():
    assert mismatch(MATERIAL, MATERIAL) is None
    other_target = MATERIAL.replace('{"kind":"llvm"}', '{"kind":"cuda"}')
    assert mismatch(MATERIAL, other_target) == "other-target"
    assert mismatch(MATERIAL, other_target, only=("tvm", "shim")) is None


def test_key_material_is_one_line_per_field():
    with pytest.raises(ValueError, match="one name=value line"):
        material_text("kernel", {"target": "a\nb"})
    with pytest.raises(ValueError, match="must start with kind=kernel"):
        ArtifactKey("kernel", "kind=module\ntvm=1")
    with pytest.raises(ValueError, match="short lowercase name"):
        ArtifactKey("Kernel/../x", "kind=Kernel/../x")


# -- the key: from the environment or a file; none, short or unsafe keeps the remote off -------


def test_the_key_comes_from_the_variable_first(monkeypatch, tmp_path):
    path = tmp_path / "key"
    path.write_text("f" * 40 + "\n")
    monkeypatch.setenv(signing.KEY_FILE_ENV, str(path))
    monkeypatch.setenv(signing.KEY_ENV, "v" * 40)
    assert signing.key_from_environment().secret == b"v" * 40
    monkeypatch.delenv(signing.KEY_ENV)
    key = signing.key_from_environment()
    assert key.secret == b"f" * 40  # the file's trailing newline is not part of the key
    assert key.key_id in repr(key) and "fff" not in repr(key)  # the id, never the secret


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        pytest.param(lambda env, path: None, "no signing key", id="none"),
        pytest.param(lambda env, path: env.setenv(signing.KEY_ENV, "short"), "fewer than 32",
                     id="short"),
        pytest.param(lambda env, path: [env.setenv(signing.KEY_FILE_ENV, str(path)),
                                        path.chmod(0o666)], "writable by group or others",
                     id="file-writable-by-others"),
        pytest.param(lambda env, path: env.setenv(signing.KEY_FILE_ENV, str(path) + ".missing"),
                     "cannot be read", id="file-missing"),
    ],
)  # fmt: skip
def test_no_usable_key_says_why(monkeypatch, tmp_path, setup, message):
    monkeypatch.delenv(signing.KEY_ENV, raising=False)
    monkeypatch.delenv(signing.KEY_FILE_ENV, raising=False)
    path = tmp_path / "key"
    path.write_text("f" * 40)
    setup(monkeypatch, path)
    with pytest.raises(signing.KeyProblem, match=message):
        signing.key_from_environment()


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0,
    reason="giving the key file to another uid (os.chown) needs root",
)
def test_a_key_file_another_user_owns_is_refused_even_unwritable(monkeypatch, tmp_path):
    monkeypatch.delenv(signing.KEY_ENV, raising=False)
    path = tmp_path / "key"
    path.write_text("f" * 40)
    path.chmod(0o644)  # readable, writable only by its owner: that other user
    os.chown(path, 4242, 4242)
    monkeypatch.setenv(signing.KEY_FILE_ENV, str(path))
    with pytest.raises(signing.KeyProblem, match="belongs to uid 4242, neither the current user"):
        signing.key_from_environment()
    os.chown(path, 0, 0)  # root's own file: accepted (root can read any key anyway)
    assert signing.key_from_environment().secret == b"f" * 40
