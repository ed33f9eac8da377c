"""eval.every_steps (issue 35): what validate refuses, at which key, and what it accepts."""

from __future__ import annotations

import pytest

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config

KEY = "eval.every_steps"

# TINY: 48 samples / batch 8 = 6 batches per epoch, 2 epochs: 12 optimizer steps
REJECTED = [
    pytest.param(
        {"eval": {"every_steps": 4, "every_epochs": 1}},
        "set one of every_steps and every_epochs, not both",
        id="with-an-explicit-every_epochs",
    ),
    pytest.param(
        {"eval": {"every_steps": 13}},
        "13 is more than the 12 optimizer steps of the whole run (6 batches per epoch x 2 epochs)",
        id="longer-than-the-run",
    ),
    pytest.param(
        {"eval": {"every_steps": 7}, "grad": {"accumulation_steps": 2}},
        "7 is more than the 6 optimizer steps of the whole run (6 batches per epoch x 2 epochs, "
        "2 batches per step)",
        id="longer-than-the-run-in-accumulated-steps",
    ),
    pytest.param(
        {"eval": {"every_steps": 4}, "callbacks": {"early_stopping": {"monitor": "loss"}}},
        "not supported with callbacks.early_stopping yet",
        id="with-early-stopping",
    ),
    pytest.param(
        {
            "eval": {"every_steps": 4},
            "callbacks": {"checkpoint": {"every_steps": 2, "keep": {"best": 2, "monitor": "loss"}}},
        },
        "not supported with callbacks.checkpoint.keep yet",
        id="with-keep-best",
    ),
    pytest.param(
        {"eval": {"every_steps": 4}, "train": {"dataset_sink_mode": True}},
        "needs train.dataset_sink_mode: false",
        id="with-sink-mode",
    ),
]


@pytest.mark.parametrize(("overrides", "message"), REJECTED)
def test_rejected_at_every_steps(write_config, overrides, message):
    with pytest.raises(ConfigError) as caught:
        load_config(write_config(overrides))
    problems = [(p.path, p.message) for p in caught.value.problems]
    assert any(path == KEY and message in text for path, text in problems), problems


@pytest.mark.parametrize(
    "overrides",
    [
        pytest.param({"eval": {"every_steps": 12}}, id="the-whole-run"),
        pytest.param({"eval": {"every_steps": 6}, "grad": {"accumulation_steps": 2}}, id="accumulated"),
        pytest.param(
            {"eval": {"every_steps": 4}, "callbacks": {"checkpoint": {"every_steps": 2}}}, id="resumable"
        ),
        pytest.param({"eval": {"every_steps": 4}, "ema": {"decay": 0.9}}, id="ema"),
    ],
)
def test_accepted(write_config, overrides):
    assert load_config(write_config(overrides)).config.eval.every_steps == overrides["eval"]["every_steps"]


def test_zero_is_refused_at_its_key(write_config):
    with pytest.raises(ConfigError) as caught:
        load_config(write_config({"eval": {"every_steps": 0}}))
    assert [p.path for p in caught.value.problems] == [KEY]
