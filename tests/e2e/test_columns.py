"""Named data columns (issue 10): data.inputs and data.labels, an imported source's `columns`, an
imported loss; `validate` locates every mismatch; both variants train a two-input network identically."""

from __future__ import annotations

from pathlib import Path

import pytest

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.output.generate import generate
from mscodegen.run.parity import step_differences

from conftest import assert_identical, kept_runs, run_both, shipped_parity

PARTS = """\
import numpy as np
from mindspore import dataset as ds
from mindspore import nn, ops


def rows(count=40, order=("image", "features", "label")):
    rng = np.random.default_rng(5)
    columns = {
        "image": rng.standard_normal((count, 1, 4, 4)).astype(np.float32),
        "features": rng.standard_normal((count, 3)).astype(np.float32),
        "label": rng.integers(0, 4, size=count).astype(np.int32),
        "sample_weight": rng.uniform(0.5, 2.0, size=count).astype(np.float32),
    }
    return ds.NumpySlicesDataset({name: columns[name] for name in order}, shuffle=False)


class TwoInputs(nn.Cell):
    def __init__(self, num_classes=4):
        super().__init__()
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(16 + 3, num_classes)

    def construct(self, image, features):
        return self.fc(ops.concat((self.flatten(image), features), axis=1))


def my_loss(reduction="mean"):
    return nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction=reduction)


class WeightedLoss(nn.Cell):
    # per-sample cross entropy times the row's sample_weight column, averaged

    def __init__(self):
        super().__init__()
        self.ce = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="none")

    def construct(self, logits, label, sample_weight):
        return (self.ce(logits, label) * sample_weight).mean()
"""

TWO_INPUTS = """\
network: {kind: import, factory: 'parts:TwoInputs'}
data:
  inputs: [image, features]
  labels: [label]
  train: {kind: import, factory: 'parts:rows', columns: [image, features, label], batch_size: 8}
  eval: {kind: import, factory: 'parts:rows', columns: [image, features, label], batch_size: 8, shuffle: false}
optimizer: {name: momentum, lr: 0.05}
train: {epochs: 2, log_every_steps: 2}
"""


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "parts.py").write_text(PARTS)
    path = tmp_path / "cfg.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def problems(tmp_path: Path, text: str) -> list[tuple[str, int | None, int | None, str]]:
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, text))
    return [(p.path, p.line, p.column, p.message) for p in info.value.problems]


def scripts(tmp_path: Path, text: str) -> dict[str, str]:
    texts = generate(load_config(write(tmp_path, text)), tmp_path / "out")
    return {name: text for name, text in texts.items() if name.endswith(".py")}


# --- validate --------------------------------------------------------------------------------------


def test_an_unknown_input_is_located_with_did_you_mean(tmp_path: Path) -> None:
    found = problems(tmp_path, TWO_INPUTS.replace("inputs: [image, features]", "inputs: [image, featurs]"))
    located = [(p, line, col) for p, line, col, _ in found]
    assert ("data.inputs[1]", 3, 19) in located
    message = next(m for p, _, _, m in found if p == "data.inputs[1]")
    assert (
        "'featurs' is not a column of data.train (import), whose columns are image, features, label"
        in message
    )
    assert "did you mean 'features'?" in message


def test_a_column_that_feeds_nothing_is_located_at_the_source_columns(tmp_path: Path) -> None:
    found = problems(tmp_path, TWO_INPUTS.replace("inputs: [image, features]", "inputs: [image]"))
    assert [(p, line, col) for p, line, col, _ in found] == [
        ("data.train.columns", 5, 57),
        ("data.eval.columns", 6, 56),
    ]
    assert (
        "data.train (import) yields 3 columns (image, features, label) but data.inputs + data.labels name 2"
        in (found[0][3])
    )
    assert "features would feed neither the network nor the loss" in found[0][3]


def test_the_source_order_must_be_inputs_then_labels(tmp_path: Path) -> None:
    text = TWO_INPUTS.replace("inputs: [image, features]", "inputs: [features, image]")
    found = problems(tmp_path, text)
    assert [p for p, _, _, _ in found] == ["data.train.columns", "data.eval.columns"]
    assert "list them in the same order" in found[0][3]


def test_two_labels_need_an_imported_loss_and_only_the_loss_metric(tmp_path: Path) -> None:
    text = (
        TWO_INPUTS.replace("labels: [label]", "labels: [label, sample_weight]")
        .replace("columns: [image, features, label]", "columns: [image, features, label, sample_weight]")
        .replace("train: {epochs: 2", "eval: {metrics: [{name: loss}, {name: accuracy}]}\ntrain: {epochs: 2")
    )
    found = problems(tmp_path, text)
    assert [(p, line, col) for p, line, col, _ in found] == [
        ("data.labels", 4, 11),
        ("eval.metrics[1]", 8, 32),
    ]
    assert (
        "2 label columns (label, sample_weight) but SoftmaxCrossEntropyWithLogits takes one: use your own loss"
        in (found[0][3])
    )
    assert "only the loss is evaluated" in found[1][3] and "(accuracy) is not supported yet" in found[1][3]


def test_two_inputs_need_an_imported_network_and_float32(tmp_path: Path) -> None:
    text = TWO_INPUTS.replace(
        "network: {kind: import, factory: 'parts:TwoInputs'}",
        "network: {kind: builtin, name: mlp, input_shape: [1, 4, 4], num_classes: 4}\namp: {level: O2}",
    )
    found = problems(tmp_path, text)
    messages = {p: m for p, _, _, m in found}
    assert set(messages) == {"data.inputs", "amp.level"}
    assert "the builtin network mlp takes one: use your own network" in messages["data.inputs"]
    assert messages["amp.level"] == (
        "amp.level O2 takes one network input and one label column; data.inputs and data.labels name 2 and 1: "
        "use amp.level O0 with several columns"
    )


def test_a_pipeline_for_an_unknown_column_is_located(tmp_path: Path) -> None:
    text = TWO_INPUTS.replace(
        "columns: [image, features, label], batch_size: 8}",
        "columns: [image, features, label], batch_size: 8, transforms: {featuers: [{TypeCast: {data_type: float32}}]}}",
        1,
    )
    found = problems(tmp_path, text)
    assert [p for p, _, _, _ in found] == ["data.train.transforms.featuers"]
    assert "did you mean 'features'?" in found[0][3]


def test_an_imported_loss_is_checked_against_its_module(tmp_path: Path) -> None:
    found = problems(
        tmp_path, TWO_INPUTS + "loss: {kind: import, path: 'parts:my_los', kwargs: {reduce: sum}}\n"
    )
    assert [(p, line) for p, line, _, _ in found] == [("loss.path", 9)]
    assert "defines no top-level 'my_los'" in found[0][3]
    found = problems(
        tmp_path, TWO_INPUTS + "loss: {kind: import, path: 'parts:my_loss', kwargs: {reduce: sum}}\n"
    )
    assert [p for p, _, _, _ in found] == ["loss.kwargs.reduce"]


# --- generated code --------------------------------------------------------------------------------


def test_loops_and_cells_name_the_columns(tmp_path: Path) -> None:
    texts = scripts(tmp_path, TWO_INPUTS + "loss: {kind: import, path: 'parts:my_loss'}\n")
    native, model = texts["train_native.py"], texts["train_model.py"]
    assert "for step_in_epoch, (image, features, label) in enumerate(batches, 1):" in native
    assert "loss = train_step(image, features, label)" in native
    assert "loss, logits, label = eval_net(image, features, label)" in native
    assert "*batch" not in native and "*batch" not in model
    for text in (native, model):
        assert "def construct(self, image, features, label):" in text
        assert "logits = self.network(image, features)" in text
        assert "from parts import my_loss" in text
    assert "WithLossColumns(network, loss_fn),\n        optimizer=optimizer," in model
    assert "eval_network=WithEvalColumns(network, loss_fn),\n        eval_indexes=[0, 1, 2]," in model


def test_a_pipeline_on_a_named_column_is_mapped(tmp_path: Path) -> None:
    text = TWO_INPUTS.replace(
        "columns: [image, features, label], batch_size: 8}",
        "columns: [image, features, label], batch_size: 8, transforms: {features: [{TypeCast: {data_type: float32}}]}}",
        1,
    )
    native = scripts(tmp_path, text)["train_native.py"]
    assert 'transforms.TypeCast(data_type=ms.float32), input_columns="features"' in native


# --- parity ----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_two_inputs_and_an_imported_loss_train_identically(tmp_path: Path) -> None:
    config = write(tmp_path, TWO_INPUTS + "loss: {kind: import, path: 'parts:my_loss'}\n")
    model, native = run_both(config, tmp_path / "run")
    assert_identical(model, native, steps=10)  # 40 rows, batch 8, 2 epochs
    assert len(model.evals) == 2


@pytest.mark.slow
def test_two_inputs_and_two_labels_train_identically(tmp_path: Path) -> None:
    """data.labels [label, sample_weight]: the imported loss gets both; evaluation reports the loss."""
    text = (
        TWO_INPUTS.replace("labels: [label]", "labels: [label, sample_weight]")
        .replace(
            "columns: [image, features, label]",
            "columns: [image, features, label, sample_weight], kwargs: {order: [image, features, label, sample_weight]}",
        )
        .replace("train: {epochs: 2", "loss: {kind: import, path: 'parts:WeightedLoss'}\ntrain: {epochs: 2")
    )
    texts = scripts(tmp_path, text)
    native, model = texts["train_native.py"], texts["train_model.py"]
    assert "for step_in_epoch, (image, features, label, sample_weight) in enumerate(batches, 1):" in native
    assert "loss, logits, label = eval_net(image, features, label, sample_weight)" in native
    assert "return self.loss_fn(logits, label, sample_weight), logits, label" in model
    model_run, native_run = run_both(tmp_path / "cfg.yaml", tmp_path / "run")
    assert_identical(model_run, native_run, steps=10)
    assert [set(e["metrics"]) for e in model_run.evals] == [{"loss"}, {"loss"}]


@pytest.mark.slow
def test_renamed_single_columns_train_identically(tmp_path: Path) -> None:
    text = """\
network: {kind: builtin, name: mlp, hidden: [8], num_classes: 4, input_shape: [1, 1, 3]}
data:
  inputs: [features]
  labels: [label]
  train: {kind: import, factory: 'parts:rows', kwargs: {order: [features, label]}, columns: [features, label], batch_size: 8}
optimizer: {name: momentum, lr: 0.05}
train: {epochs: 1, log_every_steps: 2}
"""
    texts = scripts(tmp_path, text)
    assert "for step_in_epoch, (features, label) in enumerate(batches, 1):" in texts["train_native.py"]
    model, native = run_both(tmp_path / "cfg.yaml", tmp_path / "run")
    assert_identical(model, native, steps=5)


@pytest.mark.slow
def test_two_input_example_losses_and_final_weights_are_identical(checkout: Path, tmp_path: Path) -> None:
    """examples/two_input.yaml as shipped: imported network, dataset factory and loss, three columns.
    The whole run through `mscodegen parity` in a checkout (it compares the final weights)."""
    shipped_parity(checkout, "two_input", "--steps", "100000", "--keep", str(tmp_path))
    model, native = kept_runs(tmp_path)
    assert step_differences(model.steps, native.steps) == []
    assert [r["loss"] for r in model.steps] == [r["loss"] for r in native.steps]
    assert len(model.steps) == 2 * (1438 // 32)  # 1,797 digits, 80% train, batch 32, partial dropped
    assert [e["metrics"] for e in model.evals] == [e["metrics"] for e in native.evals]
    assert set(model.evals[-1]["metrics"]) == {"accuracy", "loss"}
    assert model.evals[-1]["metrics"]["accuracy"] > 0.5  # it learned: 10 classes, chance is 0.1


@pytest.mark.slow
def test_validate_run_names_the_configured_columns_when_a_factory_yields_others(tmp_path: Path) -> None:
    """A factory yielding three columns where the config names two (no `columns:`): caught by running."""
    from mscodegen.run.preflight import run_preflight

    text = """\
network: {kind: builtin, name: mlp, hidden: [8], num_classes: 4, input_shape: [1, 4, 4]}
data:
  train: {kind: import, factory: 'parts:rows', batch_size: 8}
optimizer: {name: momentum, lr: 0.05}
"""
    found = run_preflight(load_config(write(tmp_path, text)))
    assert [p.path for p in found] == ["data.train", "data.train"]  # one per variant: their errors differ
    assert all("data.train must yield 2 columns (image, label) per row" in p.message for p in found)


def test_two_columns_python_reads_as_one_name_are_located(tmp_path: Path) -> None:
    """Columns become variables: Python NFKC-normalizes identifiers, so 'ｆeatures' is 'features'."""
    text = TWO_INPUTS.replace("inputs: [image, features]", "inputs: [features, \uff46eatures]")
    found = problems(tmp_path, text)
    messages = [m for p, _, _, m in found if p == "data.inputs[1]"]
    assert any("is named twice in data.inputs and data.labels (as Python reads it)" in m for m in messages)
