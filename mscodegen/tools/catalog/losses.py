"""The losses table (`catalog/data/losses.json`): every `nn.LossBase` subclass `mindspore.nn` exports."""

from __future__ import annotations

import inspect
from typing import Any

import mindspore
from mindspore import nn

from mscodegen.catalog.losses import REFRESH_COMMAND
from mscodegen.tools.catalog.signatures import parameters


def extract() -> dict[str, Any]:
    """Build the table from the installed MindSpore."""
    losses = {}
    for attr in sorted(dir(nn)):
        obj = getattr(nn, attr)
        if inspect.isclass(obj) and issubclass(obj, nn.LossBase) and obj is not nn.LossBase:
            losses[attr] = {"module": obj.__module__, "params": parameters(obj)}
    return {
        "about": f"mindspore.nn losses for loss.kwargs; regenerate with `{REFRESH_COMMAND}`",
        "versions": {"mindspore": mindspore.__version__},
        "losses": losses,
    }
