"""Tests for mscodegen.config.errors: ConfigError formatting and pydantic error translation."""

import pickle
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from mscodegen.config.errors import ConfigError, Problem, format_path
from mscodegen.config.reader import load_yaml
from mscodegen.config.validation import from_validation_error


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Train(Strict):
    batch_size: int
    shuffle: bool = True

    @field_validator("batch_size")
    @classmethod
    def positive(cls, value: int) -> int:
        if value <= 0:
            raise ValueError("batch_size must be positive")
        return value


class Data(Strict):
    train: Train


class Adam(Strict):
    name: Literal["adam"]
    lr: float
    beta1: float = 0.9


class SGD(Strict):
    name: Literal["sgd"]
    lr: float
    momentum: float = 0.0


class Metric(Strict):
    name: str
    k: int = 1


class Config(Strict):
    name: str
    data: Data
    optimizer: Annotated[Adam | SGD, Field(discriminator="name")]
    metrics: list[Metric] = []


VALID = {
    "name": "name: demo\n",
    "data": "data:\n  train:\n    batch_size: 8\n",
    "optimizer": "optimizer:\n  name: adam\n  lr: 0.1\n",
}


def config_with(**sections: str) -> str:
    """A valid config text with some top-level sections replaced (in a fixed order)."""
    text = "".join(sections.get(key, default) for key, default in VALID.items())
    return text + sections.get("extra", "")


def translate(text: str, model: type[BaseModel] = Config) -> ConfigError:
    loaded = load_yaml(text, "cfg.yaml")
    with pytest.raises(ValidationError) as info:
        Config.model_validate(loaded.data)
    return from_validation_error(info.value, loaded, model)


def test_valid_config_passes() -> None:
    config = Config.model_validate(load_yaml(config_with(), "cfg.yaml").data)
    assert (config.data.train.batch_size, config.optimizer) == (
        8,
        Adam(name="adam", lr=0.1),
    )


def test_format_path() -> None:
    assert format_path(()) == ""
    assert format_path(("data", "train", "batch_size")) == "data.train.batch_size"
    assert format_path(("metrics", 2, "k")) == "metrics[2].k"
    assert format_path((0, "a", 1, 2)) == "[0].a[1][2]"


def test_config_error_str_sorts_and_dedupes() -> None:
    error = ConfigError(
        [
            Problem("b", 3, 1, "second"),
            Problem("", None, None, "no position"),
            Problem("a", 1, 5, "first"),
            Problem("b", 3, 1, "second"),
        ],
        "cfg.yaml",
    )
    assert str(error) == ("cfg.yaml:1:5: a: first\ncfg.yaml:3:1: b: second\ncfg.yaml: <root>: no position")
    assert error.source == "cfg.yaml"
    assert len(error.problems) == 3
    assert str(pickle.loads(pickle.dumps(error))) == str(error)


def test_missing_key_points_at_parent_mapping() -> None:
    error = translate(config_with(data="data:\n  train:\n    shuffle: false\n"))
    assert error.problems == [Problem("data.train", 4, 5, "missing required key 'batch_size'")]


def test_missing_top_level_key_points_at_document() -> None:
    error = translate(config_with(name=""))
    assert str(error) == "cfg.yaml:1:1: <root>: missing required key 'name'"


def test_extra_key_with_suggestion_points_at_the_key() -> None:
    error = translate(config_with(optimizer="optimizer:\n  name: adam\n  lr: 0.1\n  lrr: 1\n"))
    assert str(error) == "cfg.yaml:8:3: optimizer: unknown key 'lrr'; did you mean 'lr'?"


def test_extra_key_suggestions_follow_nested_models() -> None:
    data = "data:\n  train:\n    batch_size: 8\n    shufle: true\n"
    text = config_with(data=data, extra="seeed: 1\n")
    assert translate(text).problems == [
        Problem("data.train", 5, 5, "unknown key 'shufle'; did you mean 'shuffle'?"),
        Problem("", 9, 1, "unknown key 'seeed'"),
    ]


def test_wrong_type_shows_short_input() -> None:
    error = translate(config_with(data="data:\n  train:\n    batch_size: lots\n"))
    assert error.problems == [
        Problem(
            "data.train.batch_size",
            4,
            17,
            "Input should be a valid integer, unable to parse string as an integer (got 'lots')",
        )
    ]


def test_long_input_is_left_out() -> None:
    error = translate(config_with(name=f"name: [{', '.join(['abcdef'] * 10)}]\n"))
    assert error.problems == [Problem("name", 1, 7, "Input should be a valid string")]


def test_section_that_is_not_a_mapping() -> None:
    error = translate(config_with(data="data: 5\n"))
    assert error.problems == [Problem("data", 2, 7, "expected a mapping of keys to values (got 5)")]


def test_custom_validator_message_loses_prefix() -> None:
    error = translate(config_with(data="data:\n  train:\n    batch_size: -2\n"))
    assert error.problems == [Problem("data.train.batch_size", 4, 17, "batch_size must be positive")]


def test_bad_union_tag_points_at_the_tag() -> None:
    error = translate(config_with(optimizer="optimizer:\n  name: adamw\n  lr: 0.1\n"))
    assert error.problems == [
        Problem(
            "optimizer.name",
            6,
            9,
            "unknown name 'adamw'; expected one of: 'adam', 'sgd'; did you mean 'adam'?",
        )
    ]


def test_missing_union_tag() -> None:
    error = translate(config_with(optimizer="optimizer:\n  lr: 0.1\n"))
    assert error.problems == [
        Problem("optimizer", 6, 3, "missing key 'name', which selects the kind of entry")
    ]


def test_error_inside_union_member_skips_the_tag() -> None:
    error = translate(config_with(optimizer="optimizer:\n  name: sgd\n  lr: fast\n"))
    assert error.problems == [
        Problem(
            "optimizer.lr",
            7,
            7,
            "Input should be a valid number, unable to parse string as a number (got 'fast')",
        )
    ]


def test_nested_list_index_error() -> None:
    text = config_with(extra="metrics:\n  - name: top1\n  - name: topk\n    k: many\n")
    error = translate(text)
    assert error.problems == [
        Problem(
            "metrics[1].k",
            11,
            8,
            "Input should be a valid integer, unable to parse string as an integer (got 'many')",
        )
    ]


def test_all_errors_reported_at_once_sorted_by_position() -> None:
    text = (
        "optimizer:\n  name: adam\n  lrr: 0.1\n"
        "data:\n  train:\n    batch_size: 0\n"
        "metrics:\n  - {name: top1, k: x}\n  - name: 5\n"
        "name: [1, 2]\n"
    )
    assert str(translate(text)).splitlines() == [
        "cfg.yaml:2:3: optimizer: missing required key 'lr'",
        "cfg.yaml:3:3: optimizer: unknown key 'lrr'; did you mean 'lr'?",
        "cfg.yaml:6:17: data.train.batch_size: batch_size must be positive",
        (
            "cfg.yaml:8:21: metrics[0].k: Input should be a valid integer, "
            "unable to parse string as an integer (got 'x')"
        ),
        "cfg.yaml:9:11: metrics[1].name: Input should be a valid string (got 5)",
        "cfg.yaml:10:7: name: Input should be a valid string (got [1, 2])",
    ]
