"""data.*.decode: an image folder read undecoded decodes in its pipeline's first image op, and only there;
each problem located at its key."""

from __future__ import annotations

from pathlib import Path

import pytest

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config

CONFIG = """\
network: {{kind: builtin, name: lenet5, num_classes: 2, input_shape: [3, 32, 32]}}
data:
  train:
    kind: image_folder
    path: f
    batch_size: 2
{train}
{eval}optimizer: {{name: momentum}}
"""
UNDECODED = """\
    decode: false
    transforms:
      image:
        - RandomCropDecodeResize: {size: 32}
        - HWC2CHW
"""


def found(tmp_path: Path, train: str, eval_: str = "") -> list[tuple[str, int | None, str]]:
    path = tmp_path / "cfg.yaml"
    path.write_text(CONFIG.format(train=train.rstrip("\n"), eval=eval_), encoding="utf-8")
    try:
        load_config(path)
    except ConfigError as error:
        return [(p.path, p.line, p.message) for p in error.problems]
    return []


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    for label in ("a", "b"):
        (tmp_path / "f" / label).mkdir(parents=True)
        for i in range(4):
            (tmp_path / "f" / label / f"{i}.jpg").write_bytes(b"")
    return tmp_path


def test_undecoded_folder_with_a_decoding_first_op_is_valid(folder: Path) -> None:
    assert found(folder, UNDECODED) == []
    assert found(folder, UNDECODED.replace("RandomCropDecodeResize: {size: 32}", "Decode")) == []
    # data.eval without transforms: train's deterministic part, RandomCropDecodeResize -> Resize on a
    # decoding source
    evaluate = "  eval: {kind: image_folder, path: f, batch_size: 2}\n"
    assert found(folder, UNDECODED, evaluate) == []


def test_undecoded_folder_must_decode_first(folder: Path) -> None:
    train = UNDECODED.replace("RandomCropDecodeResize: {size: 32}", "RandomResizedCrop: {size: 32}")
    ((key, line, message),) = found(folder, train)
    assert (key, line) == ("data.train.transforms.image[0]", 10)
    assert message.startswith("decode: false reads the files' bytes: data.train's image pipeline must start")
    assert message.endswith("(RandomCropDecodeResize or Decode), not RandomResizedCrop")
    # the decoder second: the first op is what is wrong
    second = UNDECODED.replace("        - HWC2CHW", "        - HWC2CHW\n        - Decode")
    reordered = second.replace("- RandomCropDecodeResize: {size: 32}\n        - HWC2CHW", "- HWC2CHW")
    assert [p[:2] for p in found(folder, reordered)] == [("data.train.transforms.image[0]", 10)]


def test_undecoded_folder_needs_the_pipeline_form(folder: Path) -> None:
    ((key, line, message),) = found(folder, "    decode: false\n    transforms: {resize: [32, 32]}\n")
    assert (key, line) == ("data.train.decode", 7)
    assert message.endswith("(RandomCropDecodeResize or Decode), in the pipeline form of transforms")


def test_derived_eval_of_an_undecoded_eval_folder_is_refused_at_its_decode(folder: Path) -> None:
    evaluate = "  eval: {kind: image_folder, path: f, batch_size: 2, decode: false}\n"
    ((key, _, message),) = found(folder, UNDECODED, evaluate)
    assert key == "data.eval.decode"
    assert "runs train's deterministic part: give it its own" in message


def test_decoding_twice_is_refused(folder: Path) -> None:
    decoded = UNDECODED.replace("    decode: false\n", "")
    ((key, line, message),) = found(folder, decoded)
    assert (key, line) == ("data.train.transforms.image[0]", 9)
    assert message == (
        "RandomCropDecodeResize decodes a file's bytes, but data.train decodes the files "
        "(decode: false reads their bytes)"
    )
    twice = UNDECODED.replace("        - HWC2CHW", "        - Decode\n        - HWC2CHW")
    ((key, _, message),) = found(folder, twice)
    assert key == "data.train.transforms.image[1]"
    assert message.endswith("but the image is already decoded by RandomCropDecodeResize")


def test_decoding_a_source_of_arrays_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "cfg.yaml"
    path.write_text(
        "network: {kind: builtin, name: lenet5, num_classes: 10}\n"
        "data:\n"
        "  train: {kind: digits, transforms: {image: [Decode, {Resize: {size: [32, 32]}}, HWC2CHW]}}\n"
        "optimizer: {name: momentum}\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert [(p.path, p.message) for p in info.value.problems] == [
        (
            "data.train.transforms.image[0]",
            "Decode decodes a file's bytes, but data.train (digits) yields decoded images",
        )
    ]
