"""Under data parallel every built-in source kind is sharded (issue 35): two ranks see disjoint samples that
together are the samples one process sees. (Synthetic data and imported factories: tests/e2e/test_parallel.py;
a source that cannot be sharded is refused: tests/unit/run/test_shards.py.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mscodegen.run.parity import generate_both

from conftest import PROBE_IMPORT, REPO

DATA = REPO / "examples" / "data"
NET = {"kind": "builtin", "name": "mlp", "hidden": [4], "num_classes": 10}
# cifar10 is left out: MindSpore reads only whole 30 MB batch files; its reader takes num_shards as mnist's does.
SOURCES = {
    "mnist": {"kind": "mnist", "path": str(DATA / "mnist")},
    "image_folder": {
        "kind": "image_folder",
        "path": str(DATA / "digits_png"),
        "transforms": {"resize": [8, 8]},
    },
    "csv": {
        "kind": "csv",
        "path": str(DATA / "diabetes.csv"),
        "columns": {
            "features": ["age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6"],
            "target": ["progression"],
        },
    },
    "digits": {"kind": "digits"},
    # num_samples is read in all: each worker reads its share of its own shard
    "mnist_capped": {"kind": "mnist", "path": str(DATA / "mnist"), "num_samples": 40},
}

# Imports each script (argv) and fingerprints every sample of its train dataset: whole, then rank 0 and 1 of 2.
PROBE = (
    PROBE_IMPORT
    + """
import hashlib, importlib.util, inspect, json, os, sys
out = {}
for path in sys.argv[1:]:
    script = import_script(path, f"script{len(out)}")
    reads = "data_dir" in inspect.signature(script.create_train_dataset).parameters
    folder = [script.DATA_DIR] if reads else []
    seen = []
    for shards, rank in ((1, 0), (2, 0), (2, 1)):
        script.ms.set_seed(script.SEED)  # what every rank does first
        dataset = script.create_train_dataset(*folder, num_shards=shards, shard_id=rank)
        seen.append([hashlib.sha1(x.tobytes() + y.tobytes()).hexdigest() for batch in
                     dataset.create_tuple_iterator(output_numpy=True) for x, y in zip(*batch)])
    out[path] = seen
print(json.dumps(out))
"""
)


@pytest.mark.slow
def test_every_builtin_source_kind_is_split_into_disjoint_shards_that_cover_it(tmp_path: Path) -> None:
    scripts = {}
    for kind, source in SOURCES.items():
        config = {
            "network": {**NET, "num_classes": 1} if kind == "csv" else NET,
            "data": {"train": {**source, "batch_size": 8, "drop_remainder": False}},
            "optimizer": {"name": "momentum"},
            "parallel": {"mode": "data_parallel", "workers": 2},
        }
        if kind == "csv":
            config["data"] |= {"inputs": ["features"], "labels": ["target"]}
            config["loss"] = {"name": "MSELoss"}
        path = tmp_path / f"{kind}.yaml"
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        scripts[kind] = generate_both(path, tmp_path / kind)["native"]
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *map(str, scripts.values())],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.splitlines()[-1])
    for kind, script in scripts.items():
        whole, rank0, rank1 = seen[str(script)]
        assert len(set(whole)) == len(whole) >= 40, kind  # the fingerprints tell the samples apart
        assert len(rank0) == len(rank1) == len(whole) // 2, kind  # each count divides: no padding
        assert not set(rank0) & set(rank1), kind
        if kind == "mnist_capped":  # 40 of the 320 in all, as one process reads (another 40: the shards')
            assert len(whole) == 40, kind
        else:
            assert sorted(rank0 + rank1) == sorted(whole), kind


def test_a_capped_file_source_reads_a_share_per_worker(tmp_path: Path) -> None:
    """What the two-rank test above runs, as text: the stand-alone script reads num_samples itself."""
    config = {
        "network": NET,
        "data": {"train": {**SOURCES["mnist_capped"], "batch_size": 8}},
        "optimizer": {"name": "momentum"},
        "parallel": {"mode": "data_parallel", "workers": 2},
    }
    texts = {}
    for mode in ("data_parallel", "stand_alone"):
        config["parallel"] = {"mode": mode, "workers": 2 if mode == "data_parallel" else 1}
        path = tmp_path / f"{mode}.yaml"
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        texts[mode] = generate_both(path, tmp_path / mode)["native"].read_text()
    assert "num_samples=40 // num_shards," in texts["data_parallel"]
    assert "num_samples=40)" in texts["stand_alone"] and "num_shards" not in texts["stand_alone"]
