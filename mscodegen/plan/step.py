"""Plan of the train step: mixed precision, loss scaling, clipping, accumulation, grad.process, data parallel."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mscodegen.catalog.literals import Call, Name
from mscodegen.plan.setup import ImportedName, Relative
from mscodegen.schema import Config
from mscodegen.schema.gan import GanConfig
from mscodegen.schema.precision import DynamicLossScale, FixedLossScale

AMP_DESCRIPTIONS = {
    "O1": "float16 for the ops on MindSpore's white list (convolutions, dense, ReLU)",
    "O2": "float16 everywhere except BatchNorm",
    "O3": "float16 everywhere",
    "auto": "float16 or float32 per op, from MindSpore's lists",
}

# Model has no option for these scalings ("fixed" in the train cell: with weight decay; clipping,
# grad.process and accumulation are reasons of their own)
SCALER_REASONS = {
    "dynamic": "dynamic loss scaling on CPU (its DynamicLossScaleManager needs NPUGetFloatStatusV2)",
    "static": "skipping overflowing steps on CPU (drop_overflow_update works on GPU/Ascend only)",
    "fixed": "a fixed loss scale with weight decay (FixedLossScaleManager leaves the optimizer to add the "
    "decay to scaled gradients)",
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
    clip_kind: Literal["global_norm", "norm", "value"] | None  # grad.clip.kind
    parallel: bool  # data parallel: the cell all-reduces the gradients
    ema: bool  # the cell updates an EMA of the weights after each optimizer step
    scale_in_checkpoint: bool  # dynamic scaling with checkpoints: the scaler's state is the cell's
    custom_reasons: tuple[str, ...]  # why Model cannot express this step (empty: it can)
    extras: tuple[str, ...]  # what the cell adds, for its docstring

    @property
    def extra_params(self) -> tuple[str, ...]:
        """TrainStep's parameters after (net_with_loss, optimizer): grad.process's function, the EMA."""
        return (*(("process_gradients",) if self.process else ()), *(("ema",) if self.ema else ()))

    @property
    def extra_args(self) -> tuple[Call | Name, ...]:
        """What train() passes for extra_params: the built gradient processor, the EMA."""
        return tuple(
            Call.of("build_gradient_processor") if p == "process_gradients" else Name(p)
            for p in self.extra_params
        )

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

    @property
    def outputs(self) -> tuple[str, ...]:
        """The names a loop gives what the cell returns."""
        return ("loss", "overflow", "loss_scale") if self.returns_scale else ("loss",)

    @property
    def scaled(self) -> bool:
        """Backward starts from the loss times the scale (and the forward returns both)."""
        return self.scaler is not None or self.fixed_sens

    @property
    def clip_after(self) -> str:
        """What clipping follows, so that it sees gradients in real units ("": nothing)."""
        return "unscaling" if self.scaler else "the all-reduce" if self.parallel else ""

    @property
    def ema_when_finite(self) -> bool:
        """The EMA update follows the optimizer inside `if finite:`: a step skipped on overflow leaves the
        averages and their update count alone, as mindcv's TrainStep does with a loss-scale manager."""
        return self.ema and self.check_overflow

    @property
    def returns(self) -> Literal["update", "ema", "scale", "loss"]:
        """What construct ends with: the update itself, the EMA update, (loss, overflow, scale) or the loss."""
        if self.returns_scale:
            return "scale"
        if self.ema:
            return "ema"
        return "loss" if self.accumulate or self.check_overflow else "update"


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
    fixed = isinstance(ls, FixedLossScale) and not ls.drop_overflow_update
    # Model's own fixed loss scaling (FixedLossScaleManager) leaves the gradients scaled until the
    # optimizer divides them (optimizer loss_scale): clipping, grad.process and accumulation would
    # see scaled gradients, and weight decay, added to the scaled gradients, would shrink by the
    # scale. Any of those makes the train cell unscale the gradients itself (optimizer loss_scale 1).
    fixed_in_cell = fixed and bool(
        grad.clip or grad.process or grad.accumulation_steps > 1 or cfg.optimizer.weight_decay
    )
    scaler: Literal["dynamic", "static", "fixed"] | None = None
    if isinstance(ls, DynamicLossScale):
        scaler = "dynamic"
    elif isinstance(ls, FixedLossScale):
        scaler = "static" if ls.drop_overflow_update else "fixed" if fixed_in_cell else None
    accumulate, ema = grad.accumulation_steps > 1, cfg.ema is not None
    # What Model has no option for, one phrase each: "Model has no option for X, Y and Z".
    reasons = (
        (SCALER_REASONS.get(scaler or "", ""), scaler != "fixed" or bool(cfg.optimizer.weight_decay)),
        ("gradient clipping", bool(grad.clip)),
        ("gradient accumulation (on CPU, or under data parallel)", accumulate),
        ("a hook between backward and the optimizer", bool(grad.process)),
        ("an EMA of the weights updated after each step", ema),
    )
    extras = (
        (f"loss scaling ({ls.kind})", scaler is not None),
        (f"clipping ({grad.clip.kind if grad.clip else ''})", bool(grad.clip)),
        ("gradient processing", bool(grad.process)),
        (f"accumulation over {grad.accumulation_steps} batches", accumulate),
        ("the EMA update", ema),
    )
    return Step(
        scaler=scaler,
        fixed_sens=fixed and not fixed_in_cell,
        accumulation_steps=grad.accumulation_steps,
        process=rel.imported(grad.process, "grad.process") if grad.process else None,
        clip_kind=grad.clip.kind if grad.clip else None,
        parallel=cfg.parallel.mode == "data_parallel",
        ema=ema,
        scale_in_checkpoint=scaler == "dynamic" and cfg.callbacks.checkpoint is not None,
        custom_reasons=tuple(text for text, on in reasons if on and text),
        extras=tuple(text for text, on in extras if on),
    )


def build_parallel(cfg: Config | GanConfig) -> Parallel | None:
    par = cfg.parallel
    if par.mode != "data_parallel":
        return None
    return Parallel(par.workers, par.gradients_mean, par.master_port, par.cluster_time_out)
