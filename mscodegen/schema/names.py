"""Names the generated scripts use themselves, which the user's imported objects must not bind.

A factory is imported inside the function that calls it (`from nets import Net` in train() or
create_dataset()), so a user object imported by a name of the script's would shadow it there: `sys`
before the import would be an UnboundLocalError, a `process_gradients` would call itself forever. Such
an object is imported under another name (`from nets import MLP as UserMLP`, plan/setup.py `_alias`).
tests/unit/schema/test_names.py checks that every module-level name of generated/*/*.py, and every local name of
the functions that import a user object, is in this set, so it cannot fall behind the templates.
"""

from __future__ import annotations

import builtins

# Modules and objects the scripts import (plan.py `_imports`).
SCRIPT_IMPORTS = frozenset(
    {
        "AdamW", "Callback", "CheckpointConfig", "FixedLossScaleManager", "Lion", "LossMonitor", "Mixup", "Model",
        "ModelCheckpoint", "Path", "RepeatAugSampler", "RunContext", "TimeMonitor", "amp", "argparse", "create_model", "ds", "errno", "fnmatch",
        "get_group_size", "get_rank", "init", "initializer", "json", "load_digits", "math", "ms", "nn", "np",
        "ops", "os", "re", "sys", "text", "time", "transforms", "vision",
        "csv", "Image",  # predict.py
        "auto_augment_transform", "rand_augment_transform", "trivial_augment_wide_transform",  # mindcv.auto_augment
    }
)  # fmt: skip

# Functions and classes the templates define at module level.
SCRIPT_DEFINITIONS = frozenset(
    {
        "AUC", "BinaryMetric", "FocalLossOnIndices", "CallbackParams", "CheckLoss", "CheckStep", "Checkpoints", "EpochTime", "checkpoint_callback", "EMA", "EarlyStop", "ElementMean", "MainLogits", "EvaluateOnAverages", "KeepBest", "LeNet5", "MLP", "RunLog",
        "TrainStep", "WithEvalColumns", "WithLossColumns", "WithLossFp32", "build_gradient_processor",
        "HeadMetric", "HeadsLoss", "WithEvalHeads",
        "build_lr", "create_dataset", "create_eval_dataset", "create_train_dataset", "evaluate", "freeze", "frozen_names",
        "INFO", "init_data_parallel", "is_complete", "load_checkpoint", "load_digits_split", "load_pretrained",
        "log_path", "make_synthetic", "open_log", "param_group", "parse_args", "report_unreadable_file",
        "to_number", "to_vector", "to_vector_filled", "train", "weight_decay_split", "write",
        "build_generator", "export", "load_network", "load_weights", "main", "newest_checkpoint", "predict", "read_inputs",
        "sample", "through_pipeline", "write_grid",
        "WithDistillLoss", "load_teacher",  # distill
        "RankedCheckpoints",  # callbacks.checkpoint.keep_max_by
        "AuxLogitsLoss",  # network.aux_factor
    }
)  # fmt: skip

# Module-level constants (plan's literals): the YAML values the scripts name.
SCRIPT_CONSTANTS = frozenset(
    {
        "ACCUMULATION_STEPS", "AUX_FACTOR", "BEST_KEEP", "BEST_MONITOR", "CHECKPOINT_DIR", "CHECKPOINT_EVERY_EPOCHS",
        "CHECKPOINT_EVERY_STEPS", "CHECKPOINT_KEEP_MAX", "CHECKPOINT_PREFIX", "CLIP_VALUE", "CONFIG_SHA256",
        "DATA_DIR", "DEVICE_NOTES", "DIV_FACTOR", "EARLY_STOP_MIN_DELTA", "EARLY_STOP_MONITOR",
        "EARLY_STOP_PATIENCE", "EMA_DECAY", "EMA_WARMUP_STEPS", "END_LR", "EPOCHS", "EVAL_EVERY_EPOCHS",
        "FINAL_DIV_FACTOR", "FREEZE", "FREEZE_EPOCHS", "GAMMA", "GRADIENTS_MEAN", "LOG_EVERY_STEPS", "LOSS_SCALE",
        "LOSS_SCALE_FACTOR", "LOSS_SCALE_WINDOW", "LR", "MAX_DEVICE_MEMORY", "MAX_NORM", "MILESTONES",
        "MIN_LR", "OUTPUT_DIR", "PARAM_GROUPS", "PCT_START", "POWER", "PRETRAINED", "PRETRAINED_SKIP",
        "RUN_ID", "SEED", "WARMUP_EPOCHS", "WARMUP_START_LR", "WEIGHT_DECAY", "WORKERS",
        "CLASS_NAMES", "CSV_COLUMNS", "IMAGE_SUFFIXES", "INPUTS", "TOP_K",
        "DISTILL_ALPHA", "DISTILL_TEMPERATURE", "TEACHER_CHECKPOINT",  # distill
        "CHECKPOINT_MONITOR",  # callbacks.checkpoint.keep_max_by
        "CYCLE_DECAY", "CYCLES", "DECAY_EPOCHS",  # cosine lr_schedule: its length, restarts
    }
)  # fmt: skip

# Local names of the functions that import a user object (train(), the dataset functions,
# build_gradient_processor): the import would make them the user's object there. The same names are
# the locals of train(), evaluate() and the cells, where a column (data.inputs, data.labels) names a
# loop variable and an argument. tests/unit/schema/test_names.py checks this set against the generated scripts.
HOST_LOCALS = frozenset(
    {
        "_", "__file__", "accum", "anneal", "args", "average", "batch_size", "batches", "callbacks",
        "cb_params", "cell", "checkpoint", "checkpoints", "config", "dataset", "decay", "decay_steps", "digits",
        "directory", "done", "drop_remainder", "early_stop", "ema", "entry", "epoch", "epoch_start",
        "error", "eval_dataset", "eval_epochs", "eval_net", "finite", "first_test", "frozen", "frozen_lr", "frozen_steps", "grad",
        "grads", "group", "group_size", "groups", "held", "image_ops", "image_shape", "images",
        "in_channels", "in_features", "keep_best", "label_ops", "labels", "last", "latest",
        "learning_rate", "left", "loaded", "log", "logits", "loss", "loss_fn", "loss_scale", "lr",
        "members", "metric", "metrics", "missing", "model", "name", "names", "net_with_loss", "network",
        "no_decay", "num_classes", "num_samples", "num_shards", "optimizer", "overflow", "p", "param",
        "params", "parser", "path", "paths", "pattern", "patterns", "pct", "process_gradients", "rank",
        "record", "results", "resume", "rng", "run_context", "runs", "save", "saved", "script", "seed",
        "self", "shapes", "shard_id", "shuffle", "skipped", "split", "start", "end", "start_step", "step",
        "steps", "steps_per_epoch", "taken", "test_fraction", "total_steps", "train_dataset",
        "train_network", "train_step", "trainable", "up_end", "initial_lr", "final_lr", "updates",
        "usage", "value", "data_dir", "elapsed", "per_step", "step_in_epoch", "warmup", "warmup_steps", "weight", "weight_decay", "workers", "x", "buffer_size",
        "class_names", "indexing", "reference", "samples", "source",
        "outputs",  # loss.heads: the network's outputs in HeadsLoss and WithEvalHeads
        "flags", "hard", "kl", "log_probs", "soft_targets", "teacher", "teacher_logits",  # distill
    }
)  # fmt: skip
# The columns of the built-in sources: loop variables in train(), so no user object may take them,
# though a column may.
DEFAULT_COLUMNS = frozenset({"image", "label"})
COLUMN_LOCALS = HOST_LOCALS
HOST_LOCALS = HOST_LOCALS | DEFAULT_COLUMNS

SCRIPT_NAMES = SCRIPT_IMPORTS | SCRIPT_DEFINITIONS | SCRIPT_CONSTANTS | HOST_LOCALS

# What the GAN scripts (gan:) add: reserved for a gan config's objects only, so that a one-network
# config may still name its network Generator.
GAN_NAMES = frozenset(
    {
        "D_LR", "D_STEPS", "D_WEIGHT_DECAY", "Discriminator", "DiscriminatorLoss", "GAMMA_INIT",
        "GANTrainStep", "G_LR", "G_WEIGHT_DECAY", "Generator", "GeneratorLoss", "LATENT_DIM",
        "LossesMonitor", "SAMPLES_DIR", "SAMPLE_COLUMNS", "SAMPLE_COUNT", "SAMPLE_SEED", "SampleGrid",
        "ScaledLoss", "TrainState", "WEIGHT_INIT", "add_latent_noise", "conv_block", "d_finite", "d_grad_fn",
        "d_grads", "d_loss", "d_lr", "d_optimizer", "d_overflow", "d_reducer", "d_scale", "d_scaler",
        "deconv_block", "discriminator", "fake", "fixed_noise", "g_finite", "g_grad_fn", "g_grads", "g_loss",
        "g_lr", "g_optimizer", "g_overflow", "g_reducer", "g_scale", "g_scaler", "generator", "i", "info",
        "networks", "noise", "prefix_optimizer_state", "rows", "samples", "save_samples", "scales", "size",
        "state", "z",
        # gan.loss: wasserstein, the critic's clip_weights and gradient_penalty, grad_clip
        "D_CLIP_VALUE", "D_MAX_NORM", "D_WEIGHT_CLIP", "GP_WEIGHT", "G_CLIP_VALUE", "G_MAX_NORM", "ScoreSum",
        "mix", "weight",
    }
)  # fmt: skip
BUILTIN_NAMES = frozenset(name for name in dir(builtins) if not name.startswith("_"))
RESERVED_NAMES = SCRIPT_NAMES | GAN_NAMES | BUILTIN_NAMES


def column_collision(name: str) -> str | None:
    """Why `name` cannot name a column (a loop variable and cell argument in the scripts), or None."""
    if name not in DEFAULT_COLUMNS and (name in COLUMN_LOCALS or name in SCRIPT_NAMES):
        return f"{name!r} is a name the generated training code uses itself; rename the column"
    if name in BUILTIN_NAMES:
        return f"{name!r} would shadow Python's builtin {name} in the generated scripts; rename the column"
    return None
