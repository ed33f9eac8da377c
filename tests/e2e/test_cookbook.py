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

import numpy as np
import pytest

from conftest import REPO

COOKBOOK = REPO / "docs" / "cookbook"
CONFIGS = sorted(COOKBOOK.rglob("*.yaml"))
# Arguments of `mscodegen parity` per config; the others run DEFAULT_STEPS steps.
DEFAULT_STEPS = ["--steps", "5"]
PARITY = {
    "early_stopping.yaml": ["--steps", "440"],  # an upper bound: early stopping ends the run (at 33)
    "resume.yaml": ["--steps", "6", "--resume-at", "3"],  # whole, then stopped at 3 and resumed
    "data_parallel.yaml": ["--steps", "4"],  # under msrun, 2 workers: the dearest run
}
# finetune.yaml loads the weights pretrain_digits.yaml's script saves (see its page).
PRETRAIN, FINETUNE = COOKBOOK / "pretrain_digits.yaml", COOKBOOK / "finetune.yaml"
CHECKPOINT_KEY = "network.checkpoint.path"


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
    others = [c for c in CONFIGS if c != FINETUNE]
    proc = _mscodegen("validate", *others)
    assert proc.returncode == 0, _explain(proc)
    assert proc.stdout.splitlines() == [f"{c}: ok" for c in others]
    # validate checks that the checkpoint file exists; the fast suite has none, so a stand-in
    stand_in = tmp_path / "weights.ckpt"
    stand_in.write_bytes(b"")
    proc = _mscodegen("validate", FINETUNE, "--set", f"{CHECKPOINT_KEY}={stand_in}")
    assert proc.returncode == 0, _explain(proc)


def _last_evaluation(keep: Path) -> dict[str, float]:
    lines = (keep / "model" / "eval.jsonl").read_text().splitlines()
    return json.loads(lines[-1])["metrics"]


def _saved_weights(path: Path) -> dict[str, np.ndarray]:
    import mindspore as ms

    return {name: param.asnumpy() for name, param in ms.load_checkpoint(str(path)).items()}


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


# Independent checks of what parity cannot see (both variants share the cell), on the model variant's kept run.
CHECKS: dict[str, Callable[[Path], None]] = {"autoencoder.yaml": _check_autoencoder}


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS, ids=lambda path: path.stem)
def test_parity(config: Path, tmp_path):
    extra: list[str | Path] = []
    if config == FINETUNE:  # the page's first step: pretrain, save the weights
        proc = _mscodegen("new", PRETRAIN, "--out", tmp_path / "pretrain")
        assert proc.returncode == 0, _explain(proc)
        weights = tmp_path / "lenet5_digits.ckpt"
        run = subprocess.run(
            [sys.executable, "train_model.py", "--max-steps", "3", "--save-weights", str(weights)],
            cwd=tmp_path / "pretrain",
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert run.returncode == 0 and weights.is_file(), _explain(run)
        extra = ["--set", f"{CHECKPOINT_KEY}={weights}"]
    if config.name in CHECKS:
        extra += ["--keep", tmp_path / "keep"]
    proc = _mscodegen("parity", config, *PARITY.get(config.name, DEFAULT_STEPS), *extra)
    assert proc.returncode == 0, _explain(proc)
    lines = [line for line in proc.stdout.splitlines() if not line.startswith("scripts, logs")]  # --keep's
    assert "identical" in lines[-1], _explain(proc)
    if "--resume-at" not in PARITY.get(config.name, []):  # resume parity compares them without saying so
        assert "final weights equal" in lines[-1], _explain(proc)  # under msrun too
    if config.name in CHECKS:
        CHECKS[config.name](tmp_path / "keep")
