"""data.train.aug_repeats: refused at its key where mindcv's RepeatAugSampler cannot order the source, and
the source it writes (the sampler shards and shuffles; the loader takes neither)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.output.generate import generate

from conftest import merge

FOLDER = {
    "network": {"kind": "builtin", "name": "mlp", "hidden": [8], "num_classes": 2, "input_shape": [3, 8, 8]},
    "data": {
        "train": {"kind": "image_folder", "path": "images", "aug_repeats": 3, "batch_size": 2},
    },
    "optimizer": {"name": "momentum"},
}


def _load(tmp_path: Path, config: dict):
    for cls in ("a", "b"):
        (tmp_path / "images" / cls).mkdir(parents=True, exist_ok=True)
        for i in range(3):
            (tmp_path / "images" / cls / f"{i}.jpg").write_bytes(b"\xff\xd8\xff")
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return load_config(path)


@pytest.mark.parametrize(
    ("overrides", "key", "message"),
    [
        (
            {"data": {"eval": {"kind": "image_folder", "path": "images", "aug_repeats": 2}}},
            "data.eval.aug_repeats",
            "repeated augmentation is for data.train: evaluation reads each sample once",
        ),
        (
            {"data": {"train": {"num_samples": 4}}},
            "data.train.aug_repeats",
            "not with num_samples: the sampler reads the whole source (mindcv's create_dataset refuses both)",
        ),
        (
            {"data": {"train": {"shuffle": {"buffer_size": 4}}}},
            "data.train.aug_repeats",
            "the sampler shuffles (seeded by the epoch): set shuffle to true or false, not a buffer",
        ),
    ],
)
def test_aug_repeats_is_refused_at_its_key(tmp_path: Path, overrides: dict, key: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, merge(FOLDER, overrides))
    assert [(p.path, p.message) for p in info.value.problems if p.path.endswith("aug_repeats")] == [
        (key, message)
    ]


def test_a_source_without_a_sampler_has_no_aug_repeats(tmp_path: Path) -> None:
    synthetic = {
        "kind": "synthetic",
        "num_samples": 8,
        "image_shape": [3, 8, 8],
        "num_classes": 2,
        "aug_repeats": 3,
        "batch_size": 4,
    }
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, merge(FOLDER, {"data": {"train": None}}) | {"data": {"train": synthetic}})
    assert [(p.path, p.message) for p in info.value.problems] == [
        (
            "data.train.aug_repeats",
            "kind synthetic has no MindSpore loader that takes a sampler: repeated augmentation needs mnist, "
            "cifar10 or image_folder",
        )
    ]


def test_the_sampler_replaces_the_loaders_shuffle_and_shards(tmp_path: Path) -> None:
    parallel = merge(FOLDER, {"parallel": {"mode": "data_parallel", "workers": 2}})
    text = generate(_load(tmp_path, parallel), tmp_path / "out")["train_native.py"]
    assert "from mindcv.data.distributed_sampler import RepeatAugSampler" in text
    assert (
        """    sampler = RepeatAugSampler(
        len(ds.ImageFolderDataset(str(data_dir))),
        num_shards=num_shards,
        rank_id=shard_id,
        shuffle=True,
        num_repeats=3,
        selected_round=0,
    )
    dataset = ds.ImageFolderDataset(str(data_dir), decode=True, sampler=sampler)
"""
        in text
    )
    plain = generate(
        _load(tmp_path, merge(FOLDER, {"data": {"train": {"aug_repeats": None}}})), tmp_path / "o2"
    )
    assert "RepeatAugSampler" not in plain["train_native.py"]
