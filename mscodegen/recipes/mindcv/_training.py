"""Rules for the training loop: `epoch_size`, `dataset_sink_mode`, `log_interval`, `ckpt_save_dir`
-> train; `val_interval` -> eval; the checkpoint arguments -> callbacks.checkpoint; `amp_level` and
the loss scale (`auto`: what MindSpore's Model picks at the amp level) -> amp, loss_scale;
`clip_grad`/`clip_value`, `gradient_accumulation_steps` -> grad; `ema` -> ema.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mscodegen.recipes.mindcv._converter import Converter, RecipeError


def train(c: Converter) -> None:
    c.put("train.epochs", c.int_("epoch_size"), c.source("epoch_size", "train.epochs"))
    c.put("train.dataset_sink_mode", c.bool_("dataset_sink_mode"), c.default_mark("dataset_sink_mode"))
    c.put("train.log_every_steps", c.int_("log_interval"), c.source("log_interval", "log_every_steps"))
    c.put(
        "train.output_dir", Path(os.path.normpath(c.str_("ckpt_save_dir"))).as_posix(), c.src("ckpt_save_dir")
    )
    c.mapped("epoch_size", "dataset_sink_mode", "log_interval", "ckpt_save_dir")


def evaluation(c: Converter) -> None:
    c.mapped("val_while_train")
    if "eval" not in c.result.config["data"]:
        c.ignored("val_interval", "no evaluation (val_while_train false)")
        return
    metrics: list[dict[str, Any]] = [{"name": "accuracy"}]
    num_classes = c.result.config["network"].get("num_classes")
    if num_classes is None or num_classes >= 5:  # mindcv get_metrics: top-5 from 5 classes on
        metrics.append({"name": "top_k", "k": 5})
    c.put("eval.every_epochs", c.int_("val_interval"), c.source("val_interval", "every_epochs"))
    c.put("eval.metrics", metrics, "mindcv's Top_1_Accuracy and Top_5_Accuracy")
    c.mapped("val_interval")


def checkpoint(c: Converter) -> None:
    c.put("callbacks.checkpoint.every_epochs", c.int_("ckpt_save_interval"), c.src("ckpt_save_interval"))
    c.put("callbacks.checkpoint.keep_max", c.int_("keep_checkpoint_max"), c.src("keep_checkpoint_max"))
    c.put("callbacks.checkpoint.prefix", c.str_("model"), "mindcv names checkpoints <model>-<epoch>_<step>")
    c.comments[("callbacks", "checkpoint")] = "under train.output_dir/checkpoints"
    c.mapped("ckpt_save_interval", "keep_checkpoint_max")
    policy = c.opt_str("ckpt_save_policy")
    if policy == "latest_k":
        c.mapped("ckpt_save_policy")
    elif policy == "top_k":
        _top_k(c)
    else:
        c.approximated("ckpt_save_policy", "mscodegen keeps the latest keep_checkpoint_max checkpoints")


def _top_k(c: Converter) -> None:
    """mindcv's StateMonitor saves after each ckpt_save_interval-th epoch's evaluation (and the last) and
    CheckpointManager keeps the keep_checkpoint_max with the highest first metric, Top_1_Accuracy; a save
    ranks only above a strictly lower one, so ties keep the earlier. A save in an epoch it does not
    evaluate ranks as 0."""
    if not c.bool_("val_while_train"):
        raise RecipeError(
            "ckpt_save_policy top_k with val_while_train false: mindcv's train.py asserts val_while_train "
            "(top_k ranks the checkpoints by the evaluation)"
        )
    if c.int_("val_interval") != 1:
        c.approximated(
            "ckpt_save_policy",
            f"top_k with val_interval {c.int_('val_interval')}: mindcv ranks a save in an epoch it does not "
            "evaluate as accuracy 0; mscodegen keeps the latest keep_checkpoint_max checkpoints",
        )
        return
    c.put(
        "callbacks.checkpoint.keep_max_by",
        {"monitor": "accuracy", "mode": "max"},
        "ckpt_save_policy top_k: mindcv ranks by its first metric, Top_1_Accuracy",
    )
    c.mapped("ckpt_save_policy")


def precision(c: Converter) -> None:
    level = c.str_("amp_level")
    if level in ("O0", "O1", "O2", "O3", "auto"):
        c.put("amp.level", level, c.source("amp_level", "amp.level"))
        c.mapped("amp_level")
    else:
        c.unconverted("amp_level", "mscodegen knows O0, O1, O2, O3 and auto")
    c.ignored("val_amp_level", "used by mindcv's validate.py, not by train.py")
    if c.opt_str("amp_cast_list"):
        c.unconverted("amp_cast_list", "mscodegen's amp.fp32_cells lists cells kept in float32 instead")
    else:
        c.mapped("amp_cast_list")
    kind = c.str_("loss_scale_type").lower()
    value = c.float_("loss_scale")
    drop = c.bool_("drop_overflow_update")
    if kind == "dynamic":  # create_trainer: DynamicLossScaleManager(loss_scale, 2, 2000)
        c.put(
            "loss_scale",
            {"kind": "dynamic", "init": value, "factor": 2, "window": 2000},
            "loss_scale_type dynamic (mindcv: scale_factor 2, scale_window 2000)",
        )
        c.comments[("loss_scale", "init")] = "loss_scale"
        c.mapped("loss_scale_type", "loss_scale")
        c.ignored("drop_overflow_update", "a dynamic loss scale always skips overflowing steps")
    elif kind == "fixed":
        if value == 1.0 and not drop:
            c.put("loss_scale", {"kind": "none"}, "loss_scale 1.0, fixed: no scaling")
        else:
            c.put("loss_scale", {"kind": "fixed", "value": value, "drop_overflow_update": drop})
            c.comments[("loss_scale", "value")] = "loss_scale"
            c.comments[("loss_scale", "kind")] = "loss_scale_type"
        c.mapped("loss_scale_type", "loss_scale", "drop_overflow_update")
    elif kind == "auto":
        _auto_loss_scale(c, level)
    else:
        c.unconverted("loss_scale_type", "mindcv knows fixed, dynamic and auto")
        c.mapped("loss_scale", "drop_overflow_update")


# MindSpore's Model without a loss_scale_manager takes its amp level's (mindspore/train/amp.py _config_level):
# DynamicLossScaleManager() at O2, whose defaults are these; no loss scale at the other levels.
O2_DEFAULT_LOSS_SCALE = {"kind": "dynamic", "init": float(2**24), "factor": 2, "window": 2000}


def _auto_loss_scale(c: Converter, level: str) -> None:
    """loss_scale_type auto: create_trainer builds Model(network, loss, optimizer, metrics, amp_level) with no
    loss_scale_manager (and the optimizer's loss_scale 1), so MindSpore's level default applies; with EMA,
    clipping, accumulation or amp_cast_list, mindcv's own train step takes only fixed and dynamic."""
    custom = [key for key in ("ema", "clip_grad") if c.bool_(key)]
    custom += ["gradient_accumulation_steps"] if c.int_("gradient_accumulation_steps") > 1 else []
    custom += ["amp_cast_list"] if c.opt_str("amp_cast_list") else []
    if custom:
        raise RecipeError(
            f"loss_scale_type auto with {', '.join(custom)}: mindcv's create_trainer then builds its own "
            "train step, which takes only loss_scale_type fixed or dynamic (it raises ValueError)"
        )
    if level == "O2":
        c.put(
            "loss_scale",
            dict(O2_DEFAULT_LOSS_SCALE),
            "loss_scale_type auto: MindSpore's Model at amp_level O2 uses DynamicLossScaleManager()",
        )
        c.comments[("loss_scale", "init")] = "DynamicLossScaleManager's default, 2 ** 24"
    else:
        c.put(
            "loss_scale",
            {"kind": "none"},
            f"loss_scale_type auto: MindSpore's Model at {level} scales no loss",
        )
    c.mapped("loss_scale_type")
    c.ignored(("loss_scale", "drop_overflow_update"), "loss_scale_type auto does not use it")


def grad(c: Converter) -> None:
    if c.bool_("clip_grad"):
        # TrainStep: ops.clip_by_global_norm(grads, clip_value) after unscaling
        c.put("grad.clip", {"kind": "global_norm", "max_norm": c.float_("clip_value")}, "clip_grad")
        c.comments[("grad", "clip", "max_norm")] = "clip_value"
        c.mapped("clip_grad", "clip_value")
        if c.bool_("distribute") and c.devices > 1:
            c.approximated(
                "clip_grad", "mindcv clips each device's gradients before the all-reduce, mscodegen after"
            )
    else:
        c.mapped("clip_grad")
        c.ignored("clip_value", "clip_grad is false")
    steps = c.int_("gradient_accumulation_steps")
    if steps > 1:
        c.put("grad.accumulation_steps", steps, "gradient_accumulation_steps")
        c.approximated(
            "gradient_accumulation_steps",
            "mindcv advances the LR schedule every micro-batch, mscodegen every optimizer step",
        )
    else:
        c.mapped("gradient_accumulation_steps")
    if c.bool_("ema"):
        # mindcv's TrainStep.ema_update: decay * (1 - exp(-updates / 2000)), as mscodegen's ema does; with a
        # loss-scale manager (dynamic, or fixed with drop_overflow_update) both skip it on an overflowing step
        c.put("ema.decay", c.float_("ema_decay"), c.src("ema_decay"))
        c.put("ema.warmup_steps", 2000, "mindcv's TrainStep: 1 - exp(-updates / 2000)")
        c.mapped("ema", "ema_decay")
    else:
        c.mapped("ema")
        c.ignored("ema_decay", "ema is false")
