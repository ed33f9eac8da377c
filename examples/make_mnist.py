"""Write scikit-learn's 8x8 digits as an MNIST-format directory (the four idx ubyte files of ds.MnistDataset).

    python examples/make_mnist.py [OUT_DIR] [--train N] [--test N]

Each 8x8 image (grey levels 0-16) is scaled to 0-255 and upscaled to 28x28 (bilinear), like MNIST's
size and range; labels are the digits. The first N images form the train files, the next N the t10k test
files. examples/data/mnist/ (read by examples/mnist_quickstart.yaml) was made with the defaults, 320 and
96, kept small for the repository; --train 1500 --test 297 uses all 1,797 images.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from PIL import Image
from sklearn.datasets import load_digits

IMAGE_MAGIC = 0x00000803  # idx3: unsigned bytes, 3 dimensions
LABEL_MAGIC = 0x00000801  # idx1: unsigned bytes, 1 dimension


def _write_idx(path: Path, magic: int, array: np.ndarray) -> None:
    header = magic.to_bytes(4, "big") + b"".join(int(n).to_bytes(4, "big") for n in array.shape)
    path.write_bytes(header + np.ascontiguousarray(array, dtype=np.uint8).tobytes())


def write_mnist(out: Path, train: int = 320, test: int = 96) -> Path:
    digits = load_digits()
    grey = np.round(digits.images * 255 / 16).astype(np.uint8)
    images = np.stack([np.asarray(Image.fromarray(g).resize((28, 28), Image.BILINEAR)) for g in grey])
    labels = digits.target.astype(np.uint8)
    out.mkdir(parents=True, exist_ok=True)
    if train + test > len(images):
        raise SystemExit(f"--train + --test must be at most {len(images)}")
    for prefix, part in (("train", slice(0, train)), ("t10k", slice(train, train + test))):
        _write_idx(out / f"{prefix}-images-idx3-ubyte", IMAGE_MAGIC, images[part])
        _write_idx(out / f"{prefix}-labels-idx1-ubyte", LABEL_MAGIC, labels[part])
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, default=Path(__file__).parent / "data" / "mnist")
    parser.add_argument("--train", type=int, default=320, help="images in the train files")
    parser.add_argument("--test", type=int, default=96, help="images in the t10k (test) files")
    args = parser.parse_args()
    print(write_mnist(args.out, args.train, args.test))
