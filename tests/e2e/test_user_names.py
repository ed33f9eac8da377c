"""User objects named like the scripts' own (issue 32): a dataset factory `shapes` (a local of
predict.py's main) and a network class `MLP` (the builtin network's class) validate, are imported under
another name, and both variants train them identically."""

from __future__ import annotations

from pathlib import Path

import pytest

from mscodegen.config.load import load_config
from mscodegen.output.generate import generate

from conftest import assert_identical, run_both

PARTS = """\
import numpy as np
from mindspore import dataset as ds
from mindspore import nn


def shapes(count=24):
    rng = np.random.default_rng(5)
    columns = {
        "image": rng.standard_normal((count, 1, 4, 4)).astype(np.float32),
        "label": rng.integers(0, 4, size=count).astype(np.int32),
    }
    return ds.NumpySlicesDataset(columns, shuffle=False)


class MLP(nn.Cell):
    def __init__(self, num_classes=4):
        super().__init__()
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(16, num_classes)

    def construct(self, image):
        return self.fc(self.flatten(image))
"""

CONFIG = """\
network: {kind: import, factory: 'parts:MLP'}
data:
  train: {kind: import, factory: 'parts:shapes', batch_size: 8}
  eval: {kind: import, factory: 'parts:shapes', batch_size: 8, shuffle: false}
optimizer: {name: momentum, lr: 0.05}
train: {epochs: 2, log_every_steps: 1}
"""


@pytest.mark.slow
def test_a_factory_shapes_and_a_network_mlp_train_identically(tmp_path: Path) -> None:
    (tmp_path / "parts.py").write_text(PARTS)
    config = tmp_path / "cfg.yaml"
    config.write_text(CONFIG)
    texts = generate(load_config(config), tmp_path / "out")  # load_config: what `validate` checks
    for script in ("train_model.py", "train_native.py"):
        assert "from parts import shapes as user_shapes\n" in texts[script]
        assert "from parts import MLP as UserMLP\n" in texts[script]
    model, native = run_both(config, tmp_path / "run", steps=4)
    assert_identical(model, native, steps=4)
