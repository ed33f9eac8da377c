"""Tests for mscodegen.config.reader: values, 1-based marks, and loader errors."""

from pathlib import Path

import pytest

from mscodegen.config.compose import compose
from mscodegen.config.errors import ConfigError, Problem
from mscodegen.config.reader import LoadedYaml, Mark, load_yaml

CONFIG = """\
name: demo
data:
  train:
    batch_size: 32
    shuffle: yes
optimizer: {name: adam, lr: 1.0e-3}
metrics:
  - name: top1
  - name: topk
    k: 5
empty:
"""


def problems_of(text: str) -> list[Problem]:
    with pytest.raises(ConfigError) as info:
        load_yaml(text, "cfg.yaml")
    return info.value.problems


@pytest.fixture
def loaded() -> LoadedYaml:
    return load_yaml(CONFIG, "cfg.yaml")


def test_values_are_plain_python(loaded: LoadedYaml) -> None:
    assert loaded.source == "cfg.yaml"
    assert loaded.data == {
        "name": "demo",
        "data": {"train": {"batch_size": 32, "shuffle": True}},
        "optimizer": {"name": "adam", "lr": 0.001},
        "metrics": [{"name": "top1"}, {"name": "topk", "k": 5}],
        "empty": None,
    }


def test_value_and_key_marks_are_one_based(loaded: LoadedYaml) -> None:
    assert loaded.marks[()] == Mark(1, 1)
    assert loaded.marks[("name",)] == Mark(1, 7)
    assert loaded.marks[("data", "train")] == Mark(4, 5)
    assert loaded.marks[("data", "train", "batch_size")] == Mark(4, 17)
    assert loaded.marks[("optimizer", "lr")] == Mark(6, 29)
    assert loaded.marks[("metrics", 1)] == Mark(9, 5)
    assert loaded.marks[("metrics", 1, "k")] == Mark(10, 8)
    assert loaded.key_marks[("data", "train")] == Mark(3, 3)
    assert loaded.key_marks[("metrics", 1, "k")] == Mark(10, 5)
    assert ("metrics", 1) not in loaded.key_marks


@pytest.mark.parametrize("text", ["", "# only a comment\n", "---\n"])
def test_empty_document_is_empty_mapping(text: str) -> None:
    loaded = load_yaml(text, "cfg.yaml")
    assert (loaded.data, loaded.marks, loaded.key_marks) == ({}, {(): Mark(1, 1)}, {})


def test_tab_indentation_is_a_syntax_error() -> None:
    assert problems_of("data:\n\tbatch_size: 2\n") == [
        Problem(
            "",
            2,
            1,
            "invalid YAML: found character '\\t' that cannot start any token; "
            "YAML does not allow tabs for indentation",
        )
    ]


def test_unclosed_bracket_reports_both_positions() -> None:
    with pytest.raises(ConfigError) as info:
        load_yaml("name: x\nmetrics: [top1, top5\nepochs: 3\n", "cfg.yaml")
    assert str(info.value) == (
        "cfg.yaml:3:7: <root>: invalid YAML: expected ',' or ']', but got ':' "
        "(while parsing a flow sequence at 2:10)"
    )


def test_duplicate_keys_point_at_second_occurrence() -> None:
    text = "optimizer:\n  lr: 0.1\n  momentum: 0.9\n  lr: 0.2\nname: a\nname: b\n"
    assert problems_of(text) == [
        Problem("optimizer.lr", 4, 3, "duplicate key 'lr' (first defined at line 2)"),
        Problem("name", 6, 1, "duplicate key 'name' (first defined at line 5)"),
    ]


@pytest.mark.parametrize("text", ["- a\n- b\n", "just text\n", "null\n"])
def test_document_must_be_a_mapping(text: str) -> None:
    assert problems_of(text) == [Problem("", 1, 1, "the config must be a mapping of keys to values")]


def test_non_string_keys_are_rejected() -> None:
    assert problems_of("data:\n  1: x\n  on: true\n  ? [a]\n  : 2\n") == [
        Problem(
            "data",
            2,
            3,
            "mapping keys must be strings, got '1', which YAML reads as 1; quote it if it is text",
        ),
        Problem(
            "data",
            3,
            3,
            "mapping keys must be strings, got 'on', which YAML reads as True; quote it if it is text",
        ),
        Problem(
            "data",
            4,
            5,
            "mapping keys must be strings, got a collection; quote it if it is text",
        ),
    ]


def test_anchors_aliases_and_merge_keys() -> None:
    text = "base: &b {lr: 0.1, wd: 0.0}\nsgd:\n  <<: *b\n  lr: 0.5\nsame: *b\n"
    loaded = load_yaml(text, "cfg.yaml")
    assert loaded.data == {
        "base": {"lr": 0.1, "wd": 0.0},
        "sgd": {"lr": 0.5, "wd": 0.0},
        "same": {"lr": 0.1, "wd": 0.0},
    }
    assert loaded.marks[("sgd", "lr")] == Mark(4, 7)  # the explicit key wins
    assert loaded.marks[("sgd", "wd")] == Mark(1, 24)  # merged: points at the anchor
    assert loaded.marks[("same", "lr")] == Mark(1, 15)


def test_recursive_alias_is_an_error() -> None:
    assert problems_of("a: &x [1, *x]\n") == [
        Problem("a[1]", 1, 4, "an alias refers to a node that contains it")  # the anchor
    ]


def test_dates_stay_strings_and_unknown_tags_fail() -> None:
    assert load_yaml("run: 2024-05-01\n", "c").data == {"run": "2024-05-01"}
    assert problems_of("lr: !python/none x\n") == [
        Problem(
            "lr",
            1,
            5,
            "cannot read value: could not determine a constructor for the tag '!python/none'",
        )
    ]


def test_control_characters_are_rejected() -> None:
    assert problems_of("name: a\x07b\n") == [Problem("", 1, 8, "invalid YAML: unacceptable character #x0007")]


def test_a_config_file_is_read_and_parsed(tmp_path: Path) -> None:
    path = tmp_path / "cfg.yaml"
    path.write_text("name: x\n", encoding="utf-8")
    loaded = compose(path).loaded
    assert (loaded.data, loaded.source) == ({"name": "x"}, str(path))


def test_a_config_file_that_cannot_be_read(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ConfigError) as info:
        compose(missing)
    assert str(info.value) == f"{missing}: <root>: file not found"

    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"name: \xff\n")
    with pytest.raises(ConfigError) as info:
        compose(binary)
    assert info.value.problems == [
        Problem(
            "", 1, 7, "file is not valid UTF-8: byte 0xff at offset 6 (save the file as UTF-8)", str(binary)
        )
    ]

    with pytest.raises(ConfigError) as info:
        compose(tmp_path)
    assert info.value.problems[0].message == "a directory, not a file; a config is a YAML file"


def test_mark_for_skips_union_tags(loaded: LoadedYaml) -> None:
    assert loaded.mark_for(("optimizer", "adam", "lr")) == (
        ("optimizer", "lr"),
        Mark(6, 29),
    )
    assert loaded.mark_for(("data", "function-after[check()]", "train", "batch_size")) == (
        ("data", "train", "batch_size"),
        Mark(4, 17),
    )


def test_mark_for_missing_key_points_at_parent_mapping(loaded: LoadedYaml) -> None:
    assert loaded.mark_for(("data", "train", "epochs")) == (
        ("data", "train"),
        Mark(4, 5),
    )
    assert loaded.mark_for(("seed",)) == ((), Mark(1, 1))


def test_mark_for_list_indices(loaded: LoadedYaml) -> None:
    assert loaded.mark_for(("metrics", 1, "k")) == (("metrics", 1, "k"), Mark(10, 8))
    assert loaded.mark_for(("metrics", 7, "k")) == (("metrics",), Mark(8, 3))
    assert loaded.mark_for(("metrics", 1), key=True) == (("metrics", 1), Mark(9, 5))


def test_mark_for_key_mark_for_extra_keys(loaded: LoadedYaml) -> None:
    assert loaded.mark_for(("data", "train", "shuffle"), key=True) == (
        ("data", "train", "shuffle"),
        Mark(5, 5),
    )
    assert loaded.mark_for(("data", "train", "shuffle")) == (
        ("data", "train", "shuffle"),
        Mark(5, 14),
    )
