"""Plan of the setup both variants share: runtime, network, data, loss, learning rate, optimizer, metrics.

Every class here is frozen data: what a template prints, resolved from the config once.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from . import _pipeline
from ._literals import call, literal
from .schema import Config, image_shape_of, soft_label_classes
from .schema.data import (
    Cifar10Data,
    ImageFolderData,
    ImportedData,
    MnistData,
    ShuffleBuffer,
    _Loader,
    eval_pipelines_derived,
    fixed_transforms,
    pipelines_of,
)
from .schema.data import Dataset as DatasetSpec
from .schema.layers import layers_of
from .schema.network import BuiltinNetwork, Initializer, MindcvNetwork
from .schema.optim import CosineLR, ExponentialLR, ImportedLoss, OneCycleLR, PiecewiseLR, PolynomialLR
from .schema.training import ImportedMetric, TopKMetric, eval_metrics

OPTIMIZER_CLASSES = {
    "momentum": "Momentum",
    "sgd": "SGD",
    "adam": "Adam",
    "adamw": "AdamWeightDecay",
    "rmsprop": "RMSProp",
    "lamb": "Lamb",
    "lion": "Lion",
}
# Optimizers that are not in mindspore.nn: the module the script imports them from.
OPTIMIZER_MODULES = {"lion": "mindcv.optim.lion"}
METRIC_CLASSES = {
    "accuracy": "nn.Accuracy()",
    "loss": "nn.Loss()",
    "precision": "nn.Precision()",
    "recall": "nn.Recall()",
    "f1": "nn.F1()",
    "mae": "nn.MAE()",
    "mse": "nn.MSE()",
}
UINT8_SOURCES = ("mnist", "cifar10", "image_folder")


class Relative:
    """Paths from the config file's directory, as seen from the generated script's directory."""

    def __init__(self, config_dir: Path, out_dir: Path) -> None:
        self.config_dir = config_dir.resolve()
        self.out_dir = out_dir.resolve()

    def path(self, path: str) -> str:
        if Path(path).is_absolute():
            return Path(path).as_posix()
        return Path(os.path.relpath(self.config_dir / path, self.out_dir)).as_posix()

    def imported(self, import_path: str, key: str) -> ImportedName:
        """`module:attr` from the config; the config dir goes on sys.path if the module lives there."""
        module, _, attr = import_path.partition(":")
        top = self.config_dir / module.split(".")[0]
        local = top.with_suffix(".py").is_file() or (top / "__init__.py").is_file()
        sys_path = Path(os.path.relpath(self.config_dir, self.out_dir)).as_posix() if local else None
        return ImportedName(module=module, attr=attr, sys_path=sys_path, key=key)


@dataclass(frozen=True, slots=True)
class ImportedName:
    """`from module import attr` for a name the config points at (network.factory, grad.process, ...)."""

    module: str
    attr: str
    sys_path: str | None  # the config's directory relative to the script, or None: an installed module
    key: str  # the YAML key that names it


@dataclass(frozen=True, slots=True)
class Runtime:
    mode_const: str  # ms.GRAPH_MODE or ms.PYNATIVE_MODE (runtime.mode)
    device: str  # runtime.device_target: the default of --device
    cpu_threads: int | None
    max_device_memory: str | None
    memory_devices: tuple[str, ...]  # where runtime.max_device_memory applies (empty when unset)


@dataclass(frozen=True, slots=True)
class DenseLayer:
    name: str
    in_features: str  # an int literal or a parameter name
    out_features: str
    comment: str | None = None


@dataclass(frozen=True, slots=True)
class Network:
    kind: Literal["lenet5", "mlp", "mindcv", "import"]
    build_expr: str
    summary: str  # build_network()'s docstring
    short: str  # the script's docstring
    dense: tuple[DenseLayer, ...] = ()
    factory: ImportedName | None = None
    dense_init: str | None = None  # network.dense_init: the weight_init expression of the Dense layers
    conv_init: str | None = None  # network.conv_init (lenet5)


@dataclass(frozen=True, slots=True)
class Dataset:
    key: str  # data.train / data.eval
    function: str  # build_train_dataset
    call: str  # how train() calls it
    kind: str
    summary: str
    shuffle: bool
    sharded: bool  # data.train under data parallel: the function takes num_shards, shard_id
    arrays_call: str | None  # digits/synthetic: the numpy (images, labels) behind NumpySlicesDataset
    path: str | None  # file sources: relative to the script (or absolute)
    source_call: str  # the expression that makes the unbatched dataset
    factory: ImportedName | None  # data.*.factory
    shard_after: bool  # an imported factory's source dataset gets a DistributedSampler
    shuffle_after: bool  # ... and shuffled with .shuffle()
    image_ops: tuple[str, ...]
    num_workers: int
    label_cast: bool  # MNIST/CIFAR labels are uint32: cast to int32 for the loss
    batch_expr: str
    drop_remainder: bool
    column_ops: tuple[ColumnOps, ...] = ()  # data.*.transforms in the per-column pipeline form
    shuffle_buffer: int | None = None  # data.*.shuffle.buffer_size: dataset.shuffle() after the maps
    modules: tuple[str, ...] = ()  # what the pipelines' calls use: vision, transforms, text, ms, mindcv
    one_hot: tuple[str, ...] = ()  # label ops before batch() when labels are soft (batch_transforms)
    one_hot_comment: str = ""
    batch_ops: tuple[str, ...] = ()  # data.train.batch_transforms: maps on [image, label] after batch()


@dataclass(frozen=True, slots=True)
class ColumnOps:
    """One column's pipeline: `dataset.map([ops], input_columns=column)`."""

    column: str
    variable: str  # image_ops, label_ops
    ops: tuple[str, ...]  # Python calls, rendered from the config's entries by _pipeline.render
    comment: str  # where they come from


@dataclass(frozen=True, slots=True)
class Loss:
    name: str
    expr: str
    factory: ImportedName | None = None  # loss.path (kind: import)


@dataclass(frozen=True, slots=True)
class LRSchedule:
    kind: Literal[
        "constant", "piecewise", "cosine", "warmup_cosine", "exponential", "polynomial", "one_cycle"
    ]
    warmup: bool = False  # lr_schedule.warmup_epochs > 0 (exponential, polynomial, piecewise, cosine)
    epoch_stair: bool = False  # lr_schedule.epoch_stair
    anneal: Literal["cos", "linear"] = "cos"  # one_cycle: lr_schedule.anneal

    @property
    def is_list(self) -> bool:
        """One value per optimizer step (a list) rather than a constant."""
        return self.kind != "constant"


@dataclass(frozen=True, slots=True)
class Optimizer:
    name: str
    class_name: str
    decay_filter: bool  # optimizer.decay_filter no_norm_no_bias: parameter groups
    args: tuple[tuple[str, str], ...]  # (keyword, Python expression)
    decay_rule: str = "mindspore_default"  # optimizer.decay_filter, the deprecated `all` resolved
    decay_note: str | None = None  # why the filter reads as it does (a deprecated name)
    decays_expr: str = "True"  # optimizer.groups: does parameter `name` get its group's weight decay
    groups: tuple[OptimizerGroup, ...] = ()  # optimizer.groups, then the default group
    groups_key: str = "optimizer.groups"  # the key the groups come from: optimizer.groups or layer_decay
    module: str | None = None  # where class_name is imported from; None: mindspore.nn

    @property
    def constructor(self) -> str:
        """The expression the script calls: nn.Momentum, or the imported class itself (Lion)."""
        return self.class_name if self.module else f"nn.{self.class_name}"


@dataclass(frozen=True, slots=True)
class OptimizerGroup:
    """One optimizer.groups entry (or the default group): who is in it, its LR and weight decay."""

    name: str  # its key in the loss log's group_lr: groups[i] or default
    key: str  # the YAML key it comes from
    patterns: tuple[str, ...]  # fnmatch patterns; () for the default group
    lr_scale: str | None  # a float literal multiplying the schedule, None: the schedule itself
    weight_decay: str  # a float literal or WEIGHT_DECAY
    comment: str


# optimizer.decay_filter -> the condition (on a parameter's `name`) under which it is decayed.
DECAY_EXPRS = {
    "every_parameter": "True",
    "mindspore_default": '"beta" not in name and "gamma" not in name',
    "no_norm_no_bias": 'name.rsplit(".", 1)[-1] not in ("bias", "gamma", "beta")',
}


@dataclass(frozen=True, slots=True)
class Metric:
    key: str
    expr: str
    factory: ImportedName | None


def build_runtime(cfg: Config) -> Runtime:
    rt = cfg.runtime
    return Runtime(
        mode_const="ms.GRAPH_MODE" if rt.mode == "graph" else "ms.PYNATIVE_MODE",
        device=rt.device_target,
        cpu_threads=rt.cpu_threads,
        max_device_memory=rt.max_device_memory,
        memory_devices=("GPU", "Ascend") if rt.max_device_memory else (),
    )


def build_network(cfg: Config, rel: Relative) -> Network:
    net = cfg.network
    if isinstance(net, BuiltinNetwork):
        shape = tuple(net.input_shape) if net.input_shape else image_shape_of(cfg.data.train)
        assert shape is not None  # rules.py rejects configs where it is unknown
        channels, height, width = shape
        summary = f"{net.name}, input {channels}x{height}x{width}, {net.num_classes} classes"
        outs = [*(str(w) for w in net.hidden), "num_classes"]
        if net.name == "lenet5":
            side_h, side_w = ((height - 4) // 2 - 4) // 2, ((width - 4) // 2 - 4) // 2
            first = DenseLayer(
                "fc1",
                str(16 * side_h * side_w),
                outs[0],
                f"16 channels x {side_h} x {side_w} after conv2 + pool",
            )
            build = call("LeNet5", num_classes=net.num_classes, in_channels=channels)
        else:
            first = DenseLayer("fc1", "in_features", outs[0])
            build = call("MLP", num_classes=net.num_classes, in_features=channels * height * width)
        rest = tuple(DenseLayer(f"fc{i + 2}", outs[i], outs[i + 1]) for i in range(len(outs) - 1))
        return Network(
            net.name,
            build,
            summary,
            f"the builtin {net.name}",
            (first, *rest),
            dense_init=_initializer(net.dense_init),
            conv_init=_initializer(net.conv_init),
        )
    if isinstance(net, MindcvNetwork):
        build = call(
            "create_model", literal(net.name), num_classes=net.num_classes, pretrained=False, **net.kwargs
        )
        weights = "weights from network.checkpoint" if net.checkpoint else "no pretrained weights"
        summary = f"mindcv {net.name}, {net.num_classes} classes, {weights}"
        return Network("mindcv", build, summary, f"mindcv's {net.name}")
    factory = rel.imported(net.factory, "network.factory")
    return Network(
        "import",
        call(factory.attr, **net.kwargs),
        net.factory,
        f"{factory.attr} from {factory.module}",
        factory=factory,
    )


def _initializer(init: Initializer | None) -> str | None:
    if init is None:
        return None
    return call(f"initializer.{init.name}", **init.arguments())


def build_datasets(cfg: Config, rel: Relative) -> tuple[Dataset, ...]:
    """data.train (sharded under data parallel) and data.eval."""
    sharded = cfg.parallel.mode == "data_parallel"
    plans = [_with_pipelines(cfg, "train", _dataset(cfg.data.train, "train", rel, sharded=sharded))]
    if cfg.data.eval is not None:
        plans.append(_with_pipelines(cfg, "eval", _dataset(cfg.data.eval, "eval", rel, sharded=False)))
    return tuple(plans)


def _with_pipelines(cfg: Config, split: str, plan: Dataset) -> Dataset:
    """Add the per-column pipelines and the buffered shuffle to a dataset plan."""
    spec = cfg.data.train if split == "train" else cfg.data.eval
    pipelines = pipelines_of(cfg.data, split)
    buffer = (
        spec.shuffle.buffer_size
        if isinstance(spec, _Loader) and isinstance(spec.shuffle, ShuffleBuffer)
        else None
    )
    classes = soft_label_classes(cfg)
    if pipelines is None and buffer is None and classes is None:
        return plan
    columns: list[ColumnOps] = []
    used: set[str] = set()
    derived = split == "eval" and eval_pipelines_derived(cfg.data)
    for column, entries in (pipelines or {}).items():
        if not entries:
            continue
        comment = f"data.{split}.transforms.{column}"
        if derived:
            comment = f"data.train.transforms.{column} without its random ops"
        columns.append(
            ColumnOps(column, f"{column}_ops", tuple(_pipeline.render(e) for e in entries), comment)
        )
        used |= _pipeline.modules(entries)
    changes: dict[str, object] = {"column_ops": tuple(columns), "modules": tuple(sorted(used))}
    if pipelines is not None:
        changes["image_ops"] = ()  # the pipeline form adds nothing implicitly
        if plan.label_cast and _casts_to_int32(pipelines.get("label") or []):
            changes["label_cast"] = False  # the label pipeline already ends with the int32 cast
    if classes is not None:
        one_hot, batch_ops = _soft_labels(cfg, split, classes)
        changes.update(one_hot=one_hot, batch_ops=batch_ops, one_hot_comment=_ONE_HOT_COMMENTS[split])
        used |= {"transforms", "ms"} if one_hot else set()
        if split == "train":
            used |= _pipeline.batch_modules(cfg.data.train.batch_transforms)
        changes["modules"] = tuple(sorted(used))
    if buffer is not None:
        changes.update(shuffle_buffer=buffer, shuffle_after=False)
        in_source = (
            isinstance(spec, _Loader) and isinstance(spec.shuffle, ShuffleBuffer) and spec.shuffle.in_source
        )
        also = " (and in the source first)" if in_source else ""
        changes["summary"] = plan.summary.replace(
            "shuffled", f"shuffled through a buffer of {buffer} after the transforms{also}"
        )
    return replace(plan, **changes)  # type: ignore[arg-type]


def _casts_to_int32(entries: Sequence[_pipeline.Entry]) -> bool:
    """The pipeline's last op is TypeCast to int32 (as MindSpore's quick start writes the label cast)."""
    if not entries:
        return False
    name, params = _pipeline.split_entry(entries[-1])
    return name == "TypeCast" and params.get("data_type") == "int32"


def data_helpers(cfg: Config) -> tuple[str, ...]:
    """The numpy loaders the scripts define once: load_digits_split, make_synthetic."""
    kinds = {spec.kind for spec in (cfg.data.train, cfg.data.eval) if spec is not None}
    return tuple(kind for kind in ("digits", "synthetic") if kind in kinds)


_ONE_HOT_COMMENTS = {
    "train": "MixUpBatch/CutMixBatch take one-hot labels (data.train.batch_transforms)",
    "eval": "data.train.batch_transforms trains on soft labels: the loss takes one-hot labels here too",
}


def _soft_labels(cfg: Config, split: str, classes: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(label ops before batch, batch ops after it) when data.train.batch_transforms mixes batches."""
    entries = cfg.data.train.batch_transforms
    if split == "eval":
        return (call("transforms.OneHot", num_classes=classes), "transforms.TypeCast(ms.float32)"), ()
    needs = any(n in _pipeline.NEEDS_ONE_HOT for n in _pipeline.names(entries))
    one_hot = (call("transforms.OneHot", num_classes=classes),) if needs else ()
    return one_hot, tuple(_pipeline.render_batch(e) for e in entries)


def _dataset(spec: DatasetSpec, split: str, rel: Relative, *, sharded: bool) -> Dataset:
    shuffle = bool(spec.shuffle) if spec.shuffle is not None else split == "train"
    # a buffered shuffle happens after the maps (_with_pipelines), not in the source
    source_shuffle = shuffle and (not isinstance(spec.shuffle, ShuffleBuffer) or spec.shuffle.in_source)
    function = f"build_{split}_dataset"
    args: dict[str, object] = {}
    if spec.kind != "import":
        args = {"shuffle": source_shuffle, "num_parallel_workers": spec.num_workers}
    num_samples = getattr(spec, "num_samples", None)
    if num_samples and spec.kind in UINT8_SOURCES:
        args["num_samples"] = num_samples
    source_args = ", ".join(f"{k}={literal(v)}" for k, v in args.items())
    if sharded and spec.kind != "import":
        source_args += ", num_shards=num_shards, shard_id=shard_id"
    arrays_call = path = None
    factory = None
    if spec.kind == "digits":
        arrays_call = f"load_digits_split({literal(spec.split)}, {literal(spec.test_fraction)})"
    elif spec.kind == "synthetic":
        arrays_call = call(
            "make_synthetic",
            literal(spec.num_samples),
            literal(tuple(spec.image_shape)),
            literal(spec.num_classes),
            literal(spec.seed),
        )
    if arrays_call is not None:
        source = f'ds.NumpySlicesDataset({{"image": images, "label": labels}}, {source_args})'
    elif isinstance(spec, ImportedData):
        factory = rel.imported(spec.factory, f"data.{split}.factory")
        source = call(factory.attr, **spec.kwargs)
    elif isinstance(spec, MnistData | Cifar10Data):
        path = rel.path(spec.path)
        loader = "ds.MnistDataset" if isinstance(spec, MnistData) else "ds.Cifar10Dataset"
        source = f"{loader}(str(path), usage={literal(spec.usage)}, {source_args})"
    else:
        assert isinstance(spec, ImageFolderData)
        path = rel.path(spec.path)
        source = f"ds.ImageFolderDataset(str(path), decode=True, {source_args})"
    order = "shuffled" if shuffle else "in order"
    drop = ", last partial batch dropped" if spec.drop_remainder else ""
    if sharded:
        order = "one global shuffle order (runtime.seed)" if shuffle else "in order"
        summary = (
            f"shard shard_id of num_shards (one per worker), global batch {spec.batch_size} split evenly "
            f"over the workers, {order}{drop}"
        )
        batch = f"{literal(spec.batch_size)} // num_shards"
        call_expr = f"{function}(num_shards=group_size, shard_id=rank)"
    else:
        summary = f"batches of {spec.batch_size}, {order}{drop}"
        batch = literal(spec.batch_size)
        call_expr = f"{function}()"
    return Dataset(
        key=f"data.{split}",
        function=function,
        call=call_expr,
        kind=spec.kind,
        summary=summary,
        shuffle=shuffle,
        sharded=sharded,
        arrays_call=arrays_call,
        path=path,
        source_call=source,
        factory=factory,
        shard_after=sharded and factory is not None,
        shuffle_after=shuffle and factory is not None,
        image_ops=_image_ops(spec),
        num_workers=spec.num_workers,
        label_cast=spec.kind in ("mnist", "cifar10"),
        batch_expr=batch,
        drop_remainder=spec.drop_remainder,
    )


def _image_ops(spec: DatasetSpec) -> tuple[str, ...]:
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
    return tuple(ops)


def build_loss(cfg: Config, rel: Relative) -> Loss:
    if isinstance(cfg.loss, ImportedLoss):
        factory = rel.imported(cfg.loss.path, "loss.path")
        return Loss(
            f"{factory.module}:{factory.attr} (imported)", call(factory.attr, **cfg.loss.kwargs), factory
        )
    kwargs: dict[str, object] = {}
    if cfg.loss.kwargs is not None:
        kwargs = dict(cfg.loss.kwargs)
    elif cfg.loss.name == "SoftmaxCrossEntropyWithLogits":
        # data.train.batch_transforms: soft (one-hot) labels
        kwargs = {"sparse": soft_label_classes(cfg) is None, "reduction": "mean"}
    return Loss(cfg.loss.name, call(f"nn.{cfg.loss.name}", **kwargs))


def build_lr(cfg: Config) -> LRSchedule:
    schedule = cfg.lr_schedule
    if isinstance(schedule, ExponentialLR | PolynomialLR):
        return LRSchedule(schedule.kind, warmup=schedule.warmup_epochs > 0, epoch_stair=schedule.epoch_stair)
    if isinstance(schedule, PiecewiseLR | CosineLR):
        return LRSchedule(schedule.kind, warmup=schedule.warmup_epochs > 0)
    if isinstance(schedule, OneCycleLR):
        return LRSchedule(schedule.kind, anneal=schedule.anneal)
    return LRSchedule(schedule.kind)


def build_optimizer(cfg: Config, *, loss_scale_in_optimizer: bool) -> Optimizer:
    opt = cfg.optimizer
    args: list[tuple[str, str]] = []
    if opt.name in ("momentum", "sgd"):
        args.append(("momentum", literal(opt.momentum)))
    if opt.name == "sgd" and opt.dampening:
        args.append(("dampening", literal(opt.dampening)))
    if opt.name in ("momentum", "sgd") and opt.nesterov:
        args.append(("use_nesterov" if opt.name == "momentum" else "nesterov", "True"))
    if opt.name in ("adam", "adamw", "lamb"):
        args += [("beta1", literal(opt.beta1)), ("beta2", literal(opt.beta2)), ("eps", literal(opt.eps))]
    if opt.name == "lion":
        args += [("beta1", literal(opt.beta1)), ("beta2", literal(opt.beta2))]
    if opt.name == "rmsprop":
        args += [("decay", literal(opt.decay)), ("momentum", literal(opt.momentum))]
        args += [("epsilon", literal(opt.epsilon)), ("centered", literal(opt.centered))]
    rule = opt.decay_rule
    groups = _optimizer_groups(cfg)
    decay_filter = rule == "no_norm_no_bias" and not groups
    if opt.weight_decay and rule == "mindspore_default" and not groups:
        args.append(("weight_decay", "WEIGHT_DECAY"))
    if loss_scale_in_optimizer:
        args.append(("loss_scale", "LOSS_SCALE"))
    note = None
    if opt.decay_filter == "all":
        note = "decay_filter all is the deprecated name of mindspore_default (same meaning)"
    module = OPTIMIZER_MODULES.get(opt.name)
    return Optimizer(
        opt.name,
        OPTIMIZER_CLASSES[opt.name],
        decay_filter,
        tuple(args),
        decay_rule=rule,
        decay_note=note,
        decays_expr=DECAY_EXPRS[rule],
        groups=groups,
        groups_key="optimizer.layer_decay" if opt.layer_decay is not None else "optimizer.groups",
        module=module,
    )


def _optimizer_groups(cfg: Config) -> tuple[OptimizerGroup, ...]:
    opt = cfg.optimizer
    if opt.layer_decay is not None:
        return _layer_decay_groups(cfg, opt.layer_decay.rate)
    if not opt.groups:
        return ()
    out = []
    for i, g in enumerate(opt.groups):
        scale: float | None = g.lr_scale
        what = f"lr_scale {g.lr_scale}" if g.lr_scale is not None else "the schedule's LR"
        if g.lr is not None:
            scale = g.lr / opt.lr
            what = f"lr {g.lr} (the schedule x lr / optimizer.lr)"
        wd = "WEIGHT_DECAY" if g.weight_decay is None else literal(g.weight_decay)
        wd_what = "optimizer.weight_decay" if g.weight_decay is None else f"weight_decay {g.weight_decay}"
        out.append(
            OptimizerGroup(
                name=f"groups[{i}]",
                key=f"optimizer.groups[{i}]",
                patterns=tuple(g.params),
                lr_scale=None if scale is None else literal(scale),
                weight_decay=wd,
                comment=f"{', '.join(g.params)}: {what}, {wd_what}",
            )
        )
    out.append(
        OptimizerGroup(
            "default",
            "default group",
            (),
            None,
            "WEIGHT_DECAY",
            "every other parameter: the schedule, optimizer.weight_decay",
        )
    )
    return tuple(out)


def _layer_decay_groups(cfg: Config, rate: float) -> tuple[OptimizerGroup, ...]:
    """optimizer.layer_decay: a group per layer but the last (mscodegen.schema.layers), which is the default."""
    layers = layers_of(cfg.network)
    assert layers is not None  # rules.py rejects networks without layer ids
    last = len(layers) - 1
    out = [
        OptimizerGroup(
            name=f"layer_{i}",
            key="optimizer.layer_decay",
            patterns=layer.patterns,
            lr_scale=literal(rate ** (last - i)),
            weight_decay="WEIGHT_DECAY",
            comment=f"layer {i} of 0..{last} ({layer.what}): the schedule x rate ** {last - i}",
        )
        for i, layer in enumerate(layers[:-1])
    ]
    out.append(
        OptimizerGroup(
            "default",
            "default group",
            (),
            None,
            "WEIGHT_DECAY",
            f"layer {last} ({layers[-1].what}), every parameter no layer above matched: the schedule",
        )
    )
    return tuple(out)


def build_metrics(cfg: Config, rel: Relative) -> tuple[Metric, ...]:
    if cfg.data.eval is None:
        return ()
    out = []
    for i, m in enumerate(eval_metrics(cfg.eval, cfg.loss.name)):
        if isinstance(m, ImportedMetric):
            factory = rel.imported(m.cls, f"eval.metrics[{i}].class")
            out.append(Metric(m.key, call(factory.attr, **m.kwargs), factory))
        elif isinstance(m, TopKMetric):
            out.append(Metric(m.key, f"nn.TopKCategoricalAccuracy({m.k})", None))
        else:
            out.append(Metric(m.key, METRIC_CLASSES[m.name], None))
    return tuple(out)
