"""Several heads (docs/cookbook/several_heads.yaml): the per-head metrics the native script prints equal a
hand computation in numpy from its saved weights. Parity between the variants (losses, evaluations, final
weights) is test_cookbook.py's; there both variants share HeadsLoss and HeadMetric, so this check recomputes
the network, the losses and the metrics without them."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_digits

from mscodegen.config.load import load_config
from mscodegen.output.generate import generate

from conftest import REPO

CONFIG = REPO / "docs" / "cookbook" / "several_heads.yaml"


def _eval_split() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The recipe's eval rows (the last 20% of scikit-learn's digits), from the data, not the factory."""
    digits = load_digits()
    start = len(digits.target) - int(len(digits.target) * 0.2)
    images = (digits.images[start:] / 16.0).astype(np.float32).reshape(-1, 64)
    digit = digits.target[start:]
    return images, digit, (digit % 2).astype(np.float64)


@pytest.mark.slow
def test_per_head_metrics_equal_a_numpy_computation(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    for name, text in generate(load_config(CONFIG), out).items():
        (out / name).write_text(text, encoding="utf-8")
    weights = tmp_path / "weights.ckpt"
    run = subprocess.run(
        [
            sys.executable,
            "train_native.py",
            "--epochs",
            "1",
            "--max-steps",
            "4",
            "--save-weights",
            str(weights),
        ],
        cwd=out,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    lines = [line for line in run.stdout.splitlines() if line.startswith("Eval result: epoch 1, metrics: ")]
    assert len(lines) == 1, run.stdout
    printed = ast.literal_eval(lines[0].split("metrics: ", 1)[1])
    assert set(printed) == {"digit_accuracy", "parity_binary_accuracy", "loss"}

    import mindspore as ms

    w = {name: p.asnumpy().astype(np.float64) for name, p in ms.load_checkpoint(str(weights)).items()}
    images, digit, parity = _eval_split()
    features = np.maximum(images @ w["trunk.weight"].T + w["trunk.bias"], 0)
    digit_logits = features @ w["digit_head.weight"].T + w["digit_head.bias"]  # [N, 10]
    parity_logit = (features @ w["parity_head.weight"].T + w["parity_head.bias"])[:, 0]  # [N]

    # accuracy counts: exact (a logit within float32 rounding of a tie would be a flaky sample; none is)
    assert printed["digit_accuracy"] == np.mean(digit_logits.argmax(axis=1) == digit)
    assert printed["parity_binary_accuracy"] == np.mean((parity_logit > 0) == (parity > 0.5))
    assert printed["digit_accuracy"] != printed["parity_binary_accuracy"]  # each head read its own pair

    # nn.Loss: the mean over batches (32, drop_remainder false) of 1.0 x cross entropy + 0.5 x BCE
    shifted = digit_logits - digit_logits.max(axis=1, keepdims=True)
    cross_entropy = np.log(np.exp(shifted).sum(axis=1)) - shifted[np.arange(len(digit)), digit]
    bce = np.maximum(parity_logit, 0) - parity_logit * parity + np.log1p(np.exp(-np.abs(parity_logit)))
    batches = [slice(i, i + 32) for i in range(0, len(digit), 32)]
    loss = np.mean([cross_entropy[b].mean() + 0.5 * bce[b].mean() for b in batches])
    assert printed["loss"] == pytest.approx(loss, rel=1e-5)
