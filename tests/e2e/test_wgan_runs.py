"""The WGAN recipes' independent checks (docs/cookbook/wgan.yaml, wgan_gp.yaml).

Weight clipping: the recipe's parity run (both variants ==) also writes a checkpoint after every step;
in each, every trainable weight of the critic lies in [-c, c] and some sit on the bound. A clamp before
the update, or none, leaves weights past c (RMSProp moves them ~1e-4 a step).
The gradient penalty: the generated critic loss, on fixed critics whose penalty has a closed form,
against numpy: its value and its gradient with respect to the critic's weights (the gradient of a
gradient). Test_cookbook's parity run covers wgan_gp.yaml's two variants.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from mscodegen.config.load import load_config
from mscodegen.output.generate import generate

from conftest import REPO, import_script

pytestmark = pytest.mark.slow

COOKBOOK = REPO / "docs" / "cookbook"
STEPS = 2
# BatchNorm's running statistics are state, not trainable weights: WGAN clips the weights only
STATE = ("moving_mean", "moving_variance")


def test_wgan_parity_and_the_critics_weights_within_the_clip_after_every_step(tmp_path: Path) -> None:
    recipe = COOKBOOK / "wgan.yaml"
    c = yaml.safe_load(recipe.read_text())["gan"]["discriminator"]["clip_weights"]
    keep = tmp_path / "kept"
    every_step = f"callbacks.checkpoint={{every_steps: 1, keep_max: {STEPS}}}"
    args = ["parity", recipe, "--steps", str(STEPS), "--keep", keep, "--set", every_step]
    done = subprocess.run(
        [sys.executable, "-m", "mscodegen", *map(str, args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"identical: {STEPS} steps, final weights equal" in done.stdout, done.stdout[-2000:]

    import mindspore as ms

    for variant in ("model", "native"):
        checkpoints = sorted((keep / variant / "output" / "checkpoints").glob("*/*.ckpt"))
        assert [p.stem.rsplit("_", 1)[1] for p in checkpoints] == [str(s) for s in range(1, STEPS + 1)]
        for path in checkpoints:
            weights = {
                name: param.asnumpy()
                for name, param in ms.load_checkpoint(str(path)).items()
                if name.startswith("discriminator.") and not name.endswith(STATE)
            }
            assert len(weights) >= 4, (path, sorted(weights))  # 3 convolutions and BatchNorms, a Dense
            largest = max(float(np.abs(w).max()) for w in weights.values())
            assert largest <= c, (path, largest)
            on_bound = sum(int(np.count_nonzero(np.abs(w) == np.float32(c))) for w in weights.values())
            assert on_bound > 0, path  # the clamp acted: N(0, 0.02) weights and gamma ~1 start past c


def _critic_loss_module(tmp_path: Path):
    """train_native.py of wgan_gp.yaml, generated here and imported (its DiscriminatorLoss, GP_WEIGHT)."""
    loaded = load_config(COOKBOOK / "wgan_gp.yaml")
    files = generate(loaded, tmp_path / "scripts")
    path = tmp_path / "train_native.py"
    path.write_text(files["train_native.py"])
    module = import_script(path, "wgan_gp_train_native")
    return module


def test_the_gradient_penalty_and_its_weight_gradient_equal_a_hand_computation(tmp_path: Path) -> None:
    module = _critic_loss_module(tmp_path)
    import mindspore as ms
    from mindspore import nn, ops

    class Linear(nn.Cell):  # D(x) = <w, x>: its gradient is w at every x
        def __init__(self, w: np.ndarray) -> None:
            super().__init__()
            self.w = ms.Parameter(ms.Tensor(w), name="w")

        def construct(self, image):
            return ops.matmul(ops.flatten(image), self.w)

    class Quadratic(nn.Cell):  # D(x) = a ||x||^2 / 2: its gradient is a x, so the point matters
        def __init__(self, a: float) -> None:
            super().__init__()
            self.a = ms.Parameter(ms.Tensor(np.float32(a)), name="a")

        def construct(self, image):
            return 0.5 * self.a * ops.sum(ops.square(ops.flatten(image)), 1, keepdim=True)

    rng = np.random.default_rng(0)
    real, fake = (rng.standard_normal((3, 1, 4, 4)).astype(np.float32) for _ in range(2))
    mix = rng.uniform(size=(3, 1, 1, 1)).astype(np.float32)
    lam = float(module.GP_WEIGHT)
    r64, f64, m64 = (x.astype(np.float64).reshape(3, -1) for x in (real, fake, mix))
    w = (rng.standard_normal((16, 1)) * 0.4).astype(np.float32)
    w64 = w.astype(np.float64)
    norm = np.linalg.norm(w64)
    a = 0.3
    between = m64 * r64 + (1 - m64) * f64  # the penalty's points, per image
    radius = np.linalg.norm(between, axis=1)
    s_real, s_fake = (np.sum(x**2, axis=1) for x in (r64, f64))
    expected = {
        "linear": (
            np.mean(f64 @ w64) - np.mean(r64 @ w64) + lam * (norm - 1) ** 2,
            (f64.mean(0) - r64.mean(0))[:, None] + 2 * lam * (norm - 1) * w64 / norm,
        ),
        "quadratic": (
            0.5 * a * (s_fake.mean() - s_real.mean()) + lam * np.mean((a * radius - 1) ** 2),
            0.5 * (s_fake.mean() - s_real.mean()) + lam * np.mean(2 * (a * radius - 1) * radius),
        ),
    }
    mode = ms.get_context("mode")
    ms.set_context(mode=ms.GRAPH_MODE)  # as the scripts run (PyNative: refused by validate)
    try:
        for name, critic in (("linear", Linear(w)), ("quadratic", Quadratic(a))):
            grad_fn = ms.value_and_grad(module.DiscriminatorLoss(critic), None, critic.trainable_params())
            loss, (grad,) = grad_fn(*(ms.Tensor(x) for x in (real, fake, mix)))
            want_loss, want_grad = expected[name]
            np.testing.assert_allclose(float(loss), want_loss, rtol=2e-5, err_msg=name)
            np.testing.assert_allclose(grad.asnumpy(), want_grad, rtol=2e-4, atol=1e-6, err_msg=name)
    finally:
        ms.set_context(mode=mode)
        del sys.modules[module.__name__]
