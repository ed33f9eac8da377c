"""`train`, `eval` and `callbacks`: the loop around the step."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from pathlib import PurePosixPath, PureWindowsPath
from typing import Annotated, Literal

from pydantic import Field, Strict, field_validator, model_validator

from mscodegen.schema._base import (
    MAX_INT,
    NOT_BOOL,
    Bool,
    Identifier,
    ImportPath,
    Kwargs,
    PathText,
    PositiveInt,
    Section,
)
from mscodegen.schema.optim import HEADS

# The most epochs a config may train: the scripts build the whole learning-rate schedule up front, one
# float per step (steps per epoch x epochs) in a Python list. 50,000,000 epochs of a few steps needed 5.4 GB
# and the run died with MemoryError after validating; 100,000 epochs is far beyond any real run.
MAX_EPOCHS = 100_000


class Train(Section):
    """How long to train and how batches reach the device."""

    epochs: PositiveInt = Field(
        1,
        description=f"At most {MAX_EPOCHS:,}: the scripts build one learning-rate value per step in memory.",
    )
    dataset_sink_mode: Bool = Field(
        False,
        description="Model.train(dataset_sink_mode=...). Ignored by MindSpore on CPU (the script says so).",
    )
    sink_size: Annotated[int, Strict(), Field(ge=-1, le=MAX_INT)] = Field(
        -1, description="Steps per sink on GPU/Ascend; -1 = the whole epoch. Needs dataset_sink_mode."
    )
    log_every_steps: PositiveInt = Field(
        10, description="Print the loss every N steps (each print synchronises with the device)."
    )
    output_dir: PathText = Field(
        "outputs", description="Default --output-dir of the scripts: checkpoints and logs go there."
    )

    @field_validator("output_dir")
    @classmethod
    def _output_dir_not_empty(cls, output_dir: str) -> str:
        if not output_dir.strip():
            raise ValueError("an empty directory name; use '.' for the directory the script runs in")
        return output_dir

    @field_validator("epochs")
    @classmethod
    def _epochs_fit_in_memory(cls, epochs: int) -> int:
        if epochs > MAX_EPOCHS:
            raise ValueError(
                f"{epochs} epochs is more than the {MAX_EPOCHS} a config may train: the scripts build one "
                "learning-rate value per step in memory before the first step"
            )
        return epochs

    @field_validator("sink_size")
    @classmethod
    def _sink_size_not_zero(cls, sink_size: int) -> int:
        if sink_size == 0:
            raise ValueError("0 steps per sink trains nothing; use -1 (the whole epoch) or a positive number")
        return sink_size

    @model_validator(mode="after")
    def _sink_size_needs_sink(self) -> Train:
        if self.sink_size != -1 and not self.dataset_sink_mode:
            raise ValueError("sink_size is set but dataset_sink_mode is false")
        return self


# Metrics of a binary classifier with one logit per sample (BCEWithLogitsLoss): MindSpore's nn.Accuracy,
# nn.Precision, nn.Recall and nn.F1 take one score per class and fail on one logit, so the scripts write them.
BINARY_METRIC_NAMES = ("binary_accuracy", "binary_precision", "binary_recall", "binary_f1", "auc")
METRIC_NAMES = ("accuracy", "loss", "precision", "recall", "f1", "mae", "mse", *BINARY_METRIC_NAMES)


HEAD_DESCRIPTION = (
    "With loss.heads: the head (label column) whose output and label the metric reads; its key in the results "
    "is <head>_<name> (digit_accuracy)."
)


class BuiltinMetric(Section):
    """MindSpore's metric of that name: nn.Accuracy, nn.Loss (mean loss), nn.Precision, nn.Recall, nn.F1, nn.MAE,
    nn.MSE; for logits of BCEWithLogitsLoss (one per sample, or one per label) binary_accuracy, binary_precision,
    binary_recall, binary_f1 (a logit above 0 predicts 1; over every output) and auc (area under the ROC curve,
    nn.ROC and nn.auc). mae and mse are means per output element, as L1Loss and MSELoss reduce (the scripts
    divide nn.MAE's and nn.MSE's per-sample sums by the outputs per sample when there are several, or the
    network is imported). Its key in the results is the name."""

    name: Literal[METRIC_NAMES]  # type: ignore[valid-type]
    head: Identifier | None = Field(None, description=HEAD_DESCRIPTION)

    @property
    def key(self) -> str:
        """Name of the metric in the evaluation results (`digit_accuracy` for a head's)."""
        return self.name if self.head is None else f"{self.head}_{self.name}"


class TopKMetric(Section):
    """nn.TopKCategoricalAccuracy(k); its key in the results is top_<k> (top_5)."""

    name: Literal["top_k"]
    k: PositiveInt = 5
    head: Identifier | None = Field(None, description=HEAD_DESCRIPTION)

    @property
    def key(self) -> str:
        return f"top_{self.k}" if self.head is None else f"{self.head}_top_{self.k}"


class ImportedMetric(Section):
    """A user nn.Metric subclass; eval() may return a number or a dict of numbers."""

    name: Literal["import"]
    cls: ImportPath = Field(alias="class")
    key: Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")] = Field(
        description="Name of the metric in the results."
    )
    kwargs: Kwargs = Field(default_factory=dict)


Metric = Annotated[BuiltinMetric | TopKMetric | ImportedMetric, Field(discriminator="name")]
DEFAULT_METRICS = (BuiltinMetric(name="accuracy"), BuiltinMetric(name="loss"))
# Losses that compare real values: accuracy means nothing for them (nn.Accuracy fails at the first
# evaluation), so they default to mean absolute / squared error and the loss.
REGRESSION_LOSSES = ("MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss")
# Losses whose target has the output's shape (real values or 0/1 labels): class indices are not one.
SAME_SHAPE_TARGET_LOSSES = (*REGRESSION_LOSSES, "BCEWithLogitsLoss")
REGRESSION_METRICS = (BuiltinMetric(name="mae"), BuiltinMetric(name="mse"), BuiltinMetric(name="loss"))
# BCEWithLogitsLoss takes float (multi-)label targets, which nn.Accuracy does not: a logit above 0 predicts 1.
BINARY_METRICS = (BuiltinMetric(name="binary_accuracy"), BuiltinMetric(name="loss"))
# Metrics that are better when lower (early stopping's default mode).
LOWER_IS_BETTER = ("loss", "mae", "mse")


def default_metrics(loss_name: str) -> tuple[Metric, ...]:
    """eval.metrics when the config lists none: they follow the loss."""
    if loss_name in REGRESSION_LOSSES:
        return REGRESSION_METRICS
    if loss_name == "BCEWithLogitsLoss":
        return BINARY_METRICS
    # An imported loss is named by its path ('module:name'): its targets are unknown, so the loss only
    # (loss.heads without its heads' losses too: eval_metrics gives each head's).
    if ":" in loss_name or loss_name == HEADS:
        return (BuiltinMetric(name="loss"),)
    return DEFAULT_METRICS


def eval_metrics(
    section: Eval | None, loss_name: str, heads: Mapping[str, str] | None = None
) -> tuple[Metric, ...]:
    """The metrics evaluated: eval.metrics as written, else the loss's defaults. With loss.heads (`heads`:
    head -> its loss's name), each head's loss's defaults but the loss (digit_accuracy,
    parity_binary_accuracy), then the loss, their weighted sum."""
    if section is not None and "metrics" in section.model_fields_set:
        return tuple(section.metrics)
    if not heads:
        return default_metrics(loss_name)
    per_head = [
        metric.model_copy(update={"head": head})
        for head, loss in heads.items()
        for metric in default_metrics(loss)
        if metric.name != "loss"
    ]
    return (*per_head, BuiltinMetric(name="loss"))


class Eval(Section):
    """Evaluation on data.eval during and after training."""

    every_epochs: PositiveInt = Field(1, description="Evaluate after every N-th epoch, and after the last.")
    every_steps: PositiveInt | None = Field(
        None,
        description="Evaluate after every N-th optimizer step instead (counted over the whole run, as the "
        "learning rate schedule counts them: with grad.accumulation_steps k, one step is k batches), and "
        "after the last; prints 'Eval result: step N, metrics: {...}'. Not with an explicit every_epochs.",
    )
    metrics: list[Metric] = Field(
        default_factory=lambda: list[Metric](DEFAULT_METRICS),
        min_length=1,
        description="Default: accuracy and loss for classification losses; mae, mse and loss for MSELoss, "
        "L1Loss, SmoothL1Loss, HuberLoss; binary_accuracy and loss for BCEWithLogitsLoss; loss for an "
        "imported loss; with loss.heads, each head's loss's defaults for that head ({name: accuracy, head: digit}, "
        "key digit_accuracy), then loss (their weighted sum).",
    )


MONITOR = "An eval.metrics key: accuracy, loss, top_5, an imported metric's key."
# Whether the lower or the higher value of the monitored metric is better (keep_max_by, early_stopping).
Mode = Annotated[
    Literal["min", "max"] | None,
    Field(description="Default: min for names ending in loss, mae or mse, else max."),
]


class KeepBest(Section):
    """Keep the best checkpoints by an evaluation metric (mindcv's top_k policy), and a copy of the best."""

    best: PositiveInt = Field(
        description="How many to keep: '<prefix>-best-<epoch>_<step>.ckpt' (network weights), written after "
        "each evaluation; the best also as 'best.ckpt'. Ties keep the earlier evaluation."
    )
    monitor: str = Field("loss", description=MONITOR)
    mode: Literal["min", "max"] | None = Field(
        None, description="Default: min for names ending in loss, else max."
    )


class KeepMaxBy(Section):
    """Which keep_max checkpoints stay: those with the best evaluation metric (mindcv's top_k policy)."""

    monitor: str = Field(description=MONITOR)
    mode: Mode = None


class CheckpointCb(Section):
    """Network + optimizer state, as ModelCheckpoint saves it: '<prefix>-<epoch>_<step>.ckpt'."""

    every_steps: PositiveInt | None = Field(None, description="Save every N optimizer steps.")
    every_epochs: PositiveInt | None = Field(None, description="Save every N epochs.")
    keep_max: PositiveInt = Field(
        5, description="Keep at most this many files (oldest removed first; with keep_max_by the worst)."
    )
    directory: PathText = Field("checkpoints", description="Under --output-dir unless absolute.")
    prefix: PathText = Field("model", min_length=1, pattern=r"^[^/\\]+$")
    resumable: Bool = Field(
        True,
        description="The checkpoints also carry the step and the config's sha256, and the scripts take "
        "--resume PATH|latest (0 lines otherwise).",
    )
    keep: KeepBest | None = Field(
        None,
        description="Also keep the best k by an eval metric: {best: k, monitor: accuracy, mode: max} "
        "(needs data.eval); the periodic files stay the latest keep_max.",
    )
    keep_max_by: KeepMaxBy | None = Field(
        None,
        description="Keep the keep_max checkpoints with the best eval metric instead of the latest: "
        "{monitor: accuracy, mode: max}. A checkpoint is saved after the evaluation of every "
        "every_epochs-th epoch and of the last, if it ranks among them (ties keep the earlier).",
    )

    @field_validator("directory")
    @classmethod
    def _directory_under_output_dir(cls, directory: str) -> str:
        if not directory.strip():
            raise ValueError("an empty directory name; use '.' for --output-dir itself")
        if not PurePosixPath(directory).is_absolute() and not PureWindowsPath(directory).is_absolute():
            normal = posixpath.normpath(directory.replace("\\", "/"))
            if normal == ".." or normal.startswith("../"):
                raise ValueError(
                    f"{directory!r} leads out of --output-dir; a relative directory stays under it "
                    "(write an absolute path for checkpoints elsewhere)"
                )
        return directory

    @model_validator(mode="after")
    def _exactly_one_period(self) -> CheckpointCb:
        if (self.every_steps is None) == (self.every_epochs is None):
            raise ValueError("set exactly one of every_steps and every_epochs")
        return self


class EarlyStoppingCb(Section):
    """Stop when an evaluation metric has not improved for `patience` evaluations in a row."""

    monitor: str = Field(
        "loss",
        description="An eval.metrics key: accuracy, loss, top_5, mae, an imported metric's key; "
        "`key.field` watches one field of an imported metric that returns a dict (myprec.precision).",
    )
    mode: Mode = None
    patience: PositiveInt = Field(3, description="Evaluations (every eval.every_epochs) without improvement.")
    min_delta: Annotated[float, NOT_BOOL, Field(ge=0, allow_inf_nan=False)] = Field(
        0.0, description="An improvement must exceed this."
    )


class Callbacks(Section):
    """Callbacks for the Model variant; the native loop writes the same behaviour out."""

    loss_monitor: Bool = Field(True, description="Print the loss every train.log_every_steps steps.")
    time_monitor: Bool = Field(True, description="Print epoch time and time per step.")
    checkpoint: CheckpointCb | None = None
    early_stopping: EarlyStoppingCb | None = Field(
        None, description="Needs data.eval; checked after each evaluation, in both variants."
    )
