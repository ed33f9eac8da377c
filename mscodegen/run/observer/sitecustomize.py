"""Records a generated training script's steps from outside it, for `mscodegen parity`.

Python imports this module at start-up when its folder is on PYTHONPATH (mscodegen.run.observer.
observed_env puts it there). It acts only in the process that runs the script named by
MSCODEGEN_OBSERVE_SCRIPT (not in msrun's launcher, not in dataset workers), and writes JSON lines to
the folder MSCODEGEN_OBSERVE names:

- loss.jsonl: one record per call of a train cell (a Cell with an `optimizer`, in training mode):
  the loss it returned, the learning rate the optimizer applied in that update (read before the call
  with nn.Optimizer's side-effect-free get_lr), and the loss scale and overflow flag when the cell
  returns them (loss, overflow, scale) as MindSpore's loss-scale cells do;
- eval.jsonl: one record per "Eval result: epoch N, metrics: {...}" line the script prints (Model.fit's
  LossMonitor prints it; the native loop prints the same line).

A GAN script updates two networks without a train cell in its native loop: there each printed loss
line ("epoch: E step: S, d_loss is X, g_loss is Y[, d_loss_scale is ...]", every step when parity asks
with --log-every-steps 1) is a step's record, with the learning rate each optimizer holds for its next
update, named by its state's prefix (d_optimizer.global_step: d_lr).

Under msrun every rank writes its own files (loss.rank<N>.jsonl). The step numbers continue from the
step a resumed run starts at (Dataset.set_init_step). This file imports nothing of mscodegen, so it
works in any interpreter that has MindSpore (parity --python). Why a start-up hook and not runpy: msrun
starts the workers itself, and a hook in every process it starts needs no change to the script or to
launch.sh.
"""

from __future__ import annotations

import os
import sys
from typing import Any


def train_optimizer(cell: Any) -> Any:
    """The optimizer of a train cell, else None. A train cell is a Cell in training mode that holds an
    nn.Optimizer as `optimizer`: Model's TrainOneStepCell, a native loop's step cell. The benchmark
    (bench/worker.py) times the calls this recognises."""
    from mindspore import nn

    optimizer = cell._cells.get("optimizer") if isinstance(getattr(cell, "_cells", None), dict) else None
    return optimizer if isinstance(optimizer, nn.Optimizer) and cell.training else None


def _observe(directory: str) -> None:
    import contextlib
    import json

    from mindspore import nn
    from mindspore.dataset import Dataset

    # what a metrics dict's repr holds besides literals: per-class arrays (numpy prints 8 digits), nan
    READABLE = {"array": lambda values, dtype=None: values, "nan": float("nan"), "inf": float("inf")}
    state: dict[str, Any] = {
        "step": 0,
        "steps_per_epoch": None,
        "dataset": None,
        "suffix": None,
        "cells": 0,
        "records": 0,
    }
    optimizers: list[Any] = []  # every optimizer made, for the GAN records

    def write(name: str, record: dict[str, Any]) -> None:
        if state["suffix"] is None:
            state["suffix"] = ""
            try:  # under msrun (data parallel): one file per rank
                from mindspore.communication import get_group_size, get_rank

                if get_group_size() > 1:
                    state["suffix"] = f".rank{get_rank()}"
            except (RuntimeError, ValueError):
                pass
        state["records"] += 1
        path = os.path.join(directory, f"{name}{state['suffix']}.jsonl")
        with open(path, "a", encoding="utf-8") as log:  # parity removes an older run's first
            print(json.dumps(record), file=log)

    def epoch() -> int | None:
        if state["steps_per_epoch"] is None and state["dataset"] is not None:
            state["steps_per_epoch"] = max(1, state["dataset"].get_dataset_size())
        return (state["step"] - 1) // state["steps_per_epoch"] + 1 if state["steps_per_epoch"] else None

    def floats(value: Any) -> Any:
        value = value.asnumpy().tolist() if hasattr(value, "asnumpy") else value
        return [floats(v) for v in value] if isinstance(value, (list, tuple)) else float(value)

    cell_call = nn.Cell.__call__

    def observed_call(cell: Any, *args: Any, **kwargs: Any) -> Any:
        optimizer = train_optimizer(cell)
        if optimizer is None:
            return cell_call(cell, *args, **kwargs)
        lr = floats(nn.Optimizer.get_lr(optimizer))  # what this update applies
        outputs = cell_call(cell, *args, **kwargs)
        state["step"] += 1
        state["cells"] += 1
        record: dict[str, Any] = {"step": state["step"], "epoch": epoch()}
        if isinstance(outputs, tuple) and len(outputs) == 3:  # (loss, overflow, loss scale)
            loss, overflow, scale = (floats(value) for value in outputs)
            record.update(loss=loss, lr=lr, loss_scale=scale, overflow=bool(overflow))
        else:
            loss = outputs[0] if isinstance(outputs, tuple) else outputs
            record.update(loss=floats(loss), lr=lr)
        write("loss", record)
        return outputs

    nn.Cell.__call__ = observed_call
    optimizer_init = nn.Optimizer.__init__

    def observed_optimizer_init(optimizer: Any, *args: Any, **kwargs: Any) -> None:
        optimizer_init(optimizer, *args, **kwargs)
        optimizers.append(optimizer)

    nn.Optimizer.__init__ = observed_optimizer_init

    def loss_line(line: str) -> None:
        """A GAN's printed losses as a step's record (scripts with a train cell are recorded above)."""
        head, _, values = line.partition(", ")
        pairs = [value.split(" is ") for value in values.split(", ")]
        if state["cells"] or not head.startswith("epoch: ") or any(len(pair) != 2 for pair in pairs):
            return
        state["step"] += 1
        record: dict[str, Any] = {"step": state["step"], "epoch": int(head.split()[1])}
        record.update((name, float(value)) for name, value in pairs)
        for optimizer in optimizers:
            prefix = optimizer.global_step.name.rpartition("global_step")[0].replace("optimizer.", "")
            record[f"{prefix}lr"] = floats(nn.Optimizer.get_lr(optimizer))
        write("loss", record)

    def remember(create: Any) -> Any:
        def create_iterator(dataset: Any, *args: Any, **kwargs: Any) -> Any:
            if not state["records"]:  # the last one made before the first step is the training data
                state["dataset"] = dataset
            return create(dataset, *args, **kwargs)

        return create_iterator

    Dataset.create_tuple_iterator = remember(Dataset.create_tuple_iterator)
    Dataset.create_dict_iterator = remember(Dataset.create_dict_iterator)
    set_init_step = Dataset.set_init_step

    def observed_set_init_step(dataset: Any, init_step: int) -> Any:
        state["step"] = init_step  # --resume: the run goes on from that step
        return set_init_step(dataset, init_step)

    Dataset.set_init_step = observed_set_init_step

    class Console:
        """sys.stdout as it was, reading the evaluation lines that pass through it."""

        def __init__(self, stream: Any) -> None:
            self.stream, self.line = stream, ""

        def write(self, text: str) -> int:
            self.line += text
            *lines, self.line = self.line.split("\n")
            for line in lines:
                if " is " in line:
                    loss_line(line)
                if line.startswith("Eval result: epoch "):
                    number, _, printed = line[len("Eval result: epoch ") :].partition(", metrics: ")
                    metrics: Any = printed  # compared as printed unless Python can read it
                    with contextlib.suppress(Exception):  # numpy's repr: array([...]), nan
                        metrics = eval(printed, {"__builtins__": {}}, READABLE)  # noqa: S307
                    write("eval", {"epoch": int(number), "step": state["step"], "metrics": metrics})
            return int(self.stream.write(text))

        def __getattr__(self, name: str) -> Any:
            return getattr(self.stream, name)

    sys.stdout = Console(sys.stdout)


if (
    os.environ.get("MSCODEGEN_OBSERVE")
    and sys.argv
    and os.path.basename(sys.argv[0]) == os.environ.get("MSCODEGEN_OBSERVE_SCRIPT")
):
    _observe(os.environ["MSCODEGEN_OBSERVE"])
