"""--resume: the checkpoints of a `callbacks.checkpoint` section make a run resumable.

A run stopped after step k (mid-epoch, inside an accumulation window) and resumed equals the uninterrupted
run, in both variants, with shuffle, random transforms, dynamic loss scaling, accumulation and EMA. A
checkpoint carries the config's sha256: `--resume latest` takes this config's checkpoint of the highest
stored step, pruning touches only the run's own files, another config's checkpoint is refused,
and --max-steps is checked before a step. Environment faults end in one line, not a traceback.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mscodegen.run.parity import generate_both, run_script
from mscodegen.run.resume_parity import run_resume_parity

from conftest import TINY, merge, run_plain, write_yaml

# 48 samples / batch 8 = 6 steps per epoch, shuffled (data.train's default), 3 epochs = 18 steps.
# Adam (moments), a cosine LR list (its position is global_step), dynamic loss scaling growing every
# 3 steps (the scale and its counter), one optimizer update per 2 batches (buffers and micro_step);
# a checkpoint every 2 optimizer steps (4 batches), and when training ends.
RESUME: dict = {
    "data": {"train": {"shuffle": True}},
    "optimizer": {"name": "adam", "lr": 0.05},
    "lr_schedule": {"kind": "cosine", "min_lr": 0.001},
    "loss_scale": {"kind": "dynamic", "init": 1024, "factor": 2, "window": 3},
    "grad": {"accumulation_steps": 2},
    "train": {"epochs": 3},
    "callbacks": {"checkpoint": {"every_steps": 2, "keep_max": 2, "prefix": "tiny"}},
}
STOP_AT = 7  # epoch 2, batch 1: mid-epoch, mid accumulation window, loss-scale counter at 1
PLAIN: dict = {"callbacks": {"checkpoint": {"every_steps": 2, "keep_max": 2, "prefix": "tiny"}}}


def _load(path: Path) -> dict:
    import mindspore as ms

    return ms.load_checkpoint(str(path))


def _weights(path: Path) -> dict:
    return {name: param.asnumpy() for name, param in _load(path).items()}


def _run(script: Path, workdir: Path, *args: str, steps: int | None = None):
    result = run_script(script, workdir, variant=script.stem, max_steps=steps, extra_args=args)
    assert result.returncode == 0, result.log_tail
    return result


def _stop_and_resume(script: Path, root: Path, stop_at: int) -> tuple[list, list, list, Path, Path]:
    """(whole run's steps, stopped run's, resumed run's, whole weights, resumed weights)."""
    out = str(root / "resumed-output")
    whole = _run(script, root / "whole", "--save-weights", str(root / "whole.ckpt"))
    stopped = _run(script, root / "stopped", "--output-dir", out, steps=stop_at)
    resumed = _run(
        script,
        root / "resumed",
        "--output-dir",
        out,
        "--resume",
        "latest",
        "--save-weights",
        str(root / "r.ckpt"),
    )
    return whole.steps, stopped.steps, resumed.steps, root / "whole.ckpt", root / "r.ckpt"


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["model", "native"])
def test_resume_mid_epoch_equals_uninterrupted_run(variant, write_config, tmp_path) -> None:
    scripts = generate_both(write_config(RESUME), tmp_path / "scripts")
    whole, stopped, resumed, whole_w, resumed_w = _stop_and_resume(scripts[variant], tmp_path, STOP_AT)
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
@pytest.mark.parametrize("variant", ["model", "native"])
def test_runs_sharing_a_directory_keep_their_own_checkpoints(variant, write_config, tmp_path) -> None:
    """Issues 22 and 30: runs of 12, 5 and 3 steps in one output directory. Each writes in its own folder
    (checkpoints/<run id>/) and keeps its own checkpoints (the later runs delete none of the first one's),
    and `--resume latest` takes the highest step stored in a checkpoint, the 12-step run's."""
    script = generate_both(write_config(PLAIN), tmp_path / "scripts")[variant]
    out = tmp_path / "out"
    directory = out / "checkpoints"
    _run(script, tmp_path / "a", "--output-dir", str(out), steps=12)
    first = sorted(directory.glob("*/*.ckpt"))
    assert len(first) == 2  # keep_max
    # junk a user left beside them: unreadable files never stop a run and are never deleted
    (directory / "tiny-998_1.ckpt").write_bytes(b"not a checkpoint")
    (first[0].parent / "resume-999.ckpt").write_bytes(b"")
    for steps in (5, 3):
        time.sleep(1)  # another run id
        _run(script, tmp_path / f"s{steps}", "--output-dir", str(out), steps=steps)
    paths = set(directory.glob("**/*.ckpt"))
    assert (
        set(first) <= paths and {directory / "tiny-998_1.ckpt", first[0].parent / "resume-999.ckpt"} <= paths
    )
    # each run wrote in its own folder, and every checkpoint names its run: the folder's name
    runs: dict[str, set[str]] = {}
    for path in directory.glob("*/tiny-*.ckpt"):
        runs.setdefault(path.parent.name, set()).add(str(_load(path)["run_id"]))
    assert len(runs) == 3 and all(ids == {folder} for folder, ids in runs.items()), runs
    resumed = run_script(
        script,
        tmp_path / "r",
        variant=variant,
        extra_args=("--output-dir", str(out), "--resume", "latest"),
    )
    assert resumed.returncode == 0, resumed.log_tail
    assert resumed.steps == []
    log = (tmp_path / "r" / "stdout.txt").read_text()
    assert "at step 12" in log and "nothing to train" in log
    assert "skipping" in log and "tiny-998_1.ckpt" in log and "resume-999.ckpt" in log


@pytest.mark.slow
def test_latest_skips_unreadable_files_and_max_steps_is_checked_before_a_step(write_config, tmp_path) -> None:
    scripts = generate_both(write_config(PLAIN), tmp_path / "scripts")
    for variant, script in scripts.items():
        out = tmp_path / variant
        whole = _run(script, out / "whole")
        _run(script, out / "stopped", "--output-dir", str(out / "o"), steps=5)
        saved = sorted((out / "o" / "checkpoints").glob("*/*.ckpt"), key=lambda p: p.stat().st_mtime_ns)
        newest = saved[-1]
        # steps 4 and 5 written in one clock tick (a coarse file system): the step in the name decides
        for path in saved:
            os.utime(path, ns=(newest.stat().st_mtime_ns,) * 2)
        # what a kill during a save leaves (MindSpore writes <name>.tmp, then renames it), and a newer
        # checkpoint that was truncated
        (newest.with_suffix(".tmp")).write_bytes(newest.read_bytes()[:100])
        truncated = newest.with_name("tiny-9_3.ckpt")
        truncated.write_bytes(newest.read_bytes()[: newest.stat().st_size // 2])
        os.utime(truncated, ns=(time.time_ns() + 10**9,) * 2)
        again = _run(script, out / "again", "--output-dir", str(out / "o"), "--resume", "latest", steps=5)
        assert again.steps == []  # the run stopped at step 5: --max-steps 5 trains nothing more
        log = (out / "again" / "stdout.txt").read_text()
        assert "skipping" in log and "tiny-9_3.ckpt" in log and "nothing to train" in log
        resumed = _run(script, out / "resumed", "--output-dir", str(out / "o"), "--resume", "latest")
        assert resumed.steps == whole.steps[5:], variant


@pytest.fixture(scope="module")
def first_configs_output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """--output-dir of a 2-step native run of the tiny config with PLAIN's checkpoints: the checkpoint that
    both cases of test_checkpoint_from_another_config_is_refused try to resume (one run for the two)."""
    root = tmp_path_factory.mktemp("first")
    first = generate_both(write_yaml(root, "first", merge(TINY, PLAIN)), root / "scripts")["native"]
    _run(first, root / "a", "--output-dir", str(root / "out"), steps=2)
    return root / "out"


@pytest.mark.slow
@pytest.mark.parametrize(
    "other",
    [
        {"network": {"hidden": [12]}},  # another network
        {"data": {"train": {"batch_size": 4}}},  # another batch size: another data position
    ],
    ids=["network", "batch_size"],
)
def test_checkpoint_from_another_config_is_refused(
    other, first_configs_output, write_config, tmp_path
) -> None:
    out = tmp_path / "out"
    shutil.copytree(first_configs_output, out)  # each case resumes in a copy of its own
    (saved,) = (out / "checkpoints").glob("*/*.ckpt")
    second = generate_both(write_config({**PLAIN, **other}, name="second"), tmp_path / "second")
    for variant, script in second.items():
        for resume, message in (("latest", "no checkpoint of this config"), (str(saved), "another config")):
            proc = run_plain(script, "--output-dir", str(out), "--resume", resume, cwd=tmp_path / variant)
            assert proc.returncode == 1, proc.stderr[-2000:]
            lines = proc.stderr.strip().splitlines()
            assert lines[-1].startswith("error: --resume") and message in lines[-1], lines[-3:]
            assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_a_bad_resume_target_is_one_line_and_writes_nothing(write_config, tmp_path) -> None:
    scripts = generate_both(write_config(PLAIN), tmp_path / "scripts")
    empty = tmp_path / "empty.ckpt"
    empty.write_bytes(b"")
    for variant, script in scripts.items():
        out = tmp_path / variant / "out"
        for target in (str(tmp_path), str(empty), str(tmp_path / "missing.ckpt"), "latest"):
            proc = run_plain(script, "--output-dir", str(out), "--resume", target, cwd=tmp_path / variant)
            assert proc.returncode == 1, (target, proc.stderr[-2000:])
            assert "Traceback" not in proc.stderr, (target, proc.stderr[-2000:])
            last = proc.stderr.strip().splitlines()[-1]
            assert last.startswith("error: --resume"), target
            if target != "latest":  # a directory, an empty file, a missing one: what to give instead
                assert last.endswith("; give another checkpoint, or latest"), last
                missing = str(tmp_path / "missing.ckpt")
                why = {str(tmp_path): "not a regular file", str(empty): "damaged", missing: "no such file"}
                assert f"--resume {target}: {why[target]}" in last, last
            assert not out.exists(), f"a failed --resume {target} created {out}"


def test_checkpoints_carry_the_config_and_are_written_by_mindspore(write_config, tmp_path) -> None:
    """MindSpore's save_checkpoint writes <name>.tmp and renames it (atomic), so the scripts write no
    temporary files of their own; both variants save through ModelCheckpoint with one CheckpointConfig
    (the native loop calls it as Model does), storing the config's sha256 and the step."""
    config = write_config(PLAIN)
    scripts = generate_both(config, tmp_path / "scripts")
    from mscodegen.config.load import load_config

    sha = load_config(config).sha256
    texts = {variant: script.read_text() for variant, script in scripts.items()}
    module = (scripts["model"].parent / "checkpoints.py").read_text()  # what both variants share
    texts["module"] = module
    for text in texts.values():
        assert "os.replace" not in text and ".partial" not in text
        assert "ms.save_checkpoint(self" not in text  # no hand-made copy of ModelCheckpoint
    assert f'CONFIG_SHA256 = "{sha}"' in module
    assert '"config_sha256": CONFIG_SHA256' in module and '"step_num"' in module
    # one function makes the ModelCheckpoint, imported by both variants (the native loop calls it)
    function = module.split("\ndef checkpoint_callback(")[1].split("\n\n\n")[0]
    assert "CheckpointConfig(" in function and "return ModelCheckpoint(" in function
    for variant in ("model", "native"):
        assert "def checkpoint_callback" not in texts[variant] and "CONFIG_SHA256" not in texts[variant]
        assert "from checkpoints import" in texts[variant] and "checkpoint_callback(" in texts[variant]
    assert "checkpoint.on_train_step_end(run_context)" in texts["native"]


def test_no_checkpoint_section_no_resume_and_nothing_written(write_config, tmp_path) -> None:
    """Pay for what you use: without callbacks.checkpoint (or with resumable: false) the scripts have no
    --resume, no --output-dir and no checkpoint code."""
    for overrides in ({}, {"callbacks": {"checkpoint": {"every_steps": 2, "resumable": False}}}):
        name = "plain" if not overrides else "unresumable"
        scripts = generate_both(write_config(overrides, name=name), tmp_path / name)
        module = scripts["model"].parent / "checkpoints.py"
        assert module.is_file() is bool(overrides)  # no checkpoints, no checkpoints.py
        texts = [s.read_text() for s in scripts.values()] + ([module.read_text()] if overrides else [])
        for text in texts:
            assert "--resume" not in text and "CONFIG_SHA256" not in text and "set_init_step" not in text
            assert "def load_checkpoint" not in text
        for text in texts[:2]:
            assert ("--output-dir" in text) is bool(overrides)


@pytest.mark.slow
def test_parity_resume_at_exit_codes(write_config, tmp_path) -> None:
    config = write_config(RESUME)
    # exit 0 (the resumed runs equal the whole runs) is test_cookbook.py::test_parity[resume], parity --resume-at
    # a broken resume (the data position not restored) in scripts on disk is caught: exit 1
    broken = tmp_path / "broken"
    subprocess.run(
        [sys.executable, "-m", "mscodegen", "new", str(config), "--out", str(broken)],
        check=True,
        capture_output=True,
    )
    native = broken / "train_native.py"
    text = native.read_text()
    assert "        train_dataset.set_init_step(start_step)\n" in text
    native.write_text(text.replace("        train_dataset.set_init_step(start_step)\n", "        pass\n"))
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
    """Random transforms: MindSpore's replay (set_init_step, fast recovery off) redraws the skipped
    batches' augmentations, so the resumed batches get the uninterrupted run's augmentations."""
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
    whole, stopped, resumed, _, _ = _stop_and_resume(scripts[variant], tmp_path, STOP_AT)
    assert len(whole) == 18
    assert stopped == whole[:STOP_AT]
    assert resumed == whole[STOP_AT:]


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["model", "native"])
def test_resume_restores_ema_averages(variant, write_config, tmp_path) -> None:
    """ema + --resume: evaluations run on the averages, so the resumed run's evaluations equal the
    whole run's only if the averages (and their update count) came back from the checkpoint."""
    config = write_config({**PLAIN, "ema": {"decay": 0.6, "warmup_steps": 2}, "train": {"epochs": 3}})
    script = generate_both(config, tmp_path / "scripts")[variant]
    out = tmp_path / "out"
    whole = _run(script, tmp_path / "whole")
    _run(script, tmp_path / "stopped", "--output-dir", str(out), steps=STOP_AT)
    # the stopped run's last checkpoint holds the averages, their count, and averages that are not weights
    newest = max((out / "checkpoints").glob("*/*.ckpt"), key=lambda p: p.stat().st_mtime_ns)
    saved = _load(newest)
    resumed = _run(script, tmp_path / "resumed", "--output-dir", str(out), "--resume", "latest")
    assert resumed.steps == whole.steps[STOP_AT:]
    assert [e["epoch"] for e in resumed.evals] == [2, 3]
    assert resumed.evals == whole.evals[1:]
    assert float(saved["ema_updates"].asnumpy()) == STOP_AT
    assert not (saved["ema.fc1.weight"].asnumpy() == saved["fc1.weight"].asnumpy()).all()
