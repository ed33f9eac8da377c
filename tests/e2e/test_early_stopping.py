"""callbacks.early_stopping in both variants, and MindSpore LR callbacks with a custom train cell."""

from __future__ import annotations

import pytest

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.plan import build_shared
from mscodegen.run.parity import step_differences

from conftest import run_both

STEPS_PER_EPOCH = 6  # TINY: 48 samples, batch 8


@pytest.mark.slow
def test_early_stopping_stops_both_variants_at_the_same_step(write_config, tmp_path):
    # min_delta 1.0: accuracy can never improve by more than 1, so the second evaluation
    # is "no improvement" and patience 1 stops training after epoch 2 of 6.
    config = write_config(
        {
            "train": {"epochs": 6},
            "callbacks": {"early_stopping": {"monitor": "accuracy", "patience": 1, "min_delta": 1.0}},
        }
    )
    model, native = run_both(config, tmp_path)
    assert len(model.steps) == 2 * STEPS_PER_EPOCH
    assert step_differences(model.steps, native.steps) == []
    assert [e["epoch"] for e in model.evals] == [1, 2] == [e["epoch"] for e in native.evals]
    assert [e["metrics"] for e in model.evals] == [e["metrics"] for e in native.evals]


def test_monitor_must_be_an_eval_metric(write_config):
    config = write_config({"callbacks": {"early_stopping": {"monitor": "acc"}}})
    with pytest.raises(ConfigError) as info:
        load_config(config)
    (problem,) = info.value.problems
    assert problem.path == "callbacks.early_stopping.monitor"
    assert problem.message == "'acc' is not an eval metric; eval.metrics gives: accuracy, loss"


def test_early_stopping_needs_eval_data(write_config):
    config = write_config({"data": {"eval": None}, "callbacks": {"early_stopping": {"monitor": "loss"}}})
    with pytest.raises(ConfigError) as info:
        load_config(config)
    assert [p.path for p in info.value.problems] == ["callbacks.early_stopping"]


def test_mode_defaults_follow_the_metric(write_config, tmp_path):
    for monitor, maximize in (("loss", False), ("accuracy", True)):
        loaded = load_config(
            write_config({"callbacks": {"early_stopping": {"monitor": monitor}}}, name=monitor)
        )
        shared = build_shared(
            loaded.config, source="x.yaml", config_dir=tmp_path, out_dir=tmp_path / "out", name=monitor
        )
        assert shared.early_stopping is not None
        assert shared.early_stopping.maximize is maximize
