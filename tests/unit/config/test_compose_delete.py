"""`_delete_: true` in a config that extends (MMEngine's convention), and errors in a base file that also
name the `extends` entry that brought the base in (issue 32)."""

from pathlib import Path

import pytest

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config

BASE = """\
network: {kind: builtin, name: mlp, num_classes: 10}
data:
  train: {kind: digits, split: train, batch_size: 32, transforms: {resize: [16, 16]}}
optimizer:
  name: adam
  lr: 0.01
  beta1: 0.8
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _problems(
    path: Path, overrides: tuple[str, ...] = ()
) -> list[tuple[str | None, str, int | None, int | None, str]]:
    with pytest.raises(ConfigError) as info:
        load_config(path, overrides)
    return [(p.source, p.path, p.line, p.column, p.message) for p in info.value.problems]


def test_delete_replaces_the_base_mapping_instead_of_merging(tmp_path: Path) -> None:
    _write(tmp_path, "base.yaml", BASE)
    child = "extends: base.yaml\noptimizer:\n  name: momentum\n  lr: 0.1\n"
    merged = _write(tmp_path, "merged.yaml", child)
    # merged into adam's mapping, beta1 stays, and momentum has no beta1
    ((_, key, line, _, message),) = _problems(merged)
    assert (key, line) == ("optimizer", 7) and "beta1" in message
    replaced = _write(
        tmp_path, "replaced.yaml", child.replace("optimizer:\n", "optimizer:\n  _delete_: true\n")
    )
    optimizer = load_config(replaced).config.optimizer
    assert (optimizer.name, optimizer.lr, optimizer.momentum) == ("momentum", 0.1, 0.9)


def test_delete_in_a_nested_mapping_and_errors_inside_point_at_the_child(tmp_path: Path) -> None:
    _write(tmp_path, "base.yaml", BASE)
    child = _write(
        tmp_path,
        "child.yaml",
        "extends: base.yaml\ndata:\n  train:\n    _delete_: true\n    kind: digits\n    batch_size: 0\n",
    )
    found = _problems(child)
    assert [(p[0], p[1], p[2]) for p in found] == [(str(child), "data.train.batch_size", 6)]
    fixed = _write(tmp_path, "fixed.yaml", child.read_text().replace("batch_size: 0", "batch_size: 8"))
    train = load_config(fixed).config.data.train
    assert train.batch_size == 8 and train.split == "train" and train.transforms.resize is None  # the base's


def test_delete_at_every_level_of_a_chain(tmp_path: Path) -> None:
    _write(tmp_path, "base.yaml", BASE)
    _write(tmp_path, "mid.yaml", "extends: base.yaml\noptimizer: {_delete_: true, name: sgd, lr: 0.2}\n")
    top = _write(tmp_path, "top.yaml", "extends: mid.yaml\noptimizer: {_delete_: true, name: momentum}\n")
    optimizer = load_config(top).config.optimizer
    assert (optimizer.name, optimizer.lr) == ("momentum", 0.01)  # lr: the default, neither base's


def test_misplaced_or_non_true_delete_is_refused_at_its_key(tmp_path: Path) -> None:
    _write(tmp_path, "base.yaml", BASE)
    child = _write(
        tmp_path,
        "child.yaml",
        "extends: base.yaml\n"
        "optimizer: {_delete_: 1, name: sgd}\n"
        "train: {_delete_: true, epochs: 1}\n"
        "eval: {metrics: [{_delete_: true, name: loss}]}\n",
    )
    found = _problems(child)
    assert [(p[1], p[2], p[3]) for p in found] == [
        ("optimizer._delete_", 2, 13),
        ("train._delete_", 3, 9),
        ("eval.metrics[0]._delete_", 4, 19),
    ]
    assert "takes true (this mapping replaces the base's instead of merging into it), not 1" in found[0][4]
    assert "the bases have no mapping at train to replace" in found[1][4]
    assert "means nothing inside a list" in found[2][4]
    plain = _write(tmp_path, "plain.yaml", BASE.replace("optimizer:\n", "optimizer:\n  _delete_: true\n"))
    assert [(p[1], p[2], p[4]) for p in _problems(plain)] == [
        ("optimizer._delete_", 5, "_delete_: true replaces a base's mapping, and this file extends no base")
    ]
    top = _write(tmp_path, "top.yaml", "extends: base.yaml\n_delete_: true\n")
    assert [(p[1], p[2]) for p in _problems(top)] == [("_delete_", 2)]
    (found,) = _problems(plain.with_name("base.yaml"), ("optimizer={_delete_: true, name: sgd}",))
    assert (
        found[4] == "_delete_ means nothing in a --set value: a mapping VALUE replaces the key whole already"
    )


def test_an_error_in_a_base_names_the_extends_line_that_brought_it_in(tmp_path: Path) -> None:
    base = _write(tmp_path, "base.yaml", BASE.replace("lr: 0.01", "lr: -1"))
    mid = _write(tmp_path, "mid.yaml", "# the middle\nextends: [base.yaml]\n")
    top = _write(tmp_path, "top.yaml", "extends: mid.yaml\ntrain: {epochs: 1}\n")
    with pytest.raises(ConfigError) as info:
        load_config(top)
    assert str(info.value) == (
        f"{base}:6:7: optimizer.lr: Input should be greater than 0 (got -1)"
        f" (base brought in by extends at {mid}:2:11 <- {top}:1:10)"
    )
    _write(tmp_path, "base.yaml", "optimizer: {name: adam\n")  # does not parse: compose stops there
    with pytest.raises(ConfigError) as info:
        load_config(top)
    assert str(info.value).startswith(f"{base}:")
    assert str(info.value).endswith(f" (base brought in by extends at {mid}:2:11 <- {top}:1:10)")
