"""Every data source kind loads real files in its native format and trains identically in both variants.

The files are tiny but real: MNIST idx files, CIFAR-10 binary batches, PNG class folders.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest
from PIL import Image

from mscodegen.run.parity import step_differences

from conftest import TINY, run_both

pytestmark = pytest.mark.slow

RNG = np.random.default_rng(7)


def write_mnist(root, count=40):
    root.mkdir(parents=True)
    for prefix in ("train", "t10k"):
        images = RNG.integers(0, 256, size=(count, 28, 28), dtype=np.uint8)
        labels = RNG.integers(0, 10, size=count, dtype=np.uint8)
        (root / f"{prefix}-images-idx3-ubyte").write_bytes(
            struct.pack(">IIII", 2051, count, 28, 28) + images.tobytes()
        )
        (root / f"{prefix}-labels-idx1-ubyte").write_bytes(struct.pack(">II", 2049, count) + labels.tobytes())


def write_cifar10(root):
    """MindSpore's reader wants whole files: 10,000 records of 1 label byte + 3,072 pixel bytes."""
    root.mkdir(parents=True)
    for name in ("data_batch_1.bin", "test_batch.bin"):
        records = RNG.integers(0, 256, size=(10000, 3073), dtype=np.uint8)
        records[:, 0] %= 10
        (root / name).write_bytes(records.tobytes())


def write_image_folder(root, per_class=12):
    for cls in ("cat", "dog", "fox"):
        (root / cls).mkdir(parents=True)
        for i in range(per_class):
            pixels = RNG.integers(0, 256, size=(20, 24, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(root / cls / f"{i}.png")


FACTORY = """
import numpy as np
from mindspore import dataset as ds


def make_dataset(count, size):
    rng = np.random.default_rng(11)
    images = rng.standard_normal((count, 1, size, size)).astype(np.float32)
    labels = rng.integers(0, 4, size=count).astype(np.int32)
    return ds.NumpySlicesDataset({"image": images, "label": labels}, shuffle=False)
"""


def _source(kind, tmp_path):
    if kind == "mnist":
        write_mnist(tmp_path / "mnist")
        spec = {"kind": "mnist", "path": "mnist", "transforms": {"resize": [16, 16]}}
        return spec, {**spec, "usage": "test"}, [1, 16, 16], 10
    if kind == "cifar10":
        write_cifar10(tmp_path / "cifar")
        spec = {
            "kind": "cifar10",
            "path": "cifar",
            "num_samples": 48,
            "transforms": {"normalize": {"mean": [0.5, 0.5, 0.5], "std": [0.25, 0.25, 0.25]}},
        }
        return spec, {**spec, "usage": "test"}, [3, 32, 32], 10
    if kind == "image_folder":
        write_image_folder(tmp_path / "pets")
        spec = {"kind": "image_folder", "path": "pets", "transforms": {"resize": [16, 16]}}
        return spec, spec, [3, 16, 16], 3
    if kind == "image_folder_bytes":  # decode: false, as mindcv reads a folder: the first op decodes
        write_image_folder(tmp_path / "pets")
        labels = [{"TypeCast": {"data_type": "int32"}}]
        tail = [{"Rescale": {"rescale": 1 / 255, "shift": 0.0}}, "HWC2CHW"]
        crop = {"RandomCropDecodeResize": {"size": 16, "scale": [0.5, 1.0]}}
        spec = {"kind": "image_folder", "path": "pets", "decode": False}
        train = {**spec, "transforms": {"image": [crop, *tail], "label": labels}}
        resize = {"Resize": {"size": [16, 16]}}
        evaluate = {**spec, "transforms": {"image": ["Decode", resize, *tail], "label": labels}}
        return train, evaluate, [3, 16, 16], 3
    (tmp_path / "my_data.py").write_text(FACTORY)
    spec = {
        "kind": "import",
        "factory": "my_data:make_dataset",
        "kwargs": {"count": 40, "size": 16},
        "image_shape": [1, 16, 16],
        "shuffle": True,
    }
    return spec, {**spec, "shuffle": False}, [1, 16, 16], 4


@pytest.mark.parametrize("kind", ["mnist", "cifar10", "image_folder", "image_folder_bytes", "import"])
def test_data_kind_trains_identically(kind, tmp_path, write_config):
    train, evaluate, _shape, classes = _source(kind, tmp_path)
    config = write_config(
        {
            "network": {"kind": "builtin", "name": "lenet5", "num_classes": classes, "hidden": [16]},
            "data": {"train": {**train, "batch_size": 8}, "eval": {**evaluate, "batch_size": 8}},
        },
        name=f"data_{kind}",
        base={k: v for k, v in TINY.items() if k != "data"},
    )
    model, native = run_both(config, tmp_path / "run", steps=6)
    assert len(model.steps) == 6
    assert step_differences(model.steps, native.steps) == []
    assert [e["metrics"] for e in model.evals] == [e["metrics"] for e in native.evals]
    assert all(np.isfinite(r["loss"]) for r in model.steps)
