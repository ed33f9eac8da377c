"""The MindSpore dataset ops a config's transform pipelines may name, with their signatures.

A pipeline is an ordered list of `{OpName: {kwargs}}` entries (MMPretrain style). `check_op` and
`check_pipeline` validate names and keyword arguments against a table shipped with mscodegen,
`data/dataset_ops.json`, because the generator and `mscodegen validate` must not import MindSpore
(`import mindspore` costs about a second). The table is refreshed by hand from the installed packages:

    python -m mscodegen.catalog.dataset_ops

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
import sys
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from mscodegen.catalog.signatures import parameters, string_problem
from mscodegen.catalog.suggest import close_matches

TABLE_FILE = Path(__file__).parent / "data" / "dataset_ops.json"
REFRESH_COMMAND = "python -m mscodegen.catalog.dataset_ops"
MODULES = ("mindspore.dataset.vision", "mindspore.dataset.transforms", "mindspore.dataset.text")
# Not introspectable from MindSpore: mindcv's batch-level mixup/cutmix/label-smoothing (see mindcv's loader).
EXTRA_OPS = (("mindcv.Mixup", "mindcv.data.mixup", "Mixup", "batch"),)
NESTED_PARAMS = ("transforms", "transform")  # take pipeline entries, whatever their docstring says
SCALAR_WORDS = frozenset(["int", "float", "bool", "str", "bytes", "slice", "Ellipsis"])
# containers: a literal unless they hold something else (`Union[Inter], optional` is an enum)
CONTAINER_WORDS = frozenset(
    ["Union", "optional", "Optional", "list", "List", "tuple", "Tuple", "sequence", "Sequence", "None"]
)

Op = dict[str, Any]


@cache
def load_table() -> dict[str, Any]:
    """The shipped table: {"versions": ..., "enums": ..., "ops": {name: op}}."""
    table: dict[str, Any] = json.loads(TABLE_FILE.read_text(encoding="utf-8"))
    return table


def _ops() -> dict[str, Op]:
    ops: dict[str, Op] = load_table()["ops"]
    return ops


def _suggest(word: str, choices: list[str]) -> str:
    close = [c for c in choices if c.lower() == word.lower()]
    close += [c for c in choices if c.lower().endswith("." + word.lower())]  # mindcv.Mixup for Mixup
    close += [c for c in close_matches(word, choices, n=3) if c not in close]
    return f" (did you mean {' or '.join(close[:3])}?)" if close else ""


def check_op(name: str, kwargs: Mapping[str, object]) -> list[str]:
    """Problems with one pipeline entry `{name: kwargs}`; empty when the table accepts it."""
    op = _ops().get(name)
    if op is None:
        return [f"unknown dataset op `{name}`{_suggest(name, sorted(_ops()))}"]
    params = {p["name"]: p for p in op["params"]}
    problems: list[str] = []
    for p in op["params"]:
        if p.get("kind") == "var_positional":
            problems.append(
                f"{name} takes its arguments positionally (*{p['name']}), which a keyword form cannot give"
            )
        elif p["accepts"] == ["object"] and (p["required"] or p["name"] in kwargs):
            problems.append(
                f"{name} needs a {p['type']} object for `{p['name']}`, which a config cannot give"
            )
        elif p["required"] and p["name"] not in kwargs:
            problems.append(f"{name}: missing required argument `{p['name']}`")
    for key, value in kwargs.items():
        param = params.get(key) if isinstance(key, str) else None
        if param is None:
            hint = _suggest(str(key), list(params)) or f" (accepts: {', '.join(params) or 'no arguments'})"
            problems.append(f"{name}: unknown argument `{key}`{hint}")
        elif key in NESTED_PARAMS and param["accepts"] == ["ops"]:
            entries = value if isinstance(value, list) else [value]
            problems += [f"{name}.{key}[{i}]: {msg}" for i, msg in check_pipeline(entries)]
        elif param["accepts"] == ["literal"]:
            problem = string_problem(name, key, param["type"], value)
            problems += [problem] if problem else []
    return problems


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


# ---- refresh: the only code that imports MindSpore and mindcv ------------------------------------------


def _accepts(name: str, doc_type: str | None, enums: Mapping[str, object]) -> list[str]:
    import re

    if name in NESTED_PARAMS or (doc_type and "TensorOperation" in doc_type):
        return ["ops"]
    if doc_type is None:
        return ["unknown"]
    if name.endswith("_path"):  # a file the config names (Jieba dictionaries, a Plugin library)
        return ["path"]
    kinds = set()
    words = re.findall(r"[A-Za-z_][\w.]*", doc_type)
    for word in words:
        if word in SCALAR_WORDS:
            kinds.add("literal")
        elif word in CONTAINER_WORDS:
            pass
        elif word in ("mindspore.dtype", "numpy.dtype"):
            kinds.add("dtype")
        elif word == "numpy.ndarray":
            kinds.add("array")
        elif word in enums:
            kinds.add(f"enum:{word}")
        else:
            kinds.add("object")
    return sorted(kinds or {"literal"})


def _op(cls: type, module: str, enums: Mapping[str, object], input_kind: str | None = None) -> Op:
    import inspect
    import re

    bases = {b.__name__ for b in cls.__mro__}
    params = parameters(cls)
    for entry in params:
        entry["accepts"] = _accepts(entry["name"], entry["type"], enums)
    if input_kind is None:
        summary = inspect.cleandoc(cls.__doc__ or "").split("\n\n")[0]
        if re.search(r"batch of .*images", summary):
            input_kind = "batch"
        elif "bounding box" in summary:
            input_kind = "image+bbox"
        elif "VideoTensorOperation" in bases:
            input_kind = "video"
        else:
            input_kind = {"vision": "image", "text": "text"}.get(module.rsplit(".", 1)[1], "any")
    impl = {1: "c++", 2: "python", 3: "both"}.get(
        ("TensorOperation" in bases) + 2 * ("PyTensorOperation" in bases), "python"
    )
    return {"module": module, "class": cls.__name__, "input": input_kind, "impl": impl, "params": params}


def extract() -> dict[str, Any]:
    """Build the table from the installed MindSpore and mindcv."""
    import enum
    import importlib
    import inspect

    import mindcv  # type: ignore[import-untyped]
    import mindspore

    modules = {name: importlib.import_module(name) for name in MODULES}
    enums: dict[str, Any] = {}
    classes: list[tuple[str, type]] = []
    for name, module in modules.items():
        for attr in sorted(dir(module)):
            obj = getattr(module, attr)
            if attr.startswith("_") or not inspect.isclass(obj):
                continue
            if issubclass(obj, enum.Enum):
                enums[attr] = {"module": name, "members": [m.name for m in obj]}
            elif obj.__module__ == f"{name}.transforms":
                classes.append((name, obj))
    ops: dict[str, Op] = {}
    for name, cls in classes:
        assert cls.__name__ not in ops, f"two modules define {cls.__name__}"
        ops[cls.__name__] = _op(cls, name, enums)
    for key, module_name, class_name, input_kind in EXTRA_OPS:
        cls = getattr(importlib.import_module(module_name), class_name)
        ops[key] = _op(cls, module_name, enums, input_kind)
    return {
        "about": f"MindSpore dataset ops for transform pipelines; regenerate with `{REFRESH_COMMAND}`",
        "versions": {"mindspore": mindspore.__version__, "mindcv": mindcv.__version__},
        "enums": dict(sorted(enums.items())),
        "ops": dict(sorted(ops.items())),
    }


def dumps(value: object, depth: int = 0) -> str:
    """JSON with one line per parameter and per enum, so that a refresh diffs readably."""
    flat = not isinstance(value, (dict, list)) or not value
    if flat or depth >= 4 or (isinstance(value, list) and not isinstance(value[0], (dict, list))):
        return json.dumps(value, ensure_ascii=False)
    pad = " " * (depth + 1)
    if isinstance(value, dict):
        items = [f"{pad}{json.dumps(k)}: {dumps(v, depth + 1)}" for k, v in value.items()]
        text = "{\n" + ",\n".join(items) + "\n" + " " * depth + "}"
    else:
        assert isinstance(value, list)
        text = "[\n" + ",\n".join(pad + dumps(v, depth + 1) for v in value) + "\n" + " " * depth + "]"
    return text + ("\n" if depth == 0 else "")


if __name__ == "__main__":
    text = dumps(extract())
    if "--print" in sys.argv[1:]:
        sys.stdout.write(text)
    else:
        TABLE_FILE.write_text(text, encoding="utf-8")
        print(f"wrote {len(json.loads(text)['ops'])} ops to {TABLE_FILE}")
