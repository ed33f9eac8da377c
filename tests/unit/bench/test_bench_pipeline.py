"""bench/pipeline.py's pure parts (no MindSpore): the interleaved order, the summary and its table, and the
ImageFolder helper it runs on. The measurement itself is `python -m bench.pipeline` (docs/speed.md)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from bench.pipeline import KINDS, plan, summarise, table

from conftest import REPO


def test_every_round_runs_every_kind_at_every_worker_count_in_alternating_order() -> None:
    rounds = plan([1, 2], 3)
    assert len(rounds) == 3
    assert sorted(rounds[0]) == sorted((k, w) for k in KINDS for w in (1, 2))
    assert rounds[1] == rounds[0][::-1] and rounds[2] == rounds[0]


def test_ratios_are_taken_within_a_round() -> None:
    # generated is 1.5x mindcv and 0.5x decode in every round, while the machine's speed drifts 2x
    results = [
        {"kind": kind, "workers": 1, "samples": 100, "seconds": seconds * drift}
        for drift in (1.0, 1.5, 2.0)
        for kind, seconds in (("generated", 2.0), ("mindcv", 3.0), ("decode", 1.0))
    ]
    row = summarise(results, [1])["1"]
    assert row["generated/mindcv"]["values"] == pytest.approx([1.5, 1.5, 1.5])
    assert row["generated/mindcv"]["verdict"] == "met"
    assert row["generated/decode"]["median"] == pytest.approx(0.5)
    assert row["decode"]["median"] == pytest.approx(100 / 1.5)
    text = table(summarise(results, [1]))
    assert "1.500 [1.500, 1.500] met (>= 1)" in text and "0.500 [0.500, 0.500]" in text


def test_the_image_folder_helper_writes_class_folders_of_jpegs(tmp_path) -> None:
    out = tmp_path / "images"
    args = ["--count", "12", "--size", "32", "--classes", "3"]
    proc = subprocess.run(
        [sys.executable, str(REPO / "examples" / "make_imagefolder.py"), str(out), *args],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["class_00", "class_01", "class_02"]
    files = sorted(out.rglob("*.jpg"))
    assert len(files) == 12
    from PIL import Image

    with Image.open(files[0]) as first:
        assert first.size == (32, 32) and first.mode == "RGB"
    again = tmp_path / "again"
    subprocess.run(
        [sys.executable, str(REPO / "examples" / "make_imagefolder.py"), str(again), *args], check=True
    )
    assert [f.read_bytes() for f in files] == [f.read_bytes() for f in sorted(again.rglob("*.jpg"))]
