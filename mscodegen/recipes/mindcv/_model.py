"""Rules for the model and its loss: `model`, `in_channels`, `drop_rate`, `drop_path_rate`,
`pretrained`/`ckpt_path` -> network (kind mindcv); `loss`, `label_smoothing`, `reduction` -> loss;
`aux_factor` -> network.aux_factor (inception_v3's auxiliary logits).

`network.num_classes` depends on the dataset and is set by `_data`.
"""

from __future__ import annotations

from typing import Any

from mscodegen.recipes.mindcv._converter import Converter, RecipeError


def network(c: Converter) -> None:
    c.put("network.kind", "mindcv")
    c.put("network.name", c.str_("model"), c.source("model", "network.name"))
    c.mapped("model")
    c.put("network.num_classes", None)  # keeps its place; set (or dropped) once the data is known
    kwargs: dict[str, Any] = {"in_channels": c.int_("in_channels")} if c.int_("in_channels") != 3 else {}
    drops = {key: c.opt_float(key) for key in ("drop_rate", "drop_path_rate")}
    kwargs.update({k: v for k, v in drops.items() if v is not None})  # create_model drops None-valued kwargs
    c.mapped("in_channels", "drop_rate", "drop_path_rate")
    if c.bool_("pretrained"):
        c.unconverted("pretrained", "mscodegen never downloads weights: the network starts from scratch")
    else:
        c.mapped("pretrained")
    if c.str_("ckpt_path"):
        c.unconverted("ckpt_path", "mscodegen does not load a checkpoint before training")
        if c.bool_("resume_opt"):
            c.unconverted("resume_opt", "mscodegen does not resume optimizer state")
        else:
            c.mapped("resume_opt")
    else:
        c.mapped("ckpt_path")
        c.ignored("resume_opt", "mindcv resumes only from ckpt_path, which is empty")
    if kwargs:
        c.put("network.kwargs", kwargs, "drop_rate, drop_path_rate, in_channels: passed to create_model")


def loss(c: Converter) -> None:
    name = c.str_("loss").lower()
    kwargs: dict[str, Any] = {}
    if name == "ce":  # mindcv CrossEntropySmooth calls ops.cross_entropy, as nn.CrossEntropyLoss does
        c.put(
            "loss.name",
            "CrossEntropyLoss",
            f"loss CE{'' if c.given('loss') else ' (mindcv default)'}: mindcv's CrossEntropySmooth "
            "computes the same",
        )
        c.mapped("loss")
        if c.float_("label_smoothing") > 0:
            kwargs["label_smoothing"] = c.float_("label_smoothing")
        c.mapped("label_smoothing")
        reduction = c.str_("reduction")
        if reduction in ("mean", "sum", "none"):
            kwargs["reduction"] = reduction
            c.mapped("reduction")
        else:
            c.unconverted("reduction", "nn.CrossEntropyLoss knows mean, sum and none")
        c.put("loss.kwargs", kwargs)
    else:
        c.unconverted("loss", "mscodegen's losses take class indices; this mindcv loss has no equivalent")
        c.ignored(("label_smoothing", "reduction"), "belongs to the loss that was not converted")
        del c.result.config["loss"]
    _aux_factor(c, name)


def _aux_factor(c: Converter, loss_name: str) -> None:
    """CrossEntropySmooth: loss(logits) + aux_factor x the losses of the auxiliary logits, when the network
    returns a tuple (in training); on a single output aux_factor changes nothing."""
    factor = c.float_("aux_factor")
    model = c.str_("model")
    if factor <= 0:
        c.mapped("aux_factor")
    elif model != "inception_v3":  # create_model gets no aux_logits: only inception_v3 returns a tuple
        c.ignored("aux_factor", f"mindcv's {model} returns no auxiliary logits: the loss does not use it")
    elif loss_name != "ce":
        c.ignored("aux_factor", "belongs to the loss that was not converted")
    elif c.str_("amp_level") in ("O2", "O3", "auto"):
        raise RecipeError(
            f"aux_factor {factor} with amp_level {c.str_('amp_level')}: mscodegen's float32 cast of the "
            "output takes one tensor, not inception_v3's (logits, aux_logits); use amp_level O0 or O1"
        )
    else:
        c.put("network.aux_factor", factor, c.source("aux_factor", "network.aux_factor"))
        c.mapped("aux_factor")
