"""Values that validated and then failed or misled at run time (issue 30 "Nothing lost, and both variants fail
alike"): keyword-argument values MindSpore documents, YAML 1.1's base-60 and octal numbers, control characters
in paths, epochs beyond what the scripts' learning-rate list fits in memory. One located line each."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mscodegen.catalog import dataset_ops, losses
from mscodegen.catalog.signatures import DOCUMENTED_VALUES, value_problem
from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.config.reader import load_yaml
from mscodegen.schema._base import path_text_problem
from mscodegen.schema.training import MAX_EPOCHS

from conftest import REPO

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


def accepted(tmp_path: Path, text: str, overrides: tuple[str, ...] = ()) -> None:
    path = tmp_path / "cfg.yaml"
    path.write_text(text, encoding="utf-8")
    load_config(path, overrides)


# --- keyword-argument values ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("loss", "kwarg", "expected"),
    [
        (
            "CrossEntropyLoss",
            "reduction: meen",
            "'meen' is not one of 'mean', 'sum', 'none'; did you mean 'mean'?",
        ),
        ("CrossEntropyLoss", "label_smoothing: 1.0", "1.0 is out of range: must be in [0, 1)"),
        (
            "CrossEntropyLoss",
            "label_smoothing: 0",
            "expected a float, got 0 (CrossEntropyLoss checks the type): write 0.0",
        ),
        ("FocalLoss", "gamma: 2", "expected a float, got 2 (FocalLoss checks the type): write 2.0"),
        ("HuberLoss", "delta: 0", "0 is out of range: must be > 0"),
        ("SmoothL1Loss", "beta: -1.0", "-1.0 is out of range: must be > 0"),
        (
            "SoftmaxCrossEntropyWithLogits",
            "sparse: 1",
            "expected true or false, got 1 (SoftmaxCrossEntropyWithLogits checks the type)",
        ),
        ("NLLLoss", "reduction: 3", "expected a string, got 3 (NLLLoss checks the type)"),
    ],
)
def test_loss_kwargs_values_are_checked_at_their_key(
    tmp_path: Path, loss: str, kwarg: str, expected: str
) -> None:
    line = f"loss: {{name: {loss}, kwargs: {{{kwarg}}}}}"
    key, value = kwarg.split(": ")
    column = line.index(kwarg) + len(key) + 3
    problems = [
        p for p in rejected(tmp_path, BASE + line + "\n") if "loss.name:" not in p
    ]  # regression losses
    assert problems == [f"5:{column}: loss.kwargs.{key}: {expected}"]


@pytest.mark.parametrize(
    "kwargs",
    [
        "{reduction: sum, label_smoothing: 0.1, ignore_index: -100}",
        "{reduction: none, label_smoothing: 0.0}",
        "{weight: null}",  # the default, a Tensor parameter
    ],
)
def test_documented_loss_kwargs_values_are_accepted(tmp_path: Path, kwargs: str) -> None:
    accepted(tmp_path, BASE + f"loss: {{name: CrossEntropyLoss, kwargs: {kwargs}}}\n")


def test_pipeline_op_values_are_checked_too(tmp_path: Path) -> None:
    text = BASE.replace(
        "{kind: digits, batch_size: 8}",
        "{kind: digits, batch_size: 8, transforms: {image: [{RandomHorizontalFlip: {prob: 1.5}}]}}",
    )
    assert rejected(tmp_path, text) == [
        "3:61: data.train.transforms.image[0]: RandomHorizontalFlip: `prob`: 1.5 is out of range: must be in [0, 1]"
    ]


def test_every_owner_of_the_value_table_takes_that_argument() -> None:
    """An entry for `Owner.arg` must name an argument the shipped tables have (a rename would disarm it)."""
    tables = {name: entry["params"] for name, entry in losses.load_table()["losses"].items()}
    tables |= {name: op["params"] for name, op in dataset_ops.load_table()["ops"].items()}
    for entry in DOCUMENTED_VALUES:
        owner, _, key = entry.partition(".")
        if owner != "*":
            assert key in {p["name"] for p in tables[owner]}, entry


def test_unknown_owners_fall_back_to_the_docstring_type() -> None:
    assert (
        value_problem("X", "flag", "bool, optional", 1) == "expected true or false, got 1 (X checks the type)"
    )
    assert value_problem("X", "flag", "bool, optional", True) is None
    assert value_problem("X", "anything", "Union[int, float]", "text") is None  # string_problem's case
    assert value_problem("X", "anything", None, [1, 2]) is None


# --- YAML 1.1's other bases ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "base", "value"),
    [
        ("1:30", "a base-60 (sexagesimal) number", 90),
        ("-1:00:00", "a base-60 (sexagesimal) number", -3600),
        ("1:30.5", "a base-60 (sexagesimal) number", 90.5),
        ("0123", "an octal number", 83),
        ("-017", "an octal number", -15),
    ],
)
def test_sexagesimal_and_octal_scalars_are_refused(written: str, base: str, value: object) -> None:
    with pytest.raises(ConfigError) as info:
        load_yaml(f"a: {written}\n", "cfg.yaml")
    assert str(info.value) == (
        f"cfg.yaml:1:4: a: YAML 1.1 reads {written} as {base}, {value!r}: write '{written}' in quotes if you "
        f"mean text, or {value!r}"
    )


@pytest.mark.parametrize(
    ("written", "value"),
    [
        ("'1:30'", "1:30"),
        ('"0123"', "0123"),
        ("0", 0),
        ("00", 0),
        ("-0", 0),
        ("0x1F", 31),
        ("10", 10),
        ("0.5", 0.5),
    ],
)
def test_quoted_and_decimal_scalars_are_read_as_before(written: str, value: object) -> None:
    assert load_yaml(f"a: {written}\n", "cfg.yaml").data == {"a": value}


def test_an_octal_override_is_refused(tmp_path: Path) -> None:
    assert rejected(tmp_path, BASE, ("train.epochs=010",)) == [
        "--set train.epochs=010: train.epochs: cannot read value: YAML 1.1 reads 010 as an octal number, 8: "
        "write '010' in quotes if you mean text, or 8"
    ]


# --- control characters in paths --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("section", "key"),
    [
        ("train: {output_dir: %s}", "train.output_dir"),
        ("callbacks: {checkpoint: {every_epochs: 1, directory: %s}}", "callbacks.checkpoint.directory"),
        ("callbacks: {checkpoint: {every_epochs: 1, prefix: %s}}", "callbacks.checkpoint.prefix"),
        ("network: {kind: builtin, name: mlp, checkpoint: {path: %s}}", "network.checkpoint.path"),
        ("data: {train: {kind: mnist, path: %s}}", "data.train.path"),
        ("data: {train: {kind: cifar10, path: %s}}", "data.train.path"),
        ("data: {train: {kind: image_folder, path: %s}}", "data.train.path"),
        ("data: {train: {kind: csv, path: %s, columns: {x: [a], label: b}}}", "data.train.path"),
    ],
)
def test_a_control_character_in_any_path_is_refused(tmp_path: Path, section: str, key: str) -> None:
    value = '"a\\0b.ckpt"'
    text = (
        BASE.replace("network: {kind: builtin, name: mlp, num_classes: 10}\n", "")
        if "network" in section
        else BASE
    )
    text = text.replace("data:\n  train: {kind: digits, batch_size: 8}\n", "") if "data" in section else text
    problems = rejected(tmp_path, text + section % value + "\n")
    mine = [p for p in problems if f" {key}: " in p]
    assert len(mine) == 1, problems
    assert mine[0].endswith(
        f"{key}: a path cannot contain the control character '\\x00' (at character 2); remove it (in YAML, "
        "a double-quoted string reads \\0, \\t, \\n as control characters)"
    )


def test_a_gan_sample_directory_with_a_line_break_is_refused() -> None:
    from mscodegen.schema.gan import SampleGrid

    with pytest.raises(ValueError, match="control character '\\\\n'"):
        SampleGrid(directory="sam\nples")


# --- epochs -------------------------------------------------------------------------------------------


def test_epochs_are_bounded_by_the_learning_rate_list(tmp_path: Path) -> None:
    accepted(tmp_path, BASE + f"train: {{epochs: {MAX_EPOCHS}}}\n")
    assert rejected(tmp_path, BASE + f"train: {{epochs: {MAX_EPOCHS + 1}}}\n") == [
        f"5:17: train.epochs: {MAX_EPOCHS + 1} epochs is more than the {MAX_EPOCHS} a config may train: the "
        "scripts build one learning-rate value per step in memory before the first step"
    ]


def test_no_shipped_config_trains_more_epochs_than_allowed() -> None:
    root = REPO
    configs = [*root.glob("examples/**/*.yaml"), *root.glob("docs/**/*.yaml")]
    assert configs
    for config in configs:
        data = load_yaml(config.read_text(encoding="utf-8"), str(config), strict=False).data
        train = data.get("train") if isinstance(data, dict) else None
        epochs = train.get("epochs", 1) if isinstance(train, dict) else 1
        assert isinstance(epochs, int) and epochs <= MAX_EPOCHS, config


# --- probed paths (issue 30, part 5) ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "message"),
    [
        (
            '"\\ud800"',
            "'\\ud800' (at character 1) is half of a UTF-16 surrogate pair, not a character",
        ),
        (
            '"\\u202eevil"',
            "a path cannot contain the control character '\\u202e' (at character 1); remove it",
        ),
        ('"a\\Lb"', "a path cannot contain the control character '\\u2028' (at character 2); remove it"),
        ("a" * 300, "a name in the path is 300 bytes; a file or directory name may have at most 255"),
        (
            "/".join(["a" * 200] * 21),
            "the path is 4220 bytes; a path may have at most 4095 (Linux's PATH_MAX)",
        ),
    ],
)
def test_paths_the_os_cannot_take_are_refused(tmp_path: Path, written: str, message: str) -> None:
    (problem,) = rejected(tmp_path, BASE + f"train:\n  output_dir: {written}\n")
    assert problem.startswith(f"6:15: train.output_dir: {message}")


def test_a_lone_surrogate_in_a_path_built_in_python_is_refused() -> None:
    """The reader refuses it in a file; a config built in Python meets PathText's own check."""
    assert path_text_problem("a\ud800") == (
        "a path cannot contain the lone surrogate '\\ud800' (at character 2), which has no UTF-8"
    )


def test_a_unicode_path_the_os_takes_is_accepted(tmp_path: Path) -> None:
    accepted(tmp_path, BASE + "train:\n  output_dir: 'résultats/实验 1/ok'\n")


def test_an_extends_entry_with_a_null_byte_is_located(tmp_path: Path) -> None:
    assert rejected(tmp_path, 'extends: "base\\0.yaml"\n' + BASE) == [
        "1:10: extends: a path cannot contain the control character '\\x00' (at character 5); remove it (in YAML, "
        "a double-quoted string reads \\0, \\t, \\n as control characters)"
    ]


# --- flags (issue 30, part 5) -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "shown"), [("1", "1"), ("'no'", "'no'"), ("0", "0"), ("'true'", "'true'")]
)
def test_a_flag_is_true_or_false_only(tmp_path: Path, written: str, shown: str) -> None:
    """pydantic's lax bool read 1 as true and the string 'no' as false, silently."""
    text = BASE.replace("{name: adam, lr: 0.01}", f"{{name: momentum, nesterov: {written}}}")
    assert rejected(tmp_path, text) == [
        f"4:{text.splitlines()[3].index(written) + 1}: optimizer.nesterov: expected true or false (got {shown})"
    ]


def test_yaml_booleans_are_still_flags(tmp_path: Path) -> None:
    accepted(
        tmp_path, BASE + "train: {dataset_sink_mode: no}\ncallbacks: {loss_monitor: off, time_monitor: yes}\n"
    )


def test_a_number_key_in_another_base_says_what_yaml_reads() -> None:
    """One problem, with the number YAML reads (it said 'which YAML reads as None' next to a second one)."""
    with pytest.raises(ConfigError) as info:
        load_yaml("1:30: x\n", "cfg.yaml")
    assert str(info.value) == (
        "cfg.yaml:1:1: <root>: mapping keys must be strings, got '1:30', which YAML reads as 90; quote it if it is text"
    )


# --- float32 (issue 30, part 5) ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("section", "key"),
    [
        ("optimizer: {name: adam, weight_decay: %s}", "optimizer.weight_decay"),
        ("optimizer: {name: momentum, momentum: %s}", "optimizer.momentum"),
        ("lr_schedule: {kind: cosine, min_lr: %s}", "lr_schedule.min_lr"),
    ],
)
def test_a_float_beyond_float32_is_refused_at_its_key(tmp_path: Path, section: str, key: str) -> None:
    """1e300 validated and became inf in MindSpore's float32 (weight decay, momentum, a schedule's LR)."""
    text = BASE if section.startswith("lr_") else BASE.replace("optimizer: {name: adam, lr: 0.01}\n", "")
    text += section % "1e300" + "\n"
    problems = rejected(tmp_path, text)
    assert [p.split(": ", 1)[1] for p in problems] == [
        f"{key}: 1e+300 overflows float32 (largest 3.4e38), which MindSpore computes in"
    ]


def test_a_normalize_mean_beyond_float32_is_refused() -> None:
    from mscodegen.schema.data import Normalize

    with pytest.raises(ValueError, match="1e\\+39 overflows float32"):
        Normalize(mean=[1e39], std=[1.0])


# --- synthetic data in memory (issue 30, part 5) ----------------------------------------------------


def test_synthetic_data_beyond_memory_is_refused(tmp_path: Path) -> None:
    """The scripts draw all synthetic samples as one float32 array: 3x100000x100000 died in numpy."""
    text = BASE.replace(
        "{kind: digits, batch_size: 8}", "{kind: synthetic, image_shape: [3, 100000, 100000]}"
    )
    assert rejected(tmp_path, text) == [
        "3:41: data.train.image_shape: 256 samples of 3x100000x100000 float32 are 28,610.2 GiB, which the scripts "
        "make in memory at once; synthetic data may have at most 4 GiB (lower num_samples or image_shape)"
    ]


def test_synthetic_num_samples_beyond_memory_is_refused_with_the_default_shape(tmp_path: Path) -> None:
    text = BASE.replace("{kind: digits, batch_size: 8}", "{kind: synthetic, num_samples: 2000000}")
    (problem,) = rejected(tmp_path, text)
    assert problem.startswith("3:10: data.train: 2000000 samples of 1x32x32 float32 are 7.6 GiB")


# --- text that is not UTF-8 (issue 30, part 5) ------------------------------------------------------

SURROGATE = "'\\ud800' (at character 1) is half of a UTF-16 surrogate pair, not a character: write the character itself, or its \\U escape"


def test_a_lone_surrogate_escape_is_refused_where_it_is(tmp_path: Path) -> None:
    """`name: "\\ud800"` ended in 'cannot read this config (UnicodeEncodeError ...); please report it'."""
    text = 'name: "\\ud800"\n' + BASE + '"\\ud800": 1\n'
    assert rejected(tmp_path, text) == [f"1:7: name: {SURROGATE}", f"6:1: <root>: {SURROGATE}"]


def test_a_set_key_with_bytes_that_are_not_utf8_is_refused(tmp_path: Path) -> None:
    """Python passes such argv bytes as surrogates; the config's hash raised UnicodeEncodeError."""
    path = tmp_path / "cfg.yaml"
    path.write_text(BASE, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path, ("tr\udcffain.epochs=3",))
    assert str(info.value) == (
        "--set tr\\udcffain.epochs=3: tr\\udcffain.epochs: the key has bytes that are not UTF-8; a config's keys are text"
    )


def test_a_config_file_name_with_bytes_that_are_not_utf8_is_refused(tmp_path: Path) -> None:
    path = Path(os.fsdecode(os.fsencode(tmp_path) + b"/x\xff.yaml"))
    try:
        path.write_text(BASE, encoding="utf-8")
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system takes only UTF-8 names")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert [p.message for p in info.value.problems] == [
        "the file name has bytes that are not UTF-8; rename the file (its name goes into the scripts)"
    ]


# --- numbers YAML reads as text (issue 30, part 5) --------------------------------------------------


def test_an_exponent_without_a_point_says_yaml_read_it_as_text(tmp_path: Path) -> None:
    """`label_smoothing: 1e-1` was told to "write the number without quotes", which it was."""
    text = BASE + "loss: {name: CrossEntropyLoss, kwargs: {label_smoothing: 1e-1}}\n"
    assert rejected(tmp_path, text) == [
        "5:58: loss.kwargs.label_smoothing: CrossEntropyLoss: `label_smoothing` takes float, not the string '1e-1' "
        "(YAML 1.1 reads 1e-1 as text, for want of a decimal point: write 0.1)"
    ]


def test_a_string_beyond_float_gets_no_401_digit_hint() -> None:
    from mscodegen.catalog.signatures import string_problem

    assert string_problem("Resize", "size", "Union[int, Sequence[int]]", ["1e400", 3]) == (
        "Resize: `size` takes Union[int, Sequence[int]], not the string '1e400'"
    )


def test_binary_is_refused_by_the_reader(tmp_path: Path) -> None:
    """`output_dir: !!binary aGVsbG8=` validated as the directory 'hello' (pydantic decodes bytes)."""
    assert rejected(tmp_path, BASE + "train: {output_dir: !!binary aGVsbG8=}\n") == [
        "5:21: train.output_dir: !!binary gives bytes, which no config value takes; write the text"
    ]


def test_a_long_octal_is_refused_without_echoing_it() -> None:
    with pytest.raises(ConfigError) as info:
        load_yaml("a: " + "0" * 4000 + "1\n", "cfg.yaml")
    assert str(info.value) == (
        "cfg.yaml:1:4: a: YAML 1.1 reads this as an octal number: quote it if you mean text, or write the number "
        "in decimal"
    )


def test_a_set_value_the_reader_cannot_read_says_so_once(tmp_path: Path) -> None:
    assert rejected(tmp_path, BASE, ("train.epochs=!foo 3",)) == [
        "--set train.epochs=!foo 3: train.epochs: cannot read value: could not determine a constructor for the "
        "tag '!foo'"
    ]
