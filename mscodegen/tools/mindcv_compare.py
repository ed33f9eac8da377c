"""Per-step losses of mindcv's own train.py against the scripts generated from the same recipe.

    python -m mscodegen.tools.mindcv_compare MINDCV_CHECKOUT [--recipe configs/resnet/resnet_18_ascend.yaml]
        [--steps 20] [--image-resize 64] [--cpu-threads 1] [--work DIR]
    make mindcv-compare MINDCV=~/src/mindcv [MINDCV_RECIPE=configs/...] [MINDCV_COMPARE_ARGS="--image-resize 224"]

On CPU, on a small image folder written by examples/make_imagefolder.py (160 JPEGs of 80 px in 4
classes, and 16 for val). The recipe is made CPU-small with the same overrides for both sides:
distribute false, data_dir the folder, batch_size 8, image_resize 64 (--image-resize: 224 for a model
built for one input size, such as convit), num_parallel_workers 2 (MindSpore refuses more workers than
CPUs; 1 when import-mindcv writes 1 because the pipeline runs Python ops, which MindSpore reproduces
with one worker only). MindSpore's CPU ops run on --cpu-threads threads on both sides (1 by default:
MindSpore 2.10's CPU Dropout kernel splits its mask between its threads, which draw from one generator
in whichever order they run, so a recipe whose model has dropout would not repeat itself with 2).
Everything else (seed, shuffle, augmentation, amp, loss scale, optimizer, schedule) is the recipe's.

- mindcv: its train.py's main() builds the dataset, loader, model, loss, scheduler, optimizer and
  trainer; only StateMonitor (logging and checkpoints) is replaced by a callback that prints each
  step's loss and stops after --steps. The installed mindcv package is imported (train.py and
  config.py come from the checkout).
- generated: `mscodegen import-mindcv` on the same small recipe, `mscodegen new`, then each variant,
  unedited, run by `mscodegen record` with --max-steps. The JPEGs are 4:2:0 (PIL's default), on which
  a decode of the crop only (mindcv's `decode=False` + `RandomCropDecodeResize`, which import-mindcv
  writes too) differs from a whole decode + `RandomResizedCrop` at the crop's edge columns.

Prints one row per step (the losses as float32 bits) and, per column, the first step that differs from
mindcv and the largest difference. Exit 0 if both generated scripts equal mindcv bit for bit at every
step (what docs/from-mindcv.md states), 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[2]
OVERRIDES = {"distribute": False, "batch_size": 8, "num_parallel_workers": 2}
MINDCV_RUNNER = '''\
"""Run mindcv's train.py main() with StateMonitor replaced by a per-step loss printer."""
import sys

import mindspore as ms
import numpy as np
from mindspore.train import Callback

checkout, steps, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sys.path.append(checkout)  # train.py and config.py; the installed mindcv package comes first
sys.argv = ["train.py"] + sys.argv[4:]
if threads:  # what the generated scripts do with runtime.cpu_threads
    ms.device_context.cpu.op_tuning.threads_num(threads)
import mindcv  # noqa: E402
import train  # noqa: E402

print("mindcv", mindcv.__version__, mindcv.__file__, flush=True)


class StepLosses(Callback):
    def __init__(self, *args, **kwargs):
        self.count = 0

    def on_train_step_end(self, run_context):
        out = run_context.original_args().net_outputs
        loss = out[0] if isinstance(out, (tuple, list)) else out
        self.count += 1
        bits = np.float32(loss.asnumpy().reshape(())).view(np.uint32)
        print(f"STEP {self.count} {int(bits):08x}", flush=True)
        if self.count >= steps:
            run_context.request_stop()


train.StateMonitor = StepLosses
train.main()
'''


def run(command: list[str], cwd: Path) -> str:
    env = dict(os.environ, ONEDNN_MAX_CPU_ISA=os.environ.get("ONEDNN_MAX_CPU_ISA", "AVX2"))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode not in (0, 1) or (done.returncode == 1 and "import-mindcv" not in command):
        sys.exit(f"error: {' '.join(command)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return done.stdout


def write_data(work: Path) -> Path:
    data = work / "data"
    maker = str(ROOT / "examples" / "make_imagefolder.py")
    for split, count, seed in (("train", 160, 0), ("val", 16, 1)):
        args = ["--count", str(count), "--size", "80", "--classes", "4", "--seed", str(seed)]
        run([sys.executable, maker, str(data / split), *args], work)
    return data


def mindcv_losses(checkout: Path, recipe: Path, steps: int, threads: int, work: Path) -> list[int]:
    runner = work / "run_mindcv.py"
    runner.write_text(MINDCV_RUNNER)
    start = time.monotonic()
    out = run([sys.executable, str(runner), str(checkout), str(steps), str(threads), "-c", str(recipe)], work)
    print(f"{out.splitlines()[0]}: {time.monotonic() - start:.0f} s", flush=True)
    return [int(line.split()[2], 16) for line in out.splitlines() if line.startswith("STEP ")]


def recorded_losses(script: Path, steps: int, work: Path) -> list[int]:
    logs = work / f"logs-{script.stem}"
    args = ["--max-steps", str(steps), "--output-dir", str(work / f"out-{script.stem}")]
    start = time.monotonic()
    run([sys.executable, "-m", "mscodegen", "record", str(script), "--logs", str(logs), "--", *args], work)
    print(f"{script.name}: {time.monotonic() - start:.0f} s", flush=True)
    rows = [json.loads(line) for line in (logs / "loss.jsonl").read_text().splitlines()]
    return [int(np.float32(row["loss"]).view(np.uint32)) for row in rows]


def as_float(bits: int) -> float:
    return float(np.uint32(bits).view(np.float32))


def compare(
    checkout: Path, recipe_path: Path, steps: int, work: Path, *, image_resize: int = 64, cpu_threads: int = 1
) -> dict[str, list[int]]:
    """Each run's per-step losses as float32 bits: mindcv, train_model, train_native."""
    recipe = yaml.safe_load(recipe_path.read_text())
    data = write_data(work)
    recipe.update(
        OVERRIDES, data_dir=str(data), ckpt_save_dir=str(work / "ckpt-mindcv"), image_resize=image_resize
    )
    small = work / "recipe_small.yaml"
    small.write_text(yaml.safe_dump(recipe, sort_keys=False))
    config = work / "config.yaml"
    run([sys.executable, "-m", "mscodegen", "import-mindcv", str(small), "-o", str(config)], work)
    workers = yaml.safe_load(config.read_text())["data"]["train"]["num_workers"]
    if workers != recipe["num_parallel_workers"]:  # Python ops: one worker, on mindcv's side too
        print(f"num_parallel_workers {workers} on both sides, as import-mindcv writes it", flush=True)
        recipe["num_parallel_workers"] = workers
        small.write_text(yaml.safe_dump(recipe, sort_keys=False))
    threads = ["--set", f"runtime.cpu_threads={cpu_threads}"] if cpu_threads else []
    run([sys.executable, "-m", "mscodegen", "new", str(config), "--out", str(work / "gen"), *threads], work)
    columns = {"mindcv": mindcv_losses(checkout, small, steps, cpu_threads, work)}
    for variant in ("train_model", "train_native"):
        columns[variant] = recorded_losses(work / "gen" / f"{variant}.py", steps, work)
    return columns


def report(columns: dict[str, list[int]], steps: int) -> bool:
    """Print the table and each run against its mindcv run; True if they are as the docs state."""
    names = list(columns)
    print("step  " + "  ".join(f"{name:>24}" for name in names))
    for step in range(steps):
        bits = [losses[step] if step < len(losses) else None for losses in columns.values()]
        cells = ["-" if b is None else f"{as_float(b):.9g} ({b:08x})" for b in bits]
        print(f"{step + 1:>4}  " + "  ".join(f"{cell:>24}" for cell in cells))
    for name in names[1:]:
        losses, reference = columns[name], columns["mindcv"]
        pairs = list(zip(reference, losses, strict=False))
        differ = [i for i, (a, b) in enumerate(pairs) if a != b]
        if not differ and len(pairs) == steps:
            print(f"{name}: equal to mindcv bit for bit at all {steps} steps")
            continue
        first = differ[0] if differ else len(pairs)
        gaps = [abs(as_float(a) - as_float(b)) for a, b in pairs]
        print(
            f"{name}: first differs from mindcv at step {first + 1}, {steps - len(pairs) + len(differ)} "
            f"of {steps} steps differ (or are missing), largest difference {max(gaps, default=0.0):.6g}"
        )
    return (
        len(columns["mindcv"]) == steps
        and columns["train_model"] == columns["train_native"] == columns["mindcv"]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mindcv", type=Path, help="a mindcv checkout (train.py, config.py, configs/)")
    parser.add_argument("--recipe", default="configs/resnet/resnet_18_ascend.yaml", help="under the checkout")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument(
        "--image-resize", type=int, default=64, help="image_resize on both sides (224 for convit)"
    )
    parser.add_argument(
        "--cpu-threads", type=int, default=1, help="MindSpore's CPU op threads on both sides (0: its default)"
    )
    parser.add_argument("--work", type=Path, help="keep the data, configs, scripts and logs here")
    args = parser.parse_args(argv)
    checkout = args.mindcv.resolve()
    if not (checkout / "train.py").is_file() or not (checkout / args.recipe).is_file():
        parser.error(f"{checkout} has no train.py or no {args.recipe}: give a mindcv checkout")
    with tempfile.TemporaryDirectory(prefix="mindcv-compare-") as temp:
        work = args.work.resolve() if args.work is not None else Path(temp)
        work.mkdir(parents=True, exist_ok=True)
        options = {"image_resize": args.image_resize, "cpu_threads": args.cpu_threads}
        columns = compare(checkout, checkout / args.recipe, args.steps, work, **options)
    return 0 if report(columns, args.steps) else 1


if __name__ == "__main__":
    sys.exit(main())
