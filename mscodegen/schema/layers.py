"""optimizer.layer_decay: which parameters form layer 0, 1, ... of the networks where layers are defined.

Layer ids count from the input side. Every layer but the last is a list of fnmatch patterns over parameter
names; the last layer is every parameter that no earlier pattern matches (the head and whatever follows the
last block), so a network's parameters are always all covered.

- builtin lenet5: conv1, conv2, fc1, fc2, ... (the last fc is the last layer);
- builtin mlp: fc1, fc2, ... (the last fc is the last layer);
- mindcv vit_b_* (12 blocks) and vit_l_* (24 blocks): layer 0 is cls_token, pos_embed and patch_embed.*,
  layer i + 1 is blocks.i.*, the last layer (13 or 25) is norm.* and head.* -- the BEiT/MAE convention.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mscodegen.schema.network import BuiltinNetwork, MindcvNetwork

VIT_DEPTHS = {"b": 12, "l": 24}  # mindcv vit_{b,l}_*: transformer blocks (blocks.0 ... blocks.depth-1)


@dataclass(frozen=True, slots=True)
class Layer:
    what: str  # for comments: "conv1", "blocks.3"
    patterns: tuple[str, ...]  # () for the last layer: every other parameter


def layers_of(network: object) -> tuple[Layer, ...] | None:
    """The layers of `network` in input-to-output order, or None where layer ids are not defined."""
    if isinstance(network, BuiltinNetwork):
        names = ["conv1", "conv2"] if network.name == "lenet5" else []
        names += [f"fc{i + 1}" for i in range(len(network.hidden) + 1)]
        *inner, last = names
        return (*(Layer(n, (f"{n}.*",)) for n in inner), Layer(last, ()))
    if isinstance(network, MindcvNetwork):
        match = re.fullmatch(r"vit_([bl])_\d+_\d+", network.name)
        if match is None:
            return None
        depth = VIT_DEPTHS[match.group(1)]
        first = Layer("cls_token, pos_embed, patch_embed", ("cls_token", "pos_embed", "patch_embed.*"))
        blocks = tuple(Layer(f"blocks.{i}", (f"blocks.{i}.*",)) for i in range(depth))
        return (first, *blocks, Layer("norm, head", ()))
    return None
