"""`make bench` (= python -m bench): speed of the generated scripts and of `mscodegen new`.

Training: every bench/configs/*.yaml is generated into a temp dir, then, one fresh process each
(`python -m bench.worker`, strictly one after another), the hand-written floor, the model variant
and the native variant run STEPS steps on in-memory batches ("memory") and on the script's own
dataset pipeline ("pipeline"). The three run interleaved (f, m, n, f, m, n, ...) for --rounds
rounds, each started only when the 1-minute load average is at most the core count (a run
started above it is discarded and rerun); each ratio is taken per round (adjacent runs) and
reported as the median with a bootstrap 95% interval (bench/stats.py), judged against its target
on the interval: met, refuted or undecided. Generation: `mscodegen new` for every example and
`mscodegen validate`, whole-process wall time, cold (empty cache) and warm.
Results: a table on stdout and bench/results/<date>-<host>.json. See bench/README.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

import yaml

from . import stats

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
MSCODEGEN = [sys.executable, "-m", "mscodegen"]
KINDS = ("floor", "model", "native")
# mindcv's engine as its train.py drives it, with and without its SummaryRecord writer (mindcv rows only)
PEER_KINDS = ("mindcv", "mindcv-nosummary")
CHUNKS = 5  # steady state: median over this many consecutive windows of steps


ROUNDS = 5  # interleaved rounds (floor, model, native) per row
QUICK_ROUNDS = 2
TARGETS = {"native/model": 0.98, "model/floor": 0.95}  # judged on the bootstrap interval


def _steps_for(config: Path, quick: bool) -> int:
    heavy = _heavy(config)
    if quick:
        return 6 if heavy else 30
    return 9 if heavy else 60


def _heavy(config: Path) -> bool:
    """ResNet steps take seconds on 2 CPU cores: fewer steps, and no pipeline run (it is not
    input-bound; the pipeline runs are there to show the input-bound LeNet case)."""
    return "resnet" in config.stem


def machine() -> dict:
    cpu = (
        next(
            (
                line.split(":", 1)[1].strip()
                for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")
            ),
            platform.processor(),
        )
        if Path("/proc/cpuinfo").exists()
        else platform.processor()
    )
    return {
        "host": socket.gethostname(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "mindspore": version("mindspore"),
        "mindcv": version("mindcv"),
        "black": version("black"),
        "jinja2": version("jinja2"),
        "pydantic": version("pydantic"),
    }


# --------------------------------------------------------------------------- training


def steady(ends: list[float]) -> dict:
    """Steps/s after compile: drop the first steps (compile, warm-up), then median over CHUNKS windows."""
    warm = max(5, len(ends) // 10) if len(ends) >= 20 else 3
    gaps = [b - a for a, b in zip(ends[warm:], ends[warm + 1 :], strict=False)]
    size = max(1, len(gaps) // CHUNKS)
    rates = [len(c) / sum(c) for c in (gaps[i : i + size] for i in range(0, size * CHUNKS, size)) if c]
    return {
        "steps_per_s": statistics.median(rates),
        "min_steps_per_s": min(rates),
        "max_steps_per_s": max(rates),
        "median_step_ms": 1000 * statistics.median(gaps),
        "timed_steps": len(gaps),
    }


def wait_for_idle(max_load: float, max_wait: float) -> float:
    """Wait (up to max_wait s) until the 1-minute load average is at most max_load; return it."""
    deadline = time.monotonic() + max_wait
    load = os.getloadavg()[0]
    while load > max_load and time.monotonic() < deadline:
        time.sleep(5)
        load = os.getloadavg()[0]
    return load


def run_worker(script_dir: Path, kind: str, source: str, steps: int, timeout: float) -> dict:
    out = script_dir / f"{kind}-{source}.json"
    log = script_dir / f"{kind}-{source}.log"
    start = time.perf_counter()
    with open(log, "w") as fh:
        proc = subprocess.run(
            [sys.executable, "-m", "bench.worker", str(script_dir), kind, source, str(steps), str(out)],
            cwd=ROOT,
            stdout=fh,
            stderr=subprocess.STDOUT,
            timeout=timeout,
            check=False,
        )
    wall = time.perf_counter() - start
    if proc.returncode != 0 or not out.exists():
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
        return {"kind": kind, "input": source, "error": f"exit {proc.returncode}\n{tail}", "wall_s": wall}
    raw = json.loads(out.read_text())
    out.unlink()
    result = {k: v for k, v in raw.items() if k not in ("begins", "ends")}
    result.update(steady(raw["ends"]), wall_s=wall)
    return result


def measured_run(script_dir: Path, kind: str, source: str, steps: int, opts: argparse.Namespace) -> dict:
    """One worker run, started only on an idle machine; a run started above --max-load is discarded
    and rerun (up to --retries times), so a busy neighbour cannot pass for a slow variant."""
    discarded = []
    for _ in range(opts.retries + 1):
        load = wait_for_idle(opts.max_load, opts.max_wait)
        result = run_worker(script_dir, kind, source, steps, opts.timeout)
        result["loadavg_1min_before"] = load
        if load <= opts.max_load or "error" in result:
            break
        discarded.append(load)
    result["discarded_loads"] = discarded
    result["started_busy"] = load > opts.max_load
    return result


def ratio_rows(rounds: list[dict[str, dict]]) -> dict[str, dict]:
    """Per ratio: the per-round ratios (same round = adjacent runs), their median and bootstrap CI."""
    out = {}
    for name, (num, den) in {
        "native/model": ("native", "model"),
        "model/floor": ("model", "floor"),
        "native/floor": ("native", "floor"),
        "model/mindcv": ("model", "mindcv"),
        "model/mindcv-nosummary": ("model", "mindcv-nosummary"),
    }.items():
        if not all(num in r and den in r for r in rounds):
            continue
        values = [
            r[num]["steps_per_s"] / r[den]["steps_per_s"]
            for r in rounds
            if "steps_per_s" in r[num] and "steps_per_s" in r[den]
        ]
        if values:
            out[name] = stats.summarize(values, TARGETS.get(name))
    return out


def bench_training(work: Path, opts: argparse.Namespace) -> list[dict]:
    rows = []
    rounds_n = QUICK_ROUNDS if opts.quick else opts.rounds
    inputs = tuple(s for s in opts.inputs.split(",") if s)
    for config in sorted((BENCH / "configs").glob("*.yaml")):
        if opts.configs and not any(c in config.stem for c in opts.configs.split(",")):
            continue
        out_dir = work / config.stem
        subprocess.run(
            [*MSCODEGEN, "new", str(config), "--out", str(out_dir), "--force"],
            cwd=ROOT,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        spec = yaml.safe_load(config.read_text())
        level = (spec.get("amp") or {}).get("level", "O0")
        network = spec.get("network") or {}
        peer = network.get("kind") == "mindcv" and not opts.no_peer
        (out_dir / "bench.json").write_text(
            json.dumps(
                {
                    "amp_level": level,
                    "mindcv_model": network.get("name"),
                    "num_classes": network.get("num_classes"),
                }
            )
        )
        kinds = KINDS + PEER_KINDS if peer else KINDS
        steps = _steps_for(config, opts.quick)
        for source in inputs:
            if source == "pipeline" and (_heavy(config) or level != "O0") and not opts.all_inputs:
                continue
            rounds: list[dict[str, dict]] = []
            for i in range(rounds_n):
                results = {}
                for kind in kinds:  # interleaved: f, m, n, f, m, n, ...
                    label = f"  {config.stem:20} {source:8} round {i + 1}/{rounds_n} {kind:6}"
                    print(f"{label} {steps} steps ...", end="", flush=True)
                    r = measured_run(out_dir, kind, source, steps, opts)
                    results[kind] = r
                    msg = (
                        r["error"].splitlines()[0]
                        if "error" in r
                        else f"{r['steps_per_s']:.3f} steps/s (load {r['loadavg_1min_before']:.2f})"
                    )
                    print(f" {msg}  ({r['wall_s']:.0f} s)", flush=True)
                rounds.append(results)
            per_kind = {
                kind: stats.summarize([r[kind]["steps_per_s"] for r in rounds if "steps_per_s" in r[kind]])
                for kind in kinds
                if any("steps_per_s" in r[kind] for r in rounds)
            }
            rows.append(
                {
                    "config": config.stem,
                    "amp": level,
                    "input": source,
                    "steps": steps,
                    "rounds": rounds,
                    "steps_per_s": per_kind,
                    "ratios": ratio_rows(rounds),
                }
            )
    return rows


# --------------------------------------------------------------------------- generation


def _timed(cmd: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def bench_generation(work: Path, repeats: int) -> list[dict]:
    rows = []
    base = {k: v for k, v in os.environ.items() if k not in ("MSCODEGEN_NO_CACHE", "MSCODEGEN_CACHE_DIR")}
    for example in sorted((ROOT / "examples").rglob("*.yaml")):
        new = [*MSCODEGEN, "new", str(example), "--out", str(work / "gen" / example.stem), "--force"]
        cold, warm = [], []
        for i in range(repeats):
            env = dict(base, MSCODEGEN_CACHE_DIR=str(work / "cache-cold" / str(i)))  # empty every run
            cold.append(_timed(new, env))
        warm_env = dict(base, MSCODEGEN_CACHE_DIR=str(work / "cache-warm"))
        _timed(new, warm_env)  # fill the cache
        warm = [_timed(new, warm_env) for _ in range(repeats)]
        validate = [_timed([*MSCODEGEN, "validate", str(example)], warm_env) for _ in range(repeats)]
        rows.append(
            {
                "example": example.relative_to(ROOT).as_posix(),
                "new_cold_s": statistics.median(cold),
                "new_warm_s": statistics.median(warm),
                "validate_s": statistics.median(validate),
                "samples": {"new_cold": cold, "new_warm": warm, "validate": validate},
            }
        )
        print(
            f"  {example.stem:22} new cold {rows[-1]['new_cold_s']:.3f} s  warm {rows[-1]['new_warm_s']:.3f} s"
            f"  validate {rows[-1]['validate_s']:.3f} s",
            flush=True,
        )
    return rows


# --------------------------------------------------------------------------- report


def _interval(summary: dict, fmt: str = ".3f") -> str:
    lo, hi = summary["ci95"]
    return f"{summary['median']:{fmt}} [{lo:{fmt}}, {hi:{fmt}}]"


def print_tables(training: list[dict], generation: list[dict]) -> None:
    if training:
        print("\nsteady-state steps/s: median over interleaved rounds [bootstrap 95% CI of the median]")
        for row in training:
            sps = row["steps_per_s"]
            cells = "  ".join(f"{k} {_interval(v)}" for k, v in sps.items())
            print(f"{row['config']:20} {row['input']:8} {cells}")
        print("\nratios per round: median [95% CI] -> verdict against the target")
        for row in training:
            parts = []
            for name, summary in row["ratios"].items():
                verdict = f" {summary['verdict']} (>= {summary['target']})" if "target" in summary else ""
                parts.append(f"{name} {_interval(summary)}{verdict}")
            print(f"{row['config']:20} {row['input']:8} " + "; ".join(parts))
        busy = sum(r[k].get("started_busy", False) for row in training for r in row["rounds"] for k in r)
        if busy:
            print(f"\nwarning: {busy} run(s) started above --max-load after every retry: numbers are noisy")
    if generation:
        print("\ngeneration, whole process wall time (median)")
        print(f"{'example':36} {'new cold':>9} {'new warm':>9} {'validate':>9}")
        for row in generation:
            print(
                f"{row['example']:36} {row['new_cold_s']:9.3f} {row['new_warm_s']:9.3f} {row['validate_s']:9.3f}"
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"{QUICK_ROUNDS} rounds, fewer steps (a smoke run, not for numbers)",
    )
    parser.add_argument(
        "--rounds", type=int, default=ROUNDS, help="interleaved rounds per row (default %(default)s)"
    )
    parser.add_argument("--configs", default="", help="comma list of bench/configs name parts (default: all)")
    parser.add_argument(
        "--max-load",
        type=float,
        default=float(os.cpu_count() or 1),
        help="discard and rerun a run started above this 1-minute load average (default: core count)",
    )
    parser.add_argument("--max-wait", type=float, default=120, help="seconds to wait for the load to drop")
    parser.add_argument("--no-peer", action="store_true", help="skip the mindcv peer rows")
    parser.add_argument("--retries", type=int, default=2, help="reruns of a run started above --max-load")
    parser.add_argument("--only", choices=("training", "generation"), default=None)
    parser.add_argument("--inputs", default="memory,pipeline", help="comma list of memory,pipeline")
    parser.add_argument(
        "--all-inputs", action="store_true", help="also run the pipeline input for ResNet and O2 rows"
    )
    parser.add_argument("--repeats", type=int, default=5, help="runs per generation timing (median)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per worker process")
    parser.add_argument("--out", type=Path, default=None, help="result JSON (default bench/results/...)")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    info = machine()
    info["loadavg_start"] = os.getloadavg()
    print(f"{info['cpu']}, {info['cores']} cores, Python {info['python']}, MindSpore {info['mindspore']}")
    work = Path(tempfile.mkdtemp(prefix="mscodegen-bench-"))
    try:
        generation = []
        training = []
        if args.only in (None, "generation"):
            print("generation:")
            generation = bench_generation(work, args.repeats)
        if args.only in (None, "training"):
            print("training (one process at a time):")
            training = bench_training(work, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    info["loadavg_end"] = os.getloadavg()
    info["bench_wall_s"] = time.perf_counter() - start
    print_tables(training, generation)
    now = datetime.datetime.now()
    out = args.out or BENCH / "results" / f"{now:%Y-%m-%d}-{info['host']}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "date": now.isoformat(timespec="seconds"),
        "machine": info,
        "quick": args.quick,
        "method": {
            "rounds": QUICK_ROUNDS if args.quick else args.rounds,
            "order": "floor, model, native interleaved per round",
            "max_load": args.max_load,
            "targets": TARGETS,
            "ci": f"percentile bootstrap of the median, {stats.RESAMPLES} resamples, seed {stats.SEED}",
        },
    }
    report.update(training=training, generation=generation)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(
        f"\nwrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}  ({info['bench_wall_s']:.0f} s)"
    )
    failed = any("error" in result for row in training for r in row["rounds"] for result in r.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
