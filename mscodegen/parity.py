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

from .config import load_config
from .generate import generate
from .plan import SCRIPT_NAMES

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


def generate_both(config: Path, out_dir: Path) -> dict[str, Path]:
    """Write both scripts for `config` into out_dir; {variant: script path}."""
    loaded = load_config(config)
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
) -> RunResult:
    """Run one generated script with the shared CLI and read back its JSON logs."""
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
        proc = subprocess.run(
            cmd, cwd=workdir, stdout=out, stderr=subprocess.STDOUT, timeout=timeout, env=env, check=False
        )
    seconds = time.perf_counter() - start
    log = (workdir / "stdout.txt").read_text(errors="replace")
    return RunResult(
        variant,
        proc.returncode,
        seconds,
        _read_jsonl(loss_log),
        _read_jsonl(eval_log),
        output_dir,
        "\n".join(log.splitlines()[-25:]),
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
    config: Path, *, steps: int, epochs: int | None = None, keep: Path | None = None, timeout: float = 600
) -> int:
    """Generate, run, compare; 0 if every step (and every evaluation) is identical."""
    if shutil.which(sys.executable) is None or not _has_mindspore():
        print(
            "error: MindSpore is not importable in this Python; install mscodegen[run] "
            "(pip install 'mscodegen[run]') to run the scripts",
            file=sys.stderr,
        )
        return 2
    root = keep or Path(tempfile.mkdtemp(prefix="mscodegen-parity-"))
    scripts = generate_both(config, root / "scripts")
    results = {}
    for variant, script in scripts.items():
        print(f"running the {variant} variant ({steps} steps)...", flush=True)
        result = run_script(
            script, root / variant, variant=variant, max_steps=steps, epochs=epochs, timeout=timeout
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
    if [e["metrics"] for e in model.evals] != [e["metrics"] for e in native.evals]:
        problems.append(f"evaluations differ: {model.evals} vs {native.evals}")
    if not model.steps:
        problems.append("no steps were logged")
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
    )
    return 0


def _has_mindspore() -> bool:
    import importlib.util

    return importlib.util.find_spec("mindspore") is not None
