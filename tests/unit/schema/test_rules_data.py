"""Static cross-checks of issue 12: what is knowable without running, each located at its key.

Every test writes a config, validates it, and asserts the exact (key, line, column) of each problem.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config

Found = list[tuple[str, int | None, int | None]]


def problems(tmp_path: Path, text: str, name: str = "cfg") -> Found:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return [(p.path, p.line, p.column) for p in info.value.problems]


def messages(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "cfg.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return [p.message for p in info.value.problems]


def accepted(tmp_path: Path, text: str) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text(text, encoding="utf-8")
    load_config(path)


# --- labels outside network.num_classes -------------------------------------------------------------


def test_synthetic_labels_beyond_num_classes(tmp_path: Path) -> None:
    text = """\
network: {kind: builtin, name: mlp, num_classes: 10}
data:
  train: {kind: synthetic, image_shape: [1, 8, 8], num_classes: 12}
optimizer: {name: momentum}
"""
    assert problems(tmp_path, text) == [("network.num_classes", 1, 50)]
    assert "labels 0..11" in messages(tmp_path, text)[0]


@pytest.mark.parametrize("kind", ["digits", "mnist", "cifar10"])
def test_builtin_sources_have_ten_classes(tmp_path: Path, kind: str) -> None:
    _mnist(tmp_path / "d", 100)
    _cifar(tmp_path / "d", {"data_batch_1.bin": 100})
    path = "" if kind == "digits" else ", path: d"
    text = f"""\
network:
  kind: builtin
  name: mlp
  num_classes: 8
  input_shape: [1, 8, 8]
data:
  train: {{kind: {kind}{path}, batch_size: 4, transforms: {{resize: [8, 8]}}}}
optimizer: {{name: momentum}}
"""
    found = problems(tmp_path, text)
    assert ("network.num_classes", 4, 16) in found
    if kind == "cifar10":  # 3 channels vs input_shape's 1: the shape check speaks too
        assert found == [("network.num_classes", 4, 16), ("network.input_shape", 5, 16)]
    else:
        assert found == [("network.num_classes", 4, 16)]


def test_image_folder_class_directories_are_counted(tmp_path: Path) -> None:
    for label in ("ant", "bee", "cat"):
        (tmp_path / "pics" / label).mkdir(parents=True)
        for i in range(4):
            (tmp_path / "pics" / label / f"{i}.png").write_bytes(b"")
    text = """\
network: {kind: mindcv, name: resnet18, num_classes: 2}
data:
  train: {kind: image_folder, path: pics, batch_size: 4, transforms: {resize: [32, 32]}}
optimizer: {name: momentum}
"""
    assert problems(tmp_path, text) == [("network.num_classes", 1, 54)]
    accepted(tmp_path, text.replace("num_classes: 2", "num_classes: 3"))


def test_eval_labels_beyond_num_classes(tmp_path: Path) -> None:
    text = """\
network: {kind: builtin, name: mlp, num_classes: 4, input_shape: [1, 8, 8]}
data:
  train: {kind: synthetic, image_shape: [1, 8, 8], num_classes: 4}
  eval: {kind: digits, split: test, transforms: {resize: [8, 8]}}
optimizer: {name: momentum}
"""
    assert problems(tmp_path, text) == [("network.num_classes", 1, 50)]
    assert "data.eval has labels 0..9" in messages(tmp_path, text)[0]


def test_imported_network_num_classes_kwarg(tmp_path: Path) -> None:
    (tmp_path / "nets.py").write_text("def Net(num_classes):\n    pass\n")
    text = """\
network:
  kind: import
  factory: nets:Net
  kwargs: {num_classes: 5}
data:
  train: {kind: synthetic, image_shape: [1, 8, 8], num_classes: 10}
optimizer: {name: momentum}
"""
    assert problems(tmp_path, text) == [("network.kwargs.num_classes", 4, 25)]


# --- shapes --------------------------------------------------------------------------------------------


def test_input_shape_contradicts_resized_data(tmp_path: Path) -> None:
    text = """\
network:
  kind: builtin
  name: lenet5
  input_shape: [1, 32, 32]
data:
  train: {kind: digits, transforms: {resize: [28, 28]}}
optimizer: {name: momentum}
"""
    assert problems(tmp_path, text) == [("network.input_shape", 4, 16)]
    assert "[1, 28, 28] after transforms.resize" in messages(tmp_path, text)[0]


def test_eval_images_differ_from_the_network_input(tmp_path: Path) -> None:
    text = """\
network: {kind: builtin, name: mlp}
data:
  train: {kind: digits, transforms: {resize: [16, 16]}}
  eval:
    kind: digits
    split: test
    transforms: {resize: [8, 8]}
optimizer: {name: momentum}
"""
    assert problems(tmp_path, text) == [("data.eval.transforms.resize", 7, 26)]


def test_mindcv_channels_against_grey_images(tmp_path: Path) -> None:
    text = """\
network: {kind: mindcv, name: resnet18}
data:
  train: {kind: digits, transforms: {resize: [32, 32]}}
optimizer: {name: momentum}
"""
    assert problems(tmp_path, text) == [("network", 1, 10)]
    accepted(tmp_path, text.replace("resnet18}", "resnet18, kwargs: {in_channels: 1}}"))


# --- metrics and loss ------------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [4, 5])
def test_top_k_not_below_the_class_count(tmp_path: Path, k: int) -> None:
    text = f"""\
network: {{kind: builtin, name: mlp, num_classes: 4}}
data:
  train: {{kind: synthetic, image_shape: [1, 8, 8], num_classes: 4}}
  eval: {{kind: synthetic, image_shape: [1, 8, 8], num_classes: 4}}
optimizer: {{name: momentum}}
eval:
  metrics:
    - {{name: top_k, k: {k}}}
"""
    assert problems(tmp_path, text) == [("eval.metrics[0].k", 8, 24)]
    accepted(tmp_path, text.replace(f"k: {k}", "k: 3"))


@pytest.mark.parametrize("loss", ["MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "BCEWithLogitsLoss"])
def test_regression_loss_with_class_labels(tmp_path: Path, loss: str) -> None:
    text = f"""\
network: {{kind: builtin, name: mlp}}
data:
  train: {{kind: synthetic, image_shape: [1, 8, 8]}}
optimizer: {{name: momentum}}
loss:
  name: {loss}
"""
    assert problems(tmp_path, text) == [("loss.name", 6, 9)]


def test_dense_softmax_cross_entropy_with_class_labels(tmp_path: Path) -> None:
    text = """\
network: {kind: builtin, name: mlp}
data:
  train: {kind: synthetic, image_shape: [1, 8, 8]}
optimizer: {name: momentum}
loss: {name: SoftmaxCrossEntropyWithLogits, kwargs: {sparse: false}}
"""
    assert problems(tmp_path, text) == [("loss.kwargs.sparse", 5, 62)]


# --- numeric ranges MindSpore enforces -------------------------------------------------------------------

BASE = """\
network: {kind: builtin, name: mlp}
data:
  train: {kind: synthetic, image_shape: [1, 8, 8]}
"""


def test_sink_size_zero(tmp_path: Path) -> None:
    text = BASE + "optimizer: {name: momentum}\ntrain: {dataset_sink_mode: true, sink_size: 0}\n"
    assert problems(tmp_path, text) == [("train.sink_size", 5, 45)]


@pytest.mark.parametrize(
    ("section", "column"),
    [
        ("grad: {clip: {kind: global_norm, max_norm: 1.0e-46}}", 44),
        ("grad: {clip: {kind: norm, max_norm: 1.0e-46}}", 37),
        ("grad: {clip: {kind: value, clip_value: 1.0e-46}}", 40),
    ],
)
def test_clip_threshold_underflowing_float32(tmp_path: Path, section: str, column: int) -> None:
    assert struct.unpack("f", struct.pack("f", 1.0e-46))[0] == 0.0  # the premise
    text = BASE + "optimizer: {name: momentum}\n" + section + "\n"
    assert problems(tmp_path, text) == [(f"grad.clip.{section.split()[-2].rstrip(':')}", 5, column)]
    assert "underflows to 0 in float32" in messages(tmp_path, text)[0]


def test_loss_scale_overflowing_float32(tmp_path: Path) -> None:
    text = BASE + "optimizer: {name: momentum}\nloss_scale: {kind: fixed, value: 1.0e+39}\n"
    assert problems(tmp_path, text) == [("loss_scale.value", 5, 34)]


@pytest.mark.parametrize(
    ("text", "key", "line", "column"),
    [
        (BASE + "optimizer: {name: momentum}\nruntime: {seed: 4294967296}\n", "runtime.seed", 5, 17),
        (
            BASE.replace("[1, 8, 8]}", "[1, 8, 8], seed: 4294967296}") + "optimizer: {name: momentum}\n",
            "data.train.seed",
            3,
            58,
        ),
    ],
)
def test_seed_beyond_uint32(tmp_path: Path, text: str, key: str, line: int, column: int) -> None:
    assert problems(tmp_path, text) == [(key, line, column)]
    accepted(tmp_path, text.replace("4294967296", "4294967295"))


# --- an epoch of zero batches ------------------------------------------------------------------------------


def test_synthetic_smaller_than_one_batch(tmp_path: Path) -> None:
    text = """\
network: {kind: builtin, name: mlp}
data:
  train:
    kind: synthetic
    image_shape: [1, 8, 8]
    num_samples: 20
    batch_size: 32
optimizer: {name: momentum}
"""
    assert problems(tmp_path, text) == [("data.train.batch_size", 7, 17)]
    assert "the script trains 0 steps" in messages(tmp_path, text)[0]
    accepted(tmp_path, text.replace("batch_size: 32", "batch_size: 32\n    drop_remainder: false"))


def test_per_shard_batch_under_data_parallel(tmp_path: Path) -> None:
    # 60 samples over 4 shards: 15 per shard, per-shard batch 64 / 4 = 16 -> 0 batches
    text = """\
network: {kind: builtin, name: mlp}
data:
  train: {kind: synthetic, image_shape: [1, 8, 8], num_samples: 60, batch_size: 64}
optimizer: {name: momentum}
parallel: {mode: data_parallel, workers: 4}
"""
    assert problems(tmp_path, text) == [("data.train.batch_size", 3, 81)]
    assert "per shard (4 workers)" in messages(tmp_path, text)[0]
    accepted(tmp_path, text.replace("num_samples: 60", "num_samples: 64"))


def test_eval_smaller_than_one_batch(tmp_path: Path) -> None:
    text = BASE + (
        "  eval: {kind: synthetic, image_shape: [1, 8, 8], num_samples: 8, batch_size: 16, drop_remainder: true}\n"
        "optimizer: {name: momentum}\n"
    )
    assert problems(tmp_path, text) == [("data.eval.batch_size", 4, 79)]
    # data.eval keeps its last partial batch by default (MindSpore's default): one batch of 8
    (tmp_path / "kept.yaml").write_text(text.replace(", drop_remainder: true", ""), encoding="utf-8")
    assert load_config(tmp_path / "kept.yaml").config.data.eval.drop_remainder is None


def _mnist(directory: Path, count: int) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "train-labels-idx1-ubyte").write_bytes(
        (0x801).to_bytes(4, "big") + count.to_bytes(4, "big") + bytes(count)
    )
    (directory / "train-images-idx3-ubyte").write_bytes((0x803).to_bytes(4, "big") + count.to_bytes(4, "big"))


def _cifar(directory: Path, files: dict[str, int]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, records in files.items():
        (directory / name).write_bytes(bytes(3073 * records))


def test_mnist_sample_count_from_the_idx_header(tmp_path: Path) -> None:
    _mnist(tmp_path / "mnist", 50)
    text = """\
network: {kind: builtin, name: lenet5}
data:
  train: {kind: mnist, path: mnist, batch_size: 64}
optimizer: {name: momentum}
"""
    assert problems(tmp_path, text) == [("data.train.batch_size", 3, 49)]
    assert "50 samples (the MNIST train label files hold 50 samples)" in messages(tmp_path, text)[0]
    _mnist(tmp_path / "mnist", 64)
    accepted(tmp_path, text)


def test_cifar10_sample_count_from_file_sizes(tmp_path: Path) -> None:
    _cifar(tmp_path / "c", {"data_batch_1.bin": 10, "data_batch_2.bin": 10, "test_batch.bin": 100})
    text = """\
network: {kind: builtin, name: lenet5}
data:
  train: {kind: cifar10, path: c, batch_size: 32}
optimizer: {name: momentum}
"""
    assert problems(tmp_path, text) == [("data.train.batch_size", 3, 47)]
    assert "20 samples" in messages(tmp_path, text)[0]
    accepted(tmp_path, text.replace("path: c,", "path: c, usage: test,"))


def test_image_folder_file_count_and_num_samples_cap(tmp_path: Path) -> None:
    for label in ("a", "b"):
        (tmp_path / "f" / label).mkdir(parents=True)
        for i in range(20):
            (tmp_path / "f" / label / f"{i}.jpg").write_bytes(b"")
    text = """\
network: {kind: builtin, name: lenet5, num_classes: 2}
data:
  train:
    kind: image_folder
    path: f
    batch_size: 32
    num_samples: 16
    transforms: {resize: [32, 32]}
optimizer: {name: momentum}
"""
    assert problems(tmp_path, text) == [("data.train.batch_size", 6, 17)]
    assert "num_samples caps it at 16" in messages(tmp_path, text)[0]
    accepted(tmp_path, text.replace("num_samples: 16", "num_samples: 40"))


def test_empty_image_folder_class(tmp_path: Path) -> None:
    (tmp_path / "f" / "a").mkdir(parents=True)
    text = """\
network: {kind: builtin, name: lenet5, num_classes: 2}
data:
  train: {kind: image_folder, path: f, transforms: {resize: [32, 32]}}
optimizer: {name: momentum}
"""
    assert problems(tmp_path, text) == [("data.train", 3, 10)]
    assert "data.train is empty" in messages(tmp_path, text)[0]


def test_star_import_module_is_not_said_to_lack_the_name(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("from .impl import *\n")
    (tmp_path / "pkg" / "impl.py").write_text("def Net():\n    pass\n")
    text = BASE.replace("{kind: builtin, name: mlp}", "{kind: import, factory: 'pkg:Net'}")
    text += "optimizer: {name: momentum}\n"
    accepted(tmp_path, text)
    (tmp_path / "pkg" / "__init__.py").write_text("from .impl import Other\n")
    assert problems(tmp_path, text) == [("network.factory", 1, 34)]


# --- keyword arguments against the called object's signature (read from source, never imported) -----------

FACTORIES = """\
def make_data(num=64, size=32, *, seed=0):
    pass


class Net:
    def __init__(self, width, depth=2):
        pass


class Inherited(Base):
    pass


def open_ended(a, **rest):
    pass


def _impl(size):
    pass


assigned = _impl
"""


@pytest.mark.parametrize(
    ("network", "data_kwargs", "expected"),
    [
        ("{kind: import, factory: 'lib:Net', kwargs: {width: 1, detph: 3}}", "{sise: 1}", True),
        ("{kind: import, factory: 'lib:Net', kwargs: {width: 1, depth: 3}}", "{size: 1, seed: 2}", False),
    ],
)
def test_kwargs_the_signature_does_not_take(
    tmp_path: Path, network: str, data_kwargs: str, expected: bool
) -> None:
    (tmp_path / "lib.py").write_text(FACTORIES)
    text = f"""\
network: {network}
data:
  train: {{kind: import, factory: 'lib:make_data', image_shape: [1, 8, 8], kwargs: {data_kwargs}}}
optimizer: {{name: momentum}}
"""
    if not expected:
        accepted(tmp_path, text)
        return
    assert problems(tmp_path, text) == [("network.kwargs.detph", 1, 71), ("data.train.kwargs.sise", 3, 90)]
    found = messages(tmp_path, text)
    assert (
        found[0] == "Net() takes no keyword argument 'detph' (it takes: depth, width); did you mean 'depth'?"
    )
    assert (
        found[1]
        == "make_data() takes no keyword argument 'sise' (it takes: num, seed, size); did you mean 'size'?"
    )


@pytest.mark.parametrize("factory", ["Inherited", "open_ended", "assigned"])
def test_signatures_that_cannot_be_read_are_not_judged(tmp_path: Path, factory: str) -> None:
    (tmp_path / "lib.py").write_text(FACTORIES)
    text = f"""\
network: {{kind: import, factory: 'lib:{factory}', kwargs: {{anything: 1}}}}
data:
  train: {{kind: synthetic, image_shape: [1, 8, 8]}}
optimizer: {{name: momentum}}
"""
    accepted(tmp_path, text)


# --- data.class_names (predict.py prints them) ------------------------------------------------------


def test_class_names_one_per_class_each_once(tmp_path: Path) -> None:
    base = """\
network: {kind: builtin, name: mlp, num_classes: 3}
data:
  class_names: NAMES
  train: {kind: synthetic, image_shape: [1, 8, 8], num_classes: 3}
optimizer: {name: momentum}
"""
    accepted(tmp_path, base.replace("NAMES", "[cat, dog, bird]"))
    assert problems(tmp_path, base.replace("NAMES", "[cat, dog]")) == [("data.class_names", 3, 16)]
    assert messages(tmp_path, base.replace("NAMES", "[cat, dog]")) == [
        "2 names for network.num_classes 3: give one per class"
    ]
    assert messages(tmp_path, base.replace("NAMES", "[cat, dog, cat]")) == [
        "cat named twice: each class needs its own name"
    ]
