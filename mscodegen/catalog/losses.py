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
import math
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


# The Tensor arguments a config gives as a list of numbers: the script writes ms.Tensor(list, ms.float32).
# Each holds one number per class (the network's num_classes); BCEWithLogitsLoss's broadcast, so one
# number is allowed too.
TENSOR_ARGS: dict[tuple[str, str], bool] = {  # (loss, argument): one number allowed
    ("CrossEntropyLoss", "weight"): False,
    ("NLLLoss", "weight"): False,
    ("FocalLoss", "weight"): False,
    ("BCEWithLogitsLoss", "weight"): True,
    ("BCEWithLogitsLoss", "pos_weight"): True,
}


def tensor_list(name: str, key: str, value: object) -> bool:
    """`value` is what a config writes for a Tensor argument of TENSOR_ARGS: a list of numbers."""
    return (name, key) in TENSOR_ARGS and isinstance(value, list)


def check_loss(name: str, kwargs: Mapping[str, object]) -> list[tuple[str | None, str]]:
    """(the keyword argument at fault, or None; the problem) for `nn.<name>(**kwargs)`."""
    loss = load_table()["losses"].get(name)
    if loss is None:  # the schema lists the names; a name it allows but the table lacks is not checked
        return []
    lists = {key: value for key, value in kwargs.items() if tensor_list(name, key, value)}
    problems = check_kwargs(name, loss["params"], {k: v for k, v in kwargs.items() if k not in lists})
    for key, value in lists.items():
        assert isinstance(value, list)
        numbers = [v for v in value if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if not value or len(numbers) != len(value) or not all(math.isfinite(v) for v in numbers):
            problems.append((key, f"{name}: `{key}` takes a list of numbers, one per class (got {value!r})"))
    return problems
