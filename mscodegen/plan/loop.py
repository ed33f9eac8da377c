"""Plan of the run around the step: module constants, checkpoints, evaluation, early stopping, devices."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath
from typing import Literal

from mscodegen.catalog.literals import RunStamp
from mscodegen.plan.step import Step
from mscodegen.schema import Config
from mscodegen.schema.gan import GanConfig
from mscodegen.schema.network import MindcvNetwork
from mscodegen.schema.optim import (
    CosineLR,
    ExponentialLR,
    OneCycleLR,
    PiecewiseLR,
    PolynomialLR,
    WarmupCosineLR,
)
from mscodegen.schema.precision import DynamicLossScale, FixedLossScale
from mscodegen.schema.training import LOWER_IS_BETTER

DEVICES = ("CPU", "GPU", "Ascend")
# What checkpoints.py defines, not the training scripts: both variants write and find checkpoints alike.
CHECKPOINTS_NAME = "checkpoints.py"
CHECKPOINTS_CONSTANTS = frozenset(
    {
        "CONFIG_SHA256",
        "RUN_ID",
        "CHECKPOINT_DIR",
        "CHECKPOINT_PREFIX",
        "CHECKPOINT_KEEP_MAX",
        "CHECKPOINT_EVERY_STEPS",
        "CHECKPOINT_EVERY_EPOCHS",
        "CHECKPOINT_MONITOR",
    }
)


@dataclass(frozen=True, slots=True)
class Header:
    """The scripts' docstring header (both forms): the run, the config, mscodegen's version."""

    name: str
    source: str  # the config path as given
    out_dir: str
    version: str  # mscodegen's
    config_sha256: str | None  # of the resolved config


@dataclass(frozen=True, slots=True)
class Constant:
    name: str
    value: object  # a config value, or a fact the py filter writes (a path, the run's stamp)
    key: str  # the YAML key it comes from ("" for none)
    why: str = ""  # a comment line above it


@dataclass(frozen=True, slots=True)
class Checkpoint:
    unit: Literal["steps", "epochs"]  # callbacks.checkpoint.every_steps or every_epochs
    accumulated: bool = False  # every_steps counts optimizer steps, of ACCUMULATION_STEPS batches each


@dataclass(frozen=True, slots=True)
class EvalSteps:
    """eval.every_steps: evaluate after every EVAL_EVERY_STEPS-th optimizer step and after the last. The
    loops count batches (`step`); with grad.accumulation_steps an optimizer step is ACCUMULATION_STEPS of them."""

    accumulated: bool
    resumable: bool = False  # the model variant's callback adds start_step to Model's count
    ema: bool = False  # evaluations run on the averages (the model variant's through EvaluateOnAverages)

    @property
    def fields(self) -> tuple[str, ...]:
        """What the model variant's EvaluateEverySteps keeps besides Model and the data."""
        return ("last_step", *(("start_step",) if self.resumable else ()), *(("ema",) if self.ema else ()))

    @property
    def eval_options(self) -> str:
        """Model.eval's arguments after the data: the callback that swaps the averages in, with ema."""
        return ", callbacks=[EvaluateOnAverages(self.ema)]" if self.ema else ""

    @property
    def period(self) -> str:
        """The batches between two evaluations, as the scripts compute it."""
        return "(EVAL_EVERY_STEPS * ACCUMULATION_STEPS)" if self.accumulated else "EVAL_EVERY_STEPS"

    @property
    def label(self) -> str:
        """The evaluation line's f-string part naming the optimizer step (`step` counts batches)."""
        return "step {step // ACCUMULATION_STEPS}" if self.accumulated else "step {step}"


@dataclass(frozen=True, slots=True)
class EarlyStopping:
    maximize: bool  # callbacks.early_stopping.mode (default: min for *loss, *mae, *mse, else max)
    field: tuple[str, str] | None = None  # monitor `metric.field`: a field of a metric's dict result


@dataclass(frozen=True, slots=True)
class KeepBest:
    maximize: bool  # callbacks.checkpoint.keep.mode (default: min for *loss, else max)


@dataclass(frozen=True, slots=True)
class RankedCheckpoints:
    """callbacks.checkpoint.keep_max_by: the keep_max checkpoints with the best metric, not the latest."""

    maximize: bool  # keep_max_by.mode (default: min for *loss, *mae, *mse, else max)


@dataclass(frozen=True, slots=True)
class DeviceNote:
    device: str
    notes: tuple[str, ...]


def build_checkpoint(cfg: Config | GanConfig) -> Checkpoint | None:
    ckpt = cfg.callbacks.checkpoint
    if ckpt is None:
        return None
    if not ckpt.every_steps:
        return Checkpoint("epochs")
    return Checkpoint("steps", accumulated=isinstance(cfg, Config) and cfg.grad.accumulation_steps > 1)


def build_eval_steps(cfg: Config, *, resumable: bool) -> EvalSteps | None:
    if cfg.data.eval is None or cfg.eval is None or cfg.eval.every_steps is None:
        return None
    return EvalSteps(
        accumulated=cfg.grad.accumulation_steps > 1, resumable=resumable, ema=cfg.ema is not None
    )


def build_early_stopping(cfg: Config) -> EarlyStopping | None:
    early = cfg.callbacks.early_stopping
    if early is None or cfg.data.eval is None:
        return None
    mode = early.mode or ("min" if early.monitor.endswith(LOWER_IS_BETTER) else "max")
    metric, dot, field = early.monitor.partition(".")
    return EarlyStopping(maximize=mode == "max", field=(metric, field) if dot else None)


def build_keep_best(cfg: Config) -> KeepBest | None:
    ckpt = cfg.callbacks.checkpoint
    if ckpt is None or ckpt.keep is None or cfg.data.eval is None:
        return None
    mode = ckpt.keep.mode or ("min" if ckpt.keep.monitor.endswith("loss") else "max")
    return KeepBest(maximize=mode == "max")


def build_ranked_checkpoints(cfg: Config) -> RankedCheckpoints | None:
    ckpt = cfg.callbacks.checkpoint
    if ckpt is None or ckpt.keep_max_by is None or cfg.data.eval is None:
        return None
    by = ckpt.keep_max_by
    mode = by.mode or ("min" if by.monitor.endswith(LOWER_IS_BETTER) else "max")
    return RankedCheckpoints(maximize=mode == "max")


def ranked_checkpoint_constants(cfg: Config) -> list[Constant]:
    """callbacks.checkpoint.keep_max_by's: the metric that ranks the checkpoints."""
    ckpt = cfg.callbacks.checkpoint
    if ckpt is None or ckpt.keep_max_by is None or cfg.data.eval is None:
        return []
    monitor = ckpt.keep_max_by.monitor
    return [Constant("CHECKPOINT_MONITOR", monitor, "callbacks.checkpoint.keep_max_by.monitor")]


def build_constants(
    cfg: Config,
    step: Step,
    *,
    data_dir: PurePath | None,
    data_keys: str,
    config_sha256: str | None,
    resumable: bool,
) -> tuple[tuple[Constant, ...], ...]:
    """Module constants in groups, each with the YAML key it comes from; a feature's only when it is used."""
    run = run_constants(
        cfg,
        data_dir=data_dir,
        data_keys=data_keys,
        config_sha256=config_sha256,
        resumable=resumable,
        output_dir=cfg.callbacks.checkpoint is not None,
        checkpoint=cfg.callbacks.checkpoint is not None,
    )
    opt = [Constant("LR", cfg.optimizer.lr, "optimizer.lr")]
    if cfg.optimizer.weight_decay or cfg.optimizer.decay_rule != "mindspore_default" or cfg.optimizer.groups:
        opt.append(Constant("WEIGHT_DECAY", cfg.optimizer.weight_decay, "optimizer.weight_decay"))
    opt += _schedule_constants(cfg)
    groups = [run, opt, _loss_constants(cfg)]
    if cfg.data.eval is not None:
        every = cfg.eval.every_epochs if cfg.eval else 1
        group = [Constant("EVAL_EVERY_EPOCHS", every, "eval.every_epochs")] if every != 1 else []
        if cfg.eval is not None and cfg.eval.every_steps is not None:
            group.append(Constant("EVAL_EVERY_STEPS", cfg.eval.every_steps, "eval.every_steps"))
        early = cfg.callbacks.early_stopping
        if early is not None:
            group += [
                Constant("EARLY_STOP_MONITOR", early.monitor, "callbacks.early_stopping.monitor"),
                Constant("EARLY_STOP_PATIENCE", early.patience, "callbacks.early_stopping.patience"),
                Constant("EARLY_STOP_MIN_DELTA", early.min_delta, "callbacks.early_stopping.min_delta"),
            ]
        groups.append(group)
    ckpt = cfg.callbacks.checkpoint
    if ckpt is not None:
        group = checkpoint_constants(cfg)
        if ckpt.keep is not None and cfg.data.eval is not None:
            group += [
                Constant("BEST_KEEP", ckpt.keep.best, "callbacks.checkpoint.keep.best"),
                Constant("BEST_MONITOR", ckpt.keep.monitor, "callbacks.checkpoint.keep.monitor"),
            ]
        group += ranked_checkpoint_constants(cfg)
        groups.append(group)
    precision = loss_scale_constants(cfg)
    clip = cfg.grad.clip
    if clip is not None:
        name, value = ("CLIP_VALUE", clip.clip_value) if clip.kind == "value" else ("MAX_NORM", clip.max_norm)
        precision.append(Constant(name, value, f"grad.clip.{name.lower()}"))
    if step.accumulate:
        precision.append(Constant("ACCUMULATION_STEPS", step.accumulation_steps, "grad.accumulation_steps"))
    groups.append(precision)
    if cfg.ema is not None:
        groups.append(
            [
                Constant("EMA_DECAY", cfg.ema.decay, "ema.decay"),
                Constant("EMA_WARMUP_STEPS", cfg.ema.warmup_steps, "ema.warmup_steps"),
            ]
        )
    groups.append(parallel_constants(cfg))
    return tuple(tuple(group) for group in groups if group)


def _loss_constants(cfg: Config) -> list[Constant]:
    """network.aux_factor: the weight of the auxiliary logits' loss (AuxLogitsLoss)."""
    if isinstance(cfg.network, MindcvNetwork) and cfg.network.aux_factor is not None:
        return [Constant("AUX_FACTOR", cfg.network.aux_factor, "network.aux_factor")]
    return []


def run_constants(
    cfg: Config | GanConfig,
    *,
    data_dir: PurePath | None,
    data_keys: str,
    config_sha256: str | None,
    resumable: bool,
    output_dir: bool,
    checkpoint: bool,
) -> list[Constant]:
    """The run's own constants, first in every script: the config's sha256, the data, seed, epochs."""
    run = []
    if resumable:
        run.append(
            Constant(
                "CONFIG_SHA256",
                config_sha256 or "",
                "",
                "checkpoints carry the config's hash (--resume takes only its own) and the run's id",
            )
        )
    if checkpoint:
        comment = "" if resumable else "the run's own checkpoint folder"
        run.append(Constant("RUN_ID", RunStamp(), "", comment))
    if data_dir is not None:
        run.append(Constant("DATA_DIR", data_dir, data_keys))
    run += [
        Constant("SEED", cfg.runtime.seed, "runtime.seed"),
        Constant("EPOCHS", cfg.train.epochs, "train.epochs"),
    ]
    if cfg.callbacks.loss_monitor:
        run.append(Constant("LOG_EVERY_STEPS", cfg.train.log_every_steps, "train.log_every_steps"))
    if output_dir:
        run.append(Constant("OUTPUT_DIR", cfg.train.output_dir, "train.output_dir"))
    if cfg.runtime.max_device_memory:
        run.append(Constant("MAX_DEVICE_MEMORY", cfg.runtime.max_device_memory, "runtime.max_device_memory"))
    return run


def checkpoint_constants(cfg: Config | GanConfig) -> list[Constant]:
    """callbacks.checkpoint's: where, under which prefix, how many, how often."""
    ckpt = cfg.callbacks.checkpoint
    assert ckpt is not None
    group = [
        Constant("CHECKPOINT_DIR", ckpt.directory, "callbacks.checkpoint.directory"),
        Constant("CHECKPOINT_PREFIX", ckpt.prefix, "callbacks.checkpoint.prefix"),
        Constant("CHECKPOINT_KEEP_MAX", ckpt.keep_max, "callbacks.checkpoint.keep_max"),
    ]
    if ckpt.every_steps:
        group.append(Constant("CHECKPOINT_EVERY_STEPS", ckpt.every_steps, "callbacks.checkpoint.every_steps"))
    else:
        group.append(
            Constant("CHECKPOINT_EVERY_EPOCHS", ckpt.every_epochs, "callbacks.checkpoint.every_epochs")
        )
    return group


def loss_scale_constants(cfg: Config | GanConfig) -> list[Constant]:
    ls = cfg.loss_scale
    out = []
    if isinstance(ls, FixedLossScale):
        out.append(Constant("LOSS_SCALE", ls.value, "loss_scale.value"))
    if isinstance(ls, DynamicLossScale):
        out += [
            Constant("LOSS_SCALE", ls.init, "loss_scale.init"),
            Constant("LOSS_SCALE_FACTOR", ls.factor, "loss_scale.factor"),
            Constant("LOSS_SCALE_WINDOW", ls.window, "loss_scale.window"),
        ]
    return out


def parallel_constants(cfg: Config | GanConfig) -> list[Constant]:
    if cfg.parallel.mode != "data_parallel":
        return []
    return [
        Constant("WORKERS", cfg.parallel.workers, "parallel.workers"),
        Constant("GRADIENTS_MEAN", cfg.parallel.gradients_mean, "parallel.gradients_mean"),
    ]


def _schedule_constants(cfg: Config) -> list[Constant]:
    schedule = cfg.lr_schedule
    out = []
    if isinstance(schedule, PiecewiseLR):
        out += [
            Constant("MILESTONES", schedule.milestones, "lr_schedule.milestones"),
            Constant("GAMMA", schedule.gamma, "lr_schedule.gamma"),
        ]
    if isinstance(schedule, WarmupCosineLR) or (
        isinstance(schedule, ExponentialLR | PolynomialLR | PiecewiseLR | CosineLR) and schedule.warmup_epochs
    ):
        out += [
            Constant("WARMUP_EPOCHS", schedule.warmup_epochs, "lr_schedule.warmup_epochs"),
            Constant("WARMUP_START_LR", schedule.warmup_start_lr, "lr_schedule.warmup_start_lr"),
        ]
    if isinstance(schedule, ExponentialLR):
        out.append(Constant("GAMMA", schedule.gamma, "lr_schedule.gamma"))
    if isinstance(schedule, OneCycleLR):
        out += [
            Constant("PCT_START", schedule.pct_start, "lr_schedule.pct_start"),
            Constant("DIV_FACTOR", schedule.div_factor, "lr_schedule.div_factor"),
            Constant("FINAL_DIV_FACTOR", schedule.final_div_factor, "lr_schedule.final_div_factor"),
        ]
    if isinstance(schedule, PolynomialLR):
        out += [
            Constant("END_LR", schedule.end_lr, "lr_schedule.end_lr"),
            Constant("POWER", schedule.power, "lr_schedule.power"),
        ]
    if isinstance(schedule, CosineLR | WarmupCosineLR) and schedule.decay_epochs is not None:
        out.append(Constant("DECAY_EPOCHS", schedule.decay_epochs, "lr_schedule.decay_epochs"))
        if schedule.cycles > 1:
            out.append(Constant("CYCLES", schedule.cycles, "lr_schedule.cycles"))
        if schedule.cycle_decay != 1.0:
            out.append(Constant("CYCLE_DECAY", schedule.cycle_decay, "lr_schedule.cycle_decay"))
    min_lr = getattr(schedule, "min_lr", None)
    if min_lr is not None:
        out.append(Constant("MIN_LR", min_lr, "lr_schedule.min_lr"))
    return out


def build_device_notes(cfg: Config | GanConfig, *, model_variant: bool) -> tuple[DeviceNote, ...]:
    """What differs per device (--device), printed when the script starts; empty when nothing does."""
    notes: dict[str, list[str]] = {device: [] for device in DEVICES}
    train = cfg.train
    if train.dataset_sink_mode:
        notes["CPU"].append("train.dataset_sink_mode is ignored on CPU: one batch per step")
        for device in ("GPU", "Ascend"):
            if model_variant:
                notes[device].append(
                    f"train.dataset_sink_mode: Model sinks {train.sink_size} batches per call "
                    "(-1: a whole epoch); callbacks run once per sink"
                )
            else:
                notes[device].append(
                    "train.dataset_sink_mode: this loop feeds one batch per step (ms.data_sink is not "
                    "generated: it cannot be verified on CPU)"
                )
    memory = cfg.runtime.max_device_memory
    if memory:
        notes["CPU"].append(f"runtime.max_device_memory ({memory}) does not apply on CPU")
        for device in ("GPU", "Ascend"):
            notes[device].append(f"memory pool capped at {memory} (runtime.max_device_memory)")
    if not any(notes.values()):
        return ()
    return tuple(DeviceNote(device, tuple(notes[device])) for device in DEVICES)
