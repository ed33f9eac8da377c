"""Plan: every value a template prints, resolved from a validated config.

Templates only print and branch on what this module computed; a condition computed
both here and in a template is a bug waiting to happen. Nothing here imports MindSpore.
"""

from __future__ import annotations

import keyword
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

from . import __version__
from .imports import Imports
from .schema import Config, image_shape_of
from .schema.data import ImportedData
from .schema.network import BuiltinNetwork, ImportedNetwork, MindcvNetwork
from .schema.optim import PiecewiseLR, WarmupCosineLR
from .schema.precision import DynamicLossScale, FixedLossScale, GlobalNormClip, NormClip
from .schema.training import ImportedMetric, TopKMetric

Variant = Literal["model", "native"]
VARIANTS: tuple[Variant, ...] = ("model", "native")
SCRIPT_NAMES = {"model": "train_model.py", "native": "train_native.py"}

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


@dataclass
class Constant:
    name: str
    value: str  # a Python literal
    key: str  # the YAML key it comes from


@dataclass
class Plan:
    """What one generated script says; see templates/ for how it is printed."""

    variant: Variant
    name: str
    source: str
    out_dir: str
    version: str
    docstring: str
    settings: list[tuple[str, str]]
    constants: list[list[Constant]]
    imports: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def __getattr__(self, item: str) -> Any:  # sections (p.step, p.lr, ...) live in `extra`
        try:
            return self.__dict__["extra"][item]
        except KeyError:
            raise AttributeError(item) from None


def literal(value: Any) -> str:
    """A config value as Python source: repr() of plain data only, never raw text.

    Non-finite floats raise ValueError: repr() gives `inf`/`nan`, which are names, not literals
    (the schema rejects them, so a config never gets here with one).
    """
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{value!r} has no Python literal")
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        inner = ", ".join(literal(v) for v in value)
        return (
            f"({inner},)"
            if isinstance(value, tuple) and len(value) == 1
            else (f"({inner})" if isinstance(value, tuple) else f"[{inner}]")
        )
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot render {type(value).__name__} as a literal")


def call(func: str, /, *args: str, **kwargs: Any) -> str:
    """`func(arg, key=literal, ...)` with every keyword value rendered by `literal`.

    `func` is positional-only so that a config kwarg named `func` is just another keyword.
    """
    for key in kwargs:
        if not key.isidentifier() or keyword.iskeyword(key):
            raise ValueError(f"{key!r} cannot be a keyword argument name")
    parts = [*args, *(f"{k}={literal(v)}" for k, v in kwargs.items())]
    return f"{func}({', '.join(parts)})"


def build_plan(
    cfg: Config, variant: Variant, *, source: str, config_dir: Path, out_dir: Path, name: str
) -> Plan:
    """Resolve everything `variant`'s template needs from a validated config."""
    imports = Imports()
    imports.module("argparse")
    imports.module("json")
    imports.names("pathlib", "Path")
    imports.module("mindspore", "ms")
    imports.names("mindspore", "nn")
    rel = _Relative(config_dir, out_dir)

    step = _step(cfg, variant, imports)
    amp = _amp(cfg, variant, step, imports)
    network = _network(cfg, rel, imports)
    datasets = _datasets(cfg, rel, imports)
    parallel = _parallel(cfg, variant, datasets, step, imports)
    metrics = _metrics(cfg, rel) if cfg.data.eval is not None else []
    if metrics:
        imports.module("numpy", "np")
    if step.process_module:
        step.process_sys_path = rel.sys_path_for(step.process_module)
    if any(
        [
            network.sys_path,
            *(d.sys_path for d in datasets),
            *(m.sys_path for m in metrics),
            step.process_sys_path,
        ]
    ):
        imports.module("sys")
    lr = SimpleNamespace(kind=cfg.lr_schedule.kind, is_list=cfg.lr_schedule.kind != "constant")
    if lr.kind in ("cosine", "warmup_cosine"):
        imports.module("math")
    checkpoint = _checkpoint(cfg)
    if variant == "native" and cfg.callbacks.time_monitor:
        imports.module("time")
    if variant == "model":
        model = _model(cfg, step, amp, imports)
    else:
        model = SimpleNamespace()
        imports.names("mindspore", "ops")

    what = "mindspore.train.Model" if variant == "model" else "an explicit MindSpore training loop"
    plan = Plan(
        variant=variant,
        name=name,
        source=source,
        out_dir=out_dir.as_posix(),
        version=__version__,
        docstring=f"{name}: train {network.summary_short} with {what} ({variant} variant).",
        settings=_settings(cfg, name),
        constants=_constants(cfg, step),
        imports=imports.lines(),
    )
    plan.extra.update(
        runtime=_runtime(cfg),
        network=network,
        datasets=datasets,
        train_dataset_call=parallel.train_dataset_call or f"{datasets[0].function}()",
        eval_dataset_call=f"{datasets[-1].function}()" if cfg.data.eval is not None else None,
        loss_name=cfg.loss.name,
        loss_expr=call(f"nn.{cfg.loss.name}", **_loss_kwargs(cfg)),
        lr=lr,
        optimizer=_optimizer(cfg, step),
        metrics=metrics,
        eval=cfg.data.eval is not None,
        step=step,
        amp=amp,
        model=model,
        checkpoint=checkpoint,
        # the LR list, an epoch-based checkpoint period and accumulation need the dataset size
        needs_steps_per_epoch=lr.is_list
        or (checkpoint is not None and "steps_per_epoch" in checkpoint.every_expr)
        or step.accumulate,
        early_stopping=_early_stopping(cfg),
        loss_monitor=cfg.callbacks.loss_monitor,
        time_monitor=cfg.callbacks.time_monitor,
        train=_train(cfg, variant),
        parallel=parallel,
    )
    return plan


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


def _settings(cfg: Config, name: str) -> list[tuple[str, str]]:
    """Every resolved key that has a value, as (dotted.key, literal), defaults included."""
    rows: list[tuple[str, str]] = []

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict) and value:
            for key, sub in value.items():
                walk(f"{prefix}.{key}" if prefix else key, sub)
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for i, sub in enumerate(value):
                walk(f"{prefix}[{i}]", sub)
        elif value is not None:
            rows.append((prefix, literal(value)))

    walk("", cfg.model_dump(mode="json", by_alias=True) | {"name": name})
    return rows


def _constants(cfg: Config, step: SimpleNamespace) -> list[list[Constant]]:
    run = [
        Constant("SEED", literal(cfg.runtime.seed), "runtime.seed"),
        Constant("EPOCHS", literal(cfg.train.epochs), "train.epochs"),
        Constant("LOG_EVERY_STEPS", literal(cfg.train.log_every_steps), "train.log_every_steps"),
        Constant("OUTPUT_DIR", literal(cfg.train.output_dir), "train.output_dir"),
    ]
    opt = [Constant("LR", literal(cfg.optimizer.lr), "optimizer.lr")]
    if cfg.optimizer.weight_decay or cfg.optimizer.decay_filter != "all":
        opt.append(Constant("WEIGHT_DECAY", literal(cfg.optimizer.weight_decay), "optimizer.weight_decay"))
    schedule = cfg.lr_schedule
    if isinstance(schedule, PiecewiseLR):
        opt += [
            Constant("MILESTONES", literal(schedule.milestones), "lr_schedule.milestones"),
            Constant("GAMMA", literal(schedule.gamma), "lr_schedule.gamma"),
        ]
    if isinstance(schedule, WarmupCosineLR):
        opt += [
            Constant("WARMUP_EPOCHS", literal(schedule.warmup_epochs), "lr_schedule.warmup_epochs"),
            Constant("WARMUP_START_LR", literal(schedule.warmup_start_lr), "lr_schedule.warmup_start_lr"),
        ]
    if hasattr(schedule, "min_lr"):
        opt.append(Constant("MIN_LR", literal(schedule.min_lr), "lr_schedule.min_lr"))
    groups = [run, opt]
    if cfg.data.eval is not None:
        every = cfg.eval.every_epochs if cfg.eval else 1
        group = [Constant("EVAL_EVERY_EPOCHS", literal(every), "eval.every_epochs")]
        early = cfg.callbacks.early_stopping
        if early is not None:
            group += [
                Constant("EARLY_STOP_MONITOR", literal(early.monitor), "callbacks.early_stopping.monitor"),
                Constant("EARLY_STOP_PATIENCE", literal(early.patience), "callbacks.early_stopping.patience"),
                Constant("EARLY_STOP_MIN_DELTA", literal(early.min_delta), "callbacks.early_stopping.min_delta"),
            ]
        groups.append(group)
    ckpt = cfg.callbacks.checkpoint
    if ckpt is not None:
        group = [
            Constant("CHECKPOINT_DIR", literal(ckpt.directory), "callbacks.checkpoint.directory"),
            Constant("CHECKPOINT_PREFIX", literal(ckpt.prefix), "callbacks.checkpoint.prefix"),
            Constant("CHECKPOINT_KEEP_MAX", literal(ckpt.keep_max), "callbacks.checkpoint.keep_max"),
        ]
        if ckpt.every_steps:
            group.append(
                Constant(
                    "CHECKPOINT_EVERY_STEPS", literal(ckpt.every_steps), "callbacks.checkpoint.every_steps"
                )
            )
        else:
            group.append(
                Constant(
                    "CHECKPOINT_EVERY_EPOCHS", literal(ckpt.every_epochs), "callbacks.checkpoint.every_epochs"
                )
            )
        groups.append(group)
    precision = []
    ls = cfg.loss_scale
    if isinstance(ls, FixedLossScale):
        precision.append(Constant("LOSS_SCALE", literal(ls.value), "loss_scale.value"))
    if isinstance(ls, DynamicLossScale):
        precision += [
            Constant("LOSS_SCALE", literal(ls.init), "loss_scale.init"),
            Constant("LOSS_SCALE_FACTOR", literal(ls.factor), "loss_scale.factor"),
            Constant("LOSS_SCALE_WINDOW", literal(ls.window), "loss_scale.window"),
        ]
    clip = cfg.grad.clip
    if clip is not None:
        name, value = ("CLIP_VALUE", clip.clip_value) if clip.kind == "value" else ("MAX_NORM", clip.max_norm)
        precision.append(Constant(name, literal(value), f"grad.clip.{name.lower()}"))
    if step.accumulate:
        precision.append(
            Constant("ACCUMULATION_STEPS", literal(cfg.grad.accumulation_steps), "grad.accumulation_steps")
        )
    if precision:
        groups.append(precision)
    if cfg.parallel.mode == "data_parallel":
        groups.append(
            [
                Constant("WORKERS", literal(cfg.parallel.workers), "parallel.workers"),
                Constant("GRADIENTS_MEAN", literal(cfg.parallel.gradients_mean), "parallel.gradients_mean"),
            ]
        )
    return groups


def _runtime(cfg: Config) -> SimpleNamespace:
    rt = cfg.runtime
    return SimpleNamespace(
        mode_const="ms.GRAPH_MODE" if rt.mode == "graph" else "ms.PYNATIVE_MODE",
        device=rt.device_target,
        on_cpu=rt.device_target == "CPU",
        cpu_threads=rt.cpu_threads,
        max_device_memory=rt.max_device_memory,
    )


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
    metrics = (
        cfg.eval.metrics if cfg.eval else [SimpleNamespace(name="accuracy"), SimpleNamespace(name="loss")]
    )
    out = []
    for m in metrics:
        ns = SimpleNamespace(module=None, attr=None, sys_path=None)
        if isinstance(m, ImportedMetric):
            ns.module, _, ns.attr = m.cls.partition(":")
            ns.sys_path = rel.sys_path_for(ns.module)
            ns.key, ns.expr = m.key, call(ns.attr, **m.kwargs)
        elif isinstance(m, TopKMetric):
            ns.key, ns.expr = f"top_{m.k}", f"nn.TopKCategoricalAccuracy({m.k})"
        else:
            ns.key, ns.expr = m.name, METRIC_CLASSES[m.name]
        out.append(ns)
    return out


def _step(cfg: Config, variant: Variant, imports: Imports) -> SimpleNamespace:
    """The train step: what it adds to TrainOneStepCell and whether Model needs it as a custom cell."""
    ls, grad = cfg.loss_scale, cfg.grad
    scaler = None
    if isinstance(ls, DynamicLossScale):
        scaler = "dynamic"
    elif isinstance(ls, FixedLossScale) and ls.drop_overflow_update:
        scaler = "static"
    # Model's own fixed loss scaling (FixedLossScaleManager) leaves the gradients scaled until the
    # optimizer divides them (optimizer loss_scale): clipping, grad.process and accumulation would
    # see scaled gradients, and weight decay, added to the scaled gradients, would shrink by the
    # scale. Any of those makes the train cell unscale the gradients itself (optimizer loss_scale 1).
    fixed_in_cell = (
        isinstance(ls, FixedLossScale)
        and not ls.drop_overflow_update
        and bool(grad.clip or grad.process or grad.accumulation_steps > 1 or cfg.optimizer.weight_decay)
    )
    if fixed_in_cell:
        scaler = "fixed"
    s = SimpleNamespace(
        scaler=scaler,
        check_overflow=scaler in ("dynamic", "static"),
        fixed_sens=isinstance(ls, FixedLossScale) and not ls.drop_overflow_update and not fixed_in_cell,
        accumulate=grad.accumulation_steps > 1,
        process=grad.process is not None,
        process_path=grad.process,
        process_module=grad.process.partition(":")[0] if grad.process else None,
        process_attr=grad.process.partition(":")[2] if grad.process else None,
        process_sys_path=None,
        parallel=False,
        clip_kind=grad.clip.kind if grad.clip else None,
        clip_expr=None,
        returns_scale=scaler in ("dynamic", "static"),
    )
    if isinstance(grad.clip, GlobalNormClip):
        s.clip_expr = "ops.clip_by_global_norm(grads, MAX_NORM)"
    elif isinstance(grad.clip, NormClip):
        s.clip_expr = "tuple(ops.clip_by_norm(grad, MAX_NORM) for grad in grads)"
    elif grad.clip is not None:
        s.clip_expr = "tuple(ops.clamp(grad, -CLIP_VALUE, CLIP_VALUE) for grad in grads)"
    reasons = []
    if scaler == "dynamic":
        reasons.append(
            "loss_scale.kind dynamic: Model's DynamicLossScaleManager has no CPU kernel "
            "(NPUGetFloatStatusV2); this cell uses amp.DynamicLossScaler and all_finite instead"
        )
    elif scaler == "static":
        reasons.append(
            "loss_scale.drop_overflow_update: Model supports it on GPU/Ascend only; "
            "this cell skips overflowing steps with amp.all_finite on any device"
        )
    elif scaler == "fixed" and cfg.optimizer.weight_decay:
        reasons.append(
            "loss_scale.kind fixed with optimizer.weight_decay: with Model's FixedLossScaleManager the "
            "optimizer adds weight decay to the scaled gradients and divides both by the scale; "
            "this cell unscales the gradients before the optimizer"
        )
    if grad.clip:
        reasons.append(f"grad.clip ({grad.clip.kind}): Model has no clipping option")
    if s.accumulate:
        reasons.append(
            "grad.accumulation_steps: Model has no accumulation option for data parallel "
            "or stand-alone training on CPU"
        )
    if s.process:
        reasons.append("grad.process: Model has no hook between backward and the optimizer")
    s.custom_cell = bool(reasons)
    s.custom_reason = "; ".join(reasons)
    extras = []
    if scaler:
        extras.append(f"loss scaling ({ls.kind})")
    if grad.clip:
        extras.append(f"clipping ({grad.clip.kind})")
    if s.process:
        extras.append("gradient processing")
    if s.accumulate:
        extras.append(f"accumulation over {grad.accumulation_steps} batches")
    s.extras = extras
    s.returns_doc = "(loss, overflow, loss scale)" if s.returns_scale else "the loss"
    if variant == "native" or s.custom_cell:
        imports.names("mindspore", "ops")
    if scaler:
        imports.names("mindspore", "amp")
    return s


def _amp(cfg: Config, variant: Variant, step: SimpleNamespace, imports: Imports) -> SimpleNamespace:
    amp = cfg.amp
    keep = amp.keep_batchnorm_fp32
    native_level = amp.level
    if (amp.level == "O2" and keep is False) or (amp.level == "O3" and keep is not True):
        native_level = "O3"
    elif amp.level in ("O2", "O3"):
        native_level = "O2"
    enabled = amp.level != "O0"
    # Model converts the network itself from amp_level, unless it gets a ready train cell
    # (step.custom_cell) or the config keeps cells in fp32, which amp_level cannot express.
    convert = enabled and (variant == "native" or step.custom_cell or bool(amp.fp32_cells))
    if convert:
        imports.names("mindspore", "amp")
    descriptions = {
        "O1": "float16 for the ops on MindSpore's white list (convolutions, dense, ReLU)",
        "O2": "float16 everywhere except BatchNorm",
        "O3": "float16 everywhere",
        "auto": "float16 or float32 per op, from MindSpore's lists",
    }
    cast = native_level in ("O2", "O3", "auto")
    if cast and variant == "native":
        imports.names("mindspore", "ops")
    return SimpleNamespace(
        level=amp.level,
        native_level=native_level,
        convert_in_script=convert,
        convert_comment=descriptions.get(native_level, "")
        + ("; what Model(amp_level=...) does" if variant == "native" else ""),
        fp32_cells=list(amp.fp32_cells),
        cast_loss_fp32=cast,
        eval_cast_fp32=cast,
    )


def _model(cfg: Config, step: SimpleNamespace, amp: SimpleNamespace, imports: Imports) -> SimpleNamespace:
    imports.names("mindspore.train", "Callback", "Model")
    if cfg.callbacks.loss_monitor:
        imports.names("mindspore.train", "LossMonitor")
    if cfg.callbacks.time_monitor:
        imports.names("mindspore.train", "TimeMonitor")
    if cfg.callbacks.checkpoint:
        imports.names("mindspore.train", "CheckpointConfig", "ModelCheckpoint")
    kwargs: list[tuple[str, str, str]] = []
    loss_in_network = amp.convert_in_script and not step.custom_cell
    if amp.cast_loss_fp32 and loss_in_network:
        imports.names("mindspore", "ops")
    if amp.level != "O0" and not amp.convert_in_script:
        kwargs.append(("amp_level", literal(amp.level), "amp.level"))
        if cfg.amp.keep_batchnorm_fp32 is not None:
            kwargs.append(
                ("keep_batchnorm_fp32", literal(cfg.amp.keep_batchnorm_fp32), "amp.keep_batchnorm_fp32")
            )
    if step.fixed_sens and not step.custom_cell:
        imports.names("mindspore.amp", "FixedLossScaleManager")
        kwargs.append(
            (
                "loss_scale_manager",
                "FixedLossScaleManager(LOSS_SCALE, drop_overflow_update=False)",
                "loss_scale.kind fixed; the optimizer divides by the same scale",
            )
        )
    elif amp.level == "O2" and not amp.convert_in_script and cfg.loss_scale.kind == "none":
        kwargs.append(
            (
                "loss_scale_manager",
                "None",
                "loss_scale.kind none (O2 would default to dynamic scaling, rejected on CPU)",
            )
        )
    return SimpleNamespace(
        kwargs=kwargs,
        custom_reason=step.custom_reason,
        loss_in_network=loss_in_network and amp.cast_loss_fp32,
        # WithLossFp32 is written out for the custom train cell and for the network+loss cell
        loss_cell=amp.cast_loss_fp32 and (step.custom_cell or loss_in_network),
        loss_in_network_reason="amp.fp32_cells: Model's amp_level cannot keep chosen cells in float32, so the "
        "network is converted in build_network() and Model gets network + float32 loss as one cell",
    )


def _early_stopping(cfg: Config) -> SimpleNamespace | None:
    early = cfg.callbacks.early_stopping
    if early is None or cfg.data.eval is None:
        return None
    mode = early.mode or ("min" if early.monitor.endswith("loss") else "max")
    return SimpleNamespace(mode=mode, maximize=mode == "max")


def _checkpoint(cfg: Config) -> SimpleNamespace | None:
    ckpt = cfg.callbacks.checkpoint
    if ckpt is None:
        return None
    k = cfg.grad.accumulation_steps
    if ckpt.every_steps:
        if k > 1:
            return SimpleNamespace(
                every_expr="CHECKPOINT_EVERY_STEPS * ACCUMULATION_STEPS",
                every_comment="callbacks.checkpoint.every_steps counts optimizer steps of ACCUMULATION_STEPS batches",
            )
        return SimpleNamespace(
            every_expr="CHECKPOINT_EVERY_STEPS", every_comment="callbacks.checkpoint.every_steps"
        )
    return SimpleNamespace(
        every_expr="CHECKPOINT_EVERY_EPOCHS * steps_per_epoch",
        every_comment="callbacks.checkpoint.every_epochs, converted to batches",
    )


def _train(cfg: Config, variant: Variant) -> SimpleNamespace:
    t, on_cpu = cfg.train, cfg.runtime.device_target == "CPU"
    comment = None
    if t.dataset_sink_mode and on_cpu:
        comment = "MindSpore ignores sink mode on CPU and feeds one batch per step" + (
            "; sink_size then only changes LossMonitor's step numbering" if variant == "model" else ""
        )
    elif t.dataset_sink_mode and variant == "native":
        comment = (
            "this loop feeds one batch per step; to sink on GPU/Ascend wrap the step with "
            "ms.data_sink (not generated: it cannot be verified on CPU)"
        )
    return SimpleNamespace(sink_mode=t.dataset_sink_mode, sink_size=t.sink_size, sink_comment=comment)


def _parallel(
    cfg: Config, variant: Variant, datasets: list[SimpleNamespace], step: SimpleNamespace, imports: Imports
) -> SimpleNamespace:
    """parallel.mode data_parallel: shard data.train by rank, all-reduce in TrainStep, launch with msrun.

    Sets the hooks the shared templates branch on: the train dataset's `sharded` and `batch_expr`,
    `step.parallel` (TrainStep gets nn.DistributedGradReducer), and the train dataset call.
    """
    par = cfg.parallel
    if par.mode != "data_parallel":
        return SimpleNamespace(enabled=False, train_dataset_call=None)
    imports.module("os")
    imports.module("sys")
    imports.names("mindspore.communication", "get_group_size", "get_rank", "init")
    train = datasets[0]
    train.sharded = True
    # data.train.batch_size is the global batch: each of the num_shards workers takes an equal share.
    train.batch_expr = f"{literal(train.spec.batch_size)} // num_shards"
    if train.spec.kind != "import":  # an imported factory's dataset is sharded with .shard() instead
        train.source_args += ", num_shards=num_shards, shard_id=shard_id"
    order = "one global shuffle order (runtime.seed)" if train.spec.shuffle else "in order"
    drop = ", last partial batch dropped" if train.spec.drop_remainder else ""
    train.summary = (
        f"shard shard_id of num_shards (one per worker), global batch {train.spec.batch_size} split evenly "
        f"over the workers, {order}{drop}"
    )
    # Model's TrainOneStepCell adds the reducer itself under the parallel context; every TrainStep
    # (native always, model when it is the custom cell) writes it out.
    step.parallel = True
    return SimpleNamespace(
        enabled=True,
        variant=variant,
        workers=par.workers,
        gradients_mean=par.gradients_mean,
        per_rank_logs=par.per_rank_logs,
        set_context=variant == "model",
        train_dataset_call=f"{train.function}(num_shards=group_size, shard_id=rank)",
    )
