"""Data files MindSpore cannot read (issue 30): a broken image in an image folder, a truncated CIFAR-10 batch.

Both variants stop with the same one line naming the file (MindSpore's own message), exit 1, no traceback;
`validate --run` names every such file before training.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image

from mscodegen.cli import main
from mscodegen.config.load import load_config
from mscodegen.run import data_files
from mscodegen.run.data_files import data_file_problems
from mscodegen.run.parity import generate_both

from conftest import REPO, TINY, merge

RNG = np.random.default_rng(30)


def _folder(root: Path) -> Path:
    shutil.copytree(REPO / "examples" / "data" / "digits_png", root)
    return root


def _cifar(root: Path, cut: int = 0) -> Path:
    root.mkdir(parents=True)
    records = RNG.integers(0, 256, size=(64, 3073), dtype=np.uint8)
    records[:, 0] %= 10
    data = records.tobytes()
    (root / "data_batch_1.bin").write_bytes(data[: len(data) - cut])
    (root / "test_batch.bin").write_bytes(data)
    return root


def _jpeg() -> bytes:
    out = io.BytesIO()
    Image.fromarray(RNG.integers(0, 256, size=(24, 24, 3), dtype=np.uint8)).save(out, "JPEG")
    return out.getvalue()


def _config(tmp_path: Path, train: dict) -> Path:
    cfg = merge(
        TINY, {"network": {"name": "lenet5", "num_classes": 10}, "data": {"train": train, "eval": None}}
    )
    cfg["network"].pop("hidden")
    for key in ("num_samples", "image_shape", "num_classes", "seed"):
        del cfg["data"]["train"][key]
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


FOLDER = {"kind": "image_folder", "path": "images", "batch_size": 8, "transforms": {"resize": [32, 32]}}
CIFAR = {"kind": "cifar10", "path": "cifar", "batch_size": 8}


def _both_stop_with_one_line(config: Path, workdir: Path) -> str:
    scripts = generate_both(config, workdir / "scripts")
    lines = []
    for script in scripts.values():
        proc = subprocess.run(
            [sys.executable, str(script), "--max-steps", "20"],
            cwd=workdir,
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "ONEDNN_MAX_CPU_ISA": "AVX2"},
            check=False,
        )
        assert proc.returncode == 1, proc.stderr[-3000:]
        assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
        lines.append(proc.stderr.strip().splitlines()[-1])
    assert lines[0] == lines[1]
    assert lines[0].startswith("error: ") and lines[0].endswith(f"{config.name} --run lists them all)")
    assert "(mscodegen validate " in lines[0]  # the config the scripts came from, to find every bad file
    return lines[0]


@pytest.mark.slow
def test_a_corrupt_image_stops_both_variants_with_one_line_naming_it(tmp_path: Path) -> None:
    (_folder(tmp_path / "images") / "4" / "broken.jpg").write_bytes(RNG.bytes(600))
    line = _both_stop_with_one_line(_config(tmp_path, FOLDER), tmp_path / "run")
    assert "Invalid image" in line and "4/broken.jpg" in line, line


@pytest.mark.slow
def test_a_truncated_cifar_batch_stops_both_variants_with_one_line_naming_it(tmp_path: Path) -> None:
    _cifar(tmp_path / "cifar", cut=1000)
    line = _both_stop_with_one_line(_config(tmp_path, CIFAR), tmp_path / "run")
    assert "Invalid cifar10 file" in line and "data_batch_1.bin" in line, line


@pytest.mark.slow
def test_validate_run_names_every_image_mindspore_cannot_decode(tmp_path: Path, monkeypatch) -> None:
    folder = _folder(tmp_path / "images")
    jpeg = _jpeg()
    (folder / "1" / "noise.jpg").write_bytes(RNG.bytes(600))
    (folder / "2" / "half.jpg").write_bytes(jpeg[: len(jpeg) // 2])
    (folder / "3" / "header.jpg").write_bytes(jpeg[:200])  # MindSpore's decoder dies of SIGFPE on it
    (folder / "5" / "fine.jpg").write_bytes(jpeg)
    monkeypatch.setattr(data_files, "PROGRESS_AFTER", 0.0)
    shown: list[str] = []
    problems = data_file_problems(load_config(_config(tmp_path, FOLDER)), progress=shown.append)
    assert len(problems) == 1
    problem = problems[0]
    assert (problem.path, problem.line) == ("data.train.path", 12)
    assert problem.message.startswith(f"3 image(s) MindSpore cannot decode in {folder}:")
    for name in ("1/noise.jpg", "2/half.jpg", "3/header.jpg: crashes MindSpore's decoder (killed by SIGFPE)"):
        assert f"{folder}/{name}" in problem.message, problem.message
    assert "fine.jpg" not in problem.message
    assert shown and shown[0].startswith("  decoded ") and str(folder) in shown[0]
    assert not (tmp_path / "abnormal_image.jpg").exists()  # MindSpore's dump went to a scratch directory


def test_validate_run_names_a_truncated_cifar_batch_and_the_cut_record(tmp_path: Path, capsys) -> None:
    _cifar(tmp_path / "cifar", cut=1000)
    config = _config(tmp_path, CIFAR)
    assert main(["validate", str(config), "--run"]) == 2  # found before either script runs
    err = capsys.readouterr().err
    assert (
        f"cfg.yaml:12:11: data.train.path: 1 CIFAR-10 batch file(s) MindSpore cannot read in {tmp_path}"
        in err
    )
    assert "data_batch_1.bin: 195672 bytes is not a whole number of 3073-byte records: record 63" in err
    assert "test_batch.bin" not in err  # usage train reads the data batches only


def test_only_scripts_reading_images_or_cifar_carry_the_hook() -> None:
    for script in sorted((REPO / "generated").glob("*/train_*.py")):
        text = script.read_text()
        reads_files = "ImageFolderDataset(" in text or "Cifar10Dataset(" in text
        assert ("sys.excepthook = report_unreadable_file" in text) == reads_files, script
