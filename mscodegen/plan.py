"""Plan: every value a template prints, resolved from a validated config.

Templates only print and branch on what this module computed; a condition computed
both here and in a template is a bug waiting to happen. Nothing here imports MindSpore.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

from . import __version__
from ._literals import call, literal
from ._plan_setup import _datasets, _loss_kwargs, _metrics, _network, _optimizer, _Relative
from ._plan_step import _amp, _model, _parallel, _step
from .imports import Imports
from .schema import Config
from .schema.optim import PiecewiseLR, WarmupCosineLR
from .schema.precision import DynamicLossScale, FixedLossScale

Variant = Literal["model", "native"]
VARIANTS: tuple[Variant, ...] = ("model", "native")
SCRIPT_NAMES = {"model": "train_model.py", "native": "train_native.py"}


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
                Constant(
                    "EARLY_STOP_MIN_DELTA", literal(early.min_delta), "callbacks.early_stopping.min_delta"
                ),
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
