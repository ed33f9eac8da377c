"""examples/mnist_quickstart.yaml: MindSpore's 1.x LeNet5/MNIST quick start as a config. Both variants train
on an MNIST-format directory written by examples/make_mnist.py, step for step equal; the generated network is
the quick start's LeNet5 class, weight for weight, and the generated training batches are its create_dataset's,
bit for bit and in the same order."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from test_weight_init import PROBE

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.run.parity import generate_both

from conftest import PROBE_IMPORT, REPO, TINY, assert_identical, merge, run_both

EXAMPLE = REPO / "examples" / "mnist_quickstart.yaml"

# The 1.x quick start's create_dataset as the tutorial writes it (bench/reference_quickstart.py, the one
# hand-written reference), on a directory that holds only the train files (the tutorial's
# MNIST_Data/train); every batch must equal the generated build_train_dataset's, after the same ms.set_seed.
DATA_PROBE = (
    f"""
import sys
sys.path.insert(0, {str(REPO)!r})
"""
    + PROBE_IMPORT
    + """
import importlib.util, json, os
import mindspore as ms
import numpy as np
from bench.reference_quickstart import create_dataset

def batches(dataset):
    return [(i.asnumpy(), l.asnumpy()) for i, l in dataset.create_tuple_iterator(num_epochs=1)]

mod = import_script(sys.argv[1])
ms.set_seed(mod.SEED)  # what train() does before it makes the datasets
ours = batches(mod.create_dataset(mod.DATA_DIR, "train"))
ms.set_seed(mod.SEED)
theirs = batches(create_dataset(sys.argv[2], "train"))
print(json.dumps({
    "batches": [len(ours), len(theirs)],
    "dtypes": [str(ours[0][0].dtype), str(ours[0][1].dtype), str(theirs[0][1].dtype)],
    "shapes": [list(ours[0][0].shape), list(theirs[0][0].shape)],
    "equal": [bool(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])) for a, b in zip(ours, theirs)],
    "shuffled": bool(not np.array_equal(ours[0][1], np.sort(ours[0][1]))),
}))
"""
)


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


@pytest.mark.slow
def test_make_mnist_writes_idx_files_mindspore_reads(tmp_path: Path) -> None:
    import mindspore.dataset as ds
    from sklearn.datasets import load_digits  # imported here: at the top it costs every collection a second

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


@pytest.mark.slow
def test_quickstart_batches_equal_the_tutorials_create_dataset(tmp_path: Path) -> None:
    config = _config(tmp_path, train=96, test=32)
    tutorial_dir = tmp_path / "MNIST_Data" / "train"  # the tutorial's layout: train files only
    tutorial_dir.mkdir(parents=True)
    for name in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"):
        (tutorial_dir / name).write_bytes((tmp_path / "mnist" / name).read_bytes())
    scripts = generate_both(config, tmp_path / "out")
    probe = tmp_path / "data_probe.py"
    probe.write_text(DATA_PROBE)
    out = subprocess.run(
        [sys.executable, str(probe), str(scripts["native"]), str(tutorial_dir)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["batches"] == [3, 3]
    assert result["dtypes"] == ["float32", "int32", "int32"]
    assert result["shapes"] == [[32, 1, 32, 32], [32, 1, 32, 32]]
    assert result["equal"] == [True, True, True]  # same images (bit for bit), same order
    assert result["shuffled"]


def test_shuffle_in_source_is_rejected_for_imported_data(tmp_path: Path) -> None:
    config = merge(
        TINY,
        {
            "data": {
                "train": {
                    "kind": "import",
                    "factory": "mydata:make",
                    "image_shape": [1, 8, 8],
                    "shuffle": {"buffer_size": 16, "in_source": True},
                    "num_samples": None,
                    "num_classes": None,
                    "seed": None,
                }
            }
        },
    )
    (tmp_path / "mydata.py").write_text("def make():\n    raise NotImplementedError\n")
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert [p.path for p in info.value.problems] == ["data.train.shuffle.in_source"]


def test_label_pipeline_cast_is_not_repeated() -> None:
    # MNIST labels are uint32; the config's label pipeline casts them to int32, so the implicit cast that
    # kind mnist gets otherwise is not written again (one cast in the one dataset function of both splits).
    for script in ("train_model.py", "train_native.py"):
        text = (REPO / "generated" / "mnist_quickstart" / script).read_text()
        assert text.count("TypeCast") == 1, script
        assert 'dataset.map(transforms.TypeCast(data_type=ms.int32), input_columns="label")' in text
