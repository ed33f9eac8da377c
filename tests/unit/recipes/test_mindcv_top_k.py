"""import-mindcv: ckpt_save_policy top_k -> callbacks.checkpoint.keep_max_by, exactly where mindcv evaluates every
epoch it saves (val_interval 1), approximated otherwise, refused without val_while_train (mindcv's train.py
asserts it)."""

from __future__ import annotations

from pathlib import Path

import yaml
from test_import_mindcv import MNIST_RECIPE, findings, run, write_mnist

from mscodegen.config.load import load_config


def convert(tmp_path: Path, capsys, extra: str) -> tuple[int, list[str], Path]:
    # `extra` is appended to the MNIST recipe: a repeated key takes the later value (yaml.safe_load, as mindcv)
    write_mnist(tmp_path / "mnist")
    recipe = tmp_path / "r.yaml"
    recipe.write_text(MNIST_RECIPE.format(data_dir=tmp_path / "mnist") + extra + "\n")
    out = tmp_path / "out.yaml"
    code, err, _ = run(recipe, out, capsys)
    return code, err, out


def test_top_k_keeps_the_best_by_top_1_accuracy(tmp_path: Path, capsys) -> None:
    code, err, out = convert(
        tmp_path, capsys, "ckpt_save_policy: top_k\nkeep_checkpoint_max: 3\nckpt_save_interval: 2"
    )
    assert (code, err) == (0, [])
    checkpoint = yaml.safe_load(out.read_text())["callbacks"]["checkpoint"]
    # mindcv's StateMonitor: saves every ckpt_save_interval epochs and the last; CheckpointManager.top_K_checkpoint
    # keeps keep_checkpoint_max by res[0], the first of get_metrics': Top_1_Accuracy, higher is better
    assert checkpoint["every_epochs"] == 2 and checkpoint["keep_max"] == 3
    assert checkpoint["keep_max_by"] == {"monitor": "accuracy", "mode": "max"}
    assert "keep_max_by:  # ckpt_save_policy top_k" in out.read_text()
    loaded = load_config(out).config
    assert loaded.eval is not None and loaded.eval.every_epochs == 1


def test_top_k_with_saves_mindcv_does_not_evaluate_is_approximated(tmp_path: Path, capsys) -> None:
    code, err, out = convert(tmp_path, capsys, "ckpt_save_policy: top_k\nval_interval: 2")
    assert code == 1
    assert (
        "val_interval 2: mindcv ranks a save in an epoch it does not evaluate as accuracy 0"
        in (findings(err, "approximated")["ckpt_save_policy"])
    )
    assert "keep_max_by" not in yaml.safe_load(out.read_text())["callbacks"]["checkpoint"]
    load_config(out)


def test_top_k_without_evaluation_is_refused(tmp_path: Path, capsys) -> None:
    code, err, out = convert(tmp_path, capsys, "ckpt_save_policy: top_k\nval_while_train: False")
    assert code == 2 and not out.exists()
    assert any("ckpt_save_policy top_k with val_while_train false" in line for line in err), err
