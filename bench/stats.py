"""Statistics for `python -m bench`: median, percentile-bootstrap confidence interval, verdict.

Pure numpy, no timing, no MindSpore: tests/unit/bench/test_bench_stats.py checks it on hand-computed values.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

RESAMPLES = 2000
CONFIDENCE = 0.95
SEED = 0


def median(values: Sequence[float]) -> float:
    """The median of a non-empty sequence (mean of the two middle values for an even count)."""
    if len(values) == 0:
        raise ValueError("median of no values")
    return float(np.median(np.asarray(values, dtype=float)))


def bootstrap_ci(
    values: Sequence[float],
    *,
    resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
) -> tuple[float, float]:
    """Percentile-bootstrap interval for the median: resample `values` with replacement
    `resamples` times (numpy Generator seeded with `seed`, so the same input gives the same
    interval), take each resample's median, return the (1-confidence)/2 and (1+confidence)/2
    quantiles of those medians."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        raise ValueError("confidence interval of no values")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, data.size, size=(resamples, data.size))
    medians = np.median(data[picks], axis=1)
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(medians, [alpha, 1 - alpha])
    return float(lo), float(hi)


def verdict(lo: float, hi: float, target: float) -> str:
    """'met' if the whole interval is at or above `target`, 'refuted' if it is wholly below,
    'undecided' if it straddles the target."""
    if lo >= target:
        return "met"
    if hi < target:
        return "refuted"
    return "undecided"


def summarize(values: Sequence[float], target: float | None = None, **bootstrap: float) -> dict:
    """Median, bootstrap interval, sample count and (given a target) the verdict of `values`."""
    lo, hi = bootstrap_ci(values, **bootstrap)
    out = {"median": median(values), "ci95": [lo, hi], "n": len(values), "values": list(values)}
    if target is not None:
        out.update(target=target, verdict=verdict(lo, hi, target))
    return out
