"""Two networks, run for real: both GAN variants ==, resume == uninterrupted, and a hand-written reference.

Small on purpose (16x16 digits, 8 features): a run is MindSpore's import and compile plus a few steps.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_gan import write

from mscodegen.run.parity import step_differences
from mscodegen.run.resume_parity import run_resume_parity
from mscodegen.run.weights import compare_checkpoints

from conftest import REPO, kept_runs, shipped_parity

pytestmark = pytest.mark.slow

REFERENCE = REPO / "tests" / "reference" / "dcgan_reference.py"
KEYS = {"step", "epoch", "d_loss", "g_loss", "d_lr", "g_lr"}


def test_variants_are_equal_and_resume_equals_uninterrupted(tmp_path: Path) -> None:
    """amp O2 with a dynamic loss scale per network (state in the checkpoints) and two discriminator updates a
    step: 180 digits / (16 x 2) = 5 steps an epoch, 2 epochs. In both variants, a run stopped at step 4 and
    resumed from the checkpoint it wrote equals the whole run (the resumed run crosses the epoch boundary);
    the whole runs of the two variants are equal: losses, LRs and loss scales step by step, final weights,
    and each epoch's sample grid. One set of runs for both facts (they were two tests, one of them fp32: the
    GAN's fp32 parity is the dcgan_digits example's, test_native_equals_the_hand_written_reference)."""
    config = write(
        tmp_path,
        {
            "gan": {"d_steps": 2},
            "amp": {"level": "O2"},
            "loss_scale": {"kind": "dynamic", "init": 1024, "factor": 2, "window": 2},
            "callbacks": {"checkpoint": {"every_steps": 3, "keep_max": 2}},
        },
    )
    keep = tmp_path / "runs"
    assert run_resume_parity(config, resume_at=4, steps=10, keep=keep) == 0
    whole = {variant: keep / variant / "whole" for variant in ("model", "native")}
    logs = {
        variant: [json.loads(line) for line in (folder / "loss.jsonl").read_text().splitlines()]
        for variant, folder in whole.items()
    }
    # the scales as each variant prints them in its loss line (an overflow shows as a halved scale)
    assert len(logs["model"]) == 10 and set(logs["model"][0]) == KEYS | {"d_loss_scale", "g_loss_scale"}
    assert step_differences(logs["model"], logs["native"]) == []
    assert len({r["d_loss"] for r in logs["model"]}) > 1 and len({r["g_loss"] for r in logs["model"]}) > 1
    assert compare_checkpoints(keep / "model" / "whole.ckpt", keep / "native" / "whole.ckpt") == []
    for epoch in (1, 2):  # the fixed latent batch through the generator: the same picture
        png = Path("samples") / f"epoch_{epoch:03d}.png"
        model, native = (whole[variant] / "output" / png for variant in ("model", "native"))
        assert model.read_bytes() == native.read_bytes()
        assert model.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        for variant, folder in whole.items():  # the console says where the grid went (issue 30)
            grid = folder / "output" / png
            assert f"sample grid: {grid.resolve()}" in (folder / "stdout.txt").read_text(), variant


def test_native_equals_the_hand_written_reference_for_10_steps(checkout: Path, tmp_path: Path) -> None:
    """examples/dcgan_digits' native script against tests/reference/dcgan_reference.py; its run is the
    example's parity run as shipped (both variants ==, final weights equal; test_golden: the scripts are
    generated/'s)."""
    shipped_parity(checkout, "dcgan_digits", "--steps", "10", "--keep", str(tmp_path / "kept"))
    _, result = kept_runs(tmp_path / "kept")
    log = tmp_path / "reference.jsonl"
    subprocess.run(
        [sys.executable, str(REFERENCE), "--steps", "10", "--loss-log", str(log)],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        timeout=600,
    )
    reference = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(reference) == 10
    ours = [{k: r[k] for k in ("step", "epoch", "d_loss", "g_loss")} for r in result.steps]
    assert ours == reference
