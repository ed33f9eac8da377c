"""optimizer adamw with bias_correction (mindcv's AdamW): both variants train the same, and the weights
they end with are those of Adam's bias-corrected update computed here in numpy, step by step.

Both variants share the line that builds the optimizer, so their == alone would not notice an optimizer
that is not the one the config names. The network is one Dense layer with weights written here, the data
one batch of a CSV written here, the loss MSE: the gradient is X^T (X w + b - y) x 2 / N, which numpy
computes without MindSpore. nn.AdamWeightDecay (bias_correction false) moves each weight about 3.2 times
as far at step 1 ((1 - beta1) / sqrt(1 - beta2)), so it fails this comparison at any tolerance used here.
"""

from __future__ import annotations

import numpy as np
import pytest

from mscodegen.run.parity import SAVE_WEIGHTS, WEIGHTS_NAME, generate_both, run_script

from conftest import assert_identical, write_yaml

pytestmark = pytest.mark.slow

FEATURES = 3
ROWS = 8
LR, BETA1, BETA2, EPS, WEIGHT_DECAY = 0.01, 0.9, 0.999, 1e-8, 0.1
STEPS = 3

NETWORK = f'''
import numpy as np
from mindspore import Tensor, nn


def build():
    """One Dense layer whose starting weights the test knows."""
    rng = np.random.default_rng(5)
    weight = Tensor(rng.normal(size=(1, {FEATURES})).astype(np.float32))
    bias = Tensor(np.array([0.25], np.float32))
    return nn.Dense({FEATURES}, 1, weight_init=weight, bias_init=bias)
'''


def table() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(6)
    x = rng.normal(size=(ROWS, FEATURES)).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5], np.float32) + 0.3).astype(np.float32)
    return x, y


def adamw_by_hand(steps: int) -> dict[str, np.ndarray]:
    """Adam with bias correction and decoupled weight decay, as mindcv's AdamW writes it:
    w -= lr x (m / (1 - beta1 ** t) / (eps + sqrt(v / (1 - beta2 ** t))) + weight_decay x w), in float64."""
    rng = np.random.default_rng(5)
    w = rng.normal(size=(1, FEATURES)).astype(np.float32).astype(np.float64)
    b = np.array([0.25])
    x, y = (a.astype(np.float64) for a in table())
    params = {"weight": w, "bias": b}
    m = {name: np.zeros_like(value) for name, value in params.items()}  # first moments
    v = {name: np.zeros_like(value) for name, value in params.items()}  # second moments
    for t in range(1, steps + 1):
        error = x @ params["weight"][0] + params["bias"][0] - y  # (ROWS,)
        grads = {"weight": (2 / ROWS * error @ x)[None, :], "bias": np.array([2 / ROWS * error.sum()])}
        for k, g in grads.items():
            m[k] = BETA1 * m[k] + (1 - BETA1) * g
            v[k] = BETA2 * v[k] + (1 - BETA2) * g * g
            m_hat, v_hat = m[k] / (1 - BETA1**t), v[k] / (1 - BETA2**t)
            params[k] = params[k] - LR * (m_hat / (EPS + np.sqrt(v_hat)) + WEIGHT_DECAY * params[k])
    return params


def test_adamw_bias_correction_is_adam_by_hand(tmp_path):
    import mindspore as ms

    x, y = table()
    rows = [",".join(["f0", "f1", "f2", "y"])]
    rows += [
        ",".join(f"{value:.9g}" for value in (*features, target))
        for features, target in zip(x, y, strict=True)
    ]
    (tmp_path / "table.csv").write_text("\n".join(rows) + "\n")
    (tmp_path / "dense_net.py").write_text(NETWORK)
    config = write_yaml(
        tmp_path,
        "adamw",
        {
            "runtime": {"mode": "graph", "seed": 1},
            "network": {"kind": "import", "factory": "dense_net:build"},
            "data": {
                "inputs": ["features"],
                "labels": ["target"],
                "train": {
                    "kind": "csv",
                    "path": "table.csv",
                    "columns": {"features": ["f0", "f1", "f2"], "target": ["y"]},
                    "batch_size": ROWS,
                    "shuffle": False,
                },
            },
            "loss": {"name": "MSELoss"},
            "optimizer": {
                "name": "adamw",
                "lr": LR,
                "eps": EPS,
                "weight_decay": WEIGHT_DECAY,
                "bias_correction": True,
            },
            "train": {"epochs": STEPS, "log_every_steps": 1},
        },
    )
    scripts = generate_both(config, tmp_path / "scripts")
    assert "from mindcv.optim.adamw import AdamW" in scripts["model"].read_text()
    expected = adamw_by_hand(STEPS)
    runs = []
    for variant, script in scripts.items():
        weights = tmp_path / variant / WEIGHTS_NAME
        result = run_script(
            script, tmp_path / variant, variant=variant, extra_args=(SAVE_WEIGHTS, str(weights))
        )
        assert result.returncode == 0, result.log_tail
        runs.append(result)
        trained = {
            name.rsplit(".", 1)[-1]: p.asnumpy() for name, p in ms.load_checkpoint(str(weights)).items()
        }
        for name, value in expected.items():
            np.testing.assert_allclose(
                trained[name], value, rtol=1e-5, atol=1e-7, err_msg=f"{variant} {name}"
            )
    assert_identical(*runs, steps=STEPS)
