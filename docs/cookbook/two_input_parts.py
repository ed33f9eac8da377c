"""Network and data for two_inputs.yaml: an image and a vector of side features per row.

scikit-learn's bundled 8x8 digits (1,797 real images, no download). The side input is the ink per
pixel row (8 values): another shape and another branch of the network, as a table of metadata beside
an image would be.
"""

import mindspore.dataset as ds
import numpy as np
from mindspore import nn, ops
from sklearn.datasets import load_digits


def digits_and_ink(split, test_fraction=0.2):
    """Rows (image float32 [1, 8, 8], ink float32 [8], label int32); the last test_fraction is "test"."""
    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, np.newaxis]
    ink = images.mean(axis=(1, 3))  # [N, 8]: mean of each pixel row
    labels = digits.target.astype(np.int32)
    num_train = len(labels) - int(len(labels) * test_fraction)
    rows = slice(0, num_train) if split == "train" else slice(num_train, None)
    columns = {"image": images[rows], "ink": ink[rows], "label": labels[rows]}
    return ds.NumpySlicesDataset(columns, shuffle=False, num_parallel_workers=1)


class ImageAndVector(nn.Cell):
    """A dense branch per input, concatenated, then the head: construct(image, ink)."""

    def __init__(self, num_classes=10, hidden=32):
        super().__init__()
        self.flatten = nn.Flatten()
        self.image_fc = nn.Dense(64, hidden)
        self.ink_fc = nn.Dense(8, 8)
        self.relu = nn.ReLU()
        self.head = nn.Dense(hidden + 8, num_classes)

    def construct(self, image, ink):
        x = self.relu(self.image_fc(self.flatten(image)))
        v = self.relu(self.ink_fc(ink))
        return self.head(ops.concat((x, v), axis=1))
