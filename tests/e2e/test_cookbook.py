"""The cookbook (docs/cookbook/): every config is on a page, validates, and passes parity as a user runs it.

The pages include their configs with `--8<--`, so what the site shows is what these tests run. Parity runs
both generated scripts for a few steps and compares every step's loss and the final weights (`mscodegen
parity`, exit 0 when equal); each run costs seconds of process start and graph compilation, so the steps
are few. Commands run as subprocesses (`python -m mscodegen`), as a user types them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import REPO, import_script, once_per_session

COOKBOOK = REPO / "docs" / "cookbook"
CONFIGS = sorted(COOKBOOK.rglob("*.yaml"))
# Arguments of `mscodegen parity` per config; the others run DEFAULT_STEPS steps.
DEFAULT_STEPS = ["--steps", "5"]
PARITY = {
    "early_stopping.yaml": ["--steps", "440"],  # an upper bound: early stopping ends the run (at 33)
    "resume.yaml": ["--steps", "6", "--resume-at", "3"],  # whole, then stopped at 3 and resumed
    "eval_every_steps.yaml": ["--steps", "12"],  # evaluations after steps 10 and 12
    # the resumable checkpoint holds the whole train network, the teacher too: _check_distillation reads it
    "distillation.yaml": ["--steps", "5", "--set", "callbacks.checkpoint={every_steps: 5, keep_max: 1}"],
    "freeze_unfreeze.yaml": ["--steps", "13"],  # 11 steps frozen (epoch 1), 2 after the unfreeze
    "wgan_gp.yaml": ["--steps", "2"],  # a step: 5 critic updates, each a gradient of a gradient
}
# The data-parallel page shows examples/lenet_dp.yaml (no config of its own here): its parity under msrun is
# test_examples_as_shipped's, one run of the dearest kind (2 msrun jobs) instead of two.
# Configs whose own test runs this parity (with --keep) and checks what it kept: one run feeds both.
OWN_TEST = {"wgan.yaml": "test_wgan_runs.py"}
# finetune.yaml and distillation.yaml (its teacher) load the weights pretrain_digits.yaml's script saves
# (see their pages): the key each reads them from.
PRETRAIN = COOKBOOK / "pretrain_digits.yaml"
FINETUNE, DISTILLATION = COOKBOOK / "finetune.yaml", COOKBOOK / "distillation.yaml"
CHECKPOINT_KEYS = {FINETUNE: "network.checkpoint.path", DISTILLATION: "distill.teacher.checkpoint.path"}


def _mscodegen(*args: str | Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}  # the helper modules' bytecode stays out of docs/
    return subprocess.run(
        [sys.executable, "-m", "mscodegen", *map(str, args)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _explain(proc: subprocess.CompletedProcess[str]) -> str:
    return f"$ {' '.join(proc.args)}\nexit {proc.returncode}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"


def test_every_config_is_on_a_page():
    assert len(CONFIGS) >= 11, f"cookbook configs found: {CONFIGS}"
    pages = {page: page.read_text(encoding="utf-8") for page in COOKBOOK.glob("*.md")}
    included = {
        REPO / path
        for text in pages.values()
        for path in re.findall(r'^--8<-- "([^"]+)"$', text, re.MULTILINE)
    }
    assert [c.relative_to(REPO).as_posix() for c in CONFIGS if c not in included] == [], (
        'every cookbook config is shown on its page with --8<-- "docs/cookbook/NAME.yaml"'
    )


def test_every_config_validates(tmp_path):
    others = [c for c in CONFIGS if c not in CHECKPOINT_KEYS]
    proc = _mscodegen("validate", *others)
    assert proc.returncode == 0, _explain(proc)
    assert proc.stdout.splitlines() == [f"{c}: ok" for c in others]
    # validate checks that the checkpoint file exists; the fast suite has none, so a stand-in
    stand_in = tmp_path / "weights.ckpt"
    stand_in.write_bytes(b"")
    for config, key in CHECKPOINT_KEYS.items():
        proc = _mscodegen("validate", config, "--set", f"{key}={stand_in}")
        assert proc.returncode == 0, _explain(proc)


def _pretrain(folder: Path) -> dict[str, Path]:
    """The pages' first step: pretrain_digits.yaml's script, a few steps, its weights saved."""
    proc = _mscodegen("new", PRETRAIN, "--out", folder / "pretrain")
    assert proc.returncode == 0, _explain(proc)
    weights = folder / "lenet5_digits.ckpt"
    run = subprocess.run(
        [sys.executable, "train_model.py", "--max-steps", "3", "--save-weights", str(weights)],
        cwd=folder / "pretrain",
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0 and weights.is_file(), _explain(run)
    return {"weights": weights}


@pytest.fixture(scope="session")
def pretrained_digits(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """pretrain_digits.yaml's weights, trained once per session (finetune and distillation start from them)."""
    return once_per_session(request, tmp_path_factory, "pretrained_digits", _pretrain, str, Path)["weights"]


def _last_evaluation(keep: Path) -> dict[str, float]:
    lines = (keep / "model" / "eval.jsonl").read_text().splitlines()
    return json.loads(lines[-1])["metrics"]


def _saved_weights(path: Path) -> dict[str, np.ndarray]:
    import mindspore as ms

    saved = ms.load_checkpoint(str(path))
    return {
        name: value.asnumpy() for name, value in saved.items() if isinstance(value, ms.Tensor)
    }  # not its info


def _check_autoencoder(keep: Path) -> None:
    """The last evaluation's pixel_mse and loss are numpy's: the saved network on the test split, with the
    image as the target (the digits' labels would give other numbers)."""
    from sklearn.datasets import load_digits

    w = {k: v.astype(np.float64) for k, v in _saved_weights(keep / "model" / "weights.ckpt").items()}
    images = (load_digits().images / 16.0).astype(np.float32).reshape(-1, 64).astype(np.float64)
    test = images[len(images) - int(len(images) * 0.2) :]
    code = np.maximum(test @ w["encoder.weight"].T + w["encoder.bias"], 0)
    squared = (code @ w["decoder.weight"].T + w["decoder.bias"] - test) ** 2
    batch_losses = [squared[i : i + 64].mean() for i in range(0, len(test), 64)]  # eval batch_size 64
    evaluation = _last_evaluation(keep)
    assert evaluation["pixel_mse"] == pytest.approx(squared.mean(), rel=1e-5)
    assert evaluation["loss"] == pytest.approx(np.mean(batch_losses), rel=1e-5)


def _check_distillation(keep: Path, teacher_file: Path) -> None:
    """The teacher trained nothing: its weights in each variant's last checkpoint (which holds the train
    network) are the file's, bit for bit, and no optimizer state names them; the student's saved weights
    hold no teacher. And the loss on a fixed batch is numpy's formula of both networks' logits."""
    teacher = _saved_weights(teacher_file)
    for variant in ("model", "native"):
        (checkpoint,) = (keep / variant).glob("output/checkpoints/*/*.ckpt")
        saved = _saved_weights(checkpoint)
        held = {name.removeprefix("teacher."): v for name, v in saved.items() if name.startswith("teacher.")}
        assert held.keys() == teacher.keys()
        for name, value in teacher.items():
            assert held[name].dtype == value.dtype and held[name].tobytes() == value.tobytes(), name
        assert [n for n in saved if "teacher" in n and not n.startswith("teacher.")] == []  # no moments
        assert not any("teacher" in name for name in _saved_weights(keep / variant / "weights.ckpt"))
    _check_distillation_loss(keep / "scripts" / "train_model.py", keep / "model" / "weights.ckpt")


def _check_distillation_loss(script: Path, student_file: Path) -> None:
    """WithDistillLoss of the generated script on the first test batch, against numpy in float64:
    alpha * T^2 * mean over samples of sum_c p_t (log p_t - log p_s) + (1 - alpha) * CE(student, label),
    p = softmax(logits / T) of the teacher (t) and the student (s)."""

    import mindspore as ms

    mod = import_script(script, "distillation_script")
    mode = ms.get_context("mode")
    ms.set_context(mode=ms.PYNATIVE_MODE)  # one call of each cell: nothing to compile
    try:
        _compare_distillation_loss(mod, student_file)
    finally:
        ms.set_context(mode=mode)


def _compare_distillation_loss(mod: Any, student_file: Path) -> None:
    import mindspore as ms
    from mindspore import nn

    student = mod.MLP(num_classes=10, in_features=1024)
    ms.load_param_into_net(student, ms.load_checkpoint(str(student_file)), strict_load=True)
    teacher = mod.load_teacher()
    cell = mod.WithDistillLoss(
        student, teacher, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    )
    nn.TrainOneStepCell(cell, nn.SGD(student.trainable_params())).set_train()  # what Model does to it
    assert student.training and not teacher.training  # the teacher evaluates, whatever set_train says
    image, label = next(mod.create_dataset("test", 32, False, False).create_tuple_iterator())
    loss = float(cell(image, label))
    s, t = (net(image).asnumpy().astype(np.float64) for net in (student, teacher))
    temperature, alpha = mod.DISTILL_TEMPERATURE, mod.DISTILL_ALPHA

    def log_softmax(x: np.ndarray) -> np.ndarray:
        x = x - x.max(axis=1, keepdims=True)
        return x - np.log(np.exp(x).sum(axis=1, keepdims=True))

    log_pt, log_ps = log_softmax(t / temperature), log_softmax(s / temperature)
    kl = (np.exp(log_pt) * (log_pt - log_ps)).sum(axis=1).mean()
    cross_entropy = -log_softmax(s)[np.arange(len(s)), label.asnumpy()].mean()
    # float32 rounds each class's p_t (log p_t - log p_s), terms of about log 10, summed to a KL of a few
    # thousandths, and T^2 multiplies it: 1e-4 absolute. A wrong formula (no T^2, reduction "mean" for
    # "batchmean", alpha and 1 - alpha swapped) moves the loss by more than the soft term's 1e-2.
    soft = alpha * temperature**2 * kl
    assert soft > 1e-2 and 0.0 < alpha < 1.0  # both terms count
    assert loss == pytest.approx(soft + (1 - alpha) * cross_entropy, abs=1e-4)


# Independent checks of what parity cannot see (both variants share the cell), on the kept runs.
CHECKS: dict[str, Callable[..., None]] = {
    "autoencoder.yaml": _check_autoencoder,
    "distillation.yaml": _check_distillation,
}


def test_the_configs_left_to_their_own_tests_run_parity_there():
    for config, test in OWN_TEST.items():
        text = (Path(__file__).parent / test).read_text(encoding="utf-8")
        assert f'COOKBOOK / "{config}"' in text and '"parity", recipe' in text, (config, test)


@pytest.mark.slow
@pytest.mark.parametrize("config", [c for c in CONFIGS if c.name not in OWN_TEST], ids=lambda path: path.stem)
def test_parity(config: Path, tmp_path, request: pytest.FixtureRequest):
    extra: list[str | Path] = []
    if config in CHECKPOINT_KEYS:  # the page's first step: pretrain, save the weights
        weights = request.getfixturevalue("pretrained_digits")
        extra = ["--set", f"{CHECKPOINT_KEYS[config]}={weights}"]
    if config.name in CHECKS:
        extra += ["--keep", tmp_path / "keep"]
    proc = _mscodegen("parity", config, *PARITY.get(config.name, DEFAULT_STEPS), *extra)
    assert proc.returncode == 0, _explain(proc)
    lines = [line for line in proc.stdout.splitlines() if not line.startswith("scripts, logs")]  # --keep's
    assert "identical" in lines[-1], _explain(proc)
    if "--resume-at" not in PARITY.get(config.name, []):  # resume parity compares them without saying so
        assert "final weights equal" in lines[-1], _explain(proc)  # under msrun too
    if config.name in CHECKS:
        CHECKS[config.name](tmp_path / "keep", *((weights,) if config in CHECKPOINT_KEYS else ()))
