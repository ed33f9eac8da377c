"""Messages for configs that validated wrongly or were refused unhelpfully (issue 22): numbers, paths,
unsupported setups, the input shape, an MNIST directory with one pair. One located line each."""

from __future__ import annotations

import struct
import tempfile
import zlib
from pathlib import Path

import pytest

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.schema.sources import image_size

BASE = """\
network: {kind: builtin, name: mlp, num_classes: 10}
data:
  train: {kind: digits, batch_size: 8}
optimizer: {name: adam, lr: 0.01}
"""


def rejected(tmp_path: Path, text: str, overrides: tuple[str, ...] = ()) -> list[str]:
    path = tmp_path / "cfg.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path, overrides)
    lines = str(info.value).splitlines()
    assert len(lines) == len(info.value.problems)  # one line each
    return [line.removeprefix(f"{path}:") for line in lines]


# --- numbers ----------------------------------------------------------------------------------------


def test_a_yaml_boolean_is_not_a_count(tmp_path: Path) -> None:
    assert rejected(tmp_path, BASE.replace("batch_size: 8", "batch_size: yes")) == [
        "3:37: data.train.batch_size: expected an integer, got true (YAML reads yes/no, on/off, true/false "
        "as booleans)"
    ]


@pytest.mark.parametrize("key", ["optimizer.lr", "optimizer.weight_decay", "lr_schedule.min_lr"])
def test_a_yaml_boolean_is_not_a_float_either(tmp_path: Path, key: str) -> None:
    text = BASE + "lr_schedule: {kind: cosine}\n"
    assert rejected(tmp_path, text, (f"{key}=yes",)) == [
        f"--set {key}=yes: {key}: expected a number, got true (YAML reads yes/no, on/off, true/false as booleans)"
    ]


def test_integers_beyond_int32_are_refused(tmp_path: Path) -> None:
    assert rejected(tmp_path, BASE + "train: {epochs: 100000000000000000000000000000}\n") == [
        "5:17: train.epochs: Input should be less than or equal to 2147483647 (MindSpore counts steps, "
        "epochs and sizes in int32) (got 100000000000000000000000000000)"
    ]


def test_a_float_or_a_string_is_not_an_integer(tmp_path: Path) -> None:
    assert rejected(tmp_path, BASE + "train: {epochs: 3.0, log_every_steps: '5'}\n") == [
        "5:17: train.epochs: Input should be a valid integer, written without a decimal point (got 3.0)",
        "5:39: train.log_every_steps: Input should be a valid integer (got '5')",
    ]


# --- paths ------------------------------------------------------------------------------------------

CHECKPOINT = "callbacks: {checkpoint: {every_epochs: 1, directory: %s}}\n"


@pytest.mark.parametrize("directory", ["../../x", "..", "a/../../x", "'..\\\\x'"])
def test_a_checkpoint_directory_cannot_leave_the_output_dir(tmp_path: Path, directory: str) -> None:
    (line,) = rejected(tmp_path, BASE + CHECKPOINT % directory)
    assert "callbacks.checkpoint.directory:" in line and "leads out of --output-dir" in line


@pytest.mark.parametrize("directory", ["ckpt", "./a/../b", "/abs/ckpt", "a/.."])
def test_a_checkpoint_directory_under_it_or_absolute_is_accepted(tmp_path: Path, directory: str) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text(BASE + CHECKPOINT % directory, encoding="utf-8")
    assert load_config(path).config.callbacks.checkpoint.directory == directory


def test_an_empty_output_dir_is_refused(tmp_path: Path) -> None:
    assert rejected(tmp_path, BASE + "train: {output_dir: ''}\n") == [
        "5:21: train.output_dir: an empty directory name; use '.' for the directory the script runs in"
    ]


# --- unsupported setups -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("override", "path", "what"),
    [
        ("recompute=true", "<root>", "recompute (gradient checkpointing)"),
        ("network.recompute=true", "network", "recompute (gradient checkpointing)"),
        ("train.gradient_checkpointing=true", "train", "recompute (gradient checkpointing)"),
        ("lr_finder={steps: 100}", "<root>", "an LR finder (LR range test)"),
        ("callbacks.lr_finder=true", "callbacks", "an LR finder (LR range test)"),
        ("lr_schedule={kind: lr_finder}", "lr_schedule.kind", "an LR finder (LR range test)"),
    ],
)
def test_unsupported_setups_say_so_with_the_nearest_alternative(
    tmp_path: Path, override: str, path: str, what: str
) -> None:
    (line,) = rejected(tmp_path, BASE, (override,))
    assert line.startswith(f"--set {override}: {path}: not supported: {what}; ")
    assert "Cell.recompute()" in line or "lr_schedule.kind: polynomial" in line


# --- the input shape --------------------------------------------------------------------------------


def _png(width: int, height: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + chunk + struct.pack(">I", zlib.crc32(chunk))


def _jpeg(width: int, height: int) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + sof + b"\xff\xd9"


def test_image_headers_give_the_size() -> None:
    assert image_size_of(_png(40, 30)) == (40, 30)
    assert image_size_of(_jpeg(41, 31)) == (41, 31)
    assert image_size_of(b"GIF89a" + struct.pack("<HH", 7, 5)) == (7, 5)
    assert image_size_of(b"\x89PNG\r\n\x1a\n") is None
    assert image_size_of(b"not an image") is None


def image_size_of(data: bytes) -> tuple[int, int] | None:
    with tempfile.NamedTemporaryFile() as file:
        file.write(data)
        file.flush()
        return image_size(Path(file.name))


FOLDER = """\
network: {kind: builtin, name: mlp, num_classes: 2}
data:
  train: {kind: image_folder, path: folder, batch_size: 1}
optimizer: {name: adam, lr: 0.01}
"""


def test_image_folder_input_shape_is_inferred_from_the_first_image(tmp_path: Path) -> None:
    for label, image in (("cat", _png(48, 32)), ("dog", _jpeg(10, 10))):
        (tmp_path / "folder" / label).mkdir(parents=True)
        (tmp_path / "folder" / label / "1.img").write_bytes(image)
    assert rejected(tmp_path, FOLDER) == [
        "1:10: network: builtin mlp needs the input shape: set network.input_shape: [3, 32, 48] (the first "
        "image, 1.img, is 48x32; image_folder decodes to RGB), or data.train.transforms.resize: [32, 48] if "
        "the images differ in size"
    ]
    path = tmp_path / "ok.yaml"
    path.write_text(FOLDER.replace("num_classes: 2}", "num_classes: 2, input_shape: [3, 32, 48]}"))
    load_config(path)


@pytest.mark.parametrize(
    ("shape", "meant"),
    [("[10]", "10 features are [1, 1, 10]"), ("[8, 8]", "one-channel 8x8 inputs are [1, 8, 8]")],
)
def test_a_short_input_shape_names_the_three_dims_meant(tmp_path: Path, shape: str, meant: str) -> None:
    text = BASE.replace("num_classes: 10}", f"num_classes: 10, input_shape: {shape}}}")
    assert rejected(tmp_path, text) == [
        f"1:67: network.input_shape: input_shape is [channels, height, width]: {meant}"
    ]


# --- MNIST usage all --------------------------------------------------------------------------------


def test_mnist_usage_all_reads_the_test_pair_alone(tmp_path: Path) -> None:
    mnist = tmp_path / "mnist"
    mnist.mkdir()
    (mnist / "t10k-labels-idx1-ubyte").write_bytes((0x801).to_bytes(4, "big") + (16).to_bytes(4, "big"))
    (mnist / "t10k-images-idx3-ubyte").write_bytes((0x803).to_bytes(4, "big") + (16).to_bytes(4, "big"))
    text = BASE.replace(
        "{kind: digits, batch_size: 8}", "{kind: mnist, path: mnist, usage: all, batch_size: 8}"
    )
    path = tmp_path / "ok.yaml"
    path.write_text(text)
    assert load_config(path).config.data.train.usage == "all"
    for name in ("t10k-labels-idx1-ubyte", "t10k-images-idx3-ubyte"):
        (mnist / name).unlink()
    (line,) = rejected(tmp_path, text)
    assert line.endswith("(usage all needs the train or the test pair)")
