"""--set on the CLI, the lock that records it, and `mscodegen show` (through the real CLI)."""

import json
from pathlib import Path

import yaml

from mscodegen.cli import main
from mscodegen.output.write import LOCK_NAME

BASE = """\
runtime: {mode: graph, seed: 1}
network: {kind: builtin, name: lenet5, num_classes: 10}
data:
  train: {kind: digits, split: train, batch_size: 32, transforms: {resize: [16, 16]}}
optimizer:
  name: momentum
  lr: 0.05
"""
CHILD = "extends: base.yaml\ntrain: {epochs: 3}\n"


def _pair(tmp_path: Path) -> Path:
    (tmp_path / "base.yaml").write_text(BASE, encoding="utf-8")
    child = tmp_path / "child.yaml"
    child.write_text(CHILD, encoding="utf-8")
    return child


def test_set_is_applied_and_recorded_in_the_lock(tmp_path: Path) -> None:
    child, out = _pair(tmp_path), tmp_path / "out"
    assert main(["new", str(child), "--out", str(out), "--set", "optimizer.lr=0.125"]) == 0
    assert "LR = 0.125" in (out / "train_native.py").read_text(encoding="utf-8")
    meta = json.loads((out / LOCK_NAME).read_text(encoding="utf-8"))["meta"]
    assert meta["overrides"] == ["optimizer.lr=0.125"]
    # Without --set, --check and update reproduce the recorded overrides: nothing is out of date.
    assert main(["new", str(child), "--out", str(out), "--check"]) == 0
    assert main(["update", str(child), "--out", str(out)]) == 0
    assert "LR = 0.125" in (out / "train_native.py").read_text(encoding="utf-8")
    # An explicit, different --set is drift.
    assert main(["new", str(child), "--out", str(out), "--check", "--set", "optimizer.lr=0.5"]) == 1


def test_lock_without_overrides_has_no_overrides_key(tmp_path: Path) -> None:
    child, out = _pair(tmp_path), tmp_path / "out"
    assert main(["new", str(child), "--out", str(out)]) == 0
    assert "overrides" not in json.loads((out / LOCK_NAME).read_text(encoding="utf-8"))["meta"]


def test_validate_names_the_set_that_caused_an_error(tmp_path: Path, capsys) -> None:
    child = _pair(tmp_path)
    assert main(["validate", str(child), "--set", "optimizer.lr=-1"]) == 2
    err = capsys.readouterr().err
    assert "--set optimizer.lr=-1: optimizer.lr:" in err and "greater than 0" in err


def test_show_annotates_each_value_with_its_origin(tmp_path: Path, capsys) -> None:
    child = _pair(tmp_path)
    assert main(["show", str(child), "--set", "optimizer.lr=0.25"]) == 0
    out = capsys.readouterr().out
    lines = {line.split("#")[0].strip(): line.split("#", 1)[1].strip() for line in out.splitlines()}
    assert lines["lr: 0.25"] == "--set optimizer.lr=0.25"
    assert lines["epochs: 3"] == f"{child}:2"
    assert lines['name: "momentum"'] == f"{tmp_path / 'base.yaml'}:6"
    assert lines["nesterov: false"] == "default"
    shown = yaml.safe_load(out)  # the annotated text is still YAML, with the resolved values
    assert shown["optimizer"]["lr"] == 0.25 and shown["data"]["train"]["batch_size"] == 32
