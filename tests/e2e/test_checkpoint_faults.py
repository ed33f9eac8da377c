"""Faults that lost data or split the variants (issue 30), in both generated variants:

- each run writes its checkpoints in its own folder, checkpoints/<run id>/, so a prefix with a dash and
  two runs started together in one output directory keep every file of both runs;
- a save killed halfway leaves '<name>.tmp': the next run removes those untouched for an hour, no other;
- checkpoints carry a CRC32: a bit-flipped one is refused by --resume PATH and skipped by latest;
- latest orders by the step stored in the file (after `cp -r` the clock says nothing) and skips a FIFO;
- a NaN loss stops both variants at the same step with the same line and exit 1;
- --save-weights that is a folder is refused before step 1; a file-size limit (EFBIG) is one line.
"""

from __future__ import annotations

import math
import os
import resource
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from mscodegen.run.parity import generate_both, run_script

pytestmark = pytest.mark.slow

# 6 steps per epoch (48 samples, batch 8), 2 epochs; a checkpoint every 2 steps, 2 kept per run.
CKPT: dict = {"callbacks": {"checkpoint": {"every_steps": 2, "keep_max": 2, "prefix": "le-net"}}}
VARIANTS = ["model", "native"]


def _raw(
    script: Path, *args: str, cwd: Path, limit_bytes: int | None = None
) -> subprocess.CompletedProcess[str]:
    cwd.mkdir(parents=True, exist_ok=True)

    def limit() -> None:  # the file-size limit of `ulimit -f`
        if limit_bytes is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    return subprocess.run(
        [sys.executable, str(script), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        preexec_fn=limit,
    )


def _last_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc.stderr.strip().splitlines()[-1]


def _checkpoints(out: Path) -> dict[str, list[str]]:
    """run folder -> its checkpoint names."""
    return {
        folder.name: sorted(p.name for p in folder.glob("*.ckpt"))
        for folder in sorted((out / "checkpoints").iterdir())
        if folder.is_dir()
    }


@pytest.fixture(scope="module")
def scripts(tmp_path_factory) -> dict[str, Path]:
    import yaml

    from conftest import TINY, merge

    root = tmp_path_factory.mktemp("ckpt")
    config = root / "tiny.yaml"
    config.write_text(yaml.safe_dump(merge(TINY, CKPT), sort_keys=False))
    return generate_both(config, root / "scripts")


@pytest.mark.parametrize("variant", VARIANTS)
def test_runs_with_a_dashed_prefix_keep_each_others_files(variant, scripts, tmp_path) -> None:
    """Before: the native variant read the prefix 'le-net' back as 'le', reused it and overwrote the first
    run's checkpoints. Now each run has its folder; the second run deletes and overwrites nothing."""
    out = tmp_path / "out"
    first = run_script(
        scripts[variant], tmp_path / "a", variant=variant, extra_args=("--output-dir", str(out))
    )
    assert first.returncode == 0, first.log_tail
    before = {p: p.read_bytes() for p in (out / "checkpoints").glob("*/*.ckpt")}
    assert len(before) == 2
    time.sleep(1)  # another run id (its second and process)
    second = run_script(
        scripts[variant], tmp_path / "b", variant=variant, extra_args=("--output-dir", str(out))
    )
    assert second.returncode == 0, second.log_tail
    runs = _checkpoints(out)
    assert len(runs) == 2, runs
    assert all(names == ["le-net-2_4.ckpt", "le-net-2_6.ckpt"] for names in runs.values()), runs
    assert all(path.read_bytes() == data for path, data in before.items())


@pytest.mark.parametrize("variant", VARIANTS)
def test_two_runs_started_together_keep_both_runs_files(variant, scripts, tmp_path) -> None:
    out = tmp_path / "out"
    with ThreadPoolExecutor(2) as pool:
        results = list(
            pool.map(
                lambda name: run_script(
                    scripts[variant], tmp_path / name, variant=variant, extra_args=("--output-dir", str(out))
                ),
                ["a", "b"],
            )
        )
    assert all(r.returncode == 0 for r in results), [r.log_tail for r in results]
    assert results[0].steps == results[1].steps
    runs = _checkpoints(out)
    assert len(runs) == 2 and all(len(names) == 2 for names in runs.values()), runs


def test_stale_tmp_files_are_removed_and_a_live_save_is_kept(scripts, tmp_path) -> None:
    out = tmp_path / "out"
    killed = out / "checkpoints" / "20260101-000000-1"
    killed.mkdir(parents=True)
    stale, live = killed / "le-net-1_4.tmp", killed / "le-net-1_6.tmp"
    stale.write_bytes(b"half a save")
    live.write_bytes(b"a save under way")
    two_hours_ago = time.time() - 7200
    os.utime(stale, (two_hours_ago, two_hours_ago))
    for variant in VARIANTS:
        result = run_script(
            scripts[variant],
            tmp_path / variant,
            variant=variant,
            max_steps=2,
            extra_args=("--output-dir", str(out)),
        )
        assert result.returncode == 0, result.log_tail
    assert not stale.exists() and live.exists()


@pytest.fixture(scope="module")
def trained(scripts, tmp_path_factory) -> Path:
    """An output directory with the native run's checkpoints at steps 10 and 12 (the last)."""
    root = tmp_path_factory.mktemp("trained")
    result = run_script(
        scripts["native"], root / "run", variant="native", extra_args=("--output-dir", str(root / "out"))
    )
    assert result.returncode == 0, result.log_tail
    return root / "out"


def _copy(trained: Path, tmp_path: Path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(trained, out, copy_function=shutil.copyfile)  # new modification times, as `cp -r`
    return out


def _flip_a_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_bit_flipped_checkpoint_is_refused_and_latest_skips_it(variant, scripts, trained, tmp_path) -> None:
    out = _copy(trained, tmp_path)
    (newest,) = out.glob("checkpoints/*/le-net-2_6.ckpt")
    _flip_a_byte(newest)
    proc = _raw(scripts[variant], "--output-dir", str(out), "--resume", str(newest), cwd=tmp_path / "w")
    assert proc.returncode == 1
    assert _last_line(proc) == (
        f"error: --resume {newest}: damaged, or not a checkpoint (its CRC32 or format does not check out); "
        "give another checkpoint, or latest"
    )
    proc = _raw(
        scripts[variant],
        "--output-dir",
        str(out),
        "--resume",
        "latest",
        "--max-steps",
        "11",
        cwd=tmp_path / "l",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"note: --resume latest: skipping {newest}: damaged" in proc.stdout
    assert "at step 10" in proc.stdout  # the other checkpoint, intact


@pytest.mark.parametrize("variant", VARIANTS)
def test_latest_picks_the_highest_step_after_cp_r_and_skips_a_fifo(
    variant, scripts, trained, tmp_path
) -> None:
    """After `cp -r` the copy's times say nothing: here the older checkpoint is made the newest file."""
    out = _copy(trained, tmp_path)
    (older,) = out.glob("checkpoints/*/le-net-2_4.ckpt")
    os.utime(older, (time.time() + 3600, time.time() + 3600))
    fifo = out / "checkpoints" / older.parent.name / "zz.ckpt"
    os.mkfifo(fifo)
    proc = _raw(
        scripts[variant],
        "--output-dir",
        str(out),
        "--resume",
        "latest",
        "--max-steps",
        "12",
        cwd=tmp_path / "w",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"note: --resume latest: skipping {fifo}: not a regular file" in proc.stdout
    assert "at step 12" in proc.stdout and "nothing to train" in proc.stdout
    proc = _raw(scripts[variant], "--output-dir", str(out), "--resume", str(fifo), cwd=tmp_path / "f")
    assert proc.returncode == 1
    assert (
        _last_line(proc) == f"error: --resume {fifo}: not a regular file; give another checkpoint, or latest"
    )


def test_a_nan_loss_stops_both_variants_at_the_same_step_with_the_same_line(tmp_path) -> None:
    import yaml

    from conftest import TINY, merge

    config = tmp_path / "nan.yaml"
    config.write_text(yaml.safe_dump(merge(TINY, {"optimizer": {"lr": 1e10}}), sort_keys=False))
    scripts = generate_both(config, tmp_path / "scripts")
    procs = {v: _raw(scripts[v], cwd=tmp_path / v) for v in VARIANTS}
    lines = {v: _last_line(p) for v, p in procs.items()}
    assert {p.returncode for p in procs.values()} == {1}
    assert lines["model"] == lines["native"], lines
    assert lines["model"].split(";")[0].split(": loss ")[1] in ("nan", "inf", "-inf"), lines
    assert lines["model"].endswith("lower optimizer.lr or set grad.clip")
    # the step it names is the first whose loss is not finite: every step before it logged a finite loss
    step = int(lines["model"].split()[2].rstrip(":"))
    if step > 1:
        before = run_script(scripts["native"], tmp_path / "before", variant="native", max_steps=step - 1)
        assert before.returncode == 0, before.log_tail
        assert len(before.steps) == step - 1 and all(math.isfinite(s["loss"]) for s in before.steps)


@pytest.mark.parametrize("variant", VARIANTS)
def test_save_weights_to_a_folder_is_refused_before_training(variant, scripts, tmp_path) -> None:
    proc = _raw(scripts[variant], "--save-weights", str(tmp_path), cwd=tmp_path / "w")
    assert proc.returncode == 2
    assert _last_line(proc).endswith(f"--save-weights {tmp_path}: a folder; give a file in it")
    assert "loss is" not in proc.stdout  # refused before step 1


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_file_size_limit_is_one_line(variant, scripts, tmp_path) -> None:
    """`ulimit -f`: Python ignores SIGXFSZ, so a write past it raises OSError(EFBIG) with no file name."""
    proc = _raw(
        scripts[variant],
        "--output-dir",
        str(tmp_path / "out"),
        "--max-steps",
        "2",
        cwd=tmp_path / "w",
        limit_bytes=2048,
    )
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert _last_line(proc) == "error: [Errno 27] File too large", proc.stderr[-2000:]
