"""Network, data and loss for examples/two_input.yaml: a network with two inputs, an 8x8 digit image and
a feature vector computed from it, over a three-column dataset (image, features, label).

scikit-learn's bundled digits (1,797 real images, no download). The features are the mean ink of the
image's four quadrants: a second input of another shape, as a tabular side input would be.
"""

import mindspore.dataset as ds
import numpy as np
from mindspore import nn, ops
from sklearn.datasets import load_digits


def digits_with_features(split, test_fraction=0.2):
    """Rows (image [1, 8, 8] in [0, 1], features [4], label int32); the last test_fraction is "test"."""
    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, np.newaxis]
    quadrants = images.reshape(-1, 2, 4, 2, 4).mean(axis=(2, 4))  # [N, 2, 2]: mean ink per quadrant
    features = quadrants.reshape(-1, 4).astype(np.float32)
    labels = digits.target.astype(np.int32)
    num_train = len(labels) - int(len(labels) * test_fraction)
    rows = slice(0, num_train) if split == "train" else slice(num_train, None)
    columns = {"image": images[rows], "features": features[rows], "label": labels[rows]}
    return ds.NumpySlicesDataset(columns, shuffle=False, num_parallel_workers=1)


class ImageFeatureNet(nn.Cell):
    """Two branches, concatenated: dense layers over the flattened image, one over the features."""

    def __init__(self, num_classes=10, hidden=32):
        super().__init__()
        self.flatten = nn.Flatten()
        self.image_fc = nn.Dense(64, hidden)
        self.features_fc = nn.Dense(4, 8)
        self.relu = nn.ReLU()
        self.head = nn.Dense(hidden + 8, num_classes)

    def construct(self, image, features):
        x = self.relu(self.image_fc(self.flatten(image)))
        f = self.relu(self.features_fc(features))
        return self.head(ops.concat((x, f), axis=1))


def smoothed_cross_entropy(smoothing=0.0):
    """Cross entropy over class indices with label smoothing (called as loss(logits, label))."""
    return nn.CrossEntropyLoss(label_smoothing=smoothing)
