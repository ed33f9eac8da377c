"""Plan of the data: the dataset functions both variants define and the calls train() makes.

A dataset function is a list of steps, the statements it runs in order (Source, Map, Batch, ...); each
holds facts, and templates/_data.py.j2 prints each kind of step with a macro of its own.

data.train and data.eval share one function when they differ only in arguments (the split, the batch
size, shuffling, ...): `create_dataset("train")`, `create_dataset("test")`. Each split is first planned
with every value inline; when the two plans are equal with the differing values made parameters, they
become one function. File sources read under one folder: the script's --data-dir, whose default is the
DATA_DIR constant; a function that reads it takes it as its first parameter, `data_dir`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path, PurePosixPath
from typing import Any

from mscodegen.catalog import pipeline
from mscodegen.catalog.literals import Call, Lambda, Name, PerShard, Under
from mscodegen.plan.setup import ImportedName, Relative
from mscodegen.schema import Config, soft_label_classes
from mscodegen.schema.data import (
    Cifar10Data,
    CsvData,
    FillMissing,
    ImageFolderData,
    ImportedData,
    MnistData,
    ShuffleBuffer,
    _Loader,
    batch_columns,
    columns_of,
    drops_remainder,
    fixed_transforms,
    pipelines_of,
    split_fractions,
)
from mscodegen.schema.data import Dataset as DatasetSpec
from mscodegen.schema.gan import GanConfig

UINT8_SOURCES = ("mnist", "cifar10", "image_folder")
FILE_SOURCES = (*UINT8_SOURCES, "csv")
# The helpers csv sources call, in the order the scripts define them; the first two need numpy.
CSV_HELPERS = ("to_vector", "to_vector_filled", "to_number", "is_complete")
# Parameters a shared dataset function may take, in the order it takes them.
PARAMETERS = (
    "usage", "split", "path", "num_samples", "seed", "batch_size", "shuffle", "drop_remainder", "buffer_size"
)  # fmt: skip
MAX_PARAMETERS = 4  # a function of more reads worse than two functions
POSITIONAL = ("usage", "split", "path")  # the argument that names the split, when it comes first
Kwargs = tuple[tuple[str, Any], ...]  # (name, value) pairs, each value written by the `py` filter


class _Step:
    __slots__ = ()

    @property
    def kind(self) -> str:
        """The name of the macro that prints it."""
        return type(self).__name__


@dataclass(frozen=True, slots=True)
class Workers(_Step):  # workers = min(count, os.cpu_count()): MindSpore refuses more than the CPUs
    count: int


@dataclass(frozen=True, slots=True)
class Comment(_Step):
    text: str


@dataclass(frozen=True, slots=True)
class Assign(_Step):  # the arrays a numpy source slices, a column's list of ops
    names: str
    value: Any


@dataclass(frozen=True, slots=True)
class Source(_Step):  # dataset = call: the unbatched dataset
    call: Call


@dataclass(frozen=True, slots=True)
class Imported(_Step):  # dataset = call of the factory data.*.factory names, imported where called
    factory: ImportedName
    call: Call


@dataclass(frozen=True, slots=True)
class Split(_Step):  # csv split: dataset.split(fractions, randomize=False)[part], rows in file order
    fractions: tuple[float, float]
    part: int
    comment: str


@dataclass(frozen=True, slots=True)
class Sampler(_Step):  # this worker's shard of an imported factory's dataset
    key: str  # data.train.factory: where a source that cannot be sharded comes from


@dataclass(frozen=True, slots=True)
class Shuffle(_Step):
    buffer_size: Any  # a number, the parameter, or the dataset's size (a Call)


@dataclass(frozen=True, slots=True)
class Map(_Step):  # dataset = dataset.<method>(op, name=value, ...), or return ... as the last step
    method: str  # map, filter
    op: Any  # a Call, a Name, a list of Calls
    kwargs: Kwargs
    returns: bool = False


@dataclass(frozen=True, slots=True)
class Project(_Step):  # csv: the batch's columns in order; labels: [image]: the image alone
    columns: tuple[str, ...]
    comment: str = "the network's inputs, then the labels"


@dataclass(frozen=True, slots=True)
class LabelCast(_Step):  # MNIST/CIFAR labels are uint32: cast to int32 for the loss
    pass


@dataclass(frozen=True, slots=True)
class Batch(_Step):  # dataset.batch(size [* D_STEPS] [// num_shards], drop_remainder=..., kwargs)
    size: Any  # the number, or the parameter
    drop_remainder: Any
    per_shard: bool  # data parallel: each worker batches its share of the batch
    returns: bool  # no batch ops follow
    d_steps: bool = False  # a gan's batch holds one per discriminator step
    kwargs: Kwargs = ()  # a gan's per_batch_map that adds the latent vectors


Step = Workers | Comment | Assign | Source | Imported | Split | Sampler | Shuffle | Map | Project | LabelCast | Batch  # fmt: skip


@dataclass(frozen=True, slots=True)
class DatasetFn:
    """One dataset function: its signature and its steps."""

    name: str
    params: tuple[str, ...]
    keys: str  # provenance: data.train,data.eval
    steps: tuple[Step, ...]
    modules: tuple[str, ...]  # what the pipelines use: vision, transforms, text, ms, mindcv

    @property
    def factory(self) -> ImportedName | None:
        return next((s.factory for s in self.steps if isinstance(s, Imported)), None)


@dataclass(frozen=True, slots=True)
class DatasetUse:
    """How train() makes one split: `train_dataset = create_dataset("train")`."""

    key: str  # data.train
    variable: str  # train_dataset
    call: Call
    check_empty: bool = False  # train from a factory: validate cannot count its batches, the script does


@dataclass(frozen=True, slots=True)
class DataPlan:
    data_dir: str | None  # the folder every file source reads from, from the script's folder (or absolute)
    data_dir_keys: str  # data.train.path, data.eval.path
    helpers: tuple[str, ...]  # "digits", "synthetic": numpy loaders; CSV_HELPERS: cell conversions;
    # "unreadable_file": the excepthook that names a broken image / CIFAR batch
    functions: tuple[DatasetFn, ...]
    uses: tuple[DatasetUse, ...]  # train first, then eval


class _Values(dict[str, Any]):
    """The values a split's function may take as parameters: each is the parameter's name when the
    function takes it (`params`), else the value itself."""

    def __init__(self, params: Sequence[str]) -> None:
        super().__init__()
        self.params = params

    def __call__(self, name: str, value: Any) -> Any:
        self[name] = value
        return Name(name) if name in self.params else value


@dataclass(frozen=True, slots=True)
class _Split:
    fn: DatasetFn
    use: DatasetUse
    values: _Values


def build_data(cfg: Config | GanConfig, rel: Relative) -> DataPlan:
    """data.train (sharded under data parallel) and data.eval, as one function or two."""
    specs: list[tuple[str, DatasetSpec]] = [("train", cfg.data.train)]
    if cfg.data.eval is not None:
        specs.append(("eval", cfg.data.eval))
    paths = {
        split: rel.path(spec.path)
        for split, spec in specs
        if isinstance(spec, MnistData | Cifar10Data | ImageFolderData | CsvData)
    }
    # DATA_DIR is a folder: a csv source's file lies in it
    folders = [
        Path(paths[s]).parent.as_posix() if spec.kind == "csv" else paths[s]
        for s, spec in specs
        if s in paths
    ]
    data_dir = _common_dir(folders) if paths else None

    def plan(split: str, spec: DatasetSpec, name: str, params: Sequence[str]) -> _Split:
        path = _relative(paths[split], data_dir) if split in paths and data_dir is not None else None
        return _split(cfg, spec, split, rel, name, params, path)

    functions, uses = _merge([(split, spec) for split, spec in specs], plan)
    kinds = {spec.kind for _, spec in specs}
    helpers: tuple[str, ...] = tuple(kind for kind in ("digits", "synthetic") if kind in kinds)
    helpers += _csv_helpers([spec for _, spec in specs if isinstance(spec, CsvData)])
    if kinds & {"image_folder", "cifar10"}:  # files MindSpore may fail to decode mid-epoch
        helpers += ("unreadable_file",)
    keys = ", ".join(f"data.{split}.path" for split in paths)
    return DataPlan(data_dir, keys, helpers, functions, uses)


def _common_dir(paths: Sequence[str]) -> str:
    if len(set(paths)) == 1:
        return paths[0]
    absolute = all(Path(p).is_absolute() for p in paths)
    common = os.path.commonpath(paths) if absolute or not any(Path(p).is_absolute() for p in paths) else ""
    return Path(common).as_posix() if common else "."


def _relative(path: str, data_dir: str) -> PurePosixPath | None:
    """The path under DATA_DIR (None: DATA_DIR itself)."""
    if path == data_dir:
        return None
    if not Path(path).is_absolute() or Path(data_dir).is_absolute():
        return PurePosixPath(Path(os.path.relpath(path, data_dir)).as_posix())
    return PurePosixPath(path)


def _split(
    cfg: Config | GanConfig,
    spec: DatasetSpec,
    split: str,
    rel: Relative,
    name: str,
    params: Sequence[str],
    path: PurePosixPath | None,
) -> _Split:
    """One split's function, taking `params` as parameters, and train()'s call of it."""
    sharded = cfg.parallel.mode == "data_parallel" and split == "train"
    shuffle = bool(spec.shuffle) if spec.shuffle is not None else split == "train"
    buffer = (
        spec.shuffle.buffer_size
        if isinstance(spec, _Loader) and isinstance(spec.shuffle, ShuffleBuffer)
        else None
    )
    # Dataset.split takes the rows in file order: they are shuffled after it
    split_rows = isinstance(spec, CsvData) and spec.split is not None
    workers, cap = _workers(spec)
    v = _Values(params)
    steps = _source(spec, split, rel, v, workers, sharded, path, shuffle=shuffle and not split_rows)
    if isinstance(spec, CsvData) and spec.split is not None:
        fractions, part = split_fractions(spec.test_fraction), 0 if spec.split == "train" else 1
        comment = f"the {'first' if part == 0 else 'last'} {fractions[part]:.0%} of the rows"
        steps.append(Split(fractions, part, comment))
    if sharded and spec.kind == "import":
        steps.append(Sampler(f"data.{split}.factory"))
    if shuffle and (spec.kind == "import" or split_rows) and buffer is None:
        steps.append(Shuffle(Call("dataset.get_dataset_size")))
    if isinstance(spec, CsvData):
        steps += _csv_steps(spec, workers)
    steps += _map_steps(cfg, spec, split, workers)
    if buffer is not None:
        steps.append(Shuffle(v("buffer_size", buffer)))
    steps += _batch_steps(cfg, spec, split, v, workers, sharded)
    if cap and (spec.kind != "import" or any(isinstance(s, Map) for s in steps)):
        steps.insert(0, Workers(cap))
    reads = spec.kind in FILE_SOURCES and "path" not in params  # it reads DATA_DIR: train() passes it
    signature = ("data_dir",) * reads + (("num_shards", "shard_id") if sharded else tuple(params))
    fn = DatasetFn(name, signature, f"data.{split}", tuple(steps), _modules(cfg, spec, split))
    args: list[Any] = [Name("args.data_dir")] * reads
    kwargs = [("num_shards", Name("group_size")), ("shard_id", Name("rank"))] if sharded else []
    for i, param in enumerate(params):
        value = replace(v[param], folder="args.data_dir") if isinstance(v[param], Under) else v[param]
        args += [value] if i == 0 and param in POSITIONAL else []
        kwargs += [] if i == 0 and param in POSITIONAL else [(param, value)]
    call = Call(name, tuple(args), tuple(kwargs))
    use = DatasetUse(f"data.{split}", f"{split}_dataset", call, spec.kind == "import" and split == "train")
    return _Split(fn, use, v)


def _source(
    spec: DatasetSpec,
    split: str,
    rel: Relative,
    v: _Values,
    workers: Kwargs,
    sharded: bool,
    path: PurePosixPath | None,
    *,
    shuffle: bool,
) -> list[Step]:
    """The unbatched dataset: an imported factory's, a numpy source's arrays sliced, or a file reader's.
    A buffered shuffle happens after the maps, not in the source."""
    if isinstance(spec, ImportedData):
        factory = rel.imported(spec.factory, f"data.{split}.factory")
        kwargs = tuple((k, v(k, value) if k in PARAMETERS else value) for k, value in spec.kwargs.items())
        return [Imported(factory, Call(factory.bound, kwargs=kwargs))]
    in_source = not isinstance(spec.shuffle, ShuffleBuffer) or spec.shuffle.in_source
    kwargs = (("shuffle", v("shuffle", shuffle and in_source)), *workers)
    num_samples = getattr(spec, "num_samples", None)
    if num_samples and spec.kind in FILE_SOURCES:
        # sharded, the loader's num_samples counts one shard's samples: each worker reads its share
        kwargs += (("num_samples", PerShard(num_samples) if sharded else v("num_samples", num_samples)),)
    if sharded:
        kwargs += (("num_shards", Name("num_shards")), ("shard_id", Name("shard_id")))
    if spec.kind == "digits":
        arrays = Call("load_digits_split", (v("split", spec.split), spec.test_fraction))
    elif spec.kind == "synthetic":
        shape, classes = tuple(spec.image_shape), spec.num_classes
        arrays = Call(
            "make_synthetic", (v("num_samples", spec.num_samples), shape, classes, v("seed", spec.seed))
        )
    else:
        file = Call("str", (v("path", Under("data_dir", path)),))
        repeats = getattr(spec, "aug_repeats", None)
        if repeats is not None:  # the sampler shuffles and shards: the loader takes neither
            return _repeat_sampler(spec, v, file, repeats, shuffle, sharded, workers)
        return _file_source(spec, v, file, kwargs)
    images = {"image": Name("images"), "label": Name("labels")}
    return [Assign("images, labels", arrays), Source(Call("ds.NumpySlicesDataset", (images,), kwargs))]


def _repeat_sampler(
    spec: DatasetSpec, v: _Values, file: Call, repeats: int, shuffle: bool, sharded: bool, workers: Kwargs
) -> list[Step]:
    """mindcv's create_dataset with num_aug_repeats: RepeatAugSampler over the source's size, sharded by the
    sampler itself, selected_round=0 (an epoch of ceil(size / num_shards) samples per shard)."""
    whole = _file_source(spec, v, file, ())[-1]
    assert isinstance(whole, Source)
    counted = replace(whole.call, kwargs=tuple(kw for kw in whole.call.kwargs if kw[0] != "decode"))
    shards = (Name("num_shards"), Name("shard_id")) if sharded else (1, 0)
    sampler = Call(
        "RepeatAugSampler",
        (Call("len", (counted,)),),
        (
            ("num_shards", shards[0]),
            ("rank_id", shards[1]),
            ("shuffle", shuffle),
            ("num_repeats", repeats),
            ("selected_round", 0),
        ),
    )
    note = f"data.train.aug_repeats: each sample {repeats} times in a row, augmented anew (mindcv's sampler)"
    source = _file_source(spec, v, file, (("sampler", Name("sampler")), *workers))
    return [Comment(note), Assign("sampler", sampler), *source]


def _file_source(spec: DatasetSpec, v: _Values, file: Call, kwargs: Kwargs) -> list[Step]:
    if isinstance(spec, CsvData):
        delimiter = (("field_delim", spec.field_delim),) if spec.field_delim != "," else ()
        comment = Comment("the header row names the columns; every cell is read as text and converted below")
        return [comment, Source(Call("ds.CSVDataset", (file,), delimiter + kwargs))]
    if isinstance(spec, ImageFolderData):
        return [Source(Call("ds.ImageFolderDataset", (file,), (("decode", spec.decode), *kwargs)))]
    assert isinstance(spec, MnistData | Cifar10Data)
    loader = "ds.MnistDataset" if isinstance(spec, MnistData) else "ds.Cifar10Dataset"
    return [Source(Call(loader, (file,), (("usage", v("usage", spec.usage)), *kwargs)))]


def _csv_steps(spec: CsvData, workers: Kwargs) -> list[Step]:
    """The dropped rows, one map per batch column, and project() ordering the batch's columns."""
    steps: list[Step] = []
    if spec.missing == "drop":
        steps.append(Comment("missing: drop - keep the rows whose cells all hold numbers"))
        steps.append(
            Map("filter", Name("is_complete"), (("input_columns", list(spec.csv_columns())), *workers))
        )
    fill = spec.missing.fill if isinstance(spec.missing, FillMissing) else None
    for name, value in spec.columns.items():
        if isinstance(value, str):
            op: Any = Call("text.ToNumber", (Name("ms.int32"),))
        else:
            filled = Lambda(("*cells",), Call("to_vector_filled", (Name("cells"), fill)))
            op = Name("to_vector") if fill is None else filled
        output = () if value in (name, [name]) else (("output_columns", [name]),)
        steps.append(Map("map", op, (("input_columns", value), *output, *workers)))
    return [*steps, Project(tuple(spec.columns))]


def _csv_helpers(specs: Sequence[CsvData]) -> tuple[str, ...]:
    """The cell conversions the csv sources call (CSV_HELPERS, in that order)."""
    used = set()
    for spec in specs:
        fills = isinstance(spec.missing, FillMissing)
        if spec.vectors():
            used.add("to_vector_filled" if fills else "to_vector")
        if fills and spec.vectors() or spec.missing == "drop":
            used.add("to_number")
        if spec.missing == "drop":
            used.add("is_complete")
    return tuple(name for name in CSV_HELPERS if name in used)


def _workers(spec: DatasetSpec) -> tuple[Kwargs, int | None]:
    """num_parallel_workers only where it matters: set in the config, or ops that run in Python
    (reproducible with one worker only); otherwise MindSpore's default (its CPU count, at most 8).

    More than one worker is capped at the CPU count where the script runs: MindSpore refuses more
    (mindcv's recipes ask for 8 or 16), so the function starts with `workers = min(N, os.cpu_count())`.
    """
    if "num_workers" in spec.model_fields_set and spec.num_workers != 1:
        return (("num_parallel_workers", Name("workers")),), spec.num_workers
    transforms = getattr(spec, "transforms", None)
    python_ops = isinstance(transforms, dict) and any(
        pipeline.python_only(entries or []) for entries in transforms.values()
    )
    batch = any(n == pipeline.MINDCV_MIXUP for n in pipeline.names(spec.batch_transforms))
    one = "num_workers" in spec.model_fields_set or python_ops or batch
    return ((("num_parallel_workers", 1),) if one else ()), None


def _python_note(
    entries: Sequence[pipeline.Entry], spec: DatasetSpec, batch_entries: Sequence[pipeline.Entry]
) -> list[Step]:
    """One line where a column's ops run in Python with one thread: why one, and why not processes (except
    where they share numpy's generator with mindcv.Mixup: pipeline.shares_numpy_generator).

    Measured by `python -m bench.pipeline` (docs/speed.md, mindcv's ImageNet augmentation on 2 cores):
    2 threads gave 1.09x of 1 (inside the noise: RandomErasing holds the GIL), and 2 processes
    (python_multiprocessing=True) about 0.6x of 2 threads.
    """
    slow = pipeline.python_only(entries)
    if not slow or "num_workers" in spec.model_fields_set and spec.num_workers != 1:
        return []
    ops = ", ".join(dict.fromkeys(slow))
    why = "in Python: one thread keeps it reproducible, more were no faster"
    if pipeline.shares_numpy_generator(entries, batch_entries):
        why = "in a process: a thread would share numpy's generator with Mixup's"
    return [Comment(f"{ops} {'run' if ',' in ops else 'runs'} {why}")]


def _fixed_ops(spec: DatasetSpec) -> list[Call]:
    """The fixed `transforms: {resize, rescale, normalize, hwc_to_chw}` form, as the image column's ops."""
    transforms = fixed_transforms(spec)
    if transforms is None:
        return []
    ops = []
    if transforms.resize:
        ops.append(Call("vision.Resize", (tuple(transforms.resize),)))
    if transforms.rescale is not None or spec.kind in UINT8_SOURCES:
        rescale = Fraction(1, 255) if transforms.rescale is None else transforms.rescale
        ops.append(Call("vision.Rescale", (rescale, 0.0)))
    if transforms.normalize:
        normalize = (("mean", transforms.normalize.mean), ("std", transforms.normalize.std))
        ops.append(Call("vision.Normalize", kwargs=normalize))
    if transforms.hwc_to_chw:
        ops.append(Call("vision.HWC2CHW"))
    return ops


_ONE_HOT_COMMENTS = {
    "train": "MixUpBatch/CutMixBatch take one-hot labels",
    "eval": "the training labels are soft (batch_transforms): the loss takes one-hot labels here too",
}


def _map_steps(cfg: Config | GanConfig, spec: DatasetSpec, split: str, workers: Kwargs) -> list[Step]:
    """The per-column pipelines (or the fixed form's image ops), the label cast, the one-hot labels."""
    pipelines = pipelines_of(cfg.data, split)
    batch_entries = _batch_entries(cfg, split)
    columns: list[tuple[str, list[Call], list[Step]]] = (
        [("image", _fixed_ops(spec), [])]
        if pipelines is None
        else [
            (c, [pipeline.render(e) for e in es or []], _python_note(es or [], spec, batch_entries))
            for c, es in pipelines.items()
        ]
    )
    processes = {
        c for c, es in (pipelines or {}).items() if pipeline.shares_numpy_generator(es or [], batch_entries)
    }
    steps: list[Step] = []
    kept = batch_columns(cfg.data, spec) if isinstance(cfg, Config) else columns_of(spec)
    if kept != columns_of(spec):  # labels: [image]: the source's labels go unread
        steps.append(Project(kept, "the target is the input: the labels go unread"))
        columns = [(c, ops, note) for c, ops, note in columns if c in kept]
    for column, ops, note in columns:
        kwargs = (("input_columns", column), *workers)
        if column in processes:
            kwargs += (("python_multiprocessing", True),)
        if len(ops) == 1:
            steps += [*note, Map("map", ops[0], kwargs)]
        elif ops:
            steps += [*note, Assign(f"{column}_ops", ops), Map("map", Name(f"{column}_ops"), kwargs)]
    if (
        spec.kind in ("mnist", "cifar10")
        and "label" in kept
        and not (pipelines and _casts_to_int32(pipelines.get("label") or []))
    ):
        steps.append(LabelCast())  # unless the label pipeline already ends with the int32 cast
    one_hot = _one_hot(cfg, split)
    if one_hot:
        steps += [
            Comment(_ONE_HOT_COMMENTS[split]),
            Map("map", one_hot, (("input_columns", "label"), *workers)),
        ]
    return steps


def _one_hot(cfg: Config | GanConfig, split: str) -> list[Call]:
    """The label ops before batch() when labels are soft (batch_transforms)."""
    classes = soft_label_classes(cfg) if isinstance(cfg, Config) else None  # a gan has no batch ops
    if classes is None:
        return []
    one_hot = Call("transforms.OneHot", kwargs=(("num_classes", classes),))
    if split == "eval":
        return [one_hot, Call("transforms.TypeCast", (Name("ms.float32"),))]
    needs = any(n in pipeline.NEEDS_ONE_HOT for n in pipeline.names(cfg.data.train.batch_transforms))
    return [one_hot] if needs else []


def _batch_steps(
    cfg: Config | GanConfig, spec: DatasetSpec, split: str, v: _Values, workers: Kwargs, sharded: bool
) -> list[Step]:
    """batch(), then data.train.batch_transforms: maps on [image, label], the last one returned."""
    ops = [pipeline.render_batch(e) for e in _batch_entries(cfg, split)]
    batch = Batch(
        v("batch_size", spec.batch_size), v("drop_remainder", drops_remainder(spec, split)), sharded, not ops
    )
    if isinstance(cfg, GanConfig):  # the label column replaced by the latent vectors, a batch per step
        # WGAN-GP: the gradient penalty's interpolation weights too, after the images (a column that
        # per_batch_map adds goes first: the images pass through it to keep their place)
        image, label = cfg.data.inputs[0], cfg.data.labels[0]
        gp = cfg.gan.discriminator.gradient_penalty is not None
        inputs = ("image", "label", "info") if gp else ("label", "info")
        noise = Call("add_latent_noise", (*map(Name, inputs), Name("shard_id")))
        more = (
            ("per_batch_map", Lambda(inputs, noise) if sharded else Name("add_latent_noise")),
            ("input_columns", [image, label] if gp else [label]),
            ("output_columns", [image, "noise", "mix"] if gp else ["noise"]),
        )
        batch = replace(batch, d_steps=cfg.gan.d_steps > 1, kwargs=more)
    columns = ("input_columns", ["image", "label"])
    return [batch, *(Map("map", op, (columns, *workers), i == len(ops) - 1) for i, op in enumerate(ops))]


def _batch_entries(cfg: Config | GanConfig, split: str) -> list[pipeline.Entry]:
    """data.train.batch_transforms, where they apply: train, and the soft labels' classes known."""
    soft = isinstance(cfg, Config) and soft_label_classes(cfg) is not None
    return list(cfg.data.train.batch_transforms) if soft and split == "train" else []


def _modules(cfg: Config | GanConfig, spec: DatasetSpec, split: str) -> tuple[str, ...]:
    """The modules the function's ops use (vision, transforms, text, ms, mindcv)."""
    pipelines = pipelines_of(cfg.data, split)
    if pipelines is None:
        used = (
            {"vision"}
            if _fixed_ops(spec)
            else {"text"}
            if isinstance(spec, CsvData) and spec.class_columns()
            else set()
        )
    else:
        used = set().union(*(pipeline.modules(entries) for entries in pipelines.values() if entries))
    used |= pipeline.batch_modules(_batch_entries(cfg, split))
    return tuple(sorted(used | ({"transforms", "ms"} if _one_hot(cfg, split) else set())))


def _casts_to_int32(entries: Sequence[pipeline.Entry]) -> bool:
    """The pipeline's last op is TypeCast to int32 (as MindSpore's quick start writes the label cast)."""
    if not entries:
        return False
    name, params = pipeline.split_entry(entries[-1])
    return name == "TypeCast" and params.get("data_type") == "int32"


def _merge(
    specs: list[tuple[str, DatasetSpec]], plan: Any
) -> tuple[tuple[DatasetFn, ...], tuple[DatasetUse, ...]]:
    """One function for both splits when they differ in at most MAX_PARAMETERS values, else one each."""
    splits = [plan(split, spec, f"create_{split}_dataset", ()) for split, spec in specs]
    if len(splits) == 2:
        train, evaluation = (s.values for s in splits)
        differ = [name for name in PARAMETERS if name in train and train[name] != evaluation.get(name)]
        if set(train) == set(evaluation) and 0 < len(differ) <= MAX_PARAMETERS:
            a, b = (plan(split, spec, "create_dataset", tuple(differ)) for split, spec in specs)
            if replace(a.fn, keys="") == replace(b.fn, keys=""):
                return (replace(a.fn, keys="data.train,data.eval"),), (a.use, b.use)
    return tuple(s.fn for s in splits), tuple(s.use for s in splits)
