"""Plan for the setup both variants share: network, data, loss, optimizer, metrics."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from ._literals import call, literal
from .imports import Imports
from .schema import Config, image_shape_of
from .schema.data import ImportedData
from .schema.network import BuiltinNetwork, ImportedNetwork, MindcvNetwork
from .schema.training import DEFAULT_METRICS, ImportedMetric, TopKMetric

OPTIMIZER_CLASSES = {"momentum": "Momentum", "sgd": "SGD", "adam": "Adam", "adamw": "AdamWeightDecay"}


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


class _Relative:
    """Paths from the config file's directory, as seen from the generated script's directory."""

    def __init__(self, config_dir: Path, out_dir: Path) -> None:
        self.config_dir = config_dir.resolve()
        self.out_dir = out_dir.resolve()

    def path(self, path: str) -> str:
        if Path(path).is_absolute():
            return Path(path).as_posix()
        return Path(os.path.relpath(self.config_dir / path, self.out_dir)).as_posix()

    def sys_path_for(self, module: str) -> str | None:
        """The config dir, relative to the script, if `module` lives there (else it is installed)."""
        top = self.config_dir / module.split(".")[0]
        if top.with_suffix(".py").is_file() or (top / "__init__.py").is_file():
            return Path(os.path.relpath(self.config_dir, self.out_dir)).as_posix()
        return None


def _network(cfg: Config, rel: _Relative, imports: Imports) -> SimpleNamespace:
    net = cfg.network
    ns = SimpleNamespace(kind=net.kind, name=getattr(net, "name", None), sys_path=None, dense=[])
    if isinstance(net, BuiltinNetwork):
        shape = tuple(net.input_shape) if net.input_shape else image_shape_of(cfg.data.train)
        assert shape is not None  # rules.py rejects configs where it is unknown
        channels, height, width = shape
        if net.name == "lenet5":
            first_in = f"16 * {((height - 4) // 2 - 4) // 2} * {((width - 4) // 2 - 4) // 2}"
            ns.build_expr = call("LeNet5", num_classes=net.num_classes, in_channels=channels)
        else:
            first_in = "in_features"
            ns.build_expr = call("MLP", num_classes=net.num_classes, in_features=channels * height * width)
        widths = [first_in, *(str(w) for w in net.hidden), "num_classes"]
        ns.dense = [
            SimpleNamespace(name=f"fc{i + 1}", in_expr=widths[i], out_expr=widths[i + 1])
            for i in range(len(widths) - 1)
        ]
        ns.summary = f"{net.name}, input {channels}x{height}x{width}, {net.num_classes} classes"
        ns.summary_short = f"the builtin {net.name}"
    elif isinstance(net, MindcvNetwork):
        imports.names("mindcv.models", "create_model")
        ns.build_expr = call(
            "create_model", literal(net.name), num_classes=net.num_classes, pretrained=False, **net.kwargs
        )
        ns.summary = f"mindcv {net.name}, {net.num_classes} classes, no pretrained weights"
        ns.summary_short = f"mindcv's {net.name}"
    else:
        assert isinstance(net, ImportedNetwork)
        ns.module, _, ns.attr = net.factory.partition(":")
        ns.sys_path = rel.sys_path_for(ns.module)
        ns.build_expr = call(ns.attr, **net.kwargs)
        ns.summary = f"{net.factory}"
        ns.summary_short = f"{ns.attr} from {ns.module}"
    return ns


def _datasets(cfg: Config, rel: _Relative, imports: Imports) -> list[SimpleNamespace]:
    plans, helpers = [], set()
    for split in ("train", "eval"):
        spec = getattr(cfg.data, split)
        if spec is None:
            continue
        imports.names("mindspore", "dataset as ds")
        shuffle = spec.shuffle if spec.shuffle is not None else split == "train"
        d = SimpleNamespace(
            spec=spec.model_copy(update={"shuffle": shuffle}),
            key=f"data.{split}",
            function=f"build_{split}_dataset",
            sharded=False,
            sys_path=None,
            helper=None,
            batch_expr=literal(spec.batch_size),
            label_cast=spec.kind in ("mnist", "cifar10"),
        )
        if spec.kind in ("digits", "synthetic") and spec.kind not in helpers:
            d.helper = spec.kind
            helpers.add(spec.kind)
            imports.module("numpy", "np")
        if spec.kind == "digits":
            imports.names("sklearn.datasets", "load_digits")
        if hasattr(spec, "path"):
            d.path = rel.path(spec.path)
        if isinstance(spec, ImportedData):
            d.module, _, d.attr = spec.factory.partition(":")
            d.sys_path = rel.sys_path_for(d.module)
            d.factory_call = call(d.attr, **spec.kwargs)
        args = {} if spec.kind == "import" else {"shuffle": shuffle, "num_parallel_workers": spec.num_workers}
        if getattr(spec, "num_samples", None) and spec.kind in UINT8_SOURCES:
            args["num_samples"] = spec.num_samples
        d.source_args = ", ".join(f"{k}={literal(v)}" for k, v in args.items())
        d.image_ops = _image_ops(spec)
        if d.image_ops:
            imports.names("mindspore.dataset", "vision")
        if d.label_cast:
            imports.names("mindspore.dataset", "transforms")
        order = "shuffled" if shuffle else "in order"
        drop = ", last partial batch dropped" if spec.drop_remainder else ""
        d.summary = f"batches of {spec.batch_size}, {order}{drop}"
        plans.append(d)
    return plans


def _image_ops(spec: Any) -> list[str]:
    transforms = getattr(spec, "transforms", None)
    if transforms is None:
        return []
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
    return ops


def _loss_kwargs(cfg: Config) -> dict[str, Any]:
    if cfg.loss.kwargs is not None:
        return dict(cfg.loss.kwargs)
    if cfg.loss.name == "SoftmaxCrossEntropyWithLogits":
        return {"sparse": True, "reduction": "mean"}
    return {}


def _optimizer(cfg: Config, step: SimpleNamespace) -> SimpleNamespace:
    opt = cfg.optimizer
    args: list[tuple[str, str]] = []
    if opt.name in ("momentum", "sgd"):
        args.append(("momentum", literal(opt.momentum)))
    if opt.name == "sgd" and opt.dampening:
        args.append(("dampening", literal(opt.dampening)))
    if opt.name in ("momentum", "sgd") and opt.nesterov:
        args.append(("use_nesterov" if opt.name == "momentum" else "nesterov", "True"))
    if opt.name in ("adam", "adamw"):
        args += [("beta1", literal(opt.beta1)), ("beta2", literal(opt.beta2)), ("eps", literal(opt.eps))]
    decay_filter = opt.decay_filter == "no_norm_no_bias"
    if opt.weight_decay and not decay_filter:
        args.append(("weight_decay", "WEIGHT_DECAY"))
    if step.fixed_sens:
        args.append(("loss_scale", "LOSS_SCALE"))
    return SimpleNamespace(
        name=opt.name, class_name=OPTIMIZER_CLASSES[opt.name], decay_filter=decay_filter, args=args
    )


def _metrics(cfg: Config, rel: _Relative) -> list[SimpleNamespace]:
    out = []
    for m in cfg.eval.metrics if cfg.eval else DEFAULT_METRICS:
        ns = SimpleNamespace(key=m.key, module=None, attr=None, sys_path=None)
        if isinstance(m, ImportedMetric):
            ns.module, _, ns.attr = m.cls.partition(":")
            ns.sys_path = rel.sys_path_for(ns.module)
            ns.expr = call(ns.attr, **m.kwargs)
        elif isinstance(m, TopKMetric):
            ns.expr = f"nn.TopKCategoricalAccuracy({m.k})"
        else:
            ns.expr = METRIC_CLASSES[m.name]
        out.append(ns)
    return out
