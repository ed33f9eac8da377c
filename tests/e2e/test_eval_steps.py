"""eval.every_steps run for real (issue 35): both variants evaluate after the same optimizer steps and
print the same lines, a resumed run the same evaluations as the run never stopped, and an evaluation
at step N is that of the weights after step N (predict.py evaluates them on its own)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mscodegen.run.parity import RunResult, generate_both, run_script, step_differences

from conftest import TINY, merge

# TINY (48 samples, batch 8) for 3 epochs: 6 steps an epoch, 18 in all
STEPS = {"train": {"epochs": 3}, "eval": {"every_steps": 4}}
CHECKPOINTED = {"callbacks": {"checkpoint": {"every_steps": 2, "keep_max": 10}}}


def _evals(result: RunResult) -> dict[int, object]:
    """{optimizer step: the metrics printed after it}."""
    return {record["step"]: record["metrics"] for record in result.evals}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where `runs` writes the scripts, and each variant's weights after step 10."""
    return tmp_path_factory.mktemp("eval_steps")


@pytest.fixture(scope="module")
def runs(root: Path) -> dict[str, dict[str, RunResult]]:
    """Per variant: the whole run (18 steps), one stopped at step 10 and one resumed from its checkpoint."""
    config = root / "steps.yaml"
    config.write_text(yaml.safe_dump(merge(merge(TINY, STEPS), CHECKPOINTED), sort_keys=False))
    scripts = generate_both(config, root / "scripts")
    out: dict[str, dict[str, RunResult]] = {}
    for variant, script in scripts.items():
        work, shared_output = root / variant, root / variant / "output"
        weights = root / f"{variant}-step10.ckpt"
        runs = {
            "whole": run_script(script, work / "whole", variant=variant),
            "stopped": run_script(
                script,
                work / "stopped",
                variant=variant,
                max_steps=10,
                extra_args=("--output-dir", str(shared_output), "--save-weights", str(weights)),
            ),
            "resumed": run_script(
                script,
                work / "resumed",
                variant=variant,
                extra_args=("--output-dir", str(shared_output), "--resume", "latest"),
            ),
        }
        for label, result in runs.items():
            assert result.returncode == 0, f"{variant} {label}:\n{result.log_tail}"
        out[variant] = runs
    return out


@pytest.mark.slow
def test_both_variants_evaluate_after_every_fourth_step_and_the_last(runs):
    model, native = runs["model"]["whole"], runs["native"]["whole"]
    assert step_differences(model.steps, native.steps) == []
    assert len(model.steps) == 18
    assert list(_evals(model)) == [4, 8, 12, 16, 18] == list(_evals(native))
    assert _evals(model) == _evals(native)


@pytest.mark.slow
def test_a_resumed_run_evaluates_as_the_run_never_stopped(runs):
    for variant in ("model", "native"):
        whole, stopped, resumed = (_evals(runs[variant][label]) for label in ("whole", "stopped", "resumed"))
        assert list(stopped) == [4, 8, 10], variant  # --max-steps 10: its last step is evaluated too
        assert {step: stopped[step] for step in (4, 8)} == {step: whole[step] for step in (4, 8)}, variant
        assert resumed == {step: whole[step] for step in (12, 16, 18)}, variant


@pytest.mark.slow
def test_the_evaluation_after_step_10_is_that_of_the_weights_after_step_10(runs, root):
    weights = root / "model-step10.ckpt"
    proc = subprocess.run(
        [sys.executable, str(root / "scripts" / "predict.py"), "--checkpoint", str(weights), "--evaluate"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    (line,) = [line for line in proc.stdout.splitlines() if line.startswith("Eval result: metrics: ")]
    fresh = ast.literal_eval(line.removeprefix("Eval result: metrics: "))
    assert _evals(runs["model"]["stopped"])[10] == fresh == _evals(runs["native"]["stopped"])[10]


@pytest.mark.slow
def test_accumulated_steps_are_optimizer_steps(write_config, tmp_path):
    """grad.accumulation_steps 2: a step is 2 batches. 11 batches make 5 optimizer steps; evaluations
    after steps 2 and 4 (batches 4 and 8) and after the last, 5 (batch 10; batch 11 updates nothing)."""
    config = write_config({"grad": {"accumulation_steps": 2}, "eval": {"every_steps": 2}})
    scripts = generate_both(config, tmp_path / "scripts")
    model, native = (
        run_script(scripts[variant], tmp_path / variant, variant=variant, max_steps=11)
        for variant in ("model", "native")
    )
    assert model.returncode == 0 == native.returncode, model.log_tail + native.log_tail
    assert step_differences(model.steps, native.steps) == []
    assert list(_evals(model)) == [2, 4, 5] == list(_evals(native))
    assert _evals(model) == _evals(native)


@pytest.mark.slow
def test_with_ema_both_variants_evaluate_the_averages(write_config, tmp_path, runs):
    """ema: the same training as without it (losses ==, steps 1-12 of the whole run above), but the
    evaluations are of the averages: equal across the variants, different from the trained weights'."""
    config = write_config({**STEPS, "train": {"epochs": 2}, "ema": {"decay": 0.9, "warmup_steps": 1}})
    scripts = generate_both(config, tmp_path / "scripts")
    model, native = (
        run_script(scripts[variant], tmp_path / variant, variant=variant) for variant in ("model", "native")
    )
    assert model.returncode == 0 == native.returncode, model.log_tail + native.log_tail
    plain = runs["native"]["whole"]
    assert [s["loss"] for s in model.steps] == [s["loss"] for s in plain.steps[:12]]
    assert step_differences(model.steps, native.steps) == []
    assert _evals(model) == _evals(native)
    assert list(_evals(model)) == [4, 8, 12]
    assert all(_evals(model)[step] != _evals(plain)[step] for step in (4, 8)), (_evals(model), _evals(plain))
