"""--resume: a run stopped after step k (mid-epoch, inside an accumulation window) and resumed equals
the uninterrupted run, in both variants, with shuffle, dynamic loss scaling and accumulation; atomic
resume checkpoints; a checkpoint from another config is refused; parity --resume-at's exit codes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import mindspore as ms
import pytest

from mscodegen.parity import generate_both, run_script
from mscodegen.resume_parity import run_resume_parity

from conftest import TINY

# 48 samples / batch 8 = 6 steps per epoch, shuffled (data.train's default), 3 epochs = 18 steps.
# Adam (moments), a cosine LR list (its position is global_step), dynamic loss scaling growing every
# 3 steps (the scale and its counter), one optimizer update per 2 batches (buffers and micro_step).
RESUME: dict = {
    "data": {"train": {"shuffle": True}},
    "optimizer": {"name": "adam", "lr": 0.05},
    "lr_schedule": {"kind": "cosine", "min_lr": 0.001},
    "loss_scale": {"kind": "dynamic", "init": 1024, "factor": 2, "window": 3},
    "grad": {"accumulation_steps": 2},
    "train": {"epochs": 3},
}
STOP_AT = 7  # epoch 2, batch 1: mid-epoch, mid accumulation window, loss-scale counter at 1


def _weights(path: Path) -> dict:
    return {name: param.asnumpy() for name, param in ms.load_checkpoint(str(path)).items()}


def _stop_and_resume(
    script: Path, variant: str, root: Path, stop_at: int
) -> tuple[list, list, list, Path, Path]:
    """(whole run's steps, stopped run's, resumed run's, whole weights, resumed weights)."""
    out = root / "resumed-output"
    whole = run_script(
        script, root / "whole", variant=variant, extra_args=("--save-weights", str(root / "whole.ckpt"))
    )
    assert whole.returncode == 0, whole.log_tail
    stopped = run_script(
        script, root / "stopped", variant=variant, max_steps=stop_at, extra_args=("--output-dir", str(out))
    )
    assert stopped.returncode == 0, stopped.log_tail
    resumed = run_script(
        script,
        root / "resumed",
        variant=variant,
        extra_args=(
            "--output-dir",
            str(out),
            "--resume",
            "latest",
            "--save-weights",
            str(root / "resumed.ckpt"),
        ),
    )
    assert resumed.returncode == 0, resumed.log_tail
    return whole.steps, stopped.steps, resumed.steps, root / "whole.ckpt", root / "resumed.ckpt"


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["model", "native"])
def test_resume_mid_epoch_equals_uninterrupted_run(variant, write_config, tmp_path) -> None:
    scripts = generate_both(write_config(RESUME), tmp_path / "scripts")
    whole, stopped, resumed, whole_w, resumed_w = _stop_and_resume(
        scripts[variant], variant, tmp_path, STOP_AT
    )
    assert len(whole) == 18
    assert stopped == whole[:STOP_AT]
    assert resumed[0]["step"] == STOP_AT + 1 and resumed[0]["epoch"] == 2
    assert resumed == whole[STOP_AT:]  # loss, lr, loss_scale, overflow, step and epoch, all ==
    # the state the tail depends on really changes across it: otherwise equality proves little
    assert len({r["loss_scale"] for r in resumed}) > 1
    assert len({r["lr"] for r in resumed}) > 1
    a, b = _weights(whole_w), _weights(resumed_w)
    assert sorted(a) == sorted(b)
    assert all((a[name] == b[name]).all() for name in a)


@pytest.mark.slow
def test_latest_skips_partial_and_truncated_files(write_config, tmp_path) -> None:
    script = generate_both(write_config(RESUME), tmp_path / "scripts")["native"]
    out = tmp_path / "out"
    whole = run_script(script, tmp_path / "whole", variant="native")
    stopped = run_script(
        script, tmp_path / "stopped", variant="native", max_steps=5, extra_args=("--output-dir", str(out))
    )
    assert stopped.returncode == 0, stopped.log_tail
    directory = out / "checkpoints" / "resume"
    saved = directory / "resume-5.ckpt"
    assert [p.name for p in directory.iterdir()] == ["resume-5.ckpt"]  # no temporary file left behind
    # what a kill during a save leaves (the temporary file), and a truncated file with a newer step
    (directory / ".partial-resume-9.ckpt").write_bytes(saved.read_bytes()[:100])
    (directory / "resume-8.ckpt").write_bytes(saved.read_bytes()[: saved.stat().st_size // 2])
    resumed = run_script(
        script,
        tmp_path / "resumed",
        variant="native",
        extra_args=("--output-dir", str(out), "--resume", "latest"),
    )
    assert resumed.returncode == 0, resumed.log_tail
    log = (tmp_path / "resumed" / "stdout.txt").read_text()
    assert "skipping" in log and "resume-8.ckpt" in log
    assert f"resumed from {saved}" in log
    assert resumed.steps == whole.steps[5:]


def test_save_is_atomic_in_both_variants(write_config, tmp_path) -> None:
    """The save writes a temporary name that `latest` never globs, then os.replace()s it."""
    for script in generate_both(write_config(RESUME), tmp_path / "scripts").values():
        text = script.read_text()
        assert 'partial = directory / f".partial-resume-{step}.ckpt"' in text
        assert "os.replace(partial, path)" in text
        assert 'directory.glob("resume-*.ckpt")' in text


@pytest.mark.slow
@pytest.mark.parametrize(
    ("other", "named"),
    [
        ({"network": {"hidden": [12]}}, "parameter"),  # another network: shapes differ
        ({"optimizer": {"name": "momentum", "lr": 0.05}}, "parameter"),  # another optimizer: moments differ
    ],
)
def test_checkpoint_from_another_config_is_refused(other, named, write_config, tmp_path) -> None:
    first = generate_both(write_config(RESUME, name="first"), tmp_path / "first")["native"]
    out = tmp_path / "out"
    assert (
        run_script(
            first, tmp_path / "a", variant="native", max_steps=2, extra_args=("--output-dir", str(out))
        ).returncode
        == 0
    )
    second = generate_both(write_config({**RESUME, **other}, name="second"), tmp_path / "second")
    for variant, script in second.items():
        proc = subprocess.run(
            [
                sys.executable,
                str(script),
                "--output-dir",
                str(out),
                "--resume",
                "latest",
                "--loss-log",
                str(tmp_path / f"{variant}.jsonl"),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert proc.returncode != 0
        message = proc.stderr.strip().splitlines()[-1]
        assert message.startswith("error: --resume") and named in message and "'" in message, message
        assert not (tmp_path / f"{variant}.jsonl").exists() or not (tmp_path / f"{variant}.jsonl").read_text()


@pytest.mark.slow
def test_parity_resume_at_exit_codes(write_config, tmp_path) -> None:
    config = write_config(RESUME)
    assert run_resume_parity(config, resume_at=STOP_AT, steps=10, keep=tmp_path / "good") == 0
    # a broken resume (the data position not restored) in scripts on disk is caught: exit 1
    broken = tmp_path / "broken"
    subprocess.run(
        [sys.executable, "-m", "mscodegen", "new", str(config), "--out", str(broken)],
        check=True,
        capture_output=True,
    )
    native = broken / "train_native.py"
    text = native.read_text()
    assert "        skip_batches(iterator, start_epoch, start_step_in_epoch)\n" in text
    native.write_text(
        text.replace("        skip_batches(iterator, start_epoch, start_step_in_epoch)\n", "        pass\n")
    )
    assert run_resume_parity(broken, resume_at=STOP_AT, steps=10, keep=tmp_path / "bad") == 1
    assert run_resume_parity(config, resume_at=10, steps=10) == 2


def test_parity_cli_has_resume_at() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mscodegen", "parity", "--help"], capture_output=True, text=True, check=True
    )
    assert "--resume-at" in proc.stdout


AUGMENTED = """
import numpy as np
from mindspore import dataset as ds
from mindspore.dataset import vision


def make_dataset(count):
    rng = np.random.default_rng(0)
    images = rng.standard_normal((count, 8, 8, 1)).astype(np.float32)
    labels = (np.arange(count) % 4).astype(np.int32)
    dataset = ds.NumpySlicesDataset({"image": images, "label": labels}, shuffle=True, num_parallel_workers=1)
    ops = [vision.RandomHorizontalFlip(0.5), vision.RandomVerticalFlip(0.5), vision.HWC2CHW()]
    return dataset.map(ops, input_columns="image", num_parallel_workers=1)
"""


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["model", "native"])
def test_resume_replays_random_augmentations(variant, write_config, tmp_path) -> None:
    """Random transforms: the replayed pipeline (skip_batches) redraws the discarded batches' augmentations,
    so the resumed batches get the uninterrupted run's augmentations (1 worker, seeded)."""
    (tmp_path / "aug_data.py").write_text(AUGMENTED)
    train = {
        "kind": "import",
        "factory": "aug_data:make_dataset",
        "kwargs": {"count": 48},
        "image_shape": [1, 8, 8],
    }
    base = {key: value for key, value in TINY.items() if key != "data"}
    overrides = {**RESUME, "data": {"train": {**train, "batch_size": 8, "shuffle": True}}}
    config = write_config(overrides, base=base)
    scripts = generate_both(config, tmp_path / "scripts")
    whole, stopped, resumed, _, _ = _stop_and_resume(scripts[variant], variant, tmp_path, STOP_AT)
    assert len(whole) == 18
    assert stopped == whole[:STOP_AT]
    assert resumed == whole[STOP_AT:]


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["model", "native"])
def test_resume_restores_ema_averages(variant, write_config, tmp_path) -> None:
    """ema + --resume: evaluations run on the averages, so the resumed run's evaluations equal the
    whole run's only if the averages (and their update count) came back from the resume checkpoint."""
    config = write_config({"ema": {"decay": 0.6, "warmup_steps": 2}, "train": {"epochs": 3}})
    script = generate_both(config, tmp_path / "scripts")[variant]
    out = tmp_path / "out"
    whole = run_script(script, tmp_path / "whole", variant=variant)
    stopped = run_script(
        script,
        tmp_path / "stopped",
        variant=variant,
        max_steps=STOP_AT,
        extra_args=("--output-dir", str(out)),
    )
    resumed = run_script(
        script,
        tmp_path / "resumed",
        variant=variant,
        extra_args=("--output-dir", str(out), "--resume", "latest"),
    )
    for run in (whole, stopped, resumed):
        assert run.returncode == 0, run.log_tail
    assert resumed.steps == whole.steps[STOP_AT:]
    assert [e["epoch"] for e in resumed.evals] == [2, 3]
    assert resumed.evals == whole.evals[1:]
    # the stopped run saved the averages, their count, and averages that are not the weights
    saved = ms.load_checkpoint(str(out / "checkpoints" / "resume" / f"resume-{STOP_AT}.ckpt"))
    assert float(saved["ema_updates"].asnumpy()) == STOP_AT
    assert not (saved["ema.fc1.weight"].asnumpy() == saved["fc1.weight"].asnumpy()).all()
