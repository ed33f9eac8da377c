"""`make bench` (= python -m bench): speed of the generated scripts and of `mscodegen new`.

Training: every bench/configs/*.yaml is generated into a temp dir, then, one fresh process each
(`python -m bench.worker`, strictly one after another), the hand-written floor, the model variant
and the native variant run STEPS steps. The scripts are run as they are, observed from outside
(their train cell's calls are hooked; see bench/worker.py): model and native train on their own
dataset pipeline, the floor on the same batches held in memory. A last row runs the generated
mnist_quickstart scripts against a hand-written MindSpore quick start (bench/reference_quickstart.py)
and compares their per-step losses bit for bit. A row's kinds run interleaved (f, m, n, n, m, f, ...)
for --rounds rounds, each started only when the 1-minute load average is at most the core count (a
run started above it is discarded and rerun); each ratio is taken per round (adjacent runs) and
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
# the quick start row: the generated mnist_quickstart scripts against a hand-written tutorial
QUICKSTART = "mnist_quickstart"
QUICKSTART_KINDS = ("reference", "model", "native")
REFERENCE = BENCH / "reference_quickstart.py"

ROUNDS = 5  # interleaved rounds per row
QUICK_ROUNDS = 2
# judged on the bootstrap interval of the per-round ratios
TARGETS = {"native/model": 0.98, "model/floor": 0.95, "model/reference": 0.95, "native/reference": 0.95}
# (name, numerator, denominator) of every ratio a row can have
RATIOS = (
    ("native/model", "native", "model"),
    ("model/floor", "model", "floor"),
    ("native/floor", "native", "floor"),
    ("model/reference", "model", "reference"),
    ("native/reference", "native", "reference"),
    ("model/mindcv", "model", "mindcv"),
    ("model/mindcv-nosummary", "model", "mindcv-nosummary"),
)
# MindSpore's oneDNN picks a slow reference convolution on AVX-512 CPUs; capped at AVX2 it runs its
# jit kernels (tests/conftest.py sets the same). Every worker inherits it.
os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")


def _steps_for(name: str, quick: bool) -> int:
    """A LeNet step takes about 10 ms here: 300 steps give 3 s of steady state per run."""
    if _heavy(name):
        return 15 if quick else 40
    return 100 if quick else 300


def _heavy(name: str) -> bool:
    """ResNet steps take a fifth of a second on 2 CPU cores: fewer steps."""
    return "resnet" in name


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
        "onednn_max_cpu_isa": os.environ.get("ONEDNN_MAX_CPU_ISA"),
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
    """Steps/s after compile: drop the first steps (compile, warm-up), then 1 / the median gap
    between consecutive train-cell returns (robust to a stall, an epoch end or an evaluation).
    `span_steps_per_s` is the plain throughput over the same steps, epoch ends and evaluations in.

    Given begins and call_ends (bench/worker.py), also each step's split into "call" (the train
    cell, begin to its return) and "host" (the rest of the step-to-step gap), as medians in ms.
    """
    warm = max(5, len(ends) // 10) if len(ends) >= 20 else 3
    gaps = [b - a for a, b in zip(ends[warm:], ends[warm + 1 :], strict=False)]
    out = {
        "steps_per_s": 1 / statistics.median(gaps),
        "span_steps_per_s": len(gaps) / sum(gaps),
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
    kind: str,
    script: Path,
    steps: int,
    cwd: Path,
    timeout: float,
    *,
    profile: bool = False,
    data_dir: Path | None = None,
) -> dict:
    """One `python -m bench.worker` process, run in `cwd` (where a script writes what it writes)."""
    cwd.mkdir(parents=True, exist_ok=True)
    out = cwd / f"{kind}.json"
    log = cwd / f"{kind}.log"
    start = time.perf_counter()
    extra = ["--profile"] if profile else []
    if data_dir is not None:  # given to the script only if it has --data-dir (bench/worker.py)
        extra += ["--data-dir", str(data_dir)]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    with open(log, "w") as fh:
        proc = subprocess.run(
            [sys.executable, "-m", "bench.worker", kind, str(script), str(steps), str(out), *extra],
            cwd=cwd,
            env=env,
            stdout=fh,
            stderr=subprocess.STDOUT,
            timeout=timeout,
            check=False,
        )
    wall = time.perf_counter() - start
    if proc.returncode != 0 or not out.exists():
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
        return {"kind": kind, "error": f"exit {proc.returncode}\n{tail}", "wall_s": wall}
    raw = json.loads(out.read_text())
    out.unlink()
    result = {k: v for k, v in raw.items() if k not in ("begins", "ends", "call_ends")}
    result.update(steady(raw["ends"], raw["begins"], raw.get("call_ends")), wall_s=wall)
    return result


def measured_run(
    kind: str, script: Path, steps: int, cwd: Path, opts: argparse.Namespace, data_dir: Path | None = None
) -> dict:
    """One worker run, started only on an idle machine; a run started above --max-load is discarded
    and rerun (up to --retries times), so a busy neighbour cannot pass for a slow variant."""
    discarded = []
    for _ in range(opts.retries + 1):
        load = wait_for_idle(opts.max_load, opts.max_wait)
        result = run_worker(kind, script, steps, cwd, opts.timeout, data_dir=data_dir)
        result["loadavg_1min_before"] = load
        if load <= opts.max_load or "error" in result:
            break
        discarded.append(load)
    result["discarded_loads"] = discarded
    result["started_busy"] = load > opts.max_load
    return result


def ratio_rows(rounds: list[dict[str, dict]], key: str = "steps_per_s") -> dict[str, dict]:
    """Per ratio: the per-round ratios (same round = adjacent runs), their median and bootstrap CI."""
    out = {}
    for name, num, den in RATIOS:
        if not all(num in r and den in r for r in rounds):
            continue
        values = [r[num][key] / r[den][key] for r in rounds if key in r[num] and key in r[den]]
        if values:
            out[name] = stats.summarize(values, TARGETS.get(name) if key == "steps_per_s" else None)
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


def first_difference(base: list[float], other: list[float]) -> int | None:
    """The 1-based step of the first loss that differs (compared with ==, bit for bit for floats
    read from float32), a missing step counting as a difference; None if the lists are equal."""
    for i, (a, b) in enumerate(zip(base, other, strict=False)):
        if a != b:
            return i + 1
    if len(base) != len(other):
        return min(len(base), len(other)) + 1
    return None


def loss_check(rounds: list[dict[str, dict]], base: str) -> dict[str, dict]:
    """Every run's per-step losses against the first run of `base` (the floor, or the reference):
    per kind, whether all its runs are equal to it, and where the first run that is not differs."""
    runs = {
        kind: [r[kind]["losses"] for r in rounds if r.get(kind, {}).get("losses")]
        for kind in dict.fromkeys(k for r in rounds for k in r)
    }
    if not runs.get(base):
        return {}
    ref = runs[base][0]
    out = {}
    for kind, lists in runs.items():
        if not lists:
            continue
        diffs = [first_difference(ref, losses) for losses in lists]
        differing = [(i, d) for i, d in enumerate(diffs) if d is not None]
        entry = {"runs": len(lists), "steps": len(ref), "equal": not differing}
        if differing:
            i, step = differing[0]
            losses = lists[i]
            entry["first_difference"] = {
                "run": i + 1,
                "step": step,
                base: ref[step - 1] if step <= len(ref) else None,
                kind: losses[step - 1] if step <= len(losses) else None,
            }
        out[kind] = entry
    return {"base": base, "kinds": out}


def _generate(config: Path, out_dir: Path) -> None:
    subprocess.run(
        [*MSCODEGEN, "new", str(config), "--out", str(out_dir), "--force"],
        cwd=ROOT,
        check=True,
        stdout=subprocess.DEVNULL,
    )


def _bench_row(
    name: str,
    scripts: dict[str, Path],
    cwd: Path,
    opts: argparse.Namespace,
    data_dir: Path | None = None,
    **info: object,
) -> dict:
    """One row: every kind of `scripts` run --rounds times, interleaved, the order reversed every
    other round (f, m, n, n, m, f, ...) so that a steady drift of the machine's speed does not
    favour the kind that runs first."""
    kinds = tuple(scripts)
    rounds_n = QUICK_ROUNDS if opts.quick else opts.rounds
    steps = _steps_for(name, opts.quick)
    rounds: list[dict[str, dict]] = []
    for i in range(rounds_n):
        results = {}
        for kind in kinds if i % 2 == 0 else kinds[::-1]:
            print(f"  {name:20} round {i + 1}/{rounds_n} {kind:9} {steps} steps ...", end="", flush=True)
            r = measured_run(kind, scripts[kind], steps, cwd, opts, data_dir)
            results[kind] = r
            msg = (
                r["error"].splitlines()[0]
                if "error" in r
                else f"{r['steps_per_s']:.3f} steps/s (load {r['loadavg_1min_before']:.2f})"
            )
            print(f" {msg}  ({r['wall_s']:.0f} s)", flush=True)
        rounds.append({k: results[k] for k in kinds})
    per_kind = {
        kind: stats.summarize([r[kind]["steps_per_s"] for r in rounds if "steps_per_s" in r[kind]])
        for kind in kinds
        if any("steps_per_s" in r[kind] for r in rounds)
    }
    return {
        "config": name,
        **info,
        "steps": steps,
        "scripts": {
            k: str(v.relative_to(ROOT)) if v.is_relative_to(ROOT) else v.name for k, v in scripts.items()
        },
        "rounds": rounds,
        "steps_per_s": per_kind,
        "ratios": ratio_rows(rounds),
        "span_ratios": ratio_rows(rounds, "span_steps_per_s"),
        "split_ms": split_rows(rounds, kinds),
        "losses": loss_check(rounds, kinds[0]),
    }


def bench_training(work: Path, opts: argparse.Namespace) -> list[dict]:
    """Every bench/configs/*.yaml (floor, model, native [, the mindcv peer]), then the quick start row
    (reference, model, native)."""
    rows = []
    for config in sorted((BENCH / "configs").glob("*.yaml")):
        if opts.configs and not any(c in config.stem for c in opts.configs.split(",")):
            continue
        out_dir = work / config.stem
        _generate(config, out_dir)
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
                    "lr": (spec.get("optimizer") or {}).get("lr", 0.01),
                }
            )
        )
        scripts = {
            "floor": out_dir / "train_model.py",
            "model": out_dir / "train_model.py",
            "native": out_dir / "train_native.py",
        }
        if peer:
            scripts.update({kind: out_dir / "train_model.py" for kind in PEER_KINDS})
        rows.append(_bench_row(config.stem, scripts, out_dir / "runs", opts, amp=level))
    if not opts.configs or any(c in QUICKSTART for c in opts.configs.split(",")):
        generated = ROOT / "generated" / QUICKSTART
        scripts = {
            "reference": REFERENCE,
            "model": generated / "train_model.py",
            "native": generated / "train_native.py",
        }
        # run from a work folder: the scripts find their data next to themselves (DATA_DIR), and
        # whatever a run writes (the reference's checkpoints) stays out of the repository
        data = ROOT / "examples" / "data" / "mnist"  # passed to a script that has --data-dir
        rows.append(_bench_row(QUICKSTART, scripts, work / QUICKSTART, opts, data_dir=data, amp="O0"))
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
    """A cost point the training rows already measured (same config, its own batch): the rows'
    medians over their rounds instead of another pair of runs."""
    spec = yaml.safe_load((BENCH / "configs" / f"{base}.yaml").read_text())
    if spec["data"]["train"]["batch_size"] != batch:
        return None
    for row in training:
        if row["config"] == base:
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
        _generate(config, out_dir)
        flops = _child_json(["flops", str(out_dir / "train_model.py"), str(batch)], opts.timeout)
        steps = _steps_for(label, opts.quick)
        run = _from_row(training, base, batch) if network is None else None
        point = {"label": label, "batch": batch, **flops, "from_training_row": run is not None}
        if run is None:
            script = out_dir / "train_model.py"
            run = {
                kind: measured_run(kind, script, steps, out_dir / "runs", opts) for kind in ("floor", "model")
            }
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
    _generate(BENCH / "configs" / f"{OPS_CONFIG}.yaml", out_dir)
    tables = {}
    for kind in KINDS:
        wait_for_idle(opts.max_load, opts.max_wait)
        script = out_dir / ("train_native.py" if kind == "native" else "train_model.py")
        r = run_worker(kind, script, OPS_STEPS, out_dir / "runs", opts.timeout, profile=True)
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


def _loss_line(check: dict) -> str:
    if not check:
        return "no losses"
    parts = []
    for kind, entry in check["kinds"].items():
        if kind == check["base"]:
            same = "equal across runs" if entry["equal"] else "NOT equal across runs"
            parts.append(f"{kind} {entry['runs']} runs {same}")
        elif entry["equal"]:
            parts.append(f"{kind} equal ({entry['runs']} runs)")
        else:
            d = entry["first_difference"]
            parts.append(
                f"{kind} DIFFERS from step {d['step']} (run {d['run']}: {d[kind]!r} vs {d[check['base']]!r})"
            )
    steps = next(iter(check["kinds"].values()))["steps"]
    return f"{steps} steps vs {check['base']}: " + "; ".join(parts)


def training_table(training: list[dict]) -> str:
    """The training rows as printed and pasted into docs/speed.md."""
    lines = ["steady-state steps/s (1 / median step gap): median over interleaved rounds [bootstrap 95% CI]"]
    for row in training:
        cells = "  ".join(f"{k} {_interval(v)}" for k, v in row["steps_per_s"].items())
        lines.append(f"{row['config']:20} {cells}")
    lines += ["", "ratios per round: median [95% CI] -> verdict against the target"]
    for row in training:
        parts = []
        for name, summary in row["ratios"].items():
            verdict = f" {summary['verdict']} (>= {summary['target']})" if "target" in summary else ""
            parts.append(f"{name} {_interval(summary)}{verdict}")
        lines.append(f"{row['config']:20} " + "; ".join(parts))
    lines += ["", "throughput ratios (all timed steps / their whole time: epoch ends and evaluations in)"]
    for row in training:
        parts = [f"{name} {_interval(summary)}" for name, summary in row.get("span_ratios", {}).items()]
        lines.append(f"{row['config']:20} " + "; ".join(parts))
    lines += ["", "where a step's time goes: call (the train cell) + host (loop, data, callbacks), ms"]
    for row in training:
        split = row.get("split_ms", {})
        cells = "  ".join(
            f"{k} {_interval(v['call'], '.2f')} + {_interval(v['host'], '.2f')}"
            for k, v in split.items()
            if "call" in v
        )
        lines.append(f"{row['config']:20} {cells}")
        if "host native-model" in split:
            lines.append(f"{'':20} host native - model {_interval(split['host native-model'], '.3f')} ms")
    lines += ["", "per-step losses, compared bit for bit (==) with the first kind's first run"]
    for row in training:
        lines.append(f"{row['config']:20} {_loss_line(row.get('losses', {}))}")
    return "\n".join(lines)


def print_tables(training: list[dict], generation: list[dict]) -> None:
    if training:
        print("\n" + training_table(training))
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
            "order": "a row's kinds interleaved; the order reversed every other round",
            "observed": "train-cell calls, hooked from outside (bench/worker.py); steps/s = 1 / median step gap",
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
