"""examples/mnist_quickstart.yaml: MindSpore's 1.x LeNet5/MNIST quick start as a config. Both variants train
on an MNIST-format directory written by examples/make_mnist.py, step for step equal; the generated network is
the quick start's LeNet5 class, weight for weight."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from sklearn.datasets import load_digits
from test_weight_init import PROBE

from mscodegen.parity import generate_both

from conftest import REPO, assert_identical, run_both

EXAMPLE = REPO / "examples" / "mnist_quickstart.yaml"


def _make_mnist():
    spec = importlib.util.spec_from_file_location("make_mnist", REPO / "examples" / "make_mnist.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _config(tmp_path: Path, *, train: int, test: int) -> Path:
    """The example config, its data paths pointing at a fresh MNIST directory in tmp_path."""
    _make_mnist().write_mnist(tmp_path / "mnist", train=train, test=test)
    config = yaml.safe_load(EXAMPLE.read_text())
    for split in ("train", "eval"):
        config["data"][split]["path"] = "mnist"
    path = tmp_path / "mnist_quickstart.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def test_make_mnist_writes_idx_files_mindspore_reads(tmp_path: Path) -> None:
    import mindspore.dataset as ds

    out = _make_mnist().write_mnist(tmp_path / "mnist", train=40, test=8)
    header = (out / "train-images-idx3-ubyte").read_bytes()[:16]
    assert [int.from_bytes(header[i : i + 4], "big") for i in range(0, 16, 4)] == [0x803, 40, 28, 28]
    rows = list(
        ds.MnistDataset(str(out), usage="test", shuffle=False).create_tuple_iterator(output_numpy=True)
    )
    assert len(rows) == 8
    assert rows[0][0].shape == (28, 28, 1) and rows[0][0].max() > 128  # a digit, scaled to MNIST's 0-255
    # the test files hold sklearn's images 40..47, with their labels
    assert [int(r[1]) for r in rows] == list(load_digits().target[40:48])


@pytest.mark.slow
def test_quickstart_trains_identically_in_both_variants(tmp_path: Path) -> None:
    # 96 train images: 3 steps of 32; 64 test images: 2 evaluation batches.
    model, native = run_both(_config(tmp_path, train=96, test=64), tmp_path)
    assert_identical(model, native, steps=3)
    assert [e["metrics"].keys() for e in model.evals] == [{"accuracy"}]


@pytest.mark.slow
def test_quickstart_network_is_the_tutorials_lenet5(tmp_path: Path) -> None:
    scripts = generate_both(_config(tmp_path, train=32, test=32), tmp_path / "out")
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    out = subprocess.run(
        [sys.executable, str(probe), str(scripts["native"])], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    ours, theirs = result["names"]
    assert ours == theirs
    assert result["equal"] == ours
