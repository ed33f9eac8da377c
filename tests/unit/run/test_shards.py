"""`validate --run` under data parallel: data.train.factory's dataset must take the script's sampler (issue 35).

A generator function ignores DistributedSampler, so every worker would train on all the data; the scripts
stop at start (tests/e2e/test_parallel.py), and validate --run says so at the key, with the fix.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mscodegen.cli import main
from mscodegen.config.load import load_config
from mscodegen.run import preflight
from mscodegen.run.shards import shard_problems

PARTS = """\
import numpy as np
from mindspore import dataset as ds

SAMPLES = [(np.full((1, 4, 4), k, np.float32), np.int32(k % 2)) for k in range(16)]


class Table:  # random access
    def __getitem__(self, index):
        return SAMPLES[index]

    def __len__(self):
        return len(SAMPLES)


def table():
    return ds.GeneratorDataset(Table(), column_names=["image", "label"], shuffle=False)


def stream():
    def generate():
        yield from SAMPLES

    return ds.GeneratorDataset(generate, column_names=["image", "label"], shuffle=False)
"""

CONFIG = """\
network: {kind: builtin, name: mlp, hidden: [4], num_classes: 2, input_shape: [1, 4, 4]}
data:
  train:
    kind: import
    factory: parts:FACTORY
    batch_size: 4
optimizer: {name: momentum}
parallel: {mode: data_parallel, workers: 2}
"""


def config(tmp_path: Path, factory: str, text: str = CONFIG) -> Path:
    (tmp_path / "parts.py").write_text(PARTS)
    path = tmp_path / f"{factory}.yaml"
    path.write_text(text.replace("FACTORY", factory))
    return path


@pytest.mark.slow
def test_a_generator_source_is_refused_at_its_key_and_a_table_passes(tmp_path: Path) -> None:
    """Each is one child that imports the data-parallel script and builds rank 0's share."""
    refused = shard_problems(load_config(config(tmp_path, "stream")))
    assert [(p.path, p.line, p.column) for p in refused] == [("data.train.factory", 5, 14)]
    assert refused[0].message == (
        "a source without __getitem__ cannot be sharded: under data parallel (2 workers) every worker would "
        "train on all of its data, so both scripts stop before training; return a random-access source: a "
        "class with `__getitem__` and `__len__` given to ds.GeneratorDataset, or ds.NumpySlicesDataset of arrays"
    )
    # with checkpoints the script imports checkpoints.py: the check writes it beside the script
    with_checkpoints = CONFIG + "callbacks: {checkpoint: {every_steps: 2}}\n"
    assert shard_problems(load_config(config(tmp_path, "table", with_checkpoints))) == []


def test_without_data_parallel_no_child_runs(tmp_path: Path) -> None:
    text = CONFIG.replace("parallel: {mode: data_parallel, workers: 2}\n", "")
    assert shard_problems(load_config(config(tmp_path, "stream", text)), python="/nonexistent/python") == []


def test_another_failure_of_the_check_is_reported_with_its_error(tmp_path: Path) -> None:
    """A stand-in child that fails otherwise (the one-batch runs before it passed)."""
    fake = tmp_path / "python.sh"
    fake.write_text(
        '#!/bin/sh\necho "Traceback (most recent call last):\nValueError: no sampler here" >&2\nexit 1\n'
    )
    fake.chmod(0o755)
    found = shard_problems(load_config(config(tmp_path, "table")), python=str(fake))
    assert [(p.path, p.message) for p in found] == [
        ("data.train.factory", "building rank 0's share of 2 failed: ValueError: no sampler here")
    ]


def test_validate_without_run_says_the_factory_is_not_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = config(tmp_path, "stream")
    assert main(["validate", str(path)]) == 0  # no MindSpore: the factory is not called
    out, err = capsys.readouterr()
    assert out == f"{path}: ok\n"
    assert err == (
        f"note: {path}: data.train.factory is not called without --run: under data parallel its dataset "
        "must be random-access (__getitem__) to be sharded; validate --run checks it\n"
    )
    alone = config(tmp_path, "stream", CONFIG.replace("parallel: {mode: data_parallel, workers: 2}\n", ""))
    assert main(["validate", str(alone)]) == 0
    assert capsys.readouterr() == (f"{alone}: ok\n", "")  # one process: nothing to shard


def test_validate_run_says_the_factory_was_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = config(tmp_path, "table")
    monkeypatch.setattr(preflight, "run_preflight", lambda *_, **__: [])  # the runs and the check passed
    assert main(["validate", str(path), "--run"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{path}: ok (both variants trained and evaluated one batch)",
        f"{path}: data.train.factory's dataset takes a sampler per worker (data parallel)",
    ]
