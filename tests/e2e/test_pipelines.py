"""Per-column transform pipelines (issue 10): validation located at the entry, rendering, eval derivation,
the buffered shuffle, and parity with random augmentation on the digits ImageFolder example."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.run.parity import generate_both, step_differences

from conftest import REPO, function_source, kept_runs, run_both, shipped_parity

EXAMPLE = REPO / "examples" / "digits_augment.yaml"

HEAD = """\
network: {kind: builtin, name: mlp, num_classes: 10, hidden: [8]}
optimizer: {name: momentum}
data:
  train:
    kind: digits
"""


def problems(tmp_path: Path, text: str) -> list[tuple[str, int | None, int | None, str]]:
    path = tmp_path / "cfg.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return [(p.path, p.line, p.column, p.message) for p in info.value.problems]


def accepted(tmp_path: Path, text: str) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text(text, encoding="utf-8")
    load_config(path)


def test_bad_names_kwargs_and_values_are_located_with_did_you_mean(tmp_path):
    text = HEAD + textwrap.indent(
        textwrap.dedent("""\
        transforms:
          image:
            - RandomResizedCrp: {size: 8}
            - RandomHorizontalFlip: {probb: 0.5}
            - Resize: {size: [8, 8], interpolation: BILINEARR}
            - HWC2CHW: {}
          label:
            - TypeCast: {data_type: int33}
          lable: []
        """),
        "    ",
    )
    found = problems(tmp_path, text)
    assert [(p, line, col) for p, line, col, _ in found] == [
        ("data.train.transforms.image[0]", 8, 11),
        ("data.train.transforms.image[1]", 9, 11),
        ("data.train.transforms.image[2]", 10, 11),
        ("data.train.transforms.label[0]", 13, 11),
        ("data.train.transforms.lable", 14, 7),
    ]
    messages = [m for *_, m in found]
    assert "did you mean RandomResizedCrop" in messages[0]
    assert "did you mean prob?" in messages[1]
    assert "did you mean BILINEAR?" in messages[2]
    assert "int33" in messages[3] and "int32" in messages[3]


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ("Lookup: {unknown_token: '<unk>'}", "a config cannot give"),  # needs a Vocab object
        ("MixUpBatch: {alpha: 1.0}", "mixes whole batches"),
        ("{Resize: {size: 8}, HWC2CHW: {}}", "one-key mapping"),
        ("RandomHorizontalFlip: 0.5", "mapping of keyword: value"),
        ("Resize: [8, 8]", "mapping of keyword: value"),
        ("Rescale: {rescale: 0.5}", "missing required argument `shift`"),
    ],
)
def test_entries_a_config_cannot_build_are_rejected(tmp_path, entry, words):
    text = HEAD + f"    transforms:\n      image:\n        - {entry}\n        - HWC2CHW: {{}}\n"
    ((path, line, _col, message),) = problems(tmp_path, text)
    assert (path, line) == ("data.train.transforms.image[0]", 8)
    assert words in message


def test_python_only_op_needs_one_worker(tmp_path):
    text = HEAD + (
        "    num_workers: 2\n    transforms:\n      image:\n        - HWC2CHW: {}\n"
        "        - RandomErasing: {prob: 0.5}\n"
    )
    ((path, _line, _col, message),) = problems(tmp_path, text)
    assert path == "data.train"
    assert "RandomErasing" in message and "num_workers: 1" in message


def test_python_only_ops_get_one_line_saying_why_one_thread(tmp_path):
    """The note sits above the map that runs them (measured by bench/pipeline.py), and only there."""
    ops = "    transforms:\n      image:\n        - HWC2CHW: {}\n"
    path = tmp_path / "erasing.yaml"
    path.write_text(HEAD + ops + "        - RandomErasing: {prob: 0.5}\n")
    for script in generate_both(path, tmp_path / "erasing").values():
        train = function_source(script.read_text(), "create_train_dataset")
        note = "    # RandomErasing runs in Python: one thread keeps it reproducible, more were no faster\n"
        assert note + "    image_ops = [" in train
        assert "num_parallel_workers=1" in train
    path.write_text(HEAD + ops)
    for script in generate_both(path, tmp_path / "plain").values():
        assert "runs in Python" not in script.read_text()


def test_builtin_network_needs_chw(tmp_path):
    text = HEAD + "    transforms:\n      image:\n        - Resize: {size: [8, 8]}\n"
    ((path, line, _col, message),) = problems(tmp_path, text)
    assert (path, line) == ("data.train.transforms.image", 8)
    assert "HWC2CHW" in message


EVAL_NORMALIZE = """\
network: {kind: builtin, name: mlp, num_classes: 10, hidden: [8]}
optimizer: {name: momentum}
data:
  train:
    kind: digits
    transforms: %s
  eval:
    kind: digits
    split: test
    transforms: %s
"""


@pytest.mark.parametrize(
    ("train", "evaluate"),
    [
        ("{normalize: {mean: [0.5], std: [0.5]}}", "{resize: [8, 8]}"),
        ("{image: [{Normalize: {mean: [0.5], std: [0.5]}}, {HWC2CHW: {}}]}", "{image: [{HWC2CHW: {}}]}"),
    ],
    ids=["fixed", "pipeline"],
)
def test_eval_without_train_normalization_is_reported(tmp_path, train, evaluate):
    ((path, line, _col, message),) = problems(tmp_path, EVAL_NORMALIZE % (train, evaluate))
    assert (path, line) == ("data.eval.transforms", 10)
    assert "normalizes" in message


def test_derived_eval_pipeline_keeps_normalization(tmp_path):
    text = EVAL_NORMALIZE.replace("    transforms: %s\n", "", 1).replace("transforms: %s", "batch_size: 8")
    text = text.replace(
        "    kind: digits\n  eval",
        "    kind: digits\n    transforms:\n      image: [{RandomHorizontalFlip: {}}, "
        "{Normalize: {mean: [0.5], std: [0.5]}}, {HWC2CHW: {}}]\n  eval",
    )
    accepted(tmp_path, text)


def test_bare_op_name_means_no_arguments(tmp_path):
    accepted(tmp_path, HEAD + "    transforms:\n      image: [RandomHorizontalFlip, HWC2CHW]\n")


def test_fixed_form_still_accepted(tmp_path):
    accepted(tmp_path, HEAD + "    transforms: {resize: [8, 8], normalize: {mean: [0.5], std: [0.5]}}\n")


def test_scripts_spell_ops_enums_dtypes_and_the_buffered_shuffle(tmp_path):
    scripts = generate_both(EXAMPLE, tmp_path / "scripts")
    for text in (scripts["model"].read_text(), scripts["native"].read_text()):
        train = function_source(text, "create_train_dataset")
        evaluate = function_source(text, "create_eval_dataset")
        assert (
            "vision.RandomResizedCrop(size=16, scale=[0.6, 1.0], interpolation=vision.Inter.BILINEAR)"
            in train
        )
        assert "vision.RandomHorizontalFlip(prob=0.5)" in train
        assert "transforms.TypeCast(data_type=ms.int32)" in train
        assert "ImageFolderDataset(" in train and "str(data_dir), decode=True, shuffle=False" in train
        # the buffered shuffle comes after the maps, before batch
        assert train.index('input_columns="label"') < train.index("dataset.shuffle(buffer_size=40)")
        assert train.index("dataset.shuffle(buffer_size=40)") < train.index("dataset.batch(16")
        # eval: train's deterministic part; RandomResizedCrop(16) becomes Resize([16, 16])
        assert "vision.Resize(size=[16, 16])" in evaluate
        assert "Random" not in evaluate
        assert "vision.Normalize(mean=[0.5, 0.5, 0.5], std=[0.5, 0.5, 0.5])" in evaluate
        assert "shuffle(" not in evaluate.replace("shuffle=False", "")


AUGMENTED_EPOCHS = """\
import sys
import mindspore as ms
import numpy as np
sys.path.insert(0, sys.argv[1])
import train_native
ms.set_seed(1)
it = train_native.create_train_dataset(train_native.DATA_DIR).create_tuple_iterator(num_epochs=2, output_numpy=True)
epochs = []
for _ in range(2):
    epochs.append(sorted(image.tobytes() for images, _labels in it for image in images))
import hashlib
print(hashlib.sha256(b"".join(epochs[0] + epochs[1])).hexdigest(), "same" if epochs[0] == epochs[1] else "different")
"""


@pytest.mark.slow
def test_augmentation_differs_per_epoch_and_repeats_per_seed(tmp_path):
    """80 images in 5 full batches: without augmentation both epochs hold the same images."""
    scripts = generate_both(EXAMPLE, tmp_path / "scripts")
    runs = [
        subprocess.run(
            [sys.executable, "-c", AUGMENTED_EPOCHS, str(scripts["native"].parent)],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout.split()[-2:]
        for _ in range(2)
    ]
    assert runs[0][1] == "different"
    assert runs[0] == runs[1]  # the same seed gives the same augmented images


@pytest.mark.slow
def test_random_augmentation_trains_identically(checkout, tmp_path):
    """examples/digits_augment.yaml, two epochs as shipped (`mscodegen parity` in a checkout)."""
    shipped_parity(checkout, "digits_augment", "--epochs", "2", "--steps", "100000", "--keep", str(tmp_path))
    model, native = kept_runs(tmp_path)
    assert len(model.steps) == 10
    assert step_differences(model.steps, native.steps) == []
    assert [e["metrics"] for e in model.evals] == [e["metrics"] for e in native.evals]
    assert all(np.isfinite(r["loss"]) for r in model.steps)


BATCH = """\
network: {kind: builtin, name: mlp, num_classes: 10, hidden: [8]}
optimizer: {name: momentum}
loss: %s
data:
  train:
    kind: digits
    batch_size: %d
    num_workers: %d
    batch_transforms:
      - %s
  eval:
    kind: digits
    split: test
"""
MIXUP = "mindcv.Mixup: {label_smoothing: 0.1, num_classes: %d}"


@pytest.mark.parametrize(
    ("loss", "batch", "workers", "entry", "expected", "words"),
    [
        ("{name: NLLLoss}", 8, 1, MIXUP % 10, ("loss.name", 3), "soft"),
        ("{kwargs: {sparse: true}}", 8, 1, MIXUP % 10, ("loss.kwargs.sparse", 3), "sparse must be false"),
        (
            "{}",
            8,
            1,
            MIXUP % 4,
            ("data.train.batch_transforms[0].mindcv.Mixup.num_classes", 10),
            "10 classes",
        ),
        ("{}", 7, 1, MIXUP % 10, ("data.train.batch_size", 7), "even"),
        ("{}", 8, 2, MIXUP % 10, ("data.train", 6), "num_workers: 1"),
        (
            "{}",
            8,
            1,
            "MixUp: {batch_size: 8, alpha: 1.0}",
            ("data.train.batch_transforms[0]", 10),
            "mislabels",
        ),
        ("{}", 8, 1, "RandomHorizontalFlip: {}", ("data.train.batch_transforms[0]", 10), "one sample"),
        ("{}", 8, 1, "MixUpBach: {}", ("data.train.batch_transforms[0]", 10), "did you mean MixUpBatch"),
    ],
    ids=["loss", "sparse", "classes", "odd-batch", "workers", "vision-MixUp", "sample-op", "typo"],
)
def test_batch_transform_problems_are_located(tmp_path, loss, batch, workers, entry, expected, words):
    found = problems(tmp_path, BATCH % (loss, batch, workers, entry))
    assert [(p, line) for p, line, _c, _m in found] == [expected]
    assert words in found[0][3]


def test_batch_transforms_only_on_train(tmp_path):
    text = (BATCH % ("{}", 8, 1, MIXUP % 10)) + "    batch_transforms: [{MixUpBatch: {alpha: 1.0}}]\n"
    assert [(p, line) for p, line, _c, _m in problems(tmp_path, text)] == [("data.eval.batch_transforms", 14)]


MIXUP_BATCH = """\
runtime: {seed: 2}
network: {kind: builtin, name: lenet5, num_classes: 10}
optimizer: {name: momentum, lr: 0.05}
train: {epochs: 2}
data:
  train:
    kind: image_folder
    path: %s
    batch_size: 16
    transforms:
      image: [{RandomResizedCrop: {size: 16}}, {Rescale: {rescale: 0.0039, shift: 0.0}}, HWC2CHW]
    batch_transforms:
      - MixUpBatch: {alpha: 0.4}
      - CutMixBatch: {image_batch_format: NCHW, alpha: 1.0, prob: 0.5}
  eval:
    kind: image_folder
    path: %s
    batch_size: 16
    drop_remainder: false
""" % (((REPO / "examples" / "data" / "digits_png").as_posix(),) * 2)


def _mixup_batch_config(tmp_path: Path) -> Path:
    path = tmp_path / "mixup_batch.yaml"
    path.write_text(MIXUP_BATCH, encoding="utf-8")
    return path


def test_mixup_batch_one_hot_labels_before_batch(tmp_path):
    scripts = generate_both(_mixup_batch_config(tmp_path), tmp_path / "scripts")
    text = scripts["native"].read_text()
    train = function_source(text, "create_train_dataset")
    evaluate = function_source(text, "create_eval_dataset")
    assert train.index("transforms.OneHot(num_classes=10)") < train.index("dataset.batch(16")
    assert train.index("dataset.batch(16") < train.index("vision.MixUpBatch(alpha=0.4)")
    assert "vision.CutMixBatch(image_batch_format=vision.ImageBatchFormat.NCHW, alpha=1.0, prob=0.5)" in train
    assert "transforms.OneHot(num_classes=10), transforms.TypeCast(ms.float32)" in evaluate
    assert "nn.SoftmaxCrossEntropyWithLogits(sparse=False" in text


@pytest.mark.slow
def test_mixup_batch_and_cutmix_batch_train_identically(tmp_path):
    model, native = run_both(_mixup_batch_config(tmp_path), tmp_path / "run")
    assert len(model.steps) == 10
    assert step_differences(model.steps, native.steps) == []
    assert [e["metrics"] for e in model.evals] == [e["metrics"] for e in native.evals]


@pytest.mark.slow
def test_a_tuple_only_parameter_gets_a_tuple_that_mindspore_accepts():
    """`fill_value` is `Union[int, tuple[int]]`: a YAML list is written as a tuple, because MindSpore's
    own type check rejects a list (checked on the real op, not on the table)."""
    from mindspore.dataset import vision

    from mscodegen.catalog.literals import literal
    from mscodegen.catalog.pipeline import render

    code = literal(render({"RandomCrop": {"size": 8, "padding": 2, "fill_value": [1, 2, 3]}}))
    assert code == "vision.RandomCrop(size=8, padding=2, fill_value=(1, 2, 3))"
    assert (
        literal(render({"Normalize": {"mean": [0.5], "std": [0.5]}}))
        == "vision.Normalize(mean=[0.5], std=[0.5])"
    )
    eval(code, {"vision": vision})  # noqa: S307  (our own rendered call)
    with pytest.raises(TypeError, match="fill_value"):
        vision.RandomCrop(size=8, padding=2, fill_value=[1, 2, 3])
