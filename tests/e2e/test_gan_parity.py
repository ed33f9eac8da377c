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

from mscodegen.run.parity import SAVE_WEIGHTS, generate_both, run_script, step_differences
from mscodegen.run.resume_parity import run_resume_parity
from mscodegen.run.weights import compare_checkpoints

from conftest import REPO, kept_runs, shipped_parity

pytestmark = pytest.mark.slow

REFERENCE = REPO / "tests" / "reference" / "dcgan_reference.py"
KEYS = {"step", "epoch", "d_loss", "g_loss", "d_lr", "g_lr"}


def _run_both(config: Path, root: Path, steps: int | None = None) -> dict:
    scripts = generate_both(config, root / "scripts")
    runs = {}
    for variant, script in scripts.items():
        weights = root / variant / "weights.ckpt"
        result = run_script(
            script, root / variant, variant=variant, max_steps=steps, extra_args=(SAVE_WEIGHTS, str(weights))
        )
        assert result.returncode == 0, f"{variant}:\n{result.log_tail}"
        runs[variant] = result
    return runs


def test_variants_are_equal_step_by_step_with_two_discriminator_updates(tmp_path: Path) -> None:
    """fp32, d_steps 2: 180 digits / (16 x 2) = 5 steps an epoch, 2 epochs; losses, LRs, weights, samples."""
    runs = _run_both(write(tmp_path, {"gan": {"d_steps": 2}}), tmp_path)
    model, native = runs["model"], runs["native"]
    assert len(model.steps) == 10 and set(model.steps[0]) == KEYS
    assert step_differences(model.steps, native.steps) == []
    assert len({r["d_loss"] for r in model.steps}) > 1 and len({r["g_loss"] for r in model.steps}) > 1
    assert (
        compare_checkpoints(tmp_path / "model" / "weights.ckpt", tmp_path / "native" / "weights.ckpt") == []
    )
    for epoch in (1, 2):  # the fixed latent batch through the generator: the same picture
        png = Path("samples") / f"epoch_{epoch:03d}.png"
        assert (model.output_dir / png).read_bytes() == (native.output_dir / png).read_bytes()
        assert (model.output_dir / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        for result in (model, native):  # the console says where the grid went (issue 30)
            log = (result.output_dir.parent / "stdout.txt").read_text()
            assert f"sample grid: {(result.output_dir / png).resolve()}" in log


def test_resume_equals_uninterrupted_with_a_loss_scale_per_network(tmp_path: Path) -> None:
    """amp O2 with a dynamic loss scale per network (state in the checkpoints); stopped at step 4 of 8
    (11 steps an epoch) and resumed from the checkpoint the stopped run wrote, in both variants; the
    whole runs of the two variants are equal too."""
    config = write(
        tmp_path,
        {
            "amp": {"level": "O2"},
            "loss_scale": {"kind": "dynamic", "init": 1024, "factor": 2, "window": 2},
            "callbacks": {"checkpoint": {"every_steps": 3, "keep_max": 2}},
        },
    )
    keep = tmp_path / "runs"
    assert run_resume_parity(config, resume_at=4, steps=8, keep=keep) == 0
    logs = {
        variant: [
            json.loads(line) for line in (keep / variant / "whole" / "loss.jsonl").read_text().splitlines()
        ]
        for variant in ("model", "native")
    }
    # the scales as each variant prints them in its loss line (an overflow shows as a halved scale)
    assert len(logs["model"]) == 8 and {"d_loss_scale", "g_loss_scale"} <= set(logs["model"][0])
    assert step_differences(logs["model"], logs["native"]) == []
    assert compare_checkpoints(keep / "model" / "whole.ckpt", keep / "native" / "whole.ckpt") == []


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
