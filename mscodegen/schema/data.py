"""`data`: where the training and evaluation batches come from."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from ._base import ImportPath, Kwargs, PositiveFloat, PositiveInt, Section, Seed


class Normalize(Section):
    """Per-channel (x - mean) / std, after rescaling."""

    mean: list[float] = Field(min_length=1)
    std: list[PositiveFloat] = Field(min_length=1)

    @model_validator(mode="after")
    def _same_length(self) -> Normalize:
        if len(self.mean) != len(self.std):
            raise ValueError(f"mean has {len(self.mean)} values but std has {len(self.std)}")
        return self


class Transforms(Section):
    """Image transforms, applied in this order: resize, rescale, normalize, HWC->CHW."""

    resize: Annotated[list[PositiveInt], Field(min_length=2, max_length=2)] | None = Field(
        None, description="[height, width] (vision.Resize)."
    )
    rescale: PositiveFloat | None = Field(
        None, description="Multiply pixels by this (vision.Rescale); default 1/255 for uint8 image sources."
    )
    normalize: Normalize | None = None
    hwc_to_chw: bool = Field(True, description="vision.HWC2CHW: MindSpore convolutions expect CHW.")


class _Loader(Section):
    """Batching options every source shares."""

    batch_size: PositiveInt = Field(
        32, description="Samples per step (the global batch under data parallel)."
    )
    shuffle: bool | None = Field(None, description="Default: true for data.train, false for data.eval.")
    drop_remainder: bool = Field(True, description="Drop the last incomplete batch.")
    num_workers: PositiveInt = Field(1, description="num_parallel_workers of the dataset and its map.")


class SyntheticData(_Loader):
    """Seeded random images and labels: for tests and benchmarks."""

    kind: Literal["synthetic"]
    num_samples: PositiveInt = 256
    image_shape: Annotated[list[PositiveInt], Field(min_length=3, max_length=3)] = Field(
        [1, 32, 32], description="[channels, height, width], already CHW."
    )
    num_classes: PositiveInt = 10
    seed: Seed = Field(0, description="Seed of the numpy generator that makes the data.")


class DigitsData(_Loader):
    """scikit-learn's bundled 8x8 digits (1,797 real images, no download), scaled to [0, 1]."""

    kind: Literal["digits"]
    split: Literal["train", "test"] = "train"
    test_fraction: Annotated[float, Field(gt=0, lt=1)] = Field(
        0.2, description="The last test_fraction of the images form the test split."
    )
    transforms: Transforms = Field(default_factory=Transforms)


class _FileLoader(_Loader):
    """A MindSpore loader over local files."""

    num_samples: PositiveInt | None = Field(
        None, description="Read at most this many samples (the loader's num_samples); default: all."
    )


class MnistData(_FileLoader):
    """MNIST from a local directory of the four idx files (ds.MnistDataset)."""

    kind: Literal["mnist"]
    path: str = Field(description="Directory, relative to the config file or absolute.")
    usage: Literal["train", "test", "all"] = "train"
    transforms: Transforms = Field(default_factory=Transforms)


class Cifar10Data(_FileLoader):
    """CIFAR-10 from a local directory of the binary batches (ds.Cifar10Dataset)."""

    kind: Literal["cifar10"]
    path: str = Field(description="Directory, relative to the config file or absolute.")
    usage: Literal["train", "test", "all"] = "train"
    transforms: Transforms = Field(default_factory=Transforms)


class ImageFolderData(_FileLoader):
    """One sub-directory of images per class (ds.ImageFolderDataset, decoded to RGB)."""

    kind: Literal["image_folder"]
    path: str = Field(description="Directory, relative to the config file or absolute.")
    transforms: Transforms = Field(default_factory=Transforms)


class ImportedData(_Loader):
    """The user's own factory returning a ds.Dataset of (image, label) rows, before batching."""

    kind: Literal["import"]
    factory: ImportPath
    kwargs: Kwargs = Field(default_factory=dict)
    image_shape: Annotated[list[PositiveInt], Field(min_length=3, max_length=3)] | None = Field(
        None, description="[C, H, W] of one image, needed only by builtin networks."
    )


Dataset = Annotated[
    SyntheticData | DigitsData | MnistData | Cifar10Data | ImageFolderData | ImportedData,
    Field(discriminator="kind"),
]


class Data(Section):
    """Training data and the optional evaluation data."""

    train: Dataset
    eval: Dataset | None = None
