"""`make bench` (= python -m bench): speed of the generated scripts and of `mscodegen new`.

Training: every bench/configs/*.yaml is generated into a temp dir, then, one fresh process each
(`python -m bench.worker`, strictly one after another), the hand-written floor, the model variant
and the native variant run STEPS steps on in-memory batches ("memory") and on the script's own
dataset pipeline ("pipeline"). The three run interleaved (f, m, n, n, m, f, ...) for --rounds
rounds, each started only when the 1-minute load average is at most the core count (a run
started above it is discarded and rerun); each ratio is taken per round (adjacent runs) and
reported as the median with a bootstrap 95% interval (bench/stats.py), judged against its target
on the interval: met, refuted or undecided. Generation: `mscodegen new` for every example and
`mscodegen validate`, whole-process wall time.
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
from .worker import PROFILE_FROM

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
# paired processes (bench/worker.py run_paired): (steps per turn, turns per kind); the first turn is
# compile and warm-up and is left out. Short turns: this VM's speed changes from one second to the
# next (a LeNet step's cell took 52 or 92 ms in neighbouring turns of 10 steps), so the three kinds'
# turns must be close in time; with 3-step turns a cycle of f, m, n takes under a second.
PAIRED_LIGHT = (3, 25)
PAIRED_HEAVY = (2, 5)


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


def steady(
    ends: list[float], begins: list[float] | None = None, call_ends: list[float] | None = None
) -> dict:
    """Steps/s after compile: drop the first steps (compile, warm-up), then median over CHUNKS windows.

    Given begins and call_ends (bench/worker.py), also each step's split into "call" (the train
    cell, begin to its return) and "host" (the rest of the step-to-step gap), as medians in ms.
    """
    warm = max(5, len(ends) // 10) if len(ends) >= 20 else 3
    gaps = [b - a for a, b in zip(ends[warm:], ends[warm + 1 :], strict=False)]
    size = max(1, len(gaps) // CHUNKS)
    rates = [len(c) / sum(c) for c in (gaps[i : i + size] for i in range(0, size * CHUNKS, size)) if c]
    out = {
        "steps_per_s": statistics.median(rates),
        "min_steps_per_s": min(rates),
        "max_steps_per_s": max(rates),
        "median_step_ms": 1000 * statistics.median(gaps),
        "timed_steps": len(gaps),
    }
    if begins and call_ends and len(begins) == len(ends) == len(call_ends):
        # gap i runs from the end of step warm+i to the end of step warm+i+1, whose call it contains
        calls = [call_ends[j] - begins[j] for j in range(warm + 1, len(ends))]
        hosts = [gap - call for gap, call in zip(gaps, calls, strict=True)]
        out.update(
            median_call_ms=1000 * statistics.median(calls), median_host_ms=1000 * statistics.median(hosts)
        )
    return out


def wait_for_idle(max_load: float, max_wait: float) -> float:
    """Wait (up to max_wait s) until the 1-minute load average is at most max_load; return it."""
    deadline = time.monotonic() + max_wait
    load = os.getloadavg()[0]
    while load > max_load and time.monotonic() < deadline:
        time.sleep(5)
        load = os.getloadavg()[0]
    return load


def run_worker(
    script_dir: Path, kind: str, source: str, steps: int, timeout: float, *, profile: bool = False
) -> dict:
    out = script_dir / f"{kind}-{source}.json"
    log = script_dir / f"{kind}-{source}.log"
    start = time.perf_counter()
    extra = ["--profile"] if profile else []
    with open(log, "w") as fh:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "bench.worker",
                str(script_dir),
                kind,
                source,
                str(steps),
                str(out),
                *extra,
            ],
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
    if kind == "paired":  # source is the block size
        return {
            "kind": kind,
            "block": int(source),
            **paired_ratios(raw["kinds"], int(source)),
            "wall_s": wall,
        }
    result = {k: v for k, v in raw.items() if k not in ("begins", "ends", "call_ends")}
    result.update(steady(raw["ends"], raw["begins"], raw.get("call_ends")), wall_s=wall)
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


def paired_ratios(kinds: dict[str, dict], block: int) -> dict[str, float]:
    """One paired process's ratios: per cycle of turns (block b of each kind), the ratio of the
    kinds' steps/s within their blocks; the median over cycles, the first (compile) left out.
    A block's first step is not timed (the previous kind's thread may still be finishing its loop)."""
    rates: dict[str, list[float]] = {}
    for kind, ts in kinds.items():
        ends = ts["ends"]
        rates[kind] = [
            (block - 1) / (ends[b * block + block - 1] - ends[b * block])
            for b in range(1, len(ends) // block)
        ]
    cycles = min(len(v) for v in rates.values())
    out = {}
    for name, (num, den) in {"native/model": ("native", "model"), "model/floor": ("model", "floor")}.items():
        out[name] = statistics.median(rates[num][c] / rates[den][c] for c in range(cycles))
    for kind, values in rates.items():
        out[f"{kind} steps/s"] = statistics.median(values)
    return out


def split_rows(rounds: list[dict[str, dict]], kinds: tuple[str, ...]) -> dict[str, dict]:
    """Per kind, the median over rounds of its steps' call and host times (ms); and per round the
    host-time difference native - model, the harness's own cost with the network taken out."""
    out: dict[str, dict] = {}
    for kind in kinds:
        runs = [r[kind] for r in rounds if "median_call_ms" in r.get(kind, {})]
        if runs:
            out[kind] = {
                "call": stats.summarize([x["median_call_ms"] for x in runs]),
                "host": stats.summarize([x["median_host_ms"] for x in runs]),
            }
    diffs = [
        r["native"]["median_host_ms"] - r["model"]["median_host_ms"]
        for r in rounds
        if "median_host_ms" in r.get("native", {}) and "median_host_ms" in r.get("model", {})
    ]
    if diffs:
        out["host native-model"] = stats.summarize(diffs)
    return out


def _wants_paired(mode: str, ratios: dict[str, dict], *, heavy: bool) -> bool:
    """auto: a light (LeNet) row with an undecided verdict. A ResNet row's paired rounds take ~3 min
    and would push `make bench` past 20 minutes; its call/host split shows what the harness costs."""
    if mode == "auto":
        return not heavy and any(r.get("verdict") == "undecided" for r in ratios.values())
    return mode == "always"


def paired_row(out_dir: Path, config: Path, rounds_n: int, opts: argparse.Namespace) -> dict:
    """--rounds paired processes (bench/worker.py run_paired), one ratio per process per target."""
    block, cycles = PAIRED_HEAVY if _heavy(config) else PAIRED_LIGHT
    if opts.quick:
        cycles = 3
    steps = block * cycles
    runs = []
    for i in range(rounds_n):
        label = f"  {config.stem:20} paired   round {i + 1}/{rounds_n} f/m/n in turns of {block} steps"
        print(f"{label}, {steps} steps each ...", end="", flush=True)
        r = measured_run(out_dir, "paired", str(block), steps, opts)
        runs.append(r)
        msg = (
            r["error"].splitlines()[0]
            if "error" in r
            else f"native/model {r['native/model']:.3f}  model/floor {r['model/floor']:.3f}"
        )
        print(f" {msg}  ({r['wall_s']:.0f} s)", flush=True)
    ok = [r for r in runs if "error" not in r]
    ratios = (
        {name: stats.summarize([r[name] for r in ok], target) for name, target in TARGETS.items()}
        if ok
        else {}
    )
    return {"block": block, "cycles": cycles, "runs": runs, "ratios": ratios}


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
        # the peer on the fp32 row only: at O2 it measured the same (model/mindcv 2.07, without the
        # SummaryRecord writer 1.00 in bench/results/2026-12-03-vm-full.json) and took 3.6 min
        peer = network.get("kind") == "mindcv" and level == "O0" and not opts.no_peer
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
                # interleaved, the order reversed every other round (f, m, n, n, m, f, ...) so that a
                # steady drift of the machine's speed does not favour the kind that runs first
                for kind in kinds if i % 2 == 0 else kinds[::-1]:
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
            ratios = ratio_rows(rounds)
            paired = None
            if source == "memory" and _wants_paired(opts.paired, ratios, heavy=_heavy(config)):
                paired = paired_row(out_dir, config, rounds_n, opts)
            rows.append(
                {
                    "config": config.stem,
                    "amp": level,
                    "input": source,
                    "steps": steps,
                    "rounds": rounds,
                    "steps_per_s": per_kind,
                    "ratios": ratios,
                    "split_ms": split_rows(rounds, kinds),
                    "paired": paired,
                }
            )
    return rows


# --------------------------------------------------------------------------- limit and cost


def _child_json(args: list[str], timeout: float) -> dict | list:
    out = subprocess.run(
        [sys.executable, "-m", "bench.limit", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if out.returncode != 0:
        raise RuntimeError(f"bench.limit {' '.join(args)} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _variant_config(
    base: Path, work: Path, name: str, batch: int | None = None, network: dict | None = None
) -> Path:
    spec = yaml.safe_load(base.read_text())
    if batch is not None:
        spec["data"]["train"]["batch_size"] = batch
        spec["data"]["train"]["num_samples"] = max(spec["data"]["train"].get("num_samples", 0), batch * 64)
    if network is not None:
        spec["network"] = network
    path = work / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


# (label, base config, batch, network override): the cost curve's points
COST_POINTS = [
    *((f"lenet b{b}", "bench_lenet_fp32", b, None) for b in (16, 32, 64, 128)),
    ("resnet18 b16", "bench_resnet18_fp32", 16, None),
    ("resnet50 b16", "bench_resnet18_fp32", 16, {"kind": "mindcv", "name": "resnet50", "num_classes": 10}),
]


def _from_row(training: list[dict], base: str, batch: int) -> dict | None:
    """A cost point the training rows already measured (same config, its own batch, memory input):
    the rows' medians over their rounds instead of another pair of runs."""
    spec = yaml.safe_load((BENCH / "configs" / f"{base}.yaml").read_text())
    if spec["data"]["train"]["batch_size"] != batch:
        return None
    for row in training:
        if row["config"] == base and row["input"] == "memory":
            return {
                kind: {
                    "steps_per_s": row["steps_per_s"][kind]["median"],
                    "peak_rss_mb": statistics.median(
                        r[kind]["peak_rss_mb"] for r in row["rounds"] if "peak_rss_mb" in r[kind]
                    ),
                }
                for kind in ("floor", "model")
                if kind in row["steps_per_s"]
            }
    return None


def bench_limit_and_cost(work: Path, opts: argparse.Namespace, training: list[dict]) -> dict:
    """The floor's achieved FLOP/s against a practical peak, bare conv speed, and the cost curve
    (points the training rows measured are taken from them)."""
    print("limit: practical peak (numpy float32 matmul), bare MindSpore convolutions", flush=True)
    wait_for_idle(opts.max_load, opts.max_wait)
    peak = _child_json(["peak"], opts.timeout)
    convs = _child_json(["convs"], opts.timeout)
    print(f"  numpy matmul: {peak['gflops']:.1f} GFLOP/s", flush=True)
    for row in convs:
        print(f"  nn.Conv2d {row['conv']}: {row['ms']:.2f} ms, {row['gflops']:.2f} GFLOP/s", flush=True)
    points = []
    for label, base, batch, network in COST_POINTS if not opts.quick else COST_POINTS[:2]:
        name = label.replace(" ", "_")
        config = _variant_config(BENCH / "configs" / f"{base}.yaml", work, name, batch, network)
        out_dir = work / f"cost-{name}"
        subprocess.run(
            [*MSCODEGEN, "new", str(config), "--out", str(out_dir), "--force"],
            cwd=ROOT,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        (out_dir / "bench.json").write_text(json.dumps({"amp_level": "O0"}))
        flops = _child_json(["flops", str(out_dir), str(batch)], opts.timeout)
        steps = _steps_for(config, opts.quick) if "lenet" in label else (9 if "18" in label else 6)
        run = _from_row(training, base, batch) if network is None else None
        point = {"label": label, "batch": batch, **flops, "from_training_row": run is not None}
        if run is None:
            run = {kind: measured_run(out_dir, kind, "memory", steps, opts) for kind in ("floor", "model")}
        for kind, r in run.items():
            if "steps_per_s" in r:
                point[f"{kind}_steps_per_s"] = r["steps_per_s"]
                point[f"{kind}_samples_per_s"] = r["steps_per_s"] * batch
                point[f"{kind}_peak_rss_mb"] = r["peak_rss_mb"]
                point[f"{kind}_gflops"] = r["steps_per_s"] * flops["train_flops"] / 1e9
            else:
                point[f"{kind}_error"] = r.get("error", "")
        points.append(point)
        if "floor_gflops" in point:
            print(
                f"  {label:14} {flops['train_flops'] / 1e9:7.3f} GFLOP/step  floor {point['floor_steps_per_s']:.2f} "
                f"steps/s = {point['floor_gflops']:.2f} GFLOP/s ({100 * point['floor_gflops'] / peak['gflops']:.2f}% "
                f"of peak)  model RSS {point.get('model_peak_rss_mb', float('nan')):.0f} MB",
                flush=True,
            )
    return {"peak": peak, "convs": convs, "cost": points}


OPS_CONFIG = "bench_lenet_fp32"
OPS_STEPS = 30


def profile_ops(work: Path, opts: argparse.Namespace) -> dict:
    """Where a LeNet step's time goes: MindSpore's profiler (CPU ops) over the floor's, the model
    variant's and the native variant's steps (bench/worker.py OpProfile), in ms per step by op type.
    The same ops at the same cost in all three means the variants run the floor's compiled step."""
    print(f"ops: MindSpore's profiler, {OPS_CONFIG}, steps {PROFILE_FROM + 1}-{OPS_STEPS}", flush=True)
    out_dir = work / "ops"
    subprocess.run(
        [*MSCODEGEN, "new", str(BENCH / "configs" / f"{OPS_CONFIG}.yaml"), "--out", str(out_dir), "--force"],
        cwd=ROOT,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    (out_dir / "bench.json").write_text(json.dumps({"amp_level": "O0"}))
    tables = {}
    for kind in KINDS:
        wait_for_idle(opts.max_load, opts.max_wait)
        r = run_worker(out_dir, kind, "memory", OPS_STEPS, opts.timeout, profile=True)
        if "op_profile" not in r:
            print(f"  {kind}: {r.get('error', 'no profile')}", flush=True)
            continue
        tables[kind] = r["op_profile"]
    ops = sorted(
        {op for t in tables.values() for op in t["ops"]},
        key=lambda op: -max(t["ops"].get(op, {}).get("ms_per_step", 0.0) for t in tables.values()),
    )
    print(f"  {'op type':36}" + "".join(f"{k:>10}" for k in tables) + "   (ms per step)")
    for op in ops:
        cells = "".join(f"{t['ops'].get(op, {}).get('ms_per_step', 0.0):10.2f}" for t in tables.values())
        print(f"  {op:36}{cells}")
    totals = {k: sum(v["ms_per_step"] for v in t["ops"].values()) for k, t in tables.items()}
    print(f"  {'all ops':36}" + "".join(f"{v:10.2f}" for v in totals.values()), flush=True)
    calls = {k: {op: v["calls_per_step"] for op, v in t["ops"].items()} for k, t in tables.items()}
    same = len({json.dumps(c, sort_keys=True) for c in calls.values()}) == 1
    print(f"  same op types and calls per step in {', '.join(tables)}: {'yes' if same else 'NO'}", flush=True)
    return {
        "config": OPS_CONFIG,
        "steps": OPS_STEPS,
        "tables": tables,
        "total_ms_per_step": totals,
        "same_ops_and_calls": same,
    }


def plot_cost(result: dict, png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lenet = [p for p in result["cost"] if p["label"].startswith("lenet") and "model_steps_per_s" in p]
    nets = [p for p in result["cost"] if p["batch"] == 16 and "model_steps_per_s" in p]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    batches = [p["batch"] for p in lenet]
    for kind in ("floor", "model"):
        axes[0].plot(batches, [p[f"{kind}_samples_per_s"] for p in lenet], marker="o", label=kind)
    axes[0].set(xscale="log", xlabel="batch size (LeNet)", ylabel="samples/s", title="throughput vs batch")
    axes[0].legend()
    axes[1].plot(batches, [p["model_peak_rss_mb"] for p in lenet], marker="o", label="LeNet (model variant)")
    axes[1].set(xscale="log", xlabel="batch size", ylabel="peak RSS (MB)", title="memory vs batch")
    for ax in axes[:2]:
        ax.set_xticks(batches, [str(b) for b in batches])
        ax.minorticks_off()
    labels = [p["label"].split()[0] for p in nets]
    axes[2].bar(labels, [p["floor_gflops"] for p in nets], label="floor GFLOP/s achieved")
    axes[2].set(
        ylabel="GFLOP/s", title=f"achieved vs numpy matmul peak {result['peak']['gflops']:.0f} GFLOP/s"
    )
    for i, p in enumerate(nets):
        share = 100 * p["floor_gflops"] / result["peak"]["gflops"]
        text = f"{share:.2f}% of peak\nRSS {p['model_peak_rss_mb']:.0f} MB"
        axes[2].annotate(text, (i, p["floor_gflops"]), ha="center", va="bottom")
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)


# --------------------------------------------------------------------------- generation


def _timed(cmd: list[str], env: dict, *, check: bool = True) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, env=env, check=check, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def _generation_env(work: Path) -> dict[str, str]:
    """The environment every generation timing runs in, mscodegen's bytecode compiled.

    An installed package has its .pyc files, so they are written once here even where
    PYTHONDONTWRITEBYTECODE is set (as on the CI machine), instead of every timed run compiling
    mscodegen's sources.
    """
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    first = sorted((ROOT / "examples").rglob("*.yaml"))[0]
    _timed([*MSCODEGEN, "new", str(first), "--out", str(work / "gen-pyc"), "--force"], base)
    return base


def bench_generation(work: Path, repeats: int) -> list[dict]:
    rows = []
    env = _generation_env(work)
    for example in sorted((ROOT / "examples").rglob("*.yaml")):
        new = [*MSCODEGEN, "new", str(example), "--out", str(work / "gen" / example.stem), "--force"]
        times = [_timed(new, env) for _ in range(repeats)]
        # check=False: an example whose data or weights are not on this machine still runs every
        # check; it just reports the missing file
        validate = [_timed([*MSCODEGEN, "validate", str(example)], env, check=False) for _ in range(repeats)]
        rows.append(
            {
                "example": example.relative_to(ROOT).as_posix(),
                "new_s": statistics.median(times),
                "validate_s": statistics.median(validate),
                "samples": {"new": times, "validate": validate},
            }
        )
        print(
            f"  {example.stem:22} new {rows[-1]['new_s']:.3f} s  validate {rows[-1]['validate_s']:.3f} s",
            flush=True,
        )
    return rows


PROFILED_EXAMPLE = "examples/lenet_digits.yaml"


def profile_generation(work: Path, repeats: int) -> dict:
    """Phase wall times of `mscodegen new` (bench/genprofile.py), median of `repeats` fresh
    processes, in the environment of the other generation timings."""
    env = _generation_env(work)
    cmd = [sys.executable, "-m", "bench.genprofile", PROFILED_EXAMPLE]
    runs = [
        json.loads(subprocess.run(cmd, cwd=ROOT, env=env, check=True, capture_output=True, text=True).stdout)
        for _ in range(repeats)
    ]
    phases = {name: statistics.median(run[name] for run in runs) for name in runs[0]}
    print("  `new` phases (s, median): " + "  ".join(f"{k} {v:.3f}" for k, v in phases.items()), flush=True)
    return {"example": PROFILED_EXAMPLE, "median_s": phases, "runs": runs}


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
        print("\nwhere a step's time goes: call (the compiled train cell) + host (loop, data, callbacks), ms")
        for row in training:
            split = row.get("split_ms", {})
            cells = "  ".join(
                f"{k} {_interval(v['call'], '.2f')} + {_interval(v['host'], '.2f')}"
                for k, v in split.items()
                if "call" in v
            )
            print(f"{row['config']:20} {row['input']:8} {cells}")
            if "host native-model" in split:
                print(f"{'':29} host native - model {_interval(split['host native-model'], '.3f')} ms")
        paired = [row for row in training if row.get("paired")]
        if paired:
            print(
                "\npaired processes (f, m, n in turns within one process): ratio per process, median [95% CI]"
            )
            for row in paired:
                parts = [
                    f"{name} {_interval(v)} {v['verdict']} (>= {v['target']})"
                    for name, v in row["paired"]["ratios"].items()
                ]
                print(f"{row['config']:20} {row['input']:8} " + "; ".join(parts))
        busy = sum(r[k].get("started_busy", False) for row in training for r in row["rounds"] for k in r)
        if busy:
            print(f"\nwarning: {busy} run(s) started above --max-load after every retry: numbers are noisy")
    if generation:
        print("\ngeneration, whole process wall time (median)")
        print(f"{'example':36} {'new':>9} {'validate':>9}")
        for row in generation:
            print(f"{row['example']:36} {row['new_s']:9.3f} {row['validate_s']:9.3f}")


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
    parser.add_argument("--only", choices=("training", "generation", "limit"), default=None)
    parser.add_argument("--inputs", default="memory,pipeline", help="comma list of memory,pipeline")
    parser.add_argument(
        "--all-inputs", action="store_true", help="also run the pipeline input for ResNet and O2 rows"
    )
    parser.add_argument(
        "--paired",
        choices=("auto", "always", "never"),
        default="never",
        help="also run paired processes (floor, model, native in turns in one process) for a memory "
        "row: auto = a LeNet row whose interleaved-process verdict is undecided (default %(default)s: "
        "in bench/results/2026-12-03-vm-full.json they did not narrow the interval)",
    )
    parser.add_argument("--repeats", type=int, default=3, help="runs per generation timing (median)")
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
        generation_profile = {}
        training = []
        if args.only in (None, "generation"):
            print("generation:")
            generation = bench_generation(work, args.repeats)
            generation_profile = profile_generation(work, args.repeats)
        if args.only in (None, "training"):
            print("training (one process at a time):")
            training = bench_training(work, args)
        limit = {}
        if args.only in (None, "limit"):
            limit = bench_limit_and_cost(work, args, training)
            limit["ops"] = profile_ops(work, args)
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
            "order": "floor, model, native interleaved; the order reversed every other round",
            "max_load": args.max_load,
            "targets": TARGETS,
            "ci": f"percentile bootstrap of the median, {stats.RESAMPLES} resamples, seed {stats.SEED}",
        },
    }
    report.update(
        training=training, generation=generation, generation_profile=generation_profile, limit=limit
    )
    out.write_text(json.dumps(report, indent=2) + "\n")
    if limit.get("cost"):
        png = out.with_name(out.stem + "-cost.png")
        plot_cost(limit, png)
        print(f"wrote {png.relative_to(ROOT) if png.is_relative_to(ROOT) else png}")
    print(
        f"\nwrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}  ({info['bench_wall_s']:.0f} s)"
    )
    failed = any("error" in result for row in training for r in row["rounds"] for result in r.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
