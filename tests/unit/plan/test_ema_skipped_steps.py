"""ema with a loss scale that skips overflowing steps: the average is updated inside `if finite:`, after the
optimizer, as mindcv's TrainStep does with a loss-scale manager (dynamic, or fixed with drop_overflow_update)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from mscodegen.config.load import load_config
from mscodegen.output.generate import generate

from conftest import TINY, merge

SKIPPED_STEP_UPDATES_NOTHING = """\
        if finite:
            loss = ops.depend(loss, self.optimizer(grads))
            # ema: mindcv's TrainStep also updates the averages only after a step that was not skipped
            loss = ops.depend(loss, self.ema())
        return loss, ops.logical_not(finite), self.scaler.scale_value
"""


@pytest.mark.parametrize(
    "scale", [{"kind": "dynamic"}, {"kind": "fixed", "value": 8, "drop_overflow_update": True}]
)
def test_both_scripts_update_the_average_only_after_a_step_taken(tmp_path: Path, scale: dict) -> None:
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(merge(TINY, {"ema": {}, "loss_scale": scale}), sort_keys=False))
    files = generate(load_config(path), tmp_path / "out")
    for name in ("train_model.py", "train_native.py"):
        assert SKIPPED_STEP_UPDATES_NOTHING in files[name], name
        assert files[name].count("self.ema()") == 1, name
