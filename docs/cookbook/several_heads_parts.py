"""Network and data for several_heads.yaml: one image, two labels, a head for each.

scikit-learn's bundled 8x8 digits (1,797 real images, no download). Each row has two label columns: the
digit (a class index, 0-9) and its parity (1.0 for an odd digit, 0.0 for an even one), a second target
derived from the first, as an attribute beside a class would be.
"""

import mindspore.dataset as ds
import numpy as np
from mindspore import nn
from sklearn.datasets import load_digits


def digits_and_parity(split, test_fraction=0.2):
    """Rows (image float32 [1, 8, 8], digit int32, parity float32 [1]); the last test_fraction is "test"."""
    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, np.newaxis]
    digit = digits.target.astype(np.int32)
    parity = (digit % 2).astype(np.float32)[:, np.newaxis]  # [N, 1], as BCEWithLogitsLoss's logit
    num_train = len(digit) - int(len(digit) * test_fraction)
    rows = slice(0, num_train) if split == "train" else slice(num_train, None)
    columns = {"image": images[rows], "digit": digit[rows], "parity": parity[rows]}
    return ds.NumpySlicesDataset(columns, shuffle=False, num_parallel_workers=1)


class DigitAndParity(nn.Cell):
    """A shared trunk and two heads: construct(image) returns (digit logits [N, 10], parity logit [N, 1]),
    in the order of data.labels."""

    def __init__(self, num_classes=10, hidden=32):
        super().__init__()
        self.flatten = nn.Flatten()
        self.trunk = nn.Dense(64, hidden)
        self.relu = nn.ReLU()
        self.digit_head = nn.Dense(hidden, num_classes)
        self.parity_head = nn.Dense(hidden, 1)

    def construct(self, image):
        features = self.relu(self.trunk(self.flatten(image)))
        return self.digit_head(features), self.parity_head(features)
