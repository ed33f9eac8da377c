"""`mscodegen parity`: run both generated variants for real and compare them step by step.

The scripts write JSON lines (`--loss-log`, `--eval-log`); nothing here scrapes stdout.
MindSpore is imported only by the child processes.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from .config import LoadedConfig, load_config
from .errors import ConfigError, Problem
from .generate import generate
from .msrun import child_env, launch_command, rank_logs, run_launched
from .plan import SCRIPT_NAMES
from .schema.rules import cross_section_problems

COMPARED = ("loss", "lr", "loss_scale", "overflow")


@dataclass
class RunResult:
    variant: str
    returncode: int
    seconds: float
    steps: list[dict] = field(default_factory=list)
    evals: list[dict] = field(default_factory=list)
    output_dir: Path | None = None
    log_tail: str = ""
    # data parallel with parallel.per_rank_logs: {rank: that rank's loss records}
    ranks: dict[int, list[dict]] = field(default_factory=dict)


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


def generate_both(config: Path, out_dir: Path, *, workers: int | None = None) -> dict[str, Path]:
    """Write both scripts for `config` into out_dir; {variant: script path}.

    `workers` runs the config data parallel with that many workers (launch.sh is written too).
    """
    loaded = load_config(config)
    if workers is not None:
        loaded = with_workers(loaded, workers)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, text in generate(loaded, out_dir).items():
        (out_dir / name).write_text(text, encoding="utf-8")
    for variant, name in SCRIPT_NAMES.items():
        paths[variant] = out_dir / name
    return paths


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
    """Run one generated script with the shared CLI and read back its JSON logs.

    `distributed`: start it with the launch.sh next to it (msrun, a free port, logs in
    workdir/msrun_log); `timeout` then bounds the whole job and kills every worker when it expires.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    loss_log, eval_log, output_dir = workdir / "loss.jsonl", workdir / "eval.jsonl", workdir / "output"
    cmd = [
        python,
        str(script),
        "--loss-log",
        str(loss_log),
        "--eval-log",
        str(eval_log),
        "--output-dir",
        str(output_dir),
        *extra_args,
    ]
    if max_steps is not None:
        cmd += ["--max-steps", str(max_steps)]
    if epochs is not None:
        cmd += ["--epochs", str(epochs)]
    start = time.perf_counter()
    with open(workdir / "stdout.txt", "w") as out:
        if distributed:
            launch_env = child_env(workdir / "msrun_log", base=env)
            returncode = run_launched(
                launch_command(script, cmd[2:]), cwd=workdir, env=launch_env, stdout=out, timeout=timeout
            )
        else:
            returncode = subprocess.run(
                cmd, cwd=workdir, stdout=out, stderr=subprocess.STDOUT, timeout=timeout, env=env, check=False
            ).returncode
    seconds = time.perf_counter() - start
    log = (workdir / "stdout.txt").read_text(errors="replace")
    ranks = {rank: _read_jsonl(path) for rank, path in rank_logs(loss_log).items()}
    if ranks and not loss_log.exists():  # per-rank logs only: rank 0's stands for the run
        loss_log = rank_logs(loss_log).get(0, loss_log)
        eval_log = rank_logs(eval_log).get(0, eval_log)
    return RunResult(
        variant,
        returncode,
        seconds,
        _read_jsonl(loss_log),
        _read_jsonl(eval_log),
        output_dir,
        "\n".join(log.splitlines()[-25:]),
        ranks,
    )


def _read_jsonl(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def step_differences(a: list[dict], b: list[dict]) -> list[str]:
    """Human-readable differences between two loss logs (empty when identical)."""
    problems = []
    if len(a) != len(b):
        problems.append(f"step count differs: {len(a)} vs {len(b)}")
    for ra, rb in zip(a, b, strict=False):
        for key in ("step", "epoch", *COMPARED):
            if ra.get(key) != rb.get(key):
                problems.append(f"step {ra.get('step')}: {key} {ra.get(key)!r} != {rb.get(key)!r}")
    return problems


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.9g}"
    return "-" if value is None else str(value)


def print_table(model: RunResult, native: RunResult) -> None:
    extra = [k for k in ("loss_scale", "overflow") if any(k in r for r in model.steps)]
    header = ["step", "epoch", "model loss", "native loss", "|diff|", "lr", *extra, "same"]
    print("  ".join(f"{h:>14}" for h in header))
    for ra, rb in zip(model.steps, native.steps, strict=False):
        la, lb = ra["loss"], rb["loss"]
        diff = abs(la - lb) if math.isfinite(la) and math.isfinite(lb) else float("nan")
        same = all(ra.get(k) == rb.get(k) for k in COMPARED)
        cells = [
            ra["step"],
            ra["epoch"],
            la,
            lb,
            diff,
            ra.get("lr"),
            *(ra.get(k) for k in extra),
            "yes" if same else "NO",
        ]
        print("  ".join(f"{_fmt(c):>14}" for c in cells))


def run_parity(
    config: Path,
    *,
    steps: int,
    epochs: int | None = None,
    keep: Path | None = None,
    timeout: float = 600,
    workers: int | None = None,
    plot: Path | None = None,
) -> int:
    """Generate, run, compare; 0 if every step (and every evaluation) is identical.

    A data-parallel config (or `workers`) runs each variant under msrun through its launch.sh;
    with parallel.per_rank_logs every rank's losses are compared, else rank 0's.
    """
    if shutil.which(sys.executable) is None or not _has_mindspore():
        print(
            "error: MindSpore is not importable in this Python; install mscodegen[run] "
            "(pip install 'mscodegen[run]') to run the scripts",
            file=sys.stderr,
        )
        return 2
    # absolute: the scripts run with cwd=<root>/<variant>, where a relative --keep would be doubled
    root = Path(keep).resolve() if keep else Path(tempfile.mkdtemp(prefix="mscodegen-parity-"))
    scripts = generate_both(config, root / "scripts", workers=workers)
    # under msrun when the config (or --workers) says data parallel; a stale launch.sh in --keep does not count
    distributed = workers is not None or load_config(config).config.parallel.mode == "data_parallel"
    results = {}
    for variant, script in scripts.items():
        how = " under msrun (launch.sh)" if distributed else ""
        print(f"running the {variant} variant ({steps} steps){how}...", flush=True)
        result = run_script(
            script,
            root / variant,
            variant=variant,
            max_steps=steps,
            epochs=epochs,
            timeout=timeout,
            distributed=distributed,
        )
        print(
            f"  {variant}: exit {result.returncode}, {len(result.steps)} steps logged, "
            f"{result.seconds:.1f} s",
            flush=True,
        )
        if result.returncode != 0:
            print(
                f"error: the {variant} variant failed; last lines of its output:\n{result.log_tail}",
                file=sys.stderr,
            )
            return 1
        results[variant] = result
    model, native = results["model"], results["native"]
    print_table(model, native)
    problems = step_differences(model.steps, native.steps)
    if sorted(model.ranks) != sorted(native.ranks):
        problems.append(f"ranks logged differ: {sorted(model.ranks)} vs {sorted(native.ranks)}")
    for rank in sorted(set(model.ranks) & set(native.ranks) - {0}):
        problems += [f"rank {rank}: {p}" for p in step_differences(model.ranks[rank], native.ranks[rank])]
    if [e["metrics"] for e in model.evals] != [e["metrics"] for e in native.evals]:
        problems.append(f"evaluations differ: {model.evals} vs {native.evals}")
    if not model.steps:
        problems.append("no steps were logged")
    if plot is not None:
        from .plot import PlotError, draw, parity_curves

        try:
            draw(parity_curves(model.steps + model.evals, native.steps + native.evals), plot)
            print(f"wrote {plot}")
        except PlotError as exc:
            print(f"error: {exc}", file=sys.stderr)
    if keep is None:
        shutil.rmtree(root, ignore_errors=True)
    else:
        print(f"scripts, logs and checkpoints kept in {root}")
    if problems:
        print("NOT identical:\n  " + "\n  ".join(problems[:20]), file=sys.stderr)
        return 1
    print(
        f"identical: {len(model.steps)} steps"
        + (f", {len(model.evals)} evaluation(s)" if model.evals else "")
        + (f", ranks {sorted(model.ranks)}" if model.ranks else "")
    )
    return 0


def _has_mindspore() -> bool:
    import importlib.util

    return importlib.util.find_spec("mindspore") is not None
