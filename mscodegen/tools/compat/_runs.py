"""The representative examples, and one `mscodegen parity --python` run of one example on one version."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from mscodegen.run.msrun import run_launched


@dataclass(frozen=True)
class Example:
    name: str  # the table's column, and what --examples takes
    config: str  # relative to the repository
    options: tuple[str, ...]  # parity's
    what: str  # one line for the page


EXAMPLES = (
    Example(
        "quickstart", "examples/mnist_quickstart.yaml", (), "MindSpore's quick start: LeNet-5, MNIST format"
    ),
    Example(
        "amp_accum",
        "examples/lenet_amp_accum.yaml",
        (),
        "O2 mixed precision, dynamic loss scale, global-norm clip, accumulation over 2 batches",
    ),
    Example(
        "two_input", "examples/two_input.yaml", (), "two named inputs; imported network, dataset and loss"
    ),
    Example(
        "resume",
        "examples/lenet_digits.yaml",
        ("--steps", "60", "--resume-at", "10"),
        "stopped at step 10 and resumed with --resume latest to step 60 (past an epoch's end)",
    ),
    Example(
        "data_parallel", "examples/lenet_dp.yaml", ("--workers", "2"), "data parallel under msrun, 2 workers"
    ),
)


@dataclass(frozen=True)
class Run:
    version: str
    example: str
    returncode: int | None  # parity's; None when it ran out of time
    seconds: float
    failure: str  # the first line of the failure; "" when parity exited 0
    keep: Path  # parity --keep: scripts, logs, weights


def command(example: Example, python: Path, repo: Path, keep: Path) -> list[str]:
    """`mscodegen parity` run by this Python (the generator), the scripts by `python`."""
    parity = [sys.executable, "-m", "mscodegen", "parity", str(repo / example.config)]
    return [*parity, "--python", str(python), "--keep", str(keep), *example.options]


def run_example(example: Example, version: str, python: Path, repo: Path, runs: Path, timeout: float) -> Run:
    keep = runs / version / example.name
    shutil.rmtree(keep, ignore_errors=True)
    keep.mkdir(parents=True)
    env = dict(os.environ)
    # the mscodegen that runs this driver (a worktree's, say), not whichever is installed
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(repo), env.get("PYTHONPATH", "")) if p)
    start = time.monotonic()
    returncode: int | None
    with (keep / "parity.txt").open("w") as out:
        try:
            # run_launched: its own session, and on timeout parity, msrun and every worker are killed
            returncode = run_launched(
                command(example, python, repo, keep), cwd=keep, env=env, stdout=out, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            returncode = None
    seconds = round(time.monotonic() - start, 1)
    failure = ""
    if returncode != 0:
        failure = f"no result after {timeout:.0f} s" if returncode is None else first_failure(keep)
    return Run(version, example.name, returncode, seconds, failure, keep)


# The closing line of a Python traceback: `ValueError: ...`, `mindspore...RuntimeError: ...`.
EXCEPTION = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt)\b(?::.*)?$")


def exception_line(text: str) -> str | None:
    """The last traceback's exception line in `text` (MindSpore's own log lines skipped)."""
    lines = [line.strip() for line in text.splitlines()]
    hits = [line for line in lines if EXCEPTION.match(line)]
    return hits[-1] if hits else None


def first_failure(keep: Path) -> str:
    """One line saying why parity failed, from its output and the failing script's (or worker's) log.

    `NOT identical: ...` (model and native differ) as parity says it; a crash as its exception line.
    """
    text = (keep / "parity.txt").read_text(errors="replace") if (keep / "parity.txt").exists() else ""
    for line in text.splitlines():
        if line.startswith("NOT identical: "):
            return "model != native: " + line.removeprefix("NOT identical: ")
    failed = re.search(r"^error: the (\w+) variant(?: \(([^)]*)\))? failed", text, re.MULTILINE)
    if failed:
        logs = sorted(keep.glob(f"{failed.group(1)}/**/msrun_log/worker_*.log"))
        logs += sorted(keep.glob(f"{failed.group(1)}/**/stdout.txt"))
        found = [exception_line(path.read_text(errors="replace")) for path in logs]
        reason = next((f for f in found if f), None) or exception_line(text)
        label = failed.group(1) + (f" ({failed.group(2)})" if failed.group(2) else "")
        return f"{label}: {reason}" if reason else failed.group(0)
    errors = [line for line in text.splitlines() if line.startswith("error: ")]
    if errors:
        return errors[0].removeprefix("error: ")
    return exception_line(text) or next(
        (ln for ln in reversed(text.splitlines()) if ln.strip()), "(no output)"
    )
