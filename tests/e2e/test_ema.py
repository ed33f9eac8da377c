"""ema: schema rules, parity of the averages, and the averages against a numpy recomputation (a step skipped
on overflow updates no average, as in mindcv's TrainStep)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.run.parity import generate_both, run_script, step_differences

from conftest import TINY, UNTIL_OPTIMIZER, merge

EMA = {
    "ema": {"decay": 0.6, "warmup_steps": 2},
    "callbacks": {"checkpoint": {"every_epochs": 1, "prefix": "tiny"}},
}
# float16 gradients at a scale of 2 ** 24 overflow on the first step, which is skipped (the scale drops to 16):
# mindcv's TrainStep then updates neither the weights nor the averages, nor counts the update
SKIPS_FIRST_STEP = {
    "amp": {"level": "O2"},
    "loss_scale": {"kind": "dynamic", "init": 2.0**24, "factor": 2**20},
}

# The script's initial weights, as its train() builds them (the probe stops when the optimizer is made).
INITIAL_WEIGHTS = (
    UNTIL_OPTIMIZER
    + """
ms.save_checkpoint([{"name": p.name, "data": p} for p in optimizer.parameters], probe_args[0])
"""
)


def _write(tmp_path: Path, config: dict, name: str = "tiny") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _problems(path: Path) -> list:
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return info.value.problems


@pytest.mark.parametrize("decay", [0, 1, 1.5, -0.1])
def test_decay_outside_0_1_is_located(tmp_path, decay):
    (problem,) = _problems(_write(tmp_path, merge(TINY, {"ema": {"decay": decay}})))
    assert problem.path == "ema.decay"
    assert problem.line is not None


def test_ema_with_accumulation_is_rejected_with_skipping_loss_scale_and_sink_mode_not(tmp_path):
    config = merge(TINY, {"ema": {}, "grad": {"accumulation_steps": 2}})
    (problem,) = _problems(_write(tmp_path, config))
    assert problem.path == "ema" and "accumulation_steps" in problem.message
    for other in (
        {"loss_scale": {"kind": "dynamic"}},
        {"loss_scale": {"kind": "fixed", "value": 8, "drop_overflow_update": True}},
        {"train": {"dataset_sink_mode": True}},  # the train cell updates the averages
    ):
        load_config(_write(tmp_path, merge(TINY, {"ema": {}, **other})))


def test_defaults_are_mindcvs(tmp_path):
    config = load_config(_write(tmp_path, merge(TINY, {"ema": {}}))).config
    assert config.ema is not None
    assert (config.ema.decay, config.ema.warmup_steps) == (0.9999, 2000)  # mindcv TrainStep's


def _load(path: Path) -> dict[str, np.ndarray]:
    import mindspore as ms

    return {
        name: p.asnumpy()
        for name, p in ms.load_checkpoint(str(path)).items()
        if name not in ("config_sha256", "run_id")
    }


def _run(script: Path, workdir: Path, variant: str, steps: int):
    weights = workdir / "weights.ckpt"
    result = run_script(
        script,
        workdir,
        variant=variant,
        max_steps=steps,
        extra_args=("--save-weights", str(weights)),
        timeout=300,
    )
    assert result.returncode == 0, result.log_tail
    return result, _load(weights)


@pytest.mark.slow
def test_ema_parity_and_numpy_reference_with_a_skipped_step(tmp_path):
    scripts = generate_both(_write(tmp_path, merge(TINY, {**EMA, **SKIPS_FIRST_STEP})), tmp_path / "scripts")
    steps = 3
    runs = {v: _run(scripts[v], tmp_path / v, v, steps) for v in ("model", "native")}
    (model, _), (native, final) = runs["model"], runs["native"]
    assert len(model.steps) == steps
    assert [s["overflow"] for s in native.steps] == [True, False, False]
    assert step_differences(model.steps, native.steps) == []
    assert [e["metrics"] for e in model.evals] == [e["metrics"] for e in native.evals]
    saved = {}
    for variant, (result, _) in runs.items():
        (checkpoint,) = sorted((result.output_dir / "checkpoints").glob("*/*.ckpt"))
        saved[variant] = _load(checkpoint)
    averages = {name: value for name, value in saved["native"].items() if name.startswith("ema.")}
    assert set(averages) == {"ema.fc1.weight", "ema.fc1.bias", "ema.fc2.weight", "ema.fc2.bias"}
    for name, value in averages.items():
        assert np.array_equal(value, saved["model"][name]), name  # parity: ==
    assert float(saved["native"]["ema_updates"]) == steps - 1  # not the skipped step

    # Independent reference: the weights after steps 0..3, averaged in numpy with mindcv's formula over
    # the steps that were not skipped.
    initial = tmp_path / "initial.ckpt"
    subprocess.run(
        [sys.executable, "-c", INITIAL_WEIGHTS, str(scripts["native"]), str(initial)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    weights = [_load(initial)]
    for k in range(1, steps):
        weights.append(_run(scripts["native"], tmp_path / f"steps{k}", "native", k)[1])
    weights.append(final)
    decay, temperature = np.float32(EMA["ema"]["decay"]), np.float32(EMA["ema"]["warmup_steps"])
    for name in ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"):
        assert np.array_equal(weights[1][name], weights[0][name]), name  # step 1 was skipped
        ema = weights[0][name].astype(np.float32)
        for t in range(1, steps):  # the t-th update, after step t + 1
            d = decay * (np.float32(1) - np.exp(-np.float32(t) / temperature))
            ema = ema * d + weights[t + 1][name] * (np.float32(1) - d)
        assert not np.allclose(ema, final[name])  # the average is not the last weights
        np.testing.assert_allclose(averages[f"ema.{name}"], ema, rtol=1e-6, atol=1e-7, err_msg=name)


@pytest.mark.slow
def test_training_is_unchanged_and_evaluation_uses_the_averages(tmp_path):
    with_ema = generate_both(_write(tmp_path, merge(TINY, EMA), "ema"), tmp_path / "ema")
    without = generate_both(
        _write(tmp_path, merge(TINY, {"callbacks": EMA["callbacks"]}), "plain"), tmp_path / "plain"
    )
    ema_run, ema_weights = _run(with_ema["model"], tmp_path / "ema_run", "model", 6)
    plain_run, plain_weights = _run(without["model"], tmp_path / "plain_run", "model", 6)
    assert step_differences(ema_run.steps, plain_run.steps) == []
    # --save-weights holds the trained weights (swapped back after evaluating), not the averages
    assert all(np.array_equal(ema_weights[name], plain_weights[name]) for name in plain_weights)
    assert ema_run.evals[0]["metrics"]["loss"] != plain_run.evals[0]["metrics"]["loss"]
