"""`mscodegen validate CONFIG --run`: generate both scripts into a temporary directory, run each with
`--fast-dev-run` (one train batch with a real forward/backward/update, one eval batch, nothing
written) and map a failure back to the YAML key that caused it.

This is for what no static rule can see, e.g. an imported dataset whose images do not fit the network
or whose labels exceed network.num_classes. It imports MindSpore only in the child processes.
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mscodegen.config.errors import Problem, format_path
from mscodegen.config.load import LoadedConfig, problem_at
from mscodegen.plan import SCRIPT_NAMES
from mscodegen.run.observer import observed_env
from mscodegen.schema.data import ImportedData, fixed_transforms
from mscodegen.schema.gan import GanConfig
from mscodegen.schema.network import BuiltinNetwork, ImportedNetwork
from mscodegen.schema.optim import ImportedLoss
from mscodegen.schema.parallel import Parallel
from mscodegen.schema.training import SAME_SHAPE_TARGET_LOSSES, ImportedMetric, eval_metrics

TAIL_LINES = 6

Key = tuple[str | int, ...]

# The last line of a Python traceback: "ValueError: For 'MatMul' ...", "mod.Error: ...".
_EXCEPTION_LINE = re.compile(
    r"^(?:[A-Za-z_][\w.]*\.)?([A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt))(?::\s|$)"
)
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line \d+, in (?P<function>\S+)')
_SHAPE = re.compile(
    r"For '(MatMul|Conv2D|Conv2d|BiasAdd|Dense|BatchMatMul|Reshape|Flatten|MaxPool|AvgPool|BatchNorm\w*)'"
    r"|input dimensions must be equal|'C_in' of input|shape of .* must be|must be equal to .* shape"
)
_LABEL = re.compile(
    r"got error label|label\[index\] must|labels? .*(out of|exceed|range)|target .* out of bounds"
    r"|Target \d+ is out of bounds",
    re.IGNORECASE,
)
_COLUMNS = re.compile(
    r"too many values to unpack|not enough values to unpack|should return two elements"
    r"|number of (?:columns|elements)|column names|input_columns",
    re.IGNORECASE,
)
_IMPORT = re.compile(r"^(ModuleNotFoundError|ImportError|AttributeError|NameError)\b")
# What the generated scripts themselves import (the `run` extra), as opposed to a user's factory.
_MISSING_RUNTIME = re.compile(r"No module named '(mindspore|mindcv|sklearn|numpy)[.']")
_ZERO_STEPS = re.compile(r"trained 0 steps: data\.train yields no batch.*")
_PRETRAINED = re.compile(r"error: .*: \d+ parameter\(s\) cannot be loaded.*(?:\n  .*)*")  # load_pretrained
# a printed loss, an evaluation's, or the scripts' own guard ("error: step 1: loss inf; ...")
_NON_FINITE_LOSS = re.compile(r"loss(?:'|\")?(?: is|:)?\s*\[?(?:inf|-inf|nan)\b", re.IGNORECASE)
_NOISE = re.compile(r"^\[(WARNING|INFO|DEBUG)\]|^-{10,}|^- C\+\+ Call Stack|^\s*$")
_WORKERS = re.compile(r"num_parallel_workers exceeds the boundary")
# A frame of graph compilation's stack ("# 3 In file .../mindspore/nn/loss/loss.py:891, 20~69"), outermost first.
_COMPILED_FRAME = re.compile(r"^# (\d+) In file (.+?):\d+")
# What a factory returned is used on a script line: `network.trainable_params()`, `dataset.shuffle(...)`.
_NO_ATTRIBUTE = re.compile(r"^AttributeError: '([\w.]+)' object has no attribute '(\w+)'")
# The scripts' names for what a factory returned, and what it must be.
_RETURNED = {"network": "mindspore.nn.Cell", "dataset": "mindspore.dataset.Dataset"}
# MindSpore's metric modules (mindspore/train/metrics/<file>.py) and the eval.metrics names they implement
_METRIC_FILES = {
    "accuracy.py": ("accuracy",),
    "precision.py": ("precision",),
    "recall.py": ("recall",),
    "fbeta.py": ("f1",),
    "error.py": ("mae", "mse"),
    "topk.py": ("top_k",),
    "loss.py": ("loss",),
    "roc.py": ("auc",),
}

# Functions of the generated scripts that import and call one user object, and the key that names it
# (train() imports several: its frames are matched by their source line instead).
_HOSTS: dict[str, Key] = {
    "create_dataset": ("data", "train", "factory"),  # one function for both splits: the same factory
    "create_train_dataset": ("data", "train", "factory"),
    "create_eval_dataset": ("data", "eval", "factory"),
    "build_gradient_processor": ("grad", "process"),
}


@dataclass(frozen=True)
class RunResult:
    variant: str
    returncode: int | None  # None: timed out
    stdout: str
    stderr: str
    steps: int = 1  # steps the observer saw it train (mscodegen.run.observer)


def run_preflight(
    loaded: LoadedConfig,
    *,
    timeout: float = 600,
    python: str = sys.executable,
) -> list[Problem]:
    """Run both variants for one batch; [] when both pass, else one located Problem per failure.

    Each run is watched from outside (mscodegen.run.observer): it passes when it exits 0 having trained
    at least one step. Under data parallel the runs train in one process; then data.train.factory's
    dataset must take the script's sampler (mscodegen.run.shards).
    """
    from mscodegen.run.data_files import data_file_problems
    from mscodegen.run.parity import write_scripts  # the plan and templates: only when asked to run
    from mscodegen.run.shards import shard_problems

    if unreadable := data_file_problems(loaded, python=python):  # what would stop an epoch midway
        return unreadable
    stand_alone = loaded
    if loaded.config.parallel.mode == "data_parallel":  # one process: shapes and labels do not change
        config = loaded.config.model_copy(update={"parallel": Parallel()})
        stand_alone = dataclasses.replace(loaded, config=config)
    with tempfile.TemporaryDirectory(prefix="mscodegen-preflight-") as tmp:
        scripts = write_scripts(stand_alone, Path(tmp))
        results = [_run(Path(tmp), variant, path.name, python, timeout) for variant, path in scripts.items()]
    problems = [problem for result in results if (problem := diagnose(result, stand_alone))]
    if problems:
        return _merge_variants(problems)
    # after the runs: a factory that returns no dataset at all is better told by them
    return shard_problems(loaded, python=python, timeout=timeout)


def _run(workdir: Path, variant: str, script: str, python: str, timeout: float) -> RunResult:
    records = workdir / f"records-{variant}"
    records.mkdir()
    env = observed_env(Path(script), records, {**os.environ, "PYTHONUNBUFFERED": "1"})
    cmd = [python, script, "--fast-dev-run"]  # it writes nothing: no --output-dir needed
    try:
        done = subprocess.run(
            cmd, cwd=workdir, env=env, capture_output=True, text=True, errors="replace", timeout=timeout
        )
    except subprocess.TimeoutExpired as exc:
        return RunResult(variant, None, _text(exc.stdout), _text(exc.stderr))
    steps = sum(len(path.read_text().splitlines()) for path in records.glob("loss*.jsonl"))
    return RunResult(variant, done.returncode, done.stdout, done.stderr, steps)


def _text(data: str | bytes | None) -> str:
    if isinstance(data, bytes):
        return data.decode("utf-8", "replace")
    return data or ""


def diagnose(result: RunResult, loaded: LoadedConfig) -> Problem | None:
    """The located problem a finished run shows, or None when it passed."""
    script = SCRIPT_NAMES.get(result.variant, result.variant)
    if result.returncode is None:
        return located(loaded, (), f"{script} did not finish one batch in time{_tail(result.stderr)}")
    non_finite = _NON_FINITE_LOSS.search(result.stdout) or _NON_FINITE_LOSS.search(result.stderr)
    if result.returncode == 0 and non_finite is None and result.steps > 0:
        return None
    if result.returncode in (0, 1) and non_finite is not None:
        return located(
            loaded,
            _classes_key(loaded),
            f"{script}: the loss is not finite after one batch ({non_finite.group(0)}): a label equal to "
            "the number of classes gives an inf loss on CPU without an error; check the labels against "
            "network.num_classes (or lower optimizer.lr)",
        )
    if result.returncode == 0:
        return located(loaded, (), f"{script} exited 0 without training a step{_tail(result.stdout)}")
    key, cause = map_failure(result.stderr, loaded)
    return located(loaded, key, f"{script} --fast-dev-run failed: {cause}")


def map_failure(stderr: str, loaded: LoadedConfig) -> tuple[Key, str]:
    """(key, explanation) for a failed run's stderr; key () when no key can be blamed."""
    error = exception_line(stderr)
    split = "eval" if _in_eval(stderr) else "train"
    if found := _run_failure(stderr, error):
        return found
    if _LABEL.search(stderr):
        return _classes_key(loaded), f"a label of data.{split} is not below the number of classes ({error})"
    if found := _loss_failure(stderr, loaded, split) or _returned_failure(stderr, error, loaded):
        return found
    if _SHAPE.search(stderr):
        key, what = _shape_key(loaded, split)
        return key, f"the network cannot take data.{split}'s images: check {what} ({error})"
    if error and _IMPORT.match(error) and (factory := _import_key(stderr, error, loaded)):
        return factory, f"importing it failed: {error}"
    if _WORKERS.search(error) and _user_frame_key(stderr, loaded) is None:  # not in a factory's own code
        split = _dataset_split(stderr) or split
        given = "num_workers" in getattr(loaded.config.data, split).model_fields_set
        at: Key = ("data", split, "num_workers") if given else ("data", split)
        return at, f"MindSpore takes at most this machine's CPU count of workers ({error})"
    if _COLUMNS.search(stderr):
        columns = loaded.config.data.columns  # data.inputs, then data.labels
        what = f"data.{split} must yield {len(columns)} columns ({', '.join(columns)}) per row"
        return ("data", split), f"{what} ({error})"
    return _user_failure(stderr, error, loaded, split)


def _run_failure(stderr: str, error: str) -> tuple[Key, str] | None:
    """A failure of the run itself: the scripts' runtime, the starting weights, no step in an epoch."""
    missing = _MISSING_RUNTIME.search(error)
    if missing and _IMPORT.match(error):
        return (), (
            f"the scripts need {missing.group(1)}, which this Python lacks ({error}); "
            "install what they run on: pip install -e '.[run]' in the mscodegen checkout"
        )
    if "unrecognized arguments: --fast-dev-run" in stderr:
        return (), "the generated script has no --fast-dev-run option (this mscodegen's templates lack it)"
    # load_pretrained's own message: the parameters the file cannot give
    if pretrained := _PRETRAINED.search(stderr):
        return ("network", "checkpoint"), pretrained.group(0)
    if "load_pretrained" in stderr and error:  # the file could not be read at all
        return ("network", "checkpoint", "path"), f"loading the checkpoint failed: {error}"
    if zero := _ZERO_STEPS.search(stderr):
        return ("data", "train", "batch_size"), zero.group(0)
    return None


def _loss_failure(stderr: str, loaded: LoadedConfig, split: str) -> tuple[Key, str] | None:
    """The loss cell failed to compile on the network output and the labels: graph compilation's
    innermost frame is in MindSpore's loss module, or in the module of an imported loss."""
    cfg = loaded.config
    innermost = ""
    for line in stderr.splitlines():
        m = _COMPILED_FRAME.match(line)
        if m and m.group(1) == "0" and innermost:  # a second copy of the stack follows
            break
        if m:
            innermost = Path(m.group(2)).as_posix()
    if not innermost or isinstance(cfg, GanConfig):
        return None
    module = _module(cfg.loss.path) if isinstance(cfg.loss, ImportedLoss) else None
    network = _module(cfg.network.factory) if isinstance(cfg.network, ImportedNetwork) else None
    own = module is not None and module != network  # a module of both: the network's frames are there too
    in_loss = "/mindspore/nn/loss/" in innermost or (
        own and innermost.endswith((f"/{module}.py", f"/{module}/__init__.py"))
    )
    if not in_loss:
        return None
    name, labels = cfg.loss.name, f"data.{split}'s labels do not fit"
    if name in SAME_SHAPE_TARGET_LOSSES:
        what = f"{name} takes targets of the network output's shape: {labels}"
    elif name == "SoftmaxCrossEntropyWithLogits":
        what = (
            f"{name} takes one int32 class index per sample (sparse: true, the default), or one-hot or soft "
            f"labels of the output's shape with loss.kwargs.sparse: false: {labels}"
        )
    else:
        what = f"{name} cannot take data.{split}'s labels with the network's output"
    key: Key = ("loss", "path") if module is not None else ("loss", "name")
    return key, f"{what} ({exception_line(stderr)})"


def _module(path: str) -> str:
    """`pkg.mod:name` (or `pkg.mod.name`) -> pkg/mod, as a file path ends."""
    return _split(path)[0].replace(".", "/")


def _split(path: str) -> tuple[str, str]:
    """`pkg.mod:name` (or `pkg.mod.name`) -> (pkg.mod, name)."""
    module, _, name = path.rpartition(":" if ":" in path else ".")
    return module, name


def _returned_failure(stderr: str, error: str, loaded: LoadedConfig) -> tuple[Key, str] | None:
    """A factory returned something else than the script uses it as: a script line uses the returned
    object's attribute (`network.trainable_params()` on a str, `dataset.shuffle(...)` on a list)."""
    missing = _NO_ATTRIBUTE.match(error)
    in_script = _frames(stderr, in_script=True)
    if missing is None or not in_script:
        return None
    _, function, source = in_script[-1]
    sites = _import_sites(loaded)
    for variable, kind in _RETURNED.items():
        if not re.search(rf"\b{variable}\.{missing.group(2)}\b", source):
            continue
        key = ("network", "factory") if variable == "network" else _HOSTS.get(function)
        if key in sites:
            return key, f"it returned a {missing.group(1)}, not a {kind} ({error})"
    return None


def _user_failure(stderr: str, error: str, loaded: LoadedConfig, split: str) -> tuple[Key, str]:
    """A failure in the user's own objects (called by the script or by MindSpore, a metric, a keyword
    argument), else the error as it is."""
    if error and (called := _called_key(stderr, error, loaded)):
        return called, f"calling it failed: {error}"
    # called by MindSpore, not by the script (an imported metric's update during Model.fit)
    if user := _user_frame_key(stderr, loaded):
        return user, f"it raised: {error}"
    if metric := _metric_key(stderr, loaded):
        return metric, f"the metric failed on data.{split}'s network outputs and labels ({error})"
    if kwarg := _kwarg_key(error, loaded):
        return kwarg, f"{'.'.join(map(str, kwarg[:-2]))} takes no such keyword argument ({error})"
    return (), f"{error or 'it failed'}{_tail(stderr)}"


def _user_frame_key(stderr: str, loaded: LoadedConfig) -> Key | None:
    """The import site whose module holds the innermost frame of the traceback (by the frame's function
    when one module holds several: a factory by its name, a metric by its methods)."""
    sites = _import_sites(loaded)
    for file, function, _ in reversed(_frames(stderr)):
        found = []
        for key, path in sites.items():
            module, attr = _split(path)
            stem = module.replace(".", "/")
            if file.endswith((f"/{stem}.py", f"/{stem}/__init__.py")) or file == f"{stem}.py":
                found.append((key, attr))
        if len(found) > 1:
            found = [
                (key, attr)
                for key, attr in found
                if attr == function or (key[0] == "eval" and function in ("update", "eval", "clear"))
            ]
        if len(found) == 1:
            return found[0][0]
        if found:
            return None
    return None


def _metric_key(stderr: str, loaded: LoadedConfig) -> Key | None:
    """The eval.metrics entry whose MindSpore metric class raised (its module is in the traceback)."""
    names: tuple[str, ...] = ()
    for file, _, _ in _frames(stderr):
        if Path(file).parent.name == "metrics" and "mindspore" in file:
            names = _METRIC_FILES.get(Path(file).name, names)
    cfg = loaded.config
    if not names or isinstance(cfg, GanConfig):  # a gan evaluates no metric
        return None
    metrics = eval_metrics(cfg.eval, cfg.loss.name)
    for i, metric in enumerate(metrics):
        if metric.name in names:
            written = cfg.eval is not None and "metrics" in cfg.eval.model_fields_set
            return ("eval", "metrics", i) if written else ("eval", "metrics")
    return None


def _kwarg_key(error: str, loaded: LoadedConfig) -> Key | None:
    """`unexpected keyword argument 'x'`: the one kwargs of the config that has x (network, loss, data)."""
    bad = _UNEXPECTED_KWARG.search(error)
    if bad is None:
        return None
    cfg = loaded.config
    if isinstance(cfg, GanConfig):
        return None
    owners: list[Key] = [("network",), ("loss",), ("data", "train"), ("data", "eval")]
    owners += [("eval", "metrics", i) for i in range(len(cfg.eval.metrics) if cfg.eval else 0)]
    found = [owner for owner in owners if bad.group(1) in _kwargs_at(loaded, owner)]
    return (*found[0], "kwargs", bad.group(1)) if len(found) == 1 else None


def _dataset_split(stderr: str) -> str | None:
    """The split whose dataset train() was building: by the function, or by train()'s line."""
    for _, function, source in reversed(_frames(stderr, in_script=True)):
        if function in ("create_train_dataset", "create_eval_dataset"):
            return function.split("_")[1]
        if source.startswith(("train_dataset =", "eval_dataset =")):
            return source.split("_")[0]
    return None


def exception_line(stderr: str) -> str:
    """The last `SomeError: message` line of a traceback ('' when there is none)."""
    found = ""
    for line in stderr.splitlines():
        if _EXCEPTION_LINE.match(line):
            found = line.strip()
    return found


def _tail(text: str) -> str:
    lines = [line for line in text.splitlines() if not _NOISE.search(line)][-TAIL_LINES:]
    return ("; last lines:\n    " + "\n    ".join(lines)) if lines else ""


def _in_eval(stderr: str) -> bool:
    eval_functions = ("evaluate", "eval", "_eval_process", "build_eval_dataset")
    return any(function in eval_functions for _, function, _ in _frames(stderr))


def _classes_key(loaded: LoadedConfig) -> Key:
    if isinstance(loaded.config, GanConfig):
        return ()  # a gan does not read the labels
    net = loaded.config.network
    if isinstance(net, ImportedNetwork):
        return ("network", "kwargs", "num_classes") if "num_classes" in net.kwargs else ("network",)
    return ("network", "num_classes")


def _shape_key(loaded: LoadedConfig, split: str) -> tuple[Key, str]:
    cfg = loaded.config
    if isinstance(cfg, GanConfig):
        return ("gan",), "the networks against data.train's images"
    if split == "eval" and cfg.data.eval is not None:  # the train batch went through: blame data.eval
        spec, at = cfg.data.eval, ("data", "eval")
        transforms = fixed_transforms(spec)
        if transforms is not None and transforms.resize:
            return (*at, "transforms", "resize"), "data.eval.transforms.resize against data.train's"
        if isinstance(spec, ImportedData) and spec.image_shape:
            return (*at, "image_shape"), "data.eval.image_shape against what the factory yields"
        if isinstance(spec, ImportedData):
            return (*at, "factory"), "the images data.eval.factory yields against data.train's"
        return at, "data.eval's images against data.train's"
    spec, net = cfg.data.train, cfg.network
    transforms = getattr(spec, "transforms", None)
    if isinstance(net, BuiltinNetwork) and net.input_shape:
        return ("network", "input_shape"), "network.input_shape against the images the data yields"
    if isinstance(spec, ImportedData):
        if spec.image_shape:
            return ("data", "train", "image_shape"), "data.train.image_shape against what the factory yields"
        return ("data", "train", "factory"), "the images data.train.factory yields"
    if transforms is not None:
        return ("data", "train", "transforms"), "data.train.transforms"
    return ("network",), "the network against the images of data.train"


def _import_key(stderr: str, error: str, loaded: LoadedConfig) -> Key | None:
    """The factory key whose import failed: by the script function it failed in, or by module."""
    sites = _import_sites(loaded)
    for _, function, source in reversed(_frames(stderr)):
        if key := _host_site(function, source, sites):
            return key
    named = [key for key, path in sites.items() if _mentions(error, path)]
    return named[0] if named else None


def _frames(stderr: str, *, in_script: bool = False) -> list[tuple[str, str, str]]:
    """(file, function, source line) of each traceback frame, outermost first; `in_script`: only the
    generated scripts'."""
    lines = [*stderr.splitlines(), ""]
    out = []
    for line, source in zip(lines, lines[1:], strict=False):
        m = _FRAME.match(line)
        if m and (not in_script or Path(m.group("file")).name in SCRIPT_NAMES.values()):
            out.append((Path(m.group("file")).as_posix(), m.group("function"), source.strip()))
    return out


def _host_site(function: str, source: str, sites: dict[Key, str]) -> Key | None:
    """The import site a script frame imports or calls: by its source line (`network = Net(...)`,
    `from parts import Net`), else by the function (create_train_dataset -> data.train.factory)."""
    matches = []
    for site, path in sites.items():
        module, name = _split(path)
        called = rf"\b{re.escape(name)}\(|^from {re.escape(module)} import|^import {re.escape(module)}\b"
        if re.search(called, source):
            matches.append(site)
    if len(matches) == 1:
        return matches[0]
    key = _HOSTS.get(function)
    if key in sites and (not matches or key in matches):  # one factory for both splits: by function
        return key
    return None


_UNEXPECTED_KWARG = re.compile(r"unexpected keyword argument '([^']+)'")


def _called_key(stderr: str, error: str, loaded: LoadedConfig) -> Key | None:
    """A user object that raised when the script called it: the innermost script frame calls it.

    A misspelled keyword argument is blamed on that key of its kwargs.
    """
    in_script = _frames(stderr, in_script=True)
    site = _host_site(*in_script[-1][1:], _import_sites(loaded)) if in_script else None
    bad = _UNEXPECTED_KWARG.search(error)
    if site and bad and bad.group(1) in _kwargs_at(loaded, site[:-1]):
        return (*site[:-1], "kwargs", bad.group(1))
    return site


def _kwargs_at(loaded: LoadedConfig, owner: Key) -> dict[str, object]:
    """The kwargs of the config entry at `owner` (network, data.train, eval.metrics[i]), or {}."""
    node: object = loaded.config
    for element in owner:
        node = (
            node[element]
            if isinstance(element, int) and isinstance(node, list)
            else getattr(node, str(element), None)
        )
    kwargs = getattr(node, "kwargs", None)
    return kwargs if isinstance(kwargs, dict) else {}


def _mentions(error: str, path: str) -> bool:
    module, _, attr = path.partition(":")
    return any(f"'{name}'" in error for name in (module, module.split(".")[0], attr))


def _import_sites(loaded: LoadedConfig) -> dict[Key, str]:
    cfg = loaded.config
    networks: dict[Key, object]
    if isinstance(cfg, GanConfig):
        roles = ("generator", "discriminator")
        networks = {("gan", role, "network"): getattr(cfg.gan, role).network for role in roles}
    else:
        networks = {("network",): cfg.network}
    sites: dict[Key, str] = {
        (*at, "factory"): n.factory for at, n in networks.items() if isinstance(n, ImportedNetwork)
    }
    for split in ("train", "eval"):
        spec = getattr(cfg.data, split)
        if isinstance(spec, ImportedData):
            sites["data", split, "factory"] = spec.factory
    if isinstance(cfg, GanConfig):
        return sites
    for i, metric in enumerate(cfg.eval.metrics if cfg.eval else []):
        if isinstance(metric, ImportedMetric):
            sites["eval", "metrics", i, "class"] = metric.cls
    if cfg.grad.process:
        sites["grad", "process"] = cfg.grad.process
    return sites


def located(loaded: LoadedConfig, key: Key, message: str) -> Problem:
    """A Problem at `key` of the config file (at none when key is ())."""
    if key and loaded.loaded_yaml:
        return problem_at(loaded.loaded_yaml, key, message)
    return Problem(format_path(key), None, None, message)


def _merge_variants(problems: list[Problem]) -> list[Problem]:
    """One problem when both scripts fail at the same key for the same reason."""
    merged: dict[tuple[str, int | None, int | None, str], Problem] = {}
    for problem in problems:
        script, _, rest = problem.message.partition(" ")
        same = (problem.path, problem.line, problem.column, rest)
        if first := merged.get(same):
            problem = dataclasses.replace(
                first, message=f"{first.message.partition(' ')[0]} and {script} {rest}"
            )
        merged[same] = problem
    return list(merged.values())
