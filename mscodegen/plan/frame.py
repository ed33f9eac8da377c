"""Frame: what every script prints around its network(s), for one network (Shared) or two (GanShared)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from mscodegen import __version__
from mscodegen.plan.data import DataPlan, DatasetFn, DatasetUse
from mscodegen.plan.imports import Import, data_needs, imports
from mscodegen.plan.loop import (
    CHECKPOINTS_CONSTANTS,
    Checkpoint,
    Constant,
    Header,
    build_checkpoint,
    resumable,
)
from mscodegen.plan.setup import Runtime, build_runtime
from mscodegen.plan.step import Amp, Parallel, build_amp, build_parallel
from mscodegen.schema import Config
from mscodegen.schema.gan import GanConfig


@dataclass(frozen=True, slots=True)
class Frame:
    """The header, the constants, the runtime, the data, amp, data parallelism, checkpoints, monitors."""

    header: Header
    constants: tuple[tuple[Constant, ...], ...]
    runtime: Runtime
    data_helpers: tuple[str, ...]  # "digits", "synthetic": numpy loaders; csv cell conversions; defined once
    sys_paths: tuple[tuple[str, tuple[str, ...]], ...]  # (folder from the script, modules imported from it)
    data_dir: str | None  # DATA_DIR: the folder the file sources read, from the script's folder (or absolute)
    dataset_functions: tuple[DatasetFn, ...]  # one shared by train and eval, or one each
    datasets: tuple[DatasetUse, ...]  # how train() makes them: train first, then eval if any
    amp: Amp
    parallel: Parallel | None
    checkpoint: Checkpoint | None
    resumable: bool  # callbacks.checkpoint.resumable: --resume, the step and config sha256 in checkpoints
    loss_monitor: bool  # callbacks.loss_monitor
    time_monitor: bool  # callbacks.time_monitor

    @property
    def checkpoint_params(self) -> tuple[str, ...]:
        """checkpoint_callback's parameters: the folder, the step it resumes at, the steps of an epoch,
        the batches of an optimizer step."""
        every_epochs = self.checkpoint is not None and self.checkpoint.unit == "epochs"
        accumulated = self.checkpoint is not None and self.checkpoint.accumulated
        return (
            "output_dir",
            *(("start_step",) if self.resumable else ()),
            *(("steps_per_epoch",) if every_epochs else ()),
            *(("accumulation_steps",) if accumulated else ()),
        )

    @property
    def script_constants(self) -> tuple[tuple[Constant, ...], ...]:
        """The constants at the top of the training scripts: all but checkpoints.py's."""
        groups = (tuple(c for c in group if c.name not in CHECKPOINTS_CONSTANTS) for group in self.constants)
        return tuple(group for group in groups if group)

    @property
    def checkpoints_constants(self) -> tuple[Constant, ...]:
        """checkpoints.py's constants (the config's hash, the run's id, callbacks.checkpoint's), in order."""
        return tuple(c for group in self.constants for c in group if c.name in CHECKPOINTS_CONSTANTS)

    @property
    def checkpoints_module_imports(self) -> tuple[Import, ...]:
        """checkpoints.py's own imports."""
        ranked = self.ranks_checkpoints
        return imports(
            {
                "checkpoints_module": True,
                "checkpoint": not ranked,
                "ranked_checkpoints": ranked,
                "resume": self.resumable,
            }
        )

    @property
    def ranks_checkpoints(self) -> bool:
        """callbacks.checkpoint.keep_max_by: RankedCheckpoints in place of ModelCheckpoint (not for a GAN)."""
        return False

    def checkpoints_imports(self, *, native: bool, keep_best: bool) -> tuple[str, ...]:
        """What a training script imports from checkpoints.py (none without callbacks.checkpoint)."""
        if self.checkpoint is None:
            return ()
        names = {
            "CHECKPOINT_DIR": keep_best,  # KeepBest writes beside the run's checkpoints
            "CHECKPOINT_PREFIX": keep_best,
            "RUN_ID": keep_best,
            "CallbackParams": native,
            "checkpoint_callback": not self.ranks_checkpoints,
            "RankedCheckpoints": self.ranks_checkpoints,
            "load_checkpoint": self.resumable,
        }
        return tuple(name for name, on in names.items() if on)

    def script_imports(
        self, needs: dict[str, bool], *names: tuple[str, str], native: bool, keep_best: bool = False
    ) -> tuple[Import, ...]:
        """A training script's imports: the frame's (data, CLI, data parallel, monitors, checkpoints), `needs`
        (the networks' and steps'), and `from module import name` for each of names."""
        frame = data_needs(self.dataset_functions, self.data_helpers, self.resumable) | {
            "script": True,
            "parallel": self.parallel is not None,
            "time": self.time_monitor and native,
            "model": not native,
            "time_monitor": self.time_monitor and not native,
            "run_context": native and self.checkpoint is not None,
        }
        local = [
            ("checkpoints", name) for name in self.checkpoints_imports(native=native, keep_best=keep_best)
        ]
        return imports(frame | needs, *names, *local)

    @property
    def output_dir_help(self) -> str:
        """What --output-dir holds (the scripts have the option when it holds something)."""
        return "checkpoints" if self.checkpoint else ""

    @property
    def has_output_dir(self) -> bool:
        return bool(self.output_dir_help)


class FrameFields(TypedDict):
    """The Frame's fields that frame_fields resolves (a TypedDict: mypy checks them where they are spread)."""

    header: Header
    runtime: Runtime
    data_helpers: tuple[str, ...]
    data_dir: str | None
    dataset_functions: tuple[DatasetFn, ...]
    datasets: tuple[DatasetUse, ...]
    amp: Amp
    parallel: Parallel | None
    checkpoint: Checkpoint | None
    resumable: bool
    loss_monitor: bool
    time_monitor: bool


def frame_fields(cfg: Config | GanConfig, data: DataPlan, *, name: str, source: str) -> FrameFields:
    """The Frame's fields that one network's config and a gan's resolve alike (not constants, sys_paths)."""
    return FrameFields(
        header=Header(name, source, __version__),
        runtime=build_runtime(cfg),
        data_helpers=data.helpers,
        data_dir=data.data_dir,
        dataset_functions=data.functions,
        datasets=data.uses,
        amp=build_amp(cfg),
        parallel=build_parallel(cfg),
        checkpoint=build_checkpoint(cfg),
        resumable=resumable(cfg),
        loss_monitor=cfg.callbacks.loss_monitor,
        time_monitor=cfg.callbacks.time_monitor,
    )
