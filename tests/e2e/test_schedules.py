"""More optimizers and schedules: rmsprop; exponential and polynomial decay, with a warm-up before them and
mindcv's lr_epoch_stair. The LRs are read from the optimizer (the loss log's `lr`) and compared with values
worked out by hand; both variants run for real and must agree step for step."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.run.parity import step_differences

from conftest import TINY, merge, run_both

pytestmark = pytest.mark.slow  # every test here runs both variants


def _write(tmp_path: Path, overrides: dict) -> Path:
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(merge(TINY, overrides), sort_keys=False))
    return path


def f32(values: list[float]) -> list[float]:
    """LRs as the optimizer holds them (float32)."""
    return [float(np.float32(v)) for v in values]


def _lrs(tmp_path: Path, overrides: dict) -> list[float]:
    model, native = run_both(_write(tmp_path, overrides), tmp_path)
    assert step_differences(model.steps, native.steps) == []  # lr included
    return [r["lr"] for r in model.steps]


# TINY: 48 samples, batch 8 -> 6 steps per epoch.


def test_exponential_with_warmup(tmp_path: Path) -> None:
    lrs = _lrs(
        tmp_path,
        {
            "optimizer": {"lr": 0.08},
            "lr_schedule": {"kind": "exponential", "gamma": 0.5, "warmup_epochs": 1},
            "train": {"epochs": 3},
        },
    )
    warmup = [0.0, 0.08 / 6, 0.16 / 6, 0.04, 0.32 / 6, 0.4 / 6]  # 0 -> 0.08 linearly over 6 steps
    # then 0.08 x 0.5 ** (t / 6): halves every epoch (6 steps); t = 3 is 0.08 / sqrt(2)
    decay = [0.08 * 2 ** (-t / 6) for t in range(12)]
    assert decay[3] == pytest.approx(0.08 / math.sqrt(2)) and decay[6] == pytest.approx(0.04)
    assert lrs == f32(warmup + decay)


def test_exponential_epoch_stair(tmp_path: Path) -> None:
    lrs = _lrs(
        tmp_path,
        {
            "optimizer": {"lr": 0.08},
            "lr_schedule": {"kind": "exponential", "gamma": 0.5, "epoch_stair": True},
            "train": {"epochs": 3},
        },
    )
    assert lrs == f32([0.08] * 6 + [0.04] * 6 + [0.02] * 6)


def test_polynomial_power_2(tmp_path: Path) -> None:
    lrs = _lrs(
        tmp_path,
        {"optimizer": {"lr": 0.06}, "lr_schedule": {"kind": "polynomial", "power": 2.0, "end_lr": 0.0}},
    )
    # 0.06 x (1 - t / 12) ** 2 over the 12 steps of 2 epochs
    expected = [0.06 * ((12 - t) / 12) ** 2 for t in range(12)]
    assert (
        expected[0] == 0.06 and expected[6] == pytest.approx(0.015) and expected[3] == pytest.approx(0.03375)
    )
    assert lrs == f32(expected)


def test_polynomial_linear_stair_with_warmup_and_end_lr(tmp_path: Path) -> None:
    lrs = _lrs(
        tmp_path,
        {
            "optimizer": {"lr": 0.04},
            "lr_schedule": {
                "kind": "polynomial",
                "power": 1.0,
                "end_lr": 0.01,
                "epoch_stair": True,
                "warmup_epochs": 1,
                "warmup_start_lr": 0.01,
            },
            "train": {"epochs": 3},
        },
    )
    # epoch_stair holds the warm-up per epoch too (as mindcv's linear_lr): its one epoch stays at 0.01
    # 12 decay steps, linear from 0.04 to 0.01, held per epoch: t = 0 -> 0.04, t = 6 -> 0.025
    assert lrs == f32([0.01] * 6 + [0.04] * 6 + [0.025] * 6)


def test_cosine_restarts_after_a_warm_up(tmp_path: Path) -> None:
    lrs = _lrs(
        tmp_path,
        {
            "optimizer": {"lr": 0.04},
            "lr_schedule": {
                "kind": "warmup_cosine",
                "warmup_epochs": 1,
                "warmup_start_lr": 0.01,
                "min_lr": 0.0,
                "decay_epochs": 1,
                "cycles": 2,
                "cycle_decay": 0.5,
            },
            "train": {"epochs": 3},
        },
    )
    warmup = [0.01, 0.015, 0.02, 0.025, 0.03, 0.035]  # 0.01 -> 0.04 over 6 steps
    # two cosines of one epoch (6 steps) each, from 0.04 then from 0.04 x 0.5, down towards 0
    first = [0.02 * (1 + math.cos(math.pi * t / 6)) for t in range(6)]
    assert first[0] == 0.04 and first[3] == pytest.approx(0.02)
    assert lrs == f32(warmup + first + [lr / 2 for lr in first])


def test_rmsprop_runs_on_cpu_identically(tmp_path: Path) -> None:
    lrs = _lrs(
        tmp_path,
        {
            "optimizer": {
                "name": "rmsprop",
                "lr": 0.01,
                "momentum": 0.9,
                "centered": True,
                "weight_decay": 1e-4,
            }
        },
    )
    assert lrs == f32([0.01] * 12)


def test_warmup_must_end_before_training(tmp_path: Path) -> None:
    path = _write(tmp_path, {"lr_schedule": {"kind": "exponential", "warmup_epochs": 2}})
    with pytest.raises(ConfigError, match="warm-up"):
        load_config(path)


def test_one_cycle_linear(tmp_path: Path) -> None:
    lrs = _lrs(
        tmp_path,
        {
            "optimizer": {"lr": 0.1},
            "lr_schedule": {
                "kind": "one_cycle",
                "pct_start": 0.5,
                "anneal": "linear",
                "div_factor": 10.0,
                "final_div_factor": 10.0,
            },
        },
    )
    # 12 steps: up from 0.01 to 0.1 over steps 0..5, then down to 0.001 at step 11
    up = [0.01, 0.028, 0.046, 0.064, 0.082, 0.1]
    down = [0.0835, 0.067, 0.0505, 0.034, 0.0175, 0.001]
    assert lrs == f32(up + down)


def test_one_cycle_cos(tmp_path: Path) -> None:
    lrs = _lrs(
        tmp_path,
        {
            "optimizer": {"lr": 0.1},
            "lr_schedule": {
                "kind": "one_cycle",
                "pct_start": 0.5,
                "div_factor": 10.0,
                "final_div_factor": 10.0,
            },
        },
    )
    # cosine halves: the ends as in the linear case; the middle of the way down (step 8) is their mean
    assert lrs[0] == f32([0.01])[0] and lrs[5] == f32([0.1])[0] and lrs[11] == f32([0.001])[0]
    assert lrs[8] == f32([0.0505])[0]
    # up: 0.1 + (0.01 - 0.1) / 2 * (cos(pi * i / 5) + 1)
    assert lrs[:6] == f32([0.1 - 0.045 * (math.cos(math.pi * i / 5) + 1) for i in range(6)])


def test_warmup_before_piecewise(tmp_path: Path) -> None:
    lrs = _lrs(
        tmp_path,
        {
            "optimizer": {"lr": 0.06},
            "lr_schedule": {"kind": "piecewise", "milestones": [2], "gamma": 0.5, "warmup_epochs": 1},
            "train": {"epochs": 3},
        },
    )
    # 6 warm-up steps 0 -> 0.06, epoch 2 at 0.06, epoch 3 (milestone 2) at 0.03
    assert lrs == f32([0.0, 0.01, 0.02, 0.03, 0.04, 0.05] + [0.06] * 6 + [0.03] * 6)


def test_warmup_before_cosine(tmp_path: Path) -> None:
    lrs = _lrs(
        tmp_path,
        {
            "optimizer": {"lr": 0.06},
            "lr_schedule": {"kind": "cosine", "min_lr": 0.0, "warmup_epochs": 1, "warmup_start_lr": 0.03},
        },
    )
    # 6 warm-up steps 0.03 -> 0.06, then a cosine over 6 steps: 0.03 x (1 + cos(pi t / 6))
    assert lrs[:6] == f32([0.03, 0.035, 0.04, 0.045, 0.05, 0.055])
    assert lrs[6] == f32([0.06])[0] and lrs[9] == f32([0.03])[0]  # t = 0 and t = 3 (half way)
