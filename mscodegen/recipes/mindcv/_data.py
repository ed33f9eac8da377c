"""Rules for the data sources: `dataset`, `data_dir`, the splits, `batch_size` (per device) and the
loader arguments (`aug_repeats` too) -> data.train and (with `val_while_train`) data.eval; `num_classes` ->
network.

The transforms and augmentations are `_augmentation`'s.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mscodegen.recipes.mindcv._converter import Converter, RecipeError

# mindcv reads these as one folder per class under data_dir/<split>
IMAGE_FOLDER_DATASETS = ("imagenet", "")


def data(c: Converter) -> None:
    dataset = c.str_("dataset").lower()
    train_split, val_split = c.str_("train_split"), c.str_("val_split")
    per_device = c.int_("batch_size")
    devices = c.devices if c.bool_("distribute") else 1
    train, evaluate, train_dir = _sources(c, dataset, train_split, val_split)
    if c.bool_("dataset_download"):
        c.unconverted("dataset_download", "mscodegen never downloads data: download it into data_dir")
    else:
        c.mapped("dataset_download")

    train["batch_size"] = per_device * devices
    if devices > 1:
        batch_note = f"batch_size {per_device} per device x {devices} devices"
    else:
        batch_note = c.source("batch_size", "batch_size") or ""
    train["shuffle"] = c.bool_("shuffle")
    train["drop_remainder"] = c.bool_("drop_remainder")
    train["num_workers"] = c.int_("num_parallel_workers")
    num_samples = c.opt_int("num_samples")
    if num_samples is not None:
        train["num_samples"] = num_samples
        if devices > 1:
            c.approximated(
                "num_samples",
                "mindcv samples this many per device; data.train.num_samples is read before sharding",
            )
    c.mapped("batch_size", "shuffle", "drop_remainder", "num_parallel_workers", "num_samples")
    _aug_repeats(c, train, num_samples)
    c.result.config["data"] = {"train": train}
    c.comments[("data", "train", "batch_size")] = batch_note
    c.comments[("data", "train", "num_workers")] = c.src("num_parallel_workers")
    for key in ("shuffle", "drop_remainder"):
        mark = c.default_mark(key)
        if mark:
            c.comments[("data", "train", key)] = mark
    if dataset in IMAGE_FOLDER_DATASETS:
        c.comments[("data", "train", "path")] = f"data_dir/{train_split}"
        c.comments[("data", "train", "decode")] = "mindcv reads the files' bytes: the first op decodes"
    if evaluate is not None:
        # mindcv's eval loader keeps the last batch; metrics do not depend on the batch size
        evaluate.update(
            batch_size=per_device, drop_remainder=False, num_workers=c.int_("num_parallel_workers")
        )
        c.result.config["data"]["eval"] = evaluate
        if dataset in IMAGE_FOLDER_DATASETS:
            c.comments[("data", "eval", "path")] = f"data_dir/{val_split}, val_while_train"
            c.comments[("data", "eval", "decode")] = "mindcv reads the files' bytes: the first op decodes"
        c.comments[("data", "eval", "batch_size")] = "batch_size (every device evaluates all of it)"
    _num_classes(c, train_dir)


def _aug_repeats(c: Converter, train: dict[str, Any], num_samples: int | None) -> None:
    """create_dataset(num_aug_repeats=aug_repeats): mindcv's RepeatAugSampler from 1 on (0: none)."""
    repeats = c.int_("aug_repeats")
    if repeats <= 0:
        c.mapped("aug_repeats")
    elif num_samples is not None:
        raise RecipeError(
            f"aug_repeats {repeats} with num_samples {num_samples}: mindcv's create_dataset refuses both "
            "(an assert); drop one"
        )
    elif train["kind"] == "synthetic":
        c.ignored("aug_repeats", "belongs to the dataset that was not converted")
    else:
        train["aug_repeats"] = repeats
        c.mapped("aug_repeats")


def _sources(
    c: Converter, dataset: str, train_split: str, val_split: str
) -> tuple[dict[str, Any], dict[str, Any] | None, Path | None]:
    """data.train and data.eval (None: no validation) with their sources; the train folder on this machine."""
    train: dict[str, Any] = {}
    evaluate: dict[str, Any] | None = {} if c.bool_("val_while_train") else None
    train_dir: Path | None = None
    if dataset in IMAGE_FOLDER_DATASETS:
        path, train_dir = _path(c, train_split)
        train.update(kind="image_folder", path=path, decode=False)
        if evaluate is not None:
            evaluate.update(kind="image_folder", path=_path(c, val_split)[0], decode=False)
        c.mapped("dataset", "data_dir", "train_split", "val_split")
    elif dataset in ("mnist", "cifar10"):
        path, _ = _path(c)
        train.update(kind=dataset, path=path)
        if evaluate is not None:
            evaluate.update(kind=dataset, path=path)
        c.mapped("dataset", "data_dir")
        for key, split, spec in (("train_split", train_split, train), ("val_split", val_split, evaluate)):
            if spec is None:
                c.ignored(key, "no validation: val_while_train is false")
            elif split in ("train", "test", "all"):
                spec["usage"] = split
                c.mapped(key)
            else:
                c.unconverted(key, f"{dataset} has the splits train, test and all")
    else:
        train.update(kind="synthetic", image_shape=[3, 32, 32])
        c.unconverted(
            "dataset",
            "mscodegen reads image folders, mnist and cifar10 only: data.train is a synthetic placeholder",
        )
        c.mapped("data_dir", "train_split", "val_split")
        evaluate = None
    return train, evaluate, train_dir


def _path(c: Converter, *parts: str) -> tuple[str, Path]:
    """(path written into the config, where it is on this machine) for data_dir/parts."""
    joined = Path(c.str_("data_dir"), *[p for p in parts if p])
    if joined.is_absolute():
        return Path(os.path.normpath(joined)).as_posix(), joined
    here = Path.cwd() / joined
    return Path(os.path.relpath(here, c.out_dir.resolve())).as_posix(), here


def _num_classes(c: Converter, train_dir: Path | None) -> None:
    num_classes = c.opt_int("num_classes")
    dataset = c.str_("dataset").lower()
    if num_classes is not None:
        c.put("network.num_classes", num_classes)
    elif dataset in ("mnist", "cifar10"):
        c.put("network.num_classes", 10, "num_classes: null, mindcv uses 10 for this dataset")
    elif train_dir is not None and train_dir.is_dir():
        classes = sum(1 for p in train_dir.iterdir() if p.is_dir())
        c.put("network.num_classes", classes, f"num_classes: null, the class folders in {train_dir}")
    else:
        del c.result.config["network"]["num_classes"]
        c.unconverted(
            "num_classes",
            "mindcv counts the class folders of the training data, which is not here: set network.num_classes",
        )
        return
    c.mapped("num_classes")
