"""`amp`, `loss_scale`, `grad`: mixed precision and what happens to gradients."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, Strict

from mscodegen.schema._base import MAX_INT, Bool, ImportPath, PositiveFloat32, PositiveInt, Section

FP32_CELL = Literal[
    "Softmax",
    "LogSoftmax",
    "LayerNorm",
    "GroupNorm",
    "BatchNorm1d",
    "BatchNorm2d",
    "Dense",
    "Conv2d",
    "Sigmoid",
    "Tanh",
    "GELU",
]


class Amp(Section):
    """Automatic mixed precision (Model's amp_level; amp.auto_mixed_precision in the native loop)."""

    level: Literal["O0", "O1", "O2", "O3", "auto"] = Field(
        "O0",
        description="O0 fp32; O1 fp16 for white-listed ops; O2 fp16 except BatchNorm; O3 all fp16; auto by op lists.",
    )
    keep_batchnorm_fp32: Bool | None = Field(
        None, description="Override the level's choice (O2 keeps BatchNorm fp32, O3 does not)."
    )
    fp32_cells: list[FP32_CELL] = Field(
        default_factory=list,
        description="mindspore.nn cell classes kept in float32 (e.g. Softmax, LogSoftmax). The loss always runs in fp32.",
    )


class NoLossScale(Section):
    kind: Literal["none"]


class FixedLossScale(Section):
    """Multiply the loss by `value` before backprop, divide the gradients after."""

    kind: Literal["fixed"]
    value: PositiveFloat32 = 1024.0
    drop_overflow_update: Bool = Field(
        False, description="Skip the update when a gradient is inf/nan (the scale stays fixed)."
    )


class DynamicLossScale(Section):
    """Shrink the scale on overflow (the step is skipped), grow it after `window` good steps."""

    kind: Literal["dynamic"]
    init: PositiveFloat32 = 2.0**16
    factor: Annotated[int, Strict(), Field(ge=2, le=MAX_INT)] = Field(
        2, description="Integer growth/shrink factor of the scale."
    )
    window: PositiveInt = 2000


LossScale = Annotated[NoLossScale | FixedLossScale | DynamicLossScale, Field(discriminator="kind")]


class GlobalNormClip(Section):
    kind: Literal["global_norm"]
    max_norm: PositiveFloat32 = 1.0


class NormClip(Section):
    """Clip each gradient tensor to an L2 norm of at most max_norm."""

    kind: Literal["norm"]
    max_norm: PositiveFloat32 = 1.0


class ValueClip(Section):
    """Clamp every gradient element to [-clip_value, clip_value]."""

    kind: Literal["value"]
    clip_value: PositiveFloat32 = 1.0


Clip = Annotated[GlobalNormClip | NormClip | ValueClip, Field(discriminator="kind")]


class Grad(Section):
    """Gradient processing between backward and the optimizer, in this order:
    (data-parallel all-reduce) -> unscale -> clip -> process -> accumulate/apply."""

    clip: Clip | None = None
    accumulation_steps: PositiveInt = Field(
        1, description="Optimizer steps every k micro-batches; a final partial window is dropped."
    )
    process: ImportPath | None = Field(
        None,
        description="A function (grads, weights) -> grads on tuples of tensors, called after unscaling and "
        "clipping, e.g. extra weight decay: tuple(g + 1e-4 * w for g, w in zip(grads, weights)).",
    )
