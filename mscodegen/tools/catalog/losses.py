"""The losses table (`catalog/data/losses.json`): every `nn.LossBase` subclass `mindspore.nn` exports."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mscodegen.catalog.losses import REFRESH_COMMAND
from mscodegen.tools.catalog.signatures import parameters


def extract() -> dict[str, Any]:
    """Build the table from the installed MindSpore."""
    import inspect

    import mindspore
    from mindspore import nn

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


def dumps(table: Mapping[str, Any]) -> str:
    """JSON with one line per parameter, so that a refresh diffs readably."""
    lines = ["{"]
    lines.append(f'  "about": {json.dumps(table["about"])},')
    lines.append(f'  "versions": {json.dumps(table["versions"])},')
    lines.append('  "losses": {')
    names = list(table["losses"])
    for i, name in enumerate(names):
        loss = table["losses"][name]
        lines.append(f'    {json.dumps(name)}: {{"module": {json.dumps(loss["module"])}, "params": [')
        params = [f"      {json.dumps(p, ensure_ascii=False)}" for p in loss["params"]]
        if params:
            lines.append(",\n".join(params))
        lines.append("    ]}" + ("," if i < len(names) - 1 else ""))
    lines += ["  }", "}"]
    return "\n".join(lines) + "\n"
