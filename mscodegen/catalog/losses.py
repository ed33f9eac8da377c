"""The losses of `mindspore.nn` with their signatures, so that `loss.kwargs` is checked without MindSpore.

`data/losses.json` holds every `nn.LossBase` subclass `mindspore.nn` exports: each `__init__` parameter,
required or its default, and the type its docstring states. `validate` checks a config's `loss.kwargs`
against it (a misspelt `label_smothing` gets `did you mean label_smoothing?`; a string for a number or a
list for a Tensor parameter is refused), as `dataset_ops.json` does for the transform pipelines. The table
is refreshed from the installed MindSpore by

    python -m mscodegen.catalog.losses

and a test checks that the shipped table still matches the installed MindSpore.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from mscodegen.catalog.signatures import check_kwargs, parameters

TABLE_FILE = Path(__file__).parent / "data" / "losses.json"
REFRESH_COMMAND = "python -m mscodegen.catalog.losses"


@cache
def load_table() -> dict[str, Any]:
    """The shipped table: {"about", "versions", "losses": {name: {"module", "params"}}}."""
    table: dict[str, Any] = json.loads(TABLE_FILE.read_text(encoding="utf-8"))
    return table


def check_loss(name: str, kwargs: Mapping[str, object]) -> list[tuple[str | None, str]]:
    """(the keyword argument at fault, or None; the problem) for `nn.<name>(**kwargs)`."""
    loss = load_table()["losses"].get(name)
    if loss is None:  # the schema lists the names; a name it allows but the table lacks is not checked
        return []
    return check_kwargs(name, loss["params"], kwargs)


# ---- refresh: the only code that imports MindSpore ------------------------------------------------------


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


if __name__ == "__main__":
    text = dumps(extract())
    if "--print" in sys.argv[1:]:
        sys.stdout.write(text)
    else:
        TABLE_FILE.write_text(text, encoding="utf-8")
        print(f"wrote {len(json.loads(text)['losses'])} losses to {TABLE_FILE}")
