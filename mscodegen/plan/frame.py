"""Frame: what every script prints around its network(s), for one network (Shared) or two (GanShared)."""

from __future__ import annotations

from dataclasses import dataclass

from mscodegen.plan.data import DatasetFn, DatasetUse
from mscodegen.plan.loop import Checkpoint, Constant, Header
from mscodegen.plan.setup import Runtime
from mscodegen.plan.step import Amp, Parallel


@dataclass(frozen=True, slots=True)
class Frame:
    """The header, the constants, the runtime, the data, amp, data parallelism, checkpoints, monitors."""

    header: Header
    constants: tuple[tuple[Constant, ...], ...]
    runtime: Runtime
    data_helpers: tuple[str, ...]  # "digits", "synthetic": numpy loaders; csv cell conversions; defined once
    sys_paths: tuple[tuple[str, tuple[str, ...]], ...]  # (folder from the script, modules imported from it)
    data_dir: str | None  # DATA_DIR: the folder the file sources read, from the script's folder (or absolute)
    data_dir_keys: str  # the keys DATA_DIR comes from: data.train.path, data.eval.path
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
        """checkpoint_callback's parameters: the folder, the step it resumes at, the steps of an epoch."""
        every_epochs = self.checkpoint is not None and self.checkpoint.unit == "epochs"
        return (
            "output_dir",
            *(("start_step",) if self.resumable else ()),
            *(("steps_per_epoch",) if every_epochs else ()),
        )

    @property
    def output_dir_help(self) -> str:
        """What --output-dir holds (the scripts have the option when it holds something)."""
        return "checkpoints" if self.checkpoint else ""

    @property
    def has_output_dir(self) -> bool:
        return bool(self.output_dir_help)
