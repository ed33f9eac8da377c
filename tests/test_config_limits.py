"""The reader's limits and positions: alias bombs, deep nesting, encodings, discriminated unions."""

import time
from pathlib import Path

import pytest

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config

BASE = "network: {kind: builtin, name: mlp, num_classes: 10}\ndata:\n  train: {kind: digits, batch_size: 8}\n"


def problems(path: Path) -> list[tuple[str, int | None, int | None]]:
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return [(p.path, p.line, p.column) for p in info.value.problems]


def test_alias_bomb_is_rejected_fast(tmp_path: Path) -> None:
    text = 'a: &a ["x","x","x","x","x","x","x","x","x"]\n'
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        text += f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]\n"
    (tmp_path / "bomb.yaml").write_text(text)
    start = time.perf_counter()
    found = problems(tmp_path / "bomb.yaml")
    # A hang guard, not a speed target (unbounded expansion takes ~70 s and 3.5 GB); ~0.1 s when idle.
    assert time.perf_counter() - start < 15
    assert len(found) == 1 and found[0][1] == 1


def test_deep_nesting_is_located(tmp_path: Path) -> None:
    (tmp_path / "deep.yaml").write_text("a: " + "[" * 500 + "]" * 500 + "\n")
    assert problems(tmp_path / "deep.yaml") == [
        ("", 1, 67)
    ]  # the root mapping is level 1: the 64th "[" (column 3 + 64)


def test_utf16_with_bom_is_decoded(tmp_path: Path) -> None:
    (tmp_path / "u16.yaml").write_bytes((BASE + "optimizer: {name: adam, lrr: 1}\n").encode("utf-16"))
    assert problems(tmp_path / "u16.yaml") == [("optimizer", 4, 25)]


def test_latin1_byte_is_located(tmp_path: Path) -> None:
    (tmp_path / "l1.yaml").write_bytes("name: x\nk: caf\xe9\n".encode("latin-1"))
    assert problems(tmp_path / "l1.yaml") == [("", 2, 7)]


def test_each_error_under_momentum_names_its_own_key(tmp_path: Path) -> None:
    text = BASE + "optimizer:\n  name: momentum\n  lrr: 0.1\n  lr: -1\n  weight_decay: -2\n  momentum: 0.9\n"
    (tmp_path / "m.yaml").write_text(text)
    assert problems(tmp_path / "m.yaml") == [
        ("optimizer", 6, 3),
        ("optimizer.lr", 7, 7),
        ("optimizer.weight_decay", 8, 17),
    ]


def test_long_name_and_duplicates_reported_with_schema_errors(tmp_path: Path) -> None:
    (tmp_path / "my file.yaml").write_text("name: " + "a" * 300 + "\nname: b\nnetwork: 3\n")
    found = problems(tmp_path / "my file.yaml")
    assert ("name", 1, 7) in found  # too long
    assert ("name", 2, 1) in found  # duplicate
    assert ("network", 3, 10) in found  # schema
