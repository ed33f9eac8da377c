"""--resume latest under msrun: per rank, a stopped or preempted data-parallel run resumed on the same
number of workers equals the uninterrupted run (issue 24).

The uninterrupted run is conftest's dp_runs native job (the DP config, 6 steps per rank, final weights
saved by rank 0), for both variants. The runs here use DP plus a checkpoint every 2 steps: checkpointing
changes what is written, not what is trained, so their losses and weights must be == those. Rank 0 writes the
checkpoints and every rank loads one, so both ranks share the --output-dir, as on one machine (on
several, it must be shared storage).

Budget (msrun jobs cost ~30-40 s each on 2 cores): the native variant is stopped the hard way, one
worker SIGKILLed as a preempted job is; the model variant is stopped by --max-steps. Each resumes
with --resume latest.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from mscodegen.run.parity import SAVE_WEIGHTS, RunResult, generate_both, run_script
from mscodegen.run.weights import compare_checkpoints

from conftest import DP, MSRUN_TIMEOUT, PROBE_IMPORT, dp_weights, merge, write_yaml

DP_CHECKPOINTS = merge(DP, {"callbacks": {"checkpoint": {"every_steps": 2, "keep_max": 2, "prefix": "dp"}}})

# A preempted worker: the generated script $PREEMPT_SCRIPT, run as msrun runs it, except that rank
# $PREEMPT_RANK SIGKILLs itself right after its train cell returns step $PREEMPT_STEP (and parity's
# observer, which wraps the same call underneath, has recorded it).
PREEMPTED = (
    PROBE_IMPORT
    + """
import importlib.util, os, signal, sys

from mindspore import nn

call, steps = nn.Cell.__call__, []


def call_then_die(cell, *args, **kwargs):
    outputs = call(cell, *args, **kwargs)
    if isinstance(cell._cells.get("optimizer"), nn.Optimizer) and cell.training:
        steps.append(1)
        if len(steps) == int(os.environ["PREEMPT_STEP"]) and os.environ["RANK_ID"] == os.environ["PREEMPT_RANK"]:
            os.kill(os.getpid(), signal.SIGKILL)
    return outputs


nn.Cell.__call__ = call_then_die
target = os.environ["PREEMPT_SCRIPT"]
script = import_script(target, "preempted")  # in sys.modules: graph mode looks it up
sys.argv[0] = target
script.train(script.parse_args())
"""
)


def _run(script: Path, workdir: Path, *args: str, env: dict[str, str] | None = None) -> RunResult:
    return run_script(
        script,
        workdir,
        variant=script.stem,
        timeout=MSRUN_TIMEOUT,
        distributed=True,
        extra_args=args,
        env=env,
    )


def _resumed_at(result: RunResult) -> dict[int, str]:
    """{rank: 'checkpoint name at step N'} from each worker's log."""
    assert result.output_dir is not None
    found = {}
    for rank in (0, 1):
        log = (result.output_dir.parent / "msrun_log" / f"worker_{rank}.log").read_text(errors="replace")
        match = re.search(r"^resumed from \S*/(\S+) \(run \S+\) at step (\d+)$", log, re.MULTILINE)
        found[rank] = f"{match.group(1)} at step {match.group(2)}" if match else "not resumed"
    return found


def _assert_same_weights(resumed: Path, uninterrupted: Path) -> None:
    assert compare_checkpoints(resumed, uninterrupted, labels=("resumed", "uninterrupted")) == []


@pytest.mark.slow
def test_native_resumes_a_preempted_job_exactly(dp_runs: dict[str, RunResult], tmp_path: Path) -> None:
    """Rank 1 is SIGKILLed after step 3: msrun stops the job (exit 1); rank 0's checkpoint of step 2
    is the latest; --resume latest on both ranks trains steps 3..6 == the uninterrupted run."""
    reference = dp_runs["native"]
    script = generate_both(write_yaml(tmp_path, "dp", DP_CHECKPOINTS), tmp_path / "scripts")["native"]
    preempted = script.with_name("preempted.py")  # next to launch.sh, which run_script uses
    preempted.write_text(PREEMPTED)
    output = tmp_path / "output"  # one directory for both ranks and both runs
    # MS_NODE_TIMEOUT: msrun kills the other workers at once, then waits this long (default 30 s)
    # for its scheduler to give the dead node up
    env = dict(
        os.environ, PREEMPT_SCRIPT=str(script), PREEMPT_RANK="1", PREEMPT_STEP="3", MS_NODE_TIMEOUT="5"
    )
    killed = _run(preempted, tmp_path / "killed", "--output-dir", str(output), env=env)
    assert killed.returncode == 1, killed.log_tail
    launcher = (tmp_path / "killed" / "stdout.txt").read_text(errors="replace")
    assert re.search(r"Worker process \d+ exit with exception. Error code: -9", launcher), killed.log_tail
    # rank 1 logged step 3 and died; rank 0 may be killed by msrun (it looks every second) before it
    # logs step 3 too. Rank 0 saved step 2's checkpoint before step 3's all-reduce, which rank 1 finished.
    assert len(killed.ranks[1]) == 3 and len(killed.ranks[0]) in (2, 3), killed.ranks
    assert sorted(p.name for p in output.joinpath("checkpoints").glob("*/*.ckpt")) == ["dp-1_2.ckpt"]

    weights = tmp_path / "weights.ckpt"
    resumed = _run(
        script,
        tmp_path / "resumed",
        "--output-dir",
        str(output),
        "--resume",
        "latest",
        SAVE_WEIGHTS,
        str(weights),
    )
    assert resumed.returncode == 0, resumed.log_tail
    assert _resumed_at(resumed) == {0: "dp-1_2.ckpt at step 2", 1: "dp-1_2.ckpt at step 2"}
    for rank in (0, 1):
        assert killed.ranks[rank] == reference.ranks[rank][: len(killed.ranks[rank])], (
            f"rank {rank} before the kill"
        )
        assert resumed.ranks[rank] == reference.ranks[rank][2:], f"rank {rank} after resuming"
    _assert_same_weights(weights, dp_weights(reference))


@pytest.mark.slow
def test_model_resumes_a_stopped_job_exactly(dp_runs: dict[str, RunResult], tmp_path: Path) -> None:
    """--max-steps 3 ends the first run with a checkpoint (ModelCheckpoint saves when training ends);
    --resume latest on both ranks trains steps 4..6 == the uninterrupted run. The uninterrupted run is the
    native loop's: Model's plain path equals it per rank, before the stop and after the resume, and in
    the final weights (this is where that equality is proven on the tiny config; no Model job of its own)."""
    reference = dp_runs["native"]
    script = generate_both(write_yaml(tmp_path, "dp", DP_CHECKPOINTS), tmp_path / "scripts")["model"]
    output = tmp_path / "output"
    stopped = _run(script, tmp_path / "stopped", "--output-dir", str(output), "--max-steps", "3")
    assert stopped.returncode == 0, stopped.log_tail
    weights = tmp_path / "weights.ckpt"
    resumed = _run(
        script,
        tmp_path / "resumed",
        "--output-dir",
        str(output),
        "--resume",
        "latest",
        SAVE_WEIGHTS,
        str(weights),
    )
    assert resumed.returncode == 0, resumed.log_tail
    assert set(_resumed_at(resumed).values()) == {"dp-1_3.ckpt at step 3"}
    for rank in (0, 1):
        assert stopped.ranks[rank] == reference.ranks[rank][:3], f"rank {rank} before stopping"
        assert resumed.ranks[rank] == reference.ranks[rank][3:], f"rank {rank} after resuming"
    _assert_same_weights(weights, dp_weights(reference))
