"""Network and data for sequences.yaml: a recurrent classifier over sequences of feature vectors.

Each of scikit-learn's bundled 8x8 digits (1,797 real images, no download) is read as a sequence of its
8 pixel rows, top to bottom: 8 time steps of 8 values in [0, 1]. An nn.LSTM reads the rows and an
nn.Dense classifies its output at the last step. Any [steps, features] series fits the same way.
"""

import mindspore.dataset as ds
import numpy as np
from mindspore import nn
from sklearn.datasets import load_digits


def digit_rows(split, test_fraction=0.2):
    """Rows (rows float32 [8 steps, 8 features], label int32); the last test_fraction is "test"."""
    digits = load_digits()
    sequences = (digits.images / 16.0).astype(np.float32)
    labels = digits.target.astype(np.int32)
    num_train = len(labels) - int(len(labels) * test_fraction)
    rows = slice(0, num_train) if split == "train" else slice(num_train, None)
    columns = {"rows": sequences[rows], "label": labels[rows]}
    return ds.NumpySlicesDataset(columns, shuffle=False, num_parallel_workers=1)


class RowLSTM(nn.Cell):
    """One-layer nn.LSTM over the time steps (batch first), nn.Dense on the last step's output."""

    def __init__(self, features=8, hidden=32, num_classes=10):
        super().__init__()
        self.lstm = nn.LSTM(features, hidden, num_layers=1, batch_first=True)
        self.head = nn.Dense(hidden, num_classes)

    def construct(self, rows):
        output, _ = self.lstm(rows)
        return self.head(output[:, -1, :])
