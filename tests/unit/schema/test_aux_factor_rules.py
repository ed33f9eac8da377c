"""network.aux_factor: where it applies (a mindcv model with auxiliary logits, one mindspore.nn loss, a
float32 output) and what the scripts write for it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.output.generate import generate

from conftest import INCEPTION_AUX as INCEPTION
from conftest import merge


def _path(tmp_path: Path, config: dict) -> Path:
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("overrides", "key", "message"),
    [
        (
            {"network": {"name": "resnet18"}, "data": {"train": {"image_shape": [3, 32, 32]}}},
            "network.aux_factor",
            "mindcv's resnet18 returns no auxiliary logits (inception_v3 does, and googlenet with kwargs "
            "aux_logits: true)",
        ),
        (
            {"amp": {"level": "O2"}},
            "network.aux_factor",
            "amp.level O2 casts the network's one output to float32 for the loss; use O0 or O1 (mindcv's "
            "inception_v3 recipe trains at O0)",
        ),
    ],
)
def test_aux_factor_is_refused_at_its_key(tmp_path: Path, overrides: dict, key: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(_path(tmp_path, merge(INCEPTION, overrides)))
    assert [(p.path, p.message) for p in info.value.problems] == [(key, message)]


def _script(tmp_path: Path, config: dict) -> str:
    return generate(load_config(_path(tmp_path, config)), tmp_path / "out")["train_native.py"]


def test_scripts_add_the_auxiliary_loss_instead_of_taking_the_main_logits(tmp_path: Path) -> None:
    text = _script(tmp_path, INCEPTION)
    assert "AUX_FACTOR = 0.1  # network.aux_factor" in text
    assert "loss_fn = AuxLogitsLoss(nn.CrossEntropyLoss(label_smoothing=0.1))" in text
    assert "MainLogits" not in text
    text = _script(tmp_path, merge(INCEPTION, {"network": {"aux_factor": None}}))
    assert "AuxLogitsLoss" not in text and "AUX_FACTOR" not in text
    assert 'MainLogits(create_model("inception_v3"' in text
