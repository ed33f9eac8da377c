"""The losses of `mindspore.nn` with their signatures, so that `loss.kwargs` is checked without MindSpore.

`data/losses.json` holds every `nn.LossBase` subclass `mindspore.nn` exports: each `__init__` parameter,
required or its default, and the type its docstring states. `validate` checks a config's `loss.kwargs`
against it (a misspelt `label_smothing` gets `did you mean label_smoothing?`; a string for a number or a
list for a Tensor parameter is refused), as `dataset_ops.json` does for the transform pipelines. The table
is refreshed from the installed MindSpore by

    python -m mscodegen.tools.catalog losses

and a test checks that the shipped table still matches the installed MindSpore.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from mscodegen.catalog.signatures import check_kwargs

TABLE_FILE = Path(__file__).parent / "data" / "losses.json"
REFRESH_COMMAND = "python -m mscodegen.tools.catalog losses"


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
