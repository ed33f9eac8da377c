"""Plan for the train step: loss scaling, clipping, accumulation, AMP, Model's options, data parallel."""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING

from ._literals import literal
from .imports import Imports
from .schema import Config
from .schema.precision import DynamicLossScale, FixedLossScale, GlobalNormClip, NormClip

if TYPE_CHECKING:
    from .plan import Variant


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
