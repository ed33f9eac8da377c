"""Rules between the network and what feeds it: input shapes, class counts, losses and metrics."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from mscodegen.catalog.losses import TENSOR_ARGS, check_loss, tensor_list
from mscodegen.catalog.mindcv_names import returns_aux_logits
from mscodegen.schema import Config, image_shape_of
from mscodegen.schema._base import python_name
from mscodegen.schema.data import CsvData, ImageFolderData, ImportedData
from mscodegen.schema.network import BuiltinNetwork, MindcvNetwork, Network
from mscodegen.schema.optim import HeadsLoss, ImportedLoss, Loss
from mscodegen.schema.rules._registry import KeyPath, Violation, rule
from mscodegen.schema.rules.data import chw_rules, shape_source, splits
from mscodegen.schema.sources import class_count, first_image_size
from mscodegen.schema.training import BINARY_METRIC_NAMES, SAME_SHAPE_TARGET_LOSSES, BuiltinMetric, TopKMetric

LENET5_MIN_SIZE = 16  # two (5x5 valid conv + 2x2 pool) stages need at least 16 pixels per side


@rule("network", "data.train")
def _network_rules(cfg: Config, config_dir: Path | None) -> Iterator[Violation]:
    net = cfg.network
    if not isinstance(net, BuiltinNetwork):
        return
    yield from chw_rules(cfg, "builtin networks")
    shape = tuple(net.input_shape) if net.input_shape else image_shape_of(cfg.data.train)
    if shape is None and isinstance(cfg.data.train, CsvData):
        return  # its first column is no vector: rules/tables.py says so
    if shape is None:
        yield ("network",), f"builtin {net.name} needs the input shape: " + _input_shape_hint(cfg, config_dir)
    elif (
        net.name == "lenet5" and min(shape[1:]) < LENET5_MIN_SIZE and not isinstance(cfg.data.train, CsvData)
    ):
        yield (
            ("network", "name"),
            f"lenet5 needs images of at least {LENET5_MIN_SIZE}x{LENET5_MIN_SIZE} but data.train gives "
            f"{shape[1]}x{shape[2]}; add data.train.transforms.resize: [32, 32]",
        )


def _input_shape_hint(cfg: Config, config_dir: Path | None) -> str:
    """How to state the input shape for data.train's kind (image_folder has no image_shape key)."""
    train = cfg.data.train
    if isinstance(train, ImportedData):
        return "set network.input_shape (or data.train.image_shape)"
    if not isinstance(train, ImageFolderData):
        return "set network.input_shape"

    def resize(h: int | str, w: int | str) -> str:
        if isinstance(train.transforms, dict):
            return f"{{Resize: {{size: [{h}, {w}]}}}} in data.train.transforms.image"
        return f"data.train.transforms.resize: [{h}, {w}]"

    first = first_image_size(config_dir / train.path) if config_dir is not None else None
    if first is None:
        return f"set network.input_shape: [3, H, W] (image_folder decodes to RGB), or {resize('H', 'W')}"
    h, w = first.height, first.width
    return (
        f"set network.input_shape: [3, {h}, {w}] (the first image, {first.path.name}, is {w}x{h}; "
        f"image_folder decodes to RGB), or {resize(h, w)} if the images differ in size"
    )


def classes_of(net: Network, at: KeyPath) -> tuple[int, KeyPath] | None:
    """A network section's output size and the key that sets it (under `at`), when known."""
    if isinstance(net, (BuiltinNetwork, MindcvNetwork)):
        return net.num_classes, (*at, "num_classes")
    for key, value in net.kwargs.items():
        if python_name(key) == "num_classes" and isinstance(value, int) and not isinstance(value, bool):
            return value, (*at, "kwargs", key)
    return None


def classifies(cfg: Config) -> bool:
    """loss takes class indices (one loss of mindspore.nn that does not compare same-shape targets)."""
    return (
        not isinstance(cfg.loss, ImportedLoss | HeadsLoss) and cfg.loss.name not in SAME_SHAPE_TARGET_LOSSES
    )


@rule("network", "data", "loss")
def _class_rules(cfg: Config, config_dir: Path | None) -> Iterator[Violation]:
    """Labels the loss cannot take: beyond network.num_classes (an error, or an inf loss when equal)."""
    known = classes_of(cfg.network, ("network",))
    if known is None or not classifies(cfg):
        return
    classes, key = known
    for split, spec in splits(cfg):
        if config_dir is None and hasattr(spec, "path"):
            continue
        count = class_count(spec, config_dir or Path())
        if count is not None and count.value > classes:
            yield (
                key,
                f"data.{split} has labels 0..{count.value - 1} ({count.why}) but the network has "
                f"{classes} outputs: set {'.'.join(map(str, key))} to at least {count.value}",
            )


@rule("network", "eval")
def _top_k_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    known = classes_of(cfg.network, ("network",))
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


@rule("eval", "loss")
def _binary_metric_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    """BCEWithLogitsLoss's logits need the binary metrics: nn.Accuracy & co. take a score per class (they
    raise at the first evaluation, after a whole epoch); the binary ones mean nothing for other losses."""
    if cfg.eval is None or isinstance(cfg.loss, ImportedLoss | HeadsLoss):  # heads: rules/heads.py
        return
    binary = cfg.loss.name == "BCEWithLogitsLoss"
    for i, metric in enumerate(cfg.eval.metrics):
        name = metric.name
        if binary and (isinstance(metric, TopKMetric) or name in ("accuracy", "precision", "recall", "f1")):
            instead = "binary_accuracy" if isinstance(metric, TopKMetric) else f"binary_{name}"
            yield (
                ("eval", "metrics", i, "name"),
                f"{name} takes one score per class, but BCEWithLogitsLoss's network gives a logit per "
                f"sample (or label) and float labels, so it fails at the first evaluation: use "
                f"{instead} (a logit above 0 predicts 1); the others: "
                f"{', '.join(n for n in BINARY_METRIC_NAMES if n != instead)}",
            )
        elif not binary and isinstance(metric, BuiltinMetric) and name in BINARY_METRIC_NAMES:
            yield (
                ("eval", "metrics", i, "name"),
                f"{name} reads one logit per sample, as BCEWithLogitsLoss trains; with {cfg.loss.name} use "
                f"{name.removeprefix('binary_') if name != 'auc' else 'accuracy'}",
            )


@rule("loss", "data.train")
def _loss_label_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    """Class-index labels (every built-in source yields int32 class indices) need a classification loss."""
    spec = cfg.data.train
    if cfg.data.target_is_input:  # labels: [image]: the target has the output's shape
        if classifies(cfg):
            yield (
                ("loss", "name"),
                f"data.labels names an input column ({', '.join(cfg.data.labels)}): the target is the input, "
                f"which {cfg.loss.name} does not take (it takes class indices); use MSELoss, L1Loss, "
                "SmoothL1Loss, HuberLoss or BCEWithLogitsLoss",
            )
        return
    if isinstance(spec, ImportedData | CsvData):  # their labels are what the config says (rules/tables.py)
        return
    if cfg.loss.name in SAME_SHAPE_TARGET_LOSSES:
        yield (
            ("loss", "name"),
            f"{cfg.loss.name} compares the output with a target of the same shape, but data.train "
            f"({spec.kind}) yields class indices: use SoftmaxCrossEntropyWithLogits or CrossEntropyLoss "
            "(or your own dataset with kind: import)",
        )
    kwargs = cfg.loss.kwargs or {}
    for key, value in kwargs.items():
        if cfg.loss.name == "SoftmaxCrossEntropyWithLogits" and python_name(key) == "sparse" and not value:
            yield (
                ("loss", "kwargs", key),
                f"sparse: false expects one-hot labels, but data.train ({spec.kind}) yields class indices",
            )


@rule("network", "data.train")
def _input_shape_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    """network.input_shape (or a mindcv model's channels) against data.train's images after transforms."""
    net = cfg.network
    train_shape = image_shape_of(cfg.data.train)
    if train_shape is None:
        return
    after = shape_source("train", cfg.data.train)[1]
    if isinstance(net, BuiltinNetwork) and net.input_shape and tuple(net.input_shape) != train_shape:
        yield (
            ("network", "input_shape"),
            f"{net.input_shape} contradicts data.train, whose images are {list(train_shape)} {after}",
        )
    if isinstance(net, MindcvNetwork) and not isinstance(cfg.data.train, CsvData):  # rules/tables.py
        yield from in_channels_rules(net, train_shape[0], ("network",), "network.kwargs")
        low, high = INCEPTION_V3_SIZES
        if net.name == "inception_v3" and not all(low <= side <= high for side in train_shape[1:]):
            yield (
                ("network", "name"),
                f"mindcv's inception_v3 trains on images of {low} to {high} pixels a side (its auxiliary "
                f"head ends in a Dense layer that needs a 17x17 map), but data.train gives "
                f"{train_shape[1]}x{train_shape[2]} {after}: resize them to {low}",
            )


def in_channels_rules(net: MindcvNetwork, channels: int, at: KeyPath, kwargs: str) -> Iterator[Violation]:
    """A mindcv model (the section at `at`; `kwargs`: the key of its kwargs in the message) takes
    data.train's `channels`."""
    in_channels, key = 3, at
    for name, value in net.kwargs.items():
        if python_name(name) == "in_channels" and isinstance(value, int):
            in_channels, key = value, (*at, "kwargs", name)
    if channels != in_channels:
        yield (
            key,
            f"mindcv's {net.name} takes {in_channels}-channel images but data.train gives {channels} "
            f"channels: set {kwargs}.in_channels: {channels}",
        )


# mindcv's inception_v3 (0.3.0): the sizes whose 6e feature map is 17 to 19 a side, which the auxiliary head's
# 5x5/3 average pool and 5x5 convolution bring to the 1x1 its Dense layer takes (worked out from its layers).
INCEPTION_V3_SIZES = (299, 346)


@rule("network")
def _mindcv_kwargs_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    net = cfg.network
    if not isinstance(net, MindcvNetwork) or net.name != "inception_v3":
        return
    for key in net.kwargs:
        if python_name(key) == "aux_logits":
            yield (
                ("network", "kwargs", key),
                "mindcv's inception_v3 sets aux_logits itself (always true; create_model would get it twice); "
                "the scripts train on the main logits (network.aux_factor adds the auxiliary loss)",
            )


@rule("network", "loss", "amp", "distill")
def _aux_factor_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    """network.aux_factor: the loss on a mindcv model's auxiliary logits (AuxLogitsLoss around loss_fn)."""
    teacher = cfg.distill.teacher if cfg.distill else None
    if isinstance(teacher, MindcvNetwork) and teacher.aux_factor is not None:
        yield ("distill", "teacher", "aux_factor"), "the teacher is not trained: it has no loss to weigh"
    net = cfg.network
    if not isinstance(net, MindcvNetwork) or net.aux_factor is None:
        return
    key = ("network", "aux_factor")
    if not returns_aux_logits(net.name, net.kwargs):
        yield (
            key,
            f"mindcv's {net.name} returns no auxiliary logits (inception_v3 does, and googlenet with "
            "kwargs aux_logits: true)",
        )
    elif not isinstance(cfg.loss, Loss):
        yield key, "the auxiliary logits' loss is loss.name's: not with loss.heads or an imported loss"
    elif cfg.distill is not None:
        yield key, "distill's loss takes the student's main logits only"
    elif cfg.amp.level in ("O2", "O3", "auto"):
        yield (
            key,
            f"amp.level {cfg.amp.level} casts the network's one output to float32 for the loss; use O0 or O1 "
            "(mindcv's inception_v3 recipe trains at O0)",
        )


@rule("loss")
def _loss_kwargs_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    """loss.kwargs against the signature of the mindspore.nn loss (catalog/data/losses.json)."""
    if not isinstance(cfg.loss, Loss) or not cfg.loss.kwargs:
        return
    for key, message in check_loss(cfg.loss.name, cfg.loss.kwargs):
        yield (("loss", "kwargs", key) if key is not None else ("loss", "kwargs")), message


@rule("loss", "network")
def _loss_tensor_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    """A list for a Tensor argument of the loss: one number per class (catalog/losses.py TENSOR_ARGS)."""
    classes = getattr(cfg.network, "num_classes", None)
    if not isinstance(cfg.loss, Loss) or not cfg.loss.kwargs or not isinstance(classes, int):
        return
    for key, value in cfg.loss.kwargs.items():
        if not tensor_list(cfg.loss.name, key, value):
            continue
        one = TENSOR_ARGS[(cfg.loss.name, key)]
        if len(value) != classes and not (one and len(value) == 1):
            yield (
                ("loss", "kwargs", key),
                f"{len(value)} numbers for network.num_classes {classes}: give one per class"
                + (" (or one for all)" if one else ""),
            )


@rule("network", "train", "optimizer")
def _freeze_epochs_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    """network.freeze.epochs: the frozen parameters are an optimizer group of their own at LR 0 for those
    epochs, which needs epochs left to train them and no other grouping of the parameters."""
    freeze = cfg.network.freeze
    if freeze is None or freeze.epochs is None:
        return
    key, epochs = ("network", "freeze", "epochs"), cfg.train.epochs
    if freeze.epochs >= epochs:
        fix = f"give 1 to {epochs - 1}" if epochs > 1 else "train for more epochs"
        yield (
            key,
            f"{freeze.epochs} leaves no epoch of train.epochs ({epochs}) to train them: {fix}, "
            "or leave epochs out to freeze them for the whole run",
        )
    for name, used in (
        ("optimizer.groups", bool(cfg.optimizer.groups)),
        ("optimizer.layer_decay", cfg.optimizer.layer_decay is not None),
    ):
        if used:
            yield (
                key,
                f"not supported with {name} yet: the frozen parameters are an optimizer group of their own, "
                "which would override theirs",
            )
