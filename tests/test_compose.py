"""extends: composition and --set overrides (merge rules, located errors)."""

from pathlib import Path

import pytest

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config

BASE = """\
runtime: {mode: graph, seed: 1}
network: {kind: builtin, name: lenet5, num_classes: 10}
data:
  train: {kind: digits, split: train, batch_size: 32, transforms: {resize: [16, 16]}}
optimizer:
  name: momentum
  lr: 0.05
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_mappings_merge_and_scalars_lists_replace(tmp_path: Path) -> None:
    _write(tmp_path, "base.yaml", BASE)
    child = _write(
        tmp_path,
        "child.yaml",
        "extends: base.yaml\noptimizer: {lr: 0.2}\ndata: {train: {transforms: {resize: [20, 20]}}}\n",
    )
    cfg = load_config(child).config
    assert cfg.optimizer.lr == 0.2
    assert cfg.optimizer.momentum == 0.9 and cfg.data.train.batch_size == 32
    assert cfg.data.train.transforms.resize == [20, 20]


def test_error_in_base_names_base_line(tmp_path: Path) -> None:
    _write(tmp_path, "base.yaml", BASE.replace("lr: 0.05", "lr: -1"))
    child = _write(tmp_path, "child.yaml", "extends: base.yaml\ntrain: {epochs: 2}\n")
    with pytest.raises(ConfigError) as info:
        load_config(child)
    assert str(info.value).startswith(f"{tmp_path / 'base.yaml'}:7:7: optimizer.lr:")


def test_error_in_child_names_child_line(tmp_path: Path) -> None:
    _write(tmp_path, "base.yaml", BASE)
    child = _write(tmp_path, "child.yaml", "extends: base.yaml\noptimizer: {lr: -1}\n")
    with pytest.raises(ConfigError) as info:
        load_config(child)
    assert str(info.value).startswith(f"{child}:2:17: optimizer.lr:")


def test_cycle_and_missing_base_are_located(tmp_path: Path) -> None:
    a = _write(tmp_path, "a.yaml", "extends: b.yaml\n")
    _write(tmp_path, "b.yaml", "extends: [a.yaml]\n")
    with pytest.raises(ConfigError, match=r"b\.yaml:1:11: extends\[0\]: extends cycle"):
        load_config(a)
    missing = _write(tmp_path, "m.yaml", "extends: nope.yaml\n")
    with pytest.raises(ConfigError, match=r"m\.yaml:1:10: extends: base file not found"):
        load_config(missing)


def test_set_overrides_and_names_the_set_in_errors(tmp_path: Path) -> None:
    path = _write(tmp_path, "plain.yaml", BASE)
    assert load_config(path, ["optimizer.lr=0.125"]).config.optimizer.lr == 0.125
    with pytest.raises(ConfigError) as info:
        load_config(path, ["optimizer.lr=-1"])
    assert str(info.value).startswith("--set optimizer.lr=-1: optimizer.lr: ")
