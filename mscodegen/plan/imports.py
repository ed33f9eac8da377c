"""The import block of a generated script, as typed records that follow from the plan's facts.

A plan names what its script needs (`needs`: need -> on); IMPORTS says what each need imports.
render/imports.py prints and sorts the records (isort's layout).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mscodegen.catalog import mindcv_augment
from mscodegen.plan.data import DatasetFn


@dataclass(frozen=True, slots=True, order=True)
class Import:
    """`import module [as alias]`, or with a name `from module import name [as alias]`."""

    module: str
    name: str = ""
    alias: str = ""


def _from(module: str, *names: str) -> tuple[Import, ...]:
    return tuple(Import(module, name) for name in names)


IMPORTS: dict[str, tuple[Import, ...]] = {
    # every script: the CLI and its paths; sys.exit and errno.ENOSPC, the one-line errors for faults
    # of the environment; MindSpore
    "script": (Import("argparse"), Import("errno"), Import("sys"), *_from("pathlib", "Path"))
    + (Import("mindspore", alias="ms"), *_from("mindspore", "nn")),
    "math": (Import("math"),),  # the NaN guard: math.isfinite
    "os": (Import("os"),),  # os.cpu_count(), os.environ
    "time": (Import("time"),),
    "fnmatch": (Import("fnmatch"),),
    "re": (Import("re"),),  # a data error's file
    "numpy": (Import("numpy", alias="np"),),
    "dataset": (Import("mindspore", "dataset", "ds"),),
    "vision": _from("mindspore.dataset", "vision"),
    "sample_grid": _from("mindspore.dataset", "vision"),  # a GAN's samples: vision.write_png
    "transforms": _from("mindspore.dataset", "transforms"),
    "text": _from("mindspore.dataset", "text"),
    "load_digits": _from("sklearn.datasets", "load_digits"),
    "mixup": _from("mindcv.data.mixup", "Mixup"),
    "repeat_aug_sampler": _from("mindcv.data.distributed_sampler", "RepeatAugSampler"),
    # mindcv.auto_augment: the mindcv function its policy names
    **{f: _from(mindcv_augment.MODULE, f) for f in sorted(set(mindcv_augment.FUNCTIONS.values()))},
    "initializer": _from("mindspore.common", "initializer"),
    "create_model": _from("mindcv.models", "create_model"),
    "ops": _from("mindspore", "ops"),
    "amp": _from("mindspore", "amp"),
    "parallel": (Import("os"), *_from("mindspore.communication", "get_group_size", "get_rank", "init")),
    "model": _from("mindspore", "Model") + _from("mindspore.train", "Callback"),  # mindspore.train.Model
    "loss_monitor": _from("mindspore.train", "LossMonitor"),
    "time_monitor": _from("mindspore.train", "TimeMonitor"),
    "fixed_loss_scale": _from("mindspore.amp", "FixedLossScaleManager"),
    # the native loop calls ModelCheckpoint (checkpoints.py's) as Model would
    "run_context": _from("mindspore.train", "RunContext"),
    # checkpoints.py: ModelCheckpoint; RUN_ID, when the run started and its process; --resume's files
    "checkpoints_module": (Import("os"), Import("time")),
    "checkpoint": _from("mindspore.train", "CheckpointConfig", "ModelCheckpoint"),
    # callbacks.checkpoint.keep_max_by: RankedCheckpoints saves with ms.save_checkpoint
    "ranked_checkpoints": (Import("mindspore", alias="ms"), *_from("mindspore.train", "Callback")),
    "resume": (Import("sys"), *_from("pathlib", "Path"), Import("mindspore", alias="ms")),
    # predict.py: its CLI; the arrays it reads, predicts and writes; Model for --evaluate
    "predict": (Import("argparse"), Import("sys"), *_from("pathlib", "Path"), Import("mindspore", alias="ms"))
    + (Import("numpy", alias="np"),),
    "csv": (Import("csv"),),  # --output
    "pil_image": _from("PIL", "Image"),
    "nn": _from("mindspore", "nn"),
    "eval_model": _from("mindspore", "Model"),
}


def data_needs(functions: Sequence[DatasetFn], helpers: Sequence[str], resumable: bool) -> dict[str, bool]:
    """What the dataset functions and the data helpers import (--resume skips batches with ds)."""
    modules = {m for f in functions for m in f.modules}
    steps = {s.kind for f in functions for s in f.steps}  # Sampler: an imported factory's dataset sharded
    return {
        "dataset": any(not f.factory for f in functions) or "Sampler" in steps or resumable,
        "os": "Workers" in steps,
        "re": "unreadable_file" in helpers,
        "load_digits": "digits" in helpers,
        "vision": "vision" in modules,
        "transforms": "LabelCast" in steps or "transforms" in modules,
        "text": "text" in modules,
        "mixup": "mindcv" in modules,
        # data.train.aug_repeats: the source reads through mindcv's RepeatAugSampler
        "repeat_aug_sampler": any(getattr(s, "names", "") == "sampler" for f in functions for s in f.steps),
        **{f: f in modules for f in sorted(set(mindcv_augment.FUNCTIONS.values()))},
    }


def imports(needs: Mapping[str, bool], *names: tuple[str, str]) -> tuple[Import, ...]:
    """The records of the needs that are on, and `from module import name` for each of names."""
    found = {i for need, on in needs.items() if on for i in IMPORTS[need]}
    return tuple(sorted(found | {Import(module, name) for module, name in names}))
