"""Rules on the data: batches per epoch, sharding, shuffling, columns, batch transforms, eval pipelines."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mscodegen.catalog import mindcv_augment, pipeline
from mscodegen.catalog.suggest import did_you_mean
from mscodegen.schema import Config, image_shape_of, soft_label_classes
from mscodegen.schema._base import python_name
from mscodegen.schema.data import (
    BUILTIN_COLUMNS,
    Cifar10Data,
    CsvData,
    Data,
    Dataset,
    ImageFolderData,
    ImportedData,
    MnistData,
    ShuffleBuffer,
    batch_columns,
    drops_remainder,
    fixed_transforms,
    pipelines_of,
)
from mscodegen.schema.gan import GanConfig
from mscodegen.schema.names import column_collision
from mscodegen.schema.network import BuiltinNetwork, ImportedNetwork
from mscodegen.schema.optim import HeadsLoss, ImportedLoss
from mscodegen.schema.rules._registry import KeyPath, Violation, rule
from mscodegen.schema.sources import sample_count
from mscodegen.schema.training import eval_metrics


def splits(cfg: Config | GanConfig) -> Iterator[tuple[str, Dataset]]:
    """data.train and, when given, data.eval, each with its name."""
    yield "train", cfg.data.train
    if cfg.data.eval is not None:
        yield "eval", cfg.data.eval


@rule("data")
def _shuffle_in_source_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    for split, spec in splits(cfg):
        if isinstance(spec, ImportedData) and getattr(spec.shuffle, "in_source", False):
            yield (
                ("data", split, "shuffle", "in_source"),
                "the factory builds the source itself: shuffle it there (kind import has no source shuffle)",
            )


@rule("data")
def _aug_repeats_rules(cfg: Config | GanConfig, _config_dir: Path | None) -> Iterator[Violation]:
    """aug_repeats: mindcv's RepeatAugSampler as the train source's sampler, which orders the samples itself."""
    for split, spec in splits(cfg):
        if spec.aug_repeats is None:
            continue
        key = ("data", split, "aug_repeats")
        if split == "eval":
            yield key, "repeated augmentation is for data.train: evaluation reads each sample once"
        elif isinstance(cfg, GanConfig):
            yield key, "a GAN's training takes no repeated augmentation"
        elif not isinstance(spec, MnistData | Cifar10Data | ImageFolderData):
            yield (
                key,
                f"kind {spec.kind} has no MindSpore loader that takes a sampler: repeated augmentation needs "
                "mnist, cifar10 or image_folder",
            )
        elif getattr(spec, "num_samples", None) is not None:
            yield (
                key,
                "not with num_samples: the sampler reads the whole source (mindcv's create_dataset refuses both)",
            )
        elif isinstance(spec.shuffle, ShuffleBuffer):
            yield (
                key,
                "the sampler shuffles (seeded by the epoch): set shuffle to true or false, not a buffer",
            )


def known_train_batches(cfg: Config | GanConfig, config_dir: Path | None = None) -> int | None:
    """Batches per epoch (per shard) of data.train when the config, or a cheap look at files, tells it."""
    batches = _batches(cfg.data.train, "train", config_dir, cfg.parallel.workers if _sharded(cfg) else 1)
    return None if batches is None else batches[0]


def _sharded(cfg: Config | GanConfig) -> bool:
    return cfg.parallel.mode == "data_parallel" and cfg.parallel.workers > 1


def _batches(
    spec: Dataset, split: str, config_dir: Path | None, shards: int
) -> tuple[int, str, int, int] | None:
    """(batches, why, samples per shard, batch per shard) of one epoch of `spec`, or None."""
    if isinstance(spec, ImportedData) or (config_dir is None and hasattr(spec, "path")):
        return None
    count = sample_count(spec, config_dir or Path())
    if count is None:
        return None
    samples = -(-count.value // shards)  # the distributed sampler pads every shard to the same size
    batch = max(spec.batch_size // shards, 1)
    drop = drops_remainder(spec, split)
    return (samples // batch if drop else -(-samples // batch)), count.why, samples, batch


@rule("parallel", "data.train")
def _parallel_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    par = cfg.parallel
    if par.mode == "stand_alone" and par.workers != 1:
        yield ("parallel", "workers"), "more than one worker needs parallel.mode: data_parallel"
    if par.mode == "data_parallel":
        # Only data.train is sharded: every rank evaluates the whole of data.eval with its (identical)
        # replica, so the metrics are those of the full eval set and its batch size is not split.
        dataset = cfg.data.train
        if dataset.batch_size % par.workers:
            yield (
                ("data", "train", "batch_size"),
                f"{dataset.batch_size} is the global batch and must divide evenly over "
                f"parallel.workers ({par.workers})",
            )
        # a file loader's num_samples (synthetic data makes exactly its num_samples, then shards them)
        samples = (
            dataset.num_samples
            if isinstance(dataset, MnistData | Cifar10Data | ImageFolderData | CsvData)
            else None
        )
        if samples and samples % par.workers:
            yield (
                ("data", "train", "num_samples"),
                f"{samples} samples are read in all, each worker its share: they must divide evenly over "
                f"parallel.workers ({par.workers})",
            )


@rule("data", "parallel")
def _empty_epoch_rules(cfg: Config, config_dir: Path | None) -> Iterator[Violation]:
    """An epoch of zero batches: the native loop would train 0 steps (and exit 0), Model.train raises."""
    for split, spec in splits(cfg):
        shards = cfg.parallel.workers if split == "train" and _sharded(cfg) else 1
        found = _batches(spec, split, config_dir, shards)
        if found is None or found[0] > 0:
            continue
        _, why, samples, batch = found
        per = f" per shard ({cfg.parallel.workers} workers)" if shards > 1 else ""
        cause = f"{samples} samples{per} ({why})"
        doing = "trains 0 steps" if split == "train" else "evaluates on nothing"
        if samples == 0:
            yield ("data", split), f"data.{split} is empty: {cause}; the script {doing}"
        else:
            yield (
                ("data", split, "batch_size"),
                f"{cause} make no full batch of {batch}{per} with drop_remainder: the script {doing}; "
                "lower batch_size or set drop_remainder: false",
            )


SOFT_LABEL_LOSSES = ("SoftmaxCrossEntropyWithLogits", "CrossEntropyLoss")


@rule("network", "data", "loss")
def _batch_transform_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    """data.train.batch_transforms: soft labels need a loss that takes them, and their class count."""
    if cfg.data.eval is not None and cfg.data.eval.batch_transforms:
        yield ("data", "eval", "batch_transforms"), "batch-level ops mix training samples: data.train only"
    train = cfg.data.train
    if not train.batch_transforms:
        return
    loss = cfg.loss
    if loss.name not in SOFT_LABEL_LOSSES:
        yield (
            ("loss", "name"),
            f"data.train.batch_transforms gives soft (mixed, one-hot) labels, which {loss.name} does not take: "
            "use SoftmaxCrossEntropyWithLogits (sparse: false) or CrossEntropyLoss",
        )
    elif loss.kwargs is not None and loss.kwargs.get("sparse") is True:
        yield (
            ("loss", "kwargs", "sparse"),
            "data.train.batch_transforms gives soft (one-hot) labels: sparse must be false",
        )
    classes = soft_label_classes(cfg)
    if classes is None:
        yield (
            ("data", "train", "batch_transforms"),
            "one-hot labels need the number of classes: give mindcv.Mixup's num_classes",
        )
    for i, entry in enumerate(train.batch_transforms):
        name, kwargs = pipeline.split_entry(entry)
        if name == pipeline.MINDCV_MIXUP:
            yield from _mixup_rules(cfg, ("data", "train", "batch_transforms", i), kwargs, classes)


def _mixup_rules(
    cfg: Config, at: KeyPath, kwargs: dict[str, Any], classes: int | None
) -> Iterator[Violation]:
    """mindcv.Mixup at `at`: its class count, even batches, NCHW images."""
    train = cfg.data.train
    given = kwargs.get("num_classes", 1000)
    if classes is not None and given != classes:
        key = (*at, pipeline.MINDCV_MIXUP, "num_classes") if "num_classes" in kwargs else at
        yield key, f"mindcv.Mixup's num_classes is {given} but the network has {classes} classes"
    if train.batch_size % 2:
        yield ("data", "train", "batch_size"), "mindcv.Mixup needs an even batch size"
    if not drops_remainder(train, "train"):
        yield ("data", "train", "drop_remainder"), "mindcv.Mixup needs even batches: keep this true"
    pipelines = pipelines_of(cfg.data, "train")
    fixed = fixed_transforms(train)
    chw = (pipelines is not None and "HWC2CHW" in pipeline.names(pipelines.get("image", []))) or (
        fixed is not None and fixed.hwc_to_chw
    )
    if not chw:
        yield at, "mindcv.Mixup's cutmix slices NCHW images: the image pipeline must include HWC2CHW"


@rule("data")
def _eval_normalize_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    """data.eval must normalize its images when data.train does (else it evaluates on other inputs)."""
    spec = cfg.data.eval
    if spec is None or not hasattr(spec, "transforms"):
        return
    if _normalizes(cfg, "train") and not _normalizes(cfg, "eval"):
        key: KeyPath = (
            ("data", "eval", "transforms") if "transforms" in spec.model_fields_set else ("data", "eval")
        )
        yield (
            key,
            "data.train normalizes its images but data.eval does not: the network would be evaluated on "
            "inputs it was not trained on (add the same normalization to data.eval.transforms)",
        )


def _normalizes(cfg: Config, split: str) -> bool:
    pipelines = pipelines_of(cfg.data, split)
    if pipelines is not None:
        return any(n in ("Normalize", "NormalizePad") for n in pipeline.names(pipelines.get("image", [])))
    transforms = fixed_transforms(cfg.data.train if split == "train" else cfg.data.eval)
    return transforms is not None and transforms.normalize is not None


@rule("network", "data")
def _eval_shape_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    """data.eval's images against what the builtin network takes."""
    net, eval_spec = cfg.network, cfg.data.eval
    if not isinstance(net, BuiltinNetwork) or eval_spec is None:
        return
    reference: tuple[int, ...] | None = image_shape_of(cfg.data.train)
    where = "data.train"
    if net.input_shape:
        reference, where = tuple(net.input_shape), "network.input_shape"
    eval_shape = image_shape_of(eval_spec, pipelines_of(cfg.data, "eval"))
    if reference and eval_shape and eval_shape != reference:
        key, after = shape_source("eval", eval_spec)
        yield key, f"data.eval's images are {list(eval_shape)} {after}, but {where} is {list(reference)}"


def shape_source(split: str, spec: object) -> tuple[KeyPath, str]:
    """The key that sets data.`split`'s image shape, and the words that say where the shape comes from."""
    if isinstance(getattr(spec, "transforms", None), dict):
        return ("data", split, "transforms", "image"), "after its transforms"
    transforms = fixed_transforms(spec)
    if transforms is not None and transforms.resize:
        return ("data", split, "transforms", "resize"), "after transforms.resize"
    key: KeyPath = ("data", split, "image_shape") if getattr(spec, "image_shape", None) else ("data", split)
    return key, f"({getattr(spec, 'kind', '')})"


@rule("data")
def _column_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    """data.inputs + data.labels name every column of each source, in its order (the loops unpack them)."""
    data = cfg.data
    named: list[tuple[KeyPath, str]] = [(("data", "inputs", i), c) for i, c in enumerate(data.inputs)]
    named += [(("data", "labels", i), c) for i, c in enumerate(data.labels)]
    seen: set[str] = set()
    targets = set(data.inputs)  # labels: [image] names an input once: the input is the target
    for at, column in named:
        normal = python_name(column)  # the variable Python reads (NFKC): 'ｆeatures' is 'features'
        why = column_collision(normal)
        if why:
            yield at, why
        target_is_input = at[1] == "labels" and column in targets
        if target_is_input:
            targets.discard(column)
        if normal in seen and not target_is_input:
            yield at, f"column {column!r} is named twice in data.inputs and data.labels (as Python reads it)"
        seen.add(normal)
    for split, spec in splits(cfg):
        yield from _source_column_rules(data, split, spec, named)


def _source_column_rules(
    data: Data, split: str, spec: Dataset, named: list[tuple[KeyPath, str]]
) -> Iterator[Violation]:
    """The columns data.`split` yields against data.inputs + data.labels (`named`) and its transforms."""
    wanted, have = data.columns, batch_columns(data, spec)
    listed = isinstance(spec, ImportedData | CsvData)  # the config lists the source's columns
    where: KeyPath = ("data", split, "columns") if listed else ("data", split)
    if isinstance(spec, ImportedData):
        yield from _listed_column_rules(where, have)
    source = f"data.{split} ({spec.kind})"
    yield from _unknown_column_rules(data, named, have, source)
    missing = [c for c in have if c not in wanted]
    if missing and len(have) != len(wanted):  # same count: a misnamed column, reported above
        yield (
            where,
            f"{source} yields {len(have)} columns ({', '.join(have)}) but data.inputs + data.labels "
            f"name {len(wanted)} ({', '.join(wanted)}): {', '.join(missing)} would feed neither the network "
            "nor the loss (name every column in data.inputs or data.labels)",
        )
    elif set(have) == set(wanted) and have != wanted:
        yield (
            where,
            f"{source} yields its columns in the order {', '.join(have)} but the scripts unpack each batch "
            f"as data.inputs then data.labels ({', '.join(wanted)}): list them in the same order",
        )
    pipelines = getattr(spec, "transforms", None)
    if isinstance(pipelines, dict):
        for column in pipelines:
            if column not in have:
                yield (
                    ("data", split, "transforms", column),
                    f"{column!r} is not a column of {source}, whose columns are {', '.join(have)}"
                    + did_you_mean(column, have),
                )
    if spec.batch_transforms and wanted != BUILTIN_COLUMNS:
        yield (
            ("data", split, "batch_transforms"),
            "batch_transforms mix the image and label columns: they need data.inputs: [image] and "
            "data.labels: [label]",
        )


def _listed_column_rules(where: KeyPath, have: tuple[str, ...]) -> Iterator[Violation]:
    """The columns an imported source lists: names the scripts can use, each once."""
    for i, column in enumerate(have):
        why = column_collision(python_name(column))
        if why:
            yield (*where, i), why
        if column in have[:i]:
            yield (*where, i), f"column {column!r} is listed twice"


def _unknown_column_rules(
    data: Data, named: list[tuple[KeyPath, str]], have: tuple[str, ...], source: str
) -> Iterator[Violation]:
    """A column data.inputs or data.labels names that the source does not yield."""
    for at, column in named:
        if column not in have:
            unnamed = [c for c in have if c not in data.columns]
            hint = did_you_mean(column, unnamed)
            if not hint and unnamed and at[1] not in data.model_fields_set:  # the default [image] or [label]
                hint = f"; data.{at[1]} is [{column}] unless the config says otherwise, e.g. data.{at[1]}: [{unnamed[0]}]"
            yield at, f"{column!r} is not a column of {source}, whose columns are {', '.join(have)}" + hint


@rule("data")
def _decode_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    """An image folder read undecoded (decode: false) decodes in its first image op, and only there."""
    decoders = " or ".join(pipeline.DECODING_OPS)
    for split, spec in splits(cfg):
        if isinstance(spec, ImportedData):  # a factory may yield encoded bytes
            continue
        pipelines = pipelines_of(cfg.data, split)
        ops = pipeline.names((pipelines or {}).get("image", []))
        undecoded = isinstance(spec, ImageFolderData) and not spec.decode
        where: KeyPath = ("data", split, "transforms", "image")
        first_decodes = bool(ops) and ops[0] in pipeline.DECODING_OPS
        if undecoded and not first_decodes:
            own = "transforms" in spec.model_fields_set
            if pipelines is None:
                how = ", in the pipeline form of transforms"
            elif not own:
                how = " (without transforms, data.eval runs train's deterministic part: give it its own)"
            else:
                how = f", not {ops[0]}" if ops else ""
            yield (
                (*where, 0) if own and ops else ("data", split, "decode"),
                f"decode: false reads the files' bytes: data.{split}'s image pipeline must start with an op "
                f"that decodes them ({decoders}){how}",
            )
        for i, op in enumerate(ops):
            if op not in pipeline.DECODING_OPS or (undecoded and (i == 0 or not first_decodes)):
                continue
            if undecoded:
                why = f"the image is already decoded by {ops[0]}"
            elif isinstance(spec, ImageFolderData):
                why = f"data.{split} decodes the files (decode: false reads their bytes)"
            else:
                why = f"data.{split} ({spec.kind}) yields decoded images"
            yield (*where, i), f"{op} decodes a file's bytes, but {why}"


@rule("data", "loss", "eval")
def _many_labels_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    """Several label columns: a loss that takes them all, and metrics that need no single label."""
    labels = cfg.data.labels
    if len(labels) < 2 or isinstance(cfg.loss, HeadsLoss):  # one head per label: rules/heads.py
        return
    if not isinstance(cfg.loss, ImportedLoss):
        yield (
            ("data", "labels"),
            f"{len(labels)} label columns ({', '.join(labels)}) but {cfg.loss.name} takes one: use your own "
            "loss (loss: {kind: import, path: ...}), called as loss(logits, " + ", ".join(labels) + ")",
        )
    written = cfg.eval is not None and "metrics" in cfg.eval.model_fields_set
    for i, metric in enumerate(eval_metrics(cfg.eval, cfg.loss.name) if cfg.data.eval is not None else ()):
        if metric.key != "loss":
            yield (
                ("eval", "metrics", i) if written else ("data", "labels"),
                f"with {len(labels)} label columns (data.labels) only the loss is evaluated: a metric "
                f"comparing the network output with one label ({metric.key}) is not supported yet",
            )


@rule("data", "network", "amp")
def _many_inputs_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    """Several network inputs: an imported network that takes them; several columns: float32 cells."""
    inputs = cfg.data.inputs
    if cfg.data.target_is_input and cfg.amp.level != "O0":
        yield (
            ("amp", "level"),
            f"amp.level {cfg.amp.level} with the input as the target (data.labels: [{', '.join(cfg.data.labels)}]) "
            "is not supported: use amp.level O0",
        )
    elif len(inputs) + len(cfg.data.labels) > 2 and cfg.amp.level != "O0":
        yield (
            ("amp", "level"),
            f"amp.level {cfg.amp.level} takes one network input and one label column; data.inputs and "
            f"data.labels name {len(inputs)} and {len(cfg.data.labels)}: use amp.level O0 with several columns",
        )
    if len(inputs) > 1 and not isinstance(cfg.network, ImportedNetwork):
        yield (
            ("data", "inputs"),
            f"{len(inputs)} network inputs ({', '.join(inputs)}) but the {cfg.network.kind} network "
            f"{getattr(cfg.network, 'name', '')} takes one: use your own network (network.kind: import)",
        )


def chw_rules(cfg: Config | GanConfig, networks: str) -> Iterator[Violation]:
    """`networks` (the builtin ones, whose convolutions take CHW images) against data.train's pipeline."""
    pipelines = pipelines_of(cfg.data, "train")
    if pipelines is not None and "HWC2CHW" not in pipeline.names(pipelines.get("image", [])):
        yield (
            ("data", "train", "transforms", "image"),
            f"{networks} expect CHW images: end the image pipeline with HWC2CHW: {{}}",
        )
    transforms = fixed_transforms(cfg.data.train)
    if transforms is not None and not transforms.hwc_to_chw:
        yield ("data", "train", "transforms", "hwc_to_chw"), f"{networks} expect CHW images; keep it true"


@rule("data", "gan")
def _gan_class_names_rules(cfg: GanConfig, _config_dir: Path | None) -> Iterator[Violation]:
    if cfg.data.class_names is not None:
        yield ("data", "class_names"), "a GAN's predict.py samples images: it has no classes to name"


@rule("data", "network")
def _class_names_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    """data.class_names: one name per class of the network, each once."""
    names = cfg.data.class_names
    if names is None:
        return
    classes = getattr(cfg.network, "num_classes", None)
    if isinstance(classes, int) and len(names) != classes:
        yield (
            ("data", "class_names"),
            f"{len(names)} names for network.num_classes {classes}: give one per class",
        )
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        yield ("data", "class_names"), f"{', '.join(repeated)} named twice: each class needs its own name"


@rule("data")
def _mindcv_augment_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    """A mindcv.auto_augment policy that mindcv 0.3.0 builds (its grammar in the message), at `policy`."""
    for split, spec in splits(cfg):
        transforms = getattr(spec, "transforms", None)
        for column, entries in transforms.items() if isinstance(transforms, dict) else ():
            for i, entry in enumerate(entries or []):
                name, kwargs = pipeline.split_entry(entry)
                if name == mindcv_augment.NAME and (
                    problem := mindcv_augment.policy_problem(kwargs["policy"])
                ):
                    yield ("data", split, "transforms", column, i, name, "policy"), problem
