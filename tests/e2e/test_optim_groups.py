"""optimizer.decay_filter says what it decays, and optimizer.groups give parameter groups their own LR and
weight decay. The counts and LRs below come from the optimizer MindSpore builds in the generated script
(its decay_flags, its per-group learning rates), never from mscodegen's own code."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.run.parity import generate_both, step_differences

from conftest import TINY, UNTIL_OPTIMIZER, merge, run_both

RESNET18 = merge(
    TINY,
    {
        "network": {"kind": "mindcv", "name": "resnet18", "num_classes": 4, "hidden": None},
        "data": {
            "train": {"image_shape": [3, 32, 32], "num_samples": 16},
            "eval": None,
        },
        "optimizer": {"name": "momentum", "lr": 0.1, "weight_decay": 0.0001},
    },
)

# Run the generated script until it has built its optimizer; print what the optimizer decays.
DECAY_PROBE = (
    UNTIL_OPTIMIZER
    + """
decayed = [p.name for p, flag in zip(optimizer.parameters, optimizer.decay_flags) if flag]
print(json.dumps({"total": len(optimizer.parameters), "decayed": decayed}))
"""
)


def _write(tmp_path: Path, config: dict, name: str = "cfg") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _probe(tmp_path: Path, config: dict, name: str) -> dict:
    scripts = generate_both(_write(tmp_path, config, name), tmp_path / name)
    probe = tmp_path / "probe.py"
    probe.write_text(DECAY_PROBE)
    out = subprocess.run(
        [sys.executable, str(probe), str(scripts["native"])], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


# mindcv ResNet-18: 20 convolutions (17 in the blocks and stem, 3 downsample), 20 BatchNorms (gamma,
# beta each), the classifier's weight and bias: 62 trainable parameters.
@pytest.mark.slow
@pytest.mark.parametrize(
    ("decay_filter", "decayed"),
    [
        ("every_parameter", 62),  # mindcv's weight_decay_filter disable
        ("mindspore_default", 22),  # 20 conv weights + classifier weight and bias; no gamma/beta
        ("all", 22),  # the deprecated name keeps its old meaning: mindspore_default
        ("no_norm_no_bias", 21),  # 20 conv weights + classifier weight
    ],
)
def test_resnet18_decayed_parameter_count(tmp_path: Path, decay_filter: str, decayed: int) -> None:
    config = merge(RESNET18, {"optimizer": {"decay_filter": decay_filter}})
    result = _probe(tmp_path, config, decay_filter)
    assert result["total"] == 62
    assert len(result["decayed"]) == decayed
    if decay_filter in ("mindspore_default", "all", "no_norm_no_bias"):
        assert not any(n.endswith((".gamma", ".beta")) for n in result["decayed"])


def test_deprecated_all_is_said_in_the_script(tmp_path: Path) -> None:
    config = merge(TINY, {"optimizer": {"weight_decay": 0.001, "decay_filter": "all"}})
    scripts = generate_both(_write(tmp_path, config), tmp_path / "out")
    text = scripts["native"].read_text()
    assert "decay_filter all is the deprecated name of mindspore_default" in text
    # same code as mindspore_default: weight_decay passed to the optimizer, no parameter groups
    assert "weight_decay=WEIGHT_DECAY" in text


def test_group_takes_lr_or_lr_scale_not_both(tmp_path: Path) -> None:
    config = merge(TINY, {"optimizer": {"groups": [{"params": ["fc1.*"], "lr": 0.1, "lr_scale": 0.5}]}})
    with pytest.raises(ConfigError, match="lr or lr_scale"):
        load_config(_write(tmp_path, config))


GROUPS = merge(
    TINY,
    {
        "optimizer": {
            "name": "momentum",
            "lr": 0.05,
            "weight_decay": 0.001,
            "decay_filter": "no_norm_no_bias",
            "groups": [
                {"params": ["fc1.*"], "lr_scale": 0.1, "weight_decay": 0.01},
                {"params": ["fc2.weight"], "lr": 0.02},
            ],
        },
        "lr_schedule": {"kind": "piecewise", "milestones": [1], "gamma": 0.1},
    },
)


def f32(value: float) -> float:
    """A hand-computed LR as the optimizer stores it (float32)."""
    return float(np.float32(value))


@pytest.mark.slow
def test_groups_lr_per_group_read_from_the_optimizer_and_parity(tmp_path: Path) -> None:
    model, native = run_both(_write(tmp_path, GROUPS), tmp_path)
    assert step_differences(model.steps, native.steps) == []
    assert len(model.steps) == 12  # 6 steps x 2 epochs; the schedule drops x0.1 after epoch 1
    # optimizer.get_lr() gives one LR per MindSpore parameter group, in the script's order: each config
    # group split into its decayed and undecayed parameters (no_norm_no_bias), empty ones left out:
    # groups[0] fc1.weight | fc1.bias, groups[1] fc2.weight | -, default - | fc2.bias
    for run in (model, native):
        for record in run.steps:
            first = record["epoch"] == 1
            g0 = f32(0.005 if first else 0.0005)  # lr_scale 0.1
            g1 = f32(0.02 if first else 0.002)  # lr 0.02 = 0.4 x optimizer.lr
            default = f32(0.05 if first else 0.005)
            assert record["lr"] == [g0, g0, g1, default], record


@pytest.mark.slow
def test_groups_weight_decay_per_parameter(tmp_path: Path) -> None:
    result = _probe(tmp_path, merge(GROUPS, {"lr_schedule": None}), "groups")
    # no_norm_no_bias inside each group: only weights decayed
    assert sorted(result["decayed"]) == ["fc1.weight", "fc2.weight"]


WD_PROBE = (
    UNTIL_OPTIMIZER
    + """
wd = {p.name: float(w) for p, w in zip(optimizer.parameters, optimizer.weight_decay)}
print(json.dumps(wd))
"""
)


@pytest.mark.slow
def test_groups_weight_decay_values(tmp_path: Path) -> None:
    config = merge(GROUPS, {"lr_schedule": None})
    scripts = generate_both(_write(tmp_path, config), tmp_path / "out")
    probe = tmp_path / "probe.py"
    probe.write_text(WD_PROBE)
    out = subprocess.run(
        [sys.executable, str(probe), str(scripts["native"])], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    wd = json.loads(out.stdout.strip().splitlines()[-1])
    assert wd == {
        "fc1.weight": f32(0.01),  # groups[0].weight_decay
        "fc1.bias": 0.0,  # a bias: no_norm_no_bias
        "fc2.weight": f32(0.001),  # groups[1]: optimizer.weight_decay
        "fc2.bias": 0.0,
    }
