"""`loss`, `optimizer`, `lr_schedule`: what is minimised and how."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from ._base import Kwargs, NonNegativeFloat, PositiveFloat32, PositiveInt, Section

LOSS_CLASSES = (
    "SoftmaxCrossEntropyWithLogits",
    "CrossEntropyLoss",
    "NLLLoss",
    "MSELoss",
    "L1Loss",
    "SmoothL1Loss",
    "HuberLoss",
    "BCEWithLogitsLoss",
    "FocalLoss",
)


class Loss(Section):
    """A loss class from mindspore.nn, with its keyword arguments."""

    name: Literal[LOSS_CLASSES] = "SoftmaxCrossEntropyWithLogits"  # type: ignore[valid-type]
    kwargs: Kwargs | None = Field(
        None,
        description="Default: {sparse: true, reduction: mean} for SoftmaxCrossEntropyWithLogits, none for the others.",
    )


class _Optimizer(Section):
    lr: PositiveFloat32 = Field(0.01, description="Base learning rate; lr_schedule shapes it over the steps.")
    weight_decay: NonNegativeFloat = 0.0
    decay_filter: Literal["all", "no_norm_no_bias"] = Field(
        "all", description="no_norm_no_bias: no weight decay on biases and BatchNorm/LayerNorm (gamma, beta)."
    )


class Momentum(_Optimizer):
    name: Literal["momentum"]
    momentum: Annotated[float, Field(ge=0)] = 0.9
    nesterov: bool = False


class SGD(_Optimizer):
    name: Literal["sgd"]
    momentum: Annotated[float, Field(ge=0)] = 0.0
    dampening: Annotated[float, Field(ge=0)] = 0.0
    nesterov: bool = False

    @model_validator(mode="after")
    def _nesterov_needs_momentum(self) -> SGD:
        if self.nesterov and (self.momentum == 0 or self.dampening != 0):
            raise ValueError("nesterov needs momentum > 0 and dampening = 0")
        return self


class Adam(_Optimizer):
    name: Literal["adam"]
    beta1: Annotated[float, Field(gt=0, lt=1)] = 0.9
    beta2: Annotated[float, Field(gt=0, lt=1)] = 0.999
    eps: PositiveFloat32 = 1e-8


class AdamWeightDecay(_Optimizer):
    name: Literal["adamw"]
    beta1: Annotated[float, Field(gt=0, lt=1)] = 0.9
    beta2: Annotated[float, Field(gt=0, lt=1)] = 0.999
    eps: PositiveFloat32 = 1e-6


Optimizer = Annotated[Momentum | SGD | Adam | AdamWeightDecay, Field(discriminator="name")]


class ConstantLR(Section):
    kind: Literal["constant"]


class PiecewiseLR(Section):
    """lr * gamma**i after the i-th milestone epoch."""

    kind: Literal["piecewise"]
    milestones: list[PositiveInt] = Field(min_length=1, description="Epochs (1-based) where the lr drops.")
    gamma: Annotated[float, Field(gt=0, lt=1)] = 0.1

    @model_validator(mode="after")
    def _increasing(self) -> PiecewiseLR:
        if any(b <= a for a, b in zip(self.milestones, self.milestones[1:], strict=False)):
            raise ValueError(f"milestones must be strictly increasing, got {self.milestones}")
        return self


class CosineLR(Section):
    """Cosine decay from optimizer.lr to min_lr over all optimizer steps."""

    kind: Literal["cosine"]
    min_lr: NonNegativeFloat = 0.0


class WarmupCosineLR(Section):
    """Linear warm-up from warmup_start_lr to optimizer.lr, then cosine decay to min_lr."""

    kind: Literal["warmup_cosine"]
    warmup_epochs: PositiveInt = 1
    warmup_start_lr: NonNegativeFloat = 0.0
    min_lr: NonNegativeFloat = 0.0


LRSchedule = Annotated[ConstantLR | PiecewiseLR | CosineLR | WarmupCosineLR, Field(discriminator="kind")]
