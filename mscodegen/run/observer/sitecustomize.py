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
  LossMonitor prints it; the native loop prints the same line), or per "Eval result: step N, metrics:
  {...}" line (eval.every_steps: N is the optimizer step, which the record keeps as its step).

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

import contextlib
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


def _floats(value: Any) -> Any:
    value = value.asnumpy().tolist() if hasattr(value, "asnumpy") else value
    return [_floats(v) for v in value] if isinstance(value, (list, tuple)) else float(value)


class _Recorder:
    """The records of one run: the step count, the training data (for the epoch), the files."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.step = self.cells = self.records = 0
        self.steps_per_epoch: int | None = None
        self.dataset: Any = None
        self.suffix: str | None = None
        self.optimizers: list[Any] = []  # every optimizer made, for the GAN records

    def write(self, name: str, record: dict[str, Any]) -> None:
        import json

        if self.suffix is None:
            self.suffix = ""  # under msrun (data parallel): one file per rank
            with contextlib.suppress(RuntimeError, ValueError):
                from mindspore.communication import get_group_size, get_rank

                if get_group_size() > 1:
                    self.suffix = f".rank{get_rank()}"
        self.records += 1
        path = os.path.join(self.directory, f"{name}{self.suffix}.jsonl")
        with open(path, "a", encoding="utf-8") as log:  # parity removes an older run's first
            print(json.dumps(record), file=log)

    def epoch(self) -> int | None:
        if self.steps_per_epoch is None and self.dataset is not None:
            self.steps_per_epoch = max(1, self.dataset.get_dataset_size())
        return (self.step - 1) // self.steps_per_epoch + 1 if self.steps_per_epoch else None

    def cell_step(self, lr: Any, outputs: Any) -> None:
        """A train cell's call returned `outputs`, applying `lr`."""
        self.step += 1
        self.cells += 1
        record: dict[str, Any] = {"step": self.step, "epoch": self.epoch()}
        if isinstance(outputs, tuple) and len(outputs) == 3:  # (loss, overflow, loss scale)
            loss, overflow, scale = (_floats(value) for value in outputs)
            record.update(loss=loss, lr=lr, loss_scale=scale, overflow=bool(overflow))
        else:
            loss = outputs[0] if isinstance(outputs, tuple) else outputs
            record.update(loss=_floats(loss), lr=lr)
        self.write("loss", record)

    def loss_line(self, line: str) -> None:
        """A GAN's printed losses as a step's record (scripts with a train cell are recorded above)."""
        from mindspore import nn

        head, _, values = line.partition(", ")
        pairs = [value.split(" is ") for value in values.split(", ")]
        if self.cells or not head.startswith("epoch: ") or any(len(pair) != 2 for pair in pairs):
            return
        self.step += 1
        record: dict[str, Any] = {"step": self.step, "epoch": int(head.split()[1])}
        record.update((name, float(value)) for name, value in pairs)
        for optimizer in self.optimizers:
            prefix = optimizer.global_step.name.rpartition("global_step")[0].replace("optimizer.", "")
            record[f"{prefix}lr"] = _floats(nn.Optimizer.get_lr(optimizer))
        self.write("loss", record)

    def eval_line(self, line: str) -> None:
        unit, _, rest = line[len("Eval result: ") :].partition(" ")
        number, _, printed = rest.partition(", metrics: ")
        metrics: Any = printed  # compared as printed unless Python can read it
        with contextlib.suppress(Exception):  # numpy's repr: array([...]), nan
            metrics = eval(printed, {"__builtins__": {}}, _READABLE)  # noqa: S307
        if unit == "step":
            self.write("eval", {"epoch": self.epoch(), "step": int(number), "metrics": metrics})
        else:
            self.write("eval", {"epoch": int(number), "step": self.step, "metrics": metrics})


# what a metrics dict's repr holds besides literals: per-class arrays (numpy prints 8 digits), nan
_READABLE = {"array": lambda values, **_: values, "nan": float("nan"), "inf": float("inf")}


class _Console:
    """sys.stdout as it was, reading the loss and evaluation lines that pass through it."""

    def __init__(self, stream: Any, recorder: _Recorder) -> None:
        self.stream, self.recorder, self.line = stream, recorder, ""

    def write(self, text: str) -> int:
        self.line += text
        *lines, self.line = self.line.split("\n")
        for line in lines:
            if " is " in line:
                self.recorder.loss_line(line)
            if line.startswith(("Eval result: epoch ", "Eval result: step ")):
                self.recorder.eval_line(line)
        return int(self.stream.write(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def _observe(directory: str) -> None:
    from mindspore import nn
    from mindspore.dataset import Dataset

    recorder = _Recorder(directory)
    cell_call = nn.Cell.__call__

    def observed_call(cell: Any, *args: Any, **kwargs: Any) -> Any:
        optimizer = train_optimizer(cell)
        if optimizer is None:
            return cell_call(cell, *args, **kwargs)
        lr = _floats(nn.Optimizer.get_lr(optimizer))  # what this update applies
        outputs = cell_call(cell, *args, **kwargs)
        recorder.cell_step(lr, outputs)
        return outputs

    nn.Cell.__call__ = observed_call
    optimizer_init = nn.Optimizer.__init__

    def observed_optimizer_init(optimizer: Any, *args: Any, **kwargs: Any) -> None:
        optimizer_init(optimizer, *args, **kwargs)
        recorder.optimizers.append(optimizer)

    nn.Optimizer.__init__ = observed_optimizer_init

    def remember(create: Any) -> Any:
        def create_iterator(dataset: Any, *args: Any, **kwargs: Any) -> Any:
            if not recorder.records:  # the last one made before the first step is the training data
                recorder.dataset = dataset
            return create(dataset, *args, **kwargs)

        return create_iterator

    Dataset.create_tuple_iterator = remember(Dataset.create_tuple_iterator)
    Dataset.create_dict_iterator = remember(Dataset.create_dict_iterator)
    set_init_step = Dataset.set_init_step

    def observed_set_init_step(dataset: Any, init_step: int) -> Any:
        recorder.step = init_step  # --resume: the run goes on from that step
        return set_init_step(dataset, init_step)

    Dataset.set_init_step = observed_set_init_step
    sys.stdout = _Console(sys.stdout, recorder)


if (
    os.environ.get("MSCODEGEN_OBSERVE")
    and sys.argv
    and os.path.basename(sys.argv[0]) == os.environ.get("MSCODEGEN_OBSERVE_SCRIPT")
):
    _observe(os.environ["MSCODEGEN_OBSERVE"])
