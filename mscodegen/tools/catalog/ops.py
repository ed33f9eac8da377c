"""The dataset-ops table (`catalog/data/dataset_ops.json`): every public transform class of
`mindspore.dataset.vision`, `.transforms` and `.text`, plus mindcv's `Mixup`; what each takes and accepts
is described in `mscodegen.catalog.dataset_ops`."""

from __future__ import annotations

import enum
import importlib
import inspect
import re
from collections.abc import Mapping
from typing import Any

import mindcv  # type: ignore[import-untyped]
import mindspore

from mscodegen.catalog.dataset_ops import NESTED_PARAMS, REFRESH_COMMAND, Op
from mscodegen.tools.catalog.signatures import parameters

MODULES = ("mindspore.dataset.vision", "mindspore.dataset.transforms", "mindspore.dataset.text")
# Not introspectable from MindSpore: mindcv's batch-level mixup/cutmix/label-smoothing (see mindcv's loader).
EXTRA_OPS = (("mindcv.Mixup", "mindcv.data.mixup", "Mixup", "batch"),)
SCALAR_WORDS = frozenset(["int", "float", "bool", "str", "bytes", "slice", "Ellipsis"])
# containers: a literal unless they hold something else (`Union[Inter], optional` is an enum)
CONTAINER_WORDS = frozenset(
    ["Union", "optional", "Optional", "list", "List", "tuple", "Tuple", "sequence", "Sequence", "None"]
)


def _accepts(name: str, doc_type: str | None, enums: Mapping[str, object]) -> list[str]:
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
