"""Configs that validated and then crashed at the first step or the first evaluation now fail `validate`
at the key to change, or are made to work (issue 22): accuracy on one logit, mindcv's inception_v3 and its
auxiliary logits, more workers than CPUs, nn loss keyword arguments, a string for a number, `__debug__`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from mscodegen.catalog.losses import REFRESH_COMMAND, check_loss, load_table
from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.run.parity import generate_both
from mscodegen.schema.optim import LOSS_CLASSES
from mscodegen.schema.training import eval_metrics

from conftest import REPO, TINY, function_source, merge

# One logit per sample, float 0/1 labels: a binary classifier trained with BCEWithLogitsLoss.
BINARY: dict = merge(
    TINY,
    {
        "network": {"num_classes": 1, "input_shape": [1, 1, 4]},
        "loss": {"name": "BCEWithLogitsLoss"},
        "data": {
            "train": {"kind": "import", "factory": "bindata:make", "kwargs": {"count": 48, "seed": 0}},
            "eval": {"kind": "import", "factory": "bindata:make", "kwargs": {"count": 20, "seed": 1}},
        },
    },
)
for split in ("train", "eval"):
    for key in ("num_samples", "image_shape", "num_classes", "seed"):
        del BINARY["data"][split][key]
BINARY_DATA = """
import numpy as np
from mindspore import dataset as ds


def make(count, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((count, 1, 1, 4)).astype(np.float32)
    y = (x.reshape(count, 4) @ np.array([1.0, -2.0, 0.5, 0.0]) > 0).astype(np.float32).reshape(count, 1)
    return ds.NumpySlicesDataset({"image": x, "label": y}, shuffle=False)
"""


def _problems(tmp_path: Path, config: dict, files: dict[str, str] | None = None) -> list[tuple[str, str]]:
    for name, text in (files or {}).items():
        (tmp_path / name).write_text(text)
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    try:
        load_config(path)
    except ConfigError as error:
        return [(p.path, p.message) for p in error.problems]
    return []


# ---- accuracy on one logit (BCEWithLogitsLoss) --------------------------------------------------------------


@pytest.mark.parametrize(("name", "instead"), [("accuracy", "binary_accuracy"), ("f1", "binary_f1")])
def test_a_per_class_metric_with_bce_names_the_binary_one(tmp_path: Path, name: str, instead: str) -> None:
    config = merge(BINARY, {"eval": {"metrics": [{"name": "loss"}, {"name": name}]}})
    ((key, message),) = _problems(tmp_path, config, {"bindata.py": BINARY_DATA})
    assert key == "eval.metrics[1].name"
    assert f"use {instead}" in message and "auc" in message and "first evaluation" in message


def test_a_binary_metric_with_a_class_index_loss_is_refused(tmp_path: Path) -> None:
    config = merge(TINY, {"eval": {"metrics": [{"name": "binary_accuracy"}]}})
    ((key, message),) = _problems(tmp_path, config)
    assert key == "eval.metrics[0].name" and "use accuracy" in message


def test_bce_defaults_to_binary_accuracy_and_loss(tmp_path: Path) -> None:
    assert [m.key for m in eval_metrics(None, "BCEWithLogitsLoss")] == ["binary_accuracy", "loss"]
    assert [m.key for m in eval_metrics(None, "my.losses:Soft")] == [
        "loss"
    ]  # an imported loss: unknown targets
    (tmp_path / "bindata.py").write_text(BINARY_DATA)
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump(BINARY, sort_keys=False))
    for text in (s.read_text() for s in generate_both(tmp_path / "cfg.yaml", tmp_path / "out").values()):
        assert 'metrics = {"binary_accuracy": BinaryMetric("accuracy"), "loss": nn.Loss()}' in text
        assert "class BinaryMetric(nn.Metric):" in text and "class AUC" not in text


@pytest.mark.slow
def test_binary_metrics_count_as_sklearn_does(tmp_path: Path) -> None:
    """The scripts' BinaryMetric and AUC against scikit-learn, on logits and labels over two batches."""
    from mindspore import Tensor, nn
    from sklearn import metrics as sk

    (tmp_path / "bindata.py").write_text(BINARY_DATA)
    names = ["binary_accuracy", "binary_precision", "binary_recall", "binary_f1", "auc"]
    config = merge(BINARY, {"eval": {"metrics": [{"name": n} for n in names]}})
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    text = generate_both(tmp_path / "cfg.yaml", tmp_path / "out")["native"].read_text()
    scope: dict = {"nn": nn, "np": np}
    exec(function_source(text, "BinaryMetric") + "\n" + function_source(text, "AUC"), scope)
    rng = np.random.default_rng(0)
    logits, labels = rng.standard_normal((2, 10, 1)), (rng.random((2, 10, 1)) > 0.5).astype(np.float32)
    made = {n: scope["BinaryMetric"](n.removeprefix("binary_")) for n in names[:4]} | {"auc": scope["AUC"]()}
    for metric in made.values():
        metric.clear()
        for x, y in zip(logits, labels, strict=True):
            metric.update(Tensor(x.astype(np.float32)), Tensor(y))
    predicted, actual = logits.reshape(-1) > 0, labels.reshape(-1) > 0.5
    expected = {
        "binary_accuracy": sk.accuracy_score(actual, predicted),
        "binary_precision": sk.precision_score(actual, predicted),
        "binary_recall": sk.recall_score(actual, predicted),
        "binary_f1": sk.f1_score(actual, predicted),
        "auc": sk.roc_auc_score(actual, logits.reshape(-1)),
    }
    assert {n: pytest.approx(m.eval()) for n, m in made.items()} == expected


@pytest.mark.slow
def test_binary_metrics_evaluate_alike_in_both_variants(tmp_path: Path) -> None:
    """They used to raise MindSpore's dimension error after a whole epoch; now both variants evaluate, ==."""
    from conftest import run_both

    (tmp_path / "bindata.py").write_text(BINARY_DATA)
    names = ["binary_accuracy", "binary_precision", "binary_recall", "binary_f1", "auc", "loss"]
    config = merge(BINARY, {"eval": {"metrics": [{"name": n} for n in names]}})
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    model, native = run_both(tmp_path / "cfg.yaml", tmp_path / "run")
    assert [e["metrics"] for e in model.evals] == [e["metrics"] for e in native.evals]
    last = native.evals[-1]["metrics"]
    assert set(last) == set(names) and all(0 <= last[n] <= 1 for n in names[:5])


# ---- mindcv inception_v3: (logits, aux_logits) in training --------------------------------------------------

INCEPTION: dict = merge(
    TINY,
    {
        "network": {"kind": "mindcv", "name": "inception_v3", "num_classes": 4, "hidden": None},
        "data": {"train": {"image_shape": [3, 299, 299], "num_samples": 4, "batch_size": 2}, "eval": None},
    },
)


def test_inception_v3_trains_on_its_main_logits(tmp_path: Path) -> None:
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump(INCEPTION, sort_keys=False))
    for text in (s.read_text() for s in generate_both(tmp_path / "cfg.yaml", tmp_path / "out").values()):
        assert 'network = MainLogits(create_model("inception_v3", num_classes=4, pretrained=False))' in text
        cell = function_source(text, "MainLogits")
        assert "auto_prefix=False" in cell and "logits[0] if isinstance(logits, tuple) else logits" in cell
        assert "aux_factor" in cell  # says what mindcv would add
    plain = merge(INCEPTION, {"network": {"name": "resnet18"}})
    (tmp_path / "plain.yaml").write_text(yaml.safe_dump(plain, sort_keys=False))
    assert "MainLogits" not in generate_both(tmp_path / "plain.yaml", tmp_path / "p")["native"].read_text()


@pytest.mark.slow
def test_main_logits_trains_a_network_with_auxiliary_outputs(tmp_path: Path) -> None:
    """The generated MainLogits around a small network that returns (logits, aux) in training, in GRAPH
    mode: the loss and gradients are those of the main logits; in evaluation it passes the logits through.
    (inception_v3 itself trains the same, ==, in both variants: 4 minutes a run on 2 cores, so not here.)"""
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump(INCEPTION, sort_keys=False))
    text = generate_both(tmp_path / "cfg.yaml", tmp_path / "out")["native"].read_text()
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import json\nimport mindspore as ms\nimport numpy as np\nfrom mindspore import nn\n"
        "ms.set_context(mode=ms.GRAPH_MODE)\nms.set_seed(0)\n"
        + function_source(text, "MainLogits")
        + """

class WithAux(nn.Cell):
    def __init__(self):
        super().__init__()
        self.main, self.aux = nn.Dense(4, 3), nn.Dense(4, 3)

    def construct(self, x):
        return (self.main(x), self.aux(x)) if self.training else self.main(x)


net = WithAux()
wrapped = MainLogits(net)
loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
x = ms.Tensor(np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32))
y = ms.Tensor(np.array([0, 1, 2, 0, 1], np.int32))
wrapped.set_train(True)
grad = ms.value_and_grad(nn.WithLossCell(wrapped, loss_fn), None, wrapped.trainable_params())
loss, grads = grad(x, y)
expected = loss_fn(net.main(x), y)
wrapped.set_train(False)
print(json.dumps({
    "names": [p.name for p in wrapped.trainable_params()],
    "loss": [float(loss.asnumpy()), float(expected.asnumpy())],
    "aux_grads_zero": all(float(abs(g).sum().asnumpy()) == 0 for g in grads[2:]),
    "eval_equal": bool((wrapped(x).asnumpy() == net.main(x).asnumpy()).all()),
}))
"""
    )
    done = subprocess.run([sys.executable, str(probe)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["names"] == ["main.weight", "main.bias", "aux.weight", "aux.bias"]  # names unchanged
    assert result["loss"][0] == result["loss"][1]
    assert result["aux_grads_zero"] and result["eval_equal"]


def test_inception_v3_needs_its_image_size_and_sets_aux_logits_itself(tmp_path: Path) -> None:
    small = merge(INCEPTION, {"data": {"train": {"image_shape": [3, 224, 224]}}})
    ((key, message),) = _problems(tmp_path, small)
    assert key == "network.name" and "299 to 346 pixels" in message and "224x224" in message
    aux = merge(INCEPTION, {"network": {"kwargs": {"aux_logits": False}}})
    ((key, message),) = _problems(tmp_path, aux)
    assert key == "network.kwargs.aux_logits" and "always true" in message


# ---- num_workers above the CPU count -------------------------------------------------------------------------

WORKERS: dict = merge(TINY, {"data": {"train": {"num_workers": 16}, "eval": {"num_workers": 1}}})


def test_more_workers_than_cpus_are_capped_in_the_script(tmp_path: Path) -> None:
    """mindcv's recipes keep 8 or 16; MindSpore refuses more than the machine's CPUs: min(N, os.cpu_count())."""
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump(WORKERS, sort_keys=False))
    for text in (s.read_text() for s in generate_both(tmp_path / "cfg.yaml", tmp_path / "out").values()):
        train = function_source(text, "create_train_dataset")
        assert train.splitlines()[1].strip().startswith("workers = min(16, os.cpu_count())  # MindSpore")
        assert "num_parallel_workers=workers" in train
        assert "num_parallel_workers=1" in function_source(text, "create_eval_dataset")
        assert "\nimport os\n" in text


# ---- loss kwargs, op arguments, identifiers -------------------------------------------------------------------


def test_loss_kwargs_are_checked_against_mindsporess_signatures(tmp_path: Path) -> None:
    config = merge(
        TINY,
        {
            "loss": {
                "name": "CrossEntropyLoss",
                "kwargs": {"label_smothing": 0.1, "ignore_index": "3", "weight": [1.0, 2.0]},
            }
        },
    )
    problems = dict(_problems(tmp_path, config))
    assert problems == {
        "loss.kwargs.label_smothing": (
            "CrossEntropyLoss: unknown argument `label_smothing` (did you mean label_smoothing?)"
        ),
        "loss.kwargs.ignore_index": (
            "CrossEntropyLoss: `ignore_index` takes int, not the string '3' (write the number without quotes: 3)"
        ),
        # a list becomes the Tensor (issue 35): one number per class
        "loss.kwargs.weight": "2 numbers for network.num_classes 4: give one per class",
    }
    good = merge(TINY, {"loss": {"name": "CrossEntropyLoss", "kwargs": {"label_smoothing": 0.1}}})
    assert _problems(tmp_path, good) == []


def test_every_loss_the_schema_names_is_in_the_table() -> None:
    assert set(LOSS_CLASSES) <= set(load_table()["losses"])
    assert check_loss("SmoothL1Loss", {"beta": "0.5"}) == [
        (
            "beta",
            "SmoothL1Loss: `beta` takes number, optional, not the string '0.5' (write the number without quotes: 0.5)",
        )
    ]


@pytest.mark.slow
def test_the_shipped_loss_table_matches_the_installed_mindspore() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "mscodegen.tools.catalog", "losses", "--print"],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout) == load_table(), f"run: {REFRESH_COMMAND}"


def test_a_string_for_a_number_in_a_pipeline_is_refused(tmp_path: Path) -> None:
    config = merge(
        TINY,
        {
            "data": {
                "train": {
                    "kind": "digits",
                    "transforms": {
                        "image": [{"Rescale": {"rescale": "1/255", "shift": 0.0}}, {"HWC2CHW": {}}]
                    },
                },
                "eval": None,
            }
        },
    )
    for key in ("num_samples", "image_shape", "num_classes", "seed"):
        del config["data"]["train"][key]
    ((key, message),) = _problems(tmp_path, config)
    assert key.startswith("data.train.transforms.image[0]")
    assert "`rescale` takes float, not the string '1/255'" in message and "0.00392156862745098" in message


def test_debug_as_a_column_or_argument_name_is_refused(tmp_path: Path) -> None:
    """`__debug__` is an identifier and no keyword, but assigning to it is a SyntaxError."""
    config = merge(
        BINARY,
        {
            "data": {"train": {"columns": ["image", "__debug__"]}, "labels": ["__debug__"]},
            "loss": {"name": "CrossEntropyLoss", "kwargs": {"__debug__": 1}},
        },
    )
    config["network"] = {"kind": "import", "factory": "bindata:make", "kwargs": {"__debug__": 1}}
    keys = {
        key
        for key, message in _problems(tmp_path, config, {"bindata.py": BINARY_DATA})
        if "SyntaxError" in message
    }
    assert keys == {
        "data.train.columns[1]",
        "data.labels[0]",
        "loss.kwargs.__debug__",
        "network.kwargs.__debug__",
    }
