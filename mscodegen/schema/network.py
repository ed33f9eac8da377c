"""`network`: the model to train."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator

from .._mindcv_names import mindcv_model_names
from .._suggest import close_matches
from ._base import ImportPath, Kwargs, PositiveInt, Section, python_name


class BuiltinNetwork(Section):
    """A small network that mscodegen writes into the script itself."""

    kind: Literal["builtin"]
    name: Literal["lenet5", "mlp"] = Field(description="lenet5: 2 conv + 3 dense layers; mlp: dense layers.")
    num_classes: PositiveInt = Field(10, description="Size of the output layer.")
    hidden: list[PositiveInt] = Field(
        [120, 84], description="Hidden dense layer widths (mlp; lenet5 uses them after its convolutions)."
    )
    input_shape: Annotated[list[PositiveInt], Field(min_length=3, max_length=3)] | None = Field(
        None, description="[channels, height, width] of one input; inferred from data.train when omitted."
    )


class MindcvNetwork(Section):
    """A model from mindcv's registry, built with `mindcv.models.create_model`."""

    kind: Literal["mindcv"]
    name: str = Field(description="Any name from mindcv.models.list_models(), e.g. resnet18, resnet50.")
    num_classes: PositiveInt = Field(10, description="Size of the classifier head.")
    kwargs: Kwargs = Field(default_factory=dict)

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
        for reserved in ("num_classes", "pretrained"):
            if reserved in names:
                raise ValueError(
                    f"{reserved!r} is set by mscodegen"
                    + (
                        " (use network.num_classes)"
                        if reserved == "num_classes"
                        else " (no downloads: always false)"
                    )
                )
        return kwargs


class ImportedNetwork(Section):
    """The user's own network: a factory (class or function) returning an nn.Cell."""

    kind: Literal["import"]
    factory: ImportPath
    kwargs: Kwargs = Field(default_factory=dict)


Network = Annotated[BuiltinNetwork | MindcvNetwork | ImportedNetwork, Field(discriminator="kind")]
