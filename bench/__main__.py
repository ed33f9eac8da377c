"""`make bench` (= python -m bench): speed of the generated scripts and of `mscodegen new`.

Training: every bench/configs/*.yaml is generated into a temp dir, then, one fresh process each
(`python -m bench.worker`, strictly one after another), the hand-written floor, the model variant
and the native variant run STEPS steps on in-memory batches ("memory") and on the script's own
dataset pipeline ("pipeline"). Generation: `mscodegen new` for every example and
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

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
MSCODEGEN = [sys.executable, "-m", "mscodegen"]
KINDS = ("floor", "model", "native")
CHUNKS = 5  # steady state: median over this many consecutive windows of steps


def _steps_for(config: Path, quick: bool) -> int:
    heavy = _heavy(config)
    if quick:
        return 12 if heavy else 60
    return 16 if heavy else 120


def _heavy(config: Path) -> bool:
    """ResNet-18 steps take seconds on 2 CPU cores: fewer steps, and no pipeline run (it is not
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
    """Steps/s after compile: drop the first step and a warm-up, then median over CHUNKS windows."""
    warm = max(5, len(ends) // 10)
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


def run_worker(script_dir: Path, kind: str, source: str, steps: int, timeout: float) -> dict:
    out = script_dir / f"{kind}-{source}.json"
    log = script_dir / f"{kind}-{source}.log"
    start = time.perf_counter()
    load = os.getloadavg()[0]
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
    result = {k: v for k, v in raw.items() if k not in ("begins", "ends")}
    result.update(steady(raw["ends"]), wall_s=wall, loadavg_1min_before=load)
    return result


def bench_training(
    work: Path, quick: bool, inputs: tuple[str, ...], timeout: float, all_inputs: bool
) -> list[dict]:
    rows = []
    for config in sorted((BENCH / "configs").glob("*.yaml")):
        out_dir = work / config.stem
        subprocess.run(
            [*MSCODEGEN, "new", str(config), "--out", str(out_dir), "--force"],
            cwd=ROOT,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        level = (yaml.safe_load(config.read_text()).get("amp") or {}).get("level", "O0")
        (out_dir / "bench.json").write_text(json.dumps({"amp_level": level}))
        steps = _steps_for(config, quick)
        for source in inputs:
            if source == "pipeline" and _heavy(config) and not all_inputs:
                continue
            results = {}
            for kind in KINDS:
                print(f"  {config.stem:22} {source:8} {kind:6} {steps} steps ...", end="", flush=True)
                r = run_worker(out_dir, kind, source, steps, timeout)
                results[kind] = r
                msg = (
                    r.get("error", "").splitlines()[0] if "error" in r else f"{r['steps_per_s']:.2f} steps/s"
                )
                print(f" {msg}  ({r['wall_s']:.0f} s)", flush=True)
            row = {"config": config.stem, "amp": level, "input": source, "steps": steps, "runs": results}
            sps = {k: r.get("steps_per_s") for k, r in results.items()}
            if all(sps.values()):
                row["native/model"] = sps["native"] / sps["model"]
                row["model/floor"] = sps["model"] / sps["floor"]
                row["native/floor"] = sps["native"] / sps["floor"]
            rows.append(row)
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


def print_tables(training: list[dict], generation: list[dict]) -> None:
    if training:
        print("\nsteady-state steps/s (median of windows after compile); first step s; peak RSS MB")
        head = f"{'config':22} {'input':8} {'floor':>7} {'model':>7} {'native':>7}  {'nat/mod':>7} {'mod/flr':>7}"
        head += f" {'nat/flr':>7}  {'1st step f/m/n':>16}  {'RSS f/m/n':>13}"
        print(head)
        for row in training:
            runs = row["runs"]

            def cell(kind: str, key: str, fmt: str, runs: dict = runs) -> str:
                value = runs[kind].get(key)
                return format(value, fmt) if value is not None else "err"

            ratios = "  ".join(
                f"{row[k]:7.3f}" if k in row else f"{'-':>7}"
                for k in ("native/model", "model/floor", "native/floor")
            )
            firsts = "/".join(cell(k, "first_step_s", ".1f") for k in KINDS)
            rss = "/".join(cell(k, "peak_rss_mb", ".0f") for k in KINDS)
            print(
                f"{row['config']:22} {row['input']:8} {cell('floor', 'steps_per_s', '7.2f')} "
                f"{cell('model', 'steps_per_s', '7.2f')} {cell('native', 'steps_per_s', '7.2f')}  "
                f"{ratios}  {firsts:>16}  {rss:>13}"
            )
    if generation:
        print("\ngeneration, whole process wall time (median)")
        print(f"{'example':36} {'new cold':>9} {'new warm':>9} {'validate':>9}")
        for row in generation:
            print(
                f"{row['example']:36} {row['new_cold_s']:9.3f} {row['new_warm_s']:9.3f} {row['validate_s']:9.3f}"
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps (a smoke run, not for numbers)")
    parser.add_argument("--only", choices=("training", "generation"), default=None)
    parser.add_argument("--inputs", default="memory,pipeline", help="comma list of memory,pipeline")
    parser.add_argument("--all-inputs", action="store_true", help="also run ResNet-18 on its pipeline")
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
            inputs = tuple(s for s in args.inputs.split(",") if s)
            training = bench_training(work, args.quick, inputs, args.timeout, args.all_inputs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    info["loadavg_end"] = os.getloadavg()
    info["bench_wall_s"] = time.perf_counter() - start
    print_tables(training, generation)
    now = datetime.datetime.now()
    out = args.out or BENCH / "results" / f"{now:%Y-%m-%d}-{info['host']}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    report = {"date": now.isoformat(timespec="seconds"), "machine": info, "quick": args.quick}
    report.update(training=training, generation=generation)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(
        f"\nwrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}  ({info['bench_wall_s']:.0f} s)"
    )
    failed = any("error" in r for row in training for r in row["runs"].values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
