"""One measurement in a fresh process: `python -m bench.worker SCRIPT_DIR KIND INPUT STEPS OUT_JSON`
(paired mode: `... SCRIPT_DIR paired BLOCK STEPS OUT_JSON`; `--profile` at the end adds MindSpore's
per-op-type table of the steps after the first PROFILE_FROM, see OpProfile).

KIND   model  -> the generated train_model.py's own train(), i.e. Model.train with its callbacks;
       native -> the generated train_native.py's own train(), i.e. its loop around TrainStep;
       floor  -> hand-written: GRAPH-mode nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
                 called in a bare loop (network, loss and optimizer from the script's functions).
INPUT  memory   -> batches made once by the script's build_train_dataset(), held in memory:
                   floor gets Tensors; model/native get an in-memory NumpySlicesDataset of the
                   ready batches (no shuffle/map/batch: the cheapest input Model can take).
       pipeline -> the script's build_train_dataset() as generated (workers, shuffle, batch).

       paired -> floor, model and native in one process, in turns of BLOCK steps (run_paired).
       mindcv / mindcv-nosummary -> the peer: mindcv's engine as its train.py drives it
                 (create_model, create_loss, create_optimizer, create_scheduler, create_trainer
                 and its StateMonitor callback) on the same network name and the same batches;
                 "-nosummary" replaces StateMonitor's SummaryRecord writer with a no-op.

Timestamps: model -> a callback appended after the script's callbacks (step begin/end) and one
put before them (its step end marks the train network's return); native -> a TrainStep subclass
recording around each call (the script's loop is unchanged); floor -> around each call. On CPU a
GRAPH-mode call returns after the step ran (checked with a final sync, recorded as tail_sync_s),
so these are step times, not dispatch times.

Each step's time splits into "call" (the compiled train cell: begin to the cell's return, recorded
as call_ends) and "host" (the rest: the loop, the dataset fetch, callbacks and logging). The
variants and the floor run the same network, loss and optimizer, so a difference in host time is
the cost of the harness itself, measured within one process and free of run-to-run noise.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import math
import resource
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

T_START = time.perf_counter()


def _load(path: Path):  # noqa: ANN202
    # MindSpore's GRAPH-mode parser imports the module of every construct() by name.
    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def _memory_batches(module, count: int) -> list:  # noqa: ANN001
    """`count` batches (numpy) from the script's own dataset, cycling through its first epoch."""
    dataset = module.build_train_dataset()
    first = [tuple(row) for row in dataset.create_tuple_iterator(output_numpy=True, num_epochs=1)]
    return [first[i % len(first)] for i in range(count)]


def _in_memory_dataset(batches):  # noqa: ANN001, ANN202
    import numpy as np
    from mindspore import dataset as ds

    images = np.stack([b[0] for b in batches])
    labels = np.stack([b[1] for b in batches])
    return ds.NumpySlicesDataset({"image": images, "label": labels}, shuffle=False)


def _epochs(iterator):  # noqa: ANN001, ANN202
    """Batches across epoch ends, as `for epoch ...: for batch in iterator` would give them."""
    while True:
        yield from iterator


class Recorder:
    """One kind's step timestamps. With a Baton, a step begins only on this kind's turn, and the
    turn passes on after every `block` steps (paired mode)."""

    def __init__(self, kind: str, baton: Baton | None = None) -> None:
        self.kind = kind
        self.baton = baton
        self.begins: list[float] = []
        self.ends: list[float] = []
        self.call_ends: list[float] = []  # model: the first step-end callback, right after the network
        self.on_end: Callable[[int], None] | None = None  # called with the number of steps ended

    def begin(self) -> None:
        if self.baton is not None:
            self.baton.wait(self.kind)
        self.begins.append(time.perf_counter())

    def call_end(self) -> None:
        self.call_ends.append(time.perf_counter())

    def end(self) -> None:
        self.ends.append(time.perf_counter())
        if self.on_end is not None:
            self.on_end(len(self.ends))
        if self.baton is not None and len(self.ends) % self.baton.block == 0:
            self.baton.pass_on(self.kind)

    def timestamps(self) -> dict:
        return {"begins": self.begins, "ends": self.ends, "call_ends": self.call_ends or self.ends}


class Baton:
    """Paired mode: the kinds take turns, `block` steps each, so that every block of one kind is
    measured next to a block of each other kind, seconds apart, in one process."""

    def __init__(self, order: list[str], block: int) -> None:
        self.order = order
        self.block = block
        self.turn = order[0]
        self.done: set[str] = set()
        self.cond = threading.Condition()

    def wait(self, kind: str) -> None:
        with self.cond:
            self.cond.wait_for(lambda: self.turn == kind)

    def pass_on(self, kind: str) -> None:
        with self.cond:
            at = self.order.index(kind)
            for i in range(1, len(self.order) + 1):
                nxt = self.order[(at + i) % len(self.order)]
                if nxt not in self.done:
                    break
            self.turn = nxt
            self.cond.notify_all()

    def finished(self, kind: str) -> None:
        with self.cond:
            self.done.add(kind)
        self.pass_on(kind)


def _floor(module, script_dir: Path, steps: int, batches: list | None, rec: Recorder) -> float:  # noqa: ANN001
    """The hand-written floor: TrainOneStepCell in a bare loop, on `batches` (memory input) or the
    script's dataset; returns the final sync's seconds."""
    import mindspore as ms
    from mindspore import amp, nn

    module.set_runtime()
    network = module.build_network()
    level = getattr(module, "AMP_LEVEL", None) or _amp_level_of(script_dir)
    if level != "O0":
        network = amp.auto_mixed_precision(network, level)  # casts the output back to float32
    optimizer = module.build_optimizer(network, _first_lr(module))
    step = nn.TrainOneStepCell(nn.WithLossCell(network, module.build_loss()), optimizer)
    step.set_train()
    if batches is not None:
        iterator = iter([(ms.Tensor(x), ms.Tensor(y)) for x, y in batches])
    else:
        iterator = _epochs(module.build_train_dataset().create_tuple_iterator(num_epochs=-1))
    loss = None
    for _ in range(steps):
        image, label = next(iterator)
        rec.begin()
        loss = step(image, label)
        rec.end()
    t0 = time.perf_counter()
    loss.asnumpy()
    return time.perf_counter() - t0


def _time_model(module, rec: Recorder) -> None:  # noqa: ANN001
    """Model.train gets a timing callback before the script's callbacks and one after them."""
    from mindspore.train import Callback

    class StepTimer(Callback):
        def on_train_step_begin(self, run_context):  # noqa: ANN001, ARG002
            rec.begin()

        def on_train_step_end(self, run_context):  # noqa: ANN001, ARG002
            rec.end()

    class CallTimer(Callback):
        def on_train_step_end(self, run_context):  # noqa: ANN001, ARG002
            rec.call_end()

    real_model = module.Model

    class TimedModel(real_model):
        def train(self, *args, callbacks=None, **kwargs):  # noqa: ANN002, ANN003, ANN202
            return super().train(*args, callbacks=[CallTimer(), *(callbacks or []), StepTimer()], **kwargs)

    module.Model = TimedModel


def _time_native(module, rec: Recorder) -> None:  # noqa: ANN001
    """The native loop's TrainStep, timed around each call (the script's loop is unchanged)."""
    real_step = module.TrainStep

    class TimedTrainStep(real_step):
        def __call__(self, *args):  # noqa: ANN002, ANN204
            rec.begin()
            out = super().__call__(*args)
            rec.end()
            return out

    module.TrainStep = TimedTrainStep


def _train_args(module, script: Path, out_dir: Path, steps: int):  # noqa: ANN001, ANN202
    steps_per_epoch = module.build_train_dataset().get_dataset_size()
    sys.argv = [str(script), "--epochs", str(math.ceil(steps / steps_per_epoch)), "--max-steps", str(steps)]
    sys.argv += ["--output-dir", str(out_dir)]
    return module.parse_args()


PROFILE_FROM = 5  # steps ended before MindSpore's profiler starts (compile and warm-up left out)


class OpProfile:
    """MindSpore's profiler (CPU activity) over a run's steps after the first PROFILE_FROM; the
    result is its per-op-type table (FRAMEWORK/cpu_op_type_info_0.csv) as ms per profiled step."""

    def __init__(self, directory: Path) -> None:
        import mindspore as ms
        from mindspore.profiler import ProfilerActivity

        self.directory = directory
        self.profiler = ms.Profiler(
            output_path=str(directory), start_profile=False, activities=[ProfilerActivity.CPU]
        )
        self.started_at = 0

    def on_end(self, ended: int) -> None:
        if ended == PROFILE_FROM:
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


def run(script_dir: Path, kind: str, source: str, steps: int, *, profile: bool = False) -> dict:
    rec = Recorder(kind)
    script = script_dir / ("train_model.py" if kind == "model" else "train_native.py")
    if kind == "floor":
        script = script_dir / "train_model.py"  # plain network: Model-style amp is applied below
    module = _load(script)
    import mindspore as ms

    t_imported = time.perf_counter()
    batches = None
    if source == "memory":
        batches = _memory_batches(module, steps)
        module.build_train_dataset = lambda: _in_memory_dataset(batches)
    tail_sync = 0.0
    op_profile = OpProfile(script_dir / f"profile-{kind}-{source}") if profile else None
    if op_profile is not None:
        rec.on_end = op_profile.on_end
    t_setup = time.perf_counter()
    if kind == "floor":
        tail_sync = _floor(module, script_dir, steps, batches, rec)
    elif kind.startswith("mindcv"):
        t_setup, tail_sync = _run_mindcv(module, script_dir, kind, source, steps, rec.begins, rec.ends)
    else:
        (_time_model if kind == "model" else _time_native)(module, rec)
        module.train(_train_args(module, script, script_dir / f"out-{kind}-{source}", steps))

    t_end = time.perf_counter()
    ops = op_profile.table(len(rec.ends)) if op_profile is not None else None
    self_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    child_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    ends, begins = rec.ends, rec.begins
    return {
        "kind": kind,
        "input": source,
        "steps": len(ends),
        **rec.timestamps(),
        "import_s": t_imported - T_START,
        "setup_to_first_step_end_s": ends[0] - t_setup if ends else None,
        "first_step_s": ends[0] - begins[0] if ends else None,
        "total_s": t_end - T_START,
        "tail_sync_s": tail_sync,
        "peak_rss_mb": max(self_rss, child_rss) / 1024,
        "mindspore": ms.__version__,
        **({"op_profile": ops} if ops is not None else {}),
    }


PAIRED_ORDER = ["floor", "model", "native"]


def run_paired(script_dir: Path, steps: int, block: int) -> dict:
    """floor, model and native in one process (three threads), taking turns `block` steps at a time
    on in-memory batches: each kind's blocks are timed seconds apart from the others', so a drift
    of the machine's speed hits all three alike. Only one thread runs a step at any time."""
    model = _load(script_dir / "train_model.py")
    native = _load(script_dir / "train_native.py")
    import mindspore as ms

    batches = _memory_batches(model, steps)
    for module in (model, native):
        module.build_train_dataset = lambda: _in_memory_dataset(batches)
    baton = Baton(PAIRED_ORDER, block)
    recs = {kind: Recorder(kind, baton) for kind in PAIRED_ORDER}
    _time_model(model, recs["model"])
    _time_native(native, recs["native"])
    model_args = _train_args(model, script_dir / "train_model.py", script_dir / "out-paired-model", steps)
    native_args = _train_args(native, script_dir / "train_native.py", script_dir / "out-paired-native", steps)
    errors: dict[str, str] = {}

    def guarded(kind: str, job) -> None:  # noqa: ANN001
        try:
            job()
        except BaseException as exc:  # noqa: BLE001  (reported, and the other kinds must not wait forever)
            errors[kind] = f"{type(exc).__name__}: {exc}"
        finally:
            baton.finished(kind)

    jobs = {
        "floor": lambda: _floor(model, script_dir, steps, batches, recs["floor"]),
        "model": lambda: model.train(model_args),
        "native": lambda: native.train(native_args),
    }
    threads = [threading.Thread(target=guarded, args=(kind, job)) for kind, job in jobs.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise RuntimeError("; ".join(f"{kind}: {msg}" for kind, msg in errors.items()))
    return {
        "kind": "paired",
        "block": block,
        "steps": steps,
        "kinds": {kind: rec.timestamps() for kind, rec in recs.items()},
        "mindspore": ms.__version__,
    }


def _run_mindcv(module, script_dir: Path, kind: str, source: str, steps: int, begins: list, ends: list):  # noqa: ANN001, ANN202, PLR0913
    """mindcv's train.py engine on the script's network name and data; returns (t_setup, tail_sync)."""
    import mindspore as ms
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

    module.set_runtime()
    spec = json.loads((script_dir / "bench.json").read_text())
    dataset = module.build_train_dataset()
    steps_per_epoch = dataset.get_dataset_size()
    network = create_model(spec["mindcv_model"], num_classes=spec["num_classes"], pretrained=False)
    loss = create_loss(name="CE", reduction="mean", label_smoothing=0.0)
    lr = create_scheduler(
        steps_per_epoch, scheduler="constant", lr=_first_lr(module), warmup_epochs=0, num_epochs=1
    )
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
    out = script_dir / f"out-{kind}-{source}"
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
            begins.append(time.perf_counter())

        def on_train_step_end(self, run_context):  # noqa: ANN001
            ends.append(time.perf_counter())
            if len(ends) >= steps:
                run_context.request_stop()

    t_setup = time.perf_counter()
    trainer.train(
        math.ceil(steps / steps_per_epoch), dataset, callbacks=[state, StepTimer()], dataset_sink_mode=False
    )
    del ms
    return t_setup, 0.0


def _first_lr(module):  # noqa: ANN001, ANN202
    return getattr(module, "LR", 0.01)


def _amp_level_of(script_dir: Path) -> str:
    """amp.level as the bench config says (recorded by bench/__main__.py next to the scripts)."""
    return json.loads((script_dir / "bench.json").read_text())["amp_level"]


def main() -> None:
    script_dir, kind, source, steps, out = sys.argv[1:6]
    if kind == "paired":  # SOURCE is the block size: memory input only
        result = run_paired(Path(script_dir), int(steps), int(source))
    else:
        result = run(Path(script_dir), kind, source, int(steps), profile="--profile" in sys.argv[6:])
    Path(out).write_text(json.dumps(result))


if __name__ == "__main__":
    main()
