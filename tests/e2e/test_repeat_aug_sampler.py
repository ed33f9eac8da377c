"""data.train.aug_repeats: the scripts read through mindcv's own RepeatAugSampler, built with the arguments
mindcv's create_dataset gives it (unsharded and sharded), in the order numpy recomputes; both variants train
the same losses across an epoch boundary (the sampler reshuffles per epoch)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image

from mscodegen.config.load import load_config
from mscodegen.output.generate import generate
from mscodegen.run.parity import generate_both, run_script, step_differences

from conftest import PROBE_IMPORT

CLASSES, PER_CLASS, REPEATS = ("cat", "dog", "fox"), 7, 3
CONFIG = {
    "runtime": {"mode": "graph", "seed": 3},
    "network": {"kind": "builtin", "name": "mlp", "hidden": [16], "num_classes": 3},
    "data": {
        "train": {
            "kind": "image_folder",
            "path": "folder/train",
            "aug_repeats": REPEATS,
            "batch_size": 4,
            "transforms": {
                "image": [
                    {"RandomResizedCrop": {"size": 8}},
                    {"Rescale": {"rescale": 1 / 255, "shift": 0.0}},
                    {"HWC2CHW": {}},
                ]
            },
        }
    },
    "optimizer": {"name": "momentum", "lr": 0.05},
    "train": {"epochs": 2, "log_every_steps": 1},
}


def _folder(tmp_path: Path) -> Path:
    rng = np.random.default_rng(5)
    for cls in CLASSES:
        (tmp_path / "folder" / "train" / cls).mkdir(parents=True)
        for i in range(PER_CLASS):
            pixels = rng.integers(0, 256, size=(12, 12, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(tmp_path / "folder" / "train" / cls / f"{i}.png")
    return tmp_path / "folder"


def _config(tmp_path: Path, config: dict, name: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


# Records each RepeatAugSampler's arguments, in the script's create_train_dataset and in mindcv's
# create_dataset, and the labels each dataset gives over two epochs.
PROBE = (
    PROBE_IMPORT
    + """
import importlib.util, json, os, sys
from pathlib import Path
import mindcv.data.dataset_factory as factory
from mindcv.data.distributed_sampler import RepeatAugSampler

made = []

class Recorded(RepeatAugSampler):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        made.append({key: value for key, value in vars(self).items() if key != "epoch"})

def labels(dataset):  # two epochs of one iterator, as training reads them
    rows = dataset.create_tuple_iterator(num_epochs=2, output_numpy=True)
    return [[int(x) for row in rows for x in row[1].reshape(-1)] for _ in range(2)]

folder, results = Path(sys.argv[1]), []
for i, (script, shards) in enumerate(json.loads(sys.argv[2])):  # the unsharded script, the sharded one
    mod = import_script(script, f"generated{i}")
    mod.RepeatAugSampler = factory.RepeatAugSampler = Recorded
    made.clear()
    ours = mod.create_train_dataset(folder / "train", *shards)
    theirs = factory.create_dataset("", str(folder), "train", shuffle=True, num_aug_repeats=3,
                                    num_shards=shards[0] if shards else None, shard_id=shards[1] if shards else None)
    results.append({"samplers": list(made), "ours": labels(ours), "theirs": labels(theirs)})
print(json.dumps(results))
"""
)


def _expected_indices(size: int, shards: int, rank: int, epoch: int) -> list[int]:
    """DeiT's repeated-augmentation order, recomputed: the epoch-seeded permutation, each index REPEATS times,
    padded to a multiple of the shards, every shards-th from rank, the first ceil(size / shards)."""
    order = np.repeat(np.random.RandomState(seed=epoch).permutation(size), REPEATS).tolist()
    per_shard = -(-size * REPEATS // shards)
    order += order[: per_shard * shards - len(order)]
    return order[rank::shards][: -(-size // shards)]


@pytest.mark.slow
def test_the_scripts_sampler_is_mindcvs(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    runs = []
    for shards in ((), (2, 1)):
        config = (
            CONFIG if not shards else {**CONFIG, "parallel": {"mode": "data_parallel", "workers": shards[0]}}
        )
        script = tmp_path / f"train_native_{len(shards)}.py"
        script.write_text(
            generate(load_config(_config(tmp_path, config, "cfg")), tmp_path)["train_native.py"]
        )
        runs.append((str(script), list(shards)))
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(folder), json.dumps(runs)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    for (_, shards), result in zip(runs, json.loads(out.stdout.splitlines()[-1]), strict=True):
        _check(result, tuple(shards))


def _check(result: dict, shards: tuple[int, ...]) -> None:
    (ours, theirs) = result["samplers"]
    size = len(CLASSES) * PER_CLASS
    num_shards, rank = shards or (1, 0)
    assert (
        ours
        == theirs
        == {  # the sampler as mindcv's create_dataset makes it (selected_round 0)
            "dataset_size": size,
            "num_shards": num_shards,
            "rank_id": rank,
            "shuffle": True,
            "num_repeats": REPEATS,
            "num_samples": -(-size * REPEATS // num_shards),
            "total_size": -(-size * REPEATS // num_shards) * num_shards,
            "num_selected_samples": -(-size // num_shards),
        }
    )
    # the labels in the order read, epoch by epoch: the permutations seeded 1 and 2 (MindSpore draws the
    # epoch-0 order once when it builds the pipeline, for mindcv's loader too); the script's batches drop the
    # last incomplete one
    expected = [
        [i // PER_CLASS for i in _expected_indices(size, num_shards, rank, epoch)] for epoch in (1, 2)
    ]
    batch = CONFIG["data"]["train"]["batch_size"] // num_shards
    assert result["theirs"] == expected
    assert result["ours"] == [labels[: len(labels) // batch * batch] for labels in expected]
    assert expected[0] != expected[1]


@pytest.mark.slow
def test_both_variants_train_the_same_losses_across_epochs(tmp_path: Path) -> None:
    _folder(tmp_path)
    scripts = generate_both(_config(tmp_path, CONFIG, "cfg"), tmp_path / "scripts")
    runs = [run_script(scripts[v], tmp_path / v, variant=v, epochs=2) for v in ("model", "native")]
    assert [r.returncode for r in runs] == [0, 0], runs[0].log_tail + runs[1].log_tail
    assert len(runs[0].steps) == 2 * (len(CLASSES) * PER_CLASS // 4)
    assert step_differences(runs[0].steps, runs[1].steps) == []
