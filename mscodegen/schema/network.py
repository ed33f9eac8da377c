"""`network`: the model to train."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, field_validator, model_validator

from mscodegen.catalog.mindcv_names import mindcv_model_names
from mscodegen.catalog.suggest import close_matches
from mscodegen.schema._base import (
    Bool,
    ImportPath,
    Kwargs,
    PathText,
    PositiveFloat,
    PositiveInt,
    Section,
    python_name,
)

# mindspore.common.initializer classes and the keyword arguments each takes.
INITIALIZERS: dict[str, tuple[str, ...]] = {
    "Normal": ("sigma", "mean"),
    "TruncatedNormal": ("sigma", "mean", "a", "b"),
    "Uniform": ("scale",),
    "XavierUniform": ("gain",),
    "XavierNormal": ("gain",),
    "HeUniform": ("negative_slope", "mode", "nonlinearity"),
    "HeNormal": ("negative_slope", "mode", "nonlinearity"),
    "Zero": (),
    "One": (),
    "Constant": ("value",),
}


class Initializer(Section):
    """A weight initializer from mindspore.common.initializer, e.g. {name: Normal, sigma: 0.02}."""

    name: Literal[tuple(INITIALIZERS)] = Field(  # type: ignore[valid-type]
        description="Normal(sigma, mean), TruncatedNormal(sigma, mean, a, b), Uniform(scale), XavierUniform(gain), "
        "XavierNormal(gain), HeUniform/HeNormal(negative_slope, mode, nonlinearity), Zero, One, Constant(value)."
    )
    sigma: PositiveFloat | None = Field(None, description="Normal, TruncatedNormal: standard deviation.")
    mean: float | None = Field(None, description="Normal, TruncatedNormal: mean.")
    a: float | None = Field(None, description="TruncatedNormal: lower bound.")
    b: float | None = Field(None, description="TruncatedNormal: upper bound.")
    scale: PositiveFloat | None = Field(None, description="Uniform: values in [-scale, scale].")
    gain: PositiveFloat | None = Field(None, description="XavierUniform, XavierNormal: scaling factor.")
    negative_slope: float | None = Field(None, description="HeUniform, HeNormal: slope of the leaky ReLU.")
    mode: Literal["fan_in", "fan_out"] | None = Field(None, description="HeUniform, HeNormal.")
    nonlinearity: Literal["relu", "leaky_relu"] | None = Field(None, description="HeUniform, HeNormal.")
    value: float | None = Field(None, description="Constant: the value.")

    @model_validator(mode="after")
    def _arguments_of_this_initializer(self) -> Initializer:
        allowed = INITIALIZERS[self.name]
        given = [k for k in type(self).model_fields if k != "name" and getattr(self, k) is not None]
        extra = [k for k in given if k not in allowed]
        if extra:
            takes = ", ".join(allowed) if allowed else "no arguments"
            raise ValueError(f"{self.name} does not take {', '.join(extra)} (it takes {takes})")
        if self.name == "Constant" and self.value is None:
            raise ValueError("Constant needs value")
        return self

    def arguments(self) -> dict[str, object]:
        """The keyword arguments given, in the initializer's own order."""
        return {k: getattr(self, k) for k in INITIALIZERS[self.name] if getattr(self, k) is not None}


def _check_pattern(pattern: str) -> str:
    """A parameter-name pattern (fnmatch: `*`, `?`, `[...]`), e.g. `classifier.*`."""
    if not pattern.strip():
        raise ValueError("an empty pattern matches no parameter name")
    if pattern != pattern.strip():
        raise ValueError(f"{pattern!r} has leading or trailing spaces; parameter names have none")
    if pattern.count("[") != pattern.count("]"):
        raise ValueError(f"{pattern!r} has an unbalanced '[' or ']'")
    return pattern


NamePattern = Annotated[str, AfterValidator(_check_pattern)]


class NetworkCheckpoint(Section):
    """Weights loaded into the network before training (fine-tuning): a local `.ckpt`, no downloads."""

    path: PathText = Field(
        description="A `.ckpt` file (e.g. mindcv's published weights, downloaded by you), relative to the config."
    )
    skip: list[NamePattern] = Field(
        default_factory=list,
        description="Parameter-name patterns (fnmatch) not loaded, e.g. `classifier.*` for a new head.",
    )
    strict: Bool = Field(
        True,
        description="Every network parameter not skipped must be in the file with the same shape (false: "
        "load what matches, leave the rest initialised).",
    )

    @field_validator("path")
    @classmethod
    def _ckpt_suffix(cls, path: str) -> str:
        if not path.endswith(".ckpt"):
            raise ValueError(f"{path!r} is not a MindSpore checkpoint file (*.ckpt)")
        return path


class Freeze(Section):
    """Parameters not trained: for the whole run (requires_grad=False before the optimizer collects the
    trainable ones), or for the first `epochs` epochs (a group of their own at LR 0 until then)."""

    patterns: Annotated[list[NamePattern], Field(min_length=1)] = Field(
        description="Parameter-name patterns (fnmatch), e.g. `layer1.*`; a pattern that matches nothing is an error."
    )
    epochs: PositiveInt | None = Field(
        None,
        description="Frozen for this many epochs, then trained, in one run: an optimizer group of their own "
        "whose LR is 0 until then (their gradients and optimizer state are computed all along). Less than "
        "train.epochs; omitted: frozen for the whole run.",
    )


class _Adaptable(Section):
    """What every network kind can add: weights from a checkpoint, frozen parameters."""

    checkpoint: NetworkCheckpoint | None = Field(
        None, description="Load weights from a local checkpoint before training (fine-tuning)."
    )
    freeze: Freeze | None = Field(
        None, description="Parameters not trained, for the whole run or for its first epochs."
    )


def _three_dims(shape: Any) -> Any:
    """A shape of 1 or 2 numbers is refused with the [C, H, W] form meant (before the length check)."""
    if isinstance(shape, list) and len(shape) in (1, 2) and all(type(n) is int for n in shape):
        if len(shape) == 1:
            raise ValueError(
                f"input_shape is [channels, height, width]: {shape[0]} features are [1, 1, {shape[0]}]"
            )
        h, w = shape
        raise ValueError(
            f"input_shape is [channels, height, width]: one-channel {h}x{w} inputs are [1, {h}, {w}]"
        )
    return shape


class BuiltinNetwork(_Adaptable):
    """A small network that mscodegen writes into the script itself."""

    kind: Literal["builtin"]
    name: Literal["lenet5", "mlp"] = Field(description="lenet5: 2 conv + 3 dense layers; mlp: dense layers.")
    num_classes: PositiveInt = Field(10, description="Size of the output layer.")
    hidden: list[PositiveInt] = Field(
        [120, 84], description="Hidden dense layer widths (mlp; lenet5 uses them after its convolutions)."
    )
    input_shape: (
        Annotated[list[PositiveInt], BeforeValidator(_three_dims), Field(min_length=3, max_length=3)] | None
    ) = Field(
        None, description="[channels, height, width] of one input; inferred from data.train when omitted."
    )
    dense_init: Initializer | None = Field(
        None, description="weight_init of every Dense layer; MindSpore's default when omitted."
    )
    conv_init: Initializer | None = Field(
        None, description="weight_init of both Conv2d layers (lenet5 only); MindSpore's default when omitted."
    )

    @model_validator(mode="after")
    def _conv_init_needs_convolutions(self) -> BuiltinNetwork:
        if self.conv_init is not None and self.name != "lenet5":
            raise ValueError(f"conv_init: {self.name} has no convolutions (only lenet5 has)")
        return self


class MindcvNetwork(_Adaptable):
    """A model from mindcv's registry, built with `mindcv.models.create_model`."""

    kind: Literal["mindcv"]
    name: str = Field(description="Any name from mindcv.models.list_models(), e.g. resnet18, resnet50.")
    num_classes: PositiveInt = Field(10, description="Size of the classifier head.")
    kwargs: Kwargs = Field(default_factory=dict)
    aux_factor: PositiveFloat | None = Field(
        None,
        description="For a model that also returns auxiliary logits in training (inception_v3, googlenet with "
        "aux_logits): the loss is loss(logits) + aux_factor x the auxiliary logits' losses, as mindcv's "
        "aux_factor. Unset: the loss takes the main logits only.",
    )

    @field_validator("name")
    @classmethod
    def _known_model(cls, name: str) -> str:
        names = mindcv_model_names()
        if name not in names:
            close = close_matches(name, names, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise ValueError(f"{name!r} is not a mindcv model{hint}")
        return name

    @field_validator("kwargs")
    @classmethod
    def _no_reserved_kwargs(cls, kwargs: dict[str, object]) -> dict[str, object]:
        names = {python_name(key) for key in kwargs}  # as Python reads them: '𝐩retrained' is 'pretrained'
        for reserved, use in (
            ("num_classes", "use network.num_classes"),
            ("pretrained", "no downloads: always false"),
        ):
            if reserved in names:
                raise ValueError(f"{reserved!r} is set by mscodegen ({use})")
        return kwargs


class ImportedNetwork(_Adaptable):
    """The user's own network: a factory (class or function) returning an nn.Cell."""

    kind: Literal["import"]
    factory: ImportPath
    kwargs: Kwargs = Field(default_factory=dict)


Network = Annotated[BuiltinNetwork | MindcvNetwork | ImportedNetwork, Field(discriminator="kind")]
