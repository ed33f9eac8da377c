"""Data factory for examples/diabetes.yaml: scikit-learn's bundled diabetes data (442 patients, 10 features,
no download) as a MindSpore dataset of (features, target) rows.

The columns keep the names the scripts feed the network and the loss (`image`, `label`); the features are
already centred and scaled by scikit-learn, the target (disease progression after one year) is
standardised here so that MSELoss starts near 1.
"""

import mindspore.dataset as ds
import numpy as np
from sklearn.datasets import load_diabetes


def diabetes(split, test_fraction=0.2):
    """The first 1 - test_fraction of the rows for split "train", the rest for "test"; in file order."""
    features, target = load_diabetes(return_X_y=True)
    features = features.astype(np.float32).reshape(-1, 1, 1, 10)  # [C, H, W] = [1, 1, 10] per row
    target = ((target - target.mean()) / target.std()).astype(np.float32).reshape(-1, 1)
    num_train = len(target) - int(len(target) * test_fraction)
    rows = slice(0, num_train) if split == "train" else slice(num_train, None)
    return ds.NumpySlicesDataset(
        {"image": features[rows], "label": target[rows]}, shuffle=False, num_parallel_workers=1
    )
