"""Write an ImageFolder of JPEGs for the input-pipeline benchmark (`python -m bench.pipeline`).

    python examples/make_imagefolder.py OUT_DIR [--count 2000] [--size 224] [--classes 10]

OUT_DIR/class_00/00000.jpg ...: `count` RGB images of `size` x `size` pixels spread over `classes`
folders, JPEG quality 90, about 15 KB each at 224 px (2,000 of them: about 30 MB, 10 s on one core).
Each image is a smooth colour gradient with a few filled ellipses and rectangles and a little noise,
so that the JPEG decoder and the crops see structure rather than flat colour or pure noise. The same
arguments always write the same files (numpy seeded with --seed). Existing files are overwritten.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw


def image(rng: np.random.Generator, size: int) -> Image.Image:
    y, x = np.mgrid[0:size, 0:size] / size
    start, end = rng.integers(0, 256, 3), rng.integers(0, 256, 3)
    t = (x * rng.uniform(0.2, 1.0) + y * rng.uniform(0.2, 1.0))[..., None] / 2
    pixels = start + (end - start) * t + rng.normal(0, 8, (size, size, 3))
    picture = Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))
    draw = ImageDraw.Draw(picture)
    for _ in range(int(rng.integers(3, 8))):
        x0, y0 = rng.integers(0, size, 2)
        w, h = rng.integers(size // 10, size // 2, 2)
        fill = tuple(int(v) for v in rng.integers(0, 256, 3))
        shape = draw.ellipse if rng.random() < 0.5 else draw.rectangle
        shape([int(x0), int(y0), int(x0 + w), int(y0 + h)], fill=fill)
    return picture


def write(out: Path, count: int, size: int, classes: int, seed: int) -> list[Path]:
    rng = np.random.default_rng(seed)
    paths = []
    for i in range(count):
        folder = out / f"class_{i % classes:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{i:05d}.jpg"
        image(rng, size).save(path, quality=90)
        paths.append(path)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the folder to write (class_NN/ subfolders)")
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if min(args.count, args.size, args.classes) < 1:
        parser.error("--count, --size and --classes take 1 or more")
    paths = write(args.out, args.count, args.size, args.classes, args.seed)
    print(f"wrote {len(paths)} JPEGs of {args.size}x{args.size} in {args.classes} folders under {args.out}")


if __name__ == "__main__":
    main()
