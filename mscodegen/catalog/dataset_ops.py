"""The MindSpore dataset ops a config's transform pipelines may name, with their signatures.

A pipeline is an ordered list of `{OpName: {kwargs}}` entries (MMPretrain style). `check_op` and
`check_pipeline` validate names and keyword arguments against a table shipped with mscodegen,
`data/dataset_ops.json`, because the generator and `mscodegen validate` must not import MindSpore
(`import mindspore` costs about a second). The table is refreshed by hand from the installed packages:

    python -m mscodegen.tools.catalog ops

which introspects every public transform class of `mindspore.dataset.vision`, `.transforms` and `.text`
(classes defined in their `transforms` submodules, enums excluded) plus mindcv's `Mixup` (keyed
`mindcv.Mixup`). For each op it records the input taken (`image`, `image+bbox`, `batch`, `text`, `video` or
`any`), whether it runs in C++, Python or both, and each `__init__` parameter: required or its default,
the type its docstring states, and what a config can give for it (`literal`, `path`, `dtype`,
`enum:<Name>`, `array`, `ops` or `object`). An op with a required `object` parameter (the text ops that
need a `Vocab` or `Vectors`, `PythonTokenizer`) cannot be built from a config. A test checks that the
table still matches the installed MindSpore.

Facts checked on MindSpore 2.10.0 / mindcv 0.3.0 (CPU, 2 cores), for whoever wires pipelines into the plan:

- Batch-level mixing runs after `batch()` on the `[image, label]` columns. `vision.MixUpBatch(alpha)` and
  `vision.CutMixBatch(ImageBatchFormat.NHWC|NCHW, alpha, prob)` (C++) require one-hot batched labels
  (`transforms.OneHot(num_classes)` before `batch`); integer labels raise "labels must be in one-hot
  format". They keep uint8 images uint8 and return float32 labels. `vision.MixUp(batch_size, alpha)`
  (Python) silently produces wrong labels from integer labels and returns float64. mindcv's
  `Mixup(mixup_alpha, cutmix_alpha, prob, switch_prob, mode, label_smoothing, num_classes)` takes integer
  labels and returns float32 images and smoothed soft one-hot float32 labels; its cutmix slices
  `x[:, :, h, w]`, so images must be NCHW (after `HWC2CHW`); the batch size must be even.
- `RandAugment`, `AutoAugment` and `TrivialAugmentWide` need uint8 HWC images with 3 channels (float32:
  "Expecting tensor in type of (uint8)"; CHW: "Expecting tensor in channel of (3)"), so they go before
  `Normalize`/`HWC2CHW`. `RandomErasing` is Python-only and erases as if its input were CHW; on HWC it
  runs without error on the wrong axes, so it goes after `HWC2CHW` (as in mindcv).
- `ms.set_seed(s)` also sets the dataset seed (`ds.config.get_seed() == s`); `ds.config.set_seed(s)` also
  seeds Python's `random` and `numpy.random`. With the same seed two processes produce the same augmented
  images and the same `shuffle` order, provided `num_parallel_workers` is the same: with the same seed,
  1 worker and 2 workers give different augmentations. Python ops that use the global RNGs (mindcv's
  `Mixup`, `RandomErasing`) were reproducible with `num_parallel_workers=1` but not always with 2.
  Without a seed, runs differ although `get_seed()` reports 5489.
- Epochs: one iterator created with `num_epochs=2` gives new augmentations and a new shuffle order in
  epoch 2, reproducibly; a fresh `create_tuple_iterator(num_epochs=1)` per epoch repeats epoch 1 exactly
  (same images, same order). For parity both variants must iterate the same way.
- `shuffle(buffer_size)` draws at random, with the dataset seed, from a buffer of `buffer_size` rows:
  with a buffer of 2, row k comes out at position k-1 or later (checked over three seeds); a buffer as
  large as the dataset mixes it fully. The order is reproducible for a seed and changes with the buffer
  size; `buffer_size` must be at least 2.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from mscodegen.catalog.signatures import string_problem, suggest, value_problem

TABLE_FILE = Path(__file__).parent / "data" / "dataset_ops.json"
REFRESH_COMMAND = "python -m mscodegen.tools.catalog ops"
NESTED_PARAMS = ("transforms", "transform")  # take pipeline entries, whatever their docstring says

Op = dict[str, Any]


@cache
def load_table() -> dict[str, Any]:
    """The shipped table: {"versions": ..., "enums": ..., "ops": {name: op}}."""
    table: dict[str, Any] = json.loads(TABLE_FILE.read_text(encoding="utf-8"))
    return table


def check_op(name: str, kwargs: Mapping[str, object]) -> list[str]:
    """Problems with one pipeline entry `{name: kwargs}`; empty when the table accepts it."""
    ops: dict[str, Op] = load_table()["ops"]
    op = ops.get(name)
    if op is None:
        return [f"unknown dataset op `{name}`{suggest(name, sorted(ops))}"]
    params = {p["name"]: p for p in op["params"]}
    problems = [problem for p in op["params"] if (problem := _param_problem(name, p, kwargs))]
    for key, value in kwargs.items():
        param = params.get(key) if isinstance(key, str) else None
        if param is None:
            hint = suggest(str(key), list(params)) or f" (accepts: {', '.join(params) or 'no arguments'})"
            problems.append(f"{name}: unknown argument `{key}`{hint}")
        elif key in NESTED_PARAMS and param["accepts"] == ["ops"]:
            entries = value if isinstance(value, list) else [value]
            problems += [f"{name}.{key}[{i}]: {msg}" for i, msg in check_pipeline(entries)]
        elif param["accepts"] == ["literal"]:
            problem = string_problem(name, key, param["type"], value)
            if problem is None and (value_text := value_problem(name, key, param["type"], value)):
                problem = f"{name}: `{key}`: {value_text}"
            problems += [problem] if problem else []
    return problems


def _param_problem(name: str, p: dict[str, Any], kwargs: Mapping[str, object]) -> str | None:
    """What a config cannot give parameter `p` of op `name`, or a required one it left out."""
    if p.get("kind") == "var_positional":
        return f"{name} takes its arguments positionally (*{p['name']}), which a keyword form cannot give"
    if p["accepts"] == ["object"] and (p["required"] or p["name"] in kwargs):
        return f"{name} needs a {p['type']} object for `{p['name']}`, which a config cannot give"
    if p["required"] and p["name"] not in kwargs:
        return f"{name}: missing required argument `{p['name']}`"
    return None


def check_pipeline(entries: list[object]) -> list[tuple[int, str]]:
    """Problems with a pipeline list, each with the index of its entry."""
    problems: list[tuple[int, str]] = []
    for index, entry in enumerate(entries):
        if not (isinstance(entry, Mapping) and len(entry) == 1):
            problems.append((index, "each entry is a one-key mapping `{OpName: {arguments}}`"))
            continue
        ((name, kwargs),) = entry.items()
        if kwargs is None:
            kwargs = {}
        if not isinstance(name, str) or not isinstance(kwargs, Mapping):
            problems.append((index, f"`{name}`: the arguments of an op are a mapping of keyword: value"))
            continue
        problems += [(index, msg) for msg in check_op(name, kwargs)]
    return problems
