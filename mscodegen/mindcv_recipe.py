"""Convert a mindcv recipe (a YAML file of mindcv's `config.py` arguments) into a mscodegen config.

mindcv's `train.py` reads a recipe such as `configs/resnet/resnet_18_ascend.yaml` as defaults for the
arguments of its `config.py`; every argument the recipe leaves out keeps its `config.py` default. This
module reads the recipe the same way (the defaults of mindcv 0.3.0, the version mscodegen's scripts
import, are in `DEFAULTS`) and maps each argument onto mscodegen's schema:

- system: `mode` -> runtime.mode, `seed` -> runtime.seed, `distribute` + `--devices N` -> parallel,
  `log_interval` -> train.log_every_steps;
- data: `dataset` imagenet/'' (one folder per class under `data_dir/train_split`) -> data.train
  image_folder, mnist/cifar10 -> those kinds; `batch_size` (per device) x devices -> the global
  data.train.batch_size; `image_resize`, `mean`/`std` -> transforms; `val_while_train` -> data.eval + eval;
- model: `model`, `num_classes`, `in_channels`, `drop_rate`, `drop_path_rate` -> network (kind mindcv);
- training: `epoch_size`, `dataset_sink_mode`, checkpoints -> train, callbacks.checkpoint;
- `loss`/`label_smoothing`/`reduction` -> loss (CE is nn.CrossEntropyLoss, which mindcv's CE calls);
- `opt` and its arguments -> optimizer; `scheduler` and its arguments -> lr_schedule (mindcv's
  per-step warm-up and cosine are the formulas mscodegen writes, so they map exactly when the decay
  spans the epochs after the warm-up);
- `amp_level`, `loss_scale_type`/`loss_scale`/`drop_overflow_update`, `clip_grad`/`clip_value`,
  `gradient_accumulation_steps` -> amp, loss_scale, grad.

Every argument ends in one of four states: mapped (including values that equal what mscodegen does
anyway, e.g. `hflip: 0.0`), ignored (mindcv itself does not use it with the other values, e.g.
`momentum` with `opt: adamw`), approximated (written, but mscodegen's behaviour differs, and why), or
not converted (mscodegen cannot express it: augmentations, EMA, ...). The last two are reported.

Why hand-written: the mapping is a list of judgements about mindcv's code (which arguments `train.py`
actually uses, what `create_scheduler` and `create_optimizer` compute), not a rename of keys; each
rule below cites what it relies on, so that a new mindcv release can be checked rule by rule.
mindcv itself is never imported (the generator must not import MindSpore).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

MINDCV_VERSION = "0.3.0"

# mindcv 0.3.0 config.py: every argument and its default.
DEFAULTS: dict[str, Any] = {
    # system
    "mode": 0,
    "distribute": False,
    "val_while_train": False,
    "val_interval": 1,
    "log_interval": 100,
    "seed": 42,
    # dataset
    "dataset": "imagenet",
    "data_dir": "./",
    "train_split": "train",
    "val_split": "val",
    "dataset_download": False,
    "num_parallel_workers": 8,
    "shuffle": True,
    "num_samples": None,
    "batch_size": 128,
    "drop_remainder": True,
    # augmentation
    "image_resize": 224,
    "scale": [0.08, 1.0],
    "ratio": [0.75, 1.333],
    "hflip": 0.5,
    "vflip": 0.0,
    "color_jitter": 0.4,
    "interpolation": "bilinear",
    "auto_augment": None,
    "aug_splits": 0,
    "re_prob": 0.0,
    "re_scale": [0.02, 0.33],
    "re_ratio": [0.3, 3.3],
    "re_value": 0,
    "re_max_attempts": 10,
    "mean": [0.485 * 255, 0.456 * 255, 0.406 * 255],
    "std": [0.229 * 255, 0.224 * 255, 0.225 * 255],
    "crop_pct": 0.875,
    "mixup": 0.0,
    "cutmix": 0.0,
    "cutmix_prob": 1.0,
    "aug_repeats": 0,
    # model
    "model": "mobilenet_v2_035_224",
    "num_classes": None,
    "in_channels": 3,
    "drop_rate": None,
    "drop_path_rate": None,
    "pretrained": False,
    "ckpt_path": "",
    "resume_opt": False,
    "keep_checkpoint_max": 10,
    "ckpt_save_dir": "./ckpt",
    "ckpt_save_interval": 1,
    "ckpt_save_policy": "latest_k",
    "epoch_size": 90,
    "dataset_sink_mode": True,
    "ema": False,
    "ema_decay": 0.9999,
    "clip_grad": False,
    "clip_value": 15.0,
    "layer_decay": None,
    "gradient_accumulation_steps": 1,
    # optimizer
    "opt": "adam",
    "momentum": 0.9,
    "weight_decay": 1e-6,
    "use_nesterov": False,
    "weight_decay_filter": "disable",
    "eps": 1e-10,
    # scheduler
    "scheduler": "cosine_decay",
    "lr": 0.001,
    "min_lr": 1e-6,
    "warmup_epochs": 3,
    "warmup_factor": 0.0,
    "decay_epochs": 100,
    "decay_rate": 0.9,
    "multi_step_decay_milestones": [30, 60, 90],
    "lr_epoch_stair": False,
    "num_cycles": 1,
    "cycle_decay": 1.0,
    # loss
    "loss": "CE",
    "label_smoothing": 0.0,
    "aux_factor": 0.0,
    "reduction": "mean",
    # mixed precision
    "amp_level": "O0",
    "val_amp_level": "O0",
    "amp_cast_list": None,
    "loss_scale_type": "fixed",
    "loss_scale": 1.0,
    "drop_overflow_update": False,
}

# Recipes written for mindcv 0.2 use this key (replaced by weight_decay_filter in 0.3).
LEGACY_KEYS = {"filter_bias_and_bn"}

NO_AUGMENTATION = "mscodegen has no augmentation pipeline yet"
IMAGE_FOLDER_DATASETS = ("imagenet", "")
MNIST_NORMALIZE = ([0.1307], [0.3081])  # mindcv transforms_mnist
CIFAR_NORMALIZE = ([0.4914, 0.4822, 0.4465], [0.2023, 0.1994, 0.2010])  # mindcv transforms_cifar

Path_ = tuple[str, ...]


class RecipeError(Exception):
    """The recipe cannot be read (exit 2): not YAML, not a mapping, or a value of the wrong type."""


@dataclass(frozen=True)
class Finding:
    """A mindcv argument that mscodegen reproduces only approximately, or not at all."""

    key: str
    value: Any
    reason: str
    from_default: bool  # the recipe does not set it: mindcv's config.py default applies

    def describe(self) -> str:
        default = ", mindcv's default" if self.from_default else ""
        return f"{self.key} = {self.value!r}{default} ({self.reason})"


@dataclass
class Conversion:
    """The converted config as plain data, comments by key path, and what did not convert exactly."""

    config: dict[str, Any]
    comments: dict[Path_, str]
    not_converted: list[Finding] = field(default_factory=list)
    approximated: list[Finding] = field(default_factory=list)
    ignored: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.not_converted and not self.approximated

    def to_yaml(self, header: list[str]) -> str:
        """The config as YAML: `header` lines and the unconverted keys as comments on top."""
        lines = [f"# {_one_line(h)}" if h else "#" for h in header]
        if self.approximated:
            lines.append("# Approximated (written, but mscodegen behaves differently):")
            lines += [f"#   {_one_line(f.describe())}" for f in self.approximated]
        if self.not_converted:
            lines.append("# Not converted (mscodegen cannot express them):")
            lines += [f"#   {_one_line(f.describe())}" for f in self.not_converted]
        if self.ignored:
            lines.append("# Ignored (mindcv does not use them with the values above):")
            lines += [f"#   {_one_line(f.describe())}" for f in self.ignored]
        for key, value in self.config.items():
            lines.append("")
            lines += _emit(key, value, (key,), 0, self.comments)
        text = "\n".join(lines) + "\n"
        if yaml.safe_load(text) != self.config:  # the emitter must round-trip exactly
            raise AssertionError("import-mindcv wrote YAML that does not read back as the converted config")
        return text


def read_recipe(path: Path) -> dict[str, Any]:
    """The recipe's mapping; RecipeError when it is not readable as mindcv reads it (yaml.safe_load)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RecipeError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise RecipeError(f"{path} is not UTF-8 text: {exc}") from None
    except yaml.YAMLError as exc:
        raise RecipeError(f"{path} is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise RecipeError(
            f"{path}: a mindcv recipe is a mapping of config.py arguments, got {type(data).__name__}"
        )
    for key in data:
        if not isinstance(key, str):
            raise RecipeError(f"{path}: key {key!r} is not a string")
    return data


def convert(recipe: dict[str, Any], *, devices: int = 1, out_dir: Path | None = None) -> Conversion:
    """Map `recipe` (config.py arguments) onto a mscodegen config for `devices` devices.

    `out_dir` is where the config will be written: relative `data_dir`s (relative to the directory
    mindcv runs in, taken to be the current one) are rewritten relative to it.
    """
    if devices < 1:
        raise ValueError("devices must be at least 1")
    return _Converter(recipe, devices, out_dir or Path.cwd()).run()


class _Converter:
    def __init__(self, recipe: dict[str, Any], devices: int, out_dir: Path) -> None:
        self.recipe = recipe
        self.devices = devices
        self.out_dir = out_dir
        self.done: set[str] = set()
        self.comments: dict[Path_, str] = {}
        self.result = Conversion({}, self.comments)

    # --- reading arguments -----------------------------------------------------------------------
    def given(self, key: str) -> bool:
        return key in self.recipe

    def raw(self, key: str) -> Any:
        return self.recipe[key] if key in self.recipe else DEFAULTS[key]

    def _bad(self, key: str, expected: str) -> RecipeError:
        return RecipeError(f"{key}: expected {expected}, got {self.raw(key)!r}")

    def int_(self, key: str) -> int:
        value = self.raw(key)
        if isinstance(value, bool):
            raise self._bad(key, "an integer")
        if isinstance(value, int):
            return value
        try:  # argparse's type=int converts string values too
            return int(str(value))
        except ValueError:
            raise self._bad(key, "an integer") from None

    def opt_int(self, key: str) -> int | None:
        return None if self.raw(key) is None else self.int_(key)

    def float_(self, key: str) -> float:
        value = self.raw(key)
        if isinstance(value, bool):
            raise self._bad(key, "a number")
        try:  # PyYAML reads `1e-6` as a string; argparse's type=float converts it
            number = float(value)
        except (TypeError, ValueError):
            raise self._bad(key, "a number") from None
        if not math.isfinite(number):
            raise self._bad(key, "a finite number")
        return number

    def opt_float(self, key: str) -> float | None:
        return None if self.raw(key) is None else self.float_(key)

    def bool_(self, key: str) -> bool:
        value = self.raw(key)
        if isinstance(value, bool):
            return value
        text = str(value).lower()  # config.py's str2bool
        if text in ("yes", "true", "1"):
            return True
        if text in ("no", "false", "0"):
            return False
        raise self._bad(key, "true or false")

    def str_(self, key: str) -> str:
        value = self.raw(key)
        if not isinstance(value, str):
            raise self._bad(key, "a string")
        return value

    def opt_str(self, key: str) -> str | None:
        return None if self.raw(key) is None else self.str_(key)

    def numbers(self, key: str) -> list[float]:
        value = self.raw(key)
        if not isinstance(value, (list, tuple)) or isinstance(value, str):
            raise self._bad(key, "a list of numbers")
        if any(isinstance(v, bool) for v in value):
            raise self._bad(key, "a list of numbers")
        try:
            return [float(v) for v in value]
        except (TypeError, ValueError):
            raise self._bad(key, "a list of numbers") from None

    # --- recording what became of each argument ------------------------------------------------
    def mapped(self, *keys: str) -> None:
        self.done.update(keys)

    def ignored(self, key: str, reason: str) -> None:
        self.done.add(key)
        if self.given(key):
            self.result.ignored.append(Finding(key, self.raw(key), reason, False))

    def unconverted(self, key: str, reason: str) -> None:
        self.done.add(key)
        self.result.not_converted.append(Finding(key, self.raw(key), reason, not self.given(key)))

    def approximated(self, key: str, reason: str) -> None:
        self.done.add(key)
        self.result.approximated.append(Finding(key, self.raw(key), reason, not self.given(key)))

    def put(self, path: str, value: Any, comment: str | None = None) -> None:
        """Set a dotted path in the config (sections are created in the order first used)."""
        keys = tuple(path.split("."))
        node = self.result.config
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        node[keys[-1]] = value
        if comment:
            self.comments[keys] = comment

    def src(self, key: str) -> str:
        """The mindcv key a value came from, noting when it is mindcv's default."""
        return key if self.given(key) else f"{key} (mindcv default)"

    def default_mark(self, key: str) -> str | None:
        """The comment of a value whose key has the same name in mindcv: only whether it is the default."""
        return None if self.given(key) else "mindcv default"

    def source(self, key: str, target: str) -> str | None:
        """The comment of a value written at `target`: the mindcv key when the names differ, and
        whether the value is mindcv's default."""
        if key == target.rsplit(".", 1)[-1]:
            return self.default_mark(key)
        return self.src(key)

    # --- the conversion, section by section in mscodegen's order ---------------------------------
    def run(self) -> Conversion:
        for section in ("runtime", "network", "data", "loss", "optimizer", "lr_schedule", "train"):
            self.result.config[section] = {}
        self._runtime()
        self._network()
        self._data()
        self._augmentation()
        self._loss()
        self._optimizer()
        self._lr_schedule()
        self._train()
        self._eval()
        self._checkpoint()
        self._precision()
        self._grad()
        self._parallel()
        self._leftovers()
        self.result.config = {k: v for k, v in self.result.config.items() if v != {}}
        return self.result

    def _runtime(self) -> None:
        mode = self.int_("mode")
        if mode in (0, 1):
            default = "" if self.given("mode") else " (mindcv default)"
            self.put("runtime.mode", "graph" if mode == 0 else "pynative", f"mode {mode}{default}")
            self.mapped("mode")
        else:
            self.unconverted("mode", "mindcv knows 0 (GRAPH_MODE) and 1 (PYNATIVE_MODE)")
        self.put(
            "runtime.device_target",
            "CPU",
            "mindcv uses the device MindSpore finds: set GPU or Ascend here",
        )
        self.put("runtime.seed", self.int_("seed"), self.source("seed", "runtime.seed"))
        self.mapped("seed")

    def _network(self) -> None:
        self.put("network.kind", "mindcv")
        self.put("network.name", self.str_("model"), self.source("model", "network.name"))
        self.mapped("model")
        self.put("network.num_classes", None)  # keeps its place; set (or dropped) once the data is known
        kwargs: dict[str, Any] = {}
        if self.int_("in_channels") != 3:
            kwargs["in_channels"] = self.int_("in_channels")
        self.mapped("in_channels")
        for key in ("drop_rate", "drop_path_rate"):  # create_model drops None-valued kwargs
            value = self.opt_float(key)
            if value is not None:
                kwargs[key] = value
            self.mapped(key)
        if self.bool_("pretrained"):
            self.unconverted(
                "pretrained", "mscodegen never downloads weights: the network starts from scratch"
            )
        else:
            self.mapped("pretrained")
        if self.str_("ckpt_path"):
            self.unconverted("ckpt_path", "mscodegen does not load a checkpoint before training")
            if self.bool_("resume_opt"):
                self.unconverted("resume_opt", "mscodegen does not resume optimizer state")
            else:
                self.mapped("resume_opt")
        else:
            self.mapped("ckpt_path")
            self.ignored("resume_opt", "mindcv resumes only from ckpt_path, which is empty")
        if kwargs:
            self.put(
                "network.kwargs", kwargs, "drop_rate, drop_path_rate, in_channels: passed to create_model"
            )

    def _num_classes(self, train_dir: Path | None) -> None:
        num_classes = self.opt_int("num_classes")
        dataset = self.str_("dataset").lower()
        if num_classes is not None:
            self.put("network.num_classes", num_classes)
            self.mapped("num_classes")
        elif dataset in ("mnist", "cifar10"):
            self.put("network.num_classes", 10, "num_classes: null, mindcv uses 10 for this dataset")
            self.mapped("num_classes")
        elif train_dir is not None and train_dir.is_dir():
            classes = sum(1 for p in train_dir.iterdir() if p.is_dir())
            self.put("network.num_classes", classes, f"num_classes: null, the class folders in {train_dir}")
            self.mapped("num_classes")
        else:
            del self.result.config["network"]["num_classes"]
            self.unconverted(
                "num_classes",
                "mindcv counts the class folders of the training data, which is not here: set network.num_classes",
            )

    def _path(self, *parts: str) -> tuple[str, Path]:
        """(path written into the config, where it is on this machine) for data_dir/parts."""
        joined = Path(self.str_("data_dir"), *[p for p in parts if p])
        if joined.is_absolute():
            return Path(os.path.normpath(joined)).as_posix(), joined
        here = Path.cwd() / joined
        return Path(os.path.relpath(here, self.out_dir.resolve())).as_posix(), here

    def _data(self) -> None:
        dataset = self.str_("dataset").lower()
        train_split, val_split = self.str_("train_split"), self.str_("val_split")
        per_device = self.int_("batch_size")
        devices = self.devices if self.bool_("distribute") else 1
        train: dict[str, Any] = {}
        evaluate: dict[str, Any] | None = {} if self.bool_("val_while_train") else None
        train_dir: Path | None = None
        if dataset in IMAGE_FOLDER_DATASETS:
            train["kind"] = "image_folder"
            train["path"], train_dir = self._path(train_split)
            if evaluate is not None:
                evaluate["kind"] = "image_folder"
                evaluate["path"], _ = self._path(val_split)
            self.mapped("dataset", "data_dir", "train_split", "val_split")
        elif dataset in ("mnist", "cifar10"):
            path, _ = self._path()
            train.update(kind=dataset, path=path)
            if evaluate is not None:
                evaluate.update(kind=dataset, path=path)
            self.mapped("dataset", "data_dir")
            for key, split, spec in (("train_split", train_split, train), ("val_split", val_split, evaluate)):
                if spec is None:
                    self.ignored(key, "no validation: val_while_train is false")
                elif split in ("train", "test", "all"):
                    spec["usage"] = split
                    self.mapped(key)
                else:
                    self.unconverted(key, f"{dataset} has the splits train, test and all")
        else:
            train.update(kind="synthetic", image_shape=[3, 32, 32])
            self.unconverted(
                "dataset",
                "mscodegen reads image folders, mnist and cifar10 only: data.train is a synthetic placeholder",
            )
            self.mapped("data_dir", "train_split", "val_split")
            evaluate = None
        if self.bool_("dataset_download"):
            self.unconverted("dataset_download", "mscodegen never downloads data: download it into data_dir")
        else:
            self.mapped("dataset_download")

        train["batch_size"] = per_device * devices
        if devices > 1:
            batch_note = f"batch_size {per_device} per device x {devices} devices"
        else:
            batch_note = self.source("batch_size", "batch_size") or ""
        train["shuffle"] = self.bool_("shuffle")
        train["drop_remainder"] = self.bool_("drop_remainder")
        train["num_workers"] = self.int_("num_parallel_workers")
        num_samples = self.opt_int("num_samples")
        if num_samples is not None:
            train["num_samples"] = num_samples
            if devices > 1:
                self.approximated(
                    "num_samples",
                    "mindcv samples this many per device; data.train.num_samples is read before sharding",
                )
        self.mapped("batch_size", "shuffle", "drop_remainder", "num_parallel_workers", "num_samples")
        self.result.config["data"] = {"train": train}
        self.comments[("data", "train", "batch_size")] = batch_note
        self.comments[("data", "train", "num_workers")] = self.src("num_parallel_workers")
        for key in ("shuffle", "drop_remainder"):
            mark = self.default_mark(key)
            if mark:
                self.comments[("data", "train", key)] = mark
        if dataset in IMAGE_FOLDER_DATASETS:
            self.comments[("data", "train", "path")] = f"data_dir/{train_split}"
        if evaluate is not None:
            # mindcv's eval loader keeps the last batch; metrics do not depend on the batch size
            evaluate.update(
                batch_size=per_device, drop_remainder=False, num_workers=self.int_("num_parallel_workers")
            )
            self.result.config["data"]["eval"] = evaluate
            if dataset in IMAGE_FOLDER_DATASETS:
                self.comments[("data", "eval", "path")] = f"data_dir/{val_split}, val_while_train"
            self.comments[("data", "eval", "batch_size")] = "batch_size (every device evaluates all of it)"
        self._num_classes(train_dir)

    def _transforms(self, dataset: str) -> dict[str, Any]:
        resize = self.raw("image_resize")
        if isinstance(resize, list):  # RandomCropDecodeResize and Resize also take [height, width]
            if len(resize) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in resize):
                raise self._bad("image_resize", "an integer or [height, width]")
            size = list(resize)
        else:
            size = [self.int_("image_resize")] * 2
        if dataset in IMAGE_FOLDER_DATASETS:
            # mindcv normalizes 0-255 pixels; mscodegen rescales by 1/255 first, so divide by 255
            mean = [round(v / 255, 8) for v in self.numbers("mean")]
            std = [round(v / 255, 8) for v in self.numbers("std")]
        else:
            mean, std = MNIST_NORMALIZE if dataset == "mnist" else CIFAR_NORMALIZE
        return {"resize": size, "normalize": {"mean": list(mean), "std": list(std)}}

    def _augmentation(self) -> None:
        dataset = self.str_("dataset").lower()
        data = self.result.config["data"]
        known = dataset in (*IMAGE_FOLDER_DATASETS, "mnist", "cifar10")
        if known:
            for split in ("train", "eval"):
                if split in data:
                    data[split]["transforms"] = self._transforms(dataset)
            self.comments[("data", "train", "transforms", "resize")] = "image_resize"
            if "eval" in data:
                self.comments[("data", "eval", "transforms", "resize")] = "image_resize"
            for split in ("train", "eval"):
                if dataset in IMAGE_FOLDER_DATASETS:
                    note = "mean, std / 255 (mindcv normalizes 0-255 pixels)"
                else:
                    note = f"mindcv's fixed {dataset} normalization"
                if split in data:
                    self.comments[("data", split, "transforms", "normalize")] = note
            self.mapped("image_resize")
        else:
            self.ignored("image_resize", "no data source converted")

        imagenet_keys = (
            "scale",
            "ratio",
            "hflip",
            "vflip",
            "color_jitter",
            "interpolation",
            "auto_augment",
            "aug_splits",
            "re_prob",
            "re_scale",
            "re_ratio",
            "re_value",
            "re_max_attempts",
            "mean",
            "std",
            "crop_pct",
        )
        if dataset not in IMAGE_FOLDER_DATASETS:
            for key in imagenet_keys:
                self.ignored(key, f"mindcv's {dataset} transforms do not use it")
            if dataset == "cifar10":
                self.done.discard("dataset")
                self.approximated(
                    "dataset",
                    "mindcv trains cifar10 on random 32x32 crops of the 4-pixel padded image, flipped with "
                    f"probability 0.5; {NO_AUGMENTATION}",
                )
        else:
            self._imagenet_augmentation()

        # create_loader: mixup/cutmix for every dataset
        mixing = False
        for key in ("mixup", "cutmix"):
            if self.float_(key) > 0:
                mixing = True
                self.unconverted(key, NO_AUGMENTATION)
            else:
                self.mapped(key)
        if mixing:
            self.unconverted("cutmix_prob", NO_AUGMENTATION)
        else:
            self.ignored("cutmix_prob", "mixup and cutmix are off")
        if self.int_("aug_repeats") > 1:
            self.unconverted("aug_repeats", "mscodegen has no repeated-augmentation sampler")
        else:
            self.mapped("aug_repeats")

    def _imagenet_augmentation(self) -> None:
        crop = (
            "mindcv trains on random crops (RandomCropDecodeResize) of this {} resized to image_resize; "
            "the converted config resizes the whole image"
        )
        self.unconverted("scale", crop.format("area fraction"))
        self.unconverted("ratio", crop.format("aspect ratio"))
        for key in ("hflip", "vflip"):
            if self.float_(key) > 0:
                self.unconverted(key, NO_AUGMENTATION)
            else:
                self.mapped(key)
        auto_augment = self.opt_str("auto_augment")
        if auto_augment is not None:
            self.unconverted("auto_augment", NO_AUGMENTATION)
            self.ignored("color_jitter", "mindcv ignores it when auto_augment is set")
        else:
            self.mapped("auto_augment")
            jitter = self.raw("color_jitter")
            if jitter is None:
                values = []
            elif isinstance(jitter, list):  # [brightness, contrast, saturation(, hue)]
                values = self.numbers("color_jitter")
            else:
                values = [self.float_("color_jitter")]
            if any(values):  # all zero: RandomColorAdjust(0, 0, 0) changes nothing
                self.unconverted("color_jitter", NO_AUGMENTATION)
            else:
                self.mapped("color_jitter")
        if self.int_("aug_splits") > 0:
            self.unconverted("aug_splits", NO_AUGMENTATION)
        else:
            self.mapped("aug_splits")
        if self.float_("re_prob") > 0:
            for key in ("re_prob", "re_scale", "re_ratio", "re_value", "re_max_attempts"):
                self.unconverted(key, f"random erasing: {NO_AUGMENTATION}")
        else:
            self.mapped("re_prob")
            for key in ("re_scale", "re_ratio", "re_value", "re_max_attempts"):
                self.ignored(key, "random erasing is off (re_prob 0)")
        if self.str_("interpolation").lower() == "bilinear":
            self.mapped("interpolation")  # vision.Resize's default, Inter.LINEAR, is bilinear
        else:
            self.unconverted("interpolation", "data.*.transforms.resize uses bilinear interpolation")
        self.mapped("mean", "std")
        if "eval" in self.result.config["data"]:
            self.approximated(
                "crop_pct",
                "mindcv evaluates on the centre image_resize crop of the image resized to "
                "image_resize / crop_pct; data.eval resizes the whole image to image_resize",
            )
        else:
            self.ignored("crop_pct", "used for validation only, and val_while_train is false")

    def _loss(self) -> None:
        name = self.str_("loss").lower()
        kwargs: dict[str, Any] = {}
        if name == "ce":  # mindcv CrossEntropySmooth calls ops.cross_entropy, as nn.CrossEntropyLoss does
            self.put(
                "loss.name",
                "CrossEntropyLoss",
                f"loss CE{'' if self.given('loss') else ' (mindcv default)'}: mindcv's CrossEntropySmooth "
                "computes the same",
            )
            self.mapped("loss")
            if self.float_("label_smoothing") > 0:
                kwargs["label_smoothing"] = self.float_("label_smoothing")
            self.mapped("label_smoothing")
            reduction = self.str_("reduction")
            if reduction in ("mean", "sum", "none"):
                kwargs["reduction"] = reduction
                self.mapped("reduction")
            else:
                self.unconverted("reduction", "nn.CrossEntropyLoss knows mean, sum and none")
            self.put("loss.kwargs", kwargs)
        else:
            self.unconverted(
                "loss", "mscodegen's losses take class indices; this mindcv loss has no equivalent"
            )
            for key in ("label_smoothing", "reduction"):
                self.ignored(key, "belongs to the loss that was not converted")
            del self.result.config["loss"]
        if self.float_("aux_factor") > 0:
            self.unconverted("aux_factor", "mscodegen's loss takes the main logits only")
        else:
            self.mapped("aux_factor")

    def _optimizer(self) -> None:
        opt = self.str_("opt").lower()
        momentum, nesterov = self.float_("momentum"), self.bool_("use_nesterov")
        mindcv_only = "mindcv does not pass it to this optimizer"
        if opt in ("momentum", "nesterov", "sgd"):
            # create_optimizer: nn.Momentum for momentum and nesterov (use_nesterov decides), nn.SGD for sgd
            name = "sgd" if opt == "sgd" else "momentum"
            self.put("optimizer.name", name, "opt" if opt == name else f"opt {opt}: nn.Momentum")
            self.put("optimizer.lr", self.float_("lr"), self.default_mark("lr"))
            self.put("optimizer.momentum", momentum, self.source("momentum", "momentum"))
            self.put("optimizer.nesterov", nesterov, self.src("use_nesterov"))
            self.mapped("opt", "lr", "momentum", "use_nesterov")
            self.ignored("eps", mindcv_only)
        elif opt in ("adam", "adamw"):
            self.put("optimizer.name", opt, None if self.given("opt") else "opt (mindcv default)")
            self.put("optimizer.lr", self.float_("lr"), self.default_mark("lr"))
            self.put("optimizer.beta1", 0.9)
            self.put("optimizer.beta2", 0.999)
            self.put("optimizer.eps", 1.0e-8, "mindcv's eps argument is not passed to Adam/AdamW: 1e-8")
            self.mapped("opt", "lr")
            if opt == "adamw":
                self.done.discard("opt")
                self.approximated(
                    "opt",
                    "mindcv's AdamW corrects the moment estimates' bias, mscodegen's adamw "
                    "(nn.AdamWeightDecay) does not: the first steps are larger",
                )
            self.ignored("momentum", f"not used by opt {opt}")
            self.ignored("eps", mindcv_only)
            if nesterov and opt == "adam":
                self.unconverted("use_nesterov", "mscodegen's adam has no nesterov option")
            else:
                self.ignored("use_nesterov", f"not used by opt {opt}")
        else:
            self.put(
                "optimizer.name", "momentum", f"placeholder: mindcv opt {opt!r} has no mscodegen equivalent"
            )
            self.put("optimizer.lr", self.float_("lr"), self.default_mark("lr"))
            self.unconverted("opt", "mscodegen has momentum, sgd, adam and adamw")
            self.mapped("lr", "momentum", "use_nesterov", "eps")
        self.put("optimizer.weight_decay", self.float_("weight_decay"), self.default_mark("weight_decay"))
        self.mapped("weight_decay")
        self._decay_filter()
        if self.opt_float("layer_decay") is not None:
            self.unconverted("layer_decay", "mscodegen has one learning rate for all layers")
        else:
            self.mapped("layer_decay")

    def _decay_filter(self) -> None:
        decays = self.float_("weight_decay") > 0
        if self.given("filter_bias_and_bn"):  # mindcv 0.2: true filters norm and bias parameters
            legacy = self.bool_("filter_bias_and_bn")
            self.done.add("filter_bias_and_bn")
            self.put(
                "optimizer.decay_filter",
                "no_norm_no_bias" if legacy else "all",
                "filter_bias_and_bn (mindcv 0.2)",
            )
            self.ignored("weight_decay_filter", "filter_bias_and_bn (mindcv 0.2) is set")
            return
        wd_filter = self.str_("weight_decay_filter")
        if wd_filter == "norm_and_bias":
            self.put("optimizer.decay_filter", "no_norm_no_bias", "weight_decay_filter norm_and_bias")
            self.mapped("weight_decay_filter")
        elif wd_filter == "auto" or not decays:
            # auto: weight_decay goes to the optimizer, whose default filter skips norm gamma/beta
            self.put("optimizer.decay_filter", "all", self.source("weight_decay_filter", "decay_filter"))
            self.mapped("weight_decay_filter")
        elif wd_filter == "disable":
            self.put("optimizer.decay_filter", "all", self.source("weight_decay_filter", "decay_filter"))
            self.approximated(
                "weight_decay_filter",
                "mindcv decays every parameter; decay_filter all passes weight_decay to the optimizer, "
                "whose default filter skips norm-layer gamma and beta",
            )
        else:
            self.put("optimizer.decay_filter", "all")
            self.unconverted("weight_decay_filter", "mindcv knows disable, auto and norm_and_bias")

    def _lr_schedule(self) -> None:
        scheduler = self.str_("scheduler").lower()
        epochs = self.int_("epoch_size")
        warmup = self.int_("warmup_epochs")
        main_epochs = epochs - warmup
        stair = self.bool_("lr_epoch_stair")
        schedule: dict[str, Any]
        cosine = scheduler in ("cosine_decay", "warmup_cosine_decay")
        if cosine:
            schedule = {"kind": "warmup_cosine" if warmup > 0 else "cosine"}
            if warmup > 0:
                schedule["warmup_epochs"] = warmup
                schedule["warmup_start_lr"] = self.float_("lr") * self.float_("warmup_factor")
            schedule["min_lr"] = self.float_("min_lr")
            self.mapped("scheduler", "min_lr", "warmup_epochs", "warmup_factor")
            decay = self.int_("decay_epochs")
            if decay != main_epochs:
                self.approximated(
                    "decay_epochs",
                    f"mindcv's cosine spans decay_epochs; mscodegen's spans the {main_epochs} epochs after "
                    "the warm-up (epoch_size - warmup_epochs)",
                )
            else:
                self.mapped("decay_epochs")
            if self.int_("num_cycles") != 1:
                self.unconverted("num_cycles", "mscodegen's cosine has one cycle")
                self.unconverted("cycle_decay", "mscodegen's cosine has one cycle")
            else:
                self.mapped("num_cycles")
                self.ignored("cycle_decay", "one cosine cycle (num_cycles 1)")
            self.ignored("decay_rate", f"not used by scheduler {scheduler}")
            self.ignored("multi_step_decay_milestones", f"not used by scheduler {scheduler}")
            if stair:
                self.unconverted("lr_epoch_stair", "mscodegen's schedules change the LR every step")
            else:
                self.mapped("lr_epoch_stair")
            default = "" if self.given("scheduler") else " (mindcv default)"
            self.put("lr_schedule", schedule, f"scheduler {scheduler}{default}")
            if warmup > 0:
                self.comments[("lr_schedule", "warmup_start_lr")] = "lr x warmup_factor"
            return
        # the other schedulers: a warm-up (warmup_epochs > 0) cannot be combined with them in mscodegen
        if warmup > 0:
            self.unconverted(
                "warmup_epochs", f"mscodegen warms up only before a cosine decay, not {scheduler}"
            )
            self.unconverted("warmup_factor", "belongs to the warm-up that was not converted")
        else:
            self.mapped("warmup_epochs")
            self.ignored("warmup_factor", "no warm-up (warmup_epochs 0)")
        self.ignored("min_lr", f"not used by scheduler {scheduler}")
        if scheduler == "multi_step_decay" or scheduler == "step_decay":
            self._piecewise(scheduler, warmup, epochs)
        elif scheduler == "constant":
            self.put("lr_schedule", {"kind": "constant"}, "scheduler")
            self.mapped("scheduler")
            for key in ("decay_epochs", "decay_rate", "multi_step_decay_milestones"):
                self.ignored(key, "not used by scheduler constant")
        else:
            self.put("lr_schedule", {"kind": "constant"}, f"placeholder: scheduler {scheduler!r}")
            self.unconverted("scheduler", "mscodegen has constant, piecewise, cosine and warm-up + cosine")
            self.mapped("decay_epochs", "decay_rate", "multi_step_decay_milestones")
        self.ignored("num_cycles", f"not used by scheduler {scheduler}")
        self.ignored("cycle_decay", f"not used by scheduler {scheduler}")
        self.ignored("lr_epoch_stair", f"scheduler {scheduler} changes the LR at epoch boundaries anyway")

    def _piecewise(self, scheduler: str, warmup: int, epochs: int) -> None:
        """multi_step_lr / step_lr: lr * gamma**(milestones passed), 0-based epochs after the warm-up."""
        gamma = self.float_("decay_rate")
        if scheduler == "step_decay":
            step = self.int_("decay_epochs")
            relative = list(range(step, epochs - warmup, step)) if step > 0 else []
            self.mapped("decay_epochs")
            self.ignored("multi_step_decay_milestones", "not used by scheduler step_decay")
            source = "scheduler step_decay: every decay_epochs"
        else:
            raw = self.raw("multi_step_decay_milestones")
            if not isinstance(raw, list):
                raise self._bad("multi_step_decay_milestones", "a list of epochs")
            relative = sorted(self.int_list("multi_step_decay_milestones"))
            self.ignored("decay_epochs", "not used by scheduler multi_step_decay")
            source = "multi_step_decay_milestones"
        milestones = [warmup + m for m in relative if m < epochs - warmup]  # later ones never apply
        if not 0 < gamma < 1 or any(m <= 0 for m in relative) or len(set(relative)) != len(relative):
            self.put("lr_schedule", {"kind": "constant"}, f"placeholder: scheduler {scheduler}")
            self.unconverted("scheduler", "piecewise needs distinct milestones > 0 and 0 < decay_rate < 1")
            self.mapped("decay_rate", "multi_step_decay_milestones")
            return
        self.mapped("scheduler", "decay_rate", "multi_step_decay_milestones")
        if not milestones:
            self.put(
                "lr_schedule", {"kind": "constant"}, f"scheduler {scheduler}: no milestone within epoch_size"
            )
            return
        self.put("lr_schedule", {"kind": "piecewise", "milestones": milestones, "gamma": gamma})
        self.comments[("lr_schedule", "kind")] = f"scheduler {scheduler}"
        self.comments[("lr_schedule", "milestones")] = source
        self.comments[("lr_schedule", "gamma")] = "decay_rate"

    def int_list(self, key: str) -> list[int]:
        value = self.raw(key)
        if not isinstance(value, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        ):
            raise self._bad(key, "a list of integers")
        return list(value)

    def _train(self) -> None:
        self.put("train.epochs", self.int_("epoch_size"), self.source("epoch_size", "train.epochs"))
        self.put(
            "train.dataset_sink_mode", self.bool_("dataset_sink_mode"), self.default_mark("dataset_sink_mode")
        )
        self.put(
            "train.log_every_steps", self.int_("log_interval"), self.source("log_interval", "log_every_steps")
        )
        self.put(
            "train.output_dir",
            Path(os.path.normpath(self.str_("ckpt_save_dir"))).as_posix(),
            self.src("ckpt_save_dir"),
        )
        self.mapped("epoch_size", "dataset_sink_mode", "log_interval", "ckpt_save_dir")

    def _eval(self) -> None:
        if "eval" not in self.result.config["data"]:
            self.mapped("val_while_train")
            self.ignored("val_interval", "no evaluation (val_while_train false)")
            return
        self.mapped("val_while_train")
        metrics: list[dict[str, Any]] = [{"name": "accuracy"}]
        num_classes = self.result.config["network"].get("num_classes")
        if num_classes is None or num_classes >= 5:  # mindcv get_metrics: top-5 from 5 classes on
            metrics.append({"name": "top_k", "k": 5})
        self.put("eval.every_epochs", self.int_("val_interval"), self.source("val_interval", "every_epochs"))
        self.put("eval.metrics", metrics, "mindcv's Top_1_Accuracy and Top_5_Accuracy")
        self.mapped("val_interval")

    def _checkpoint(self) -> None:
        self.put(
            "callbacks.checkpoint.every_epochs",
            self.int_("ckpt_save_interval"),
            self.src("ckpt_save_interval"),
        )
        self.put(
            "callbacks.checkpoint.keep_max", self.int_("keep_checkpoint_max"), self.src("keep_checkpoint_max")
        )
        self.put(
            "callbacks.checkpoint.prefix",
            self.str_("model"),
            "mindcv names checkpoints <model>-<epoch>_<step>",
        )
        self.comments[("callbacks", "checkpoint")] = "under train.output_dir/checkpoints"
        self.mapped("ckpt_save_interval", "keep_checkpoint_max")
        policy = self.opt_str("ckpt_save_policy")
        if policy == "latest_k":
            self.mapped("ckpt_save_policy")
        else:
            self.approximated(
                "ckpt_save_policy", "mscodegen keeps the latest keep_checkpoint_max checkpoints"
            )

    def _precision(self) -> None:
        level = self.str_("amp_level")
        if level in ("O0", "O1", "O2", "O3", "auto"):
            self.put("amp.level", level, self.source("amp_level", "amp.level"))
            self.mapped("amp_level")
        else:
            self.unconverted("amp_level", "mscodegen knows O0, O1, O2, O3 and auto")
        self.ignored("val_amp_level", "used by mindcv's validate.py, not by train.py")
        if self.opt_str("amp_cast_list"):
            self.unconverted(
                "amp_cast_list", "mscodegen's amp.fp32_cells lists cells kept in float32 instead"
            )
        else:
            self.mapped("amp_cast_list")
        kind = self.str_("loss_scale_type").lower()
        value = self.float_("loss_scale")
        drop = self.bool_("drop_overflow_update")
        if kind == "dynamic":  # create_trainer: DynamicLossScaleManager(loss_scale, 2, 2000)
            self.put(
                "loss_scale",
                {"kind": "dynamic", "init": value, "factor": 2, "window": 2000},
                "loss_scale_type dynamic (mindcv: scale_factor 2, scale_window 2000)",
            )
            self.comments[("loss_scale", "init")] = "loss_scale"
            self.mapped("loss_scale_type", "loss_scale")
            self.ignored("drop_overflow_update", "a dynamic loss scale always skips overflowing steps")
        elif kind == "fixed":
            if value == 1.0 and not drop:
                self.put("loss_scale", {"kind": "none"}, "loss_scale 1.0, fixed: no scaling")
            else:
                self.put("loss_scale", {"kind": "fixed", "value": value, "drop_overflow_update": drop})
                self.comments[("loss_scale", "value")] = "loss_scale"
                self.comments[("loss_scale", "kind")] = "loss_scale_type"
            self.mapped("loss_scale_type", "loss_scale", "drop_overflow_update")
        else:
            self.unconverted("loss_scale_type", "MindSpore's Model picks the loss scale itself under 'auto'")
            self.mapped("loss_scale", "drop_overflow_update")

    def _grad(self) -> None:
        if self.bool_("clip_grad"):
            # TrainStep: ops.clip_by_global_norm(grads, clip_value) after unscaling
            self.put("grad.clip", {"kind": "global_norm", "max_norm": self.float_("clip_value")}, "clip_grad")
            self.comments[("grad", "clip", "max_norm")] = "clip_value"
            self.mapped("clip_grad", "clip_value")
            if self.bool_("distribute") and self.devices > 1:
                self.done.discard("clip_grad")
                self.approximated(
                    "clip_grad", "mindcv clips each device's gradients before the all-reduce, mscodegen after"
                )
        else:
            self.mapped("clip_grad")
            self.ignored("clip_value", "clip_grad is false")
        steps = self.int_("gradient_accumulation_steps")
        if steps > 1:
            self.put("grad.accumulation_steps", steps, "gradient_accumulation_steps")
            self.approximated(
                "gradient_accumulation_steps",
                "mindcv advances the LR schedule every micro-batch, mscodegen every optimizer step",
            )
        else:
            self.mapped("gradient_accumulation_steps")
        if self.bool_("ema"):
            self.unconverted("ema", "mscodegen keeps no moving average of the weights")
            self.unconverted("ema_decay", "belongs to ema, which was not converted")
        else:
            self.mapped("ema")
            self.ignored("ema_decay", "ema is false")

    def _parallel(self) -> None:
        distribute = self.bool_("distribute")
        self.mapped("distribute")
        if distribute and self.devices > 1:
            self.put(
                "parallel",
                {"mode": "data_parallel", "workers": self.devices},
                f"distribute: true, on --devices {self.devices} (mindcv also averages the gradients)",
            )
        elif distribute:
            self.result.notes.append(
                "distribute is true but --devices is 1: converted for one device "
                "(pass --devices N for the number of devices the recipe was run on)"
            )
            self.put("parallel", {"mode": "stand_alone"}, "distribute: true, converted for --devices 1")
        elif self.devices > 1:
            self.result.notes.append(
                f"--devices {self.devices} ignored: distribute is false, mindcv trains on one device"
            )

    def _leftovers(self) -> None:
        for key in self.recipe:
            if key not in DEFAULTS and key not in LEGACY_KEYS:
                self.unconverted(key, f"not an argument of mindcv {MINDCV_VERSION}'s config.py")
        missed = set(DEFAULTS) - self.done
        if missed:  # every argument must be decided on above
            raise AssertionError(f"import-mindcv does not handle: {', '.join(sorted(missed))}")


def _one_line(text: str) -> str:
    return "".join(c if c.isprintable() else " " for c in text)


def _flow(value: Any) -> str:
    text: str = yaml.safe_dump(value, default_flow_style=True, width=1 << 30, sort_keys=False).strip()
    return text.removesuffix("\n...").removesuffix("...").strip()


def _emit(key: str, value: Any, path: Path_, depth: int, comments: dict[Path_, str]) -> list[str]:
    pad = "  " * depth
    comment = comments.get(path)
    suffix = f"  # {_one_line(comment)}" if comment else ""
    if isinstance(value, dict) and value:
        lines = [f"{pad}{key}:{suffix}"]
        for sub_key, sub_value in value.items():
            lines += _emit(sub_key, sub_value, (*path, sub_key), depth + 1, comments)
        return lines
    return [f"{pad}{key}: {_flow(value)}{suffix}"]


def header_lines(recipe: Path, command: str, devices: int, conversion: Conversion) -> list[str]:
    """The comment on top of the written config: source, command, batch and distribute handling."""
    lines = [
        f"Converted from the mindcv recipe {recipe.as_posix()} by:",
        f"  {command}",
        f"Arguments the recipe leaves out take mindcv {MINDCV_VERSION}'s config.py defaults.",
    ]
    train = conversion.config.get("data", {}).get("train", {})
    if "parallel" in conversion.config and conversion.config["parallel"].get("mode") == "data_parallel":
        lines.append(
            f"mindcv's batch_size is per device: data.train.batch_size is the global batch over "
            f"--devices {devices} ({train.get('batch_size')})."
        )
    else:
        lines.append("mindcv's batch_size is per device; converted for one device (--devices 1).")
    return lines
