"""Rules for the transforms and augmentations -> data.*.transforms and data.train.batch_transforms.

What mindcv 0.3.0 builds, and what it becomes:

- image folders (`dataset` imagenet or ''): `transforms_imagenet_train` / `transforms_imagenet_eval`
  (mindcv/data/transforms_factory.py) op for op as per-column pipelines, on sources that read the files'
  bytes (`decode: false`, as mindcv's ImageFolderDataset): the train pipeline starts with
  `RandomCropDecodeResize` (a JPEG decoded in the crop's columns only), the eval one with `Decode`.
  `Normalize` takes mindcv's 0-255 mean/std as they are: the
  pipeline form adds no Rescale. mindcv's own auto-augment policies (a port of timm's, in Python;
  MindSpore's RandAugment/AutoAugment/TrivialAugmentWide are torchvision's, other algorithms) stay
  mindcv's: a `mindcv.auto_augment` entry, which the script builds with mindcv's function; `augmix` is
  not converted;
- cifar10: `transforms_cifar` (random 4-pixel-padded crop and flip for training), exactly;
- mnist: `transforms_mnist`, in the fixed form (Resize, Rescale, Normalize, HWC2CHW);
- every dataset: `create_loader`'s TypeCast(int32) of the labels and its mixup/cutmix, mindcv's own
  `Mixup(mixup_alpha=mixup, cutmix_alpha=cutmix, prob=cutmix_prob, switch_prob=0.5, label_smoothing=0.0,
  num_classes)` (mindcv/data/loader.py), as data.train.batch_transforms.

mindcv itself is not imported: the rules restate its code and cite the function they follow (the
scripts import mindcv's auto-augment functions and Mixup).
"""

from __future__ import annotations

import math
from typing import Any

from mscodegen.catalog import mindcv_augment, pipeline
from mscodegen.catalog.dataset_ops import load_table
from mscodegen.recipes.mindcv._converter import Converter
from mscodegen.recipes.mindcv._data import IMAGE_FOLDER_DATASETS

MNIST_NORMALIZE = ([0.1307], [0.3081])  # mindcv transforms_mnist
CIFAR_NORMALIZE = ([0.4914, 0.4822, 0.4465], [0.2023, 0.1994, 0.2010])  # mindcv transforms_cifar
# Inter's aliases (mindcv accepts every attribute of Inter); the op table lists the canonical names
INTER_ALIASES = {"LINEAR": "BILINEAR", "CUBIC": "BICUBIC"}
IMAGENET_KEYS = (
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


class Pipeline:
    """A per-column pipeline being written, with the comment of each entry."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []
        self.notes: list[str | None] = []

    def add(self, name: str, kwargs: dict[str, Any], note: str | None = None) -> None:
        self.entries.append({name: kwargs})
        self.notes.append(note)

    def put(self, c: Converter, split: str, column: str) -> None:
        c.result.config["data"][split].setdefault("transforms", {})[column] = self.entries
        for index, note in enumerate(self.notes):
            if note:
                c.comments[("data", split, "transforms", column, index)] = note


def augmentation(c: Converter) -> None:
    dataset = c.str_("dataset").lower()
    data = c.result.config["data"]
    python_ops: list[str] = []
    if dataset in IMAGE_FOLDER_DATASETS:
        python_ops += _imagenet(c, data)
    else:
        c.ignored(IMAGENET_KEYS, f"mindcv's {dataset} transforms do not use it")
        if dataset == "cifar10":
            _cifar10(c, data)
        elif dataset == "mnist":
            _mnist(c, data)
        else:
            c.ignored("image_resize", "no data source converted")
    if dataset in (*IMAGE_FOLDER_DATASETS, "mnist", "cifar10"):
        c.mapped("image_resize")
    python_ops += _mixing(c, data["train"], dataset)
    function = mindcv_augment.function(c.str_("auto_augment")) if mindcv_augment.NAME in python_ops else None
    if function in mindcv_augment.NUMPY_GLOBAL and pipeline.MINDCV_MIXUP in python_ops:
        c.result.notes.append(
            f"{function} and Mixup both draw from numpy's global generator: mindcv's "
            "train.py runs them in two threads, which take turns at it in an order that changes from run to "
            "run; the scripts run the image ops in a process of their own (reproducible, not mindcv's order)"
        )
    if python_ops and data["train"]["num_workers"] > 1:
        workers = data["train"]["num_workers"]
        data["train"]["num_workers"] = 1
        c.comments[("data", "train", "num_workers")] = (
            f"num_parallel_workers {workers}: 1 for {', '.join(python_ops)} (Python ops)"
        )
        c.result.notes.append(
            f"data.train.num_workers is 1, not num_parallel_workers {workers}: {', '.join(python_ops)} "
            "run(s) in Python, which mscodegen runs reproducibly with one worker only"
        )


def _size(c: Converter) -> int | list[int]:
    """image_resize as mindcv passes it: an int, or [height, width]."""
    resize = c.raw("image_resize")
    if isinstance(resize, list):
        if len(resize) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in resize):
            raise c.bad("image_resize", "an integer or [height, width]")
        return list(resize)
    return c.int_("image_resize")


def _square(size: int | list[int]) -> list[int]:
    return list(size) if isinstance(size, list) else [size, size]


# ---- mnist, cifar10 --------------------------------------------------------------------------------


def _mnist(c: Converter, data: dict[str, Any]) -> None:
    """transforms_mnist: Resize, Rescale(1/255), Rescale(1/0.3081, -0.1307/0.3081), HWC2CHW -- the fixed form."""
    mean, std = MNIST_NORMALIZE
    for split in ("train", "eval"):
        if split in data:
            data[split]["transforms"] = {
                "resize": _square(_size(c)),
                "normalize": {"mean": list(mean), "std": list(std)},
            }
            c.comments[("data", split, "transforms", "resize")] = "image_resize"
            c.comments[("data", split, "transforms", "normalize")] = "mindcv's fixed mnist normalization"


def _cifar10(c: Converter, data: dict[str, Any]) -> None:
    """transforms_cifar: for training RandomCrop((32, 32), (4, 4, 4, 4)), RandomHorizontalFlip(prob=0.5);
    then Resize(resize), Rescale(1/255, 0), Normalize(CIFAR_NORMALIZE), HWC2CHW."""
    mean, std = CIFAR_NORMALIZE
    for split in ("train", "eval"):
        if split not in data:
            continue
        image = Pipeline()
        if split == "train":
            image.add(
                "RandomCrop", {"size": [32, 32], "padding": [4, 4, 4, 4]}, "mindcv's cifar10 training crop"
            )
            image.add("RandomHorizontalFlip", {"prob": 0.5}, "mindcv's cifar10 training flip")
        # Resize(image_resize): an int keeps the aspect ratio, the same as [n, n] on cifar's 32x32 images
        image.add("Resize", {"size": _square(_size(c))}, "image_resize")
        image.add("Rescale", {"rescale": 1 / 255, "shift": 0.0})
        image.add("Normalize", {"mean": list(mean), "std": list(std)}, "mindcv's fixed cifar10 normalization")
        image.add("HWC2CHW", {})
        image.put(c, split, "image")
        _labels(c, split)


def _labels(c: Converter, split: str) -> None:
    label = Pipeline()  # create_loader's target_transform: labels cast to int32
    label.add("TypeCast", {"data_type": "int32"}, "create_loader's target_transform")
    label.put(c, split, "label")


# ---- image folders -------------------------------------------------------------------------------------


def _interpolation(c: Converter) -> tuple[str, str]:
    """(Inter member, the comment's clause): mindcv takes getattr(Inter, interpolation.upper()), else
    Inter.BILINEAR."""
    given = c.str_("interpolation").upper()
    name = INTER_ALIASES.get(given, given)
    members: list[str] = load_table()["enums"]["Inter"]["members"]
    c.mapped("interpolation")
    if name in members:
        return name, ""
    return "BILINEAR", f"; {c.str_('interpolation')!r} is not an Inter: mindcv uses BILINEAR"


def _imagenet(c: Converter, data: dict[str, Any]) -> list[str]:
    """transforms_imagenet_train / transforms_imagenet_eval; the Python ops of the train pipeline."""
    size = _size(c)
    inter, inter_note = _interpolation(c)
    # as mindcv gives them (0-255), rounded: IMAGENET_DEFAULT_STD's 0.224 * 255 is 57.120000000000005
    mean = [round(v, 8) for v in c.numbers("mean")]
    std = [round(v, 8) for v in c.numbers("std")]
    c.mapped("mean", "std")
    normalize = (
        {"mean": mean, "std": std},
        f"{c.src('mean')}, {c.src('std')}: mindcv normalizes 0-255 pixels",
    )

    # transforms_imagenet_train: primary (crop, flips), secondary (auto-augment or colour jitter), final
    image = Pipeline()
    image.add(
        "RandomCropDecodeResize",
        {"size": size, "scale": c.numbers("scale"), "ratio": c.numbers("ratio"), "interpolation": inter},
        "image_resize, scale, ratio, interpolation: decodes only the crop, as mindcv does" + inter_note,
    )
    c.mapped("scale", "ratio")
    for key, op in (("hflip", "RandomHorizontalFlip"), ("vflip", "RandomVerticalFlip")):
        if c.float_(key) > 0:
            image.add(op, {"prob": c.float_(key)}, c.src(key))
        c.mapped(key)
    python_ops = []
    auto_augment = c.opt_str("auto_augment")
    if auto_augment is not None:
        if _auto_augment(c, image, auto_augment, inter, size):
            python_ops.append(mindcv_augment.NAME)
        c.ignored("color_jitter", "mindcv ignores it when auto_augment is set")
    else:
        c.mapped("auto_augment")
        _color_jitter(c, image)
    image.add("Normalize", *normalize)
    image.add("HWC2CHW", {})
    if c.float_("re_prob") > 0:
        image.add(
            "RandomErasing",
            {
                "prob": c.float_("re_prob"),
                "scale": c.numbers("re_scale"),
                "ratio": c.numbers("re_ratio"),
                "value": c.raw("re_value"),
                "max_attempts": c.int_("re_max_attempts"),
            },
            "re_prob, re_scale, re_ratio, re_value, re_max_attempts: after HWC2CHW, as in mindcv",
        )
        c.mapped("re_prob", "re_scale", "re_ratio", "re_value", "re_max_attempts")
        python_ops.append("RandomErasing")
    else:
        c.mapped("re_prob")
        c.ignored(
            ("re_scale", "re_ratio", "re_value", "re_max_attempts"), "random erasing is off (re_prob 0)"
        )
    image.put(c, "train", "image")
    _labels(c, "train")
    if c.int_("aug_splits") > 0:
        c.unconverted(
            "aug_splits",
            "mindcv's augmentation splits (a clean and two augmented copies of each image, concatenated "
            "per batch) need three image columns; a mscodegen pipeline maps one image to one image",
        )
    else:
        c.mapped("aug_splits")

    if "eval" in data:
        _imagenet_eval(c, size, inter, inter_note, normalize)
    else:
        c.ignored("crop_pct", "used for validation only, and val_while_train is false")
    return python_ops


def _imagenet_eval(
    c: Converter, size: int | list[int], inter: str, inter_note: str, normalize: tuple[dict[str, Any], str]
) -> None:
    """transforms_imagenet_eval: Decode, Resize(scale_size, interpolation),
    CenterCrop(image_resize), Normalize(mean, std), HWC2CHW."""
    crop_pct = c.float_("crop_pct")
    scale_size: int | list[int]
    if isinstance(size, list) and size[0] != size[1]:
        scale_size = [int(x / crop_pct) for x in size]
        how = "[int(h / crop_pct), int(w / crop_pct)]"
    else:  # an int: the shorter side, the aspect ratio kept
        scale_size = int(math.floor((size[0] if isinstance(size, list) else size) / crop_pct))
        how = "floor(image_resize / crop_pct), the shorter side"
    image = Pipeline()
    image.add("Decode", {})
    image.add("Resize", {"size": scale_size, "interpolation": inter}, how + inter_note)
    image.add("CenterCrop", {"size": size}, "image_resize")
    image.add("Normalize", *normalize)
    image.add("HWC2CHW", {})
    image.put(c, "eval", "image")
    _labels(c, "eval")
    c.mapped("crop_pct")


def _color_jitter(c: Converter, image: Pipeline) -> None:
    """RandomColorAdjust(*color_jitter): a number is (n, n, n); a list is brightness, contrast,
    saturation(, hue)."""
    jitter = c.raw("color_jitter")
    if jitter is None:
        c.mapped("color_jitter")
        return
    values = c.numbers("color_jitter") if isinstance(jitter, list) else [c.float_("color_jitter")] * 3
    if len(values) not in (3, 4):
        c.unconverted("color_jitter", "mindcv asserts 3 or 4 values (brightness, contrast, saturation, hue)")
        return
    if any(values):  # all zero: RandomColorAdjust(0, 0, 0) changes nothing
        names = ("brightness", "contrast", "saturation", "hue")
        image.add("RandomColorAdjust", dict(zip(names, values, strict=False)), c.src("color_jitter"))
    c.mapped("color_jitter")


# ---- auto_augment ----------------------------------------------------------------------------------------


def _auto_augment(c: Converter, image: Pipeline, text: str, inter: str, size: int | list[int]) -> bool:
    """transforms_imagenet_train's secondary transform: mindcv's own policy (rand_augment_transform,
    auto_augment_transform or trivial_augment_wide_transform, by the string's start) with the hparams it
    passes: translate_const int(min(image_resize) * 0.45), img_mean min(255, round(x)) of the 0-255 mean,
    the interpolation. MindSpore's RandAugment/AutoAugment/TrivialAugmentWide are torchvision's algorithms
    (other op lists, probabilities and magnitudes): the script calls mindcv's. True if converted."""
    if text.startswith("augmix"):
        c.unconverted(
            "auto_augment",
            "mscodegen does not call mindcv's AugMix (augment_and_mix_transform), and MindSpore has none",
        )
        return False
    problem = mindcv_augment.policy_problem(text)
    if problem is not None:
        c.unconverted("auto_augment", f"mindcv's create_transforms would fail on it: {problem}")
        return False
    translate_const = int(min(_square(size)) * 0.45)
    img_mean = [min(255, round(v)) for v in c.numbers("mean")]
    image.add(
        mindcv_augment.NAME,
        {"policy": text, "translate_const": translate_const, "img_mean": img_mean, "interpolation": inter},
        f"auto_augment, as mindcv's {mindcv_augment.function(text)}: image_resize x 0.45, mean, interpolation",
    )
    c.mapped("auto_augment")
    return True


# ---- mixup / cutmix ----------------------------------------------------------------------------------------


def _mixing(c: Converter, train: dict[str, Any], dataset: str) -> list[str]:
    """create_loader: with is_training, mixup + cutmix > 0 and batch_size > 1 (per device), the batches are
    mapped with Mixup(mixup_alpha=mixup, cutmix_alpha=cutmix, cutmix_minmax=None, prob=cutmix_prob,
    switch_prob=0.5, label_smoothing=0.0, num_classes=num_classes); label smoothing stays in the loss."""
    mixup, cutmix = c.float_("mixup"), c.float_("cutmix")
    keys = ("mixup", "cutmix", "cutmix_prob")
    if mixup + cutmix <= 0:
        c.mapped("mixup", "cutmix")
        c.ignored("cutmix_prob", "mixup and cutmix are off")
        return []
    per_device = c.int_("batch_size")
    if per_device <= 1:
        c.ignored(keys, "mindcv mixes batches of more than one image only")
        return []
    classes = c.result.config["network"].get("num_classes")
    reason = None
    if dataset not in (*IMAGE_FOLDER_DATASETS, "mnist", "cifar10"):
        reason = "no data source converted"
    elif classes is None:
        reason = "mindcv's Mixup needs num_classes, which is not known here"
    elif per_device % 2:
        reason = f"mindcv's Mixup needs an even batch (it asserts so), and batch_size is {per_device}"
    elif not train["drop_remainder"]:
        reason = "mindcv's Mixup fails on an odd last batch: mscodegen needs drop_remainder true with it"
    if reason is not None:
        c.unconverted(keys, reason)
        return []
    mix = {"mixup_alpha": mixup, "cutmix_alpha": cutmix, "prob": c.float_("cutmix_prob"), "switch_prob": 0.5}
    train["batch_transforms"] = [{"mindcv.Mixup": {**mix, "label_smoothing": 0.0, "num_classes": classes}}]
    c.comments[("data", "train", "batch_transforms", 0)] = (
        "create_loader: mixup, cutmix, cutmix_prob; smoothing is the loss's label_smoothing"
    )
    c.mapped(*keys)
    return ["mindcv.Mixup"]
