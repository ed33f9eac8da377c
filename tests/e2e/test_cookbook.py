"""The cookbook (docs/cookbook/): every config is on a page, validates, and passes parity as a user runs it.

The pages include their configs with `--8<--`, so what the site shows is what these tests run. Parity runs
both generated scripts for a few steps and compares every step's loss and the final weights (`mscodegen
parity`, exit 0 when equal); each run costs seconds of process start and graph compilation, so the steps
are few. Commands run as subprocesses (`python -m mscodegen`), as a user types them.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

COOKBOOK = REPO / "docs" / "cookbook"
CONFIGS = sorted(COOKBOOK.rglob("*.yaml"))
# Arguments of `mscodegen parity` per config; the others run DEFAULT_STEPS steps.
DEFAULT_STEPS = ["--steps", "5"]
PARITY = {
    "early_stopping.yaml": ["--steps", "440"],  # an upper bound: early stopping ends the run (at 33)
    "resume.yaml": ["--steps", "6", "--resume-at", "3"],  # whole, then stopped at 3 and resumed
}
# The data-parallel page shows examples/lenet_dp.yaml (no config of its own here): its parity under msrun is
# test_examples_as_shipped's, one run of the dearest kind (2 msrun jobs) instead of two.
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
    proc = _mscodegen("parity", config, *PARITY.get(config.name, DEFAULT_STEPS), *extra)
    assert proc.returncode == 0, _explain(proc)
    assert "identical" in proc.stdout.splitlines()[-1], _explain(proc)
    if "--resume-at" not in PARITY.get(config.name, []):  # resume parity compares them without saying so
        assert "final weights equal" in proc.stdout.splitlines()[-1], _explain(proc)  # under msrun too
