"""Plan: every value a template prints, resolved from a validated config, as frozen typed data.

Built in dependency order, nothing mutated after it is built: `build_shared` resolves what both
variants print (computed once), `variant_plan` adds what differs per variant. Templates only print
and branch on these fields; a condition computed here and again in a template is a bug waiting.
Nothing here imports MindSpore.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar, Literal

from mscodegen.catalog.literals import Call, Name
from mscodegen.plan.adapt import Distill, Freeze, Pretrained, adapt_constants, build_distill
from mscodegen.plan.data import DatasetUse, build_data
from mscodegen.plan.frame import Frame, frame_fields
from mscodegen.plan.gan import GanPlan, GanShared, build_gan_shared, gan_variant_plan
from mscodegen.plan.heads import Heads, build_heads, heads_loss, with_heads
from mscodegen.plan.imports import Import
from mscodegen.plan.loop import (
    DeviceNote,
    EarlyStopping,
    EvalSteps,
    Ranking,
    build_constants,
    build_device_notes,
    build_early_stopping,
    build_eval_steps,
    build_ranking,
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
    sys_paths,
)
from mscodegen.plan.step import Step, build_step
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
        """Every column, in the dataset's order: `image, features, label` (`image` when the label is the
        input, labels: [image])."""
        return ", ".join(dict.fromkeys((*self.inputs, *self.labels)))

    @property
    def unpack(self) -> str:
        """A batch unpacked in a for loop: `image, label`, or `image,` for a batch of one column."""
        return self.batch if "," in self.batch else f"{self.batch},"

    @property
    def target_is_input(self) -> bool:
        """A label is an input column (labels: [image]): the loss compares the output with the input."""
        return bool(set(self.labels) & set(self.inputs))

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
    def why_own_cells(self) -> str:
        """Why the scripts write WithLossColumns, for its docstring."""
        if self.target_is_input:
            return "the input is the target (data.labels)"
        return "nn.WithLossCell passes one column to each"

    @property
    def own_cells(self) -> bool:
        """More than one network input or label: nn.WithLossCell / WithEvalCell take (data, label), so the
        scripts write the loss and eval cells (WithLossColumns, WithEvalColumns) that name every column."""
        return len(self.inputs) > 1 or len(self.labels) > 1 or self.target_is_input


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
    eval_steps: EvalSteps | None = None  # eval.every_steps (then no evaluation at an epoch's end)
    pretrained: Pretrained | None = None  # network.checkpoint
    freeze: Freeze | None = None  # network.freeze
    ema: bool = False  # ema: an EMA of the weights, which evaluation and checkpoints use
    keep_best: Ranking | None = None  # callbacks.checkpoint.keep (best k)
    ranked_checkpoints: Ranking | None = None  # callbacks.checkpoint.keep_max_by
    columns: Columns = Columns(("image",), ("label",))  # data.inputs, data.labels
    heads: Heads | None = None  # loss.heads: one output, loss and label per head
    distill: Distill | None = None  # distill: a frozen teacher's soft targets in the loss

    @property
    def eval_data(self) -> DatasetUse | None:
        return self.datasets[1] if len(self.datasets) > 1 else None

    @property
    def latest_checkpoints(self) -> bool:
        """ModelCheckpoint saves, keeping the latest keep_max (keep_max_by ranks them by a metric instead)."""
        return self.checkpoint is not None and self.ranked_checkpoints is None

    @property
    def ranks_checkpoints(self) -> bool:
        return self.ranked_checkpoints is not None

    @property
    def checkpoint_writer(self) -> str:
        """What both variants make their checkpoints with: RankedCheckpoints (keep_max_by) or checkpoint_callback."""
        return "checkpoint_callback" if self.ranked_checkpoints is None else "RankedCheckpoints"

    @property
    def checkpoint_class(self) -> str:
        """The callback that writes the checkpoints (the native loop hands it what Model would)."""
        return "ModelCheckpoint" if self.ranked_checkpoints is None else "RankedCheckpoints"

    @property
    def eval_per_epoch(self) -> bool:
        """Evaluations at an epoch's end (Model.fit's); eval.every_steps evaluates after steps instead."""
        return self.eval_data is not None and self.eval_steps is None

    @property
    def eval_cell(self) -> Literal["nn", "fp32", "columns", "heads"]:
        """The cells of network + loss and of evaluation: nn's (WithLossCell, WithEvalCell), nn's with the
        output cast to float32 (WithLossFp32, WithEvalCell(add_cast_fp32=True)), those naming every
        column (WithLossColumns, WithEvalColumns), or with several heads WithLossColumns and WithEvalHeads
        (every head's output and label, for the metrics to pick theirs)."""
        if self.heads is not None:
            return "heads"
        if self.columns.own_cells:
            return "columns"
        return "fp32" if self.amp.cast_loss_fp32 else "nn"

    @property
    def eval_label(self) -> str:
        """What the evaluation line names, as an f-string part: `Eval result: epoch 2, metrics: {...}`."""
        return "epoch {epoch}" if self.eval_steps is None else self.eval_steps.label


@dataclass(frozen=True, slots=True)
class ModelCall:
    """How the model variant builds Model (the native variant has no Model)."""

    # train_cell: Model(TrainStep(...)) with an explicit eval network (Model cannot express the step);
    # net_with_loss: Model(WithLossFp32(network, loss_fn), optimizer=...): network converted in the script;
    # network: Model(network, loss_fn=..., optimizer=..., amp options) builds everything itself.
    form: Literal["train_cell", "net_with_loss", "network"]
    reasons: tuple[str, ...]  # why not the plain form, one comment paragraph each
    amp_level: str | None = None  # amp.level: Model converts the network itself
    keep_batchnorm_fp32: bool | None = None  # amp.keep_batchnorm_fp32
    # loss_scale.kind fixed (the optimizer divides by the same scale): FixedLossScaleManager(LOSS_SCALE);
    # none at O2, which would default to dynamic scaling (rejected on CPU): None
    loss_scale_manager: Literal["fixed", "none"] | None = None

    @property
    def options(self) -> tuple[tuple[str, object], ...]:
        """Model's keyword arguments after the networks and metrics, as values the py filter prints."""
        fixed = Call.of("FixedLossScaleManager", Name("LOSS_SCALE"), drop_overflow_update=False)
        options = {
            "amp_level": self.amp_level,
            "keep_batchnorm_fp32": self.keep_batchnorm_fp32,
            "loss_scale_manager": self.loss_scale_manager,
        }
        return tuple(
            (key, fixed if value == "fixed" else None if value == "none" else value)
            for key, value in options.items()
            if value is not None
        )


@dataclass(frozen=True, slots=True)
class Plan:
    """What one generated script says; see templates/ for how it is printed."""

    variant: Variant
    docstring: str
    imports: tuple[Import, ...]
    shared: Shared
    convert_network: bool  # amp.auto_mixed_precision in train()
    amp_comment: str
    cells: tuple[str, ...]  # the cells written before train(), in order (macros of _step.py.j2)
    definitions: tuple[str, ...]  # the callbacks and helpers train() uses, in order (macros of _loop.py.j2)
    eval_loss_metric: bool  # an nn.Loss metric: evaluate() feeds it the loss
    model: ModelCall | None  # model variant only
    callbacks: tuple[str, ...]  # model variant: the classes of the callbacks train() passes to Model
    sets_parallel_context: bool  # data parallel through Model: ms.set_auto_parallel_context
    device_notes: tuple[DeviceNote, ...]
    needs_steps_per_epoch: bool  # train() reads train_dataset.get_dataset_size()
    caps_onednn: ClassVar[bool] = False  # the header sets ONEDNN_MAX_CPU_ISA (GanPlan's does)

    @property
    def eval_every(self) -> bool:
        """eval.every_epochs above 1: evaluations only in eval_epochs."""
        return self.shared.eval_data is not None and self.shared.eval_every != 1

    @property
    def eval_schedule(self) -> tuple[str, ...]:
        """What train() computes of when to evaluate (macros of _run.py.j2): the epochs (eval.every_epochs
        above 1), the last step (eval.every_steps), or nothing (every epoch)."""
        if self.shared.eval_steps is not None:
            return ("last_step",)
        return ("eval_epochs",) if self.eval_every else ()

    @property
    def loss_cell(self) -> Literal["nn", "fp32", "columns", "heads", "distill"]:
        """The cell of network + loss: WithDistillLoss (student, teacher and loss), or eval_cell's kind."""
        return "distill" if self.shared.distill is not None else self.eval_cell

    @property
    def eval_cell(self) -> Literal["nn", "fp32", "columns", "heads"]:
        return self.shared.eval_cell

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
    network, metrics, heads = build_network(cfg, rel), build_metrics(cfg, rel), build_heads(cfg)
    loss = build_loss(cfg, rel) if heads is None else heads_loss(heads)
    distill = build_distill(cfg, rel, network)
    written = {m.call.func for m in metrics if m.factory is None}  # MindSpore's classes and the script's own
    if heads is not None:
        metrics = with_heads(cfg, heads, metrics)
    heads_constants = heads.constants if heads is not None else ()
    constants = build_constants(cfg, data, config_sha256) + adapt_constants(cfg, rel, heads_constants)
    ckpt, freeze = cfg.network.checkpoint, cfg.network.freeze
    return Shared(
        **frame_fields(cfg, data, name=name, source=source),
        constants=constants,
        network=network,
        sys_paths=sys_paths(
            [network.factory, loss.factory, step.process, *(f.factory for f in data.functions)]
            + [distill.teacher.factory if distill else None]
            + [m.factory for m in metrics]
        ),
        loss=loss,
        lr=build_lr(cfg),
        optimizer=build_optimizer(cfg, loss_scale_in_optimizer=step.fixed_sens),
        metrics=metrics,
        binary_metric="BinaryMetric" in written,
        auc_metric="AUC" in written,
        step=step,
        early_stopping=build_early_stopping(cfg),
        sink_mode=cfg.train.dataset_sink_mode,
        sink_size=cfg.train.sink_size,
        eval_every=cfg.eval.every_epochs if cfg.eval else 1,
        eval_steps=build_eval_steps(cfg),
        pretrained=None if ckpt is None else Pretrained(ckpt.strict),
        freeze=None if freeze is None else Freeze(freeze.epochs),
        ema=cfg.ema is not None,
        keep_best=build_ranking(cfg, "keep"),
        ranked_checkpoints=build_ranking(cfg, "keep_max_by"),
        columns=Columns(tuple(cfg.data.inputs), tuple(cfg.data.labels)),
        heads=heads,
        distill=distill,
    )


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
    what = "mindspore.train.Model" if variant == "model" else "an explicit MindSpore training loop"
    amp_comment = amp.description + ("; what Model(amp_level=...) does" if variant == "native" else "")
    needs_steps = (
        shared.lr.is_list
        or shared.eval_steps is not None
        or shared.resumable
        or (shared.checkpoint is not None and shared.checkpoint.unit == "epochs")
        or (variant == "native" and shared.checkpoint is not None)
    )
    wanted = {
        "focal_on_indices": shared.loss.on_indices,
        "aux_logits_loss": shared.loss.aux_logits,
        "ema": shared.ema,
        "gradient_processor": writes_step and step.process is not None,
        "loss_cell": uses_loss_cell and amp.cast_loss_fp32 and not shared.columns.own_cells,  # WithLossFp32
        "column_cells": shared.columns.own_cells,
        "eval_columns_cell": shared.columns.own_cells and shared.heads is None,  # WithEvalHeads replaces it
        "heads_cells": shared.heads is not None,
        "distill": shared.distill is not None,
        "train_step": writes_step,
    }
    cells = tuple(name for name, on in wanted.items() if on)
    return Plan(
        variant=variant,
        docstring=f"{shared.header.name}: {shared.network.short} trained with {what}.",
        imports=_imports(shared, convert=convert, cells=cells, model=model),
        shared=shared,
        convert_network=convert,
        amp_comment=amp_comment,
        cells=cells,
        definitions=_definitions(shared, model=variant == "model"),
        eval_loss_metric=any(m.call.func == "nn.Loss" for m in shared.metrics),
        model=model,
        callbacks=_callbacks(shared) if variant == "model" else (),
        sets_parallel_context=model is not None and shared.parallel is not None,
        device_notes=build_device_notes(cfg, model_variant=variant == "model"),
        needs_steps_per_epoch=needs_steps,
    )


def _definitions(s: Shared, *, model: bool) -> tuple[str, ...]:
    """What the script defines for train() to use besides the cells, in order (macros of _loop.py.j2)."""
    definitions = {
        "check_step": model,
        "epoch_time": model and s.time_monitor and s.eval_per_epoch,
        "binary_metric": s.binary_metric,
        "element_mean": any(m.call.func == "ElementMean" for m in s.metrics),
        "auc": s.auc_metric,
        "head_metric": any(m.head is not None for m in s.metrics),
        "evaluate": not model and s.eval_data is not None and s.heads is None,
        "evaluate_heads": not model and s.eval_data is not None and s.heads is not None,
        "early_stop": s.early_stopping is not None,
        "keep_best": s.keep_best is not None,
        "evaluate_on_averages": model and s.ema,
        "evaluate_every_steps": model and s.eval_steps is not None,
    }
    return tuple(name for name, on in definitions.items() if on)


def _callbacks(s: Shared) -> tuple[str, ...]:
    """The model variant's callbacks, in the order Model calls them (checkpoints are added after)."""
    callbacks = {
        "CheckStep": True,
        "LossMonitor": s.loss_monitor,
        "EpochTime": s.time_monitor and s.eval_per_epoch,
        "TimeMonitor": s.time_monitor and not s.eval_per_epoch,
        "EvaluateOnAverages": s.ema and s.eval_steps is None,  # else EvaluateEverySteps uses it
        "EvaluateEverySteps": s.eval_steps is not None,
        "EarlyStop": s.early_stopping is not None,
    }
    return tuple(name for name, on in callbacks.items() if on)


def _model_call(shared: Shared, *, convert: bool) -> ModelCall:
    amp, step = shared.amp, shared.step
    if step.custom_cell:
        return ModelCall("train_cell", step.custom_reasons)
    if shared.distill is not None:
        reason = (
            "distill: the loss takes the teacher's logits too, so Model gets student, teacher and loss as one "
            "cell (WithDistillLoss), and an eval network of the student and its loss alone"
        )
        return ModelCall("net_with_loss", (reason,))
    level = amp.enabled and not convert
    manager: Literal["fixed", "none"] | None = (
        "fixed" if step.fixed_sens else "none" if amp.level == "O2" and not convert else None
    )
    options = ModelCall(
        "network",
        (),
        amp_level=amp.level if level else None,
        keep_batchnorm_fp32=amp.keep_batchnorm_fp32 if level else None,
        loss_scale_manager=manager,
    )
    if shared.columns.own_cells:
        c = shared.columns
        takes = f"the network takes {_count(len(c.inputs), 'column')} and the loss {_count(len(c.labels), 'label')}"
        reason = (
            f"data.inputs, data.labels: {takes}, so Model gets network + loss as one cell naming every column, "
            "and an eval network that does the same (Model(network, loss_fn=...) feeds one column to each)"
        )
        if shared.heads is not None:
            reason += (
                "; with several heads the eval network returns (loss, outputs, labels), a tuple of each "
                "per head, and HeadMetric hands a metric its head's"
            )
        if c.target_is_input:
            reason = (
                f"data.labels: [{c.label_args}], the target is the input: the batches carry {c.batch} alone, "
                "so Model gets network + loss as one cell that gives the loss the input, and an eval network "
                "that does the same (Model(network, loss_fn=...) would feed the loss a second column)"
            )
        return replace(options, form="net_with_loss", reasons=(reason,))
    if convert and amp.cast_loss_fp32:
        reason = (
            "amp.fp32_cells: Model's amp_level cannot keep chosen cells in float32, so the network is "
            "converted in train() and Model gets network + float32 loss as one cell"
        )
        return replace(options, form="net_with_loss", reasons=(reason,))
    return options


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _imports(
    s: Shared, *, convert: bool, cells: tuple[str, ...], model: ModelCall | None
) -> tuple[Import, ...]:
    """The import records, derived from the resolved plan (never collected while building it)."""
    networks = (s.network, *((s.distill.teacher,) if s.distill else ()))  # the student, the teacher
    needs = {
        "math": True,
        "fnmatch": bool(s.optimizer.groups) or s.pretrained is not None or s.freeze is not None,
        "numpy": bool({"digits", "synthetic", "to_vector", "to_vector_filled"} & set(s.data_helpers))
        or s.auc_metric,
        "initializer": any(n.dense_init or n.conv_init for n in networks),
        "create_model": any(n.kind == "mindcv" for n in networks),
        "ops": bool({"train_step", "loss_cell", "ema", "distill"} & set(cells)),
        "amp": convert or ("train_step" in cells and s.step.scaler is not None),
        "loss_monitor": model is not None and s.loss_monitor,
        "fixed_loss_scale": model is not None and model.loss_scale_manager == "fixed",
    }
    optimizer = ((s.optimizer.module, s.optimizer.class_name),) if s.optimizer.module else ()
    return s.script_imports(needs, *optimizer, native=model is None, keep_best=s.keep_best is not None)
