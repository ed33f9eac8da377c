"""Loss arguments that MindSpore takes as Tensors (class weights, BCE pos_weight) written as lists in the config,
and FocalLoss on class-index labels (issue 35): both variants `==`, and the losses against a hand computation."""

from __future__ import annotations

import ast
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
from mscodegen.run.parity import read_jsonl, run_parity

from conftest import PROBE_IMPORT, TINY, assert_identical, merge, run_both

WEIGHTS = [1.0, 2.0, 0.5, 1.0]  # TINY has 4 classes
CROSS_ENTROPY = {"loss": {"name": "CrossEntropyLoss", "kwargs": {"weight": WEIGHTS}}}
FOCAL = {"loss": {"name": "FocalLoss", "kwargs": {"gamma": 2.0}}}
# Multi-label: three 0/1 labels per sample, one logit each, BCEWithLogitsLoss weighted per label
BCE_WEIGHT, POS_WEIGHT = [1.0, 2.0, 0.5], [3.0, 0.5, 1.5]
GONE = dict.fromkeys(("num_samples", "image_shape", "num_classes", "seed"))  # None: deleted by merge
MULTI_LABEL = {
    "network": {"num_classes": 3, "input_shape": [1, 1, 4]},
    "data": {
        "train": {"kind": "import", "factory": "labels3:make", "kwargs": {"count": 48, "seed": 0}, **GONE},
        "eval": {"kind": "import", "factory": "labels3:make", "kwargs": {"count": 24, "seed": 1}, **GONE},
    },
    "loss": {"name": "BCEWithLogitsLoss", "kwargs": {"weight": BCE_WEIGHT, "pos_weight": POS_WEIGHT}},
}
LABELS3 = """
import numpy as np
from mindspore import dataset as ds


def make(count, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((count, 1, 1, 4)).astype(np.float32)
    w = np.array([[1.0, -2.0, 0.5], [0.0, 1.0, -1.0], [0.5, 0.5, 2.0], [-1.0, 0.0, 1.0]])
    y = (x.reshape(count, 4) @ w > 0.3).astype(np.float32)
    return ds.NumpySlicesDataset({"image": x, "label": y}, shuffle=False)
"""


def multi_label(write_config, overrides: dict | None = None) -> Path:
    """The multi-label config (merged with `overrides`), its factory labels3.py next to it."""
    path = write_config(merge(MULTI_LABEL, overrides or {}), name="multi_label")
    (path.parent / "labels3.py").write_text(LABELS3)
    return path


def loss_expression(script: str) -> str:
    """The source of what the script assigns to `loss_fn`."""
    for node in ast.walk(ast.parse(script)):
        if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["loss_fn"]:
            segment = ast.get_source_segment(script, node.value)
            assert segment is not None
            return segment
    raise AssertionError("no loss_fn in the script")


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


def test_bce_takes_one_number_per_label_or_one_for_all(write_config, tmp_path: Path) -> None:
    files = generate(load_config(multi_label(write_config)), tmp_path / "out")
    for name in ("train_model.py", "train_native.py"):
        assert loss_expression(files[name]) == (
            "nn.BCEWithLogitsLoss(\n"
            "        weight=ms.Tensor([1.0, 2.0, 0.5], ms.float32),\n"
            "        pos_weight=ms.Tensor([3.0, 0.5, 1.5], ms.float32),\n"
            "    )"
        ), name
    load_config(multi_label(write_config, {"loss": {"kwargs": {"weight": None, "pos_weight": [3.0]}}}))
    two = {"loss": {"kwargs": {"pos_weight": [3.0, 0.5]}}}
    with pytest.raises(ConfigError) as info:
        load_config(multi_label(write_config, two))
    assert [(p.path, p.message) for p in info.value.problems] == [
        ("loss.kwargs.pos_weight", "2 numbers for network.num_classes 3: give one per class (or one for all)")
    ]


def test_focal_loss_on_class_indices_is_wrapped_only_then(write_config, tmp_path: Path) -> None:
    files = generate(load_config(write_config(FOCAL)), tmp_path / "out")
    assert "class FocalLossOnIndices(nn.FocalLoss):" in files["train_native.py"]
    assert "loss_fn = FocalLossOnIndices(gamma=2.0)" in files["train_model.py"]
    imported = {"kind": "import", "factory": "parts:make", **GONE}
    one_hot = merge(FOCAL, {"data": {"train": imported}, "network": {"input_shape": [1, 8, 8]}})
    (tmp_path / "parts.py").write_text("def make(split):\n    raise NotImplementedError\n")
    files = generate(load_config(write_config(one_hot)), tmp_path / "out2")
    assert "loss_fn = nn.FocalLoss(gamma=2.0)" in files["train_model.py"]  # the factory's labels are its own


PROBE = (
    PROBE_IMPORT
    + """
import importlib.util, json, os, sys
import numpy as np
import mindspore as ms
mod = import_script(sys.argv[1])
logits = np.random.default_rng(0).standard_normal((6, 4)).astype(np.float32)
labels = np.array([0, 3, 1, 2, 3, 0], np.int32)
losses = {name: eval(code, vars(mod)) for name, code in json.loads(sys.argv[2]).items()}
multi_logits = np.random.default_rng(1).standard_normal((6, 3)).astype(np.float32)
multi_labels = (np.random.default_rng(2).random((6, 3)) > 0.5).astype(np.float32)
print(json.dumps({
    "focal": float(losses["focal"](ms.Tensor(logits), ms.Tensor(labels))),
    "weighted": float(losses["weighted"](ms.Tensor(logits), ms.Tensor(labels))),
    "bce": float(losses["bce"](ms.Tensor(multi_logits), ms.Tensor(multi_labels))),
}))
"""
)


@pytest.mark.slow
def test_the_losses_equal_a_hand_computation(write_config, tmp_path: Path) -> None:
    """The loss cells the scripts build (their `loss_fn = ...`), on fixed batches, against the formulas
    written here with numpy: focal loss, the mean over samples of -(1 - p_t)^gamma log p_t; weighted
    cross-entropy, sum w_y (-log p_y) over sum w_y; weighted BCE, the mean over samples and labels of
    -w (pos_weight y log s(x) + (1 - y) log(1 - s(x)))."""
    configs = {
        "focal": write_config(FOCAL, name="focal"),
        "weighted": write_config(CROSS_ENTROPY, name="weighted"),
        "bce": multi_label(write_config),
    }
    scripts = {
        name: generate(load_config(path), tmp_path / name)["train_model.py"] for name, path in configs.items()
    }
    code = {name: loss_expression(text) for name, text in scripts.items()}
    script = tmp_path / "train_model.py"  # the probe runs it for its FocalLossOnIndices
    script.write_text(scripts["focal"])
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(script), json.dumps(code)],
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
    x = np.random.default_rng(1).standard_normal((6, 3)).astype(np.float32).astype(np.float64)
    y = (np.random.default_rng(2).random((6, 3)) > 0.5).astype(np.float64)
    s = 1 / (1 + np.exp(-x))
    bce = -np.array(BCE_WEIGHT) * (np.array(POS_WEIGHT) * y * np.log(s) + (1 - y) * np.log(1 - s))
    assert got["bce"] == pytest.approx(np.mean(bce), rel=1e-5)
    assert got["bce"] != pytest.approx(np.mean(-(y * np.log(s) + (1 - y) * np.log(1 - s))), rel=1e-2)


@pytest.mark.slow
@pytest.mark.parametrize("overrides", [CROSS_ENTROPY, FOCAL], ids=["class_weights", "focal"])
def test_both_variants_train_alike(write_config, tmp_path: Path, overrides: dict) -> None:
    model, native = run_both(write_config(overrides, base=merge(TINY, {})), tmp_path)
    assert_identical(model, native, steps=12)


@pytest.mark.slow
def test_bce_with_pos_weight_parity(write_config, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`mscodegen parity` on the multi-label config: every step's loss, the evaluation and the final
    weights `==` across the variants."""
    keep = tmp_path / "kept"
    assert run_parity(multi_label(write_config), steps=6, keep=keep) == 0, capsys.readouterr().err[-2000:]
    assert "identical: 6 steps, 1 evaluation(s), final weights equal" in capsys.readouterr().out
    losses = [r["loss"] for r in read_jsonl(keep / "model" / "loss.jsonl")]
    assert len(losses) == 6 and len(set(losses)) > 1, losses
