"""Names the generated scripts use themselves, which the user's imported objects must not take.

A factory is imported by its own name inside the function that calls it (`from nets import sys` in
build_network), so a user object named like one of the script's names shadows it there: `sys`
before the import is then an UnboundLocalError, a `process_gradients` calls itself forever.
tests/test_names.py checks that every module-level name of generated/*/*.py, and every local name of
the functions that import a user object, is in this set, so it cannot fall behind the templates.
"""

from __future__ import annotations

import builtins

# Modules and objects the scripts import (imports.py, plan*.py).
SCRIPT_IMPORTS = frozenset(
    {
        "Callback", "CheckpointConfig", "FixedLossScaleManager", "Lion", "LossMonitor", "Mixup", "Model", "ModelCheckpoint",
        "Path", "TimeMonitor", "amp", "argparse", "create_model", "ds", "fnmatch", "get_group_size", "get_rank",
        "init", "initializer", "json", "load_digits", "math", "ms", "nn", "np", "ops", "os", "sys", "text", "time",
        "transforms",
        "vision",
    }
)  # fmt: skip

# Functions and classes the templates define at module level.
SCRIPT_DEFINITIONS = frozenset(
    {
        "EarlyStop", "ExposeOptimizer", "JsonLines", "LeNet5", "MLP", "PeriodicEval", "StepLog",
        "StopAfterSteps", "TrainStep", "WithLossFp32", "accumulate", "build_eval_dataset",
        "build_gradient_processor", "build_loss", "build_lr", "build_metrics", "build_network",
        "build_optimizer", "build_train_dataset", "evaluate", "init_data_parallel", "load_digits_split",
        "log_path", "main", "make_synthetic", "parse_args", "reset", "save_checkpoint", "set_runtime",
        "to_json", "train",
        # the typed-plan templates (branch plan): harness helpers
        "EpochTimer", "LogLoss", "StepCounter", "check_trains", "current_lr", "report_epoch_time",
        "report_evaluation", "report_loss", "report_unfinished_window", "save_weights", "should_evaluate",
        "step_record",
        # fine-tuning (network.checkpoint, network.freeze)
        "freeze", "load_pretrained",
        # ema
        "EMA", "EmaUpdate",
        # optimizer.groups
        "decays", "param_group", "weight_decay_split",
        # --resume (issue 11)
        "ResumedBatches", "SaveResume", "StartAt", "find_resume_checkpoint", "load_resume_checkpoint",
        "resume_state", "resume_step_of", "save_resume_checkpoint", "skip_batches",
        "BestCheckpoints", "KeepBest",
        # data.inputs (issue 10: named columns)
        "WithEvalColumns", "WithLossColumns",
    }
)  # fmt: skip

# Module-level constants (plan's literals): the YAML values the scripts name.
SCRIPT_CONSTANTS = frozenset(
    {
        "ACCUMULATION_STEPS", "CHECKPOINT_DIR", "CHECKPOINT_EVERY_EPOCHS", "CHECKPOINT_EVERY_STEPS",
        "CHECKPOINT_KEEP_MAX", "CHECKPOINT_PREFIX", "CLIP_VALUE", "EARLY_STOP_MIN_DELTA",
        "EARLY_STOP_MODE", "EARLY_STOP_MONITOR", "EARLY_STOP_PATIENCE", "EPOCHS", "EVAL_EVERY_EPOCHS",
        "GAMMA", "GRADIENTS_MEAN", "LOG_EVERY_STEPS", "LOSS_SCALE", "LOSS_SCALE_FACTOR",
        "LOSS_SCALE_WINDOW", "DIV_FACTOR", "END_LR", "FINAL_DIV_FACTOR", "LR", "MAX_NORM", "PCT_START", "POWER", "MILESTONES", "MIN_LR", "OUTPUT_DIR", "PARAM_GROUPS", "SEED",
        "SINK_SIZE", "BEST_KEEP", "BEST_MONITOR", "WARMUP_EPOCHS", "WARMUP_START_LR", "WEIGHT_DECAY", "WORKERS", "DEVICE", "DEVICE_NOTES",
        "EMA_DECAY", "EMA_WARMUP_STEPS", "FREEZE", "PRETRAINED_CHECKPOINT", "PRETRAINED_SKIP", "PRETRAINED_STRICT",
    }
)  # fmt: skip

# Local names of the functions that import a user object (build_network, build_*_dataset,
# build_metrics, build_gradient_processor): the import would make them the user's object there.
HOST_LOCALS = frozenset(
    {
        "network", "dataset", "path", "image_ops", "label_ops", "images", "labels", "num_shards", "shard_id",
        "cell", "process_gradients", "grads", "weights", "_", "__file__",
    }
)  # fmt: skip

# Names train(), evaluate() and the train/eval cells give their own values: a column (data.inputs,
# data.labels) names a loop variable and a cell argument there, so it must not take one of these.
# tests/test_names.py checks this set against the generated scripts.
COLUMN_LOCALS = frozenset(
    {
        "_", "args", "average", "batches", "callbacks", "checkpoint_config", "checkpoint_dir", "checkpoint_every",
        "dataset", "decay", "directory", "done", "early_stop", "ema", "epoch", "epoch_start", "eval_dataset",
        "eval_log", "eval_net", "every", "finite", "grads", "group_size", "iterator", "learning_rate", "logits",
        "loss", "loss_fn", "loss_log", "loss_scale", "lr", "metric", "metrics", "model", "name", "network",
        "optimizer", "overflow", "rank", "results", "resume_dir", "resume_params", "resume_saved",
        "save_checkpoints", "save_resume", "saved_checkpoints", "self", "start_epoch", "start_step",
        "start_step_in_epoch", "step", "step_counter", "step_in_epoch", "steps_per_epoch", "stop",
        "train_dataset", "train_step", "updates", "weight", "x",
    }
)  # fmt: skip

SCRIPT_NAMES = SCRIPT_IMPORTS | SCRIPT_DEFINITIONS | SCRIPT_CONSTANTS | HOST_LOCALS
BUILTIN_NAMES = frozenset(name for name in dir(builtins) if not name.startswith("_"))
RESERVED_NAMES = SCRIPT_NAMES | BUILTIN_NAMES


def collision(name: str) -> str | None:
    """Why `name` (already NFKC-normalized) cannot name a user object in the scripts, or None."""
    if name in SCRIPT_NAMES:
        return f"{name!r} is a name the generated scripts use themselves; rename your object"
    if name in BUILTIN_NAMES:
        return f"{name!r} would shadow Python's builtin {name}() in the generated scripts; rename your object"
    return None


def column_collision(name: str) -> str | None:
    """Why `name` cannot name a column (a loop variable and cell argument in the scripts), or None."""
    if name in COLUMN_LOCALS or name in SCRIPT_NAMES:
        return f"{name!r} is a name the generated training code uses itself; rename the column"
    if name in BUILTIN_NAMES:
        return f"{name!r} would shadow Python's builtin {name} in the generated scripts; rename the column"
    return None
