"""Rules that tie config sections together, and checks against the file system.

Each rule returns problems as (key path, message) so that the error points at the
key to change, with its line in the YAML file. Each rule names the sections it reads: when a
section fails the schema, the rules that do not read it still run (every problem at once).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path
from typing import Any

from mscodegen.catalog import pipeline
from mscodegen.catalog.suggest import did_you_mean
from mscodegen.schema import Config, image_shape_of, soft_label_classes
from mscodegen.schema._base import python_name
from mscodegen.schema.data import (
    BUILTIN_COLUMNS,
    Dataset,
    ImportedData,
    columns_of,
    fixed_transforms,
    pipelines_of,
)
from mscodegen.schema.layers import layers_of
from mscodegen.schema.names import collision, column_collision
from mscodegen.schema.network import BuiltinNetwork, ImportedNetwork, MindcvNetwork
from mscodegen.schema.optim import (
    CosineLR,
    ExponentialLR,
    ImportedLoss,
    PiecewiseLR,
    PolynomialLR,
    WarmupCosineLR,
)
from mscodegen.schema.precision import FixedLossScale
from mscodegen.schema.sources import class_count, sample_count
from mscodegen.schema.training import ImportedMetric, TopKMetric, eval_metrics

Path_ = tuple[str | int, ...]
Problem = tuple[Path_, str]
Rule = Callable[[Config, Path | None], Iterable[Problem]]

LENET5_MIN_SIZE = 16  # two (5x5 valid conv + 2x2 pool) stages need at least 16 pixels per side
MNIST_FILES = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}
# Losses that compare the network's output with a target of the same shape: class indices are not one.
REGRESSION_LOSSES = ("MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "BCEWithLogitsLoss")
# The top-level sections, and data.train alone: a broken data.eval leaves the rules that read only
# data.train running.
SECTIONS = frozenset({*Config.model_fields, "data.train"})

_RULES: list[tuple[frozenset[str], Rule]] = []


def _rule(*sections: str) -> Callable[[Rule], Rule]:
    """Register a rule that reads `sections` of the config (it runs only when they all validated)."""

    def register(rule: Rule) -> Rule:
        _RULES.append((frozenset(sections), rule))
        return rule

    return register


def cross_section_problems(
    cfg: Config, config_dir: Path | None = None, valid: Collection[str] = SECTIONS
) -> list[Problem]:
    """Every broken rule that involves more than one section.

    `config_dir` lets the rules count samples and classes of file sources (None: skip those).
    `valid`: the sections that passed the schema (the others are not looked at).
    """
    return [
        problem for sections, rule in _RULES if sections <= set(valid) for problem in rule(cfg, config_dir)
    ]


@_rule("callbacks", "data", "eval", "loss")
def _early_stopping_rules(cfg: Config, config_dir: Path | None) -> Iterator[Problem]:
    early = cfg.callbacks.early_stopping
    if early is None:
        return
    if cfg.data.eval is None:
        yield ("callbacks", "early_stopping"), "early stopping watches an evaluation metric: add data.eval"
        return
    keys = metric_keys(cfg)
    metric, dot, _ = early.monitor.partition(".")
    if dot and early.monitor not in keys:
        imported = [m.key for m in eval_metrics(cfg.eval, cfg.loss.name) if isinstance(m, ImportedMetric)]
        if metric not in imported:
            yield (
                ("callbacks", "early_stopping", "monitor"),
                (
                    f"{early.monitor!r}: only an imported metric can return a dict whose field is watched; "
                    f"{metric!r} is not one (imported metrics: {', '.join(imported) or 'none'})"
                ),
            )
    elif early.monitor not in keys:
        yield (
            ("callbacks", "early_stopping", "monitor"),
            (f"{early.monitor!r} is not an eval metric; eval.metrics gives: {', '.join(keys)}"),
        )


@_rule("ema", "grad", "loss_scale", "train")
def _ema_rules(cfg: Config, config_dir: Path | None) -> Iterator[Problem]:
    """The average follows optimizer steps: one per batch, none skipped, each seen by a callback."""
    if cfg.ema is None:
        return
    if cfg.grad.accumulation_steps > 1:
        yield (
            ("ema",),
            "ema with grad.accumulation_steps > 1 is not supported (the average follows every batch)",
        )
    if cfg.loss_scale.kind == "dynamic" or getattr(cfg.loss_scale, "drop_overflow_update", False):
        yield ("ema",), "ema with loss scaling that skips overflowing steps is not supported"
    if cfg.train.dataset_sink_mode:
        yield ("ema",), "ema needs train.dataset_sink_mode: false (Model's callbacks see every step)"


@_rule("callbacks", "data", "eval")
def _keep_best_rules(cfg: Config, config_dir: Path | None) -> Iterator[Problem]:
    ckpt = cfg.callbacks.checkpoint
    if ckpt is None or ckpt.keep is None:
        return
    if cfg.data.eval is None:
        yield (
            ("callbacks", "checkpoint", "keep"),
            "keeping the best checkpoints needs an evaluation: add data.eval",
        )
        return
    keys = metric_keys(cfg)
    if ckpt.keep.monitor not in keys:
        yield (
            ("callbacks", "checkpoint", "keep", "monitor"),
            (f"{ckpt.keep.monitor!r} is not an eval metric; eval.metrics gives: {', '.join(keys)}"),
        )


def metric_keys(cfg: Config) -> list[str]:
    """Names of the evaluation results, in order (the keys of Model.eval's dict)."""
    return [metric.key for metric in eval_metrics(cfg.eval, cfg.loss.name)]


@_rule("eval", "data")
def _eval_rules(cfg: Config, config_dir: Path | None) -> Iterator[Problem]:
    if cfg.eval is not None and cfg.data.eval is None:
        yield ("eval",), "eval is configured but there is no data.eval to evaluate on"
    if cfg.eval is not None:
        seen: set[str] = set()
        for i, key in enumerate(metric_keys(cfg)):
            if key in seen:
                yield ("eval", "metrics", i), f"metric {key!r} is listed twice"
            seen.add(key)


@_rule("lr_schedule", "train")
def _schedule_rules(cfg: Config, config_dir: Path | None) -> Iterator[Problem]:
    epochs, schedule = cfg.train.epochs, cfg.lr_schedule
    if isinstance(schedule, PiecewiseLR) and schedule.milestones[-1] >= epochs:
        yield (
            ("lr_schedule", "milestones"),
            (
                f"the last milestone ({schedule.milestones[-1]}) must be below train.epochs ({epochs}), "
                "or it never takes effect"
            ),
        )
    if (
        isinstance(schedule, WarmupCosineLR | ExponentialLR | PolynomialLR | PiecewiseLR | CosineLR)
        and schedule.warmup_epochs >= epochs
    ):
        yield (
            ("lr_schedule", "warmup_epochs"),
            (f"warm-up ({schedule.warmup_epochs} epochs) must be shorter than train.epochs ({epochs})"),
        )


@_rule("network", "data.train")
def _network_rules(cfg: Config, config_dir: Path | None) -> Iterator[Problem]:
    net = cfg.network
    if not isinstance(net, BuiltinNetwork):
        return
    transforms = fixed_transforms(cfg.data.train)
    pipelines = pipelines_of(cfg.data, "train")
    if pipelines is not None and "HWC2CHW" not in pipeline.names(pipelines.get("image", [])):
        yield (
            ("data", "train", "transforms", "image"),
            "builtin networks expect CHW images: end the image pipeline with HWC2CHW: {}",
        )
    if transforms is not None and not transforms.hwc_to_chw:
        yield (
            ("data", "train", "transforms", "hwc_to_chw"),
            "builtin networks expect CHW images; keep it true",
        )
    shape = tuple(net.input_shape) if net.input_shape else image_shape_of(cfg.data.train)
    if shape is None:
        yield (
            ("network",),
            (
                f"builtin {net.name} needs the input shape: set network.input_shape "
                "(or data.train.image_shape, or data.train.transforms.resize)"
            ),
        )
    elif net.name == "lenet5" and min(shape[1:]) < LENET5_MIN_SIZE:
        yield (
            ("network", "name"),
            (
                f"lenet5 needs images of at least {LENET5_MIN_SIZE}x{LENET5_MIN_SIZE} but data.train gives "
                f"{shape[1]}x{shape[2]}; add data.train.transforms.resize: [32, 32]"
            ),
        )


@_rule("amp")
def _amp_rules(cfg: Config, config_dir: Path | None) -> Iterator[Problem]:
    if cfg.amp.fp32_cells and cfg.amp.level == "O0":
        yield ("amp", "fp32_cells"), "has no effect with amp.level O0 (everything is float32)"
    if cfg.amp.keep_batchnorm_fp32 is not None and cfg.amp.level not in ("O2", "O3"):
        yield ("amp", "keep_batchnorm_fp32"), f"applies to amp.level O2 and O3, not {cfg.amp.level}"


@_rule("data")
def _shuffle_in_source_rules(cfg: Config, config_dir: Path | None) -> Iterator[Problem]:
    for split, spec in (("train", cfg.data.train), ("eval", cfg.data.eval)):
        shuffle = getattr(spec, "shuffle", None)
        if isinstance(spec, ImportedData) and getattr(shuffle, "in_source", False):
            yield (
                ("data", split, "shuffle", "in_source"),
                "the factory builds the source itself: shuffle it there (kind import has no source shuffle)",
            )


@_rule("optimizer", "network")
def _layer_decay_rules(cfg: Config, config_dir: Path | None) -> Iterator[Problem]:
    if cfg.optimizer.layer_decay is None:
        return
    if cfg.optimizer.groups:
        yield (
            ("optimizer", "layer_decay"),
            "builds one parameter group per layer itself; it cannot be combined with optimizer.groups",
        )
    if layers_of(cfg.network) is None:
        net = cfg.network
        what = f"{net.kind} network {getattr(net, 'name', '')}".rstrip()
        yield (
            ("optimizer", "layer_decay"),
            f"layer ids are defined for builtin lenet5 and mlp and mindcv vit_* models, not for the {what}; "
            "use optimizer.groups with lr_scale per name pattern instead",
        )


@_rule("optimizer", "runtime", "loss_scale")
def _optimizer_device_rules(cfg: Config, config_dir: Path | None) -> Iterator[Problem]:
    """Optimizers that MindSpore 2.10 cannot run as configured."""
    if cfg.optimizer.name != "lamb":
        return
    if cfg.runtime.device_target == "CPU":
        yield (
            ("optimizer", "name"),
            "lamb: nn.Lamb's kernel has no CPU implementation in MindSpore 2.10 (Unsupported op [Lamb] on "
            "CPU); use runtime.device_target GPU or Ascend, or another optimizer (adamw, lion)",
        )
    ls = cfg.loss_scale
    if isinstance(ls, FixedLossScale) and not ls.drop_overflow_update:
        yield (
            ("loss_scale", "drop_overflow_update"),
            "lamb: nn.Lamb takes no loss_scale, so a fixed loss scale needs drop_overflow_update: true "
            "(the gradients are unscaled before the optimizer)",
        )


@_rule("grad", "data.train", "train", "parallel")
def _accumulation_rules(cfg: Config, config_dir: Path | None) -> Iterator[Problem]:
    k = cfg.grad.accumulation_steps
    if k > 1 and not cfg.data.train.drop_remainder:
        yield (
            ("data", "train", "drop_remainder"),
            (
                f"grad.accumulation_steps ({k}) averages micro-batch gradients with equal weights 1/{k}; "
                "a smaller last batch would be over-weighted: keep drop_remainder true"
            ),
        )
    batches = known_train_batches(cfg, config_dir)
    if k > 1 and batches and k > batches * cfg.train.epochs:
        yield (
            ("grad", "accumulation_steps"),
            (
                f"{k} is more than the {batches * cfg.train.epochs} batches of the whole run "
                f"({batches} per epoch x {cfg.train.epochs} epochs): no optimizer step would ever be taken"
            ),
        )


def known_train_batches(cfg: Config, config_dir: Path | None = None) -> int | None:
    """Batches per epoch (per shard) of data.train when the config, or a cheap look at files, tells it."""
    batches = _batches(cfg.data.train, config_dir, cfg.parallel.workers if _sharded(cfg) else 1)
    return None if batches is None else batches[0]


def _sharded(cfg: Config) -> bool:
    return cfg.parallel.mode == "data_parallel" and cfg.parallel.workers > 1


def _batches(spec: Dataset, config_dir: Path | None, shards: int) -> tuple[int, str, int, int] | None:
    """(batches, why, samples per shard, batch per shard) of one epoch of `spec`, or None."""
    if isinstance(spec, ImportedData):
        return None
    if config_dir is None and hasattr(spec, "path"):
        return None
    count = sample_count(spec, config_dir or Path())
    if count is None:
        return None
    samples = -(-count.value // shards)  # the distributed sampler pads every shard to the same size
    batch = max(spec.batch_size // shards, 1)
    drop = spec.drop_remainder
    return (samples // batch if drop else -(-samples // batch)), count.why, samples, batch


@_rule("parallel", "data.train")
def _parallel_rules(cfg: Config, config_dir: Path | None) -> Iterator[Problem]:
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
                (
                    f"{dataset.batch_size} is the global batch and must divide evenly over "
                    f"parallel.workers ({par.workers})"
                ),
            )


@_rule("data", "parallel")
def _empty_epoch_rules(cfg: Config, config_dir: Path | None) -> Iterator[Problem]:
    """An epoch of zero batches: the native loop would train 0 steps (and exit 0), Model.train raises."""
    for split in ("train", "eval"):
        spec = getattr(cfg.data, split)
        shards = cfg.parallel.workers if split == "train" and _sharded(cfg) else 1
        found = None if spec is None else _batches(spec, config_dir, shards)
        if found is None or found[0] > 0:
            continue
        _, why, samples, batch = found
        per = f" per shard ({cfg.parallel.workers} workers)" if shards > 1 else ""
        cause = f"{samples} samples{per} ({why})"
        doing = "trains 0 steps" if split == "train" else "evaluates on nothing"
        if samples == 0:
            yield (("data", split), f"data.{split} is empty: {cause}; the script {doing}")
        else:
            yield (
                ("data", split, "batch_size"),
                (
                    f"{cause} make no full batch of {batch}{per} with drop_remainder: the script {doing}; "
                    "lower batch_size or set drop_remainder: false"
                ),
            )


def _network_classes(cfg: Config) -> tuple[int, Path_] | None:
    """network's output size and the key that sets it, when known."""
    net = cfg.network
    if isinstance(net, (BuiltinNetwork, MindcvNetwork)):
        return net.num_classes, ("network", "num_classes")
    for key, value in net.kwargs.items():
        if python_name(key) == "num_classes" and isinstance(value, int) and not isinstance(value, bool):
            return value, ("network", "kwargs", key)
    return None


def _classifies(cfg: Config) -> bool:
    return cfg.loss.name not in REGRESSION_LOSSES and not isinstance(cfg.loss, ImportedLoss)


@_rule("network", "data", "loss")
def _class_rules(cfg: Config, config_dir: Path | None) -> Iterator[Problem]:
    """Labels the loss cannot take: beyond network.num_classes (an error, or an inf loss when equal)."""
    known = _network_classes(cfg)
    if known is None or not _classifies(cfg):
        return
    classes, key = known
    for split in ("train", "eval"):
        spec = getattr(cfg.data, split)
        if spec is None or (config_dir is None and hasattr(spec, "path")):
            continue
        count = class_count(spec, config_dir or Path())
        if count is not None and count.value > classes:
            yield (
                key,
                (
                    f"data.{split} has labels 0..{count.value - 1} ({count.why}) but the network has "
                    f"{classes} outputs: set {'.'.join(map(str, key))} to at least {count.value}"
                ),
            )


@_rule("network", "eval")
def _top_k_rules(cfg: Config, config_dir: Path | None) -> Iterator[Problem]:
    known = _network_classes(cfg)
    if known is None or cfg.eval is None:
        return
    classes = known[0]
    for i, metric in enumerate(cfg.eval.metrics):
        if isinstance(metric, TopKMetric) and metric.k >= classes:
            effect = "always 1.0" if metric.k == classes else "an error (fewer scores than k)"
            yield (
                ("eval", "metrics", i, "k"),
                f"top_{metric.k} of {classes} classes ({'.'.join(map(str, known[1]))}) is {effect}; "
                f"use k < {classes}",
            )


@_rule("loss", "data.train")
def _loss_label_rules(cfg: Config, config_dir: Path | None) -> Iterator[Problem]:
    """Class-index labels (every built-in source yields int32 class indices) need a classification loss."""
    spec = cfg.data.train
    if isinstance(spec, ImportedData):
        return
    if cfg.loss.name in REGRESSION_LOSSES:
        yield (
            ("loss", "name"),
            (
                f"{cfg.loss.name} compares the output with a target of the same shape, but data.train "
                f"({spec.kind}) yields class indices: use SoftmaxCrossEntropyWithLogits or CrossEntropyLoss "
                "(or your own dataset with kind: import)"
            ),
        )
    kwargs = cfg.loss.kwargs or {}
    for key, value in kwargs.items():
        if cfg.loss.name == "SoftmaxCrossEntropyWithLogits" and python_name(key) == "sparse" and not value:
            yield (
                ("loss", "kwargs", key),
                f"sparse: false expects one-hot labels, but data.train ({spec.kind}) yields class indices",
            )


@_rule("network", "data.train")
def _input_shape_rules(cfg: Config, config_dir: Path | None) -> Iterator[Problem]:
    """network.input_shape (or a mindcv model's channels) against data.train's images after transforms."""
    net = cfg.network
    train_shape = image_shape_of(cfg.data.train)
    if train_shape is None:
        return
    if isinstance(net, BuiltinNetwork) and net.input_shape and tuple(net.input_shape) != train_shape:
        yield (
            ("network", "input_shape"),
            f"{net.input_shape} contradicts data.train, whose images are {list(train_shape)} "
            f"{_after(cfg.data.train)}",
        )
    if isinstance(net, MindcvNetwork):
        in_channels = 3
        key: Path_ = ("network",)
        for name, value in net.kwargs.items():
            if python_name(name) == "in_channels" and isinstance(value, int):
                in_channels, key = value, ("network", "kwargs", name)
        if train_shape[0] != in_channels:
            yield (
                key,
                (
                    f"mindcv's {net.name} takes {in_channels}-channel images but data.train gives "
                    f"{train_shape[0]} channels: set network.kwargs.in_channels: {train_shape[0]}"
                ),
            )


SOFT_LABEL_LOSSES = ("SoftmaxCrossEntropyWithLogits", "CrossEntropyLoss")


@_rule("network", "data", "loss")
def _batch_transform_rules(cfg: Config, config_dir: Path | None) -> Iterator[Problem]:
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
        at: Path_ = ("data", "train", "batch_transforms", i)
        if name != pipeline.MINDCV_MIXUP:
            continue
        given = kwargs.get("num_classes", 1000)
        if classes is not None and given != classes:
            key = (*at, name, "num_classes") if "num_classes" in kwargs else at
            yield key, f"mindcv.Mixup's num_classes is {given} but the network has {classes} classes"
        if train.batch_size % 2:
            yield ("data", "train", "batch_size"), "mindcv.Mixup needs an even batch size"
        if not train.drop_remainder:
            yield ("data", "train", "drop_remainder"), "mindcv.Mixup needs even batches: keep this true"
        pipelines = pipelines_of(cfg.data, "train")
        fixed = fixed_transforms(train)
        chw = (pipelines is not None and "HWC2CHW" in pipeline.names(pipelines.get("image", []))) or (
            fixed is not None and fixed.hwc_to_chw
        )
        if not chw:
            yield at, "mindcv.Mixup's cutmix slices NCHW images: the image pipeline must include HWC2CHW"


@_rule("data")
def _eval_normalize_rules(cfg: Config, config_dir: Path | None) -> Iterator[Problem]:
    """data.eval must normalize its images when data.train does (else it evaluates on other inputs)."""
    spec = cfg.data.eval
    if spec is None or not hasattr(spec, "transforms"):
        return
    if _normalizes(cfg, "train") and not _normalizes(cfg, "eval"):
        key: Path_ = (
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


@_rule("network", "data")
def _eval_shape_rules(cfg: Config, config_dir: Path | None) -> Iterator[Problem]:
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
        yield (
            _shape_key("eval", eval_spec),
            f"data.eval's images are {list(eval_shape)} {_after(eval_spec)}, but {where} is {list(reference)}",
        )


def _after(spec: object) -> str:
    if isinstance(getattr(spec, "transforms", None), dict):
        return "after its transforms"
    transforms = fixed_transforms(spec)
    if transforms is not None and transforms.resize:
        return "after transforms.resize"
    return f"({getattr(spec, 'kind', '')})"


def _shape_key(split: str, spec: object) -> Path_:
    if isinstance(getattr(spec, "transforms", None), dict):
        return ("data", split, "transforms", "image")
    transforms = fixed_transforms(spec)
    if transforms is not None and transforms.resize:
        return ("data", split, "transforms", "resize")
    if getattr(spec, "image_shape", None):
        return ("data", split, "image_shape")
    return ("data", split)


def _valid_splits(valid: Collection[str]) -> tuple[str, ...]:
    """The data splits that passed the schema."""
    return ("train", "eval") if "data" in valid else ("train",) if "data.train" in valid else ()


def _kwargs_sites(cfg: Config, valid: Collection[str]) -> Iterator[tuple[Path_, dict[str, object]]]:
    if "network" in valid and not isinstance(cfg.network, BuiltinNetwork):
        yield ("network", "kwargs"), cfg.network.kwargs
    for split in _valid_splits(valid):
        spec = getattr(cfg.data, split)
        if isinstance(spec, ImportedData):
            yield ("data", split, "kwargs"), spec.kwargs
    if "loss" in valid and cfg.loss.kwargs:
        yield ("loss", "kwargs"), cfg.loss.kwargs
    if "eval" in valid and cfg.eval is not None:
        for i, metric in enumerate(cfg.eval.metrics):
            if isinstance(metric, ImportedMetric):
                yield ("eval", "metrics", i, "kwargs"), metric.kwargs


def identifier_problems(cfg: Config, valid: Collection[str] = SECTIONS) -> list[Problem]:
    """Keyword names that Python reads as one (NFKC), and imported names that shadow the script's own."""
    problems: list[Problem] = []
    for at, kwargs in _kwargs_sites(cfg, valid):
        seen: dict[str, str] = {}
        for key in kwargs:
            normal = python_name(key)
            if normal in seen:
                problems.append(
                    (
                        (*at, key),
                        f"{key!r} and {seen[normal]!r} are the same keyword argument {normal!r} to Python "
                        "(it NFKC-normalizes identifiers)",
                    )
                )
            seen.setdefault(normal, key)
    for at, path in _import_sites(cfg, valid):
        name = path.partition(":")[2]
        why = collision(name)
        if why:
            problems.append((at, why))
    return problems


def _import_sites(cfg: Config, valid: Collection[str]) -> Iterator[tuple[Path_, str]]:
    if "network" in valid and isinstance(cfg.network, ImportedNetwork):
        yield ("network", "factory"), cfg.network.factory
    for split in _valid_splits(valid):
        spec = getattr(cfg.data, split)
        if isinstance(spec, ImportedData):
            yield ("data", split, "factory"), spec.factory
    if "eval" in valid and cfg.eval is not None:
        for i, metric in enumerate(cfg.eval.metrics):
            if isinstance(metric, ImportedMetric):
                yield ("eval", "metrics", i, "class"), metric.cls
    if "grad" in valid and cfg.grad.process:
        yield ("grad", "process"), cfg.grad.process
    if "loss" in valid and isinstance(cfg.loss, ImportedLoss):
        yield ("loss", "path"), cfg.loss.path


def file_problems(cfg: Config, config_dir: Path, valid: Collection[str] = SECTIONS) -> list[Problem]:
    """Data directories that do not exist, import paths that do not resolve."""
    problems: list[Problem] = []
    for split in _valid_splits(valid):
        dataset = getattr(cfg.data, split)
        if dataset is None:
            continue
        if hasattr(dataset, "path"):
            problems += _data_dir_problems(dataset, ("data", split), config_dir)
        if isinstance(dataset, ImportedData):
            problems += _import_problems(
                dataset.factory, ("data", split, "factory"), config_dir, dataset.kwargs
            )
    if "network" in valid and isinstance(cfg.network, ImportedNetwork):
        net = cfg.network
        problems += _import_problems(net.factory, ("network", "factory"), config_dir, net.kwargs)
    for i, metric in enumerate(cfg.eval.metrics if "eval" in valid and cfg.eval else []):
        if isinstance(metric, ImportedMetric):
            problems += _import_problems(
                metric.cls, ("eval", "metrics", i, "class"), config_dir, metric.kwargs
            )
    if "grad" in valid and cfg.grad.process:
        problems += _import_problems(cfg.grad.process, ("grad", "process"), config_dir)
    if "loss" in valid and isinstance(cfg.loss, ImportedLoss):
        problems += _import_problems(cfg.loss.path, ("loss", "path"), config_dir, cfg.loss.kwargs)
    return problems


def weight_file_problems(cfg: Config, config_dir: Path) -> list[Problem]:
    """Files only the scripts read, when they run: checked by `mscodegen validate`, not by `new`
    (weights may be downloaded after generating; the script then stops with the same message).

    network.checkpoint.path must be a file (relative to the config).
    """
    if cfg.network.checkpoint is None:
        return []
    path = cfg.network.checkpoint.path
    file = config_dir / path
    if file.is_file():
        return []
    what = "is a directory, not a file" if file.is_dir() else "does not exist"
    return [(("network", "checkpoint", "path"), f"checkpoint file {path!r} {what} (looked in {file})")]


def _data_dir_problems(dataset: Any, at: Path_, config_dir: Path) -> list[Problem]:
    directory = config_dir / dataset.path
    if not directory.is_dir():
        return [(at + ("path",), f"directory {dataset.path!r} does not exist (looked in {directory})")]
    if dataset.kind == "mnist":
        usages = ("train", "test") if dataset.usage == "all" else (dataset.usage,)
        missing = [name for u in usages for name in MNIST_FILES[u] if not (directory / name).is_file()]
        if missing:
            return [(at + ("path",), f"MNIST file(s) missing in {directory}: {', '.join(missing)}")]
    if dataset.kind == "cifar10" and not any(directory.glob("*.bin")):
        return [(at + ("path",), f"no CIFAR-10 binary batches (*.bin) in {directory}")]
    if dataset.kind == "image_folder" and not any(p.is_dir() for p in directory.iterdir()):
        return [
            (at + ("path",), f"no class sub-directories (one per class, holding its images) in {directory}")
        ]
    return []


def find_module_file(module: str, config_dir: Path) -> Path | None:
    """Where `module` would be imported from (next to the config, then sys.path), without importing it."""
    parts = module.split(".")
    for root in [config_dir, *(Path(p) for p in sys.path if p)]:
        base = root.joinpath(*parts)
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


def _import_problems(
    path: str, at: Path_, config_dir: Path, kwargs: dict[str, Any] | None = None
) -> list[Problem]:
    module, _, attr = path.partition(":")
    source = find_module_file(module, config_dir)
    if source is None:
        return [(at, f"cannot find module {module!r} (looked next to the config file and on sys.path)")]
    try:
        tree = ast.parse(source.read_text(encoding="utf-8"), filename=str(source))
    except (SyntaxError, UnicodeDecodeError) as exc:
        return [(at, f"module {module!r} ({source}) does not parse: {exc}")]
    names = _top_level_names(tree)
    if attr not in names and "*" not in names and "__getattr__" not in names:  # star imports: cannot tell
        return [(at, f"module {module!r} ({source}) defines no top-level {attr!r}")]
    return _keyword_problems(tree, attr, at[:-1], kwargs or {})


def _keyword_problems(tree: ast.Module, attr: str, owner: Path_, kwargs: dict[str, Any]) -> list[Problem]:
    """kwargs the called object's signature does not take (read from its source, never imported).

    Only a plain function, or a class with its own __init__, without decorators and **kwargs is
    judged; anything else (a base class's __init__, a decorator, an assignment) cannot be told.
    """
    params = _keyword_parameters(tree, attr)
    if params is None:
        return []
    problems: list[Problem] = []
    for key in kwargs:
        name = python_name(key)
        if name not in params:
            hint = did_you_mean(name, params)
            takes = ", ".join(sorted(params)) or "none"
            problems.append(
                (
                    (*owner, "kwargs", key),
                    f"{attr}() takes no keyword argument {name!r} (it takes: {takes}){hint}",
                )
            )
    return problems


def _keyword_parameters(tree: ast.Module, attr: str) -> set[str] | None:
    """Names `attr` accepts as keywords, or None when that cannot be read reliably."""
    definitions = [
        node
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == attr
    ]
    others = [
        node for node in tree.body if attr in _top_level_names(ast.Module(body=[node], type_ignores=[]))
    ]
    if len(definitions) != 1 or len(others) != 1 or definitions[0].decorator_list:
        return None  # redefined, imported, or decorated: the signature is not this one
    node = definitions[0]
    if isinstance(node, ast.ClassDef):
        inits = [n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"]
        if len(inits) != 1 or inits[0].decorator_list:
            return None  # inherited __init__ (nn.Cell's subclasses, dataclasses): unknown here
        arguments, skip = inits[0].args, 1  # self
    else:
        arguments, skip = node.args, 0
    if arguments.kwarg is not None:
        return None
    return {a.arg for a in [*arguments.args[skip:], *arguments.kwonlyargs]}


def _top_level_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


@_rule("data")
def _column_rules(cfg: Config, config_dir: Path | None) -> Iterator[Problem]:
    """data.inputs + data.labels name every column of each source, in its order (the loops unpack them)."""
    data = cfg.data
    named: list[tuple[Path_, str]] = [(("data", "inputs", i), c) for i, c in enumerate(data.inputs)]
    named += [(("data", "labels", i), c) for i, c in enumerate(data.labels)]
    seen: set[str] = set()
    for at, column in named:
        normal = python_name(column)  # the variable Python reads (NFKC): 'ｆeatures' is 'features'
        why = column_collision(normal)
        if why:
            yield at, why
        if normal in seen:
            yield at, f"column {column!r} is named twice in data.inputs and data.labels (as Python reads it)"
        seen.add(normal)
    wanted = data.columns
    for split in ("train", "eval"):
        spec = getattr(data, split)
        if spec is None:
            continue
        have = columns_of(spec)
        where: Path_ = ("data", split, "columns") if isinstance(spec, ImportedData) else ("data", split)
        if isinstance(spec, ImportedData):
            for i, column in enumerate(have):
                why = column_collision(python_name(column))
                if why:
                    yield (*where, i), why
                if column in have[:i]:
                    yield (*where, i), f"column {column!r} is listed twice"
        source = f"data.{split} ({spec.kind})"
        for at, column in named:
            if column not in have:
                yield (
                    at,
                    f"{column!r} is not a column of {source}, whose columns are {', '.join(have)}"
                    + did_you_mean(column, [c for c in have if c not in wanted]),
                )
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


@_rule("data", "loss", "eval")
def _many_labels_rules(cfg: Config, config_dir: Path | None) -> Iterator[Problem]:
    """Several label columns: a loss that takes them all, and metrics that need no single label."""
    labels = cfg.data.labels
    if len(labels) < 2:
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


@_rule("data", "network", "amp")
def _many_inputs_rules(cfg: Config, config_dir: Path | None) -> Iterator[Problem]:
    """Several network inputs: an imported network that takes them; several columns: float32 cells."""
    inputs = cfg.data.inputs
    if len(inputs) + len(cfg.data.labels) > 2 and cfg.amp.level != "O0":
        yield (
            ("amp", "level"),
            f"amp.level {cfg.amp.level} with {len(cfg.data.columns)} columns (data.inputs, data.labels) is not "
            "supported yet: use O0",
        )
    if len(inputs) < 2:
        return
    if not isinstance(cfg.network, ImportedNetwork):
        yield (
            ("data", "inputs"),
            f"{len(inputs)} network inputs ({', '.join(inputs)}) but the {cfg.network.kind} network "
            f"{getattr(cfg.network, 'name', '')} takes one: use your own network (network.kind: import)",
        )
