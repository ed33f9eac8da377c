"""`mscodegen parity CONFIG --resume-at K`: prove that stopping at step K and resuming equals never stopping.

For each variant: one whole run (`--max-steps STEPS`), one run stopped at K (`--max-steps K`, which
writes a resume checkpoint) and one run resumed from it (`--resume latest`, same output directory).
The stopped run's steps must equal the whole run's first K, the resumed run's the rest (loss, lr,
loss_scale, overflow, epoch and step numbers, compared with ==), and the final weights must be equal.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path

from mscodegen.run.parity import (
    SAVE_WEIGHTS,
    PythonError,
    Record,
    _error,
    _scripts_on_disk,
    generate_both,
    interpreter,
    not_identical,
    run_script,
    step_differences,
    workspace,
)


def run_resume_parity(
    target: Path,
    *,
    resume_at: int,
    steps: int,
    epochs: int | None = None,
    keep: Path | None = None,
    timeout: float = 600,
    overrides: Sequence[str] = (),
    python: str | None = None,
) -> int:
    """0 when, in both variants, the stopped + resumed runs equal the whole run; 1 when not; 2 on usage errors.

    `python` runs the scripts (and the weights check) with another interpreter (parity --python).
    """
    target = Path(target)
    if not 1 <= resume_at < steps:
        return _error(f"--resume-at {resume_at} must be at least 1 and less than --steps {steps}")
    try:
        python = interpreter(python)
    except PythonError as exc:
        return _error(str(exc))
    with workspace(keep, "mscodegen-resume-", "scripts, logs and checkpoints") as root:
        scripts = _resumable_scripts(target, root, overrides)
        if isinstance(scripts, str):
            return _error(scripts)
        problems: list[str] = []
        for variant, script in scripts.items():
            found = _one_variant(variant, script, root / variant, resume_at, steps, epochs, timeout, python)
            if found is None:
                return 1
            problems += [f"{variant}: {p}" for p in found]
        if not_identical(problems):
            return 1
        print(
            f"identical: stopped at step {resume_at} and resumed equals the whole run ({steps} steps), both variants"
        )
        return 0


def _resumable_scripts(target: Path, root: Path, overrides: Sequence[str]) -> dict[str, Path] | str:
    """{variant: script} on disk or generated into `root`, or why they cannot resume."""
    scripts = (
        _scripts_on_disk(target)
        if target.is_dir()
        else generate_both(target, root / "scripts", overrides=overrides)
    )
    if isinstance(scripts, str):
        return scripts
    without = [str(path) for path in scripts.values() if '"--resume"' not in path.read_text(encoding="utf-8")]
    if without:
        return (
            f"{', '.join(without)} cannot resume: a config resumes from its checkpoints "
            "(add a callbacks.checkpoint section; it is resumable unless resumable: false)"
        )
    return scripts


def _one_variant(
    variant: str,
    script: Path,
    root: Path,
    resume_at: int,
    steps: int,
    epochs: int | None,
    timeout: float,
    python: str,
) -> list[str] | None:
    """Problems of one variant ([] when exact), or None when a run failed."""
    from mscodegen.run.weights import CheckpointError, compare_checkpoints

    shutil.rmtree(root, ignore_errors=True)
    output = ("--output-dir", str(root / "resumed-output"))
    whole_weights, resumed_weights = root / "whole.ckpt", root / "resumed.ckpt"
    resume = (*output, "--resume", "latest", SAVE_WEIGHTS, str(resumed_weights))
    runs = {  # workdir: (label, --max-steps, arguments)
        "whole": (f"whole, {steps} steps", steps, (SAVE_WEIGHTS, str(whole_weights))),
        "stopped": (f"stopped at step {resume_at}", resume_at, output),
        "resumed": ("resumed with --resume latest", steps, resume),
    }
    run = partial(run_script, script, variant=variant, epochs=epochs, timeout=timeout, python=python)
    logged: dict[str, list[Record]] = {}
    for name, (label, max_steps, extra_args) in runs.items():
        print(f"running the {variant} variant ({label})...", flush=True)
        result = run(root / name, max_steps=max_steps, extra_args=extra_args)
        print(f"  {variant} {label}: exit {result.returncode}, {len(result.steps)} steps logged", flush=True)
        if result.returncode != 0:
            print(f"error: the {variant} variant ({label}) failed:\n{result.log_tail}", file=sys.stderr)
            return None
        logged[name] = result.steps
    labels = ("whole run", "stopped + resumed")
    problems = step_differences(logged["whole"], logged["stopped"] + logged["resumed"], labels)
    if not problems:
        try:
            found = compare_checkpoints(whole_weights, resumed_weights, python=python)
            problems += [f"final weights: {p}" for p in found]
        except CheckpointError as exc:
            problems.append(f"final weights: {exc}")
    return problems
