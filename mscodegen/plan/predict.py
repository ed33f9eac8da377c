"""Plan of predict.py: what the script that predicts with, evaluates or exports a trained network prints.

predict.py imports the network's class and the dataset function from the training script (never a
copy): an edit there reaches predict.py by construction. New inputs enter where the reference source
yields samples (data.eval's, else data.train's) and go through that pipeline's own map operations.
Nothing here imports MindSpore.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mscodegen.catalog.literals import Call, Name
from mscodegen.plan.imports import Import, imports
from mscodegen.plan.loop import Header
from mscodegen.plan.predict_gan import GanPredictPlan, build_gan_predict, from_checkpoints
from mscodegen.plan.setup import ImportedName, Metric
from mscodegen.schema import Config
from mscodegen.schema.data import CsvData, ImageFolderData
from mscodegen.schema.gan import GanConfig
from mscodegen.schema.optim import HeadsLoss, ImportedLoss
from mscodegen.schema.training import SAME_SHAPE_TARGET_LOSSES

PREDICT_NAME = "predict.py"

# How an input file becomes a sample of the reference source, before its maps:
# gray / rgb: an image read with PIL in that mode, HWC uint8 (MnistDataset, Cifar10Dataset);
# gray_unit: the same in [0, 1] as float32 (the digits loader's /16 scaling, for 8-bit files: /255);
# decode: the file's bytes through vision.Decode, as ImageFolderDataset(decode=True) does;
# bytes: the file's bytes as they are (ImageFolderDataset(decode=False)): the pipeline's first op decodes;
# csv: rows of a CSV file with the source's header names, each cell as text (CSVDataset's form);
# array: .npy files only, each one sample (or a batch of them) as the source yields it.
Reader = Literal["gray", "rgb", "gray_unit", "decode", "bytes", "csv", "array"]
_READERS: dict[str, Reader] = {
    "digits": "gray_unit",
    "mnist": "gray",
    "cifar10": "rgb",
    "image_folder": "decode",
    "csv": "csv",
}


@dataclass(frozen=True, slots=True)
class PredictHead:
    """How predict.py reads one head's output: its top class (softmax), the probability of 1 per logit
    (sigmoid, BCEWithLogitsLoss), or its values (a regression loss)."""

    name: str
    reading: Literal["class", "probability", "value"]


@dataclass(frozen=True, slots=True)
class PredictPlan:
    """One predict.py: a single network's inference, evaluation and export (a GAN's: predict_gan.py)."""

    header: Header
    imports: tuple[Import, ...]
    train_module: str  # train_model: where the network and the dataset come from
    from_train: tuple[Import, ...]  # what predict.py imports from it, and from checkpoints.py
    network: Call  # how train() builds the network
    network_factory: ImportedName | None  # network.factory: imported in load_network, as train() does
    amp_level: str | None  # amp.auto_mixed_precision's level, as the training evaluated; None: float32
    fp32_cells: tuple[str, ...]
    reference: Literal["eval", "train"]  # whose pipeline new inputs go through (train: no data.eval)
    dataset: Call  # how train() makes the reference dataset
    data_dir: bool  # the dataset reads DATA_DIR: --data-dir
    reader: Reader
    csv_columns: tuple[str, ...]  # reader csv: the header names the network inputs are made from
    csv_delimiter: str | None  # reader csv: its field_delim when not a comma
    inputs: tuple[str, ...]  # data.inputs: the columns the network takes
    loss: Call | None  # --evaluate (None: no data.eval)
    eval_factories: tuple[ImportedName, ...]  # loss.path, eval.metrics[i].class: imported where used
    metrics: tuple[Metric, ...]
    eval_cell: Call | None  # Model's eval_network when nn.WithEvalCell(network, loss_fn) does not fit
    latest: bool  # training checkpoints carry CONFIG_SHA256: --checkpoint latest
    ema: bool  # training evaluated the EMA averages, which its checkpoints hold as ema.<name>
    classes: int | None  # the network's output is class logits: top-k of them (None: values)
    class_names: tuple[str, ...] | None  # data.class_names
    folder_classes: bool  # ImageFolderDataset's class order names the classes
    heads: tuple[PredictHead, ...] = ()  # loss.heads: the network returns one output per head
    template: str = "predict.py.j2"

    @property
    def top_k(self) -> int:
        return min(3, self.classes or 1)

    @property
    def images(self) -> bool:
        """Image files (and folders of them) are inputs."""
        return self.reader not in ("csv", "array")


def build_predict(cfg: Config | GanConfig, shared: object, train_script: str) -> PredictPlan | GanPredictPlan:
    """predict.py for the config whose training script is `train_script` (train_model.py)."""
    if isinstance(cfg, GanConfig):
        return build_gan_predict(cfg, shared, train_script)
    return _one_network(cfg, shared, train_script)


def _one_network(cfg: Config, shared: object, train_script: str) -> PredictPlan:
    from mscodegen.plan import Shared  # the plan package imports this module

    assert isinstance(shared, Shared)
    module = train_script.removesuffix(".py")
    reference: Literal["eval", "train"] = "eval" if shared.eval_data is not None else "train"
    use = shared.datasets[1 if reference == "eval" else 0]
    spec = cfg.data.eval if reference == "eval" else cfg.data.train
    assert spec is not None
    reader = _reader(spec)
    net, amp = shared.network, shared.amp
    classes = _class_count(cfg)
    evaluates = shared.eval_data is not None
    cells = {  # Model's eval_network when nn.WithEvalCell(network, loss_fn) does not fit
        "heads": Call.of("WithEvalHeads", Name("network"), Name("loss_fn")),
        "columns": Call.of("WithEvalColumns", Name("network"), Name("loss_fn")),
        "fp32": Call.of("nn.WithEvalCell", Name("network"), Name("loss_fn"), add_cast_fp32=True),
    }
    eval_cell = cells.get(shared.eval_cell) if evaluates else None
    from_train = {*net.classes, use.call.func}
    if evaluates:  # the metrics, losses and cells train.py writes that evaluation uses
        written = {
            "FocalLossOnIndices": shared.loss.on_indices,
            "AuxLogitsLoss": shared.loss.aux_logits,
            "BinaryMetric": shared.binary_metric,
            "AUC": shared.auc_metric,
            "WithEvalColumns": shared.eval_cell == "columns",
            **dict.fromkeys(("WithEvalHeads", "HeadsLoss", "HeadMetric"), shared.eval_cell == "heads"),
        }
        from_train |= {m.call.func for m in shared.metrics if m.factory is None and "." not in m.call.func}
        from_train |= {name for name, on in written.items() if on}
    if shared.resumable:
        from_train.add("OUTPUT_DIR")
    if shared.data_dir is not None:
        from_train.add("DATA_DIR")
    needs = {
        **dict.fromkeys(("predict", "csv", "dataset"), True),
        "vision": reader == "decode",
        "pil_image": reader in ("gray", "rgb", "gray_unit"),
        "amp": amp.enabled,
        "create_model": net.kind == "mindcv",
        "eval_model": evaluates,
        "nn": evaluates or bool(amp.enabled and amp.fp32_cells),  # --evaluate, fp32 cells
    }
    return PredictPlan(
        header=shared.header,
        imports=imports(needs),
        train_module=module,
        from_train=tuple(Import(module, name) for name in sorted(from_train)) + from_checkpoints(shared),
        network=net.call,
        network_factory=net.factory,
        amp_level=amp.native_level if amp.enabled else None,
        fp32_cells=amp.fp32_cells if amp.enabled else (),
        reference=reference,
        dataset=use.call,
        data_dir=shared.data_dir is not None,
        reader=reader,
        csv_columns=_csv_columns(spec, cfg.data.inputs) if isinstance(spec, CsvData) else (),
        csv_delimiter=spec.field_delim if isinstance(spec, CsvData) and spec.field_delim != "," else None,
        inputs=tuple(cfg.data.inputs),
        loss=shared.loss.call if evaluates else None,
        eval_factories=tuple(
            f for f in (shared.loss.factory, *(m.factory for m in shared.metrics)) if f and evaluates
        ),
        metrics=shared.metrics,
        eval_cell=eval_cell,
        latest=shared.resumable,
        ema=shared.ema,
        classes=classes,
        heads=tuple(PredictHead(h.name, _reading(h.loss)) for h in shared.heads.heads)
        if shared.heads
        else (),
        class_names=tuple(cfg.data.class_names) if cfg.data.class_names else None,
        folder_classes=spec.kind == "image_folder" and not cfg.data.class_names,
    )


def _reader(spec: object) -> Reader:
    """How predict.py reads a file as the reference source would yield it."""
    if isinstance(spec, ImageFolderData) and not spec.decode:
        return "bytes"  # the pipeline's first op decodes
    return _READERS.get(getattr(spec, "kind", ""), "array")


def _class_count(cfg: Config) -> int | None:
    """The classes the network's logits score, when the loss reads them as classes (softmax)."""
    if cfg.loss.name in SAME_SHAPE_TARGET_LOSSES or isinstance(cfg.loss, ImportedLoss | HeadsLoss):
        return None
    net = cfg.network
    classes = getattr(net, "num_classes", None) or getattr(net, "kwargs", {}).get("num_classes")
    return classes if isinstance(classes, int) and classes > 1 else None


def _reading(loss: str) -> Literal["class", "probability", "value"]:
    """How a head trained with `loss` is read: class scores, one logit per label, or values."""
    if loss == "BCEWithLogitsLoss":
        return "probability"
    return "value" if loss in SAME_SHAPE_TARGET_LOSSES else "class"


def _csv_columns(spec: CsvData, inputs: list[str]) -> tuple[str, ...]:
    columns = [spec.columns[name] for name in inputs]
    return tuple(c for v in columns for c in ([v] if isinstance(v, str) else v))
