"""Each version's kept logs and final weights against the reference version's: one table cell each.

A parity run that exited 0 has model == native already (every step, evaluations, final weights). What is
left to say is how that version's numbers relate to the reference's: the same (`identical`), or how far
apart, in float32 units in the last place (ulp) of the logged values, and whether the weights agree.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mscodegen.run.parity import COMPARED, read_jsonl  # what parity compares in a step record
from mscodegen.tools.compat._envs import REFERENCE

WEIGHT_FILES = ("weights.ckpt", "whole.ckpt", "resumed.ckpt")  # parity's and parity --resume-at's
Record = dict[str, Any]


def f32_ulps(a: float, b: float) -> int:
    """How many float32 values lie between a and b (after rounding each to float32); 0 when equal."""

    def ordered(x: float) -> int:
        bits: int = struct.unpack("<i", struct.pack("<f", x))[0]
        return bits if bits >= 0 else -(bits & 0x7FFFFFFF)

    return abs(ordered(a) - ordered(b))


def loss_logs(keep: Path) -> dict[str, list[Record]]:
    """Every per-step log a parity run kept, by path relative to its --keep directory."""
    return {path.relative_to(keep).as_posix(): read_jsonl(path) for path in sorted(keep.rglob("loss*.jsonl"))}


@dataclass(frozen=True)
class LogDiff:
    steps: int  # step records compared, over every log
    differing: int  # of those, the ones with a field that is not ==
    first: str  # the earliest step that differs: "step 2 (model/loss.jsonl)"; "" when none
    max_ulps: int
    max_abs: float
    problems: tuple[str, ...] = ()  # a log on one side only, step numbers that do not line up
    first_step: int = 0  # the earliest step that differs; 0 when none

    @property
    def identical(self) -> bool:
        return self.differing == 0 and not self.problems


def diff_logs(logs: dict[str, list[Record]], reference: dict[str, list[Record]]) -> LogDiff:
    steps = differing = max_ulps = 0
    max_abs, first, problems = 0.0, (float("inf"), ""), []
    for name in sorted(set(logs) | set(reference)):
        if name not in logs or name not in reference:
            problems.append(f"{name} only in {'this version' if name in logs else REFERENCE}")
            continue
        ours, theirs = logs[name], reference[name]
        if [r.get("step") for r in ours] != [r.get("step") for r in theirs]:
            problems.append(f"{name}: steps {len(ours)} != {len(theirs)} ({REFERENCE})")
            continue
        for a, b in zip(ours, theirs, strict=True):
            steps += 1
            fields = [k for k in COMPARED if a.get(k) != b.get(k)]
            if not fields:
                continue
            differing += 1
            first = min(first, (a.get("step", 0), name))
            for key in fields:
                x, y = a.get(key), b.get(key)
                if isinstance(x, float) and isinstance(y, float):
                    max_ulps = max(max_ulps, f32_ulps(x, y))
                    max_abs = max(max_abs, abs(x - y))
                else:
                    problems.append(f"{name} step {a.get('step')}: {key} {x!r} != {y!r} ({REFERENCE})")
    where = f"step {first[0]} ({first[1]})" if first[1] else ""
    step = int(first[0]) if first[1] else 0
    return LogDiff(steps, differing, where, max_ulps, max_abs, tuple(dict.fromkeys(problems)), step)


def weight_pairs(keep: Path, reference_keep: Path) -> list[tuple[str, str]]:
    """(this version's, the reference's) final-weights files kept by both runs."""
    ours = sorted(p for p in keep.rglob("*.ckpt") if p.name in WEIGHT_FILES)
    pairs = [(path, reference_keep / path.relative_to(keep)) for path in ours]
    return [(str(path), str(other)) for path, other in pairs if other.is_file()]


@dataclass(frozen=True)
class WeightsDiff:
    values: int  # parameter values compared, over every final-weights file
    differ: int  # of those, the ones that are not ==
    max_ulps: int  # in each parameter's own float type
    max_abs: float
    problems: tuple[str, ...] = ()  # names, shapes or dtypes that do not match; a file that cannot be read

    @property
    def equal(self) -> bool:
        return self.differ == 0 and not self.problems


def _sum(found: list[dict[str, Any]]) -> WeightsDiff:
    return WeightsDiff(
        sum(f["values"] for f in found),
        sum(f["differ"] for f in found),
        max(f["max_ulps"] for f in found),
        max(f["max_abs"] for f in found),
        tuple(p for f in found for p in f["problems"]),
    )


def compare_weights(pairs: list[tuple[str, str]], python: Path) -> list[dict[str, Any]]:
    """How far apart each pair is (see _weights), from one child process of `python` (MindSpore there)."""
    if not pairs:
        return []
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[3])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    command = [str(python), "-m", "mscodegen.tools.compat._weights"]
    proc = subprocess.run(
        command, input=json.dumps(pairs), capture_output=True, text=True, env=env, check=False
    )
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        problem: dict[str, Any] = dict(
            values=0, differ=0, max_ulps=0, max_abs=0.0, problems=[f"not compared: {tail}"]
        )
        return [problem] * len(pairs)
    found: list[dict[str, Any]] = json.loads(proc.stdout.strip().splitlines()[-1])
    return found


@dataclass(frozen=True)
class Cell:
    version: str
    example: str
    text: str  # the table cell
    failed: bool = False  # parity failed (crash, timeout or model != native)
    logs: LogDiff | None = None  # against the reference; None for the reference itself, or a failure
    weights: WeightsDiff | None = None  # against the reference's; None: not compared (msrun)
    seconds: float = 0.0


def _cell_text(logs: LogDiff, weights: WeightsDiff | None) -> str:
    if logs.problems:
        return f"identical variants; not comparable with {REFERENCE}: {logs.problems[0]}"
    if weights is not None and weights.problems:
        return f"identical variants; final weights not comparable with {REFERENCE}: {weights.problems[0]}"
    if logs.identical and (weights is None or weights.equal):
        return "identical"
    losses = (
        "losses =="
        if logs.identical
        else f"losses ≤ {logs.max_ulps} ulp ({logs.differing}/{logs.steps} steps)"
    )
    text = f"identical variants; vs {REFERENCE}: {losses}"
    if weights is not None:
        text += ", weights ==" if weights.equal else f", weights ≤ {weights.max_ulps} ulp"
    return text


def classify(run: Record, logs: LogDiff | None, weights: WeightsDiff | None) -> Cell:
    """The cell of one parity run (a `results.json` record)."""
    version, example, seconds = run["version"], run["example"], run["seconds"]
    if run["returncode"] != 0:
        text = "fails: `" + run["failure"].replace("`", "'").replace("|", "\\|")[:200] + "`"
        return Cell(version, example, text, True, seconds=seconds)
    if logs is None:
        return Cell(
            version, example, "identical" if version == REFERENCE else f"no {REFERENCE} run", seconds=seconds
        )
    return Cell(version, example, _cell_text(logs, weights), False, logs, weights, seconds)


def compare_all(results: Record, envs: Path) -> list[Cell]:
    """One cell per parity run in `results`, the reference's included."""
    reference = {
        r["example"]: r for r in results["runs"] if r["version"] == REFERENCE and r["returncode"] == 0
    }
    cells = []
    for version in results["versions"]:
        runs = [r for r in results["runs"] if r["version"] == version]
        pairs: dict[str, list[tuple[str, str]]] = {}
        diffs: dict[str, LogDiff] = {}
        for run in runs:
            ref = reference.get(run["example"])
            if version != REFERENCE and ref is not None and run["returncode"] == 0:
                diffs[run["example"]] = diff_logs(loss_logs(Path(run["keep"])), loss_logs(Path(ref["keep"])))
                pairs[run["example"]] = weight_pairs(Path(run["keep"]), Path(ref["keep"]))
        flat = [pair for example in pairs for pair in pairs[example]]
        found = iter(compare_weights(flat, envs / f"ms-{REFERENCE}" / "bin" / "python"))
        weights = {e: _sum([next(found) for _ in pairs[e]]) if pairs[e] else None for e in pairs}
        cells += [classify(r, diffs.get(r["example"]), weights.get(r["example"])) for r in runs]
    return cells
