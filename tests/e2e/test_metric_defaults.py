"""Metric defaults follow the loss, a field of a dict-returning metric can be monitored, and the diabetes
regression example trains identically in both variants."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.run.parity import generate_both, step_differences

from conftest import TINY, kept_runs, merge, run_both, shipped_parity

REGRESSION = {
    **TINY,
    "network": {"kind": "builtin", "name": "mlp", "hidden": [16], "num_classes": 1, "input_shape": [1, 1, 4]},
    "loss": {"name": "MSELoss"},
    "data": {
        "train": {"kind": "import", "factory": "regress:make", "kwargs": {"n": 48}, "batch_size": 8},
        "eval": {"kind": "import", "factory": "regress:make", "kwargs": {"n": 16}, "batch_size": 8},
    },
}

REGRESS_PY = """
import mindspore.dataset as ds
import numpy as np

def make(n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal((n, 1, 1, 4)).astype(np.float32)
    y = (x.reshape(n, 4) @ np.array([1.0, -2.0, 0.5, 0.0], np.float32)).reshape(n, 1).astype(np.float32)
    return ds.NumpySlicesDataset({"image": x, "label": y}, shuffle=False)
"""

DICT_METRIC_PY = """
import numpy as np
from mindspore import nn

class PrecisionRecall(nn.Metric):
    '''Macro precision and recall, returned together as a dict.'''

    def __init__(self):
        super().__init__()
        self.precision, self.recall = nn.Precision(), nn.Recall()

    def clear(self):
        self.precision.clear()
        self.recall.clear()

    def update(self, *inputs):
        self.precision.update(*inputs)
        self.recall.update(*inputs)

    def eval(self):
        return {"precision": float(np.mean(self.precision.eval())), "recall": float(np.mean(self.recall.eval()))}
"""


def _write(tmp_path: Path, config: dict, files: dict[str, str] | None = None) -> Path:
    for name, text in (files or {}).items():
        (tmp_path / name).write_text(text)
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _metric_lines(tmp_path: Path, config: dict, files: dict[str, str] | None = None) -> str:
    scripts = generate_both(_write(tmp_path, config, files), tmp_path / "out")
    text = scripts["native"].read_text()
    return text.split("    metrics = {", 1)[1].split("}\n", 1)[0]


@pytest.mark.parametrize("loss", ["MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss"])
def test_regression_losses_default_to_mae_mse_loss(tmp_path: Path, loss: str) -> None:
    body = _metric_lines(tmp_path, merge(REGRESSION, {"loss": {"name": loss}}), {"regress.py": REGRESS_PY})
    assert '"mae": nn.MAE()' in body and '"mse": nn.MSE()' in body and '"loss": nn.Loss()' in body
    assert "Accuracy" not in body


def test_classification_losses_keep_accuracy_and_loss(tmp_path: Path) -> None:
    body = _metric_lines(tmp_path, merge(TINY, {"loss": {"name": "CrossEntropyLoss"}}))
    assert '"accuracy": nn.Accuracy()' in body and '"loss": nn.Loss()' in body


def test_eval_section_without_metrics_also_follows_the_loss(tmp_path: Path) -> None:
    body = _metric_lines(
        tmp_path, merge(REGRESSION, {"eval": {"every_epochs": 1}}), {"regress.py": REGRESS_PY}
    )
    assert '"mae": nn.MAE()' in body and "Accuracy" not in body


def test_early_stopping_on_mae_minimises(tmp_path: Path) -> None:
    config = merge(REGRESSION, {"callbacks": {"early_stopping": {"monitor": "mae"}}})
    scripts = generate_both(_write(tmp_path, config, {"regress.py": REGRESS_PY}), tmp_path / "out")
    assert "value < self.best - EARLY_STOP_MIN_DELTA" in scripts["native"].read_text()


def test_dotted_monitor_needs_an_imported_metric(tmp_path: Path) -> None:
    config = merge(TINY, {"callbacks": {"early_stopping": {"monitor": "accuracy.value"}}})
    with pytest.raises(ConfigError, match="only an imported metric can return a dict"):
        load_config(_write(tmp_path, config))


# Three outputs per sample, known without running the network: each metric can be computed by hand.
FIRST_THREE_PY = """
import mindspore.dataset as ds
import numpy as np
from mindspore import nn


def make(n=16):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((n, 4)).astype(np.float32)
    y = rng.standard_normal((n, 3)).astype(np.float32)
    return ds.NumpySlicesDataset({"image": x, "label": y}, shuffle=False)


class FirstThree(nn.Cell):
    # predicts its first three inputs, whatever its weights (their gradient is 0)

    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 3)

    def construct(self, x):
        return x[:, :3] + 0 * self.fc(x)
"""

THREE_OUTPUTS = {
    **REGRESSION,
    "network": {"kind": "import", "factory": "first_three:FirstThree"},
    "data": {
        "train": {"kind": "import", "factory": "first_three:make", "batch_size": 8},
        "eval": {"kind": "import", "factory": "first_three:make", "batch_size": 8},
    },
    "train": {"epochs": 1, "log_every_steps": 1},
}


def test_several_outputs_average_the_metrics_per_element(tmp_path: Path) -> None:
    """nn.MAE / nn.MSE divide by the samples: the scripts divide by the elements too, as the losses do,
    when there are several outputs per sample or their number is unknown (an imported network)."""
    body = _metric_lines(tmp_path, THREE_OUTPUTS, {"first_three.py": FIRST_THREE_PY})
    assert body == '"mae": ElementMean(nn.MAE()), "mse": ElementMean(nn.MSE()), "loss": nn.Loss()'
    three = merge(REGRESSION, {"network": {"num_classes": 3}})
    body = _metric_lines(tmp_path, three, {"regress.py": REGRESS_PY})
    assert body.startswith('"mae": ElementMean(nn.MAE()), "mse": ElementMean(nn.MSE())')


@pytest.mark.slow
def test_regression_metrics_equal_a_hand_computation_in_both_variants(tmp_path: Path) -> None:
    """Three outputs per sample: mae and mse as printed by both variants' evaluation are numpy's mean
    over every element of |error| and error**2 (nn.MSE alone would give 3 times that)."""
    model, native = run_both(_write(tmp_path, THREE_OUTPUTS, {"first_three.py": FIRST_THREE_PY}), tmp_path)
    assert step_differences(model.steps, native.steps) == []
    assert [e["metrics"] for e in model.evals] == [e["metrics"] for e in native.evals]
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((16, 4)).astype(np.float32), rng.standard_normal((16, 3)).astype(np.float32)
    error = x[:, :3].astype(np.float64) - y
    metrics = model.evals[-1]["metrics"]
    assert metrics["mse"] == pytest.approx(np.mean(error**2), rel=1e-6)
    assert metrics["mae"] == pytest.approx(np.mean(np.abs(error)), rel=1e-6)
    assert metrics["loss"] == pytest.approx(metrics["mse"], rel=1e-6)  # MSELoss's mean, two full batches


@pytest.mark.slow
def test_monitor_a_field_of_a_dict_metric(tmp_path: Path) -> None:
    config = merge(
        TINY,
        {
            "train": {"epochs": 6},
            "eval": {
                "metrics": [{"name": "import", "class": "dict_metric:PrecisionRecall", "key": "myprec"}]
            },
            "callbacks": {"early_stopping": {"monitor": "myprec.precision", "patience": 1, "min_delta": 1.0}},
        },
    )
    scripts = generate_both(_write(tmp_path, config, {"dict_metric.py": DICT_METRIC_PY}), tmp_path / "out")
    assert 'results["myprec"]["precision"]' in scripts["native"].read_text()
    model, native = run_both(tmp_path / "cfg.yaml", tmp_path)
    assert step_differences(model.steps, native.steps) == []
    assert [e["metrics"] for e in model.evals] == [e["metrics"] for e in native.evals]
    # min_delta 1.0: precision can never rise by more than 1, so the second evaluation stops training
    assert len(model.evals) == 2 and len(model.steps) == 12
    assert set(model.evals[0]["metrics"]["myprec"]) == {"precision", "recall"}


@pytest.mark.slow
def test_diabetes_example_parity(checkout: Path, tmp_path: Path) -> None:
    """Two epochs as shipped (`mscodegen parity` in a checkout; it compares the final weights)."""
    shipped_parity(checkout, "diabetes", "--epochs", "2", "--steps", "100000", "--keep", str(tmp_path))
    model, native = kept_runs(tmp_path)
    assert step_differences(model.steps, native.steps) == []
    assert [e["metrics"] for e in model.evals] == [e["metrics"] for e in native.evals]
    assert set(model.evals[-1]["metrics"]) == {"mae", "mse", "loss"}
    assert len(model.steps) == 2 * (354 // 32)  # 442 rows, 80% train, batch 32, last partial dropped
