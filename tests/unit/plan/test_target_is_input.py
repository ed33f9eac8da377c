"""data.labels naming an input column (`labels: [image]`): the target is the input, as an autoencoder trains."""

from __future__ import annotations

from pathlib import Path

import pytest

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import LoadedConfig, load_config
from mscodegen.output.generate import generate, plans_of
from mscodegen.plan.data import LabelCast, Project

AUTOENCODER = """\
network: {kind: builtin, name: mlp, num_classes: 64}
data:
  inputs: [image]
  labels: [image]
  train: {kind: %s}
  eval: {kind: %s}
loss: {name: %s}
optimizer: {name: adam}
"""
MNIST = "mnist, path: mnist"


def load(tmp_path: Path, text: str) -> LoadedConfig:
    (tmp_path / "mnist").mkdir(exist_ok=True)
    for name in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"):
        (tmp_path / "mnist" / name).write_bytes(b"")
    path = tmp_path / "cfg.yaml"
    path.write_text(text, encoding="utf-8")
    return load_config(path)


def problems(tmp_path: Path, text: str) -> list[tuple[str, int | None, str]]:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, text)
    return [(p.path, p.line, p.message) for p in info.value.problems]


def test_the_label_column_is_dropped_and_the_loss_gets_the_image(tmp_path: Path) -> None:
    loaded = load(tmp_path, AUTOENCODER % ("digits", "digits, split: test", "MSELoss"))
    plan = plans_of(loaded, tmp_path / "out", ("native",))[1]["native"]
    columns = plan.shared.columns
    assert (columns.batch, columns.unpack, columns.label_args) == ("image", "image,", "image")
    assert columns.own_cells
    (fn,) = plan.shared.dataset_functions
    assert [s.columns for s in fn.steps if isinstance(s, Project)] == [("image",)]
    files = generate(loaded, tmp_path / "out")
    native, model = files["train_native.py"], files["train_model.py"]
    assert "return self.loss_fn(self.network(image), image)" in native
    assert "for step_in_epoch, (image,) in enumerate(batches, 1):" in native
    assert "loss = train_step(image)" in native
    assert "WithLossColumns(network, loss_fn)," in model
    assert 'dataset = dataset.project(["image"])' in model


def test_mnist_labels_are_not_cast_when_they_go_unread(tmp_path: Path) -> None:
    loaded = load(tmp_path, AUTOENCODER % (MNIST, MNIST, "L1Loss"))
    plan = plans_of(loaded, tmp_path / "out", ("model",))[1]["model"]
    (fn,) = plan.shared.dataset_functions
    assert not any(isinstance(s, LabelCast) for s in fn.steps)
    assert isinstance(fn.steps[1], Project)  # before the image ops: the labels are never mapped


def test_a_classification_loss_cannot_take_the_input(tmp_path: Path) -> None:
    found = problems(tmp_path, AUTOENCODER % ("digits", "digits, split: test", "CrossEntropyLoss"))
    assert found == [
        (
            "loss.name",
            7,
            "data.labels names an input column (image): the target is the input, which CrossEntropyLoss "
            "does not take (it takes class indices); use MSELoss, L1Loss, SmoothL1Loss, HuberLoss or "
            "BCEWithLogitsLoss",
        )
    ]


def test_an_input_named_twice_is_still_refused(tmp_path: Path) -> None:
    text = AUTOENCODER.replace("inputs: [image]", "inputs: [image, image]")
    found = problems(tmp_path, text % ("digits", "digits, split: test", "MSELoss"))
    twice = "column 'image' is named twice in data.inputs and data.labels (as Python reads it)"
    assert ("data.inputs[1]", 3, twice) in found
