"""The config schema: one pydantic model per YAML section.

Rules inside one section are validators on that section; rules that tie sections
together live in `rules/`, which reports each with the key it is about.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from pydantic import Field

from mscodegen.catalog import pipeline
from mscodegen.schema._base import RUN_NAME_PATTERN, Section
from mscodegen.schema.data import CsvData, Data, Dataset, ImportedData
from mscodegen.schema.distill import Distill
from mscodegen.schema.ema import Ema
from mscodegen.schema.network import Network
from mscodegen.schema.optim import ConstantLR, Loss, LossSection, LRSchedule, Optimizer
from mscodegen.schema.parallel import Parallel
from mscodegen.schema.precision import Amp, Grad, LossScale, NoLossScale
from mscodegen.schema.runtime import Runtime
from mscodegen.schema.training import Callbacks, Eval, Train

__all__ = ["Config", "image_shape_of", "soft_label_classes"]


def image_shape_of(
    dataset: Dataset, pipelines: Mapping[str, Sequence[Mapping[str, Any]]] | None = None
) -> tuple[int, int, int] | None:
    """[C, H, W] of one image after the dataset's transforms, when the config tells it.

    `pipelines`: the per-column pipelines the dataset runs (`data.pipelines_of`), when not its own.
    """
    if isinstance(dataset, ImportedData):
        return tuple(dataset.image_shape) if dataset.image_shape else None  # type: ignore[return-value]
    if isinstance(dataset, CsvData):
        # the builtin mlp flattens its input: a vector of n cells is [1, 1, n]
        first = next(iter(dataset.columns.values()))
        return (1, 1, len(first)) if isinstance(first, list) else None
    if dataset.kind == "synthetic":
        return tuple(dataset.image_shape)  # type: ignore[return-value]
    native = {"digits": (1, 8, 8), "mnist": (1, 28, 28), "cifar10": (3, 32, 32), "image_folder": None}[
        dataset.kind
    ]
    channels = 1 if dataset.kind in ("digits", "mnist") else 3
    image = pipelines.get("image", []) if pipelines is not None else None
    if image is None and isinstance(dataset.transforms, dict):
        image = dataset.transforms.get("image", [])
    if image is not None:
        out = pipeline.output_size(image)
        if out is False:
            return native
        if out is None or out is True:
            return None
        return (channels, out[0], out[1])
    assert not isinstance(dataset.transforms, dict)
    size = dataset.transforms.resize
    return native if size is None else (channels, size[0], size[1])


class Config(Section):
    """A complete training setup."""

    name: Annotated[str, Field(pattern=RUN_NAME_PATTERN)] | None = Field(
        None, description="Name of the run and of the output directory; default: the config file's stem."
    )
    runtime: Runtime = Field(default_factory=Runtime)
    network: Network
    data: Data
    loss: LossSection = Field(default_factory=Loss)
    optimizer: Optimizer
    lr_schedule: LRSchedule = Field(default_factory=lambda: ConstantLR(kind="constant"))
    train: Train = Field(default_factory=Train)
    eval: Eval | None = Field(
        None, description="Defaults to accuracy and loss every epoch when data.eval is set."
    )
    callbacks: Callbacks = Field(default_factory=Callbacks)
    amp: Amp = Field(default_factory=Amp)
    loss_scale: LossScale = Field(default_factory=lambda: NoLossScale(kind="none"))
    grad: Grad = Field(default_factory=Grad)
    parallel: Parallel = Field(default_factory=Parallel)
    ema: Ema | None = Field(
        None,
        description="Exponential moving average of the weights (as mindcv's TrainStep): evaluation runs "
        "on it, checkpoints hold it.",
    )
    distill: Distill | None = Field(
        None,
        description="Knowledge distillation: a frozen teacher's soft targets (temperature) mixed with the "
        "labels' loss (alpha).",
    )


def soft_label_classes(cfg: Config) -> int | None:
    """The number of classes one-hot labels have when data.train.batch_transforms mixes batches:
    the network's num_classes, else mindcv.Mixup's `num_classes` (None: unknown, or no batch ops)."""
    ops = cfg.data.train.batch_transforms
    if not ops:
        return None
    classes = getattr(cfg.network, "num_classes", None)
    if isinstance(classes, int):
        return classes
    for entry in ops:
        name, kwargs = pipeline.split_entry(entry)
        if name == pipeline.MINDCV_MIXUP and isinstance(kwargs.get("num_classes"), int):
            return int(kwargs["num_classes"])
    return None
