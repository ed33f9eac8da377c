"""network.freeze.epochs run for real: the frozen weights do not move until their epochs end, then train,
in one optimizer, and a run stopped after the unfreeze and resumed equals the run never stopped.

The cookbook recipe (docs/cookbook/freeze_unfreeze.yaml: LeNet-5 on digits, 11 steps per epoch, the two
convolutions frozen for epoch 1), started from weights this test writes with numpy (network.checkpoint),
so "unchanged" is checked against values the scripts never computed, and with weight decay (Adam's L2
term, added to the gradient), which must not move them either. Cross-variant parity of the recipe is
tests/e2e/test_cookbook.py's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mscodegen.run.parity import generate_both, run_script

from conftest import REPO

RECIPE = REPO / "docs" / "cookbook" / "freeze_unfreeze.yaml"
FROZEN = ("conv1.weight", "conv2.weight")  # the parameters' order in the step records: these first
STEPS_PER_EPOCH = 11  # 1437 training digits, batches of 128
STOP_AT, STEPS = 13, 16  # stopped in epoch 2, two steps after the unfreeze
SHAPES = {  # LeNet-5 on 1x16x16 inputs
    "conv1.weight": (6, 1, 5, 5),
    "conv2.weight": (16, 6, 5, 5),
    "fc1.weight": (120, 16),
    "fc1.bias": (120,),
    "fc2.weight": (84, 120),
    "fc2.bias": (84,),
    "fc3.weight": (10, 84),
    "fc3.bias": (10,),
}


def _initial_weights(path: Path) -> dict[str, np.ndarray]:
    import mindspore as ms

    rng = np.random.default_rng(11)
    weights = {
        name: (rng.standard_normal(shape) * np.sqrt(2 / np.prod(shape[1:] or (50,)))).astype(np.float32)
        for name, shape in SHAPES.items()
    }
    ms.save_checkpoint([{"name": n, "data": ms.Tensor(w)} for n, w in weights.items()], str(path))
    return weights


def _load(path: Path) -> dict[str, np.ndarray]:
    import mindspore as ms

    return {name: p.asnumpy() for name, p in ms.load_checkpoint(str(path)).items() if hasattr(p, "asnumpy")}


def _run(script: Path, workdir: Path, steps: int, *args: str):
    result = run_script(script, workdir, variant="model", max_steps=steps, extra_args=args, timeout=300)
    assert result.returncode == 0, result.log_tail
    return result


@pytest.mark.slow
def test_frozen_then_trained_and_resumed_exactly(tmp_path):
    initial = _initial_weights(tmp_path / "initial.ckpt")
    overrides = [
        f"network.checkpoint.path={tmp_path / 'initial.ckpt'}",
        "optimizer.weight_decay=0.01",
        "data.eval=null",  # not what is tested here: each run spares compiling the evaluation
    ]
    script = generate_both(RECIPE, tmp_path / "scripts", overrides=overrides)["model"]
    out = str(tmp_path / "output")
    whole = _run(script, tmp_path / "whole", STEPS, "--save-weights", str(tmp_path / "whole.ckpt"))
    stopped = _run(script, tmp_path / "stopped", STOP_AT, "--output-dir", out)
    resumed = _run(
        script, tmp_path / "resumed", STEPS, "--output-dir", out, "--resume", "latest",
        "--save-weights", str(tmp_path / "resumed.ckpt"),
    )  # fmt: skip

    # The LR each update applied (the optimizer's get_lr, per parameter): 0 for the frozen ones in epoch 1,
    # then the schedule's, as the others get it
    assert len(whole.steps) == STEPS
    for record in whole.steps:
        frozen_lr, others = record["lr"][: len(FROZEN)], record["lr"][len(FROZEN) :]
        assert len(set(others)) == 1 and others[0] > 0, record
        expected = 0.0 if record["step"] <= STEPS_PER_EPOCH else others[0]
        assert frozen_lr == [expected] * len(FROZEN), record

    # Epoch 1's checkpoint (written by the stopped run at step 11): the frozen weights are the file's,
    # bit for bit; every other weight moved. Their optimizer state did follow their gradients: Adam's
    # moments are not zero at the unfreeze.
    (boundary,) = Path(out).glob(f"checkpoints/*/freeze-1_{STEPS_PER_EPOCH}.ckpt")
    at_boundary = _load(boundary)
    for name, weight in initial.items():
        same = at_boundary[name].tobytes() == weight.tobytes()
        assert same == (name in FROZEN), name
    for name in FROZEN:
        assert np.abs(at_boundary[f"moment1.{name}"]).max() > 0, name
        assert np.abs(at_boundary[f"moment2.{name}"]).max() > 0, name
    group_lr = at_boundary["learning_rate_group_1"]  # the frozen group's LR per optimizer step
    assert (group_lr[:STEPS_PER_EPOCH] == 0).all() and (group_lr[STEPS_PER_EPOCH:] > 0).all()

    # After the unfreeze they train
    final = _load(tmp_path / "whole.ckpt")
    for name in FROZEN:
        assert not np.array_equal(final[name], initial[name]), name

    # Stopped at step 13 (after the unfreeze) and resumed: the same steps (loss, lr) and the same weights
    assert stopped.steps == whole.steps[:STOP_AT]
    assert resumed.steps == whole.steps[STOP_AT:]
    again = _load(tmp_path / "resumed.ckpt")
    assert sorted(again) == sorted(final)
    assert all(again[name].tobytes() == final[name].tobytes() for name in final)
