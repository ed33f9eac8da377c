"""`loss`, `optimizer`, `lr_schedule`: what is minimised and how."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Discriminator, Field, Strict, Tag, model_validator

from mscodegen.schema._base import (
    NOT_BOOL,
    Bool,
    Fraction,
    Identifier,
    ImportPath,
    Kwargs,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveFloat32,
    PositiveInt,
    Section,
    python_name,
)

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
        description="Default: {sparse: true, reduction: mean} for SoftmaxCrossEntropyWithLogits, none for the others. "
        "A list for a Tensor argument (CrossEntropyLoss/NLLLoss/FocalLoss `weight`, BCEWithLogitsLoss `weight` and "
        "`pos_weight`) becomes ms.Tensor(list, ms.float32), one number per class.",
    )


class ImportedLoss(Section):
    """The user's own loss: a factory (class or function) returning an nn.Cell, called as loss(logits, label)."""

    kind: Literal["import"]
    path: ImportPath
    kwargs: Kwargs = Field(default_factory=dict)

    @property
    def name(self) -> str:
        """What the scripts and messages call it: the import path."""
        return self.path


# One loss per head (loss.heads): the name HeadsLoss goes by where one loss name is read (messages, defaults).
HEADS = "loss.heads"
LossWeight = Annotated[float, Strict(), Field(gt=0)]


class HeadLoss(Loss):
    """One head's loss: a mindspore.nn loss, with its weight in the sum."""

    weight: LossWeight = Field(1.0, description="Its factor in the weighted sum of the heads' losses.")


class HeadsLoss(Section):
    """Several heads: the network returns one output per label column (a tuple, in data.labels order) and the
    loss is the weighted sum of one loss per head."""

    heads: Annotated[dict[Identifier, HeadLoss], Field(min_length=2)] = Field(
        description="Per label column (data.labels, in its order), its loss: `digit: {name: CrossEntropyLoss}`, "
        "`parity: {name: BCEWithLogitsLoss, weight: 0.5}` (mindspore.nn losses; for your own, import the whole loss)."
    )

    @property
    def name(self) -> str:
        """What messages and the default metrics call it (several losses: no one name)."""
        return HEADS

    @property
    def kwargs(self) -> None:
        """The heads have keyword arguments each; the section as a whole none."""
        return None

    @property
    def losses(self) -> dict[str, str]:
        """Each head's loss's name: what its default metrics follow."""
        return {head: loss.name for head, loss in self.heads.items()}


def head_losses(loss: object) -> dict[str, str] | None:
    """loss.heads: each head's loss's name (None: one loss)."""
    return loss.losses if isinstance(loss, HeadsLoss) else None


def head_weight_constant(head: str) -> str:
    """The scripts' constant of a head's weight: DIGIT_LOSS_WEIGHT."""
    return f"{python_name(head).upper()}_LOSS_WEIGHT"


def head_output(head: str) -> str:
    """The scripts' name of a head's output: digit_logits."""
    return f"{python_name(head)}_logits"


def _loss_form(value: object) -> str:
    """`heads:` is the form of several heads, `kind: import` the imported one; the built-in form has no kind."""
    if isinstance(value, dict) and "heads" in value or isinstance(value, HeadsLoss):
        return "heads"
    kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
    return "import" if kind == "import" else "builtin"


LossSection = Annotated[
    Annotated[Loss, Tag("builtin")]
    | Annotated[ImportedLoss, Tag("import")]
    | Annotated[HeadsLoss, Tag("heads")],
    Discriminator(_loss_form),
    Field(
        description="A mindspore.nn loss (`name`, `kwargs`), the user's own (`kind: import`, `path`, "
        "`kwargs`), or one per head (`heads`) for a network with several outputs."
    ),
]


DECAY_FILTERS = ("mindspore_default", "every_parameter", "no_norm_no_bias", "all")
DecayRule = Literal["mindspore_default", "every_parameter", "no_norm_no_bias"]  # `all` resolved


class ParamGroup(Section):
    """Parameters whose names match one of `params` (fnmatch patterns, e.g. `backbone.*`), with their own LR
    and weight decay. A parameter joins the first group that matches; the rest form the default group."""

    params: list[Annotated[str, Field(min_length=1)]] = Field(
        min_length=1, description="fnmatch patterns matched against full parameter names (case-sensitive)."
    )
    lr: PositiveFloat32 | None = Field(
        None,
        description="The group's base LR: the lr_schedule, scaled by lr / optimizer.lr. Not with lr_scale.",
    )
    lr_scale: PositiveFloat | None = Field(
        None, description="The group's LR = the lr_schedule's value x lr_scale at every step. Not with lr."
    )
    weight_decay: NonNegativeFloat | None = Field(
        None,
        description="The group's weight decay (decay_filter still applies); default optimizer.weight_decay.",
    )

    @model_validator(mode="after")
    def _one_lr(self) -> ParamGroup:
        if self.lr is not None and self.lr_scale is not None:
            raise ValueError("give lr or lr_scale, not both")
        return self


class LayerDecay(Section):
    """Layer-wise LR decay (mindcv's layer_decay, as in BEiT/MAE fine-tuning): with layers 0..L counted from
    the input side, layer i trains at the schedule's LR x rate ** (L - i), the last layer at the full LR.
    Layers are defined for builtin lenet5 and mlp and mindcv vit_* models (docs: training-options.md, layer-wise LR decay)."""

    rate: Annotated[float, NOT_BOOL, Field(gt=0, le=1)] = Field(
        description="Factor per layer towards the input, e.g. 0.75 (1: no decay)."
    )


class _Optimizer(Section):
    lr: PositiveFloat32 = Field(0.01, description="Base learning rate; lr_schedule shapes it over the steps.")
    weight_decay: NonNegativeFloat = 0.0
    decay_filter: Literal[DECAY_FILTERS] = Field(  # type: ignore[valid-type]
        "mindspore_default",
        description="Which parameters weight_decay applies to. mindspore_default: MindSpore's own filter, "
        "every parameter except those whose name contains 'beta' or 'gamma' (BatchNorm/LayerNorm); "
        "every_parameter: all of them (parameter groups; mindcv's weight_decay_filter disable); "
        "no_norm_no_bias: not biases and not BatchNorm/LayerNorm gamma/beta. "
        "all: deprecated old name of mindspore_default (same meaning, which never decayed gamma/beta).",
    )
    groups: list[ParamGroup] = Field(
        default_factory=list,
        description="Parameter groups by name pattern with their own lr / lr_scale and weight_decay; the "
        "lr_schedule applies to every group.",
    )
    layer_decay: LayerDecay | None = Field(
        None,
        description="Layer-wise LR decay: one parameter group per layer, LR scaled by rate ** (layers "
        "after it). Not with groups.",
    )

    @property
    def decay_rule(self) -> DecayRule:
        """decay_filter with the deprecated `all` resolved to the name of what it does."""
        return "mindspore_default" if self.decay_filter == "all" else self.decay_filter


class Momentum(_Optimizer):
    name: Literal["momentum"]
    momentum: NonNegativeFloat = 0.9
    nesterov: Bool = False


class SGD(_Optimizer):
    name: Literal["sgd"]
    momentum: NonNegativeFloat = 0.0
    dampening: NonNegativeFloat = 0.0
    nesterov: Bool = False

    @model_validator(mode="after")
    def _nesterov_needs_momentum(self) -> SGD:
        if self.nesterov and (self.momentum == 0 or self.dampening != 0):
            raise ValueError("nesterov needs momentum > 0 and dampening = 0")
        return self


class Adam(_Optimizer):
    name: Literal["adam"]
    beta1: Fraction = 0.9
    beta2: Fraction = 0.999
    eps: PositiveFloat32 = 1e-8


class AdamWeightDecay(_Optimizer):
    """Adam with weight decay added to the update (decoupled from the gradient), lr x (m / (sqrt(v) + eps)
    + weight_decay x w). Without bias_correction: nn.AdamWeightDecay (BERT's; m and v are used as they are).
    With it: mindcv's AdamW (mindcv.optim.adamw.AdamW), which divides m and v by 1 - beta ** step first, as
    Adam does, and is what mindcv's `opt: adamw` trains with."""

    name: Literal["adamw"]
    beta1: Fraction = 0.9
    beta2: Fraction = 0.999
    eps: PositiveFloat32 = 1e-6
    bias_correction: Bool = Field(
        False,
        description="Divide the moment estimates by 1 - beta1 ** step and 1 - beta2 ** step (Adam's bias "
        "correction): the script then uses mindcv's AdamW (mindcv.optim.adamw.AdamW), else nn.AdamWeightDecay, "
        "which has none (with the default betas its first step is about 3.2 times as large). true is mindcv's "
        "`opt: adamw`.",
    )


class RMSProp(_Optimizer):
    """nn.RMSProp (runs on CPU)."""

    name: Literal["rmsprop"]
    decay: Annotated[float, NOT_BOOL, Field(ge=0, lt=1)] = Field(
        0.9, description="Decay of the moving mean square."
    )
    momentum: NonNegativeFloat = 0.0
    epsilon: PositiveFloat32 = 1e-10
    centered: Bool = Field(False, description="Normalize by the centered second moment (variance).")


class Lamb(_Optimizer):
    """nn.Lamb. Its fused kernel has no CPU implementation in MindSpore 2.10 ("Unsupported op [Lamb] on
    CPU"), so validate rejects it with runtime.device_target CPU; it takes no loss_scale either."""

    name: Literal["lamb"]
    beta1: Fraction = 0.9
    beta2: Fraction = 0.999
    eps: PositiveFloat32 = 1e-6


class Lion(_Optimizer):
    """mindcv's Lion (mindcv.optim.lion.Lion; MindSpore 2.10's nn has none): sign of the interpolated
    momentum, weight decay decoupled. Runs on CPU. Lion wants a 3-10x smaller lr than AdamW."""

    name: Literal["lion"]
    beta1: Fraction = Field(
        0.9, description="Interpolation between momentum and gradient for the update's sign."
    )
    beta2: Fraction = Field(0.99, description="Decay of the momentum.")


Optimizer = Annotated[
    Momentum | SGD | Adam | AdamWeightDecay | RMSProp | Lamb | Lion, Field(discriminator="name")
]


class ConstantLR(Section):
    kind: Literal["constant"]


class _OptionalWarmup(Section):
    warmup_epochs: NonNegativeInt = Field(
        0, description="Linear warm-up from warmup_start_lr to optimizer.lr before the schedule (0: none)."
    )
    warmup_start_lr: NonNegativeFloat = 0.0


class PiecewiseLR(_OptionalWarmup):
    """lr * gamma**i after the i-th milestone epoch (milestones count from the start, warm-up included)."""

    kind: Literal["piecewise"]
    milestones: list[PositiveInt] = Field(min_length=1, description="Epochs (1-based) where the lr drops.")
    gamma: Fraction = 0.1

    @model_validator(mode="after")
    def _increasing(self) -> PiecewiseLR:
        if any(b <= a for a, b in zip(self.milestones, self.milestones[1:], strict=False)):
            raise ValueError(f"milestones must be strictly increasing, got {self.milestones}")
        return self


EPOCH_STAIR = "The LR changes once per epoch, warm-up included (mindcv lr_epoch_stair), not every step."


class _CosineShape(Section):
    """What the cosine schedules share: the cosine's length, restarts, once per epoch."""

    min_lr: NonNegativeFloat = 0.0
    decay_epochs: PositiveInt | None = Field(
        None,
        description="Epochs of one cosine, from the end of the warm-up; then min_lr to the end (a cosine "
        "longer than what is left of the training is cut there). Default: the epochs after the warm-up.",
    )
    cycles: PositiveInt = Field(
        1, description="Cosines of decay_epochs each, one after the other (restarts); needs decay_epochs."
    )
    cycle_decay: PositiveFloat = Field(
        1.0, description="The k-th cosine (from 0) starts at optimizer.lr x cycle_decay**k; needs cycles > 1."
    )
    epoch_stair: Bool = Field(False, description=EPOCH_STAIR)


class CosineLR(_CosineShape, _OptionalWarmup):
    """Cosine decay from optimizer.lr to min_lr over all optimizer steps (after the warm-up, if any)."""

    kind: Literal["cosine"]


class WarmupCosineLR(_CosineShape):
    """Linear warm-up from warmup_start_lr to optimizer.lr, then cosine decay to min_lr."""

    kind: Literal["warmup_cosine"]
    warmup_epochs: PositiveInt = 1
    warmup_start_lr: NonNegativeFloat = 0.0


class _WarmupThenDecay(Section):
    warmup_epochs: NonNegativeInt = Field(
        0, description="Linear warm-up from warmup_start_lr to optimizer.lr first; the decay follows it."
    )
    warmup_start_lr: NonNegativeFloat = 0.0
    epoch_stair: Bool = Field(False, description=EPOCH_STAIR)


class ExponentialLR(_WarmupThenDecay):
    """optimizer.lr x gamma ** (epochs since the warm-up), counted in fractions of an epoch per step."""

    kind: Literal["exponential"]
    gamma: Fraction = Field(0.9, description="Factor per epoch.")


class PolynomialLR(_WarmupThenDecay):
    """(optimizer.lr - end_lr) x (1 - t / decay_steps) ** power + end_lr after the warm-up."""

    kind: Literal["polynomial"]
    end_lr: NonNegativeFloat = 0.0
    power: PositiveFloat = 1.0


class OneCycleLR(Section):
    """mindcv's one_cycle_lr (two phases): from lr / div_factor up to optimizer.lr over pct_start of all
    steps, then down to lr / div_factor / final_div_factor."""

    kind: Literal["one_cycle"]
    pct_start: Fraction = Field(0.3, description="Share of the steps spent rising.")
    anneal: Literal["cos", "linear"] = Field("cos", description="Shape of both phases.")
    div_factor: PositiveFloat = Field(25.0, description="The first LR is optimizer.lr / div_factor.")
    final_div_factor: PositiveFloat = Field(
        10000.0, description="The last LR is optimizer.lr / div_factor / final_div_factor."
    )


LRSchedule = Annotated[
    ConstantLR | PiecewiseLR | CosineLR | WarmupCosineLR | ExponentialLR | PolynomialLR | OneCycleLR,
    Field(discriminator="kind"),
]
