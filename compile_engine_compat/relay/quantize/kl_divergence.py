"""``relay.quantize.kl_divergence``: the threshold minimizing the KL divergence between a
tensor's histogram and its quantized form (TVM 0.19's ``kl_divergence_scale``, whose search
ran in C++; here in NumPy).

One difference: a threshold that would clip more values than it keeps is not a candidate. In
TVM 0.19's search, a threshold just above the smallest values of a tensor far from zero gave a
one-bin slice whose quantized form equals it (divergence 0), so the search could clip nearly
every value.
"""

from __future__ import annotations

import numpy as np

__all__ = ["kl_divergence_scale", "percentile_scale"]


def kl_divergence_scale(
    arr: np.ndarray,
    quantized_dtype: str = "int8",
    num_bins: int = 8001,
    num_quantized_bins: int = 255,
) -> float:
    """The clipping threshold of ``arr`` that keeps its distribution closest (KL divergence)
    when quantized into ``num_quantized_bins`` levels.

    Parameters
    ----------
    arr : numpy.ndarray
        Calibration values.
    quantized_dtype : str
        ``"int8"`` or ``"uint8"`` (a non-negative tensor then gets twice the levels).
    num_bins, num_quantized_bins : int
        The histogram's bins and the quantized levels.

    Returns
    -------
    float
        The threshold (the scale before division by the integer range).
    """
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"kl_divergence_scale takes a numpy.ndarray, got {type(arr).__name__}")
    values = arr.astype("float64").ravel()
    if values.size == 0:
        raise ValueError("kl_divergence_scale: the calibration array is empty")
    thres = float(np.max(np.abs(values)))
    if thres == 0.0:
        return 1.0
    if quantized_dtype == "uint8" and float(values.min()) >= 0:
        num_quantized_bins = num_quantized_bins * 2 + 1
    hist, edges = np.histogram(values, bins=num_bins, range=(-thres, thres))
    hist = hist.astype("float64")
    zero = num_bins // 2
    half = num_quantized_bins // 2
    best, best_div = thres, np.inf
    for i in range(half, zero + 1):
        start, stop = zero - i, zero + i + 1
        p = hist[start:stop].copy()
        clipped = hist[:start].sum() + hist[stop:].sum()
        if clipped > p.sum():
            continue  # see the module's docstring
        p[0] += hist[:start].sum()
        p[-1] += hist[stop:].sum()
        div = _divergence(p, hist[start:stop], num_quantized_bins)
        if div < best_div:
            best_div, best = div, float(edges[stop])
    return best


def _divergence(p: np.ndarray, sliced: np.ndarray, levels: int) -> float:
    """KL(p || q), q the sliced histogram merged into ``levels`` bins and spread back over the
    non-empty bins of each."""
    n = sliced.size
    groups = np.minimum((np.arange(n) * levels) // n, levels - 1)
    nonzero = (sliced != 0).astype("float64")
    merged = np.bincount(groups, weights=sliced, minlength=levels)
    counts = np.bincount(groups, weights=nonzero, minlength=levels)
    per_bin = np.divide(merged, counts, out=np.zeros_like(merged), where=counts > 0)
    q = per_bin[groups] * nonzero
    p_sum, q_sum = p.sum(), q.sum()
    if p_sum == 0 or q_sum == 0:
        return np.inf
    p, q = p / p_sum, q / q_sum
    mask = p > 0
    if np.any(q[mask] == 0):
        q = np.where(mask & (q == 0), 1e-4, q)
    return float(np.sum(p[mask] * np.log(p[mask] / q[mask])))


def percentile_scale(arr: np.ndarray, percentile: float = 0.99999) -> float:
    """The ``percentile`` quantile of ``|arr|`` (TVM 0.19's percentile calibration)."""
    values = np.abs(np.asarray(arr, dtype="float64").ravel())
    if values.size == 0:
        raise ValueError("percentile calibration: the calibration array is empty")
    k = min(int(values.size * percentile), values.size - 1)
    found = float(np.partition(values, k)[k])
    return found if found > 0 else 1.0
