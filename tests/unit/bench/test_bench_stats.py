"""bench/stats.py against values computed by hand (no timing here)."""

from __future__ import annotations

import numpy as np
import pytest

from bench.stats import bootstrap_ci, median, summarize, verdict


@pytest.mark.parametrize(
    ("values", "expected"),
    [([3.0], 3.0), ([3.0, 1.0, 2.0], 2.0), ([4.0, 1.0, 3.0, 2.0], 2.5), ([1.0, 1.0, 9.0], 1.0)],
)
def test_median_by_hand(values: list[float], expected: float) -> None:
    assert median(values) == expected


def test_median_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError, match="no values"):
        median([])


def test_ci_of_a_constant_is_that_constant() -> None:
    assert bootstrap_ci([0.97] * 6) == (0.97, 0.97)


def test_ci_of_one_value_is_that_value() -> None:
    assert bootstrap_ci([1.5]) == (1.5, 1.5)


def test_ci_of_two_values_spans_both() -> None:
    # Resamples of [0, 1]: (0,0) -> 0, (0,1)/(1,0) -> 0.5, (1,1) -> 1, each extreme with
    # probability 1/4, so of 2000 resamples far more than 2.5 % are 0 and 2.5 % are 1.
    assert bootstrap_ci([0.0, 1.0]) == (0.0, 1.0)


def test_ci_lies_within_the_data_and_around_the_median() -> None:
    values = [0.91, 0.95, 0.99, 1.02, 1.10]
    lo, hi = bootstrap_ci(values)
    assert 0.91 <= lo <= 0.99 <= hi <= 1.10


def test_ci_is_reproducible_with_the_seed_and_varies_without() -> None:
    values = list(np.random.default_rng(1).normal(1.0, 0.05, size=9))
    assert bootstrap_ci(values, seed=3) == bootstrap_ci(values, seed=3)
    assert bootstrap_ci(values, seed=3, resamples=50) != bootstrap_ci(values, seed=4, resamples=50)


def test_ci_contains_the_true_median_of_a_known_distribution() -> None:
    sample = np.random.default_rng(0).normal(loc=1.0, scale=0.05, size=40)
    lo, hi = bootstrap_ci(sample)
    assert lo < 1.0 < hi
    assert hi - lo < 0.1  # and is not trivially wide


def test_ci_coverage_is_near_nominal() -> None:
    # 200 samples of 15 from N(1, 0.05): about 95 % of the intervals should contain 1.0.
    rng = np.random.default_rng(11)
    hits = sum(lo <= 1.0 <= hi for lo, hi in (bootstrap_ci(rng.normal(1.0, 0.05, 15)) for _ in range(200)))
    assert 0.85 * 200 <= hits <= 200 - 1


def test_ci_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="no values"):
        bootstrap_ci([])
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci([1.0, 2.0], confidence=1.0)


@pytest.mark.parametrize(
    ("lo", "hi", "expected"),
    [
        (0.99, 1.02, "met"),
        (0.98, 1.02, "met"),  # lower bound exactly at the target
        (0.90, 0.97, "refuted"),
        (0.97, 0.99, "undecided"),
        (0.95, 0.98, "undecided"),  # upper bound exactly at the target is not below it
    ],
)
def test_verdict(lo: float, hi: float, expected: str) -> None:
    assert verdict(lo, hi, 0.98) == expected


def test_summarize() -> None:
    out = summarize([1.0, 1.0, 1.0], target=0.98)
    assert out == {"median": 1.0, "ci95": [1.0, 1.0], "n": 3, "values": [1.0, 1.0, 1.0]} | {
        "target": 0.98,
        "verdict": "met",
    }
    assert "verdict" not in summarize([1.0, 2.0])


def test_ratios_are_taken_per_round_from_adjacent_runs():
    from bench.__main__ import ratio_rows

    rounds = [
        {"floor": {"steps_per_s": 10.0}, "model": {"steps_per_s": 9.0}, "native": {"steps_per_s": 9.0}},
        {"floor": {"steps_per_s": 5.0}, "model": {"steps_per_s": 5.0}, "native": {"steps_per_s": 4.0}},
        {"floor": {"steps_per_s": 8.0}, "model": {"steps_per_s": 8.0}, "native": {"steps_per_s": 8.0}},
    ]
    out = ratio_rows(rounds)
    # native/model per round: 1.0, 0.8, 1.0 -> median 1.0; model/floor: 0.9, 1.0, 1.0 -> 1.0
    assert out["native/model"]["values"] == [1.0, 0.8, 1.0]
    assert out["native/model"]["median"] == 1.0
    assert out["model/floor"]["values"] == [0.9, 1.0, 1.0]
    assert out["model/floor"]["target"] == 0.95
    assert "target" not in out["native/floor"]


def test_a_failed_run_leaves_its_round_out_of_the_ratio():
    from bench.__main__ import ratio_rows

    rounds = [
        {"floor": {"steps_per_s": 10.0}, "model": {"error": "exit 1"}, "native": {"steps_per_s": 9.0}},
        {"floor": {"steps_per_s": 10.0}, "model": {"steps_per_s": 5.0}, "native": {"steps_per_s": 4.0}},
    ]
    assert ratio_rows(rounds)["native/model"]["values"] == [0.8]
    assert ratio_rows(rounds)["native/floor"]["values"] == [0.9, 0.4]
