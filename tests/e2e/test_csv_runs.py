"""Tables from CSV files, run (issue 23): the diabetes_csv example trains identically in both variants, and
the generated dataset functions yield what the file holds, as many rows as validate counted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mscodegen.config.load import load_config
from mscodegen.output.generate import generate
from mscodegen.run.parity import step_differences
from mscodegen.schema.sources import sample_count

from conftest import PROBE_IMPORT, REPO, kept_runs, shipped_parity

pytestmark = pytest.mark.slow

EXAMPLE = REPO / "examples" / "diabetes_csv.yaml"


def test_diabetes_csv_example_losses_and_final_weights_are_identical(checkout: Path, tmp_path: Path) -> None:
    """The whole run as shipped (`mscodegen parity` in a checkout; it compares the final weights)."""
    shipped_parity(checkout, "diabetes_csv", "--steps", "100000", "--keep", str(tmp_path))
    model, native = kept_runs(tmp_path)
    assert step_differences(model.steps, native.steps) == []
    losses = [r["loss"] for r in model.steps]
    assert losses == [r["loss"] for r in native.steps]
    assert len(losses) == 4 * (354 // 32)  # 442 rows, the first 80% train, batch 32, partial dropped
    assert [e["metrics"] for e in model.evals] == [e["metrics"] for e in native.evals]
    assert set(model.evals[-1]["metrics"]) == {"mae", "mse", "loss"}
    assert model.evals[-1]["metrics"]["mse"] < 0.8 * model.evals[0]["metrics"]["mse"]  # it learned


# Imports each generated script (without running train()) and lists what its dataset functions yield,
# unbatched, with the rows of examples/diabetes_data.py's factory for comparison.
PROBE = (
    PROBE_IMPORT
    + """
import importlib.util, inspect, json, os, sys
import numpy as np

def rows(dataset):
    columns = None
    for batch in dataset.create_tuple_iterator(output_numpy=True, num_epochs=1):
        columns = columns or [[] for _ in batch]
        for kept, column in zip(columns, batch):
            kept.extend(column)
    return [{"dtype": str(np.asarray(c).dtype), "values": np.asarray(c).tolist()} for c in columns or []]

found = {}
for name, path in json.loads(sys.argv[1]).items():
    module = import_script(path, name)
    make = {split: getattr(module, f"create_{split}_dataset") for split in ("train", "eval")}
    # a function reading files takes the folder first (the scripts pass --data-dir)
    args = {s: [module.DATA_DIR] if "data_dir" in inspect.signature(f).parameters else [] for s, f in make.items()}
    found[name] = {split: rows(make[split](*args[split])) for split in make}
sys.path.insert(0, sys.argv[2])
from diabetes_data import diabetes
found["factory"] = {split: rows(diabetes(split).batch(64)) for split in ("train", "test")}
print(json.dumps(found))
"""
)

HOLES = """\
radius,texture,area,diagnosis
1.5,,10,0
2.5,3.0,NA,1
3.5,4.0,12,2
4.5,5.0,13,
5.5,nan,14,1
6.5,7.0,15,0
7.5,8.0,16,1
8.5,9.0,17,2
9.5,10.0,18,1.0
10.5,11.0,-inf,0
"""

TABLE = {
    "network": {"kind": "builtin", "name": "mlp", "hidden": [8], "num_classes": 3},
    "data": {
        "inputs": ["features"],
        "train": {
            "kind": "csv",
            "path": "holes.csv",
            "columns": {"features": ["radius", "texture", "area"], "label": "diagnosis"},
            "missing": "drop",
            "split": "train",
            "test_fraction": 0.3,
            "batch_size": 2,
            "shuffle": False,
            "drop_remainder": False,
        },
        "eval": {
            "kind": "csv",
            "path": "holes.csv",
            "columns": {"features": ["radius", "texture", "area"], "label": "diagnosis"},
            "missing": "drop",
            "split": "test",
            "test_fraction": 0.3,
            "batch_size": 2,
            "drop_remainder": False,
        },
    },
    "optimizer": {"name": "adam"},
}


def _config(tmp_path: Path, name: str, config: dict) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def _script(tmp_path: Path, config: Path) -> Path:
    out = tmp_path / config.stem
    out.mkdir()
    script = out / "train_model.py"
    script.write_text(generate(load_config(config), out)["train_model.py"], encoding="utf-8")
    return script


def test_the_dataset_functions_yield_the_file_as_validate_counted_it(tmp_path: Path) -> None:
    (tmp_path / "holes.csv").write_text(HOLES, encoding="utf-8")
    drop = _config(tmp_path, "drop", TABLE)
    # missing: {fill: -1.0} with a regression target (a class-index cell cannot be filled)
    fill = {**TABLE, "network": {**TABLE["network"], "num_classes": 1}, "loss": {"name": "MSELoss"}}
    columns = {"columns": {"features": ["radius", "texture"], "target": ["area"]}, "missing": {"fill": -1.0}}
    fill["data"] = {
        "inputs": ["features"],
        "labels": ["target"],
        "train": {**TABLE["data"]["train"], **columns},
        "eval": {**TABLE["data"]["eval"], **columns},
    }
    fill_path = _config(tmp_path, "fill", fill)
    # the diabetes example on an exact copy of its data (every float32 in full), read in file order
    sys.path.insert(0, str(REPO / "examples"))
    try:
        from make_diabetes_csv import write_diabetes_csv
    finally:
        sys.path.remove(str(REPO / "examples"))
    write_diabetes_csv(tmp_path / "data" / "diabetes.csv", exact=True)
    example = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    for split in ("train", "eval"):
        example["data"][split] |= {"shuffle": False, "drop_remainder": False}
    diabetes = _config(tmp_path, "diabetes", example)

    scripts = {
        name: str(_script(tmp_path, path))
        for name, path in (("drop", drop), ("fill", fill_path), ("diabetes", diabetes))
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(scripts), str(REPO / "examples")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])

    # missing: drop - rows 1-7 train (70% of 10), 8-10 test; rows holding no number in a column read go
    (features, labels) = found["drop"]["train"]
    assert features["dtype"] == "float32" and labels["dtype"] == "int32"
    assert features["values"] == [[3.5, 4.0, 12.0], [6.5, 7.0, 15.0], [7.5, 8.0, 16.0]]
    assert labels["values"] == [2, 0, 1]
    (features, labels) = found["drop"]["eval"]
    assert features["values"] == [[8.5, 9.0, 17.0], [9.5, 10.0, 18.0]]  # row 10's -inf dropped
    assert labels["values"] == [2, 1]  # "1.0" read by text.ToNumber as 1
    loaded = load_config(drop)
    for split, spec in (("train", loaded.config.data.train), ("eval", loaded.config.data.eval)):
        count = sample_count(spec, tmp_path)
        assert count is not None and count.value == len(found["drop"][split][0]["values"]), count

    # missing: {fill: -1.0} - every row, the cells holding no number become -1
    (features, target) = found["fill"]["train"]
    assert [row[1] for row in features["values"]] == [-1.0, 3.0, 4.0, 5.0, -1.0, 7.0, 8.0]
    assert target["dtype"] == "float32" and target["values"][:3] == [[10.0], [-1.0], [12.0]]
    assert found["fill"]["eval"][1]["values"] == [[17.0], [18.0], [-1.0]]

    # the CSV path reads exactly the arrays examples/diabetes_data.py's numpy factory builds
    for mine, theirs in (("train", "train"), ("eval", "test")):
        csv_features, csv_target = found["diabetes"][mine]
        factory_features, factory_target = found["factory"][theirs]
        flat = [sum(sum(image, []), []) for image in factory_features["values"]]  # [1, 1, 10] per row
        assert csv_features["values"] == flat
        assert csv_target["values"] == factory_target["values"]
        assert len(flat) == (354 if mine == "train" else 88)
