"""The plan of predict.py: which reader, which names it imports, what --evaluate and --checkpoint take."""

from __future__ import annotations

from pathlib import Path

import pytest

from mscodegen.catalog.literals import Call, Name
from mscodegen.config.load import load_config
from mscodegen.output.generate import plans_of
from mscodegen.plan.imports import Import
from mscodegen.plan.predict import PredictPlan, build_predict

from conftest import REPO


def predict_plan(config: Path, train_script: str = "train_model.py") -> PredictPlan:
    loaded = load_config(config)
    shared, _ = plans_of(loaded, REPO / "generated" / loaded.name)
    plan = build_predict(loaded.config, shared, train_script)
    assert isinstance(plan, PredictPlan)
    return plan


def example(name: str) -> PredictPlan:
    return predict_plan(REPO / "examples" / f"{name}.yaml")


@pytest.mark.parametrize(
    ("name", "reader"),
    [
        ("lenet_digits", "gray_unit"),  # the digits loader yields [0, 1] floats
        ("mnist_quickstart", "gray"),  # MnistDataset yields HxWx1 uint8
        ("digits_augment", "decode"),  # ImageFolderDataset(decode=True)
        ("diabetes_csv", "csv"),
        ("diabetes", "array"),  # an imported factory: samples as it yields them
        ("resnet", "array"),  # synthetic
    ],
)
def test_the_reader_follows_the_reference_source(name: str, reader: str) -> None:
    assert example(name).reader == reader


def test_the_network_and_dataset_come_from_the_training_script() -> None:
    plan = example("lenet_digits")
    assert plan.train_module == "train_model"
    assert plan.network == Call.of("LeNet5", num_classes=10, in_channels=1)
    assert plan.dataset.func == "create_dataset" and plan.reference == "eval"
    names = {(i.module, i.name) for i in plan.from_train}
    assert names == {
        ("train_model", "LeNet5"),
        ("train_model", "create_dataset"),
        ("train_model", "OUTPUT_DIR"),
        # --checkpoint latest: where training writes, and its config's hash
        ("checkpoints", "CHECKPOINT_DIR"),
        ("checkpoints", "CONFIG_SHA256"),
        ("checkpoints", "INFO"),
    }
    native = predict_plan(REPO / "examples" / "lenet_digits.yaml", "train_native.py")
    assert {i.module for i in native.from_train} == {"train_native", "checkpoints"}


def test_latest_only_where_checkpoints_carry_the_config_hash() -> None:
    assert example("lenet_digits").latest  # callbacks.checkpoint, resumable
    quickstart = example("mnist_quickstart")
    assert not quickstart.latest and quickstart.data_dir  # no checkpoints; DATA_DIR: --data-dir
    assert "DATA_DIR" in {i.name for i in quickstart.from_train}


def test_evaluate_uses_the_training_metrics_and_the_eval_cell_training_used() -> None:
    plan = example("lenet_digits")
    assert [m.key for m in plan.metrics] == ["accuracy", "loss"] and plan.eval_cell is None
    amp = example("lenet_amp_accum")  # O2: the output is float16, cast as the training's evaluation does
    assert amp.amp_level == "O2"
    assert amp.eval_cell == Call.of("nn.WithEvalCell", Name("network"), Name("loss_fn"), add_cast_fp32=True)
    columns = example("two_input")  # two inputs: the script's own eval cell, imported
    assert columns.eval_cell == Call.of("WithEvalColumns", Name("network"), Name("loss_fn"))
    assert Import("train_model", "WithEvalColumns") in columns.from_train
    assert columns.inputs == ("image", "features")


def test_without_data_eval_the_train_pipeline_is_the_reference_and_nothing_evaluates(tmp_path: Path) -> None:
    config = tmp_path / "no_eval.yaml"
    config.write_text(
        "network: {kind: builtin, name: mlp}\n"
        "data:\n  train: {kind: synthetic, image_shape: [1, 8, 8]}\n"
        "optimizer: {name: momentum}\n",
        encoding="utf-8",
    )
    plan = predict_plan(config)
    assert plan.reference == "train" and plan.loss is None and plan.metrics == ()
    assert Import("mindspore", "Model") not in plan.imports
    assert Import("mindspore", "nn") not in plan.imports  # the metrics' and loss's module: --evaluate only
    assert Import("mindspore", "nn") in example("lenet_digits").imports


def test_classes_and_values() -> None:
    assert example("lenet_digits").classes == 10 and example("lenet_digits").top_k == 3
    assert example("diabetes_csv").classes is None  # MSELoss: the outputs are values
    assert example("diabetes_csv").csv_columns == (
        "age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6"
    )  # fmt: skip
    assert example("digits_augment").folder_classes  # ImageFolderDataset's folders name the classes


def test_class_names_from_the_config(tmp_path: Path) -> None:
    text = (REPO / "examples" / "lenet_digits.yaml").read_text(encoding="utf-8")
    names = [f"digit {k}" for k in range(10)]
    config = tmp_path / "named.yaml"
    config.write_text(text.replace("data:\n", f"data:\n  class_names: {names}\n", 1), encoding="utf-8")
    plan = predict_plan(config)
    assert plan.class_names == tuple(names) and not plan.folder_classes


def test_a_feature_costs_lines_only_when_used() -> None:
    """Pay for what you use: PIL only for image files, csv rows' names only for csv configs."""
    assert Import("PIL", "Image") in example("lenet_digits").imports
    assert Import("PIL", "Image") not in example("diabetes_csv").imports
    assert Import("mindspore.dataset", "vision") in example("digits_augment").imports
    assert example("lenet_digits").csv_columns == ()
    assert Import("mindspore", "amp") not in example("lenet_digits").imports


def test_an_undecoded_folder_gets_the_files_bytes(tmp_path: Path) -> None:
    """decode: false: the reference pipeline starts with the op that decodes, so predict.py feeds it bytes."""
    import yaml

    config = yaml.safe_load((REPO / "examples" / "digits_augment.yaml").read_text())
    for split in ("train", "eval"):
        config["data"][split]["path"] = str(REPO / "examples" / "data" / "digits_png")
    image = config["data"]["train"]["transforms"]["image"]
    image[0] = {"RandomCropDecodeResize": image[0]["RandomResizedCrop"]}
    config["data"]["train"]["decode"] = False
    path = tmp_path / "undecoded.yaml"
    path.write_text(yaml.safe_dump(config))
    # data.eval (decode: true, train's deterministic part: a Resize) is the reference: it decodes
    decoded = predict_plan(path)
    assert decoded.reader == "decode" and Import("mindspore.dataset", "vision") in decoded.imports
    del config["data"]["eval"]
    path.write_text(yaml.safe_dump(config))
    plan = predict_plan(path)
    assert (plan.reference, plan.reader, plan.images) == ("train", "bytes", True)
    assert Import("mindspore.dataset", "vision") not in plan.imports  # the pipeline decodes, not predict.py
