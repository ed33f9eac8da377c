"""Every stage that can still run reports its problems: one error never hides another stage's.

Each test asserts every problem's key and line:column, and that `validate` exits 2 without a traceback.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mscodegen.cli import main
from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config

Found = list[tuple[str, int | None, int | None]]


def problems(path: Path) -> Found:
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return [(p.path, p.line, p.column) for p in info.value.problems]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_yaml_syntax_error_and_bad_file_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "my run.yaml", "network: {kind: builtin\ndata: [\n")
    found = problems(path)
    assert ("name", 1, 1) in found
    assert [f for f in found if f[0] == ""] == [("", 2, 5)]  # the syntax error
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"{path}:1:1: name: the file name 'my run' cannot name the run" in err


def test_yaml_syntax_error_with_a_name_key_does_not_blame_the_file_name(tmp_path: Path) -> None:
    path = write(tmp_path, "my run.yaml", "name: ok\nnetwork: {kind: builtin\ndata: [\n")
    assert [f[0] for f in problems(path)] == [""]


def test_bad_file_name_and_schema_errors(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "bad name.yaml",
        "network: {kind: builtin, name: mlp}\ndata:\n  train: {kind: synthetic, image_shape: [1, 8, 8]}\n"
        "optimizer: {name: momentum, lr: -1}\ntrain: {epochs: 0}\n",
    )
    assert problems(path) == [("name", 1, 1), ("optimizer.lr", 4, 33), ("train.epochs", 5, 17)]


def test_schema_error_in_one_section_and_cross_section_problems_among_the_others(tmp_path: Path) -> None:
    # optimizer is broken; network/data (classes), eval (top_k) and lr_schedule/train still get checked
    path = write(
        tmp_path,
        "cfg.yaml",
        """\
network: {kind: builtin, name: mlp, num_classes: 4}
data:
  train: {kind: synthetic, image_shape: [1, 8, 8], num_classes: 6}
  eval: {kind: synthetic, image_shape: [1, 8, 8], num_classes: 4}
optimizer: {name: momentum, lr: -1}
lr_schedule: {kind: piecewise, milestones: [3]}
train: {epochs: 2}
eval:
  metrics: [{name: top_k, k: 9}]
""",
    )
    assert problems(path) == [
        ("network.num_classes", 1, 50),
        ("optimizer.lr", 5, 33),
        ("lr_schedule.milestones", 6, 44),
        ("eval.metrics[0].k", 9, 30),
    ]


def test_rules_that_read_a_broken_section_are_skipped(tmp_path: Path) -> None:
    # train fails the schema: the milestone rule reads train.epochs, so it must not run on a default
    path = write(
        tmp_path,
        "cfg.yaml",
        """\
network: {kind: builtin, name: mlp}
data:
  train: {kind: synthetic, image_shape: [1, 8, 8]}
optimizer: {name: momentum}
lr_schedule: {kind: piecewise, milestones: [3]}
train: {epochs: 5, typo: 1}
""",
    )
    assert problems(path) == [("train", 6, 20)]


def test_missing_section_and_cross_section_problems_elsewhere(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "cfg.yaml",
        """\
network: {kind: builtin, name: mlp, num_classes: 2}
data:
  train: {kind: synthetic, image_shape: [1, 8, 8], num_classes: 3}
amp: {level: O0, fp32_cells: [Softmax]}
""",
    )
    assert problems(path) == [("", 1, 1), ("network.num_classes", 1, 50), ("amp.fp32_cells", 4, 30)]


def test_unreadable_value_and_schema_and_rule_problems(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "cfg.yaml",
        """\
network: {kind: builtin, name: mlp, num_classes: 2}
data:
  train: {kind: synthetic, image_shape: [1, 8, 8], num_classes: 3}
optimizer: {name: momentum, lr: !!set {a}}
train: {epochs: -1}
""",
    )
    # the tag is reported once (not again as "lr: None is not a number"), with the others
    assert problems(path) == [
        ("network.num_classes", 1, 50),
        ("optimizer.lr", 4, 33),
        ("train.epochs", 5, 17),
    ]


def test_non_string_key_and_schema_problems(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "cfg.yaml",
        """\
network: {kind: builtin, name: mlp}
data:
  train: {kind: synthetic, image_shape: [1, 8, 8], 1: x}
optimizer: {name: momentum, lr: -1}
""",
    )
    assert problems(path) == [("data.train", 3, 52), ("optimizer.lr", 4, 33)]


def test_duplicate_key_bad_file_name_schema_and_rules(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "a b.yaml",
        """\
network: {kind: builtin, name: mlp, num_classes: 2}
data:
  train: {kind: synthetic, image_shape: [1, 8, 8], num_classes: 3}
optimizer: {name: momentum}
optimizer: {name: adam}
runtime: {seed: -1}
""",
    )
    assert problems(path) == [
        ("name", 1, 1),
        ("network.num_classes", 1, 50),
        ("optimizer", 5, 1),
        ("runtime.seed", 6, 17),
    ]


def test_broken_data_eval_leaves_the_rules_on_data_train_running(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "cfg.yaml",
        """\
network: {kind: builtin, name: mlp, input_shape: [1, 8, 8]}
data:
  train: {kind: digits, transforms: {resize: [16, 16]}}
  eval: {kind: digits, batch_size: 0}
optimizer: {name: momentum}
loss: {name: MSELoss}
""",
    )
    assert problems(path) == [
        ("network.input_shape", 1, 50),
        ("data.eval.batch_size", 4, 36),
        ("loss.name", 6, 14),
    ]


def test_broken_data_eval_leaves_the_train_factory_checked(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "cfg.yaml",
        """\
network: {kind: builtin, name: mlp}
data:
  train: {kind: import, factory: 'missing_mod:make', image_shape: [1, 8, 8]}
  eval: {kind: digits, batch_size: 0}
optimizer: {name: momentum}
""",
    )
    assert problems(path) == [("data.train.factory", 3, 34), ("data.eval.batch_size", 4, 36)]


def test_yaml_syntax_error_in_a_file_with_bases_does_not_blame_the_file_name(tmp_path: Path) -> None:
    path = write(tmp_path, "my run.yaml", "extends: base.yaml\nnetwork: {kind: builtin\n")
    assert [f[0] for f in problems(path)] == [""]
