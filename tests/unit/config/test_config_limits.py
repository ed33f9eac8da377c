"""The reader's limits and positions: size, alias bombs, deep nesting, encodings, discriminated unions."""

import os
import time
from pathlib import Path

import pytest

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.config.reader import MAX_BYTES, MAX_EVENTS

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


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_utf16_and_utf32_without_bom_are_decoded(tmp_path: Path, encoding: str) -> None:
    """YAML tells them from the null bytes around the first character; they were read as UTF-8 and
    refused at the first non-ASCII byte, or at the first null byte ("unacceptable character #x0000")."""
    text = BASE + "optimizer: {name: adam, lrr: 1}\n# café\n"
    (tmp_path / "u.yaml").write_bytes(text.encode(encoding))
    assert problems(tmp_path / "u.yaml") == [("optimizer", 4, 25)]


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


# Size and time (issue 22): any input is accepted or rejected in under 2 s, without reading past the cap.
# CPU seconds: other processes on a loaded machine do not count.
FAST = 2.0
FULL = BASE + "optimizer: {name: adam, lr: 0.01}\n"


def _rejected_fast(path: Path) -> list[str]:
    start = time.process_time()
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert time.process_time() - start < FAST
    return [p.message for p in info.value.problems]


def test_a_5mb_yaml_is_rejected_by_its_size_not_as_an_alias_bomb(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text(BASE + "extra:\n" + "".join(f"  k{i}: [1, 2, 3, 'abc', 4.5]\n" for i in range(200_000)))
    assert path.stat().st_size > 5_000_000
    assert _rejected_fast(path) == [f"file is over 256 KiB; a config may have at most 256 KiB {UNDER_3_KB}"]


UNDER_3_KB = "(the examples have under 3 KB)"


def test_a_50mb_file_is_read_no_further_than_the_cap(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    with open(path, "wb") as file:
        file.truncate(50 * 2**20)  # sparse: costs no disk
    assert _rejected_fast(path) == [f"file is over 256 KiB; a config may have at most 256 KiB {UNDER_3_KB}"]


def test_a_dense_file_under_the_size_cap_stops_at_the_value_cap(tmp_path: Path) -> None:
    path = tmp_path / "dense.yaml"
    path.write_text(BASE + "a: [" + ",".join(["1"] * 100_000) + "]\n")
    assert path.stat().st_size < MAX_BYTES
    assert _rejected_fast(path) == [
        f"more than {MAX_EVENTS} values and collections; a config has a few hundred"
    ]


def test_a_sparse_file_at_the_size_cap_is_read_fast(tmp_path: Path) -> None:
    path = tmp_path / "lines.yaml"
    path.write_text(FULL + "\n" * (MAX_BYTES - len(FULL) - 100) + "train: {epochs: 2}\n")
    start = time.process_time()
    assert load_config(path).config.train.epochs == 2
    assert time.process_time() - start < FAST


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_a_device_is_refused_unread() -> None:
    assert _rejected_fast(Path("/dev/zero")) == ["a character device, not a file; a config is a YAML file"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.yaml")
    assert _rejected_fast(tmp_path / "pipe.yaml") == [
        "a FIFO (named pipe), not a file; a config is a YAML file"
    ]


def test_a_directory_and_a_symlink_loop_are_named(tmp_path: Path) -> None:
    (tmp_path / "dir.yaml").mkdir()
    assert _rejected_fast(tmp_path / "dir.yaml") == ["a directory, not a file; a config is a YAML file"]
    (tmp_path / "a.yaml").symlink_to(tmp_path / "b.yaml")
    (tmp_path / "b.yaml").symlink_to(tmp_path / "a.yaml")
    assert _rejected_fast(tmp_path / "a.yaml") == ["a symlink loop (a link that leads back to itself)"]


def test_a_long_unknown_key_is_shortened_and_escaped(tmp_path: Path) -> None:
    (tmp_path / "k.yaml").write_text(FULL + '"secret line\\nsecond secret line that goes on and on": 1\n')
    (message,) = _rejected_fast(tmp_path / "k.yaml")
    assert message == "unknown key 'secret line\\nsecond secret line that go…'"
    assert "\n" not in message
