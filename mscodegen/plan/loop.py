"""Plan of the run around the step: module constants, checkpoints, evaluation, early stopping, devices."""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any, Literal

from mscodegen.catalog.literals import RunStamp
from mscodegen.plan.data import DataPlan
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
    version: str  # mscodegen's


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
class Ranking:
    """callbacks.checkpoint.keep (the best weights kept apart) or keep_max_by (the keep_max checkpoints
    with the best metric, not the latest): which way the metric improves."""

    maximize: bool  # its mode (default: min for *loss, and for keep_max_by *mae, *mse too; else max)


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


def resumable(cfg: Config | GanConfig) -> bool:
    return cfg.callbacks.checkpoint is not None and cfg.callbacks.checkpoint.resumable


def build_eval_steps(cfg: Config) -> EvalSteps | None:
    if cfg.data.eval is None or cfg.eval is None or cfg.eval.every_steps is None:
        return None
    return EvalSteps(cfg.grad.accumulation_steps > 1, resumable=resumable(cfg), ema=cfg.ema is not None)


def _maximize(watch: Any, lower_is_better: str | tuple[str, ...] = LOWER_IS_BETTER) -> bool:
    """The watched metric's mode is max: so set, or by default unless its name ends as lower_is_better."""
    return bool((watch.mode or ("min" if watch.monitor.endswith(lower_is_better) else "max")) == "max")


def build_early_stopping(cfg: Config) -> EarlyStopping | None:
    early = cfg.callbacks.early_stopping
    if early is None or cfg.data.eval is None:
        return None
    metric, dot, field = early.monitor.partition(".")
    return EarlyStopping(_maximize(early), field=(metric, field) if dot else None)


def build_ranking(cfg: Config, part: Literal["keep", "keep_max_by"]) -> Ranking | None:
    ckpt = cfg.callbacks.checkpoint
    by = None if ckpt is None or cfg.data.eval is None else getattr(ckpt, part)
    return None if by is None else Ranking(_maximize(by, "loss" if part == "keep" else LOWER_IS_BETTER))


def config_constants(cfg: Config | GanConfig, section: str, *fields: str, prefix: str = "") -> list[Constant]:
    """The config's values under `section` as constants: PREFIX + FIELD, each from `section.field`."""
    values = attrgetter(section)(cfg)
    return [Constant(prefix + f.upper(), getattr(values, f), f"{section}.{f}") for f in fields]


def build_constants(
    cfg: Config, data: DataPlan, config_sha256: str | None
) -> tuple[tuple[Constant, ...], ...]:
    """Module constants in groups, each with the YAML key it comes from; a feature's only when it is used."""
    ckpt = cfg.callbacks.checkpoint
    run = run_constants(cfg, data, config_sha256, output_dir=ckpt is not None)
    opt = config_constants(cfg, "optimizer", "lr")
    if cfg.optimizer.weight_decay or cfg.optimizer.decay_rule != "mindspore_default" or cfg.optimizer.groups:
        opt += config_constants(cfg, "optimizer", "weight_decay")
    opt += _schedule_constants(cfg)
    groups = [run, opt]
    if isinstance(cfg.network, MindcvNetwork) and cfg.network.aux_factor is not None:
        groups.append(config_constants(cfg, "network", "aux_factor"))  # AuxLogitsLoss's weight
    if cfg.data.eval is not None:
        groups.append(_eval_constants(cfg))
    if ckpt is not None:
        group = checkpoint_constants(cfg)
        if ckpt.keep is not None and cfg.data.eval is not None:
            group.append(Constant("BEST_KEEP", ckpt.keep.best, "callbacks.checkpoint.keep.best"))
            group += config_constants(cfg, "callbacks.checkpoint.keep", "monitor", prefix="BEST_")
        if ckpt.keep_max_by is not None and cfg.data.eval is not None:  # the metric that ranks them
            group += config_constants(
                cfg, "callbacks.checkpoint.keep_max_by", "monitor", prefix="CHECKPOINT_"
            )
        groups.append(group)
    precision = loss_scale_constants(cfg)
    clip = cfg.grad.clip
    if clip is not None:
        precision += config_constants(cfg, "grad.clip", "clip_value" if clip.kind == "value" else "max_norm")
    if cfg.grad.accumulation_steps > 1:
        precision += config_constants(cfg, "grad", "accumulation_steps")
    groups.append(precision)
    if cfg.ema is not None:
        groups.append(config_constants(cfg, "ema", "decay", "warmup_steps", prefix="EMA_"))
    groups.append(parallel_constants(cfg))
    return tuple(tuple(group) for group in groups if group)


def _eval_constants(cfg: Config) -> list[Constant]:
    every = cfg.eval.every_epochs if cfg.eval else 1
    group = [Constant("EVAL_EVERY_EPOCHS", every, "eval.every_epochs")] if every != 1 else []
    if cfg.eval is not None and cfg.eval.every_steps is not None:
        group += config_constants(cfg, "eval", "every_steps", prefix="EVAL_")
    if cfg.callbacks.early_stopping is not None:
        fields = ("monitor", "patience", "min_delta")
        group += config_constants(cfg, "callbacks.early_stopping", *fields, prefix="EARLY_STOP_")
    return group


def run_constants(
    cfg: Config | GanConfig, data: DataPlan, config_sha256: str | None, *, output_dir: bool
) -> list[Constant]:
    """The run's own constants, first in every script: the config's sha256, the data, seed, epochs."""
    run = []
    if resumable(cfg):
        why = "checkpoints carry the config's hash (--resume takes only its own) and the run's id"
        run.append(Constant("CONFIG_SHA256", config_sha256 or "", "", why))
    if cfg.callbacks.checkpoint is not None:
        run.append(
            Constant("RUN_ID", RunStamp(), "", "" if resumable(cfg) else "the run's own checkpoint folder")
        )
    if data.data_dir is not None:
        run.append(Constant("DATA_DIR", Path(data.data_dir), data.data_dir_keys))
    run += config_constants(cfg, "runtime", "seed") + config_constants(cfg, "train", "epochs")
    if cfg.callbacks.loss_monitor:
        run += config_constants(cfg, "train", "log_every_steps")
    if output_dir:
        run += config_constants(cfg, "train", "output_dir")
    if cfg.runtime.max_device_memory:
        run += config_constants(cfg, "runtime", "max_device_memory")
    return run


def checkpoint_constants(cfg: Config | GanConfig) -> list[Constant]:
    """callbacks.checkpoint's: where, under which prefix, how many, how often."""
    ckpt = cfg.callbacks.checkpoint
    assert ckpt is not None
    every = "every_steps" if ckpt.every_steps else "every_epochs"
    return [
        Constant("CHECKPOINT_DIR", ckpt.directory, "callbacks.checkpoint.directory"),
        *config_constants(cfg, "callbacks.checkpoint", "prefix", "keep_max", every, prefix="CHECKPOINT_"),
    ]


def loss_scale_constants(cfg: Config | GanConfig) -> list[Constant]:
    ls = cfg.loss_scale
    if isinstance(ls, FixedLossScale):
        return [Constant("LOSS_SCALE", ls.value, "loss_scale.value")]
    if isinstance(ls, DynamicLossScale):
        scale = Constant("LOSS_SCALE", ls.init, "loss_scale.init")
        return [scale, *config_constants(cfg, "loss_scale", "factor", "window", prefix="LOSS_SCALE_")]
    return []


def parallel_constants(cfg: Config | GanConfig) -> list[Constant]:
    if cfg.parallel.mode != "data_parallel":
        return []
    return config_constants(cfg, "parallel", "workers", "gradients_mean")


def _schedule_constants(cfg: Config) -> list[Constant]:
    s = cfg.lr_schedule
    fields = []
    if isinstance(s, PiecewiseLR):
        fields += ["milestones", "gamma"]
    if isinstance(s, WarmupCosineLR) or (
        isinstance(s, ExponentialLR | PolynomialLR | PiecewiseLR | CosineLR) and s.warmup_epochs
    ):
        fields += ["warmup_epochs", "warmup_start_lr"]
    if isinstance(s, ExponentialLR):
        fields.append("gamma")
    if isinstance(s, OneCycleLR):
        fields += ["pct_start", "div_factor", "final_div_factor"]
    if isinstance(s, PolynomialLR):
        fields += ["end_lr", "power"]
    if isinstance(s, CosineLR | WarmupCosineLR) and s.decay_epochs is not None:
        fields.append("decay_epochs")
        if s.cycles > 1:
            fields.append("cycles")
        if s.cycle_decay != 1.0:
            fields.append("cycle_decay")
    if getattr(s, "min_lr", None) is not None:
        fields.append("min_lr")
    return config_constants(cfg, "lr_schedule", *fields)


def build_device_notes(cfg: Config | GanConfig, *, model_variant: bool) -> tuple[DeviceNote, ...]:
    """What differs per device (--device), printed when the script starts; empty when nothing does."""
    notes: dict[str, list[str]] = {device: [] for device in DEVICES}
    train = cfg.train
    if train.dataset_sink_mode:
        notes["CPU"].append("train.dataset_sink_mode is ignored on CPU: one batch per step")
        sink = (
            f"train.dataset_sink_mode: Model sinks {train.sink_size} batches per call "
            "(-1: a whole epoch); callbacks run once per sink"
            if model_variant
            else "train.dataset_sink_mode: this loop feeds one batch per step (ms.data_sink is not "
            "generated: it cannot be verified on CPU)"
        )
        notes["GPU"].append(sink)
        notes["Ascend"].append(sink)
    memory = cfg.runtime.max_device_memory
    if memory:
        notes["CPU"].append(f"runtime.max_device_memory ({memory}) does not apply on CPU")
        for device in ("GPU", "Ascend"):
            notes[device].append(f"memory pool capped at {memory} (runtime.max_device_memory)")
    if not any(notes.values()):
        return ()
    return tuple(DeviceNote(device, tuple(notes[device])) for device in DEVICES)
