"""`data`: where the training and evaluation batches come from."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Discriminator,
    Field,
    Strict,
    Tag,
    ValidationInfo,
    field_validator,
    model_validator,
)

from mscodegen.catalog import pipeline
from mscodegen.schema._base import (
    MAX_INT,
    Bool,
    Fraction,
    Identifier,
    ImportPath,
    Kwargs,
    PathText,
    PositiveFloat,
    PositiveInt,
    Section,
    Seed,
    _check_literal_value,
    raising,
)


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
    hwc_to_chw: Bool = Field(True, description="vision.HWC2CHW: MindSpore convolutions expect CHW.")


PipelineEntry = Annotated[
    dict[str, Any],
    BeforeValidator(lambda v: {v: {}} if isinstance(v, str) else v),  # `- HWC2CHW`: no arguments
    AfterValidator(_check_literal_value),
    raising(lambda entry: "; ".join(pipeline.entry_problems(entry, "a column"))),
    Field(
        description="One MindSpore dataset op as `{OpName: {keyword: value}}` (or `OpName`: no arguments)."
    ),
]
# The built-in sources' columns; an imported source names its own (`columns`), and schema/rules checks
# that its pipelines name one of them.
Column = Literal["image", "label"]
ColumnPipelines = dict[Column, list[PipelineEntry]]
ImportedColumnPipelines = dict[Identifier, list[PipelineEntry]]
BUILTIN_COLUMNS = ("image", "label")


def _transforms_form(value: object) -> str:
    """The pipeline form is a mapping of columns; any key of the fixed form (resize, ...) means that form."""
    if isinstance(value, dict) and value and not set(value) & set(Transforms.model_fields):
        return "pipelines"
    return "fixed"


TransformsField = Annotated[
    Annotated[Transforms, Tag("fixed")] | Annotated[ColumnPipelines, Tag("pipelines")],
    Discriminator(_transforms_form),
    Field(
        description="Either the fixed form (resize, rescale, normalize, hwc_to_chw) or, per column (`image`, "
        "`label`, or an imported source's `columns`), an ordered list of MindSpore dataset ops `{OpName: "
        "{kwargs}}` (MMPretrain style), e.g. `image: [{RandomResizedCrop: {size: 32}}, {HWC2CHW: {}}]`; "
        "nothing is added implicitly. Enum values by member name (`interpolation: BILINEAR`), dtypes by name "
        "(`data_type: int32`). One entry is mindcv's, not MindSpore's: `{mindcv.auto_augment: {policy, "
        "translate_const, img_mean, interpolation}}` calls mindcv's own "
        "RandAugment/AutoAugment/TrivialAugmentWide as its create_transforms does (policy e.g. "
        "`randaug-m9-mstd0.5-inc1` or `autoaug`; the other keys are its hparams), on uint8 HWC images, in "
        "Python."
    ),
]


BatchEntry = Annotated[
    dict[str, Any],
    AfterValidator(_check_literal_value),
    raising(lambda entry: "; ".join(pipeline.batch_entry_problems(entry))),
    Field(
        description="One batch-level op: `{MixUpBatch: {...}}`, `{CutMixBatch: {...}}` or `{mindcv.Mixup: {...}}`."
    ),
]


class ShuffleBuffer(Section):
    """Shuffle through a buffer after the transforms, as MindSpore's quick start does."""

    buffer_size: Annotated[int, Strict(), Field(ge=2, le=MAX_INT)] = Field(
        description="dataset.shuffle(buffer_size=...) after the maps (at least 2)."
    )
    in_source: Bool = Field(
        False,
        description="Also shuffle in the source loader (shuffle=True), before the maps, as MindSpore's "
        "quick start does (its ds.MnistDataset(path) shuffles by default). Not for kind import.",
    )


class _Loader(Section):
    """Batching options every source shares."""

    batch_size: PositiveInt = Field(
        32, description="Samples per step (the global batch under data parallel)."
    )
    shuffle: Bool | ShuffleBuffer | None = Field(
        None,
        description="Default: true for data.train, false for data.eval; `{buffer_size: N}` shuffles after "
        "the transforms with dataset.shuffle(buffer_size=N) instead of in the source.",
    )
    drop_remainder: Bool | None = Field(
        None,
        description="Drop the last incomplete batch. Default: false for data.eval, as MindSpore's batch() "
        "(every sample is evaluated); true for data.train, so that every step averages the same number of "
        "samples (what grad.accumulation_steps and mindcv.Mixup need, and MindSpore's 1.x quick start does).",
    )
    num_workers: PositiveInt = Field(
        1,
        description="num_parallel_workers of the dataset and its map; above 1 the script takes at most the "
        "machine's CPU count (min(N, os.cpu_count()): MindSpore refuses more).",
    )
    aug_repeats: PositiveInt | None = Field(
        None,
        description="data.train only: repeated augmentation with mindcv's RepeatAugSampler (mindcv's aug_repeats): "
        "each sample is taken aug_repeats times in a row, each time augmented anew, the repeats dealt over the "
        "workers, and the epoch keeps its length (about 1/aug_repeats of the samples each epoch). Its shuffle "
        "is its own, seeded by the epoch number (with 1, that shuffle alone). For kind mnist, cifar10 and "
        "image_folder, not with num_samples.",
    )
    batch_transforms: list[BatchEntry] = Field(
        default_factory=list,
        description="data.train only: ops on whole batches after batch(), on image and label together: "
        "MixUpBatch, CutMixBatch (labels one-hot encoded before batch() for them) or mindcv.Mixup "
        "(mixup/cutmix with label smoothing). Labels become soft, so the loss takes them "
        "(SoftmaxCrossEntropyWithLogits with sparse: false, the default then) and data.eval's labels are "
        "one-hot encoded too.",
    )

    @model_validator(mode="after")
    def _python_ops_one_worker(self) -> _Loader:
        transforms = getattr(self, "transforms", None)
        pipelines = transforms.values() if isinstance(transforms, dict) else ()
        ops = [n for entries in pipelines for n in pipeline.python_only(entries)]
        ops += [n for n in pipeline.names(self.batch_transforms) if n == pipeline.MINDCV_MIXUP]
        if ops and self.num_workers > 1:
            raise ValueError(
                f"{', '.join(ops)} run(s) in Python and are reproducible only with num_workers: 1 "
                f"(got {self.num_workers})"
            )
        return self


# Synthetic data is one float32 array in the scripts' memory: 256 samples of 3x224x224 are 147 MiB.
MAX_SYNTHETIC_BYTES = 4 * 2**30


class SyntheticData(_Loader):
    """Seeded random images and labels: for tests and benchmarks."""

    kind: Literal["synthetic"]
    num_samples: PositiveInt = 256
    image_shape: Annotated[list[PositiveInt], Field(min_length=3, max_length=3)] = Field(
        [1, 32, 32], description="[channels, height, width], already CHW.", validate_default=True
    )
    num_classes: PositiveInt = 10
    seed: Seed = Field(0, description="Seed of the numpy generator that makes the data.")

    @field_validator("image_shape")
    @classmethod
    def _fits_in_memory(cls, image_shape: list[int], info: ValidationInfo) -> list[int]:
        """The scripts draw every sample up front, as one float32 array (make_synthetic)."""
        num_samples = info.data.get("num_samples", 256)
        size = 4 * num_samples * math.prod(image_shape)
        if size > MAX_SYNTHETIC_BYTES:
            raise ValueError(
                f"{num_samples} samples of {'x'.join(map(str, image_shape))} float32 are {size / 2**30:,.1f} GiB, "
                f"which the scripts make in memory at once; synthetic data may have at most "
                f"{MAX_SYNTHETIC_BYTES // 2**30} GiB (lower num_samples or image_shape)"
            )
        return image_shape


class DigitsData(_Loader):
    """scikit-learn's bundled 8x8 digits (1,797 real images, no download), scaled to [0, 1]."""

    kind: Literal["digits"]
    split: Literal["train", "test"] = "train"
    test_fraction: Fraction = Field(
        0.2, description="The last test_fraction of the images form the test split."
    )
    transforms: TransformsField = Field(default_factory=Transforms)


class _FileLoader(_Loader):
    """A MindSpore loader over local files."""

    num_samples: PositiveInt | None = Field(
        None,
        description="Read at most this many samples (the loader's num_samples); default: all. Under data parallel "
        "in all: each worker reads its share, so it must divide evenly over parallel.workers.",
    )


class _Usages(_FileLoader):
    """A dataset's train and test files in one directory (MNIST, CIFAR-10)."""

    kind: str
    path: PathText = Field(description="Directory, relative to the config file or absolute.")
    usage: Literal["train", "test", "all"] = "train"
    transforms: TransformsField = Field(default_factory=Transforms)


class MnistData(_Usages):
    """MNIST from a local directory of the four idx files (ds.MnistDataset)."""

    kind: Literal["mnist"]


class Cifar10Data(_Usages):
    """CIFAR-10 from a local directory of the binary batches (ds.Cifar10Dataset)."""

    kind: Literal["cifar10"]


class ImageFolderData(_FileLoader):
    """One sub-directory of images per class (ds.ImageFolderDataset, decoded to RGB unless decode: false)."""

    kind: Literal["image_folder"]
    path: PathText = Field(description="Directory, relative to the config file or absolute.")
    decode: Bool = Field(
        True,
        description="false reads the files' bytes; the pipeline's first image op must then decode: "
        "`RandomCropDecodeResize` (decodes only the crop, as mindcv reads JPEGs) or `Decode`.",
    )
    transforms: TransformsField = Field(default_factory=Transforms)


class ImportedData(_Loader):
    """The user's own factory returning a ds.Dataset of rows with named columns, before batching."""

    kind: Literal["import"]
    factory: ImportPath
    kwargs: Kwargs = Field(default_factory=dict)
    columns: Annotated[list[Identifier], Field(min_length=2)] = Field(
        default_factory=lambda: list(BUILTIN_COLUMNS),
        description="The dataset's column names, in its order, e.g. [image, features, label]: data.inputs "
        "then data.labels. Default [image, label].",
    )
    transforms: ImportedColumnPipelines | None = Field(
        None,
        description="Per column, an ordered list of MindSpore dataset ops (the pipeline form of transforms).",
    )
    image_shape: Annotated[list[PositiveInt], Field(min_length=3, max_length=3)] | None = Field(
        None, description="[C, H, W] of one image, needed only by builtin networks."
    )


class FillMissing(Section):
    """Put a value in every float cell that holds no number."""

    fill: float = Field(description="The value, e.g. 0.0.")


CsvColumn = Annotated[
    Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]
    | Annotated[str, Field(min_length=1)],
    Field(
        description="CSV column names from the header: a list gives one float32 vector of their cells per "
        "row (features, or a regression target such as `[progression]`); one name gives an int32 class index "
        "(a classification label)."
    ),
]


class CsvData(_FileLoader):
    """A table in a CSV file whose first row names the columns (ds.CSVDataset); the batch's columns are
    made from CSV columns chosen by name."""

    kind: Literal["csv"]
    path: PathText = Field(
        description="The CSV file, relative to the config file or absolute; its first row (the header) names the columns."
    )
    columns: Annotated[dict[Identifier, CsvColumn], Field(min_length=1)] = Field(
        description="The batch's columns, in the order data.inputs then data.labels, each made from CSV "
        "columns: `features: [age, bmi, bp]` (a float32 vector), `target: [progression]` (a float32 vector "
        "of one value, for a regression loss), `label: diagnosis` (an int32 class index, for a "
        "classification loss)."
    )
    missing: Literal["error", "drop"] | FillMissing = Field(
        "error",
        description="A cell that holds no number (empty, text, NaN or infinite): `error` stops the run at it "
        "(validate reports such cells first), `drop` drops its row, `{fill: 0.0}` puts the value in the "
        "float32 columns (a class-index cell must still be a whole number).",
    )
    split: Literal["train", "test"] | None = Field(
        None,
        description="Read a part of the file (Dataset.split, in file order): `train` the first 1 - "
        "test_fraction of the rows, `test` the rest. Default: every row.",
    )
    test_fraction: Annotated[float, Field(gt=0, lt=1)] = Field(
        0.2, description="With split: the last test_fraction of the rows form the test split."
    )
    field_delim: Annotated[str, Field(min_length=1, max_length=1)] = Field(
        ",", description="The character between cells (CSVDataset's field_delim), e.g. a tab."
    )

    @model_validator(mode="after")
    def _split_options(self) -> CsvData:
        if "test_fraction" in self.model_fields_set and self.split is None:
            raise ValueError("test_fraction applies to a split: set split: train or split: test")
        if self.field_delim in ('"', "\r", "\n"):
            raise ValueError(f"field_delim cannot be {self.field_delim!r} (CSVDataset rejects it)")
        return self

    def vectors(self) -> dict[str, list[str]]:
        """The float32 vector columns: batch column -> CSV columns."""
        return {name: value for name, value in self.columns.items() if isinstance(value, list)}

    def class_columns(self) -> tuple[str, ...]:
        """The CSV columns read as class indices."""
        return tuple(value for value in self.columns.values() if isinstance(value, str))

    def csv_columns(self) -> tuple[str, ...]:
        """Every CSV column read, in the order `columns` names them."""
        return tuple(
            c for value in self.columns.values() for c in ([value] if isinstance(value, str) else value)
        )


def split_fractions(test_fraction: float) -> tuple[float, float]:
    """[train, test] for Dataset.split, the train part computed in decimal: 1 - 0.7 is 0.3, not 0.30000000000000004."""
    return float(Decimal(1) - Decimal(repr(test_fraction))), test_fraction


Dataset = Annotated[
    SyntheticData | DigitsData | MnistData | Cifar10Data | ImageFolderData | ImportedData | CsvData,
    Field(discriminator="kind"),
]


class Data(Section):
    """Training data and the optional evaluation data."""

    train: Dataset
    eval: Dataset | None = None
    inputs: Annotated[list[Identifier], Field(min_length=1)] = Field(
        default_factory=lambda: ["image"],
        description="The columns the network takes, in the order of its construct() arguments, e.g. [image, "
        "features].",
    )
    labels: Annotated[list[Identifier], Field(min_length=1)] = Field(
        default_factory=lambda: ["label"],
        description="The columns the loss receives after the network's output, in order: loss(logits, "
        "*labels); more than one needs an imported loss. A column of data.inputs is the target itself "
        "(`labels: [image]`: an autoencoder, loss(network(image), image)); a built-in source's `label` "
        "column then goes unread (dataset.project drops it).",
    )

    class_names: Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=2)] | None = Field(
        None,
        description="The classes' names in label order, e.g. [cat, dog]: predict.py prints them with its top "
        "classes (an image_folder source names them by its folders already). Costs one line of predict.py.",
    )

    @property
    def columns(self) -> tuple[str, ...]:
        """Every column a batch carries: the inputs, then the labels that are not inputs too."""
        return tuple(dict.fromkeys((*self.inputs, *self.labels)))

    @property
    def target_is_input(self) -> bool:
        """A label names an input column: the loss compares the output with the input (an autoencoder)."""
        return bool(set(self.labels) & set(self.inputs))


def columns_of(spec: object) -> tuple[str, ...]:
    """The columns a source yields, in order: an imported source's `columns`, a csv source's `columns` keys,
    else image and label."""
    return tuple(getattr(spec, "columns", BUILTIN_COLUMNS))


def batch_columns(data: Data, spec: object) -> tuple[str, ...]:
    """The columns data.<split>'s batches carry: the source's, without a built-in source's `label` when
    no loss reads it (data.labels names an input column: the scripts project it away)."""
    have = columns_of(spec)
    if data.target_is_input and getattr(spec, "columns", None) is None and "label" not in data.columns:
        return tuple(c for c in have if c != "label")
    return have


def drops_remainder(spec: object, split: str) -> bool:
    """data.<split>.drop_remainder as written, else its default: true for train, false for eval."""
    value = getattr(spec, "drop_remainder", None)
    return split == "train" if value is None else bool(value)


def fixed_transforms(spec: object) -> Transforms | None:
    """The fixed-form transforms of a source (None: no transforms, or the pipeline form)."""
    transforms = getattr(spec, "transforms", None)
    return transforms if isinstance(transforms, Transforms) else None


def pipelines_of(data: Data, split: str) -> dict[str, list[dict[str, Any]]] | None:
    """The per-column pipelines data.<split> runs, or None for the fixed form (or no transforms).

    data.eval without a `transforms` key, when data.train has pipelines, runs train's deterministic part
    (`pipeline.eval_entries`: random crops become their deterministic counterparts, other random ops go).
    """
    spec = data.train if split == "train" else data.eval
    transforms = getattr(spec, "transforms", None)
    train = getattr(data.train, "transforms", None)
    if split == "eval" and spec is not None and "transforms" not in spec.model_fields_set:  # noqa: SIM102
        if isinstance(train, dict) and hasattr(spec, "transforms") and set(train) <= set(columns_of(spec)):
            return {column: pipeline.eval_entries(entries) for column, entries in train.items()}
    return dict(transforms) if isinstance(transforms, dict) else None
