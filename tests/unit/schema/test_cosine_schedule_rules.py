"""The cosine's length, restarts and epoch_stair (lr_schedule.decay_epochs, cycles, cycle_decay,
epoch_stair): what validate refuses, at which key, and what the scripts print when they are used. That they
print nothing new when they are not is tests/golden's: the cosine examples' scripts are compared byte for byte.

The LR lists themselves are compared with mindcv's create_scheduler in
tests/unit/recipes/test_mindcv_schedules_equal.py; the applied LR in tests/e2e/test_schedules.py.
"""

from __future__ import annotations

import ast
import math

import pytest

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.output.generate import generate

# TINY: 2 epochs of 6 steps
REJECTED = [
    pytest.param(
        {"kind": "cosine", "decay_epochs": 0}, "lr_schedule.decay_epochs", "greater than 0", id="decay-0"
    ),
    pytest.param(
        {"kind": "cosine", "decay_epochs": 1, "cycles": 0},
        "lr_schedule.cycles",
        "greater than 0",
        id="cycles-0",
    ),
    pytest.param(
        {"kind": "cosine", "decay_epochs": 1, "cycles": 2, "cycle_decay": 0.0},
        "lr_schedule.cycle_decay",
        "greater than 0",
        id="cycle-decay-0",
    ),
    pytest.param(
        {"kind": "cosine", "cycles": 2}, "lr_schedule.cycles", "needs decay_epochs", id="cycles-alone"
    ),
    pytest.param(
        {"kind": "cosine", "decay_epochs": 1, "cycle_decay": 0.5},
        "lr_schedule.cycle_decay",
        "needs cycles > 1",
        id="cycle-decay-one-cosine",
    ),
    pytest.param(
        {"kind": "warmup_cosine", "warmup_epochs": 1, "decay_epochs": 1, "cycles": 2},
        "lr_schedule.cycles",
        "the training has 1 epochs after the warm-up (train.epochs 2): cosine 2 would start after its end; "
        "lower cycles to 1",
        id="restart-after-the-end",
    ),
    pytest.param(
        {"kind": "cosine", "epoch_stair": "yes"}, "lr_schedule.epoch_stair", "", id="stair-not-bool"
    ),
]


@pytest.mark.parametrize(("schedule", "key", "message"), REJECTED)
def test_rejected_at_its_key(write_config, schedule: dict, key: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(write_config({"lr_schedule": schedule}))
    problems = [(p.path, p.message) for p in caught.value.problems]
    assert len(problems) == 1 and problems[0][0] == key and message in problems[0][1], problems


def test_a_cosine_longer_than_the_training_is_valid(write_config) -> None:
    # mindcv's own defaults do this (decay_epochs 100, epoch_size 90): the cosine is cut at the end
    loaded = load_config(write_config({"lr_schedule": {"kind": "warmup_cosine", "decay_epochs": 2}}))
    assert loaded.config.lr_schedule.decay_epochs == 2


def _build_lr(files: dict[str, str]) -> tuple[dict, str]:
    """build_lr() of train_native.py, run with the script's module-level literals, and its source."""
    source = files["train_native.py"]
    namespace: dict = {"math": math}
    text = ""
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            try:
                namespace[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                continue
        elif isinstance(node, ast.FunctionDef) and node.name == "build_lr":
            exec(compile(ast.Module([node], []), "train_native.py", "exec"), namespace)  # noqa: S102
            text = ast.get_source_segment(source, node) or text
    return namespace, text


def test_restarts_print_their_constants(write_config, tmp_path) -> None:
    schedule = {"kind": "cosine", "min_lr": 0.01, "decay_epochs": 1, "cycles": 2, "cycle_decay": 0.5}
    files = generate(
        load_config(write_config({"lr_schedule": schedule, "optimizer": {"lr": 0.05}})), tmp_path
    )
    namespace, text = _build_lr(files)
    for line in ("DECAY_EPOCHS = 1  # lr_schedule.decay_epochs", "CYCLES = 2  # lr_schedule.cycles"):
        assert line in files["train_model.py"] and line in files["train_native.py"]
    assert "LR * CYCLE_DECAY**cycle" in text and "for cycle in range(CYCLES)" in text
    # two cosines of 2 steps each: 0.05 then 0.05 x 0.5 at their first step, halfway down at the second
    lrs = namespace["build_lr"](4, 2)
    assert lrs == [0.05, 0.01 + 0.5 * 0.04, 0.025, 0.01 + 0.5 * 0.015]


def test_epoch_stair_holds_the_warm_up_and_the_cosine_per_epoch(write_config, tmp_path) -> None:
    schedule = {"kind": "warmup_cosine", "warmup_epochs": 1, "warmup_start_lr": 0.01, "epoch_stair": True}
    train = {"epochs": 3}
    files = generate(load_config(write_config({"lr_schedule": schedule, "train": train})), tmp_path)
    namespace, text = _build_lr(files)
    assert "the LR moves once per epoch" in text
    # 3 steps per epoch: the warm-up's one epoch at 0.01, then the cosine's epochs 0 and 1 of 2
    assert (
        namespace["build_lr"](9, 3)
        == [0.01] * 3 + [0.05] * 3 + [0.5 * 0.05 * (1 + math.cos(math.pi / 2))] * 3
    )
