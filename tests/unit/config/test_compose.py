"""extends: composition and --set overrides (merge rules, located errors)."""

import os
import time
from pathlib import Path

import pytest

from mscodegen.config.compose import MAX_EXTENDS_DEPTH, MAX_FILES
from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.config.reader import MAX_BYTES

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


# Hostile `extends` targets and `--set` values (issue 22): one located line each, never the content.


def _messages(path: Path, overrides: tuple[str, ...] = ()) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(path, overrides)
    assert all("\n" not in line for line in map(str, info.value.problems))
    return str(info.value).splitlines()


def test_a_base_that_is_not_a_regular_yaml_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "dir.yaml").mkdir()
    child = _write(tmp_path, "c.yaml", "extends: dir.yaml\n")
    assert _messages(child) == [
        f"{child}:1:10: extends: base {tmp_path / 'dir.yaml'}: a directory, not a file; a config is a YAML file"
    ]
    os.mkfifo(tmp_path / "pipe.yaml")
    _write(tmp_path, "c.yaml", "extends: pipe.yaml\n")
    assert _messages(child)[0].endswith("pipe.yaml: a FIFO (named pipe), not a file; a config is a YAML file")
    (tmp_path / "zero.yaml").symlink_to("/dev/zero")
    _write(tmp_path, "c.yaml", "extends: zero.yaml\n")
    assert _messages(child)[0].endswith("zero.yaml: a character device, not a file; a config is a YAML file")


def test_a_base_must_be_named_yaml_and_is_then_never_read(tmp_path: Path) -> None:
    secret = _write(tmp_path, "shadow", "root:$6$salt$hash:19000:0:99999:7:::\n")
    child = _write(tmp_path, "c.yaml", f"extends: [{secret}, /etc/shadow, bases]\n")
    lines = _messages(child)
    assert lines == [
        f"{child}:1:11: extends[0]: a base must be a YAML file (.yaml or .yml), not '{secret}'",
        f"{child}:1:{13 + len(str(secret))}: extends[1]: a base must be a YAML file (.yaml or .yml), "
        "not '/etc/shadow'",
        f"{child}:1:{26 + len(str(secret))}: extends[2]: a base must be a YAML file (.yaml or .yml), not 'bases'",
    ]
    assert "$6$" not in "".join(lines)


def test_a_yaml_base_with_foreign_content_echoes_only_short_escaped_keys(tmp_path: Path) -> None:
    _write(
        tmp_path, "b.yaml", BASE + "root:$6$saltsaltsalt$hashhashhashhashhashhashhash:19000:0:99999:7:::\n"
    )
    child = _write(tmp_path, "c.yaml", "extends: b.yaml\n")
    (line,) = _messages(child)
    assert line.endswith(
        f"<root>: unknown key 'root:$6$saltsaltsalt$hashhashhashhashha…' (base brought in by extends at {child}:1:10)"
    )


def test_a_symlink_loop_a_long_chain_and_a_wide_tree_are_stopped(tmp_path: Path) -> None:
    (tmp_path / "l1.yaml").symlink_to(tmp_path / "l2.yaml")
    (tmp_path / "l2.yaml").symlink_to(tmp_path / "l1.yaml")
    child = _write(tmp_path, "c.yaml", "extends: l1.yaml\n")
    assert _messages(child) == [
        f"{child}:1:10: extends: base l1.yaml: a symlink loop (a link that leads back to itself)"
    ]
    for i in range(1200):
        _write(tmp_path, f"n{i}.yaml", f"extends: n{i + 1}.yaml\n")
    _write(tmp_path, "n1200.yaml", BASE)
    start = time.process_time()  # CPU time: a loaded machine does not count
    assert _messages(tmp_path / "n0.yaml") == [
        f"{tmp_path / 'n15.yaml'}:1:10: extends: bases extend bases more than {MAX_EXTENDS_DEPTH} levels deep; "
        f"flatten the chain (base brought in by extends at {tmp_path / 'n14.yaml'}:1:10 <- ... <- "
        f"{tmp_path / 'n0.yaml'}:1:10)"
    ]
    # Every file extends the next one twice: 2**15 reads without a cap on the files read.
    for i in range(15):
        _write(tmp_path, f"w{i}.yaml", f"extends: [w{i + 1}.yaml, w{i + 1}.yaml]\n")
    _write(tmp_path, "w15.yaml", BASE)
    assert any(
        f"more than {MAX_FILES} files in the extends tree" in line for line in _messages(tmp_path / "w0.yaml")
    )
    assert time.process_time() - start < 2 * 2.0


def test_bases_share_the_size_cap(tmp_path: Path) -> None:
    big = "# " + "x" * (MAX_BYTES // 2) + "\n"
    _write(tmp_path, "b1.yaml", big + BASE)
    _write(tmp_path, "b2.yaml", big)
    child = _write(tmp_path, "c.yaml", "extends: [b1.yaml, b2.yaml]\n")
    assert _messages(child) == [
        f"{child}:1:20: extends[1]: base {tmp_path / 'b2.yaml'}: with the bases read before it, this config "
        "is over 256 KiB, the most a config may have"
    ]


def test_set_values_are_yaml_lists_and_mappings(tmp_path: Path) -> None:
    path = _write(tmp_path, "plain.yaml", BASE.replace("lenet5", "mlp"))
    loaded = load_config(path, ["network.input_shape=[1, 16, 16]", "optimizer={name: adam, lr: 0.5}"])
    assert loaded.config.network.input_shape == [1, 16, 16]
    assert loaded.config.optimizer.name == "adam" and loaded.config.optimizer.lr == 0.5  # replaced whole
    assert _messages(path, ("optimizer={name: adam, lr: x}",)) == [
        "--set optimizer={name: adam, lr: x}: optimizer.lr: Input should be a valid number, "
        "unable to parse string as a number (got 'x')"
    ]


def test_set_index_into_an_absent_list_or_a_mapping(tmp_path: Path) -> None:
    path = _write(tmp_path, "plain.yaml", BASE)
    assert _messages(path, ("eval.metrics.0.name=loss",)) == [
        "--set eval.metrics.0.name=loss: eval.metrics: is not set, so it is not a list yet and has no item 0: "
        "write the whole list, e.g. --set 'eval.metrics=[{name: loss}]'"
    ]
    assert _messages(path, ("optimizer.0=1",)) == [
        "--set optimizer.0=1: optimizer: is a mapping, not a list: it has no item 0"
    ]


def test_set_value_with_a_newline_stays_on_one_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "plain.yaml", BASE)
    assert _messages(path, ("optimizer.lr=x\ny",)) == [
        "--set optimizer.lr=x\\ny: optimizer.lr: Input should be a valid number, unable to parse string as a "
        "number (got 'x y')"
    ]
    assert _messages(path, ("optimizer.lr=&a [*a]",)) == [
        "--set optimizer.lr=&a [*a]: optimizer.lr: cannot read value: an alias refers to a node that contains it"
    ]
