"""Plan of the train step: mixed precision, loss scaling, clipping, accumulation, grad.process, data parallel."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mscodegen.plan.setup import ImportedName, Relative
from mscodegen.schema import Config
from mscodegen.schema.gan import GanConfig
from mscodegen.schema.precision import DynamicLossScale, FixedLossScale, GlobalNormClip, NormClip

AMP_DESCRIPTIONS = {
    "O1": "float16 for the ops on MindSpore's white list (convolutions, dense, ReLU)",
    "O2": "float16 everywhere except BatchNorm",
    "O3": "float16 everywhere",
    "auto": "float16 or float32 per op, from MindSpore's lists",
}


@dataclass(frozen=True, slots=True)
class Amp:
    level: str  # amp.level as configured (what Model's amp_level gets)
    native_level: str  # the same conversion for amp.auto_mixed_precision (keep_batchnorm_fp32 folded in)
    description: str
    keep_batchnorm_fp32: bool | None
    fp32_cells: tuple[str, ...]
    # O2/O3/auto networks return float16: the loss (WithLossFp32) and evaluation
    # (WithEvalCell(add_cast_fp32=True)) cast the output to float32 first, as Model does.
    cast_loss_fp32: bool

    @property
    def enabled(self) -> bool:
        return self.level != "O0"


@dataclass(frozen=True, slots=True)
class Step:
    """What the train step adds to TrainOneStepCell, and whether Model needs it as a custom cell."""

    scaler: Literal["dynamic", "static", "fixed"] | None  # loss scaling done inside the cell
    fixed_sens: bool  # Model's FixedLossScaleManager path: sens = LOSS_SCALE, optimizer divides
    accumulation_steps: int
    process: ImportedName | None  # grad.process
    clip_kind: str | None
    clip_expr: str | None
    parallel: bool  # data parallel: the cell all-reduces the gradients
    custom_reasons: tuple[str, ...]  # why Model cannot express this step (empty: it can)
    extras: tuple[str, ...]  # what the cell adds, for its docstring

    @property
    def docstring(self) -> str:
        """TrainStep's docstring: what it does beyond TrainOneStepCell."""
        if not self.extras:
            return "Forward, backward and the optimizer update: what Model's TrainOneStepCell does."
        return f"TrainOneStepCell's forward, backward and update, with {_and(self.extras)}."

    @property
    def model_reason(self) -> str:
        """Why the model variant hands Model this cell (empty: it does not)."""
        if not self.custom_reasons:
            return ""
        return f"Model has no option for {_and(self.custom_reasons)}: it gets this ready train cell."

    @property
    def state_note(self) -> str:
        """What a checkpoint of the train cell holds besides weights and optimizer state."""
        notes = []
        if self.scaler == "dynamic":
            notes.append("the loss scale")
        if self.accumulation_steps > 1:
            notes.append("the accumulated gradients")
        return "".join(f", {n}" for n in notes)

    @property
    def diverged_hint(self) -> str:
        """What to change when the loss becomes NaN or infinite: the keys that most often cause it."""
        hints = ["lower optimizer.lr"]
        if self.scaler or self.fixed_sens:
            hints.append("check loss_scale")
        hints.append("tighten grad.clip" if self.clip_kind else "set grad.clip")
        return ", ".join(hints[:-1]) + f" or {hints[-1]}"

    @property
    def custom_cell(self) -> bool:
        """Model gets this step as a ready-made train cell."""
        return bool(self.custom_reasons)

    @property
    def accumulate(self) -> bool:
        return self.accumulation_steps > 1

    @property
    def check_overflow(self) -> bool:
        return self.scaler in ("dynamic", "static")

    @property
    def returns_scale(self) -> bool:
        """The cell returns (loss, overflow, loss scale) instead of the loss."""
        return self.check_overflow


@dataclass(frozen=True, slots=True)
class Parallel:
    workers: int
    gradients_mean: bool
    master_port: int  # launch.sh
    cluster_time_out: int  # launch.sh


def _and(items: tuple[str, ...] | list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def build_amp(cfg: Config | GanConfig) -> Amp:
    amp = cfg.amp
    keep = amp.keep_batchnorm_fp32
    native_level = amp.level
    if (amp.level == "O2" and keep is False) or (amp.level == "O3" and keep is not True):
        native_level = "O3"
    elif amp.level in ("O2", "O3"):
        native_level = "O2"
    return Amp(
        level=amp.level,
        native_level=native_level,
        description=AMP_DESCRIPTIONS.get(native_level, ""),
        keep_batchnorm_fp32=keep,
        fp32_cells=tuple(amp.fp32_cells),
        cast_loss_fp32=native_level in ("O2", "O3", "auto"),
    )


def build_step(cfg: Config, rel: Relative) -> Step:
    ls, grad = cfg.loss_scale, cfg.grad
    scaler: Literal["dynamic", "static", "fixed"] | None = None
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
    clip_expr = None
    if isinstance(grad.clip, GlobalNormClip):
        clip_expr = "ops.clip_by_global_norm(grads, MAX_NORM)"
    elif isinstance(grad.clip, NormClip):
        clip_expr = "tuple(ops.clip_by_norm(grad, MAX_NORM) for grad in grads)"
    elif grad.clip is not None:
        clip_expr = "tuple(ops.clamp(grad, -CLIP_VALUE, CLIP_VALUE) for grad in grads)"
    # What Model has no option for, one phrase each: "Model has no option for X, Y and Z".
    reasons = []
    if scaler == "dynamic":
        reasons.append("dynamic loss scaling on CPU (its DynamicLossScaleManager needs NPUGetFloatStatusV2)")
    elif scaler == "static":
        reasons.append("skipping overflowing steps on CPU (drop_overflow_update works on GPU/Ascend only)")
    elif scaler == "fixed" and cfg.optimizer.weight_decay:
        reasons.append(
            "a fixed loss scale with weight decay (FixedLossScaleManager leaves the optimizer to add the "
            "decay to scaled gradients)"
        )
    if grad.clip:
        reasons.append("gradient clipping")
    if grad.accumulation_steps > 1:
        reasons.append("gradient accumulation (on CPU, or under data parallel)")
    if grad.process:
        reasons.append("a hook between backward and the optimizer")
    if cfg.ema is not None:
        reasons.append("an EMA of the weights updated after each step")
    extras = []
    if scaler:
        extras.append(f"loss scaling ({ls.kind})")
    if grad.clip:
        extras.append(f"clipping ({grad.clip.kind})")
    if grad.process:
        extras.append("gradient processing")
    if grad.accumulation_steps > 1:
        extras.append(f"accumulation over {grad.accumulation_steps} batches")
    if cfg.ema is not None:
        extras.append("the EMA update")
    return Step(
        scaler=scaler,
        fixed_sens=isinstance(ls, FixedLossScale) and not ls.drop_overflow_update and not fixed_in_cell,
        accumulation_steps=grad.accumulation_steps,
        process=rel.imported(grad.process, "grad.process") if grad.process else None,
        clip_kind=grad.clip.kind if grad.clip else None,
        clip_expr=clip_expr,
        parallel=cfg.parallel.mode == "data_parallel",
        custom_reasons=tuple(reasons),
        extras=tuple(extras),
    )


def build_parallel(cfg: Config | GanConfig) -> Parallel | None:
    par = cfg.parallel
    if par.mode != "data_parallel":
        return None
    return Parallel(
        workers=par.workers,
        gradients_mean=par.gradients_mean,
        master_port=par.master_port,
        cluster_time_out=par.cluster_time_out,
    )
