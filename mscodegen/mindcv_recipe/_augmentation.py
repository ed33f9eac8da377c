"""Rules for the transforms and augmentations: `image_resize`, `mean`/`std` -> data.*.transforms;
mindcv's random crops, flips, colour jitter, auto-augment, random erasing, mixup/cutmix and repeated
augmentation are not converted (mscodegen has no augmentation pipeline) unless they are off.
"""

from __future__ import annotations

from typing import Any

from ._converter import Converter
from ._data import IMAGE_FOLDER_DATASETS

NO_AUGMENTATION = "mscodegen has no augmentation pipeline yet"
MNIST_NORMALIZE = ([0.1307], [0.3081])  # mindcv transforms_mnist
CIFAR_NORMALIZE = ([0.4914, 0.4822, 0.4465], [0.2023, 0.1994, 0.2010])  # mindcv transforms_cifar


def augmentation(c: Converter) -> None:
    dataset = c.str_("dataset").lower()
    data = c.result.config["data"]
    known = dataset in (*IMAGE_FOLDER_DATASETS, "mnist", "cifar10")
    if known:
        for split in ("train", "eval"):
            if split in data:
                data[split]["transforms"] = _transforms(c, dataset)
        c.comments[("data", "train", "transforms", "resize")] = "image_resize"
        if "eval" in data:
            c.comments[("data", "eval", "transforms", "resize")] = "image_resize"
        for split in ("train", "eval"):
            if dataset in IMAGE_FOLDER_DATASETS:
                note = "mean, std / 255 (mindcv normalizes 0-255 pixels)"
            else:
                note = f"mindcv's fixed {dataset} normalization"
            if split in data:
                c.comments[("data", split, "transforms", "normalize")] = note
        c.mapped("image_resize")
    else:
        c.ignored("image_resize", "no data source converted")

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
            c.ignored(key, f"mindcv's {dataset} transforms do not use it")
        if dataset == "cifar10":
            c.done.discard("dataset")
            c.approximated(
                "dataset",
                "mindcv trains cifar10 on random 32x32 crops of the 4-pixel padded image, flipped with "
                f"probability 0.5; {NO_AUGMENTATION}",
            )
    else:
        _imagenet_augmentation(c)

    # create_loader: mixup/cutmix for every dataset
    mixing = False
    for key in ("mixup", "cutmix"):
        if c.float_(key) > 0:
            mixing = True
            c.unconverted(key, NO_AUGMENTATION)
        else:
            c.mapped(key)
    if mixing:
        c.unconverted("cutmix_prob", NO_AUGMENTATION)
    else:
        c.ignored("cutmix_prob", "mixup and cutmix are off")
    if c.int_("aug_repeats") > 1:
        c.unconverted("aug_repeats", "mscodegen has no repeated-augmentation sampler")
    else:
        c.mapped("aug_repeats")


def _transforms(c: Converter, dataset: str) -> dict[str, Any]:
    resize = c.raw("image_resize")
    if isinstance(resize, list):  # RandomCropDecodeResize and Resize also take [height, width]
        if len(resize) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in resize):
            raise c.bad("image_resize", "an integer or [height, width]")
        size = list(resize)
    else:
        size = [c.int_("image_resize")] * 2
    if dataset in IMAGE_FOLDER_DATASETS:
        # mindcv normalizes 0-255 pixels; mscodegen rescales by 1/255 first, so divide by 255
        mean = [round(v / 255, 8) for v in c.numbers("mean")]
        std = [round(v / 255, 8) for v in c.numbers("std")]
    else:
        mean, std = MNIST_NORMALIZE if dataset == "mnist" else CIFAR_NORMALIZE
    return {"resize": size, "normalize": {"mean": list(mean), "std": list(std)}}


def _imagenet_augmentation(c: Converter) -> None:
    crop = (
        "mindcv trains on random crops (RandomCropDecodeResize) of this {} resized to image_resize; "
        "the converted config resizes the whole image"
    )
    c.unconverted("scale", crop.format("area fraction"))
    c.unconverted("ratio", crop.format("aspect ratio"))
    for key in ("hflip", "vflip"):
        if c.float_(key) > 0:
            c.unconverted(key, NO_AUGMENTATION)
        else:
            c.mapped(key)
    auto_augment = c.opt_str("auto_augment")
    if auto_augment is not None:
        c.unconverted("auto_augment", NO_AUGMENTATION)
        c.ignored("color_jitter", "mindcv ignores it when auto_augment is set")
    else:
        c.mapped("auto_augment")
        jitter = c.raw("color_jitter")
        if jitter is None:
            values = []
        elif isinstance(jitter, list):  # [brightness, contrast, saturation(, hue)]
            values = c.numbers("color_jitter")
        else:
            values = [c.float_("color_jitter")]
        if any(values):  # all zero: RandomColorAdjust(0, 0, 0) changes nothing
            c.unconverted("color_jitter", NO_AUGMENTATION)
        else:
            c.mapped("color_jitter")
    if c.int_("aug_splits") > 0:
        c.unconverted("aug_splits", NO_AUGMENTATION)
    else:
        c.mapped("aug_splits")
    if c.float_("re_prob") > 0:
        for key in ("re_prob", "re_scale", "re_ratio", "re_value", "re_max_attempts"):
            c.unconverted(key, f"random erasing: {NO_AUGMENTATION}")
    else:
        c.mapped("re_prob")
        for key in ("re_scale", "re_ratio", "re_value", "re_max_attempts"):
            c.ignored(key, "random erasing is off (re_prob 0)")
    if c.str_("interpolation").lower() == "bilinear":
        c.mapped("interpolation")  # vision.Resize's default, Inter.LINEAR, is bilinear
    else:
        c.unconverted("interpolation", "data.*.transforms.resize uses bilinear interpolation")
    c.mapped("mean", "std")
    if "eval" in c.result.config["data"]:
        c.approximated(
            "crop_pct",
            "mindcv evaluates on the centre image_resize crop of the image resized to "
            "image_resize / crop_pct; data.eval resizes the whole image to image_resize",
        )
    else:
        c.ignored("crop_pct", "used for validation only, and val_while_train is false")
