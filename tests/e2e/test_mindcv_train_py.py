"""mindcv's own train.py against the scripts generated from the same recipe, 20 steps on CPU, per-step
losses compared as float32 bits (mscodegen/tools/mindcv_compare.py, docs/from-mindcv.md), for four
recipes: resnet_18 (momentum), mnasnet_0.75 (rmsprop, dropout), convit_tiny (adamw, mixup/cutmix,
random erasing) and ghostnet_050 (mindcv's RandAugment and RandomErasing; a fixed loss scale, the only
kind mindcv's train.py builds on CPU).

Needs a mindcv checkout (train.py, config.py, configs/), which this repository does not ship and CI does
not have: set MINDCV_REPO=<checkout> to run it (docs/from-mindcv.md gives each recipe's time on 2 cores),
or `make mindcv-compare`.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import yaml

from mscodegen.tools.mindcv_compare import compare

pytestmark = pytest.mark.slow
STEPS = 20
RECIPES = {  # the recipe, the keys changed for CPU, and compare()'s options for it
    "resnet_18": ("configs/resnet/resnet_18_ascend.yaml", {}, {}),
    "mnasnet_0.75": ("configs/mnasnet/mnasnet_0.75_ascend.yaml", {}, {}),
    "convit_tiny": ("configs/convit/convit_tiny_ascend.yaml", {}, {"image_resize": 224}),  # 224 px only
    "ghostnet_050": (
        "configs/ghostnet/ghostnet_050_ascend.yaml",
        {"loss_scale_type": "fixed", "loss_scale": 1024, "drop_overflow_update": False},
        {},
    ),
}


@pytest.fixture(scope="module", params=list(RECIPES))
def losses(request, tmp_path_factory):
    checkout = os.environ.get("MINDCV_REPO")
    if not checkout or not (Path(checkout) / "train.py").is_file():
        pytest.skip("set MINDCV_REPO to a mindcv checkout to compare with its train.py")
    checkout_path = Path(checkout).resolve()
    work = tmp_path_factory.mktemp("mindcv")
    path, edits, options = RECIPES[request.param]
    recipe = checkout_path / path
    if edits:
        edited = yaml.safe_load(recipe.read_text()) | edits
        recipe = work / f"{recipe.stem}_cpu.yaml"
        recipe.write_text(yaml.safe_dump(edited, sort_keys=False))
    return compare(checkout_path, recipe, STEPS, work, **options)


def test_mindcv_trains_and_its_losses_move(losses):
    # every step ran, and training changed something (a constant loss would make equality trivial)
    mindcv = losses["mindcv"]
    assert len(mindcv) == STEPS
    assert len(set(mindcv)) == STEPS
    assert all(np.isfinite(np.uint32(bits).view(np.float32)) for bits in mindcv)


@pytest.mark.parametrize("variant", ["train_model", "train_native"])
def test_generated_scripts_are_mindcv_bit_for_bit(losses, variant):
    # unedited: import-mindcv reads the folder undecoded and crops with RandomCropDecodeResize, as
    # mindcv does (the folder's JPEGs are 4:2:0, where a whole decode would differ at the crop's edges)
    assert losses[variant] == losses["mindcv"]
