"""`mscodegen parity`: run both generated variants for real and compare them step by step.

The target is a config (both scripts are generated afresh into a temporary directory) or a
directory written by `mscodegen new` (its scripts run as they are on disk, the user's edits
included). The scripts hold no code for parity: a start-up hook in each script's process
(mscodegen/run/observer) records every train step's loss, the learning rate the optimizer applied and
the loss scaler's state, and the evaluation lines the script prints. After the run each script saves
its network's final parameters (`--save-weights`) and the two checkpoints must hold equal tensors.
MindSpore is imported only by child processes.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from mscodegen.config.errors import ConfigError, Problem
from mscodegen.config.load import LoadedConfig, hints, load_config
from mscodegen.output.generate import generate
from mscodegen.output.lock import LOCK_NAME, WriteError
from mscodegen.output.write import user_edits
from mscodegen.plan import SCRIPT_NAMES
from mscodegen.render.launch import LAUNCH_NAME
from mscodegen.run.msrun import child_env, launch_command, rank_logs, run_launched
from mscodegen.run.observer import observed_env
from mscodegen.run.plot import PlotError, draw, parity_curves, read_log
from mscodegen.schema.rules import cross_section_problems

# The per-step quantities, in the order differences are reported; any other key both logs hold (a
# GAN's d_loss, g_loss, d_lr, ...) is compared too, after these.
COMPARED = ("loss", "lr", "loss_scale", "overflow")
SAVE_WEIGHTS = "--save-weights"
WEIGHTS_NAME = "weights.ckpt"
Record = dict[str, Any]  # one JSON line of a --loss-log / --eval-log


@dataclass
class RunResult:
    variant: str
    returncode: int
    seconds: float
    steps: list[Record] = field(default_factory=list)
    evals: list[Record] = field(default_factory=list)
    output_dir: Path | None = None
    log_tail: str = ""
    # data parallel (under msrun): {rank: that rank's loss records}
    ranks: dict[int, list[Record]] = field(default_factory=dict)


def with_workers(loaded: LoadedConfig, workers: int) -> LoadedConfig:
    """`loaded` switched to parallel.mode data_parallel with `workers` workers (parity --workers)."""
    cfg = loaded.config
    parallel = cfg.parallel.model_copy(update={"mode": "data_parallel", "workers": workers})
    cfg = cfg.model_copy(update={"parallel": parallel})
    problems = [
        Problem(".".join(str(k) for k in key), None, None, f"{message} (with --workers {workers})")
        for key, message in cross_section_problems(cfg)
    ]
    if problems:
        raise ConfigError(problems, loaded.path.as_posix())
    return LoadedConfig(cfg, loaded.path, loaded.sha256)


def generate_both(
    config: Path, out_dir: Path, *, workers: int | None = None, overrides: Sequence[str] = ()
) -> dict[str, Path]:
    """Write both scripts for `config` (with `--set` overrides) into out_dir; {variant: script path}.

    `workers` runs the config data parallel with that many workers (launch.sh is written too).
    """
    loaded = load_config(config, overrides)
    return write_scripts(loaded if workers is None else with_workers(loaded, workers), out_dir)


def write_scripts(loaded: LoadedConfig, out_dir: Path) -> dict[str, Path]:
    """Write every file `mscodegen new` would for `loaded` into out_dir; {variant: script path}."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, text in generate(loaded, out_dir).items():
        (out_dir / name).write_text(text, encoding="utf-8")
    return {variant: out_dir / name for variant, name in SCRIPT_NAMES.items()}


EXIT_TIMEOUT = 3  # a variant ran past --timeout (1 is "not equal", 2 a usage or config error)


class ScriptTimeout(Exception):
    """A script ran longer than its timeout and was killed."""

    def __init__(self, variant: str, timeout: float, workdir: Path) -> None:
        self.variant, self.timeout, self.workdir = variant, timeout, workdir
        super().__init__(
            f"the {variant} variant did not finish within --timeout {timeout:g} s and was killed; "
            f"raise --timeout or lower --steps (its output so far: {workdir / 'stdout.txt'})"
        )


def run_script(
    script: Path,
    workdir: Path,
    *,
    variant: str,
    max_steps: int | None = None,
    epochs: int | None = None,
    timeout: float = 600,
    python: str = sys.executable,
    extra_args: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
    distributed: bool = False,
) -> RunResult:
    """Run one generated script with the shared CLI and read back what the observer recorded.

    `distributed`: start it with the launch.sh next to it (msrun, a free port, logs in
    workdir/msrun_log); `timeout` then bounds the whole job and kills every worker when it expires.
    A run past `timeout` is killed and raises ScriptTimeout.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    loss_log, eval_log, output_dir = workdir / "loss.jsonl", workdir / "eval.jsonl", workdir / "output"
    for stale in (*workdir.glob("loss*.jsonl"), *workdir.glob("eval*.jsonl")):  # a --keep dir's older run
        stale.unlink()
    env = observed_env(script, workdir, env)  # the records come from outside the script
    # a script has --output-dir with checkpoints only
    text = script.read_text(encoding="utf-8", errors="replace")
    cmd = [python, str(script)]
    if '"--log-every-steps"' in text:  # a GAN's losses: the line it prints, every step
        cmd += ["--log-every-steps", "1"]
    if '"--output-dir"' in text and "--output-dir" not in extra_args:
        cmd += ["--output-dir", str(output_dir)]
    cmd += extra_args
    if max_steps is not None:
        cmd += ["--max-steps", str(max_steps)]
    if epochs is not None:
        cmd += ["--epochs", str(epochs)]
    start = time.perf_counter()
    with open(workdir / "stdout.txt", "w") as out:
        try:
            if distributed:
                launch_env = child_env(workdir / "msrun_log", base=env, python=python)
                returncode = run_launched(
                    launch_command(script, cmd[2:]), cwd=workdir, env=launch_env, stdout=out, timeout=timeout
                )
            else:
                returncode = subprocess.run(
                    cmd,
                    cwd=workdir,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    timeout=timeout,
                    env=env,
                    check=False,
                ).returncode
        except subprocess.TimeoutExpired:  # the child is killed by then
            raise ScriptTimeout(variant, timeout, workdir) from None
    seconds = time.perf_counter() - start
    log = (workdir / "stdout.txt").read_text(errors="replace")
    ranks = {rank: read_jsonl(path) for rank, path in rank_logs(loss_log).items()}
    if ranks and not loss_log.exists():  # per-rank logs only: rank 0's stands for the run
        loss_log = rank_logs(loss_log).get(0, loss_log)
        eval_log = rank_logs(eval_log).get(0, eval_log)
    return RunResult(
        variant,
        returncode,
        seconds,
        read_jsonl(loss_log),
        read_jsonl(eval_log),
        output_dir,
        "\n".join(log.splitlines()[-25:]),
        ranks,
    )


def read_jsonl(path: Path) -> list[Record]:
    """The records of an observer's loss.jsonl / eval.jsonl ([] when there is none)."""
    return read_log(path) if path.exists() else []


def _show(value: object) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def step_differences(
    a: list[Record], b: list[Record], labels: Sequence[str] = ("model", "native")
) -> list[str]:
    """Differences between two loss logs, first differing step first (empty when identical).

    e.g. `step 3: loss 0.6931471805599453 (model) != 0.6925 (native)`.
    """
    la, lb = labels
    problems: list[str] = []
    for ra, rb in zip(a, b, strict=False):
        problems += [
            f"step {ra.get('step')}: {key} {_show(ra.get(key))} ({la}) != {_show(rb.get(key))} ({lb})"
            for key in compared_keys(ra, rb)
            if ra.get(key) != rb.get(key)
        ]
    if len(a) != len(b):
        problems.append(f"step count differs: {len(a)} ({la}) != {len(b)} ({lb})")
    return problems


def compared_keys(a: Record, b: Record) -> list[str]:
    """Every key either record holds: step, epoch and COMPARED first, then the rest by name."""
    known = ("step", "epoch", *COMPARED)
    return [*known, *sorted((set(a) | set(b)) - set(known))]


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.9g}"
    return "-" if value is None else str(value)


def print_table(model: RunResult, native: RunResult) -> None:
    """One row per step: one loss from both variants, or several losses (the model's) and the
    largest difference; then the learning rates, loss scales and overflow flags."""
    first = model.steps[0] if model.steps else {}
    losses = [k for k in first if k == "loss" or k.endswith("_loss")]  # a GAN's: d_loss, g_loss
    lrs = [k for k in first if k == "lr" or k.endswith("_lr")]
    extra = [
        k for k in compared_keys(first, first) if k in first and k not in ("step", "epoch", *losses, *lrs)
    ]
    shown = ["model loss", "native loss"] if losses == ["loss"] else losses
    header = ["step", "epoch", *shown, "|diff|", *lrs, *extra, "same"]
    print("  ".join(f"{h:>14}" for h in header))
    for ra, rb in zip(model.steps, native.steps, strict=False):
        diffs = [_diff(ra.get(k), rb.get(k)) for k in losses]
        values = [ra.get("loss"), rb.get("loss")] if losses == ["loss"] else [ra.get(k) for k in losses]
        same = all(ra.get(k) == rb.get(k) for k in compared_keys(ra, rb))
        cells = [
            ra["step"],
            ra["epoch"],
            *values,
            max(diffs, default=float("nan")),
            *(ra.get(k) for k in (*lrs, *extra)),
            "yes" if same else "NO",
        ]
        print("  ".join(f"{_fmt(c):>14}" for c in cells))


def _diff(a: object, b: object) -> float:
    if isinstance(a, int | float) and isinstance(b, int | float) and math.isfinite(a) and math.isfinite(b):
        return abs(a - b)
    return float("nan")


def interpreter(python: str | None) -> str:
    """The Python that runs the scripts: `python` checked (parity --python), else this one, which must
    have MindSpore; PythonError when it cannot."""
    if python is None:
        if shutil.which(sys.executable) is None or not _has_mindspore():
            raise PythonError(
                "MindSpore is not importable in this Python; to run the scripts, install the run extra "
                "(pip install -e '.[run]' in the mscodegen checkout)"
            )
        return sys.executable
    # Absolute, not resolved: a venv's bin/python is a symlink, and msrun lives beside the link. The
    # interpreter is asked whether it finds the package without importing it (a second, not MindSpore's 5).
    found = shutil.which(python)
    if found is None:
        raise PythonError(f"--python {python}: no such executable")
    check = "import importlib.util, sys; sys.exit(importlib.util.find_spec('mindspore') is None)"
    try:
        proc = subprocess.run([found, "-c", check], capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PythonError(f"--python {python}: cannot run it ({exc})") from None
    if proc.returncode != 0:
        raise PythonError(
            f"MindSpore is not importable in {python}: install it there (supported versions: docs/compat.md)"
        )
    return os.path.abspath(found)


def not_identical(problems: list[str]) -> bool:
    """Print the differences found (the first 20), if any; whether there were."""
    if problems:
        print(f"NOT identical: {problems[0]}", file=sys.stderr)
        if len(problems) > 1:
            print("  " + "\n  ".join(problems[1:20]), file=sys.stderr)
    return bool(problems)


def _error(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def _scripts_on_disk(directory: Path) -> dict[str, Path] | str:
    """{variant: script} of a directory written by `mscodegen new`, or why it cannot be run."""
    if not (directory / LOCK_NAME).is_file():
        return (
            f"{directory} has no {LOCK_NAME}: name a config file, or a directory written by `mscodegen new`"
        )
    scripts = {variant: (directory / name).resolve() for variant, name in SCRIPT_NAMES.items()}
    missing = [str(path) for path in scripts.values() if not path.is_file()]
    if missing:
        return f"missing in {directory}: {', '.join(missing)} (generate both variants: mscodegen new --variant both)"
    return scripts


def run_parity(
    target: Path,
    *,
    steps: int,
    epochs: int | None = None,
    keep: Path | None = None,
    timeout: float = 600,
    workers: int | None = None,
    plot: Path | None = None,
    overrides: Sequence[str] = (),
    python: str | None = None,
) -> int:
    """Run both variants, compare; 0 if every step, every evaluation and the final weights are identical.

    `target` is a config (generated afresh, with `overrides` applied) or a directory written by
    `mscodegen new` (its scripts run as they are on disk). A data-parallel config (or `workers`,
    or a launch.sh in the directory) runs each variant under msrun through its launch.sh, and
    every rank's losses are compared. `python` runs the scripts
    (msrun and the weights check too) with another interpreter, e.g. another MindSpore version's.
    """
    target = Path(target)
    on_disk = target.is_dir()
    if on_disk and (workers is not None or overrides):
        option = "--workers" if workers is not None else "--set"
        return _error(
            f"{option} changes the config, but {target} is run as it is on disk: "
            f"run parity on the config instead, or regenerate {target} with `mscodegen update ... {option} ...`"
        )
    try:
        python = interpreter(python)
    except PythonError as exc:
        return _error(str(exc))
    on_disk_scripts = _scripts_on_disk(target) if on_disk else {}
    if isinstance(on_disk_scripts, str):
        return _error(on_disk_scripts)
    if on_disk:
        try:
            edited = sorted(user_edits(target))  # the files the user edited
        except WriteError:  # best effort: the pristine copies are unusable
            edited = []
        print(
            f"running the scripts in {target} as they are on disk"
            + (f" (your edits to {', '.join(edited)} included)" if edited else ""),
            flush=True,
        )
    run = partial(run_script, max_steps=steps, epochs=epochs, timeout=timeout, python=python)
    kept = f"{'logs' if on_disk else 'scripts, logs'}, weights and checkpoints"
    with workspace(keep, "mscodegen-parity-", kept) as root:
        return _run_and_compare(
            target,
            on_disk_scripts,
            root,
            run,
            steps=steps,
            workers=workers,
            plot=plot,
            overrides=overrides,
            python=python,
        )


@contextmanager
def workspace(keep: Path | None, prefix: str, kept: str) -> Iterator[Path]:
    """The runs' directory: `keep` (absolute: the scripts run with cwd=<root>/<variant>, where a relative
    one would be doubled), then "`kept` kept in" it is printed; else a temporary one, removed after."""
    root = Path(keep).resolve() if keep else Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield root
    finally:
        if keep is None:
            shutil.rmtree(root, ignore_errors=True)
        else:
            print(f"{kept} kept in {root}")


def _run_and_compare(
    target: Path,
    on_disk_scripts: dict[str, Path],
    root: Path,
    run: partial[RunResult],
    *,
    steps: int,
    workers: int | None,
    plot: Path | None,
    overrides: Sequence[str],
    python: str,
) -> int:
    """run_parity's work in `root` (logs, weights; generated scripts unless `on_disk_scripts`), each
    script run by `run` (run_script with --steps, --epochs, --timeout and --python), its weights compared
    by `python`."""
    loaded = None if on_disk_scripts else load_config(target, overrides)
    if loaded is None:
        scripts, distributed = on_disk_scripts, (target / LAUNCH_NAME).is_file()
    else:
        generated = loaded if workers is None else with_workers(loaded, workers)
        scripts = write_scripts(generated, root / "scripts")
        # under msrun when the config (or --workers) says data parallel; a stale launch.sh in --keep does not count
        distributed = generated.config.parallel.mode == "data_parallel"
    # Final weights: under msrun rank 0 saves them (the replicas are identical after every step).
    weights = {
        v: root / v / WEIGHTS_NAME
        for v, path in scripts.items()
        if SAVE_WEIGHTS in path.read_text(encoding="utf-8", errors="replace")  # older scripts lack it
    }
    results = {}
    for variant, script in scripts.items():
        how = " under msrun (launch.sh)" if distributed else ""
        print(f"running the {variant} variant ({steps} steps){how}...", flush=True)
        (root / variant).mkdir(parents=True, exist_ok=True)
        (root / variant / WEIGHTS_NAME).unlink(missing_ok=True)  # a --keep dir may hold an older run's
        save = (SAVE_WEIGHTS, str(weights[variant])) if variant in weights else ()
        result = run(script, root / variant, variant=variant, distributed=distributed, extra_args=save)
        logged = f"{len(result.steps)} steps logged, {result.seconds:.1f} s"
        print(f"  {variant}: exit {result.returncode}, {logged}", flush=True)
        if result.returncode != 0:
            print(
                f"error: the {variant} variant failed; last lines of its output:\n{result.log_tail}",
                file=sys.stderr,
            )
            return 1
        results[variant] = result
    model, native = results["model"], results["native"]
    print_table(model, native)
    problems = _run_differences(model, native)
    weights_note = _weights_problems(weights, scripts, problems, python)
    if plot is not None:
        try:
            draw(parity_curves(model.steps + model.evals, native.steps + native.evals), plot)
            print(f"wrote {plot}")
        except PlotError as exc:
            print(f"error: {exc}", file=sys.stderr)
    if not_identical(problems):
        if loaded is not None:  # what in the config can explain it (a directory's config is not at hand)
            for hint in hints(loaded):
                print(f"hint: {hint.format(str(loaded.path))}", file=sys.stderr)
        return 1
    print(
        f"identical: {len(model.steps)} steps"
        + (f", {len(model.evals)} evaluation(s)" if model.evals else "")
        + (f", ranks {sorted(model.ranks)}" if model.ranks else "")
        + weights_note
    )
    return 0


def _run_differences(model: RunResult, native: RunResult) -> list[str]:
    """How the two runs' logs differ: steps, ranks, evaluations (and a run that logged no step)."""
    problems = step_differences(model.steps, native.steps)
    if sorted(model.ranks) != sorted(native.ranks):
        problems.append(f"ranks logged differ: {sorted(model.ranks)} vs {sorted(native.ranks)}")
    for rank in sorted(set(model.ranks) & set(native.ranks) - {0}):
        problems += [f"rank {rank}: {p}" for p in step_differences(model.ranks[rank], native.ranks[rank])]
    if [e["metrics"] for e in model.evals] != [e["metrics"] for e in native.evals]:
        problems.append(f"evaluations differ: {model.evals} vs {native.evals}")
    if not model.steps:
        problems.append("no steps were logged")
    return problems


def _weights_problems(
    weights: dict[str, Path], scripts: dict[str, Path], problems: list[str], python: str
) -> str:
    """Compare the final weights (appending to `problems`); the note for the `identical` line."""
    from mscodegen.run.weights import CheckpointError, compare_checkpoints

    if set(weights) != set(scripts):
        without = ", ".join(str(scripts[v]) for v in scripts if v not in weights)
        why = f"no {SAVE_WEIGHTS} option in {without} (older scripts: regenerate with `mscodegen update`)"
        print(f"note: final weights not compared: {why}", file=sys.stderr)
        return "; final weights NOT compared"
    try:
        found = compare_checkpoints(weights["model"], weights["native"], python=python)
    except CheckpointError as exc:
        problems.append(f"final weights: {exc}")
        return ""
    problems += [f"final weights: {p}" for p in found]
    return ", final weights equal"


def _has_mindspore() -> bool:
    import importlib.util

    return importlib.util.find_spec("mindspore") is not None


class PythonError(Exception):
    """parity --python names an interpreter that cannot run the scripts."""
