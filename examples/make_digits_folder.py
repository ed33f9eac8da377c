"""Write scikit-learn's 8x8 digits as an ImageFolder (one sub-directory of PNGs per class).

    python examples/make_digits_folder.py [OUT_DIR] [--per-class N]

examples/data/digits_png/ (used by examples/digits_augment.yaml) was made with the defaults: the first
8 images of each class, as 8x8 RGB PNGs (the grey level copied to the three channels).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from PIL import Image
from sklearn.datasets import load_digits


def write_digits_folder(out: Path, per_class: int = 8) -> Path:
    digits = load_digits()
    for label in range(10):
        (out / str(label)).mkdir(parents=True, exist_ok=True)
        indices = np.flatnonzero(digits.target == label)[:per_class]
        for i in indices:
            grey = np.round(digits.images[i] * 255 / 16).astype(np.uint8)
            Image.fromarray(np.stack([grey] * 3, axis=-1)).save(out / str(label) / f"{i:04d}.png")
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, default=Path(__file__).parent / "data" / "digits_png")
    parser.add_argument("--per-class", type=int, default=8)
    args = parser.parse_args()
    print(write_digits_folder(args.out, args.per_class))
