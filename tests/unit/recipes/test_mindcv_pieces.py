"""import-mindcv of mindcv's training pieces: aux_factor (inception_v3's auxiliary loss), ema with a loss
scale that skips overflowing steps, dataset_sink_mode. Expected values are read off mindcv 0.3.0's
train.py, loss/cross_entropy_smooth.py and utils/train_step.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from mscodegen.recipes.mindcv import RecipeError, convert

INCEPTION = {"model": "inception_v3", "num_classes": 10, "aux_factor": 0.1, "amp_level": "O0"}


def _keys(findings) -> set[str]:
    return {f.key for f in findings}


def test_inception_v3_aux_factor_is_the_networks(tmp_path: Path) -> None:
    result = convert(INCEPTION, out_dir=tmp_path)
    assert result.config["network"]["aux_factor"] == 0.1
    assert "aux_factor" not in _keys(result.not_converted) | _keys(result.approximated)


def test_aux_factor_on_a_single_output_is_ignored_as_mindcv_ignores_it(tmp_path: Path) -> None:
    # CrossEntropySmooth adds aux_factor x the losses of logits[1:], which a single tensor does not have
    result = convert({**INCEPTION, "model": "resnet18"}, out_dir=tmp_path)
    assert "aux_factor" not in result.config["network"]
    (ignored,) = [f for f in result.ignored if f.key == "aux_factor"]
    assert ignored.reason == "mindcv's resnet18 returns no auxiliary logits: the loss does not use it"


def test_aux_factor_with_a_float16_output_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RecipeError, match=r"^aux_factor 0.1 with amp_level O2: .*use amp_level O0 or O1$"):
        convert({**INCEPTION, "amp_level": "O2"}, out_dir=tmp_path)


@pytest.mark.parametrize(
    "scale",
    [
        {"loss_scale_type": "dynamic", "loss_scale": 1024, "drop_overflow_update": True},
        {"loss_scale_type": "fixed", "loss_scale": 1024, "drop_overflow_update": True},
    ],
)
def test_ema_with_a_skipping_loss_scale_and_sink_mode_is_exact(tmp_path: Path, scale: dict) -> None:
    recipe = {"model": "resnet18", "num_classes": 10, "ema": True, "ema_decay": 0.9995, **scale}
    result = convert({**recipe, "dataset_sink_mode": True}, out_dir=tmp_path)
    assert result.config["ema"] == {"decay": 0.9995, "warmup_steps": 2000}
    assert result.config["train"]["dataset_sink_mode"] is True
    assert not {"ema", "ema_decay", "dataset_sink_mode"} & (
        _keys(result.not_converted) | _keys(result.approximated)
    )


def test_aug_repeats_is_the_train_sources(tmp_path: Path) -> None:
    recipe = {"model": "resnet18", "num_classes": 10, "dataset": "imagenet", "data_dir": str(tmp_path)}
    result = convert({**recipe, "aug_repeats": 3}, out_dir=tmp_path)
    assert result.config["data"]["train"]["aug_repeats"] == 3
    assert "aug_repeats" not in _keys(result.not_converted) | _keys(result.approximated)
    assert "aug_repeats" not in convert(recipe, out_dir=tmp_path).config["data"]["train"]  # 0: none
    with pytest.raises(
        RecipeError, match=r"^aug_repeats 3 with num_samples 100: mindcv's create_dataset refuses"
    ):
        convert({**recipe, "aug_repeats": 3, "num_samples": 100}, out_dir=tmp_path)
