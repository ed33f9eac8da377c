"""mindcv's own train.py against the scripts generated from the same recipe, 20 steps on CPU, per-step losses
compared as float32 bits (mscodegen/tools/mindcv_compare.py, docs/from-mindcv.md): resnet_18_ascend, and
ghostnet_050_ascend (mindcv's RandAugment and RandomErasing) with a fixed loss scale, the only kind mindcv's
train.py builds on CPU.

Needs a mindcv checkout (train.py, config.py, configs/), which this repository does not ship and CI does
not have: set MINDCV_REPO=<checkout> to run it (about 1.5 minutes for resnet_18 and 8 for ghostnet_050 on
2 cores), or `make mindcv-compare`.
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
# recipe -> keys changed for CPU (mindcv's train.py refuses a dynamic loss scale there)
RECIPES = {
    "configs/resnet/resnet_18_ascend.yaml": {},
    "configs/ghostnet/ghostnet_050_ascend.yaml": {
        "loss_scale_type": "fixed",
        "loss_scale": 1024,
        "drop_overflow_update": False,
    },
}
# The pipeline's Python augmentation draws from the global generators in its thread; in one of two
# runs of ghostnet_050, train_native's batch 16 differed (docs/from-mindcv.md): not reproducible yet.
RACY = "train_native's batch 16 differed in one run of two (docs/from-mindcv.md)"


@pytest.fixture(scope="module", params=list(RECIPES), ids=lambda r: Path(r).stem)
def losses(request, tmp_path_factory):
    checkout = os.environ.get("MINDCV_REPO")
    if not checkout or not (Path(checkout) / "train.py").is_file():
        pytest.skip("set MINDCV_REPO to a mindcv checkout to compare with its train.py")
    checkout_path = Path(checkout).resolve()
    work = tmp_path_factory.mktemp("mindcv")
    recipe = checkout_path / request.param
    if RECIPES[request.param]:
        cpu = yaml.safe_load(recipe.read_text()) | RECIPES[request.param]
        recipe = work / f"{recipe.stem}_cpu.yaml"
        recipe.write_text(yaml.safe_dump(cpu, sort_keys=False))
    return request.param, compare(checkout_path, recipe, STEPS, work)


def test_mindcv_trains_and_its_losses_move(losses):
    # every step ran, and training changed something (a constant loss would make equality trivial)
    mindcv = losses[1]["mindcv"]
    assert len(mindcv) == STEPS
    assert len(set(mindcv)) == STEPS
    assert all(np.isfinite(np.uint32(bits).view(np.float32)) for bits in mindcv)


@pytest.mark.parametrize("variant", ["train_model", "train_native"])
def test_generated_scripts_are_mindcv_bit_for_bit(losses, variant, request):
    # unedited: import-mindcv reads the folder undecoded and crops with RandomCropDecodeResize, as
    # mindcv does (the folder's JPEGs are 4:2:0, where a whole decode would differ at the crop's edges)
    recipe, columns = losses
    if "ghostnet" in recipe:
        request.applymarker(pytest.mark.xfail(reason=RACY, strict=False))
    assert columns[variant] == columns["mindcv"]
