"""One measurement in a fresh process: `python -m bench.worker KIND SCRIPT STEPS OUT_JSON [--profile]`
(`--profile`: MindSpore's per-op-type table of the steps after the first PROFILE_FROM, see OpProfile).

The scripts are observed from outside. Nothing in them is called but their command line: the worker
runs SCRIPT as `python SCRIPT --epochs STEPS [--max-steps STEPS]` would (`runpy.run_path`, run name
`__main__`, `sys.argv` set; a flag is passed only if the script's text has it), after patching
`mindspore.nn.Cell.__call__`. A *train cell* is a Cell in training mode whose `optimizer` attribute is
an `nn.Optimizer`: Model's TrainOneStepCell, a native loop's own step cell. Each call of one is
timestamped (begin, return) and its loss kept (the output, or the first item of a tuple). The call
after the STEPS-th raises StepLimit, which ends the script if it has no `--max-steps`.

KIND   model / native / reference -> SCRIPT as it runs (its own dataset, loop or Model, callbacks).
       floor  -> the fastest hand-written step: SCRIPT runs with its train cell's calls replaced
                 (nothing is trained; each call returns a zero loss) until STEPS batches are
                 recorded; then `nn.TrainOneStepCell(net_with_loss, optimizer)`, built from the
                 captured train cell's own net-with-loss and optimizer (freshly initialised, never
                 called), runs in a bare loop on those batches held in memory.
       mindcv / mindcv-nosummary -> the peer: mindcv's engine as its train.py drives it
                 (create_model, create_loss, create_optimizer, create_scheduler, create_trainer
                 and its StateMonitor callback) on the same network name and the batches the
                 floor records, from an in-memory NumpySlicesDataset; "-nosummary" replaces
                 StateMonitor's SummaryRecord writer with a no-op.

On CPU a GRAPH-mode call returns after the step ran (checked with a final sync, tail_sync_s), so
the timestamps are step times, not dispatch times. A step's time splits into "call" (the train
cell, its call to its return) and "host" (the rest of the gap to the next return: the loop, the
dataset fetch, callbacks, logging).
"""

from __future__ import annotations

import csv
import json
import os
import resource
import runpy
import sys
import time
from collections.abc import Callable
from pathlib import Path

T_START = time.perf_counter()
SCRIPT_KINDS = ("model", "native", "reference")


class StepLimit(BaseException):  # noqa: N818  (not an error: the end of a measured run)
    """Raised by the hook at the call after the last measured step: ends a script that runs on."""


class Recorder:
    """One run's train-cell calls: begin and return timestamps, and the losses (kept as returned,
    read after the run so that reading them adds no sync to a step)."""

    def __init__(self) -> None:
        self.begins: list[float] = []
        self.call_ends: list[float] = []
        self.outputs: list = []
        self.on_end: Callable[[int], None] | None = None  # called with the number of steps ended

    def begin(self) -> None:
        self.begins.append(time.perf_counter())

    def end(self, output) -> None:  # noqa: ANN001
        self.call_ends.append(time.perf_counter())
        self.outputs.append(output)
        if self.on_end is not None:
            self.on_end(len(self.call_ends))

    def timestamps(self) -> dict:
        # a step "ends" when its train cell returns: the gap between two returns is one step
        return {"begins": self.begins, "ends": self.call_ends, "call_ends": self.call_ends}

    def losses(self) -> list[float]:
        return [loss_value(out) for out in self.outputs]


def loss_value(output) -> float:  # noqa: ANN001
    """A train cell's loss as a Python float (exact for float32 and float16): the output Tensor, or
    the first item of a tuple (a loss-scaling cell returns (loss, overflow, scale))."""
    if isinstance(output, (tuple, list)):
        output = output[0]
    value = output.asnumpy() if hasattr(output, "asnumpy") else output
    return float(value.item() if hasattr(value, "item") else value)


def is_train_cell(cell) -> bool:  # noqa: ANN001
    """The observer's definition (mscodegen/run/observer): what parity records is what is timed."""
    from mscodegen.run.observer.sitecustomize import train_optimizer

    return train_optimizer(cell) is not None


def install_hook(on_train_call: Callable) -> Callable[[], None]:
    """Route every call of a train cell through on_train_call(cell, real_call, args, kwargs);
    other cells are called as before. Returns the function that removes the hook."""
    from mindspore import nn

    real_call = nn.Cell.__call__

    def __call__(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202, N807
        if is_train_cell(self):
            return on_train_call(self, real_call, args, kwargs)
        return real_call(self, *args, **kwargs)

    nn.Cell.__call__ = __call__

    def remove() -> None:
        nn.Cell.__call__ = real_call

    return remove


def script_argv(script: Path, steps: int, data_dir: str | None = None) -> list[str]:
    """The command line a run gets: only flags the script's text names. `--epochs STEPS` is always
    enough epochs (an epoch has at least one step); `--max-steps` stops the script itself, and
    without it StepLimit does."""
    text = script.read_text(encoding="utf-8")
    argv = [str(script)]
    if '"--epochs"' in text:
        argv += ["--epochs", str(steps)]
    if '"--max-steps"' in text:
        argv += ["--max-steps", str(steps)]
    if '"--device"' in text:
        argv += ["--device", "CPU"]
    if data_dir and '"--data-dir"' in text:
        argv += ["--data-dir", data_dir]
    return argv


def run_script(script: Path, argv: list[str]) -> str:
    """SCRIPT as `python SCRIPT ARGS` runs it; returns how it ended: "exit" (its end, or
    sys.exit(0)), "step limit" (StepLimit). Any other exit is raised."""
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = argv
    sys.path.insert(0, str(script.parent))
    try:
        runpy.run_path(str(script), run_name="__main__")
    except StepLimit:
        return "step limit"
    except SystemExit as exc:
        if exc.code not in (None, 0):
            raise RuntimeError(f"{script.name} exited: {exc.code}") from exc
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    return "exit"


def time_script(script: Path, steps: int, rec: Recorder, data_dir: str | None = None) -> str:
    """model / native / reference: the script as it runs, each train-cell call timed."""

    def on_train_call(cell, real_call, args, kwargs):  # noqa: ANN001, ANN202
        if len(rec.call_ends) >= steps:
            raise StepLimit
        rec.begin()
        out = real_call(cell, *args, **kwargs)
        rec.end(out)
        return out

    remove = install_hook(on_train_call)
    try:
        return run_script(script, script_argv(script, steps, data_dir))
    finally:
        remove()


def capture(script: Path, steps: int, data_dir: str | None = None) -> tuple:
    """The script's train cell (never called) and the first `steps` batches it would train on, in
    its own order: its train cell's calls return a zero loss instead of training."""
    import mindspore as ms
    import numpy as np

    found: dict = {"cell": None, "batches": []}

    def on_train_call(cell, real_call, args, kwargs):  # noqa: ANN001, ANN202, ARG001
        if found["cell"] is None:
            found["cell"] = cell
        if len(found["batches"]) >= steps:
            raise StepLimit
        found["batches"].append(tuple(args))
        return ms.Tensor(np.float32(0.0))

    remove = install_hook(on_train_call)
    try:
        run_script(script, script_argv(script, steps, data_dir))
    finally:
        remove()
    if found["cell"] is None:
        raise RuntimeError(f"{script.name} called no train cell")
    return found["cell"], found["batches"]


def net_with_loss(cell):  # noqa: ANN001, ANN201
    """A train cell's network-with-loss: TrainOneStepCell's `network`, or its one child cell that
    is not the optimizer."""
    if getattr(cell, "network", None) is not None:
        return cell.network
    children = [c for c in cell.cells() if c is not cell.optimizer]
    if len(children) != 1:
        raise RuntimeError(f"{type(cell).__name__}: {len(children)} child cells beside the optimizer")
    return children[0]


def floor(script: Path, steps: int, rec: Recorder, data_dir: str | None = None) -> float:
    """The hand-written floor on the script's first `steps` batches; returns the final sync's s."""
    from mindspore import nn

    cell, batches = capture(script, steps, data_dir)
    sens = getattr(cell, "sens", 1.0)
    step = nn.TrainOneStepCell(net_with_loss(cell), cell.optimizer, sens=sens)
    step.set_train()
    loss = None
    for batch in batches:
        rec.begin()
        loss = step(*batch)
        rec.end(loss)
    t0 = time.perf_counter()
    loss_value(loss)
    return time.perf_counter() - t0


def _in_memory_dataset(batches):  # noqa: ANN001, ANN202
    """Ready batches as a dataset whose every element is one batch (no shuffle, map or batch)."""
    import numpy as np
    from mindspore import dataset as ds

    images = np.stack([b[0].asnumpy() for b in batches])
    labels = np.stack([b[1].asnumpy() for b in batches])
    return ds.NumpySlicesDataset({"image": images, "label": labels}, shuffle=False)


PROFILE_FROM = 5  # steps ended before MindSpore's profiler starts (compile and warm-up left out)


class OpProfile:
    """MindSpore's profiler (CPU activity) over a run's steps after the first PROFILE_FROM; the
    result is its per-op-type table (FRAMEWORK/cpu_op_type_info_0.csv) as ms per profiled step.
    Made at the PROFILE_FROM-th step's end, when the script has set its context."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.profiler = None
        self.started_at = 0

    def on_end(self, ended: int) -> None:
        if ended == PROFILE_FROM:
            import mindspore as ms
            from mindspore.profiler import ProfilerActivity

            self.profiler = ms.Profiler(
                output_path=str(self.directory), start_profile=False, activities=[ProfilerActivity.CPU]
            )
            self.profiler.start()
            self.started_at = ended

    def table(self, ended: int) -> dict:
        self.profiler.stop()
        self.profiler.analyse()
        steps = ended - self.started_at
        (table,) = self.directory.rglob("cpu_op_type_info_0.csv")
        rows = list(csv.DictReader(table.read_text().splitlines()))
        ops = {
            row["op_type"]: {
                "ms_per_step": float(row["total_compute_time"]) / steps,
                "calls_per_step": int(row["type_occurrences"]) / steps,
            }
            for row in rows
        }
        return {"profiled_steps": steps, "ops": ops}


def run(kind: str, script: Path, steps: int, *, profile: bool = False, data_dir: str | None = None) -> dict:
    import mindspore as ms

    t_imported = time.perf_counter()
    rec = Recorder()
    op_profile = OpProfile(Path.cwd() / f"profile-{kind}") if profile else None
    if op_profile is not None:
        rec.on_end = op_profile.on_end
    tail_sync = 0.0
    ended = "exit"
    t_setup = time.perf_counter()
    if kind == "floor":
        tail_sync = floor(script, steps, rec, data_dir)
    elif kind.startswith("mindcv"):
        t_setup, tail_sync = _run_mindcv(script, kind, steps, rec, data_dir)
    elif kind in SCRIPT_KINDS:
        ended = time_script(script, steps, rec, data_dir)
    else:
        raise SystemExit(f"unknown kind: {kind}")
    t_end = time.perf_counter()
    ops = op_profile.table(len(rec.call_ends)) if op_profile is not None else None
    self_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    child_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    ends, begins = rec.call_ends, rec.begins
    return {
        "kind": kind,
        "script": str(script),
        "argv": script_argv(script, steps, data_dir)[1:],
        "ended_by": ended,
        "steps": len(ends),
        **rec.timestamps(),
        "losses": rec.losses() if not kind.startswith("mindcv") else [],
        "import_s": t_imported - T_START,
        "setup_to_first_step_end_s": ends[0] - t_setup if ends else None,
        "first_step_s": ends[0] - begins[0] if ends else None,
        "total_s": t_end - T_START,
        "tail_sync_s": tail_sync,
        "peak_rss_mb": max(self_rss, child_rss) / 1024,
        "mindspore": ms.__version__,
        **({"op_profile": ops} if ops is not None else {}),
    }


def _run_mindcv(script: Path, kind: str, steps: int, rec: Recorder, data_dir: str | None):  # noqa: ANN202
    """mindcv's train.py engine on the script's network name and batches; returns (t_setup, tail_sync)."""
    from mindcv.loss import create_loss
    from mindcv.models import create_model
    from mindcv.optim import create_optimizer
    from mindcv.scheduler import create_scheduler
    from mindcv.utils import callbacks as mindcv_callbacks
    from mindcv.utils.trainer_factory import create_trainer
    from mindspore.train import Callback

    if kind == "mindcv-nosummary":

        class NoSummary:
            def __init__(self, *args, **kwargs):  # noqa: ANN002, ANN003
                pass

            def add_value(self, *args, **kwargs):  # noqa: ANN002, ANN003
                pass

            def record(self, *args, **kwargs):  # noqa: ANN002, ANN003
                pass

            def close(self):
                pass

        mindcv_callbacks.SummaryRecord = NoSummary

    _, batches = capture(script, steps, data_dir)  # also sets the script's context and seed
    spec = json.loads((script.parent / "bench.json").read_text())
    dataset = _in_memory_dataset(batches)
    network = create_model(spec["mindcv_model"], num_classes=spec["num_classes"], pretrained=False)
    loss = create_loss(name="CE", reduction="mean", label_smoothing=0.0)
    lr = create_scheduler(steps, scheduler="constant", lr=spec["lr"], warmup_epochs=0, num_epochs=1)
    optimizer = create_optimizer(
        network.trainable_params(), opt="momentum", lr=lr, momentum=0.9, weight_decay_filter="disable"
    )
    trainer = create_trainer(
        network,
        loss,
        optimizer,
        metrics={"accuracy"},
        amp_level=spec["amp_level"],
        amp_cast_list=None,
        loss_scale_type="fixed",
        loss_scale=1.0,
    )
    out = Path.cwd() / f"out-{kind}"
    state = mindcv_callbacks.StateMonitor(
        trainer,
        model_name=spec["mindcv_model"],
        dataset_sink_mode=False,
        ckpt_save_dir=str(out),
        summary_dir=str(out / "summary"),
        log_interval=100,
        metric_name=("accuracy",),
    )

    class StepTimer(Callback):
        def on_train_step_begin(self, run_context):  # noqa: ANN001, ARG002
            rec.begin()

        def on_train_step_end(self, run_context):  # noqa: ANN001
            rec.end(None)
            if len(rec.call_ends) >= steps:
                run_context.request_stop()

    t_setup = time.perf_counter()
    trainer.train(1, dataset, callbacks=[state, StepTimer()], dataset_sink_mode=False)
    return t_setup, 0.0


def main() -> None:
    kind, script, steps, out = sys.argv[1:5]
    rest = sys.argv[5:]
    data_dir = rest[rest.index("--data-dir") + 1] if "--data-dir" in rest else None
    result = run(kind, Path(script).resolve(), int(steps), profile="--profile" in rest, data_dir=data_dir)
    Path(out).write_text(json.dumps(result))
    sys.stdout.flush()
    # a script stopped by StepLimit may leave dataset threads behind: the result is written, leave now
    os._exit(0)


if __name__ == "__main__":
    main()
