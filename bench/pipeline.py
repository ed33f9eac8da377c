"""The input-pipeline row: samples/s of a train pipeline alone (no network), three ways, on one ImageFolder.

    python -m bench.pipeline [--images DIR] [--rounds 5] [--workers 1 2] [--batches 40] [--out JSON]

* **generated**: the `create_train_dataset()` of the train_native.py that `mscodegen new` writes for
  `CONFIG` below, what `import-mindcv` makes of mindcv's ImageNet recipe: ImageFolderDataset(decode=False),
  RandomCropDecodeResize(224), flip, mindcv's own `rand_augment_transform("randaug-m9-mstd0.5-inc1")`,
  Normalize, HWC2CHW, RandomErasing(0.25).
  `validate` allows only `num_workers: 1` with RandomErasing (a Python op: with more threads its masks
  depend on the thread schedule), so the 2-worker column runs the script edited to 2 workers, as a user
  who gives up that reproducibility would.
* **mindcv**: mindcv's own `create_dataset` + `create_transforms("imagenet", auto_augment=...,
  re_prob=0.25)` + `create_loader`, same batch and worker count (its default python_multiprocessing=False).
* **decode**: ImageFolderDataset(decode=True) + Resize(224, 224) + HWC2CHW, batched: the limit any
  augmentation pipeline on this folder can reach.

Each measurement is a fresh process (MindSpore's dataset threads and caches start cold alike); it skips
WARMUP batches, then times `--batches` batches. The kinds run interleaved, the order reversed every other
round, so that a drift of the machine cannot favour one. The 1-minute load average is recorded before
each run. Ratios are taken within a round and summarised like the times (bench/stats.py: median,
bootstrap 95 % interval, and the verdict against the target generated >= mindcv).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.stats import summarize

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_IMAGES = ROOT / "runs" / "bench-imagefolder"
BATCH = 32
WARMUP = 3
KINDS = ("generated", "mindcv", "decode")
# mindcv's ImageNet training recipe (randaug-m9-mstd0.5-inc1, re_prob 0.25) as `import-mindcv` writes it
CONFIG = """\
runtime: {{mode: graph, seed: 1}}
network: {{kind: mindcv, name: resnet18, num_classes: 10}}
data:
  train:
    kind: image_folder
    path: {images}
    decode: false
    batch_size: {batch}
    shuffle: true
    drop_remainder: true
    num_workers: 1
    transforms:
      image:
        - RandomCropDecodeResize: {{size: 224, scale: [0.08, 1.0], ratio: [0.75, 1.333], interpolation: BILINEAR}}
        - RandomHorizontalFlip: {{prob: 0.5}}
        - mindcv.auto_augment:
            {{policy: randaug-m9-mstd0.5-inc1, translate_const: 100, img_mean: [124, 116, 104], interpolation: BILINEAR}}
        - Normalize: {{mean: [123.675, 116.28, 103.53], std: [58.395, 57.12, 57.375]}}
        - HWC2CHW: {{}}
        - RandomErasing: {{prob: 0.25, scale: [0.02, 0.33], ratio: [0.3, 3.3], value: 0, max_attempts: 10}}
      label:
        - TypeCast: {{data_type: int32}}
optimizer: {{name: momentum, lr: 0.1, momentum: 0.9}}
train: {{epochs: 1}}
"""


def generate(images: Path, out: Path) -> Path:
    """train_native.py for CONFIG, written by the mscodegen of this checkout."""
    config = out / "pipeline.yaml"
    config.write_text(CONFIG.format(images=images.resolve().as_posix(), batch=BATCH))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mscodegen",
            "new",
            str(config),
            "--out",
            str(out / "scripts"),
            "--variant",
            "native",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        sys.exit(f"mscodegen new failed:\n{proc.stdout}{proc.stderr}")
    return out / "scripts" / "train_native.py"


def with_workers(script: Path, workers: int) -> Path:
    """The script, edited to `workers` threads per map (the user's edit; 1 is the script as generated)."""
    if workers == 1:
        return script
    edited = script.with_name(f"train_native_w{workers}.py")
    text = script.read_text()
    assert "num_parallel_workers=1" in text, "the generated pipeline no longer names its workers"
    edited.write_text(text.replace("num_parallel_workers=1", f"num_parallel_workers={workers}"))
    return edited


# --- one measurement, in its own process -------------------------------------------------------------


def build(kind: str, workers: int, images: Path, script: Path):  # noqa: ANN201
    from mindspore import dataset as ds

    if kind == "generated":
        spec = importlib.util.spec_from_file_location(script.stem, script)
        sys.path.insert(0, os.path.dirname(spec.origin))  # checkpoints.py beside it
        sys.modules.pop("checkpoints", None)  # another script's
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.create_train_dataset()
    if kind == "mindcv":
        from mindcv.data import create_dataset, create_loader, create_transforms

        dataset = create_dataset(root=str(images), split="", shuffle=True, num_parallel_workers=workers)
        transform = create_transforms(
            dataset_name="imagenet",
            image_resize=224,
            is_training=True,
            auto_augment="randaug-m9-mstd0.5-inc1",
            re_prob=0.25,
        )
        return create_loader(
            dataset,
            batch_size=BATCH,
            drop_remainder=True,
            is_training=True,
            transform=transform,
            num_parallel_workers=workers,
        )
    from mindspore.dataset import transforms, vision

    dataset = ds.ImageFolderDataset(str(images), decode=True, shuffle=True, num_parallel_workers=workers)
    dataset = dataset.map(
        [vision.Resize((224, 224)), vision.HWC2CHW()], "image", num_parallel_workers=workers
    )
    dataset = dataset.map(transforms.TypeCast(ms_int32()), "label", num_parallel_workers=workers)
    return dataset.batch(BATCH, drop_remainder=True)


def ms_int32():  # noqa: ANN201
    import mindspore as ms

    return ms.int32


def measure(kind: str, workers: int, images: Path, script: Path, batches: int) -> dict:
    dataset = build(kind, workers, images, script)
    iterator = dataset.create_tuple_iterator(num_epochs=1, output_numpy=True)
    for _ in range(WARMUP):
        next(iterator)
    start = time.perf_counter()
    for _ in range(batches):
        image, _label = next(iterator)
    seconds = time.perf_counter() - start
    assert image.shape == (BATCH, 3, 224, 224), image.shape
    return {"kind": kind, "workers": workers, "samples": batches * BATCH, "seconds": seconds}


# --- the row -----------------------------------------------------------------------------------------


def plan(workers: list[int], rounds: int) -> list[list[tuple[str, int]]]:
    """Each round's runs: every kind at every worker count, the order reversed every other round."""
    runs = [(kind, w) for w in workers for kind in KINDS]
    return [runs if r % 2 == 0 else runs[::-1] for r in range(rounds)]


def summarise(results: list[dict], workers: list[int]) -> dict:
    """samples/s per kind and worker count; per-round ratios generated/mindcv and generated/decode."""
    out: dict = {}
    for w in workers:
        rate = {
            kind: [r["samples"] / r["seconds"] for r in results if r["kind"] == kind and r["workers"] == w]
            for kind in KINDS
        }
        out[str(w)] = {
            **{kind: summarize(values) for kind, values in rate.items()},
            "generated/mindcv": summarize(
                [g / m for g, m in zip(rate["generated"], rate["mindcv"], strict=True)], target=1.0
            ),
            "generated/decode": summarize(
                [g / d for g, d in zip(rate["generated"], rate["decode"], strict=True)]
            ),
        }
    return out


def table(summary: dict) -> str:
    def cell(s: dict) -> str:
        lo, hi = s["ci95"]
        return f"{s['median']:.1f} [{lo:.1f}, {hi:.1f}]"

    def ratio(s: dict) -> str:
        lo, hi = s["ci95"]
        verdict = f" {s['verdict']} (>= {s['target']:g})" if "verdict" in s else ""
        return f"{s['median']:.3f} [{lo:.3f}, {hi:.3f}]{verdict}"

    lines = [
        "workers  samples/s: generated | mindcv | decode-only   generated/mindcv   generated/decode-only"
    ]
    for w, row in summary.items():
        lines.append(
            f"{w:>7}  {cell(row['generated'])} | {cell(row['mindcv'])} | {cell(row['decode'])}   "
            f"{ratio(row['generated/mindcv'])}   {ratio(row['generated/decode'])}"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--images", type=Path, default=DEFAULT_IMAGES, help="an ImageFolder (written if missing)"
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--batches", type=int, default=40, help=f"timed batches of {BATCH} per run")
    parser.add_argument("--out", type=Path, help="write the runs and the summary as JSON")
    parser.add_argument(
        "--child", nargs=4, metavar=("KIND", "WORKERS", "SCRIPT", "OUT"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.child:
        kind, workers, script, out = args.child
        result = measure(kind, int(workers), args.images, Path(script), args.batches)
        Path(out).write_text(json.dumps(result))
        return
    if not args.images.is_dir():
        subprocess.run(
            [sys.executable, str(ROOT / "examples" / "make_imagefolder.py"), str(args.images)], check=True
        )
    started = time.perf_counter()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        script = generate(args.images, Path(tmp))
        scripts = {w: with_workers(script, w) for w in args.workers}
        for r, runs in enumerate(plan(args.workers, args.rounds), 1):
            for kind, w in runs:
                load = os.getloadavg()[0]
                out = Path(tmp) / "result.json"
                child = ["--child", kind, str(w), str(scripts[w]), str(out)]
                common = ["--images", str(args.images), "--batches", str(args.batches)]
                subprocess.run(
                    [sys.executable, "-m", "bench.pipeline", *common, *child], check=True, cwd=ROOT
                )
                result = json.loads(out.read_text()) | {"round": r, "load1": load}
                results.append(result)
                rate = result["samples"] / result["seconds"]
                print(f"round {r} {kind:9} workers {w}: {rate:7.1f} samples/s (load {load:.2f})", flush=True)
    summary = summarise(results, args.workers)
    print(table(summary))
    wall = time.perf_counter() - started
    print(f"{args.rounds} rounds, {len(results)} runs, {wall:.0f} s")
    if args.out:
        import mindspore

        meta = {"date": time.strftime("%Y-%m-%d"), "cpus": os.cpu_count(), "mindspore": mindspore.__version__}
        meta |= {"rounds": args.rounds, "batches": args.batches, "batch": BATCH, "wall_s": round(wall)}
        args.out.write_text(json.dumps({"meta": meta, "summary": summary, "runs": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
