"""Data factories for the cookbook's table recipes: rows of numeric features and a target.

`csv_table` reads a CSV file with a header row (regression_table.yaml, early_stopping.yaml);
`breast_cancer` is scikit-learn's bundled breast cancer table (binary_classification.yaml). Both split the
rows in file order (the last `test_fraction` is "test") and standardise every feature with the training
rows' mean and standard deviation, so both splits are scaled alike.
"""

import csv
from pathlib import Path

import mindspore.dataset as ds
import numpy as np
from sklearn.datasets import load_breast_cancer


def csv_table(path, target, split, test_fraction=0.2):
    """Rows (features float32 [F], label float32 [1]) of a CSV file; `target` names the label column.

    The target is standardised too (with the training rows' statistics), so that MSELoss starts near 1.
    """
    with open(Path(__file__).parent / path, newline="") as file:
        rows = list(csv.reader(file))
    header, values = rows[0], np.array(rows[1:], dtype=np.float64)
    label = values[:, [header.index(target)]]
    features = np.delete(values, header.index(target), axis=1)
    return _split(features, label, np.float32, split, test_fraction, scale_label=True)


def breast_cancer(split, test_fraction=0.2):
    """Rows (features float32 [30], label int32: 1 benign, 0 malignant) of 569 tumours."""
    features, label = load_breast_cancer(return_X_y=True)
    return _split(features, label, np.int32, split, test_fraction, scale_label=False)


def _split(features, label, label_dtype, split, test_fraction, scale_label):
    num_train = len(label) - int(len(label) * test_fraction)
    train = slice(0, num_train)
    features = (features - features[train].mean(axis=0)) / features[train].std(axis=0)
    if scale_label:
        label = (label - label[train].mean()) / label[train].std()
    rows = train if split == "train" else slice(num_train, None)
    columns = {"features": features[rows].astype(np.float32), "label": label[rows].astype(label_dtype)}
    return ds.NumpySlicesDataset(columns, shuffle=False, num_parallel_workers=1)
