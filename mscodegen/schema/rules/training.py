"""Rules across the training sections: evaluation, early stopping, EMA, best-k, schedules, precision, optimizer."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from mscodegen.schema import Config
from mscodegen.schema.data import drops_remainder
from mscodegen.schema.layers import layers_of
from mscodegen.schema.optim import CosineLR, PiecewiseLR, WarmupCosineLR, head_losses
from mscodegen.schema.precision import FixedLossScale
from mscodegen.schema.rules._registry import KeyPath, Violation, rule
from mscodegen.schema.rules.data import known_train_batches
from mscodegen.schema.training import ImportedMetric, eval_metrics


@rule("callbacks", "data", "eval", "loss")
def _early_stopping_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    early = cfg.callbacks.early_stopping
    if early is None:
        return
    at = ("callbacks", "early_stopping")
    if cfg.data.eval is None:
        yield at, "early stopping watches an evaluation metric: add data.eval"
        return
    metric, dot, _ = early.monitor.partition(".")
    if not dot:
        yield from _monitored(cfg, early.monitor, (*at, "monitor"))
        return
    imported = [m.key for m in eval_metrics(cfg.eval, cfg.loss.name) if isinstance(m, ImportedMetric)]
    if early.monitor not in metric_keys(cfg) and metric not in imported:
        yield (
            (*at, "monitor"),
            f"{early.monitor!r}: only an imported metric can return a dict whose field is watched; "
            f"{metric!r} is not one (imported metrics: {', '.join(imported) or 'none'})",
        )


def _monitored(cfg: Config, monitor: str, at: KeyPath) -> Iterator[Violation]:
    """`monitor` (the key at `at`) must name an evaluation result."""
    keys = metric_keys(cfg)
    if monitor not in keys:
        yield at, f"{monitor!r} is not an eval metric; eval.metrics gives: {', '.join(keys)}"


@rule("ema", "grad")
def _ema_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    """The average follows optimizer steps: one per batch (a step skipped on overflow updates no average,
    as in mindcv's TrainStep). The train cell updates it, so sink mode keeps it."""
    if cfg.ema is not None and cfg.grad.accumulation_steps > 1:
        yield (
            ("ema",),
            "ema with grad.accumulation_steps > 1 is not supported (the average follows every batch)",
        )


@rule("callbacks", "data", "eval")
def _keep_best_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    ckpt = cfg.callbacks.checkpoint
    if ckpt is None or ckpt.keep is None:
        return
    at = ("callbacks", "checkpoint", "keep")
    if cfg.data.eval is None:
        yield at, "keeping the best checkpoints needs an evaluation: add data.eval"
    else:
        yield from _monitored(cfg, ckpt.keep.monitor, (*at, "monitor"))


@rule("callbacks", "data", "eval")
def _keep_max_by_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    """keep_max_by ranks each save by the evaluation of its epoch: every save needs one."""
    ckpt = cfg.callbacks.checkpoint
    if ckpt is None or ckpt.keep_max_by is None:
        return
    at = ("callbacks", "checkpoint", "keep_max_by")
    if cfg.data.eval is None:
        yield at, "ranking the checkpoints needs an evaluation: add data.eval"
        return
    if ckpt.keep is not None:
        yield (
            at,
            "keep_max_by already keeps the best checkpoints: leave out keep (the best besides the latest)",
        )
    if ckpt.every_steps is not None:
        yield at, "ranks each save by its epoch's evaluation: use every_epochs, not every_steps"
    if cfg.eval is not None and cfg.eval.every_steps is not None:
        yield at, "ranks each save by its epoch's evaluation: use eval.every_epochs, not every_steps"
    evaluated = cfg.eval.every_epochs if cfg.eval is not None else 1
    if ckpt.every_epochs is not None and ckpt.every_epochs % evaluated:
        yield (
            ("callbacks", "checkpoint", "every_epochs"),
            f"with keep_max_by every save is ranked by its epoch's evaluation: every_epochs must be a "
            f"multiple of eval.every_epochs ({evaluated}), not {ckpt.every_epochs}",
        )
    yield from _monitored(cfg, ckpt.keep_max_by.monitor, (*at, "monitor"))


def metric_keys(cfg: Config) -> list[str]:
    """Names of the evaluation results, in order (the keys of Model.eval's dict)."""
    return [metric.key for metric in eval_metrics(cfg.eval, cfg.loss.name, head_losses(cfg.loss))]


@rule("eval", "data")
def _eval_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    if cfg.eval is None:
        return
    if cfg.data.eval is None:
        yield ("eval",), "eval is configured but there is no data.eval to evaluate on"
    keys = metric_keys(cfg)
    for i, key in enumerate(keys):
        if key in keys[:i]:
            yield ("eval", "metrics", i), f"metric {key!r} is listed twice"


@rule("eval", "callbacks", "train", "grad", "data.train", "parallel")
def _eval_steps_rules(cfg: Config, config_dir: Path | None) -> Iterator[Violation]:
    """eval.every_steps: evaluations in the middle of an epoch, which what counts evaluations per epoch
    (Model's callbacks at an epoch's end) does not see."""
    if cfg.eval is None or cfg.eval.every_steps is None:
        return
    every, key, ckpt = cfg.eval.every_steps, ("eval", "every_steps"), cfg.callbacks.checkpoint
    if "every_epochs" in cfg.eval.model_fields_set:
        yield key, "set one of every_steps and every_epochs, not both"
    for name, used in (
        ("callbacks.early_stopping", cfg.callbacks.early_stopping is not None),
        ("callbacks.checkpoint.keep", ckpt is not None and ckpt.keep is not None),
    ):
        if used:
            yield (
                key,
                f"not supported with {name} yet (it counts evaluations per epoch): use eval.every_epochs",
            )
    if cfg.train.dataset_sink_mode:
        yield key, "needs train.dataset_sink_mode: false (with sink mode Model's callbacks run once per sink)"
    batches, k = known_train_batches(cfg, config_dir), cfg.grad.accumulation_steps
    if batches and every > batches * cfg.train.epochs // k:
        per_step = f", {k} batches per step" if k > 1 else ""
        yield (
            key,
            f"{every} is more than the {batches * cfg.train.epochs // k} optimizer steps of the whole run "
            f"({batches} batches per epoch x {cfg.train.epochs} epochs{per_step}): the only evaluation "
            "would be the one after the last step; lower it, or leave it out",
        )


@rule("lr_schedule", "train")
def _schedule_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    epochs, schedule = cfg.train.epochs, cfg.lr_schedule
    if isinstance(schedule, PiecewiseLR) and schedule.milestones[-1] >= epochs:
        yield (
            ("lr_schedule", "milestones"),
            f"the last milestone ({schedule.milestones[-1]}) must be below train.epochs ({epochs}), "
            "or it never takes effect",
        )
    warmup = getattr(schedule, "warmup_epochs", 0)  # the schedules with a warm-up
    if warmup >= epochs:
        yield (
            ("lr_schedule", "warmup_epochs"),
            f"warm-up ({warmup} epochs) must be shorter than train.epochs ({epochs})",
        )
    if isinstance(schedule, CosineLR | WarmupCosineLR):
        yield from _cosine_rules(schedule, epochs)


def _cosine_rules(schedule: CosineLR | WarmupCosineLR, epochs: int) -> Iterator[Violation]:
    """Restarts: each cosine lasts decay_epochs, and each must start within the training. One cosine may
    be longer than the epochs after the warm-up: it is cut at the end, as mindcv's is."""
    decay, cycles, left = schedule.decay_epochs, schedule.cycles, epochs - schedule.warmup_epochs
    if schedule.cycle_decay != 1.0 and cycles == 1:
        yield ("lr_schedule", "cycle_decay"), "scales the cosines after the first: it needs cycles > 1"
    if cycles > 1 and decay is None:
        yield ("lr_schedule", "cycles"), "needs decay_epochs, the length of each cosine"
    elif decay is not None and (cycles - 1) * decay >= left > 0:
        starts = -(-left // decay)  # the cosines that start within the training
        yield (
            ("lr_schedule", "cycles"),
            f"{cycles} cosines of decay_epochs {decay}, but the training has {left} epochs after the "
            f"warm-up (train.epochs {epochs}): cosine {starts + 1} would start after its end; lower cycles "
            f"to {starts}, or decay_epochs",
        )


@rule("amp")
def _amp_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    if cfg.amp.fp32_cells and cfg.amp.level == "O0":
        yield ("amp", "fp32_cells"), "has no effect with amp.level O0 (everything is float32)"
    if cfg.amp.keep_batchnorm_fp32 is not None and cfg.amp.level not in ("O2", "O3"):
        yield ("amp", "keep_batchnorm_fp32"), f"applies to amp.level O2 and O3, not {cfg.amp.level}"


@rule("optimizer", "network")
def _layer_decay_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    if cfg.optimizer.layer_decay is None:
        return
    at, net = ("optimizer", "layer_decay"), cfg.network
    if cfg.optimizer.groups:
        yield at, "builds one parameter group per layer itself; it cannot be combined with optimizer.groups"
    if layers_of(net) is None:
        what = f"{net.kind} network {getattr(net, 'name', '')}".rstrip()
        yield (
            at,
            f"layer ids are defined for builtin lenet5 and mlp and mindcv vit_* models, not for the {what}; "
            "use optimizer.groups with lr_scale per name pattern instead",
        )


@rule("optimizer", "runtime", "loss_scale")
def _optimizer_device_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    """Optimizers that MindSpore 2.10 cannot run as configured."""
    if cfg.optimizer.name != "lamb":
        return
    if cfg.runtime.device_target == "CPU":
        yield (
            ("optimizer", "name"),
            "lamb: nn.Lamb's kernel has no CPU implementation in MindSpore 2.10 (Unsupported op [Lamb] on "
            "CPU); use runtime.device_target GPU or Ascend, or another optimizer (adamw, lion)",
        )
    ls = cfg.loss_scale
    if isinstance(ls, FixedLossScale) and not ls.drop_overflow_update:
        yield (
            ("loss_scale", "drop_overflow_update"),
            "lamb: nn.Lamb takes no loss_scale, so a fixed loss scale needs drop_overflow_update: true "
            "(the gradients are unscaled before the optimizer)",
        )


@rule("optimizer", "loss_scale", "grad")
def _adamw_loss_scale_rule(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    """adamw without bias_correction is nn.AdamWeightDecay, which takes no loss_scale. A fixed loss scale
    that keeps overflowing steps is left to the optimizer to divide (plan/step.py) unless the train cell
    unscales the gradients first for weight decay, clipping, grad.process or accumulation."""
    opt, ls, grad = cfg.optimizer, cfg.loss_scale, cfg.grad
    if opt.name != "adamw" or opt.bias_correction:
        return
    if not isinstance(ls, FixedLossScale) or ls.drop_overflow_update:
        return
    if opt.weight_decay or grad.clip or grad.process or grad.accumulation_steps > 1:
        return
    yield (
        ("loss_scale", "drop_overflow_update"),
        "adamw without bias_correction is nn.AdamWeightDecay, which takes no loss_scale: with a fixed loss "
        "scale, set drop_overflow_update: true (the gradients are unscaled before the optimizer) or "
        "optimizer.bias_correction: true (mindcv's AdamW divides them itself)",
    )


@rule("grad", "data.train", "train", "parallel")
def _accumulation_rules(cfg: Config, config_dir: Path | None) -> Iterator[Violation]:
    k = cfg.grad.accumulation_steps
    if k == 1:
        return
    if not drops_remainder(cfg.data.train, "train"):
        yield (
            ("data", "train", "drop_remainder"),
            f"grad.accumulation_steps ({k}) averages micro-batch gradients with equal weights 1/{k}; "
            "a smaller last batch would be over-weighted: keep drop_remainder true",
        )
    batches = known_train_batches(cfg, config_dir)
    if batches and k > batches * cfg.train.epochs:
        yield (
            ("grad", "accumulation_steps"),
            f"{k} is more than the {batches * cfg.train.epochs} batches of the whole run "
            f"({batches} per epoch x {cfg.train.epochs} epochs): no optimizer step would ever be taken",
        )
