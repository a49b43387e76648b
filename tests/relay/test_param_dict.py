"""relay.save_param_dict / load_param_dict: the round trip, and a short or foreign blob refused
with a ValueError naming what is missing (TVM 0.27 fills a short blob's data with zeros)."""

from __future__ import annotations

import numpy as np
import pytest

from compile_engine_compat import relay

PARAMS = {
    "weight": np.arange(24, dtype="float32").reshape(4, 6),
    "bias": np.array([1, -2, 3], dtype="int8"),
    "scale": np.array(0.5, dtype="float64"),
}


def _blob() -> bytes:
    return bytes(relay.save_param_dict(PARAMS))


def test_a_whole_blob_round_trips() -> None:
    loaded = relay.load_param_dict(_blob())
    assert sorted(loaded) == sorted(PARAMS)
    for name, value in PARAMS.items():
        np.testing.assert_array_equal(loaded[name].numpy(), value)
    assert sorted(relay.load_param_dict(bytearray(_blob()))) == sorted(PARAMS)


@pytest.mark.parametrize("keep", [0.5, 0.75, 0.9])
def test_a_truncated_blob_is_refused_not_padded_with_zeros(keep: float) -> None:
    blob = _blob()
    with pytest.raises(ValueError, match=r"the blob is truncated: .*but the blob has"):
        relay.load_param_dict(blob[: int(len(blob) * keep)])


def test_every_cut_is_refused() -> None:
    blob = _blob()
    for cut in range(len(blob)):
        with pytest.raises(ValueError, match="load_param_dict"):
            relay.load_param_dict(blob[:cut])


def test_a_blob_missing_only_its_last_byte_names_the_tensor() -> None:
    with pytest.raises(ValueError, match=r"the data of tensor 'scale' \(shape \(\), 8 bytes\)"):
        relay.load_param_dict(_blob()[:-1])


def test_a_foreign_blob_or_object_is_refused() -> None:
    with pytest.raises(ValueError, match="not a parameter blob"):
        relay.load_param_dict(b"\0" * 64)
    with pytest.raises(TypeError, match="takes the bytes of save_param_dict"):
        relay.load_param_dict("weights.params")
