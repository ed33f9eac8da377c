"""Transform pipelines (`data.*.transforms: {column: [{OpName: {kwargs}}, ...]}`): checks and rendering.

Names and keyword arguments are checked against the shipped op table (`_dataset_ops`); this module adds
what the table's `accepts` kinds mean for a config, and how each value is spelled in the script:

- `literal`: the YAML value as a Python literal; lists stay lists, except for a parameter whose stated
  type is a tuple and never a list or sequence (`fill_value: Union[int, tuple[int]]`): MindSpore's
  type checks reject a list there, so it is written as a tuple;
- `enum:<Name>`: a member name, `interpolation: BILINEAR` -> `vision.Inter.BILINEAR`;
- `dtype`: a MindSpore dtype name, `data_type: int32` -> `ms.int32`;
- `ops` (RandomApply, RandomChoice, Compose, ...): a nested pipeline list;
- `path`, `array`, `object`, `unknown`: rejected (a config cannot give them).

Eval pipelines derived from a train pipeline keep its deterministic part (`eval_entries`):
`RandomResizedCrop(size)` and `RandomCropDecodeResize(size)` become `Resize(size)` (the eval source decodes),
`RandomCrop(size)` becomes `CenterCrop(size)`, and every other random op (a name starting with `Random`, and those in `RANDOM_OPS`) is dropped.

One entry is not a MindSpore op: `mindcv.auto_augment` (catalog/mindcv_augment.py), mindcv's own
RandAugment/AutoAugment/TrivialAugmentWide, rendered as the call of the mindcv function its policy names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mscodegen.catalog import mindcv_augment
from mscodegen.catalog.dataset_ops import check_pipeline, load_table
from mscodegen.catalog.literals import Call, Name
from mscodegen.catalog.suggest import close_matches

MODULE_ALIASES = {
    "mindspore.dataset.vision": "vision",
    "mindspore.dataset.transforms": "transforms",
    "mindspore.dataset.text": "text",
}
DTYPES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "bfloat16",
)  # fmt: skip
# Random ops whose names do not start with "Random".
RANDOM_OPS = frozenset(
    {"AutoAugment", "RandAugment", "TrivialAugmentWide", "UniformAugment", "CutOut", "MixUp", "RandomErasing"}
    | {mindcv_augment.NAME}
)
EVAL_REPLACEMENTS = {
    "RandomResizedCrop": "Resize",
    "RandomCrop": "CenterCrop",
    "RandomCropDecodeResize": "Resize",
}
SIZE_OPS = (
    "Resize",
    "RandomResizedCrop",
    "CenterCrop",
    "RandomCrop",
    "ResizedCrop",
    "RandomCropDecodeResize",
)
# Ops that take a file's encoded bytes (an image_folder with decode: false) and yield the decoded image.
DECODING_OPS = ("RandomCropDecodeResize", "Decode")

Entry = Mapping[str, Any]


def split_entry(entry: Entry) -> tuple[str, dict[str, Any]]:
    ((name, kwargs),) = entry.items()
    return name, dict(kwargs or {})


def _op(name: str) -> dict[str, Any]:
    op: dict[str, Any] = load_table()["ops"][name]
    return op


def _enum_prefix(enum: str) -> str | None:
    module = load_table()["enums"].get(enum, {}).get("module")
    alias = MODULE_ALIASES.get(module or "")
    return f"{alias}.{enum}" if alias else None


def entry_problems(entry: object, column: str) -> list[str]:
    """Every problem with one per-column pipeline entry (table check, then what a config can give)."""
    if isinstance(entry, Mapping) and list(entry) == [mindcv_augment.NAME]:
        kwargs = entry[mindcv_augment.NAME]
        if not isinstance(kwargs, Mapping):
            return [f"`{mindcv_augment.NAME}`: the arguments of an op are a mapping of keyword: value"]
        return mindcv_augment.kwargs_problems(dict(kwargs), load_table()["enums"]["Inter"]["members"])
    return _op_problems(entry, column)


def _op_problems(entry: object, column: str, *, batch: bool = False) -> list[str]:
    """The table's problems with one entry of `column`'s pipeline (`batch`: data.train.batch_transforms),
    then those with its place and its values."""
    problems = [msg for _, msg in check_pipeline([entry])]
    if problems:
        return problems
    assert isinstance(entry, Mapping)
    name, kwargs = split_entry(entry)
    op = _op(name)
    if batch:
        if op["input"] != "batch":
            return [f"{name} works on one sample: put it in data.train.transforms"]
        if name == "MixUp":
            return [
                "vision.MixUp silently mislabels integer labels: use MixUpBatch, CutMixBatch or mindcv.Mixup"
            ]
    elif op["input"] == "batch":
        return [f"{name} mixes whole batches: it cannot run in the per-column pipeline of `{column}`"]
    elif MODULE_ALIASES.get(op["module"]) is None:
        return [f"{name} is not a mindspore.dataset op"]
    params = {p["name"]: p for p in op["params"]}
    for key, value in kwargs.items():
        problems += _value_problems(name, params[key], value, column)
    return problems


def _value_problems(name: str, param: dict[str, Any], value: object, column: str) -> list[str]:
    accepts: list[str] = param["accepts"]
    key = param["name"]
    enums = [a.removeprefix("enum:") for a in accepts if a.startswith("enum:")]
    if enums:
        members = [m for e in enums for m in load_table()["enums"][e]["members"]]
        if isinstance(value, str) and value in members:
            return []
        if "literal" not in accepts:
            close = close_matches(str(value), members)
            hint = f"; did you mean {close[0]}?" if close else ""
            return [f"{name}: `{key}` is one of {', '.join(members)} (got {value!r}){hint}"]
    if "dtype" in accepts:
        if isinstance(value, str) and value in DTYPES:
            return []
        return [f"{name}: `{key}` is a dtype name, one of {', '.join(DTYPES)} (got {value!r})"]
    if "ops" in accepts:
        entries = value if isinstance(value, list) else [value]
        return [
            f"{name}.{key}[{i}]: {msg}" for i, e in enumerate(entries) for msg in entry_problems(e, column)
        ]
    if "literal" in accepts:
        return []
    return [f"{name}: `{key}` takes a {param['type']}, which a config cannot give"]


def render(entry: Entry) -> Call:
    """One entry as the script's call, e.g. `vision.Resize(size=[16, 16])`; the entry passed entry_problems."""
    name, kwargs = split_entry(entry)
    if name == mindcv_augment.NAME:
        return _render_mindcv_augment(kwargs)
    op = _op(name)
    params = {p["name"]: p for p in op["params"]}
    args = tuple((key, _value(params[key], value)) for key, value in kwargs.items())
    return Call(f"{MODULE_ALIASES[op['module']]}.{op['class']}", kwargs=args)


def _render_mindcv_augment(kwargs: dict[str, Any]) -> Call:
    """`rand_augment_transform("randaug-m9-...", {"translate_const": 100, "img_mean": (124, 116, 104),
    "interpolation": vision.Inter.BICUBIC})`: the hparams dict mindcv's transforms_imagenet_train passes."""
    policy = kwargs["policy"]
    hparams: dict[str, Any] = {}
    if "translate_const" in kwargs:
        hparams["translate_const"] = kwargs["translate_const"]
    if "img_mean" in kwargs:  # a tuple, as mindcv gives it: MindSpore's fill_value refuses a list
        mean = kwargs["img_mean"]
        hparams["img_mean"] = tuple(mean) if isinstance(mean, list) else mean
    if "interpolation" in kwargs:
        hparams["interpolation"] = Name(f"vision.Inter.{kwargs['interpolation']}")
    return Call(mindcv_augment.function(policy), (policy, hparams))


def _value(param: dict[str, Any], value: Any) -> Any:
    accepts: list[str] = param["accepts"]
    for kind in accepts:
        if kind.startswith("enum:") and isinstance(value, str):
            enum = kind.removeprefix("enum:")
            if value in load_table()["enums"][enum]["members"]:
                return Name(f"{_enum_prefix(enum)}.{value}")
    if "dtype" in accepts:
        return Name(f"ms.{value}")
    if "ops" in accepts:
        return [render(e) for e in (value if isinstance(value, list) else [value])]
    if isinstance(value, list) and _tuple_only(param["type"]):
        return tuple(value)
    return value


def _tuple_only(stated_type: str) -> bool:
    lowered = stated_type.lower()
    return "tuple" in lowered and "list" not in lowered and "sequence" not in lowered


def modules(entries: Sequence[Entry]) -> set[str]:
    """The script-level modules (`vision`, `transforms`, `text`, `ms`) the rendered entries use: the first
    part of every name they call or refer to (mindcv.auto_augment's function is one name, imported alone)."""
    used: set[str] = set()

    def visit(value: Any) -> None:
        if isinstance(value, Call | Name):
            used.add((value.func if isinstance(value, Call) else value.name).split(".")[0])
        if isinstance(value, Call):
            visit([*value.args, *dict(value.kwargs).values()])
        elif isinstance(value, list | tuple | dict):
            for item in value.values() if isinstance(value, dict) else value:
                visit(item)

    visit([render(e) for e in entries])
    return used


def is_random(name: str) -> bool:
    return name.startswith("Random") or name in RANDOM_OPS


def eval_entries(entries: Sequence[Entry]) -> list[dict[str, Any]]:
    """The deterministic part of a train pipeline (see the module docstring)."""
    out: list[dict[str, Any]] = []
    for entry in entries:
        name, kwargs = split_entry(entry)
        if name in EVAL_REPLACEMENTS:
            size = kwargs["size"]  # Resize(int) would keep the aspect ratio: give both sides
            out.append({EVAL_REPLACEMENTS[name]: {"size": [size, size] if isinstance(size, int) else size}})
        elif not is_random(name):
            out.append({name: kwargs})
    return out


def names(entries: Sequence[Entry]) -> list[str]:
    return [split_entry(e)[0] for e in entries]


def output_size(entries: Sequence[Entry]) -> tuple[int, int] | None | bool:
    """(height, width) the last sizing op gives, when its `size` is a literal int or [h, w];
    None when unknown; False when no op changes the size."""
    size: tuple[int, int] | None | bool = False
    for entry in entries:
        name, kwargs = split_entry(entry)
        if name in SIZE_OPS:
            value = kwargs.get("size")
            if isinstance(value, int) and name != "Resize":
                size = (value, value)
            elif isinstance(value, list) and len(value) == 2 and all(isinstance(v, int) for v in value):
                size = (value[0], value[1])
            else:  # Resize(int) keeps the aspect ratio: the size is not known statically
                size = None
    return size


def python_only(entries: Sequence[Entry]) -> list[str]:
    """Ops that run in Python only (reproducible with one worker only)."""
    return [n for n in names(entries) if n == mindcv_augment.NAME or _op(n)["impl"] == "python"]


def shares_numpy_generator(entries: Sequence[Entry], batch_entries: Sequence[Entry]) -> bool:
    """A column's mindcv.auto_augment (RandAugment, TrivialAugmentWide) and data.train's mindcv.Mixup both draw
    from numpy's global generator. Two maps run in two threads, so the order of their draws would change from
    run to run (measured: another batch at step 1 or 2 of three runs of the same seed); the column's map then
    runs in a process of its own (python_multiprocessing), whose generators MindSpore seeds with the dataset
    seed. mindcv's own train.py shares the generator between the threads: its runs are not reproducible."""
    mixup = MINDCV_MIXUP in names(batch_entries)
    return mixup and any(
        mindcv_augment.function(kwargs["policy"]) in mindcv_augment.NUMPY_GLOBAL
        for name, kwargs in map(split_entry, entries)
        if name == mindcv_augment.NAME
    )


# ---- batch-level ops (data.train.batch_transforms) -----------------------------------------------------

MINDCV_MIXUP = "mindcv.Mixup"
# Ops that need one-hot labels before batch() (transforms.OneHot), per the op table's docstring.
NEEDS_ONE_HOT = ("MixUpBatch", "CutMixBatch")


def batch_entry_problems(entry: object) -> list[str]:
    """Every problem with one data.train.batch_transforms entry."""
    return _op_problems(entry, "batch", batch=True)


def render_batch(entry: Entry) -> Call:
    name, kwargs = split_entry(entry)
    return Call("Mixup", kwargs=tuple(kwargs.items())) if name == MINDCV_MIXUP else render(entry)


def batch_modules(entries: Sequence[Entry]) -> set[str]:
    return {"mindcv" if split_entry(e)[0] == MINDCV_MIXUP else "vision" for e in entries}
