"""Shared helpers: tiny configs and running both generated variants for real."""

from __future__ import annotations

import atexit
import copy
import fcntl
import hashlib
import importlib.util
import inspect
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import warm
import yaml

from mscodegen.run import preflight, weights
from mscodegen.run.parity import (
    SAVE_WEIGHTS,
    WEIGHTS_NAME,
    RunResult,
    generate_both,
    run_script,
    step_differences,
)

REPO = Path(__file__).resolve().parents[1]


class _WarmPython:
    """This worker's warm interpreter (tests/warm.py): a shim written now, its server started by the first
    slow test (make test-fast starts none) and stopped when the worker ends."""

    def __init__(self) -> None:
        self.directory = tempfile.mkdtemp(prefix="mscodegen-warm-")
        self.socket = os.path.join(self.directory, "server")
        self.cold = bool(os.environ.get("MSCODEGEN_TEST_COLD"))
        self.python = sys.executable if self.cold else warm.shim(self.directory, self.socket)
        for tool in Path(sys.executable).parent.iterdir():  # what is found beside `python`: msrun, ruff
            if not tool.name.startswith("python"):
                os.symlink(tool, os.path.join(self.directory, tool.name))
        self.server: subprocess.Popen[bytes] | None = None
        atexit.register(self.stop)

    def start(self) -> None:
        if self.server is None and not self.cold:
            server = [sys.executable, str(Path(warm.__file__)), "serve", self.socket]
            self.server = subprocess.Popen(server, stdin=subprocess.PIPE)

    def stop(self) -> None:
        if self.server is not None and self.server.stdin is not None:
            self.server.stdin.close()  # the server kills what still runs and exits
            self.server.wait(timeout=30)
        shutil.rmtree(self.directory, ignore_errors=True)


def import_script(path: Path, name: str = "generated") -> Any:
    """A generated script imported as a module, finding its imports as `python SCRIPT` would: its folder
    first on sys.path (checkpoints.py beside it), and no other script's checkpoints module. Registered in
    sys.modules: MindSpore's graph compiler looks a cell's module up by name."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    sys.path.insert(0, str(Path(path).parent))
    sys.modules.pop("checkpoints", None)
    module = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# import_script for the probes, which run a code string in a child process: its source and what it needs
PROBE_IMPORT = (
    "import importlib.util, sys\nfrom pathlib import Path\nfrom typing import Any\n\n"
    + inspect.getsource(import_script)
)


_WARM = _WarmPython()
# The interpreter that slow tests run generated scripts with: MindSpore imported already
# (sys.executable itself with MSCODEGEN_TEST_COLD=1). It is parity's, preflight's and the weight
# comparison's default, and sys.executable while a slow test runs, so `[sys.executable, SCRIPT]` uses it.
PYTHON = _WARM.python
COLD_PYTHON = sys.executable  # a fresh interpreter, for tests of processes themselves
for _function in (run_script, weights.compare_checkpoints, preflight.run_preflight):
    assert _function.__kwdefaults__ is not None and "python" in _function.__kwdefaults__
    _function.__kwdefaults__["python"] = PYTHON


@pytest.fixture(scope="session", autouse=True)
def _warm_server(request: pytest.FixtureRequest) -> None:
    """The warm interpreter's server, for a session that runs slow tests (before their session fixtures)."""
    if any(item.get_closest_marker("slow") for item in request.session.items):
        _WARM.start()


@pytest.fixture(scope="module", autouse=True)
def _warm_module(request: pytest.FixtureRequest) -> Iterator[None]:
    """In a module of slow tests, sys.executable is the warm interpreter, for its module fixtures too."""
    with pytest.MonkeyPatch.context() as patch:
        if request.node.get_closest_marker("slow") is not None:
            patch.setattr(sys, "executable", PYTHON)
        yield


@pytest.fixture(autouse=True)
def _warm_interpreter(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a slow test, sys.executable is the warm interpreter (the others probe what a fresh one imports)."""
    if request.node.get_closest_marker("slow") is not None:
        monkeypatch.setattr(sys, "executable", PYTHON)


# MindSpore 2.10's oneDNN runs most convolutions on its reference kernel on AVX-512 CPUs (seen with
# ONEDNN_VERBOSE=1: jit_uni_ncsp:conv+ref); capped at AVX2 it uses jit GEMM kernels: the resnet
# example's 6 steps took 155 s -> 41 s. Every script a test runs (both variants, the references)
# inherits it, so comparisons stay like for like. docs/speed.md tells users.
os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")

# Small enough that one run of a generated script takes a few seconds on 2 CPU cores.
TINY: dict = {
    "runtime": {"mode": "graph", "seed": 3},
    "network": {"kind": "builtin", "name": "mlp", "hidden": [16], "num_classes": 4},
    "data": {
        "train": {
            "kind": "synthetic",
            "num_samples": 48,
            "image_shape": [1, 8, 8],
            "num_classes": 4,
            "batch_size": 8,
            "seed": 0,
        },
        "eval": {
            "kind": "synthetic",
            "num_samples": 24,
            "image_shape": [1, 8, 8],
            "num_classes": 4,
            "batch_size": 8,
            "seed": 1,
        },
    },
    "optimizer": {"name": "momentum", "lr": 0.05},
    "train": {"epochs": 2, "log_every_steps": 3},
}


def merge(base: dict, overrides: dict) -> dict:
    """Deep-merge overrides into a copy of base; a value of None deletes the key."""
    out = copy.deepcopy(base)
    for key, value in overrides.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


@pytest.fixture
def write_config(tmp_path: Path):
    """write_config(overrides=None, name="tiny", base=TINY) -> path of a YAML config in tmp_path."""

    def _write(overrides: dict | None = None, name: str = "tiny", base: dict = TINY) -> Path:
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(merge(base, overrides or {}), sort_keys=False))
        return path

    return _write


def run_both(
    config: Path, workdir: Path, *, steps: int | None = None, epochs: int | None = None, timeout: float = 300
) -> tuple[RunResult, RunResult]:
    """Generate both variants of `config` and run each for real; asserts both exit 0."""
    scripts = generate_both(config, workdir / "scripts")
    results = []
    for variant in ("model", "native"):
        result = run_script(
            scripts[variant],
            workdir / variant,
            variant=variant,
            max_steps=steps,
            epochs=epochs,
            timeout=timeout,
        )
        assert result.returncode == 0, f"{variant} variant failed:\n{result.log_tail}"
        assert result.steps, f"{variant} variant logged no steps:\n{result.log_tail}"
        results.append(result)
    return results[0], results[1]


@pytest.fixture(scope="session")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding a copy of examples/ as a checkout has it (without the fine-tuning weights, which
    shipped_parity writes with their helper, as `make demo` does, when that example runs)."""
    root = tmp_path_factory.mktemp("checkout")
    shutil.copytree(
        REPO / "examples", root / "examples", ignore=shutil.ignore_patterns("pretrained", "__pycache__")
    )
    return root


PRETRAINED = Path("examples") / "pretrained" / "resnet18_10classes.ckpt"


def pretrained(checkout: Path) -> Path:
    """The fine-tuning example's weights in `checkout`, written once by their helper (as `make demo` does)."""
    if not (checkout / PRETRAINED).exists():
        helper = checkout / "examples" / "make_pretrained.py"
        subprocess.run(
            [PYTHON, str(helper), str(checkout / PRETRAINED)],
            check=True,
            capture_output=True,
            timeout=300,
        )
    return checkout / PRETRAINED


def shipped_parity(checkout: Path, example: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`mscodegen parity examples/EXAMPLE.yaml ARGS` in `checkout`, exactly as a user runs it there.

    test_examples_as_shipped runs each example this way, except those whose own test does (with the
    whole run's steps and --keep, its assertions on the kept logs): one run feeds both."""
    if example == "resnet18_finetune":
        pretrained(checkout)
    done = subprocess.run(
        [PYTHON, "-m", "mscodegen", "parity", f"examples/{example}.yaml", *args],
        cwd=checkout,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "final weights equal" in done.stdout, done.stdout[-2000:]  # under msrun too (lenet_dp)
    return done


def kept_runs(keep: Path) -> tuple[RunResult, RunResult]:
    """The model and native runs a `parity --keep KEEP` recorded (their steps and evaluations)."""
    runs = []
    for variant in ("model", "native"):
        steps, evals = (
            [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
            if path.exists()
            else []
            for path in (keep / variant / "loss.jsonl", keep / variant / "eval.jsonl")
        )
        runs.append(RunResult(variant, 0, 0.0, steps, evals))
    return runs[0], runs[1]


def assert_identical(model: RunResult, native: RunResult, *, steps: int | None = None) -> None:
    """Both variants logged the same steps (==, every field) and evaluations, and trained."""
    assert step_differences(model.steps, native.steps) == []
    assert [e["metrics"] for e in model.evals] == [e["metrics"] for e in native.evals]
    losses = [r["loss"] for r in model.steps]
    assert all(math.isfinite(loss) for loss in losses)
    assert len(set(losses)) > 1, "the loss never changed: nothing was trained"
    if steps is not None:
        assert len(model.steps) == steps


def function_source(script: str, name: str) -> str:
    """The source of the generated script's top-level function or class `name`."""
    import ast

    for node in ast.parse(script).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name == name:
            segment = ast.get_source_segment(script, node)
            assert segment is not None
            return segment
    raise AssertionError(f"no top-level {name} in the script")


# A probe's first lines: run the generated script (sys.argv[1]) the way `python SCRIPT` does, until
# MindSpore's Optimizer base class has been set up, and stop there with `optimizer` bound (the
# network's parameters in it are the initial weights, after network.checkpoint and network.freeze).
# The scripts build network and optimizer inline in train(); this reaches them without a hook.
# The probe's own arguments (after the script's path) are left in `probe_args`.
UNTIL_OPTIMIZER = (
    PROBE_IMPORT
    + """
import importlib.util, json, os, sys
import mindspore as ms
import numpy as np
from mindspore.nn.optim.optimizer import Optimizer

class Built(Exception):
    pass

_init = Optimizer.__init__

def _stop(self, *args, **kwargs):
    _init(self, *args, **kwargs)
    raise Built(self)

Optimizer.__init__ = _stop
mod = import_script(sys.argv[1])
probe_args = sys.argv[2:]
sys.argv = [sys.argv[1], "--fast-dev-run"]
try:
    mod.train(mod.parse_args())
    raise SystemExit("the script built no optimizer")
except Built as built:
    optimizer = built.args[0]
Optimizer.__init__ = _init
"""
)


# ---------------------------------------------------------------------------
# Data parallel: the msrun jobs that test_parallel, test_multinode and test_parallel_resume compare with
# ---------------------------------------------------------------------------

MSRUN_TIMEOUT = 150  # seconds for one whole msrun job (scheduler + 2 workers)

# Two workers x batch 4 each = global batch 8; no BatchNorm, no shuffle: the mean of the two
# ranks' losses is the loss of one process on the same 8 samples. 6 steps per rank.
DP = merge(
    TINY,
    {
        "data": {"train": {"shuffle": False}},
        "train": {"epochs": 1},
        "parallel": {"mode": "data_parallel", "workers": 2, "per_rank_logs": True},
    },
)
# grad.clip makes the model variant use the custom TrainStep cell (its own DistributedGradReducer).
# Clamping to +-1e6 leaves these gradients unchanged, so the losses must equal the native run's.
# This run also keeps the defaults: only rank 0 writes the loss log and the checkpoints.
DP_CUSTOM_CELL = merge(
    DP,
    {
        "grad": {"clip": {"kind": "value", "clip_value": 1.0e6}},
        "parallel": {"per_rank_logs": False},
        "callbacks": {"checkpoint": {"every_epochs": 1, "keep_max": 1, "prefix": "dp"}},
    },
)


def write_yaml(directory: Path, name: str, data: dict) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def run_dp(tmp: Path, variant: str, name: str) -> RunResult:
    """One msrun job (2 workers) of `variant`, already generated into tmp/name/scripts; rank 0
    saves the final weights to tmp/name/<variant>/weights.ckpt (dp_weights)."""
    script = tmp / name / "scripts" / f"train_{variant}.py"
    assert script.exists(), "generate first"
    workdir = tmp / name / variant
    result = run_script(
        script,
        workdir,
        variant=variant,
        timeout=MSRUN_TIMEOUT,
        distributed=True,
        extra_args=(SAVE_WEIGHTS, str(workdir / WEIGHTS_NAME)),
    )
    assert result.returncode == 0, f"{name}/{variant} failed:\n{result.log_tail}"
    return result


def dp_weights(result: RunResult) -> Path:
    """The final weights rank 0 saved in a dp_runs job."""
    assert result.output_dir is not None
    return result.output_dir.parent / WEIGHTS_NAME


def once_per_session(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    make: Callable[[Path], dict[str, Any]],
    to_json: Callable[[Any], object],
    from_json: Callable[[Any], Any],
) -> dict[str, Any]:
    """make(folder), run once per test session even under pytest-xdist.

    xdist workers share the session's base temp directory: the first worker to get here runs `make` under
    an exclusive lock and saves its results (each value through to_json); the others wait for the lock and
    load them (from_json). Without xdist, `make` just runs.
    """
    if getattr(request.config, "workerinput", None) is None:  # not under xdist
        return make(tmp_path_factory.mktemp(name))
    shared = tmp_path_factory.getbasetemp().parent / name
    shared.mkdir(exist_ok=True)
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        saved = shared / "results.json"
        if saved.exists():
            return {key: from_json(value) for key, value in json.loads(saved.read_text()).items()}
        results = make(shared)
        saved.write_text(json.dumps({key: to_json(value) for key, value in results.items()}))
        return results


@pytest.fixture(scope="session")
def dp_runs(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> dict[str, RunResult]:
    """The two msrun jobs, run once per test session even under pytest-xdist."""
    return once_per_session(
        request, tmp_path_factory, "dp_runs", _run_dp_jobs, _result_to_json, _result_from_json
    )


def _run_dp_jobs(tmp: Path) -> dict[str, RunResult]:
    """The native loop on DP and Model with its custom TrainStep cell on DP_CUSTOM_CELL, run at the same
    time: each spends most of its wall time waiting (imports, msrun's cluster build and teardown).

    Model's plain path (no custom cell) has no job of its own: test_parallel_resume's model runs (DP plus
    checkpoints) are compared with the native job step by step, and the shipped lenet_dp example's
    parity (test_examples_as_shipped) compares it with the native loop under msrun."""
    jobs = {
        "native": ("native", "plain"),
        "model_custom_cell": ("model", "custom"),
    }
    for name, data in {"plain": DP, "custom": DP_CUSTOM_CELL}.items():  # generate first, serially
        generate_both(write_yaml(tmp, name, data), tmp / name / "scripts")
    with ThreadPoolExecutor(len(jobs)) as pool:
        futures = {key: pool.submit(run_dp, tmp, *job) for key, job in jobs.items()}
        return {key: future.result() for key, future in futures.items()}


def _result_to_json(result: RunResult) -> dict:
    return dict(vars(result), output_dir=str(result.output_dir), ranks=list(result.ranks.items()))


def _result_from_json(data: dict) -> RunResult:
    data = dict(data, output_dir=Path(data["output_dir"]), ranks={int(k): v for k, v in data["ranks"]})
    return RunResult(**data)


@pytest.fixture(autouse=True, scope="session")
def _memo_black(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """black.format_str memoised: a pure function of its input, black's version and the mode, that costs
    ~0.1 CPU s a script, and about half of the fast suite's time. The tests generate the same few configs
    again and again, and the same scripts from one run to the next: besides the session's memory, each
    result is kept in pytest's cache folder (.pytest_cache/d/black, a file per input, written whole by a
    rename; shared by the xdist workers), so that a run formats only the scripts that changed since the
    last one. With -p no:cacheprovider, memory only. A test may still patch it over.

    Many scripts hold a path under this run's temporary folder (pytest-N/popen-gwK/...), another in each
    run: the file is keyed and kept with that folder masked by as many "#" (black reads a string's length,
    not its characters), and the folder put back when it is read."""
    import black

    real = black.format_str
    cache: dict[tuple[str, black.Mode], str] = {}
    pytest_cache = getattr(request.config, "cache", None)
    folder = None if pytest_cache is None else pytest_cache.mkdir("black")
    run_dir = str(tmp_path_factory.getbasetemp())
    mask = "#" * len(run_dir)

    def format_str(src_contents: str, *, mode: black.Mode) -> str:
        key = (src_contents, mode)
        if key in cache:
            return cache[key]
        path = None
        if folder is not None and mask not in src_contents:
            masked = src_contents.replace(run_dir, mask)
            name = hashlib.sha256(f"{black.__version__}\0{mode!r}\0{masked}".encode()).hexdigest()
            path = folder / name
            if path.exists():
                cache[key] = path.read_text(encoding="utf-8").replace(mask, run_dir)
                return cache[key]
        cache[key] = real(src_contents, mode=mode)
        if path is not None:
            part = path.with_name(f"{path.name}.{os.getpid()}.part")
            part.write_text(cache[key].replace(run_dir, mask), encoding="utf-8")
            part.replace(path)
        return cache[key]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(black, "format_str", format_str)
        yield


@pytest.fixture(autouse=True)
def _unmarked_tests_do_not_import_mindspore(request: pytest.FixtureRequest):
    """`make test-fast` (-m "not slow") must not pay for MindSpore: a test that imports it is slow."""
    before = "mindspore" in sys.modules
    yield
    if not before and "mindspore" in sys.modules and request.node.get_closest_marker("slow") is None:
        pytest.fail("this test imports MindSpore: mark it @pytest.mark.slow", pytrace=False)


def run_plain(script: Path, *args: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """`python SCRIPT ARGS` in cwd (made if missing), its output captured: a script as a user runs it."""
    cwd.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [PYTHON, str(script), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


# mindcv's inception_v3 with its auxiliary head weighted in the loss (network.aux_factor), 299 px, tiny data
INCEPTION_AUX = {
    "network": {"kind": "mindcv", "name": "inception_v3", "num_classes": 4, "aux_factor": 0.1},
    "data": {
        "train": {
            "kind": "synthetic",
            "num_samples": 4,
            "image_shape": [3, 299, 299],
            "num_classes": 4,
            "batch_size": 2,
        }
    },
    "loss": {"name": "CrossEntropyLoss", "kwargs": {"label_smoothing": 0.1}},
    "optimizer": {"name": "momentum"},
}
