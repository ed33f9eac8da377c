"""optimizer.layer_decay: one parameter group per layer, layer i of 0..L at LR x rate ** (L - i); both
variants train identically, the logged group LRs are the decayed ones, and the mindcv ViT layer map covers
the real model's parameters."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.run.parity import generate_both

from conftest import TINY, assert_identical, import_script, merge, run_both

LENET = merge(
    TINY,
    {
        "network": {"name": "lenet5", "hidden": [12, 8]},
        "data": {"train": {"image_shape": [1, 16, 16]}, "eval": {"image_shape": [1, 16, 16]}},
        "optimizer": {"name": "momentum", "lr": 0.05, "weight_decay": 0.001, "layer_decay": {"rate": 0.5}},
    },
)


def _write(tmp_path: Path, config: dict) -> Path:
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


@pytest.mark.slow
def test_lenet_layer_decay_trains_identically_with_the_decayed_lrs(tmp_path: Path) -> None:
    model, native = run_both(_write(tmp_path, LENET), tmp_path)
    assert_identical(model, native, steps=12)
    # conv1, conv2, fc1, fc2, fc3 = layers 0..4: 0.05 x 0.5 ** (4 - i); fc3 is the default group.
    # optimizer.get_lr() gives the LR of each parameter: conv1.weight, conv2.weight (the convolutions
    # have no bias), then each Dense layer's weight and bias.
    expected = [0.003125, 0.00625, 0.0125, 0.0125, 0.025, 0.025, 0.05, 0.05]
    for record in model.steps:
        assert record["lr"] == pytest.approx(expected, rel=1e-6)  # float32 LRs


@pytest.mark.slow
def test_layer_decay_follows_the_schedule(tmp_path: Path) -> None:
    config = merge(LENET, {"lr_schedule": {"kind": "cosine", "min_lr": 0.001}})
    model, native = run_both(_write(tmp_path, config), tmp_path)
    assert_identical(model, native, steps=12)
    for record in model.steps:
        layer_0, layer_3, default = record["lr"][0], record["lr"][4], record["lr"][-1]
        assert layer_0 == pytest.approx(default * 0.0625, rel=1e-5)
        assert layer_3 == pytest.approx(default * 0.5, rel=1e-5)
    assert model.steps[0]["lr"][-1] > model.steps[-1]["lr"][-1]


def _expected_vit_layer(name: str) -> str:
    """docs/training-options.md's layer map again: embeddings 0, blocks.i i + 1, the rest (norm, head) last."""
    if name in ("cls_token", "pos_embed") or name.startswith("patch_embed."):
        return "layer_0"
    match = re.match(r"blocks\.(\d+)\.", name)
    if match:
        return f"layer_{int(match.group(1)) + 1}"
    return "default"


@pytest.mark.slow
def test_vit_layer_map_covers_mindcvs_vit_parameters(tmp_path: Path) -> None:
    config = merge(
        TINY,
        {
            "network": {"kind": "mindcv", "name": "vit_b_32_224", "num_classes": 4, "hidden": None},
            "data": {"train": {"image_shape": [3, 224, 224]}, "eval": {"image_shape": [3, 224, 224]}},
            "optimizer": {"name": "adamw", "lr": 0.001, "weight_decay": 0.05, "layer_decay": {"rate": 0.75}},
        },
    )
    script = generate_both(_write(tmp_path, config), tmp_path / "out")["native"]
    text = script.read_text()
    assert 'members["layer_12"], LR * 0.75, WEIGHT_DECAY)' in text  # blocks.11
    assert f'members["layer_0"], LR * {0.75**13!r}, WEIGHT_DECAY)' in text
    module = import_script(script, "generated")
    from mindcv.models import create_model

    names = [p.name for p in create_model("vit_b_32_224", num_classes=4).trainable_params()]
    groups = {name: module.param_group(name) for name in names}
    assert groups == {name: _expected_vit_layer(name) for name in names}
    assert set(groups.values()) == {f"layer_{i}" for i in range(13)} | {"default"}  # no layer left empty
    assert sorted(n for n, g in groups.items() if g == "default") == [
        "head.bias",
        "head.weight",
        "norm.beta",
        "norm.gamma",
    ]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            {"network": {"kind": "mindcv", "name": "resnet18", "hidden": None}},
            "layer ids are defined for builtin lenet5 and mlp and mindcv vit_\\* models, not for the mindcv "
            "network resnet18",
        ),
        ({"optimizer": {"groups": [{"params": ["fc1.*"], "lr_scale": 0.1}]}}, "cannot be combined"),
        ({"optimizer": {"layer_decay": {"rate": 0}}}, "layer_decay.rate"),
    ],
)
def test_layer_decay_errors_point_at_the_key(tmp_path: Path, overrides: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        load_config(_write(tmp_path, merge(LENET, overrides)))
    (problem,) = [p for p in info.value.problems if re.search(message, p.message + p.path)]
    assert problem.path.startswith("optimizer.layer_decay")


def test_explain_shows_the_groups_layer_decay_wrote(tmp_path: Path, capsys) -> None:
    from mscodegen.cli import main

    assert main(["explain", str(_write(tmp_path, LENET)), "optimizer.layer_decay"]) == 0
    out = capsys.readouterr().out
    for script in ("train_model.py", "train_native.py"):
        assert f"{script}: lines optimizer.layer_decay produced" in out
    assert '"layer_0": ("conv1.*",),' in out
    assert "LR * 0.0625" in out or "lr * 0.0625 for lr in learning_rate" in out
