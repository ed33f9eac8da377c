"""Plan of the setup both variants share: runtime, network, data, loss, learning rate, optimizer, metrics.

Every class here is frozen data: what a template prints, resolved from the config once.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from mscodegen.catalog.literals import Call, Name
from mscodegen.catalog.losses import tensor_list
from mscodegen.catalog.mindcv_names import returns_aux_logits
from mscodegen.catalog.pipeline import names as pipeline_names
from mscodegen.schema import Config, image_shape_of, soft_label_classes
from mscodegen.schema.data import CsvData, pipelines_of
from mscodegen.schema.gan import GanConfig
from mscodegen.schema.layers import layers_of
from mscodegen.schema.names import RESERVED_NAMES
from mscodegen.schema.network import BuiltinNetwork, ImportedNetwork, Initializer, MindcvNetwork
from mscodegen.schema.network import Network as NetworkSection
from mscodegen.schema.optim import (
    CosineLR,
    DecayRule,
    ExponentialLR,
    ImportedLoss,
    OneCycleLR,
    PiecewiseLR,
    PolynomialLR,
    WarmupCosineLR,
    head_losses,
)
from mscodegen.schema.optim import Optimizer as OptimizerSection
from mscodegen.schema.training import BuiltinMetric, ImportedMetric, TopKMetric, eval_metrics

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
# adamw with bias_correction: mindcv's AdamW (nn.AdamWeightDecay corrects no bias; nn has no other)
ADAMW_CORRECTED = ("AdamW", "mindcv.optim.adamw")


def optimizer_class(opt: OptimizerSection) -> tuple[str, str | None]:
    """The class an optimizer section trains with and its module (None: mindspore.nn)."""
    if opt.name == "adamw" and opt.bias_correction:
        return ADAMW_CORRECTED
    return OPTIMIZER_CLASSES[opt.name], OPTIMIZER_MODULES.get(opt.name)


METRIC_CLASSES = {
    "accuracy": Call("nn.Accuracy"),
    "loss": Call("nn.Loss"),
    "precision": Call("nn.Precision"),
    "recall": Call("nn.Recall"),
    "f1": Call("nn.F1"),
    "mae": Call("nn.MAE"),
    "mse": Call("nn.MSE"),
    # one logit per sample (BCEWithLogitsLoss): classes the script writes (templates/_loop.py.j2)
    **{f"binary_{m}": Call("BinaryMetric", (m,)) for m in ("accuracy", "precision", "recall", "f1")},
    "auc": Call("AUC"),
}


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
        return ImportedName(module=module, attr=attr, sys_path=sys_path, key=key, alias=_alias(attr))


def _alias(attr: str) -> str:
    """The name a user object is imported as when its own would shadow one of the script's (a network
    class MLP, a factory shapes): UserMLP, user_shapes; "" when its own name is safe to bind."""
    if attr not in RESERVED_NAMES:
        return ""
    alias = f"User{attr}" if attr[:1].isupper() else f"user_{attr}"
    while alias in RESERVED_NAMES:  # no script name starts so today; this keeps it true
        alias += "_"
    return alias


@dataclass(frozen=True, slots=True)
class ImportedName:
    """`from module import attr` for a name the config points at (network.factory, grad.process, ...)."""

    module: str
    attr: str
    sys_path: str | None  # the config's directory relative to the script, or None: an installed module
    key: str  # the YAML key that names it
    alias: str = ""  # `import attr as alias`: attr is one of the script's own names (schema/names.py)

    @property
    def bound(self) -> str:
        """The name the script calls it by."""
        return self.alias or self.attr


@dataclass(frozen=True, slots=True)
class Runtime:
    mode: Literal["GRAPH_MODE", "PYNATIVE_MODE"]  # runtime.mode: the mindspore constant
    device: str  # runtime.device_target: the default of --device
    cpu_threads: int | None
    max_device_memory: str | None
    memory_devices: tuple[str, ...]  # where runtime.max_device_memory applies (empty when unset)


@dataclass(frozen=True, slots=True)
class DenseLayer:
    name: str
    in_features: tuple[int | str, ...]  # multiplied: numbers or the class's parameter names
    out_features: int | str  # a number or num_classes


@dataclass(frozen=True, slots=True)
class Network:
    kind: Literal["lenet5", "mlp", "mindcv", "import"]
    call: Call  # what build_network() calls
    summary: str  # build_network()'s docstring
    short: str  # the script's docstring
    dense: tuple[DenseLayer, ...] = ()
    factory: ImportedName | None = None
    dense_init: Call | None = None  # network.dense_init: the weight_init of the Dense layers
    conv_init: Call | None = None  # network.conv_init (lenet5)
    # the classes the script writes; MainLogits: a mindcv model that also returns auxiliary logits in training
    classes: tuple[Literal["LeNet5", "MLP", "MainLogits"], ...] = ()


@dataclass(frozen=True, slots=True)
class Loss:
    call: Call
    factory: ImportedName | None = None  # loss.path (kind: import)
    # nn.FocalLoss on class-index labels: it takes them as (N, 1), so the script writes FocalLossOnIndices
    on_indices: bool = False
    # network.aux_factor: AuxLogitsLoss(loss) adds AUX_FACTOR x the auxiliary logits' losses, as mindcv's loss
    aux_logits: bool = False


@dataclass(frozen=True, slots=True)
class LRSchedule:
    kind: Literal[
        "constant", "piecewise", "cosine", "warmup_cosine", "exponential", "polynomial", "one_cycle"
    ]
    warmup: bool = False  # a linear warm-up first: warmup_cosine, or lr_schedule.warmup_epochs > 0
    epoch_stair: bool = False  # lr_schedule.epoch_stair: the LR moves once per epoch, warm-up included
    # cosine: one over the epochs after the warm-up, or with lr_schedule.decay_epochs cosines of DECAY_EPOCHS
    # epochs, then MIN_LR: one, CYCLES of them (cycles > 1), the k-th from LR x CYCLE_DECAY**k (cycle_decay)
    cosines: Literal["whole", "one", "restarts", "decayed_restarts"] = "whole"
    anneal: Literal["cos", "linear"] = "cos"  # one_cycle: lr_schedule.anneal
    # constant as a list (network.freeze.epochs: next to a group's list, MindSpore applies a constant
    # LR as LR + 1.0 - 1.0 in float32, which is not LR)
    listed: bool = False

    @property
    def description(self) -> str:
        """What the schedule does, for build_lr()'s docstring."""
        what = {
            "piecewise": "LR, multiplied by GAMMA at each of MILESTONES (epochs)",
            "cosine": "LR down to MIN_LR along a half cosine",
            "warmup_cosine": "LR down to MIN_LR along a half cosine",
            "exponential": "LR times GAMMA per epoch",
            "polynomial": "LR down to END_LR along a polynomial of degree POWER",
            "one_cycle": "one cycle up to LR and down again",
            "constant": "LR (a list, as the frozen group's LR is)",
        }.get(self.kind, "LR")
        what = {
            "one": "a half cosine of DECAY_EPOCHS epochs from LR down to MIN_LR, then MIN_LR",
            "restarts": "CYCLES cosines of DECAY_EPOCHS epochs from LR down to MIN_LR, then MIN_LR",
            "decayed_restarts": "CYCLES cosines of DECAY_EPOCHS epochs from LR x CYCLE_DECAY**k down to "
            "MIN_LR, then MIN_LR",
        }.get(self.cosines, what)
        warm = "linear from WARMUP_START_LR to LR over WARMUP_EPOCHS, then " if self.warmup else ""
        stair = "; the LR moves once per epoch" if self.epoch_stair else ""
        return warm + what + stair

    @property
    def moves(self) -> Literal["every_step", "every_epoch"]:
        return "every_epoch" if self.epoch_stair else "every_step"

    @property
    def form(self) -> str:
        """The template's macro for what follows the warm-up."""
        if self.kind in ("cosine", "warmup_cosine"):
            return "cosine" if self.cosines == "whole" else "cosine_epochs"
        return "exponential_polynomial" if self.kind in ("exponential", "polynomial") else self.kind

    @property
    def is_list(self) -> bool:
        """One value per optimizer step (a list) rather than a constant."""
        return self.kind != "constant" or self.listed


ParamsForm = Literal[
    "trainable",
    "optimizer_groups",
    "no_norm_no_bias",
    "every_parameter",
    "frozen_first",
    "frozen_first_every_parameter",
    "frozen_first_filtered",
]


@dataclass(frozen=True, slots=True)
class Optimizer:
    class_name: str
    # the parameters it gets: groups (optimizer.groups, layer_decay), else as optimizer.decay_filter says;
    # trainable: network.trainable_params(), MindSpore's own filter; frozen_first*: network.freeze.epochs's
    # group at LR 0 for those epochs and the others, without weight decay, with it on every parameter, or
    # split by decay_filter's rule (which needs weight_decay_split)
    params: ParamsForm
    args: tuple[tuple[str, object], ...]  # (keyword, value): after the parameters and learning_rate
    decay_rule: DecayRule = "mindspore_default"  # optimizer.decay_filter, the deprecated `all` resolved
    decay_note: str | None = None  # why the filter reads as it does (a deprecated name)
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
    comment: str
    patterns: tuple[str, ...] = ()  # fnmatch patterns; () for the default group
    lr_scale: float | None = None  # multiplies the schedule (or LR); None: the schedule itself
    weight_decay: float | Name = Name("WEIGHT_DECAY")  # its own, or optimizer.weight_decay


@dataclass(frozen=True, slots=True)
class Metric:
    key: str
    call: Call
    factory: ImportedName | None
    head: int | None = None  # loss.heads: the position of the head it reads (call: HeadMetric(metric, head))


def build_runtime(cfg: Config | GanConfig) -> Runtime:
    rt = cfg.runtime
    return Runtime(
        mode="GRAPH_MODE" if rt.mode == "graph" else "PYNATIVE_MODE",
        device=rt.device_target,
        cpu_threads=rt.cpu_threads,
        max_device_memory=rt.max_device_memory,
        memory_devices=("GPU", "Ascend") if rt.max_device_memory else (),
    )


def build_network(
    cfg: Config, rel: Relative, net: NetworkSection | None = None, key: str = "network"
) -> Network:
    """cfg.network, or another network section (`net`, at `key`: distill.teacher) built the same way."""
    net = cfg.network if net is None else net
    if isinstance(net, BuiltinNetwork):
        shape = tuple(net.input_shape) if net.input_shape else image_shape_of(cfg.data.train)
        assert shape is not None  # schema/rules rejects configs where it is unknown
        channels, height, width = shape
        summary = f"{net.name}, input {channels}x{height}x{width}, {net.num_classes} classes"
        outs: list[int | str] = [*net.hidden, "num_classes"]
        if net.name == "lenet5":
            side_h, side_w = ((height - 4) // 2 - 4) // 2, ((width - 4) // 2 - 4) // 2
            # 16 channels of side_h x side_w after the second convolution and pooling
            first = DenseLayer("fc1", (16, side_h, side_w), outs[0])
            build = Call.of("LeNet5", num_classes=net.num_classes, in_channels=channels)
        else:
            first = DenseLayer("fc1", ("in_features",), outs[0])
            build = Call.of("MLP", num_classes=net.num_classes, in_features=channels * height * width)
        rest = tuple(DenseLayer(f"fc{i + 2}", (outs[i],), outs[i + 1]) for i in range(len(outs) - 1))
        return Network(
            net.name,
            build,
            summary,
            "LeNet-5" if net.name == "lenet5" else "an MLP",
            (first, *rest),
            dense_init=_initializer(net.dense_init),
            conv_init=_initializer(net.conv_init),
            classes=("LeNet5",) if net.name == "lenet5" else ("MLP",),
        )
    if isinstance(net, MindcvNetwork):
        build = Call.of("create_model", net.name, num_classes=net.num_classes, pretrained=False, **net.kwargs)
        weights = f"weights from {key}.checkpoint" if net.checkpoint else "no pretrained weights"
        summary = f"mindcv {net.name}, {net.num_classes} classes, {weights}"
        # with aux_factor the loss takes every output (AuxLogitsLoss), else the main logits alone
        aux = returns_aux_logits(net.name, net.kwargs) and net.aux_factor is None
        build = Call("MainLogits", (build,)) if aux else build
        return Network(
            "mindcv", build, summary, f"mindcv's {net.name}", classes=("MainLogits",) if aux else ()
        )
    factory = rel.imported(net.factory, f"{key}.factory")
    return Network(
        "import",
        Call.of(factory.bound, **net.kwargs),
        net.factory,
        f"{factory.attr} from {factory.module}",
        factory=factory,
    )


def _initializer(init: Initializer | None) -> Call | None:
    return None if init is None else Call.of(f"initializer.{init.name}", **init.arguments())


def build_loss(cfg: Config, rel: Relative) -> Loss:
    if isinstance(cfg.loss, ImportedLoss):
        factory = rel.imported(cfg.loss.path, "loss.path")
        return Loss(Call.of(factory.bound, **cfg.loss.kwargs), factory)
    # data.train.batch_transforms: soft (one-hot) labels
    call = nn_loss(cfg.loss.name, cfg.loss.kwargs, sparse=soft_label_classes(cfg) is None)
    if cfg.loss.name == "FocalLoss" and _class_indices(cfg):
        return Loss(replace(call, func="FocalLossOnIndices"), on_indices=True)
    if isinstance(cfg.network, MindcvNetwork) and cfg.network.aux_factor is not None:
        return Loss(Call("AuxLogitsLoss", (call,)), aux_logits=True)
    return Loss(call)


def nn_loss(name: str, kwargs: dict[str, Any] | None, *, sparse: bool = True) -> Call:
    """nn.<name>(**kwargs): SoftmaxCrossEntropyWithLogits on class indices (`sparse`) by default; a list for a
    Tensor argument (class weights) becomes the Tensor, in float32 as the logits."""
    if kwargs is None:
        kwargs = {"sparse": sparse, "reduction": "mean"} if name == "SoftmaxCrossEntropyWithLogits" else {}
    return Call.of(
        f"nn.{name}",
        **{
            key: Call.of("ms.Tensor", value, Name("ms.float32")) if tensor_list(name, key, value) else value
            for key, value in kwargs.items()
        },
    )


def _class_indices(cfg: Config) -> bool:
    """The label column holds class indices (N,), as the built-in sources give them: no one-hot pipeline, no
    mixing batch transforms; a CSV class column. An imported source's labels are its own: not known."""
    data = cfg.data
    if soft_label_classes(cfg) is not None or data.labels != ["label"]:
        return False
    for split in ("train", "eval"):
        ops = (pipelines_of(data, split) or {}).get("label", [])
        if "OneHot" in pipeline_names(ops):
            return False
    spec = data.train
    if isinstance(spec, CsvData):
        return isinstance(spec.columns.get("label"), str)
    return spec.kind != "import"


def build_lr(cfg: Config) -> LRSchedule:
    schedule = cfg.lr_schedule
    if isinstance(schedule, ExponentialLR | PolynomialLR):
        return LRSchedule(schedule.kind, warmup=schedule.warmup_epochs > 0, epoch_stair=schedule.epoch_stair)
    if isinstance(schedule, CosineLR | WarmupCosineLR):
        return LRSchedule(
            schedule.kind,
            warmup=schedule.warmup_epochs > 0,  # warmup_cosine's is at least 1
            epoch_stair=schedule.epoch_stair,
            cosines=_cosines(schedule),
        )
    if isinstance(schedule, PiecewiseLR):
        return LRSchedule(schedule.kind, warmup=schedule.warmup_epochs > 0)
    if isinstance(schedule, OneCycleLR):
        return LRSchedule(schedule.kind, anneal=schedule.anneal)
    frozen_first = cfg.network.freeze is not None and cfg.network.freeze.epochs is not None
    return LRSchedule(schedule.kind, listed=frozen_first)  # constant


def _cosines(schedule: CosineLR | WarmupCosineLR) -> Literal["whole", "one", "restarts", "decayed_restarts"]:
    if schedule.decay_epochs is None:
        return "whole"
    if schedule.cycles == 1:
        return "one"
    return "restarts" if schedule.cycle_decay == 1.0 else "decayed_restarts"


def build_optimizer(cfg: Config, *, loss_scale_in_optimizer: bool) -> Optimizer:
    opt = cfg.optimizer
    args = optimizer_args(opt)
    rule = opt.decay_rule
    groups = _optimizer_groups(cfg)
    params: ParamsForm = "trainable"
    if cfg.network.freeze is not None and cfg.network.freeze.epochs is not None:  # schema/rules: no groups
        params = "frozen_first"
        if rule == "every_parameter":
            params = "frozen_first_every_parameter"
        elif opt.weight_decay or rule != "mindspore_default":
            params = "frozen_first_filtered"
    elif groups:
        params = "optimizer_groups"
    elif rule != "mindspore_default":
        params = rule
    if opt.weight_decay and rule == "mindspore_default" and params == "trainable":
        args.append(("weight_decay", Name("WEIGHT_DECAY")))
    if loss_scale_in_optimizer:
        args.append(("loss_scale", Name("LOSS_SCALE")))
    note = None
    if opt.decay_filter == "all":
        note = "decay_filter all is the deprecated name of mindspore_default (same meaning)"
    class_name, module = optimizer_class(opt)
    return Optimizer(
        class_name,
        params,
        tuple(args),
        decay_rule=rule,
        decay_note=note,
        groups=groups,
        groups_key="optimizer.layer_decay" if opt.layer_decay is not None else "optimizer.groups",
        module=module,
    )


def optimizer_args(opt: OptimizerSection) -> list[tuple[str, object]]:
    """The optimizer's own keyword arguments after the learning rate: (keyword, value)."""
    args: list[tuple[str, object]] = []
    if opt.name in ("momentum", "sgd"):
        args.append(("momentum", opt.momentum))
    if opt.name == "sgd" and opt.dampening:
        args.append(("dampening", opt.dampening))
    if opt.name in ("momentum", "sgd") and opt.nesterov:
        args.append(("use_nesterov" if opt.name == "momentum" else "nesterov", True))
    if opt.name in ("adam", "adamw", "lamb"):
        args += [("beta1", opt.beta1), ("beta2", opt.beta2), ("eps", opt.eps)]
    if opt.name == "lion":
        args += [("beta1", opt.beta1), ("beta2", opt.beta2)]
    if opt.name == "rmsprop":
        args += [("decay", opt.decay), ("momentum", opt.momentum)]
        args += [("epsilon", opt.epsilon), ("centered", opt.centered)]
    return args


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
        wd = Name("WEIGHT_DECAY") if g.weight_decay is None else g.weight_decay
        wd_what = "optimizer.weight_decay" if g.weight_decay is None else f"weight_decay {g.weight_decay}"
        out.append(
            OptimizerGroup(
                name=f"groups[{i}]",
                patterns=tuple(g.params),
                lr_scale=scale,
                weight_decay=wd,
                comment=f"{', '.join(g.params)}: {what}, {wd_what}",
            )
        )
    out.append(OptimizerGroup("default", "every other parameter: the schedule, optimizer.weight_decay"))
    return tuple(out)


def _layer_decay_groups(cfg: Config, rate: float) -> tuple[OptimizerGroup, ...]:
    """optimizer.layer_decay: a group per layer but the last (mscodegen.schema.layers), which is the default."""
    layers = layers_of(cfg.network)
    assert layers is not None  # schema/rules rejects networks without layer ids
    last = len(layers) - 1
    out = [
        OptimizerGroup(
            name=f"layer_{i}",
            patterns=layer.patterns,
            lr_scale=rate ** (last - i),
            comment=f"layer {i} of 0..{last} ({layer.what}): the schedule x rate ** {last - i}",
        )
        for i, layer in enumerate(layers[:-1])
    ]
    what = f"layer {last} ({layers[-1].what}), every parameter no layer above matched: the schedule"
    out.append(OptimizerGroup("default", what))
    return tuple(out)


def build_metrics(cfg: Config, rel: Relative) -> tuple[Metric, ...]:
    if cfg.data.eval is None:
        return ()
    out = []
    # nn.MAE / nn.MSE sum a sample's errors and average over samples; the losses average over elements.
    # One output per sample: the same number; more, or an imported network's unknown count: ElementMean.
    outputs = None if isinstance(cfg.network, ImportedNetwork) else cfg.network.num_classes
    for i, m in enumerate(eval_metrics(cfg.eval, cfg.loss.name, head_losses(cfg.loss))):
        if isinstance(m, BuiltinMetric) and m.name in ("mae", "mse") and outputs != 1:
            out.append(Metric(m.key, Call("ElementMean", (METRIC_CLASSES[m.name],)), None))
        elif isinstance(m, ImportedMetric):
            factory = rel.imported(m.cls, f"eval.metrics[{i}].class")
            out.append(Metric(m.key, Call.of(factory.bound, **m.kwargs), factory))
        elif isinstance(m, TopKMetric):
            out.append(Metric(m.key, Call("nn.TopKCategoricalAccuracy", (m.k,)), None))
        else:
            out.append(Metric(m.key, METRIC_CLASSES[m.name], None))
    return tuple(out)


def sys_paths(names: list[ImportedName | None]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The folders the config's own modules live in (beside it), each put on sys.path once."""
    found: dict[str, dict[str, None]] = {}  # each folder's modules, in order, once
    for name in names:
        if name is not None and name.sys_path is not None:
            found.setdefault(name.sys_path, {})[name.module] = None
    return tuple((path, tuple(modules)) for path, modules in found.items())
