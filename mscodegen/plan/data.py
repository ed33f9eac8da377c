"""Plan of the data: the dataset functions both variants define and the calls train() makes.

data.train and data.eval share one function when they differ only in arguments (the split, the batch
size, shuffling, ...): `create_dataset("train")`, `create_dataset("test")`. Each split is first planned
with those arguments as «placeholders»; when the two plans are equal with the differing placeholders
left as parameter names, they become one function. File sources read under one folder: the
script's --data-dir, whose default is the DATA_DIR constant.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from mscodegen.catalog import pipeline
from mscodegen.catalog.literals import call, literal
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


@dataclass(frozen=True, slots=True)
class ColumnOps:
    """One column's pipeline: `dataset.map([ops], input_columns=column)`."""

    column: str
    variable: str  # image_ops, label_ops
    ops: tuple[str, ...]  # Python calls, rendered from the config's entries by pipeline.render
    note: str | None = None  # above the map: why ops that run in Python get one thread (bench/pipeline.py)


@dataclass(frozen=True, slots=True)
class CsvMap:
    """One batch column made from CSV columns: `dataset.map(op, input_columns=..., output_columns=...)`."""

    op: str  # to_vector, a lambda calling to_vector_filled, text.ToNumber(ms.int32)
    columns: str  # 'input_columns=["age", "bmi"], output_columns=["features"]' (no output: the same name)


@dataclass(frozen=True, slots=True)
class CsvSteps:
    """What a csv source adds to its dataset function, in the order the function runs it."""

    split: str | None  # 'dataset.split([0.8, 0.2], randomize=False)[0]'
    split_comment: str
    keep: str | None  # missing: drop: the filter's input_columns, every CSV column read
    maps: tuple[CsvMap, ...]
    project: str  # the batch's columns in order, a Python literal


@dataclass(frozen=True, slots=True)
class DatasetFn:
    """One dataset function: its signature and every statement's expression."""

    name: str
    params: tuple[str, ...]
    keys: str  # provenance: data.train,data.eval
    arrays_call: str | None  # digits/synthetic: the numpy (images, labels) behind NumpySlicesDataset
    source_call: str  # the unbatched source dataset
    factory: ImportedName | None  # data.*.factory
    shard_after: bool  # an imported factory's dataset gets a DistributedSampler
    shuffle_after: bool  # ... and is shuffled with .shuffle()
    column_ops: tuple[ColumnOps, ...]
    label_cast: bool  # MNIST/CIFAR labels are uint32: cast to int32 for the loss
    one_hot: tuple[str, ...]  # label ops before batch() when labels are soft (batch_transforms)
    one_hot_comment: str
    shuffle_buffer: str | None  # dataset.shuffle(buffer_size=...) after the maps
    batch_expr: str
    drop_remainder: str
    batch_ops: tuple[str, ...]  # data.train.batch_transforms: maps on [image, label] after batch()
    workers: str  # ", num_parallel_workers=N" where the config needs it, else ""
    workers_line: str | None  # num_workers above 1: `workers = min(N, os.cpu_count())`, the function's first
    modules: tuple[str, ...]  # what the pipelines use: vision, transforms, text, ms, mindcv
    csv: CsvSteps | None = None  # kind csv: split, dropped rows, columns made from CSV columns
    batch_map: str = ""  # more batch() arguments: a gan's per_batch_map that adds the latent vectors

    @property
    def factory_keys(self) -> str:
        """The keys of the imported factory this function calls: data.train.factory (, data.eval...)."""
        return ",".join(f"{key}.factory" for key in self.keys.split(","))


@dataclass(frozen=True, slots=True)
class DatasetUse:
    """How train() makes one split: `train_dataset = create_dataset("train")`."""

    key: str  # data.train
    variable: str  # train_dataset
    call: str
    factory: bool  # an imported factory makes it
    check_empty: bool = False  # train from a factory: validate cannot count its batches, the script does


@dataclass(frozen=True, slots=True)
class DataPlan:
    data_dir: str | None  # DATA_DIR's value: the folder every file source reads from
    data_dir_keys: str  # data.train.path, data.eval.path
    helpers: tuple[str, ...]  # "digits", "synthetic": numpy loaders; CSV_HELPERS: cell conversions;
    # "unreadable_file": the excepthook that names a broken image / CIFAR batch
    functions: tuple[DatasetFn, ...]
    uses: tuple[DatasetUse, ...]  # train first, then eval


@dataclass(frozen=True, slots=True)
class _Split:
    """One split before merging: a function with «placeholders», and their values."""

    fn: DatasetFn
    values: dict[str, str]  # placeholder -> Python literal
    use: DatasetUse


def _hole(name: str) -> str:
    return f"\x00{name}\x00"


def build_data(cfg: Config | GanConfig, rel: Relative) -> DataPlan:
    """data.train (sharded under data parallel) and data.eval, as one function or two."""
    sharded = cfg.parallel.mode == "data_parallel"
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
        Path(paths[split]).parent.as_posix() if spec.kind == "csv" else paths[split]
        for split, spec in specs
        if split in paths
    ]
    data_dir = _common_dir(folders) if paths else None
    splits = [
        _with_pipelines(
            cfg,
            split,
            _split(
                cfg, spec, split, rel, sharded=sharded and split == "train", paths=paths, data_dir=data_dir
            ),
        )
        for split, spec in specs
    ]
    functions, uses = _with_data_dir(*_merge(splits))
    kinds = {spec.kind for _, spec in specs}
    helpers: tuple[str, ...] = tuple(kind for kind in ("digits", "synthetic") if kind in kinds)
    helpers += _csv_helpers([spec for _, spec in specs if isinstance(spec, CsvData)])
    if kinds & {"image_folder", "cifar10"}:  # files MindSpore may fail to decode mid-epoch
        helpers += ("unreadable_file",)
    keys = ", ".join(f"data.{split}.path" for split in paths)
    return DataPlan(data_dir, keys, helpers, functions, uses)


def _with_data_dir(
    functions: tuple[DatasetFn, ...], uses: tuple[DatasetUse, ...]
) -> tuple[tuple[DatasetFn, ...], tuple[DatasetUse, ...]]:
    """File sources read under the script's --data-dir (DATA_DIR by default): a function that reads
    DATA_DIR takes it as its first parameter, and train() passes args.data_dir (a copied script runs
    with --data-dir wherever its data is)."""
    reads = {fn.name for fn in functions if "DATA_DIR" in fn.source_call}
    functions = tuple(
        replace(
            fn, params=("data_dir", *fn.params), source_call=fn.source_call.replace("DATA_DIR", "data_dir")
        )
        if fn.name in reads
        else fn
        for fn in functions
    )
    out = []
    for use in uses:
        call = use.call.replace("DATA_DIR", "args.data_dir")
        name, _, rest = call.partition("(")
        if name in reads:
            call = f"{name}(args.data_dir{', ' if rest != ')' else ''}{rest}"
        out.append(replace(use, call=call))
    return functions, tuple(out)


def _common_dir(paths: Sequence[str]) -> str:
    if len(set(paths)) == 1:
        return paths[0]
    absolute = all(Path(p).is_absolute() for p in paths)
    common = os.path.commonpath(paths) if absolute or not any(Path(p).is_absolute() for p in paths) else ""
    return Path(common).as_posix() if common else "."


def data_dir_expr(data_dir: str) -> str:
    """DATA_DIR's value in the script: the folder relative to the script, or absolute."""
    if Path(data_dir).is_absolute():
        return f"Path({literal(data_dir)})"
    return f"Path(__file__).parent / {literal(data_dir)}" if data_dir != "." else "Path(__file__).parent"


def _path_expr(path: str, data_dir: str | None) -> str:
    assert data_dir is not None
    if path == data_dir:
        return "DATA_DIR"
    rest = (
        Path(os.path.relpath(path, data_dir)).as_posix()
        if not Path(path).is_absolute() or Path(data_dir).is_absolute()
        else path
    )
    return f"DATA_DIR / {literal(rest)}"


def _split(
    cfg: Config | GanConfig,
    spec: DatasetSpec,
    split: str,
    rel: Relative,
    *,
    sharded: bool,
    paths: dict[str, str],
    data_dir: str | None,
) -> _Split:
    shuffle = bool(spec.shuffle) if spec.shuffle is not None else split == "train"
    # a buffered shuffle happens after the maps (_with_pipelines), not in the source
    source_shuffle = shuffle and (not isinstance(spec.shuffle, ShuffleBuffer) or spec.shuffle.in_source)
    # Dataset.split takes the rows in file order: they are shuffled after it
    split_rows = isinstance(spec, CsvData) and spec.split is not None
    source_shuffle = source_shuffle and not split_rows
    values: dict[str, str] = {
        "batch_size": literal(spec.batch_size),
        "drop_remainder": literal(drops_remainder(spec, split)),
    }
    args = ""
    if spec.kind != "import":
        values["shuffle"] = literal(source_shuffle)
        args = f"shuffle={_hole('shuffle')}"
    workers, workers_line = _workers(cfg, spec)
    if spec.kind != "import" and workers:
        args += workers
    num_samples = getattr(spec, "num_samples", None)
    if num_samples and spec.kind in FILE_SOURCES:
        values["num_samples"] = literal(num_samples)
        args += f", num_samples={_hole('num_samples')}"
    if sharded and spec.kind != "import":
        args += ", num_shards=num_shards, shard_id=shard_id"
    arrays_call = None
    factory = None
    if spec.kind == "digits":
        values["split"] = literal(spec.split)
        arrays_call = f"load_digits_split({_hole('split')}, {literal(spec.test_fraction)})"
    elif spec.kind == "synthetic":
        values["num_samples"] = literal(spec.num_samples)
        values["seed"] = literal(spec.seed)
        shape = literal(tuple(spec.image_shape))
        arrays_call = (
            f"make_synthetic({_hole('num_samples')}, {shape}, {literal(spec.num_classes)}, {_hole('seed')})"
        )
    if arrays_call is not None:
        source = f'ds.NumpySlicesDataset({{"image": images, "label": labels}}, {args})'
    elif isinstance(spec, ImportedData):
        factory = rel.imported(spec.factory, f"data.{split}.factory")
        kwargs = {}
        for key, value in spec.kwargs.items():
            if key in PARAMETERS and key.isidentifier():
                values[key] = literal(value)
                kwargs[key] = _hole(key)
            else:
                kwargs[key] = literal(value)
        source = f"{factory.attr}({', '.join(f'{k}={v}' for k, v in kwargs.items())})"
    elif isinstance(spec, MnistData | Cifar10Data):
        values["path"] = _path_expr(paths[split], data_dir)
        values["usage"] = literal(spec.usage)
        loader = "ds.MnistDataset" if isinstance(spec, MnistData) else "ds.Cifar10Dataset"
        source = f"{loader}(str({_hole('path')}), usage={_hole('usage')}, {args})"
    elif isinstance(spec, CsvData):
        values["path"] = _path_expr(paths[split], data_dir)
        delimiter = f"field_delim={literal(spec.field_delim)}, " if spec.field_delim != "," else ""
        source = f"ds.CSVDataset(str({_hole('path')}), {delimiter}{args})"
    else:
        assert isinstance(spec, ImageFolderData)
        values["path"] = _path_expr(paths[split], data_dir)
        source = f"ds.ImageFolderDataset(str({_hole('path')}), decode=True, {args})"
    batch = _hole("batch_size") + (" // num_shards" if sharded else "")
    fn = DatasetFn(
        name=f"create_{split}_dataset",
        params=("num_shards", "shard_id") if sharded else (),
        keys=f"data.{split}",
        arrays_call=arrays_call,
        source_call=source,
        factory=factory,
        shard_after=sharded and factory is not None,
        shuffle_after=shuffle and (factory is not None or split_rows),
        column_ops=_fixed_ops(spec),
        label_cast=spec.kind in ("mnist", "cifar10"),
        one_hot=(),
        one_hot_comment="",
        shuffle_buffer=None,
        batch_expr=batch,
        drop_remainder=_hole("drop_remainder"),
        batch_ops=(),
        workers=workers,
        workers_line=workers_line,
        modules=("vision",) if _fixed_ops(spec) else ("text",) if _reads_classes(spec) else (),
        csv=_csv_steps(cfg, spec) if isinstance(spec, CsvData) else None,
    )
    variable = f"{split}_dataset"
    use_call = f"{fn.name}(num_shards=group_size, shard_id=rank)" if sharded else f"{fn.name}()"
    use = DatasetUse(
        f"data.{split}",
        variable,
        use_call,
        factory is not None,
        check_empty=factory is not None and split == "train",
    )
    return _Split(fn, values, use)


def _reads_classes(spec: DatasetSpec) -> bool:
    """A csv source with a class-index column (text.ToNumber)."""
    return isinstance(spec, CsvData) and any(isinstance(v, str) for v in spec.columns.values())


def _csv_steps(cfg: Config | GanConfig, spec: CsvData) -> CsvSteps:
    """The split, the dropped rows and one map per batch column; project() orders the batch's columns."""
    split, comment = None, ""
    if spec.split is not None:
        fractions = split_fractions(spec.test_fraction)
        part = 0 if spec.split == "train" else 1
        split = f"dataset.split({literal(list(fractions))}, randomize=False)[{part}]"
        comment = f"the {'first' if part == 0 else 'last'} {fractions[part]:.0%} of the rows"
    fill = spec.missing.fill if isinstance(spec.missing, FillMissing) else None
    maps = []
    for name, value in spec.columns.items():
        if isinstance(value, str):
            op, same = "text.ToNumber(ms.int32)", value == name
        else:
            op = "to_vector" if fill is None else f"lambda *cells: to_vector_filled(cells, {literal(fill)})"
            same = value == [name]
        output = "" if same else f", output_columns={literal([name])}"
        maps.append(CsvMap(op, f"input_columns={literal(value)}{output}"))
    keep = literal(list(spec.csv_columns())) if spec.missing == "drop" else None
    return CsvSteps(split, comment, keep, tuple(maps), literal(list(spec.columns)))


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


def _workers(cfg: Config | GanConfig, spec: DatasetSpec) -> tuple[str, str | None]:
    """num_parallel_workers only where it matters: set in the config, or ops that run in Python
    (reproducible with one worker only); otherwise MindSpore's default (its CPU count, at most 8).

    More than one worker is capped at the CPU count where the script runs: MindSpore refuses more
    (mindcv's recipes ask for 8 or 16), so the function starts with `workers = min(N, os.cpu_count())`.
    """
    if "num_workers" in spec.model_fields_set:
        if spec.num_workers == 1:
            return ", num_parallel_workers=1", None
        return ", num_parallel_workers=workers", f"workers = min({spec.num_workers}, os.cpu_count())"
    transforms = getattr(spec, "transforms", None)
    python_ops = isinstance(transforms, dict) and any(
        pipeline.python_only(entries or []) for entries in transforms.values()
    )
    batch = any(n == pipeline.MINDCV_MIXUP for n in pipeline.names(spec.batch_transforms))
    return (", num_parallel_workers=1" if python_ops or batch else ""), None


def _python_note(entries: Sequence[pipeline.Entry], spec: DatasetSpec) -> str | None:
    """One line where a column's ops run in Python with one thread: why one, and why not processes.

    Measured by `python -m bench.pipeline` (docs/speed.md, mindcv's ImageNet augmentation on 2 cores):
    2 threads gave 1.09x of 1 (inside the noise: RandomErasing holds the GIL), and 2 processes
    (python_multiprocessing=True) about 0.6x of 2 threads.
    """
    slow = pipeline.python_only(entries)
    if not slow or "num_workers" in spec.model_fields_set and spec.num_workers != 1:
        return None
    ops = ", ".join(dict.fromkeys(slow))
    return f"{ops} {'run' if ',' in ops else 'runs'} in Python: one thread keeps it reproducible, more were no faster"


def _fixed_ops(spec: DatasetSpec) -> tuple[ColumnOps, ...]:
    """The fixed `transforms: {resize, rescale, normalize, hwc_to_chw}` form, as the image column's ops."""
    transforms = fixed_transforms(spec)
    if transforms is None:
        return ()
    ops = []
    if transforms.resize:
        ops.append(f"vision.Resize({literal(tuple(transforms.resize))})")
    rescale = transforms.rescale
    if rescale is None and spec.kind in UINT8_SOURCES:
        ops.append("vision.Rescale(1.0 / 255.0, 0.0)")
    elif rescale is not None:
        ops.append(f"vision.Rescale({literal(rescale)}, 0.0)")
    if transforms.normalize:
        ops.append(call("vision.Normalize", mean=transforms.normalize.mean, std=transforms.normalize.std))
    if transforms.hwc_to_chw:
        ops.append("vision.HWC2CHW()")
    return (ColumnOps("image", "image_ops", tuple(ops)),) if ops else ()


_ONE_HOT_COMMENTS = {
    "train": "MixUpBatch/CutMixBatch take one-hot labels",
    "eval": "the training labels are soft (batch_transforms): the loss takes one-hot labels here too",
}


def _with_pipelines(cfg: Config | GanConfig, split: str, planned: _Split) -> _Split:
    """Add the per-column pipelines, the soft labels and the buffered shuffle to a split's plan."""
    spec = cfg.data.train if split == "train" else cfg.data.eval
    assert spec is not None
    pipelines = pipelines_of(cfg.data, split)
    buffer = (
        spec.shuffle.buffer_size
        if isinstance(spec, _Loader) and isinstance(spec.shuffle, ShuffleBuffer)
        else None
    )
    classes = soft_label_classes(cfg) if isinstance(cfg, Config) else None  # a gan has no batch ops
    fn, values = planned.fn, dict(planned.values)
    if pipelines is None and buffer is None and classes is None:
        return planned
    columns: list[ColumnOps] = []
    used: set[str] = set()
    for column, entries in (pipelines or {}).items():
        if entries:
            ops = tuple(pipeline.render(e) for e in entries)
            columns.append(ColumnOps(column, f"{column}_ops", ops, _python_note(entries, spec)))
            used |= pipeline.modules(entries)
    changes: dict[str, object] = {"column_ops": tuple(columns) if pipelines is not None else fn.column_ops}
    if pipelines is not None and fn.label_cast and _casts_to_int32(pipelines.get("label") or []):
        changes["label_cast"] = False  # the label pipeline already ends with the int32 cast
    if classes is not None:
        entries = cfg.data.train.batch_transforms
        if split == "eval":
            one_hot: tuple[str, ...] = (
                call("transforms.OneHot", num_classes=classes),
                "transforms.TypeCast(ms.float32)",
            )
            batch_ops: tuple[str, ...] = ()
        else:
            needs = any(n in pipeline.NEEDS_ONE_HOT for n in pipeline.names(entries))
            one_hot = (call("transforms.OneHot", num_classes=classes),) if needs else ()
            batch_ops = tuple(pipeline.render_batch(e) for e in entries)
            used |= pipeline.batch_modules(entries)
        used |= {"transforms", "ms"} if one_hot else set()
        changes.update(one_hot=one_hot, batch_ops=batch_ops, one_hot_comment=_ONE_HOT_COMMENTS[split])
    if buffer is not None:
        values["buffer_size"] = literal(buffer)
        changes.update(shuffle_buffer=_hole("buffer_size"), shuffle_after=False)
    changes["modules"] = tuple(sorted(used if pipelines is not None else used | set(fn.modules)))
    return _Split(replace(fn, **changes), values, planned.use)  # type: ignore[arg-type]


def _casts_to_int32(entries: Sequence[pipeline.Entry]) -> bool:
    """The pipeline's last op is TypeCast to int32 (as MindSpore's quick start writes the label cast)."""
    if not entries:
        return False
    name, params = pipeline.split_entry(entries[-1])
    return name == "TypeCast" and params.get("data_type") == "int32"


def _fill(fn: DatasetFn, values: dict[str, str], params: Sequence[str]) -> DatasetFn:
    """The function with every placeholder replaced: by its parameter name or by its value."""

    def fill(text: str) -> str:
        for name, value in values.items():
            text = text.replace(_hole(name), name if name in params else value)
        return text

    maps = fn.column_ops or fn.one_hot or fn.batch_ops
    return replace(
        fn,
        workers_line=fn.workers_line if maps or fn.workers in fn.source_call else None,
        arrays_call=fill(fn.arrays_call) if fn.arrays_call else None,
        source_call=fill(fn.source_call),
        shuffle_buffer=fill(fn.shuffle_buffer) if fn.shuffle_buffer else None,
        batch_expr=fill(fn.batch_expr),
        drop_remainder=fill(fn.drop_remainder),
    )


def _merge(splits: list[_Split]) -> tuple[tuple[DatasetFn, ...], tuple[DatasetUse, ...]]:
    if len(splits) == 2:
        (train, evaluation) = splits
        differ = [
            name for name in PARAMETERS
            if name in train.values and train.values.get(name) != evaluation.values.get(name)
        ]  # fmt: skip
        if set(train.values) == set(evaluation.values) and len(differ) <= MAX_PARAMETERS and differ:
            a = replace(
                _fill(train.fn, train.values, differ), name="create_dataset", keys="", params=tuple(differ)
            )
            b = replace(
                _fill(evaluation.fn, evaluation.values, differ),
                name="create_dataset",
                keys="",
                params=tuple(differ),
            )
            if a == b:
                fn = replace(a, keys="data.train,data.eval")
                uses = tuple(
                    replace(s.use, call=_call(fn.name, [s.values[name] for name in differ], differ))
                    for s in splits
                )
                return (fn,), uses
    return tuple(_fill(s.fn, s.values, ()) for s in splits), tuple(s.use for s in splits)


POSITIONAL = ("usage", "split", "path")  # the argument that names the split, when it comes first


def _call(name: str, values: list[str], params: list[str]) -> str:
    """The split's name positional, the others by keyword: create_dataset("train", batch_size=32)."""
    parts = [
        v if i == 0 and p in POSITIONAL else f"{p}={v}"
        for i, (p, v) in enumerate(zip(params, values, strict=True))
    ]
    return f"{name}({', '.join(parts)})"
