"""Parity across the options: networks, optimizers, LR schedules, modes, metrics, checkpoints.

Every case generates both variants, runs them for real and compares every step with ==.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from conftest import TINY, assert_identical, merge, run_both

pytestmark = pytest.mark.slow

NO_NETWORK = merge(TINY, {"network": None})  # base for configs that replace the network
SYNTH_16 = {"kind": "synthetic", "num_samples": 32, "image_shape": [1, 16, 16], "num_classes": 4}


# ---------------------------------------------------------------------------
# Networks
# ---------------------------------------------------------------------------

FACTORY = '''
from mindspore import nn


class SmallConvNet(nn.Cell):
    """A user network with BatchNorm, to exercise the import path."""

    def __init__(self, num_classes=4, width=4):
        super().__init__()
        self.conv = nn.Conv2d(1, width, 3, pad_mode="same")
        self.bn = nn.BatchNorm2d(width)
        self.relu = nn.ReLU()
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(width * 8 * 8, num_classes)

    def construct(self, x):
        return self.fc(self.flatten(self.relu(self.bn(self.conv(x)))))


def build(num_classes, width):
    return SmallConvNet(num_classes=num_classes, width=width)
'''


def test_builtin_lenet5_16x16(write_config, tmp_path):
    config = write_config(
        {
            "network": {"kind": "builtin", "name": "lenet5", "hidden": [16], "num_classes": 4},
            "data": {"train": SYNTH_16, "eval": {**SYNTH_16, "num_samples": 16, "seed": 1}},
        }
    )
    model, native = run_both(config, tmp_path)
    assert_identical(model, native, steps=8)


# The tiny config as is (builtin mlp, 12 steps, assert_identical) is test_parity_precision's
# test_graph_matrix[O0-none-noclip]: amp O0 and loss scale none are the defaults, and the scripts it generates
# are byte-identical to the tiny config's (but the config path in their docstrings): one run of them, there.


def test_imported_network_factory(write_config, tmp_path):
    (tmp_path / "user_nets.py").write_text(FACTORY)
    config = write_config(
        {
            "network": {
                "kind": "import",
                "factory": "user_nets:build",
                "kwargs": {"num_classes": 4, "width": 3},
            }
        },
        base=NO_NETWORK,
    )
    model, native = run_both(config, tmp_path)
    assert_identical(model, native, steps=12)


def test_mindcv_resnet18(write_config, tmp_path):
    image = {
        "kind": "synthetic",
        "num_samples": 8,
        "image_shape": [3, 32, 32],
        "num_classes": 4,
        "batch_size": 4,
    }
    config = write_config(
        {
            "network": {"kind": "mindcv", "name": "resnet18", "num_classes": 4},
            "data": {"train": image, "eval": {**image, "seed": 1}},
            "train": {"epochs": 2},
        },
        base=NO_NETWORK,
    )
    model, native = run_both(config, tmp_path, steps=3)
    assert_identical(model, native, steps=3)


# ---------------------------------------------------------------------------
# Optimizers and LR schedules
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "optimizer",
    [
        pytest.param({"name": "momentum", "lr": 0.05, "momentum": 0.9, "nesterov": True}, id="momentum"),
        pytest.param({"name": "sgd", "lr": 0.05, "momentum": 0.5, "dampening": 0.1}, id="sgd"),
        pytest.param({"name": "adam", "lr": 0.01, "weight_decay": 0.01}, id="adam-wd"),
        pytest.param({"name": "adamw", "lr": 0.01}, id="adamw"),
        pytest.param(
            {"name": "adamw", "lr": 0.01, "weight_decay": 0.05, "decay_filter": "no_norm_no_bias"},
            id="adamw-wd-no_norm_no_bias",
        ),
    ],
)
def test_optimizers(write_config, tmp_path, optimizer):
    overrides: dict = {"optimizer": optimizer}
    if optimizer.get("decay_filter"):  # a network with BatchNorm gamma/beta and biases to exclude
        (tmp_path / "user_nets.py").write_text(FACTORY)
        overrides["network"] = {
            "kind": "import",
            "factory": "user_nets:build",
            "kwargs": {"num_classes": 4, "width": 3},
        }
    model, native = run_both(
        write_config(overrides, base=NO_NETWORK if "network" in overrides else TINY), tmp_path
    )
    assert_identical(model, native, steps=12)


@pytest.mark.parametrize(
    "schedule",
    [
        pytest.param({"kind": "constant"}, id="constant"),
        pytest.param({"kind": "piecewise", "milestones": [1], "gamma": 0.5}, id="piecewise"),
        pytest.param({"kind": "cosine", "min_lr": 0.001}, id="cosine"),
        pytest.param(
            {"kind": "warmup_cosine", "warmup_epochs": 1, "warmup_start_lr": 0.001}, id="warmup_cosine"
        ),
    ],
)
def test_lr_schedules(write_config, tmp_path, schedule):
    model, native = run_both(write_config({"lr_schedule": schedule, "data": {"eval": None}}), tmp_path)
    assert_identical(model, native, steps=12)
    lrs = [r["lr"] for r in model.steps]
    # the logged lr is read from the optimizer (a float32 Parameter), so compare in float32
    if schedule["kind"] == "constant":
        assert lrs == [f32(0.05)] * 12
    elif schedule["kind"] == "piecewise":  # 6 steps per epoch, milestone after epoch 1
        assert lrs == [f32(0.05)] * 6 + [f32(0.025)] * 6
    elif schedule["kind"] == "cosine":  # 12 updates from 0.05 down towards min_lr 0.001
        assert lrs == [
            f32(0.001 + 0.5 * (0.05 - 0.001) * (1 + math.cos(math.pi * k / 12))) for k in range(12)
        ]
    else:  # 6 warm-up steps from 0.001 to 0.05, then 6 cosine steps from 0.05 towards 0
        warmup = [0.001 + (0.05 - 0.001) * k / 6 for k in range(6)]
        decay = [0.5 * 0.05 * (1 + math.cos(math.pi * k / 6)) for k in range(6)]
        assert lrs == [f32(v) for v in warmup + decay]


def f32(value: float) -> float:
    """`value` rounded to float32, as the optimizer stores it."""
    return float(np.float32(value))


# ---------------------------------------------------------------------------
# PyNative mode (graph mode is everywhere else)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["lenet5-adam-warmup_cosine", "import_bn-momentum"])
def test_pynative(write_config, tmp_path, case):
    if case.startswith("lenet5"):
        overrides: dict = {
            "network": {"kind": "builtin", "name": "lenet5", "hidden": [16], "num_classes": 4},
            "data": {"train": SYNTH_16, "eval": {**SYNTH_16, "num_samples": 16, "seed": 1}},
            "optimizer": {"name": "adam", "lr": 0.01},
            "lr_schedule": {"kind": "warmup_cosine", "warmup_epochs": 1},
        }
    else:
        (tmp_path / "user_nets.py").write_text(FACTORY)
        overrides = {
            "network": {
                "kind": "import",
                "factory": "user_nets:build",
                "kwargs": {"num_classes": 4, "width": 3},
            }
        }
    overrides["runtime"] = {"mode": "pynative"}
    model, native = run_both(write_config(overrides, base=NO_NETWORK), tmp_path, steps=6)
    assert_identical(model, native, steps=6)


# ---------------------------------------------------------------------------
# Evaluation metrics
# ---------------------------------------------------------------------------

USER_METRIC = '''
import numpy as np
from mindspore import nn


class LogitStats(nn.Metric):
    """A user metric whose eval() returns a dict."""

    def __init__(self, scale=1.0):
        super().__init__()
        self.scale = scale
        self.clear()

    def clear(self):
        self.total, self.count, self.largest = 0.0, 0, -np.inf

    def update(self, *inputs):
        logits = self._convert_data(inputs[0])
        self.total += float(logits.sum())
        self.count += logits.size
        self.largest = max(self.largest, float(logits.max()))

    def eval(self):
        return {"mean": self.total / self.count * self.scale, "max": self.largest}
'''


def test_eval_metrics(write_config, tmp_path):
    (tmp_path / "user_metrics.py").write_text(USER_METRIC)
    metrics = [
        {"name": "accuracy"},
        {"name": "loss"},
        {"name": "top_k", "k": 2},
        {"name": "precision"},
        {"name": "recall"},
        {"name": "f1"},
        {
            "name": "import",
            "class": "user_metrics:LogitStats",
            "key": "logit_stats",
            "kwargs": {"scale": 2.0},
        },
    ]
    model, native = run_both(write_config({"eval": {"metrics": metrics}}), tmp_path)
    assert_identical(model, native, steps=12)
    assert len(model.evals) == 2
    results = model.evals[-1]["metrics"]
    assert set(results) == {"accuracy", "loss", "top_2", "precision", "recall", "f1", "logit_stats"}
    assert set(results["logit_stats"]) == {"mean", "max"}
    assert len(results["precision"]) == 4  # one value per class


# ---------------------------------------------------------------------------
# Checkpoints
# ---------------------------------------------------------------------------


def load_checkpoints(directory: Path) -> dict[str, dict]:
    import mindspore as ms

    return {p.name: ms.load_checkpoint(str(p)) for p in sorted(directory.glob("*/*.ckpt"))}


@pytest.mark.parametrize(
    ("checkpoint", "expected"),
    [
        # 6 steps per epoch, 12 steps: saved after steps 4, 8, 12 (= epoch 1 step 4, epoch 2 steps 2
        # and 6); keep_max 2 prunes the oldest
        pytest.param({"every_steps": 4, "keep_max": 2}, ["tiny-2_2.ckpt", "tiny-2_6.ckpt"], id="every_steps"),
        # 3 epochs, every 2: saved after epoch 2 and, at the end, after epoch 3
        pytest.param(
            {"every_epochs": 2, "keep_max": 5}, ["tiny-2_6.ckpt", "tiny-3_6.ckpt"], id="every_epochs"
        ),
    ],
)
def test_checkpoint_contents(write_config, tmp_path, checkpoint, expected):
    config = write_config(
        {
            "data": {"eval": None},
            "optimizer": {"name": "adam", "lr": 0.01},
            "train": {"epochs": 3 if "every_epochs" in checkpoint else 2},
            "callbacks": {"checkpoint": {**checkpoint, "prefix": "tiny"}},
        }
    )
    model, native = run_both(config, tmp_path)
    assert_identical(model, native)
    saved = {
        v: load_checkpoints(r.output_dir / "checkpoints") for v, r in (("model", model), ("native", native))
    }
    assert sorted(saved["model"]) == sorted(saved["native"]) == expected
    for name in expected:
        a, b = saved["model"][name], saved["native"][name]
        assert sorted(a) == sorted(b)
        assert any(key.startswith("moment1.") for key in a), "optimizer state is saved too"
        assert a.pop("config_sha256") == b.pop("config_sha256")  # a str: the resumable run's identity
        assert a.pop("run_id") != b.pop("run_id")  # a str per run: two runs, two ids
        for key in a:
            assert a[key].dtype == b[key].dtype, key
            assert np.array_equal(a[key].asnumpy(), b[key].asnumpy()), key
    last = saved["model"][expected[-1]]
    assert int(last["step_num"].asnumpy()) == len(model.steps)
