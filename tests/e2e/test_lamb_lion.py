"""optimizer.name lion (mindcv's Lion; MindSpore 2.10's nn has none) trains identically in both variants on
CPU; lamb (nn.Lamb) is rejected on CPU, where MindSpore 2.10 has no kernel for it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.run.parity import generate_both

from conftest import TINY, assert_identical, merge, run_both

LION = {"optimizer": {"name": "lion", "lr": 0.002, "weight_decay": 0.05, "beta1": 0.8, "beta2": 0.95}}


def _write(tmp_path: Path, config: dict) -> Path:
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


@pytest.mark.slow
def test_lion_trains_identically_in_both_variants(tmp_path: Path) -> None:
    model, native = run_both(_write(tmp_path, merge(TINY, LION)), tmp_path)
    assert_identical(model, native, steps=12)


@pytest.mark.slow
def test_lion_with_parameter_groups_and_a_schedule_trains_identically(tmp_path: Path) -> None:
    config = merge(
        TINY,
        merge(
            LION,
            {
                "optimizer": {"groups": [{"params": ["*bias"], "lr_scale": 0.5, "weight_decay": 0.0}]},
                "lr_schedule": {"kind": "cosine", "min_lr": 0.0001},
            },
        ),
    )
    model, native = run_both(_write(tmp_path, config), tmp_path)
    assert_identical(model, native, steps=12)


def test_lion_is_imported_from_mindcv(tmp_path: Path) -> None:
    scripts = generate_both(_write(tmp_path, merge(TINY, LION)), tmp_path / "out")
    for script in scripts.values():
        text = script.read_text()
        assert "from mindcv.optim.lion import Lion" in text
        assert "optimizer = Lion(" in text and "beta1=0.8" in text and "beta2=0.95" in text


def test_lamb_is_rejected_on_cpu_at_optimizer_name(tmp_path: Path) -> None:
    path = _write(tmp_path, merge(TINY, {"optimizer": {"name": "lamb", "lr": 0.01}}))
    with pytest.raises(ConfigError, match="no CPU implementation") as info:
        load_config(path)
    (problem,) = info.value.problems
    line = path.read_text().splitlines().index("  name: lamb") + 1
    assert (problem.path, problem.line) == ("optimizer.name", line)


def test_lamb_on_ascend_generates_nn_lamb(tmp_path: Path) -> None:
    config = merge(TINY, {"runtime": {"device_target": "Ascend"}, "optimizer": {"name": "lamb", "lr": 0.01}})
    scripts = generate_both(_write(tmp_path, config), tmp_path / "out")
    assert "optimizer = nn.Lamb(" in scripts["native"].read_text()


def test_lamb_with_a_fixed_loss_scale_in_the_optimizer_is_rejected(tmp_path: Path) -> None:
    config = merge(
        TINY,
        {
            "runtime": {"device_target": "GPU"},
            "optimizer": {"name": "lamb", "lr": 0.01},
            "loss_scale": {"kind": "fixed", "value": 128.0},
        },
    )
    with pytest.raises(ConfigError, match="nn.Lamb takes no loss_scale"):
        load_config(_write(tmp_path, config))
