"""`mindcv.auto_augment` (issue 34): the scripts call mindcv's own RandAugment/AutoAugment.

- Independent of the generator's cells: the generated `create_train_dataset` and mindcv 0.3.0's
  `create_transforms` (mindcv's code, on a dataset built here) give the same image arrays, to the bit,
  from the same seed, for a RandAugment and an AutoAugment policy; and the policy changed the images.
- Both variants of a config using it with mindcv.Mixup are `==` (two steps).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mscodegen.run.parity import generate_both

from conftest import PROBE_IMPORT, REPO, assert_identical, run_both

pytestmark = pytest.mark.slow
DIGITS = (REPO / "examples" / "data" / "digits_png").as_posix()
POLICIES = ("randaug-m9-mstd0.5-inc1", "autoaug-mstd0.5")
# what import-mindcv writes for image_resize 16, interpolation bicubic, mean 0-255: transforms_imagenet_train
CONFIG = """\
runtime: {{mode: graph, seed: 3}}
network: {{kind: builtin, name: lenet5, num_classes: 10}}
optimizer: {{name: momentum, lr: 0.05}}
train: {{epochs: 1}}
data:
  train:
    kind: image_folder
    path: {path}
    decode: false
    num_samples: 32
    batch_size: 16
    shuffle: false
    transforms:
      image:
        - RandomCropDecodeResize: {{size: 16, scale: [0.5, 1.0], ratio: [0.75, 1.333], interpolation: BICUBIC}}
        - RandomHorizontalFlip: {{prob: 0.5}}
        - mindcv.auto_augment:
            {{policy: {policy}, translate_const: 7, img_mean: [124, 116, 104], interpolation: BICUBIC}}
        - Normalize: {{mean: [123.675, 116.28, 103.53], std: [58.395, 57.12, 57.375]}}
        - HWC2CHW: {{}}
      label:
        - TypeCast: {{data_type: int32}}
"""
MIXUP = """\
    batch_transforms:
      - mindcv.Mixup: {mixup_alpha: 0.2, cutmix_alpha: 1.0, prob: 1.0, switch_prob: 0.5, num_classes: 10}
"""
# Imports the generated script (its main() runs only as __main__) and, separately, builds mindcv's own
# transforms on the same folder; the same seed before each; prints whether every image is equal.
PROBE = (
    PROBE_IMPORT
    + """
import importlib.util, json, os, sys
import mindspore as ms
import numpy as np
from mindspore import dataset as ds
from mindcv.data import create_transforms

data_dir, *pairs = sys.argv[1:]

def load(script):
    return import_script(script)

def images(dataset):
    return [row[0].asnumpy() for row in dataset.create_tuple_iterator(num_epochs=1)]

def mindcv_images(auto_augment):
    tfl = create_transforms(
        "imagenet", image_resize=16, is_training=True, auto_augment=auto_augment, scale=(0.5, 1.0),
        ratio=(0.75, 1.333), hflip=0.5, interpolation="bicubic",
    )
    folder = ds.ImageFolderDataset(data_dir, decode=False, shuffle=False, num_samples=32, num_parallel_workers=1)
    folder = folder.map(tfl, input_columns="image", num_parallel_workers=1)
    return [row[0] for row in folder.batch(16, drop_remainder=True).create_tuple_iterator(output_numpy=True)]

ms.set_seed(3)
plain = mindcv_images(None)  # the same pipeline without a policy (colour jitter off)
found = {}
for script, policy in zip(pairs[::2], pairs[1::2]):
    generated = load(script)
    ms.set_seed(3)
    ours = images(generated.create_train_dataset(generated.DATA_DIR))
    ms.set_seed(3)
    theirs = mindcv_images(policy)
    found[policy] = {
        "batches": [len(ours), len(theirs)],
        "equal": len(ours) == len(theirs) and all(np.array_equal(a, b) for a, b in zip(ours, theirs)),
        "dtype": [str(ours[0].dtype), str(theirs[0].dtype)],
        "changed": sum(int(not np.array_equal(a, b)) for a, b in zip(theirs, plain)),
    }
print(json.dumps(found))
"""
)


def _config(directory: Path, policy: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "auto_augment.yaml"
    path.write_text(CONFIG.format(path=DIGITS, policy=policy), encoding="utf-8")
    return path


def test_generated_augmentation_is_mindcvs_create_transforms(tmp_path):
    args = [DIGITS]
    for policy in POLICIES:
        out = tmp_path / policy
        scripts = generate_both(_config(out, policy), out / "scripts")
        text = scripts["native"].read_text()
        name = "rand_augment_transform" if policy.startswith("randaug") else "auto_augment_transform"
        assert f"from mindcv.data.auto_augment import {name}\n" in text
        assert name not in (out / "scripts" / "predict.py").read_text()  # no training augmentation
        args += [str(scripts["native"]), policy]
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(probe), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "ONEDNN_MAX_CPU_ISA": "AVX2"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    for policy in POLICIES:
        assert found[policy]["batches"] == [2, 2]
        assert found[policy]["dtype"] == ["float32", "float32"]
        assert found[policy]["equal"] is True, policy
        assert found[policy]["changed"] == 2  # the policy changed both batches: the equality is not trivial


def test_both_variants_equal_with_mindcv_rand_augment_and_mixup(tmp_path):
    # with mindcv.Mixup, which draws from numpy's global generator as RandAugment does: the image map runs in
    # a process of its own, else the two maps' threads would take turns at the generator in a varying order
    config = _config(tmp_path, POLICIES[0])
    config.write_text(config.read_text() + MIXUP, encoding="utf-8")
    scripts = generate_both(config, tmp_path / "scripts")
    assert "python_multiprocessing=True" in scripts["native"].read_text()
    model, native = run_both(config, tmp_path, steps=2)
    assert_identical(model, native, steps=2)
