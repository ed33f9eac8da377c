"""Names of the models mindcv can build, read from a list shipped with mscodegen.

The generator must not import mindcv (it imports MindSpore, ~1 s), so the list is
refreshed from the installed mindcv by running this module:

    python -m mscodegen.tools.catalog mindcv

and a test checks that it still matches `mindcv.models.list_models()`.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path

NAMES_FILE = Path(__file__).parent / "data" / "mindcv_models.txt"


@cache
def mindcv_model_names() -> frozenset[str]:
    """The model names accepted by `mindcv.create_model`."""
    lines = NAMES_FILE.read_text(encoding="utf-8").splitlines()
    return frozenset(line for line in lines if line and not line.startswith("#"))


# model.no_weight_decay() of mindcv 0.3.0's models, by name prefix, where its names are trainable parameters'
# names: mindcv's create_optimizer exempts them from weight decay (weight_decay_filter norm_and_bias).
# crossvit's and swin's name no parameter of the model, so they exempt nothing (checked with mindcv 0.3.0).
NO_WEIGHT_DECAY = {"vit_": ("pos_embed", "cls_token"), "mae_": ("pos_embed", "cls_token")}


def no_weight_decay(name: str) -> tuple[str, ...]:
    """The parameters mindcv's model `name` exempts from weight decay by its no_weight_decay()."""
    return next((names for prefix, names in NO_WEIGHT_DECAY.items() if name.startswith(prefix)), ())


def returns_aux_logits(name: str, kwargs: Mapping[str, object]) -> bool:
    """The model returns (logits, aux_logits, ...) in training (mindcv 0.3.0's sources): inception_v3 always
    builds its auxiliary head, googlenet when given aux_logits: true. In evaluation both return the logits."""
    return name == "inception_v3" or (name == "googlenet" and bool(kwargs.get("aux_logits")))
