"""`validate --run` under data parallel: can data.train.factory's dataset be sharded?

The one-batch runs (mscodegen.run.preflight) train in one process, without `parallel`, so they never
give the dataset a DistributedSampler. This check generates the data-parallel script and, in a child
process, calls its own train dataset function as rank 0 of `parallel.workers`: the script's check
(a source without __getitem__ ignores the sampler) then runs on what the factory really returns.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

from mscodegen.config.errors import Problem
from mscodegen.config.load import LoadedConfig
from mscodegen.plan import SCRIPT_NAMES
from mscodegen.plan.loop import CHECKPOINTS_NAME
from mscodegen.run.preflight import exception_line, located
from mscodegen.schema.data import ImportedData

# Imports the script (argv[1]) as a module and builds rank 0's share of the training data.
_PROBE = """
import importlib.util, os, sys
spec = importlib.util.spec_from_file_location("train_script", sys.argv[1])
sys.path.insert(0, os.path.dirname(spec.origin))  # checkpoints.py beside it
sys.modules.pop("checkpoints", None)  # another script's
script = importlib.util.module_from_spec(spec)
spec.loader.exec_module(script)
getattr(script, sys.argv[2])(num_shards=int(sys.argv[3]), shard_id=0)
"""
# The scripts' own refusal (templates/_data.py.j2, Sampler).
_REFUSED = re.compile(
    r"^error: data\.train\.factory: (a source without __getitem__ cannot be sharded)$", re.M
)
FACTORY = ("data", "train", "factory")
FIX = (
    "return a random-access source: a class with `__getitem__` and `__len__` given to ds.GeneratorDataset, "
    "or ds.NumpySlicesDataset of arrays"
)


def sharded_factory(loaded: LoadedConfig) -> bool:
    """Data parallel with an imported train dataset: only running its factory shows whether it shards."""
    cfg = loaded.config
    return cfg.parallel.mode == "data_parallel" and isinstance(cfg.data.train, ImportedData)


def shard_problems(
    loaded: LoadedConfig, *, python: str = sys.executable, timeout: float = 600
) -> list[Problem]:
    """[] when rank 0's share of data.train can be built under data parallel, else one problem at
    data.train.factory: the scripts' refusal with its fix, or what else failed."""
    from mscodegen.output.generate import plans_of
    from mscodegen.render import render
    from mscodegen.render.checkpoints import render_checkpoints

    if not sharded_factory(loaded):
        return []
    workers = loaded.config.parallel.workers
    with tempfile.TemporaryDirectory(prefix="mscodegen-shards-") as tmp:
        workdir = Path(tmp)
        script = workdir / SCRIPT_NAMES["native"]
        shared, plans = plans_of(loaded, workdir, ("native",))
        script.write_text(render(plans["native"]), encoding="utf-8")  # run, not read: black is not needed
        if (checkpoints := render_checkpoints(shared)) is not None:  # the script imports it
            (workdir / CHECKPOINTS_NAME).write_text(checkpoints, encoding="utf-8")
        function = shared.datasets[0].call.func  # train's: create_train_dataset(num_shards, shard_id)
        cmd = [python, "-c", _PROBE, script.name, function, str(workers)]
        try:
            done = subprocess.run(
                cmd, cwd=workdir, capture_output=True, text=True, errors="replace", timeout=timeout
            )
        except subprocess.TimeoutExpired:
            return [located(loaded, FACTORY, f"building rank 0's share of {workers} took over {timeout:g} s")]
    if done.returncode == 0:
        return []
    if refused := _REFUSED.search(done.stderr):
        message = (
            f"{refused.group(1)}: under data parallel ({workers} workers) every worker would train on "
            f"all of its data, so both scripts stop before training; {FIX}"
        )
    else:  # the one-batch runs passed: what failed is giving the dataset its sampler
        error = exception_line(done.stderr) or (done.stderr.strip().splitlines() or ["no output"])[-1]
        message = f"building rank 0's share of {workers} failed: {error}"
    return [located(loaded, FACTORY, message)]
