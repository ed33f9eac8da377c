"""mindcv 0.3.0's `config.py` arguments and their defaults: what a recipe leaves out takes these values."""

from __future__ import annotations

from typing import Any

MINDCV_VERSION = "0.3.0"

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
