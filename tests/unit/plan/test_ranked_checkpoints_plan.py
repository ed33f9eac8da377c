"""callbacks.checkpoint.keep_max_by in the plan: RankedCheckpoints replaces checkpoint_callback and ModelCheckpoint's
imports; the native loop still hands it what Model would (CallbackParams, RunContext)."""

from __future__ import annotations

import pytest

from mscodegen.config.load import load_config
from mscodegen.output.generate import plans_of

EVAL = {"every_epochs": 1, "metrics": [{"name": "accuracy"}, {"name": "loss"}]}
CHECKPOINT = {"every_epochs": 1, "keep_max": 2, "prefix": "tiny"}
MODEL_CHECKPOINT_ONLY = {"CheckpointConfig", "ModelCheckpoint"}


def plan_of(write_config, checkpoint: dict, variant: str):  # noqa: ANN201
    loaded = load_config(write_config({"eval": EVAL, "callbacks": {"checkpoint": checkpoint}}))
    return plans_of(loaded, loaded.path.parent / "out", (variant,))[1][variant]


def constants_of(plan) -> dict[str, object]:  # noqa: ANN001
    return {c.name: c.value for group in plan.shared.constants for c in group}


@pytest.mark.parametrize("variant", ["model", "native"])
def test_ranked_checkpoints_replace_model_checkpoint(write_config, variant):
    plan = plan_of(write_config, {**CHECKPOINT, "keep_max_by": {"monitor": "accuracy"}}, variant)
    # checkpoints.py defines RankedCheckpoints in place of checkpoint_callback; the scripts import it
    shared = plan.shared
    local = shared.checkpoints_imports(native=variant == "native", keep_best=False)
    assert "RankedCheckpoints" in local and "checkpoint_callback" not in local
    assert shared.checkpoint_writer == shared.checkpoint_class == "RankedCheckpoints"
    module = {i.name for i in shared.checkpoints_module_imports}
    assert MODEL_CHECKPOINT_ONLY.isdisjoint(module) and "Callback" in module
    assert MODEL_CHECKPOINT_ONLY.isdisjoint({i.name for i in plan.imports})
    assert ("CallbackParams" in local) is (variant == "native")
    assert shared.resumable and "load_checkpoint" in local  # --resume latest finds its files
    assert constants_of(plan)["CHECKPOINT_MONITOR"] == "accuracy"
    assert plan.needs_steps_per_epoch  # the files' names: <prefix>-<epoch>_<step in the epoch>


@pytest.mark.parametrize("variant", ["model", "native"])
def test_without_it_nothing_of_it(write_config, variant):
    plan = plan_of(write_config, CHECKPOINT, variant)
    local = plan.shared.checkpoints_imports(native=variant == "native", keep_best=False)
    assert "RankedCheckpoints" not in local and "checkpoint_callback" in local
    assert plan.shared.ranked_checkpoints is None and "CHECKPOINT_MONITOR" not in constants_of(plan)
    assert {"CheckpointConfig", "ModelCheckpoint"} <= {i.name for i in plan.shared.checkpoints_module_imports}


@pytest.mark.parametrize(
    ("keep_max_by", "maximize"),
    [
        ({"monitor": "accuracy"}, True),
        ({"monitor": "loss"}, False),
        ({"monitor": "loss", "mode": "max"}, True),
        ({"monitor": "accuracy", "mode": "min"}, False),
    ],
)
def test_the_direction_of_the_ranking(write_config, keep_max_by, maximize):
    plan = plan_of(write_config, {**CHECKPOINT, "keep_max_by": keep_max_by}, "model")
    assert plan.shared.ranked_checkpoints is not None
    assert plan.shared.ranked_checkpoints.maximize is maximize
