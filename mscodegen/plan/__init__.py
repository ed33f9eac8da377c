"""Plan: every value a template prints, resolved from a validated config, as frozen typed data.

Built in dependency order, nothing mutated after it is built: `build_shared` resolves what both
variants print (computed once), `build_plan` adds what differs per variant. Templates only print
and branch on these fields; a condition computed here and again in a template is a bug waiting.
Nothing here imports MindSpore.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from mscodegen import __version__
from mscodegen.catalog.literals import literal
from mscodegen.plan.adapt import Ema, Freeze, Pretrained, build_ema, build_freeze, build_pretrained
from mscodegen.plan.data import DatasetUse, build_data
from mscodegen.plan.frame import Frame
from mscodegen.plan.gan import GanPlan, GanShared, build_gan_shared, gan_variant_plan
from mscodegen.plan.imports import Imports
from mscodegen.plan.loop import (
    Constant,
    DeviceNote,
    EarlyStopping,
    Header,
    KeepBest,
    build_checkpoint,
    build_constants,
    build_device_notes,
    build_early_stopping,
    build_keep_best,
)
from mscodegen.plan.setup import (
    Loss,
    LRSchedule,
    Metric,
    Network,
    Optimizer,
    Relative,
    build_loss,
    build_lr,
    build_metrics,
    build_network,
    build_optimizer,
    build_runtime,
    sys_paths,
)
from mscodegen.plan.step import Step, build_amp, build_parallel, build_step
from mscodegen.schema import Config
from mscodegen.schema.gan import GanConfig

__all__ = [
    "SCRIPT_NAMES",
    "VARIANTS",
    "AnyPlan",
    "AnyShared",
    "Plan",
    "Shared",
    "Variant",
    "build_plan",
    "build_plans",
    "build_shared",
]

Variant = Literal["model", "native"]
VARIANTS: tuple[Variant, ...] = ("model", "native")
SCRIPT_NAMES: dict[str, str] = {"model": "train_model.py", "native": "train_native.py"}


@dataclass(frozen=True, slots=True)
class Columns:
    """data.inputs and data.labels: the names the loops, cells and calls give a batch's columns."""

    inputs: tuple[str, ...]
    labels: tuple[str, ...]

    @property
    def batch(self) -> str:
        """Every column, in the dataset's order: `image, features, label`."""
        return ", ".join((*self.inputs, *self.labels))

    @property
    def network_args(self) -> str:
        """The network's arguments: `image, features`."""
        return ", ".join(self.inputs)

    @property
    def label(self) -> str:
        """The label the metrics get (the first; validate allows only `loss` metrics with several)."""
        return self.labels[0]

    @property
    def label_args(self) -> str:
        """The loss's arguments after the network output: `label`, or `label, weight`."""
        return ", ".join(self.labels)

    @property
    def several_labels(self) -> bool:
        """The loss takes several label columns (the metrics: loss only)."""
        return len(self.labels) > 1

    @property
    def own_cells(self) -> bool:
        """More than one network input or label: nn.WithLossCell / WithEvalCell take (data, label), so the
        scripts write the loss and eval cells (WithLossColumns, WithEvalColumns) that name every column."""
        return len(self.inputs) > 1 or len(self.labels) > 1


@dataclass(frozen=True, slots=True)
class Shared(Frame):
    """Everything both variants print the same way: the frame, and one network's training."""

    network: Network
    loss: Loss
    lr: LRSchedule
    optimizer: Optimizer
    metrics: tuple[Metric, ...]
    binary_metric: bool  # the script writes BinaryMetric (binary_accuracy, ...)
    auc_metric: bool  # the script writes AUC
    step: Step
    early_stopping: EarlyStopping | None
    sink_mode: bool  # train.dataset_sink_mode
    sink_size: int
    eval_every: int  # eval.every_epochs
    pretrained: Pretrained | None = None  # network.checkpoint
    freeze: Freeze | None = None  # network.freeze
    ema: Ema | None = None  # ema
    keep_best: KeepBest | None = None  # callbacks.checkpoint.keep (best k)
    columns: Columns = Columns(("image",), ("label",))  # data.inputs, data.labels

    @property
    def eval_data(self) -> DatasetUse | None:
        return self.datasets[1] if len(self.datasets) > 1 else None


@dataclass(frozen=True, slots=True)
class ModelKwarg:
    name: str
    value: str  # a Python expression
    comment: str


@dataclass(frozen=True, slots=True)
class ModelCall:
    """How the model variant builds Model (the native variant has no Model)."""

    # train_cell: Model(TrainStep(...)) with an explicit eval network (Model cannot express the step);
    # net_with_loss: Model(WithLossFp32(network, loss_fn), optimizer=...): network converted in the script;
    # network: Model(network, loss_fn=..., optimizer=..., amp options) builds everything itself.
    form: Literal["train_cell", "net_with_loss", "network"]
    reasons: tuple[str, ...]  # why not the plain form, one comment paragraph each
    kwargs: tuple[ModelKwarg, ...]


@dataclass(frozen=True, slots=True)
class Plan:
    """What one generated script says; see templates/ for how it is printed."""

    variant: Variant
    docstring: str
    imports: tuple[str, ...]
    shared: Shared
    convert_network: bool  # amp.auto_mixed_precision in train()
    amp_comment: str
    writes_train_step: bool  # the TrainStep cell is written out
    writes_loss_cell: bool  # the WithLossFp32 cell is written out
    net_with_loss: str | None  # the class wrapping network + loss for TrainStep / Model
    eval_net: str  # the evaluation network: nn.WithEvalCell(network, loss_fn), WithEvalColumns(...)
    eval_loss_metric: bool  # an nn.Loss metric: evaluate() feeds it the loss
    model: ModelCall | None  # model variant only
    callbacks: tuple[str, ...]  # model variant: the callbacks list train() passes to Model
    sets_parallel_context: bool  # data parallel through Model: ms.set_auto_parallel_context
    device_notes: tuple[DeviceNote, ...]
    needs_steps_per_epoch: bool  # train() reads train_dataset.get_dataset_size()

    @property
    def eval_every(self) -> bool:
        """eval.every_epochs above 1: evaluations only in eval_epochs."""
        return self.shared.eval_data is not None and self.shared.eval_every != 1

    @property
    def template(self) -> str:
        return f"train_{self.variant}.py.j2"


AnyShared = Shared | GanShared  # one network, or two (gan:)
AnyPlan = Plan | GanPlan


def build_plans(
    cfg: Config | GanConfig,
    variants: tuple[Variant, ...] = ("model", "native"),
    *,
    source: str,
    config_dir: Path,
    out_dir: Path,
    name: str,
    config_sha256: str | None = None,
) -> tuple[AnyShared, dict[Variant, AnyPlan]]:
    """The variant-free part and each variant's plan, for a config of one network or of two."""
    if isinstance(cfg, GanConfig):
        gan = build_gan_shared(
            cfg, source=source, config_dir=config_dir, out_dir=out_dir, name=name, config_sha256=config_sha256
        )
        return gan, {v: gan_variant_plan(cfg, gan, v) for v in variants}
    shared = build_shared(
        cfg, source=source, config_dir=config_dir, out_dir=out_dir, name=name, config_sha256=config_sha256
    )
    return shared, {v: variant_plan(cfg, shared, v) for v in variants}


def build_shared(
    cfg: Config,
    *,
    source: str,
    config_dir: Path,
    out_dir: Path,
    name: str,
    config_sha256: str | None = None,
) -> Shared:
    """Resolve what both variants print, in dependency order."""
    rel = Relative(config_dir, out_dir)
    step = build_step(cfg, rel)
    data = build_data(cfg, rel)
    checkpoint = build_checkpoint(cfg)
    resumable = (
        checkpoint is not None and cfg.callbacks.checkpoint is not None and cfg.callbacks.checkpoint.resumable
    )
    pretrained = build_pretrained(cfg, rel)
    network, loss, metrics = build_network(cfg, rel), build_loss(cfg, rel), build_metrics(cfg, rel)
    freeze = build_freeze(cfg)
    written = {m.call.func for m in metrics if m.factory is None}  # MindSpore's classes and the script's own
    constants = build_constants(
        cfg,
        step,
        data_dir=data.folder,
        data_keys=data.data_dir_keys,
        config_sha256=config_sha256,
        resumable=resumable,
    )
    finetune = []
    if pretrained is not None:
        finetune += [
            Constant(
                "PRETRAINED", f"Path(__file__).parent / {literal(pretrained.path)}", "network.checkpoint.path"
            ),
            Constant("PRETRAINED_SKIP", literal(list(pretrained.skip)), "network.checkpoint.skip"),
        ]
    if freeze is not None:
        finetune.append(Constant("FREEZE", literal(list(freeze.patterns)), "network.freeze.patterns"))
    if finetune:
        constants = (*constants, tuple(finetune))
    return Shared(
        header=Header(name, source, out_dir.as_posix(), __version__, config_sha256),
        constants=constants,
        runtime=build_runtime(cfg),
        network=network,
        data_helpers=data.helpers,
        sys_paths=sys_paths(
            [network.factory, loss.factory, step.process, *(f.factory for f in data.functions)]
            + [m.factory for m in metrics]
        ),
        data_dir=data.data_dir,
        data_dir_keys=data.data_dir_keys,
        dataset_functions=data.functions,
        datasets=data.uses,
        loss=loss,
        lr=build_lr(cfg),
        optimizer=build_optimizer(cfg, loss_scale_in_optimizer=step.fixed_sens),
        metrics=metrics,
        binary_metric="BinaryMetric" in written,
        auc_metric="AUC" in written,
        amp=build_amp(cfg),
        step=step,
        parallel=build_parallel(cfg),
        checkpoint=checkpoint,
        resumable=resumable,
        early_stopping=build_early_stopping(cfg),
        loss_monitor=cfg.callbacks.loss_monitor,
        time_monitor=cfg.callbacks.time_monitor,
        sink_mode=cfg.train.dataset_sink_mode,
        sink_size=cfg.train.sink_size,
        eval_every=cfg.eval.every_epochs if cfg.eval else 1,
        pretrained=pretrained,
        freeze=freeze,
        ema=build_ema(cfg),
        keep_best=build_keep_best(cfg),
        columns=Columns(tuple(cfg.data.inputs), tuple(cfg.data.labels)),
    )


def build_plan(
    cfg: Config,
    variant: Variant,
    *,
    source: str,
    config_dir: Path,
    out_dir: Path,
    name: str,
    config_sha256: str | None = None,
    shared: Shared | None = None,
) -> Plan:
    """Resolve everything `variant`'s template needs (pass `shared` to reuse the variant-free part)."""
    if shared is None:
        shared = build_shared(
            cfg, source=source, config_dir=config_dir, out_dir=out_dir, name=name, config_sha256=config_sha256
        )
    return variant_plan(cfg, shared, variant)


def variant_plan(cfg: Config, shared: Shared, variant: Variant) -> Plan:
    amp, step = shared.amp, shared.step
    model = None
    if variant == "model":
        # Model converts the network itself from amp_level unless it gets a ready train cell or the
        # config keeps cells in float32, which amp_level cannot express.
        convert = amp.enabled and (step.custom_cell or bool(amp.fp32_cells))
        model = _model_call(shared, convert=convert)
        writes_step = step.custom_cell
        uses_loss_cell = model.form != "network"
    else:
        convert = amp.enabled
        writes_step = uses_loss_cell = True
    net_with_loss = ("WithLossFp32" if amp.cast_loss_fp32 else "nn.WithLossCell") if uses_loss_cell else None
    if uses_loss_cell and shared.columns.own_cells:
        net_with_loss = "WithLossColumns"
    writes_loss_cell = net_with_loss == "WithLossFp32"
    what = "mindspore.train.Model" if variant == "model" else "an explicit MindSpore training loop"
    amp_comment = amp.description + ("; what Model(amp_level=...) does" if variant == "native" else "")
    if shared.columns.own_cells:
        eval_net = "WithEvalColumns(network, loss_fn)"
    else:
        cast = ", add_cast_fp32=True" if amp.cast_loss_fp32 else ""
        eval_net = f"nn.WithEvalCell(network, loss_fn{cast})"
    needs_steps = (
        shared.lr.is_list
        or shared.resumable
        or (shared.checkpoint is not None and shared.checkpoint.unit == "epochs")
        or (variant == "native" and shared.checkpoint is not None)
    )
    return Plan(
        variant=variant,
        docstring=f"{shared.header.name}: {shared.network.short} trained with {what}.",
        imports=_imports(
            shared,
            variant=variant,
            convert=convert,
            writes_step=writes_step,
            writes_loss_cell=writes_loss_cell,
            model=model,
        ),
        shared=shared,
        convert_network=convert,
        amp_comment=amp_comment,
        writes_train_step=writes_step,
        writes_loss_cell=writes_loss_cell,
        net_with_loss=net_with_loss,
        eval_net=eval_net,
        eval_loss_metric=any(m.call.func == "nn.Loss" for m in shared.metrics),
        model=model,
        callbacks=_callbacks(shared) if variant == "model" else (),
        sets_parallel_context=model is not None and shared.parallel is not None,
        device_notes=build_device_notes(cfg, model_variant=variant == "model"),
        needs_steps_per_epoch=needs_steps,
    )


def _callbacks(s: Shared) -> tuple[str, ...]:
    """The model variant's callbacks, in the order Model calls them (checkpoints are added after)."""
    out = ["CheckStep(args.max_steps, start_step)" if s.resumable else "CheckStep(args.max_steps)"]
    if s.loss_monitor:
        out.append("LossMonitor(LOG_EVERY_STEPS)")
    if s.time_monitor:
        out.append("EpochTime()" if s.eval_data else "TimeMonitor()")
    if s.ema is not None:
        out.append("EvaluateOnAverages(ema)")
    if s.early_stopping is not None:
        out.append("EarlyStop()")
    return tuple(out)


def _model_call(shared: Shared, *, convert: bool) -> ModelCall:
    amp, step = shared.amp, shared.step
    if step.custom_cell:
        return ModelCall("train_cell", step.custom_reasons, ())
    kwargs: list[ModelKwarg] = []
    if amp.enabled and not convert:
        kwargs.append(ModelKwarg("amp_level", literal(amp.level), "amp.level"))
        if amp.keep_batchnorm_fp32 is not None:
            kwargs.append(
                ModelKwarg("keep_batchnorm_fp32", literal(amp.keep_batchnorm_fp32), "amp.keep_batchnorm_fp32")
            )
    if step.fixed_sens:
        kwargs.append(
            ModelKwarg(
                "loss_scale_manager",
                "FixedLossScaleManager(LOSS_SCALE, drop_overflow_update=False)",
                "loss_scale.kind fixed; the optimizer divides by the same scale",
            )
        )
    elif amp.level == "O2" and not convert:
        kwargs.append(
            ModelKwarg(
                "loss_scale_manager",
                "None",
                "loss_scale.kind none (O2 would default to dynamic scaling, rejected on CPU)",
            )
        )
    if shared.columns.own_cells:
        c = shared.columns
        takes = f"the network takes {_count(len(c.inputs), 'column')} and the loss {_count(len(c.labels), 'label')}"
        reason = (
            f"data.inputs, data.labels: {takes}, so Model gets network + loss as one cell naming every column, "
            "and an eval network that does the same (Model(network, loss_fn=...) feeds one column to each)"
        )
        return ModelCall("net_with_loss", (reason,), tuple(kwargs))
    if convert and amp.cast_loss_fp32:
        reason = (
            "amp.fp32_cells: Model's amp_level cannot keep chosen cells in float32, so the network is "
            "converted in train() and Model gets network + float32 loss as one cell"
        )
        return ModelCall("net_with_loss", (reason,), tuple(kwargs))
    return ModelCall("network", (), tuple(kwargs))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _imports(
    s: Shared,
    *,
    variant: Variant,
    convert: bool,
    writes_step: bool,
    writes_loss_cell: bool,
    model: ModelCall | None,
) -> tuple[str, ...]:
    """The import block, derived from the resolved plan (never collected while building it)."""
    imports = Imports()
    for module in ("argparse",):
        imports.module(module)
    imports.names("pathlib", "Path")
    imports.module("mindspore", "ms")
    imports.names("mindspore", "nn")
    functions = s.dataset_functions
    if any(not f.factory or f.shard_after for f in functions) or s.resumable:
        imports.names("mindspore", "dataset as ds")
    # sys.exit and errno.ENOSPC: the one-line errors for faults of the environment (every script)
    imports.module("errno")
    imports.module("sys")
    if s.checkpoint is not None:  # RUN_ID: when the run started, and its process
        imports.module("os")
        imports.module("time")
    if any(f.workers_line for f in functions):  # os.cpu_count()
        imports.module("os")
    if s.parallel is not None:
        imports.module("os")
        imports.names("mindspore.communication", "get_group_size", "get_rank", "init")
    imports.module("math")  # the NaN guard: math.isfinite
    if s.optimizer.groups or s.pretrained is not None or s.freeze is not None:
        imports.module("fnmatch")
    if s.time_monitor and variant == "native":
        imports.module("time")
    if "unreadable_file" in s.data_helpers:  # a data error's file
        imports.module("re")
    if set(s.data_helpers) & {"digits", "synthetic", "to_vector", "to_vector_filled"} or s.auc_metric:
        imports.module("numpy", "np")
    if "digits" in s.data_helpers:
        imports.names("sklearn.datasets", "load_digits")
    modules = {m for f in functions for m in f.modules}
    if modules & {"vision"}:
        imports.names("mindspore.dataset", "vision")
    if any(f.label_cast for f in functions) or "transforms" in modules:
        imports.names("mindspore.dataset", "transforms")
    if s.network.dense_init or s.network.conv_init:
        imports.names("mindspore.common", "initializer")
    if "text" in modules:
        imports.names("mindspore.dataset", "text")
    if "mindcv" in modules:
        imports.names("mindcv.data.mixup", "Mixup")
    if s.network.kind == "mindcv":
        imports.names("mindcv.models", "create_model")
    if s.optimizer.module is not None:
        imports.names(s.optimizer.module, s.optimizer.class_name)
    if writes_step or writes_loss_cell or s.ema is not None:
        imports.names("mindspore", "ops")
    if convert or (writes_step and s.step.scaler):
        imports.names("mindspore", "amp")
    if model is not None:
        imports.names("mindspore", "Model")  # mindspore.train.Model
        imports.names("mindspore.train", "Callback")
        if s.loss_monitor:
            imports.names("mindspore.train", "LossMonitor")
        if s.time_monitor:
            imports.names("mindspore.train", "TimeMonitor")
        if model.form == "network" and s.step.fixed_sens:
            imports.names("mindspore.amp", "FixedLossScaleManager")
    if s.checkpoint is not None:  # both variants save through ModelCheckpoint
        imports.names("mindspore.train", "CheckpointConfig", "ModelCheckpoint")
        if model is None:  # the native loop calls it as Model would
            imports.names("mindspore.train", "RunContext")
    return tuple(imports.lines())
