"""network.freeze.epochs (issue 35): what validate refuses, at which key, and what the scripts build.

The run itself (frozen weights bit-identical to the loaded ones, then trained; resume) is
tests/e2e/test_freeze_epochs.py.
"""

from __future__ import annotations

import ast
import re

import pytest

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.output.generate import generate

KEY = "network.freeze.epochs"
FREEZE = {"network": {"freeze": {"patterns": ["fc1.*"], "epochs": 1}}}  # TINY: mlp fc1, fc2; 2 epochs


def _problems(write_config, overrides: dict) -> list[tuple[str, str, int | None]]:
    with pytest.raises(ConfigError) as caught:
        load_config(write_config(overrides))
    return [(p.path, p.message, p.line) for p in caught.value.problems]


REJECTED = [
    pytest.param(
        {"network": {"freeze": {"patterns": ["fc1.*"], "epochs": 2}}},
        "2 leaves no epoch of train.epochs (2) to train them: give 1 to 1, or leave epochs out",
        id="as-long-as-the-run",
    ),
    pytest.param(
        {"network": {"freeze": {"patterns": ["fc1.*"], "epochs": 5}}},
        "5 leaves no epoch of train.epochs (2) to train them",
        id="longer-than-the-run",
    ),
    pytest.param(
        {**FREEZE, "train": {"epochs": 1}},
        "1 leaves no epoch of train.epochs (1) to train them: train for more epochs",
        id="one-epoch-run",
    ),
    pytest.param(
        {**FREEZE, "optimizer": {"groups": [{"params": ["fc2.*"], "lr_scale": 0.1}]}},
        "not supported with optimizer.groups yet",
        id="with-groups",
    ),
    pytest.param(
        {**FREEZE, "optimizer": {"layer_decay": {"rate": 0.5}}},
        "not supported with optimizer.layer_decay yet",
        id="with-layer-decay",
    ),
]


@pytest.mark.parametrize(("overrides", "message"), REJECTED)
def test_rejected_at_epochs(write_config, overrides, message):
    problems = _problems(write_config, overrides)
    assert [(path, message in text) for path, text, _ in problems] == [(KEY, True)], problems
    (_, _, line) = problems[0]
    assert line is not None  # located in the file, not just by key


def test_zero_is_refused_at_its_key(write_config):
    problems = _problems(write_config, {"network": {"freeze": {"patterns": ["fc1.*"], "epochs": 0}}})
    assert [path for path, _, _ in problems] == [KEY]


@pytest.mark.parametrize(
    "overrides",
    [
        pytest.param(FREEZE, id="plain"),
        pytest.param({**FREEZE, "train": {"epochs": 2, "dataset_sink_mode": True}}, id="sink-mode"),
        pytest.param({**FREEZE, "grad": {"accumulation_steps": 2}}, id="accumulated"),
        pytest.param({**FREEZE, "callbacks": {"checkpoint": {"every_epochs": 1}}}, id="resumable"),
    ],
)
def test_accepted(write_config, overrides):
    assert load_config(write_config(overrides)).config.network.freeze.epochs == 1


def _optimizer_block(text: str) -> str:
    """train()'s lines from the per-step LR list to the optimizer's construction."""
    match = re.search(r"\n( +learning_rate = build_lr.*?\n +optimizer = [^\n]*\n)", text, re.DOTALL)
    assert match, text
    return match.group(1)


def _assigned(block: str) -> dict[str, ast.expr]:
    """{name: value} of the block's assignments."""
    tree = ast.parse(block.replace("\n    ", "\n").strip())
    return {
        node.targets[0].id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
    }


def _groups(params: ast.expr) -> list[dict[str, str]]:
    """The optimizer's parameter groups, each {key: source of its value}."""
    assert isinstance(params, ast.List)
    return [
        {ast.unparse(k): ast.unparse(v) for k, v in zip(item.keys, item.values, strict=True)}
        if isinstance(item, ast.Dict)
        else {"*": ast.unparse(item)}
        for item in params.elts
    ]


@pytest.mark.parametrize(
    ("optimizer", "expected"),
    [
        pytest.param(
            {},
            [
                {"'params'": "[p for p in trainable if p.name not in frozen]"},
                {"'params'": "[p for p in trainable if p.name in frozen]", "'lr'": "frozen_lr"},
                {"'order_params'": "trainable"},
            ],
            id="no-weight-decay",
        ),
        pytest.param(
            {"weight_decay": 0.01},
            [
                {
                    "*": "*weight_decay_split([p for p in trainable if p.name not in frozen], learning_rate, WEIGHT_DECAY)"
                },
                {
                    "*": "*weight_decay_split([p for p in trainable if p.name in frozen], frozen_lr, WEIGHT_DECAY)"
                },
                {"'order_params'": "trainable"},
            ],
            id="mindspore-filter",
        ),
        pytest.param(
            {"weight_decay": 0.01, "decay_filter": "every_parameter"},
            [
                {
                    "'params'": "[p for p in trainable if p.name not in frozen]",
                    "'weight_decay'": "WEIGHT_DECAY",
                },
                {
                    "'params'": "[p for p in trainable if p.name in frozen]",
                    "'lr'": "frozen_lr",
                    "'weight_decay'": "WEIGHT_DECAY",
                },
                {"'order_params'": "trainable"},
            ],
            id="every-parameter",
        ),
    ],
)
def test_the_frozen_parameters_are_a_group_of_their_own(write_config, tmp_path, optimizer, expected):
    """Both variants build the same optimizer: every trainable parameter in it from the start, the frozen
    ones in groups whose LR is frozen_lr (0 for FREEZE_EPOCHS epochs, then LR), none set requires_grad."""
    loaded = load_config(write_config({**FREEZE, "optimizer": optimizer}))
    files = generate(loaded, tmp_path / "out")
    blocks = {name: _optimizer_block(files[name]) for name in ("train_model.py", "train_native.py")}
    assert blocks["train_model.py"] == blocks["train_native.py"]
    block = blocks["train_model.py"]
    assigned = _assigned(block)
    assert _groups(assigned["params"]) == expected
    # a constant LR as a list too (MindSpore would apply LR + 1.0 - 1.0 beside the frozen group's list)
    assert (
        ast.unparse(assigned["learning_rate"]) == "build_lr(steps_per_epoch * args.epochs, steps_per_epoch)"
    )
    build_lr = next(
        node for node in ast.parse(files["train_model.py"]).body if getattr(node, "name", None) == "build_lr"
    )
    assert ast.unparse(build_lr.body[-1]) == "return [LR] * total_steps"
    assert ast.unparse(assigned["frozen_steps"]) == "FREEZE_EPOCHS * steps_per_epoch"
    assert ast.unparse(assigned["frozen_lr"]) == (
        "[0.0 if step < frozen_steps else lr for step, lr in enumerate(learning_rate)]"
    )
    assert (
        ast.unparse(assigned["optimizer"]) == "nn.Momentum(params, learning_rate=learning_rate, momentum=0.9)"
    )
    for name in ("train_model.py", "train_native.py"):
        assert "FREEZE_EPOCHS = 1  # network.freeze.epochs" in files[name]
        assert "frozen = frozen_names(network)" in files[name]
        assert "requires_grad" not in files[name]
    assert "FREEZE" not in files["predict.py"] and "frozen_names" not in files["predict.py"]
