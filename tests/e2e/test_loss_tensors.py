"""Loss arguments that MindSpore takes as Tensors (class weights, BCE pos_weight) written as lists in the config,
and FocalLoss on class-index labels (issue 35): both variants `==`, and the losses against a hand computation."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mscodegen.catalog.losses import check_loss
from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.output.generate import generate

from conftest import TINY, assert_identical, merge, run_both

WEIGHTS = [1.0, 2.0, 0.5, 1.0]  # TINY has 4 classes
CROSS_ENTROPY = {"loss": {"name": "CrossEntropyLoss", "kwargs": {"weight": WEIGHTS}}}
FOCAL = {"loss": {"name": "FocalLoss", "kwargs": {"gamma": 2.0}}}


def problems(write_config, overrides: dict) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as info:
        load_config(write_config(overrides))
    return [(p.path, p.message) for p in info.value.problems]


def test_a_list_becomes_a_float32_tensor_in_both_scripts(write_config, tmp_path: Path) -> None:
    files = generate(load_config(write_config(CROSS_ENTROPY)), tmp_path / "out")
    call = "nn.CrossEntropyLoss(weight=ms.Tensor([1.0, 2.0, 0.5, 1.0], ms.float32))"
    for name in ("train_model.py", "train_native.py", "predict.py"):
        assert f"loss_fn = {call}" in files[name], name


def test_a_list_of_the_wrong_length_or_kind_is_refused_at_its_key(write_config) -> None:
    short = merge(CROSS_ENTROPY, {"loss": {"kwargs": {"weight": [1.0, 2.0]}}})
    assert problems(write_config, short) == [
        ("loss.kwargs.weight", "2 numbers for network.num_classes 4: give one per class")
    ]
    words = merge(CROSS_ENTROPY, {"loss": {"kwargs": {"weight": [1.0, "two", 1.0, 1.0]}}})
    assert problems(write_config, words) == [
        (
            "loss.kwargs.weight",
            "CrossEntropyLoss: `weight` takes a list of numbers, one per class (got [1.0, 'two', 1.0, 1.0])",
        )
    ]
    # BCEWithLogitsLoss broadcasts: one number for every output is allowed
    assert check_loss("BCEWithLogitsLoss", {"pos_weight": [3.0]}) == []


def test_focal_loss_on_class_indices_is_wrapped_only_then(write_config, tmp_path: Path) -> None:
    files = generate(load_config(write_config(FOCAL)), tmp_path / "out")
    assert "class FocalLossOnIndices(nn.FocalLoss):" in files["train_native.py"]
    assert "loss_fn = FocalLossOnIndices(gamma=2.0)" in files["train_model.py"]
    gone = dict.fromkeys(("num_samples", "image_shape", "num_classes", "seed"))  # None: deleted by merge
    imported = {"kind": "import", "factory": "parts:make", **gone}
    one_hot = merge(FOCAL, {"data": {"train": imported}, "network": {"input_shape": [1, 8, 8]}})
    (tmp_path / "parts.py").write_text("def make(split):\n    raise NotImplementedError\n")
    files = generate(load_config(write_config(one_hot)), tmp_path / "out2")
    assert "loss_fn = nn.FocalLoss(gamma=2.0)" in files["train_model.py"]  # the factory's labels are its own


PROBE = """
import importlib.util, json, sys
import numpy as np
import mindspore as ms
spec = importlib.util.spec_from_file_location("generated", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
logits = np.random.default_rng(0).standard_normal((6, 4)).astype(np.float32)
labels = np.array([0, 3, 1, 2, 3, 0], np.int32)
focal = mod.FocalLossOnIndices(gamma=2.0)
weighted = ms.nn.CrossEntropyLoss(weight=ms.Tensor(json.loads(sys.argv[2]), ms.float32))
print(json.dumps({
    "focal": float(focal(ms.Tensor(logits), ms.Tensor(labels))),
    "weighted": float(weighted(ms.Tensor(logits), ms.Tensor(labels))),
}))
"""


@pytest.mark.slow
def test_the_losses_equal_a_hand_computation(write_config, tmp_path: Path) -> None:
    """Focal loss: mean over samples of -(1 - p_t)^gamma log p_t; weighted cross-entropy: sum w_y (-log p_y)
    over sum w_y. Written here from the formulas, with numpy, not from the script's cell."""
    script = tmp_path / "train_model.py"
    script.write_text(generate(load_config(write_config(FOCAL)), tmp_path / "out")["train_model.py"])
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(script), json.dumps(WEIGHTS)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.splitlines()[-1])
    logits = np.random.default_rng(0).standard_normal((6, 4)).astype(np.float64)
    labels = np.array([0, 3, 1, 2, 3, 0])
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    p_t = p[np.arange(6), labels]
    assert got["focal"] == pytest.approx(np.mean(-((1 - p_t) ** 2) * np.log(p_t)), rel=1e-5)
    w = np.array(WEIGHTS)[labels]
    assert got["weighted"] == pytest.approx(np.sum(w * -np.log(p_t)) / np.sum(w), rel=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("overrides", [CROSS_ENTROPY, FOCAL], ids=["class_weights", "focal"])
def test_both_variants_train_alike(write_config, tmp_path: Path, overrides: dict) -> None:
    model, native = run_both(write_config(overrides, base=merge(TINY, {})), tmp_path)
    assert_identical(model, native, steps=12)
