"""Several machines: launch.sh's NNODES / NODE_RANK / MASTER_ADDR / MASTER_PORT / NPROC_PER_NODE.

The fast tests run launch.sh with a stand-in msrun. The slow one runs two "machines" on this host:
two network namespaces joined by a veth pair (node 0 at 10.201.0.1 runs the scheduler and rank 0,
node 1 at 10.201.0.2 runs rank 1), each launch.sh in its own directory, as on two machines. Two msrun
processes in one namespace cannot stand for two machines: msrun starts a scheduler wherever
MASTER_ADDR is a local address, and the second one fails to bind. It needs root and `ip` (iproute2).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from mscodegen.cli import main
from mscodegen.render.launch import LAUNCH_NAME
from mscodegen.run.msrun import _descendants, child_env, free_port
from mscodegen.run.observer import observed_env
from mscodegen.run.parity import RunResult, generate_both

from conftest import COLD_PYTHON, DP, MSRUN_TIMEOUT, write_yaml

SETTINGS = ("NNODES", "NODE_RANK", "MASTER_ADDR", "MASTER_PORT", "NPROC_PER_NODE")
ADDRESS = {0: "10.201.0.1", 1: "10.201.0.2"}  # inside the namespaces only: the host's network is untouched


@pytest.fixture(scope="module")
def launch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """launch.sh of the 2-worker DP config, written by `mscodegen new`."""
    out = tmp_path_factory.mktemp("multinode") / "dp"
    assert main(["new", str(write_yaml(out.parent, "dp", DP)), "--out", str(out)]) == 0
    return out / LAUNCH_NAME


def run_launch(launch: Path, **settings: str) -> subprocess.CompletedProcess[str]:
    """launch.sh x.py --max-steps 3, with `echo` as msrun and only `settings` of SETTINGS set
    (MASTER_PORT a free one unless given: node 0 checks that nothing listens on it)."""
    env = {k: v for k, v in os.environ.items() if k not in SETTINGS}
    env.update({"MSRUN": "echo", "MASTER_PORT": str(free_port()), **settings})
    return subprocess.run(
        ["bash", str(launch), "x.py", "--max-steps", "3"], env=env, capture_output=True, text=True, timeout=30
    )


def test_node_settings_reach_msrun(launch: Path) -> None:
    one = run_launch(launch).stdout.split()
    assert one[:4] == ["--worker_num=2", "--local_worker_num=2", "--node_rank=0", "--master_addr=127.0.0.1"]
    node1 = run_launch(launch, NNODES="2", NODE_RANK="1", MASTER_ADDR="10.0.0.1", MASTER_PORT="9000")
    assert node1.returncode == 0, node1.stderr
    assert node1.stdout.split() == [
        "--worker_num=2",
        "--local_worker_num=1",  # NPROC_PER_NODE defaults to parallel.workers / NNODES
        "--node_rank=1",
        "--master_addr=10.0.0.1",
        "--master_port=9000",
        "--log_dir=msrun_log",
        "--join=True",
        "--cluster_time_out=120",
        str(launch.parent / "x.py"),
        "--max-steps",
        "3",
    ]


def test_a_taken_master_port_fails_at_once(launch: Path) -> None:
    """Else msrun's scheduler fails to bind and the job ends only after the cluster time-out (120 s)."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        done = run_launch(launch, MASTER_PORT=port)
        assert done.returncode == 2, done.stdout + done.stderr
        assert (
            done.stderr
            == f"launch.sh: MASTER_PORT {port} is in use on 127.0.0.1: set MASTER_PORT to a free port\n"
        )
        node1 = run_launch(launch, MASTER_PORT=port, NNODES="2", NODE_RANK="1", MASTER_ADDR="10.0.0.1")
        assert node1.returncode == 0, node1.stderr  # only node 0 runs a scheduler


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {"NNODES": "2", "MASTER_ADDR": "10.0.0.1"},
            "NNODES=2: set NODE_RANK and MASTER_ADDR on every machine",
        ),
        ({"NNODES": "2", "NODE_RANK": "1"}, "NNODES=2: set NODE_RANK and MASTER_ADDR on every machine"),
        (
            {"NNODES": "2", "NODE_RANK": "1", "MASTER_ADDR": "127.0.0.1"},
            "address on the network, not 127.0.0.1",
        ),
        (
            {"NNODES": "2", "NODE_RANK": "2", "MASTER_ADDR": "10.0.0.1"},
            "NODE_RANK=2: must be 0 .. 1 (NNODES=2)",
        ),
        ({"NNODES": "3", "NODE_RANK": "0", "MASTER_ADDR": "10.0.0.1"}, "parallel.workers (2), not 3 x 0"),
        ({"NPROC_PER_NODE": "1"}, "NNODES x NPROC_PER_NODE must be parallel.workers (2), not 1 x 1"),
        ({"NNODES": "0"}, "NNODES must be at least 1"),
        ({"NODE_RANK": "-1"}, "NODE_RANK must be a whole number, not '-1'"),
        ({"MASTER_PORT": "81 18"}, "MASTER_PORT must be a whole number, not '81 18'"),
    ],
    ids=lambda value: "-".join(f"{k}={v}" for k, v in value.items()) if isinstance(value, dict) else "",
)
def test_inconsistent_settings_fail_at_once(launch: Path, settings: dict[str, str], message: str) -> None:
    """What msrun would report only after its cluster time-out (or never) stops launch.sh with exit 2."""
    done = run_launch(launch, **settings)
    assert (done.returncode, done.stdout) == (2, ""), done.stdout + done.stderr
    assert done.stderr.startswith("launch.sh: ") and message in done.stderr, done.stderr


# ---------------------------------------------------------------------------
# Two machines in two network namespaces (root)
# ---------------------------------------------------------------------------


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check, timeout=30)


def _kill_inside(namespace: str) -> None:
    """SIGKILL every process in `namespace`: `ip netns del` only removes the name of a namespace that
    still has processes (msrun's workers run in sessions of their own), and its veth pair with it."""
    for pid in _ip("netns", "pids", namespace, check=False).stdout.split():
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(pid), signal.SIGKILL)


def _remove_stale_namespaces() -> None:
    """Namespaces of an earlier test process that was SIGKILLed (its pid is in their names and gone)."""
    for line in _ip("netns", "list", check=False).stdout.splitlines():
        match = re.match(r"(mscodegen(\d+)[ab])\b", line)
        if match and not psutil.pid_exists(int(match.group(2))):
            _kill_inside(match.group(1))
            _ip("netns", "del", match.group(1), check=False)


def _interrupt(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@pytest.fixture
def two_hosts() -> Iterator[dict[int, str]]:
    """{node: namespace}: lo up in each, a veth pair between them (ADDRESS); always torn down."""
    if os.geteuid() != 0:
        pytest.skip("needs root: creates network namespaces (ip netns add)")
    if shutil.which("ip") is None:
        pytest.skip("needs the `ip` program (iproute2) to create network namespaces")
    _remove_stale_namespaces()
    namespaces = {node: f"mscodegen{os.getpid()}{'ab'[node]}" for node in (0, 1)}
    # A SIGTERM (a CI time-out, `kill`) would end Python without the teardown: make it an exception.
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        for name in namespaces.values():
            made = _ip("netns", "add", name, check=False)
            if made.returncode != 0:
                pytest.skip(f"cannot create a network namespace: {made.stderr.strip()}")
        a, b = namespaces[0], namespaces[1]
        _ip("-n", a, "link", "add", "va", "type", "veth", "peer", "name", "vb", "netns", b)
        for node, device in ((0, "va"), (1, "vb")):
            _ip("-n", namespaces[node], "addr", "add", f"{ADDRESS[node]}/24", "dev", device)
            _ip("-n", namespaces[node], "link", "set", "lo", "up")
            _ip("-n", namespaces[node], "link", "set", device, "up")
        yield namespaces
    finally:
        for name in namespaces.values():
            _kill_inside(name)
            _ip("netns", "del", name, check=False)
        signal.signal(signal.SIGTERM, previous)
    left = _ip("netns", "list").stdout
    assert not any(name in left for name in namespaces.values()), f"namespaces left behind: {left}"


def _wait_all(procs: dict[int, subprocess.Popen[bytes]], timeout: float) -> dict[int, int | None]:
    """Exit codes; None for a launcher still running after `timeout`, killed with its workers."""
    deadline = time.monotonic() + timeout
    codes: dict[int, int | None] = {}
    for node, proc in procs.items():
        try:
            codes[node] = proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            codes[node] = None
            for pid in [*_descendants(proc.pid), proc.pid]:  # workers run in sessions of their own
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            proc.wait()
    return codes


def _tail(path: Path) -> str:
    return path.read_text(errors="replace")[-2000:] if path.exists() else f"(no {path.name})"


@pytest.mark.slow
def test_two_machines_train_as_one(
    two_hosts: dict[int, str], dp_runs: dict[str, RunResult], tmp_path: Path
) -> None:
    """Node 0 and node 1 with one worker each: every rank's losses == the one-launcher 2-worker run's."""
    reference = dp_runs["native"].ranks  # the same config and script, both workers under one msrun
    scripts = generate_both(write_yaml(tmp_path, "dp", DP), tmp_path / "scripts")
    launch = scripts["native"].parent / LAUNCH_NAME
    assert ADDRESS[0] not in _ip("-n", two_hosts[1], "-brief", "addr").stdout  # two hosts, not one
    procs = {}
    for node in (0, 1):
        workdir = tmp_path / f"node{node}"  # each machine its own directory
        workdir.mkdir()
        # 8118 is free in a new namespace; each rank's records come from outside (parity's observer)
        # a fresh Python: the warm interpreter's children would run in its server's network namespace
        env = child_env(
            workdir / "msrun_log",
            port=8118,
            base=observed_env(scripts["native"], workdir),
            python=COLD_PYTHON,
        )
        env.update(NNODES="2", NODE_RANK=str(node), MASTER_ADDR=ADDRESS[0])
        cmd = ["ip", "netns", "exec", two_hosts[node], "bash", str(launch), str(scripts["native"])]
        with open(workdir / "launcher.out", "w") as out:
            procs[node] = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=out, stderr=subprocess.STDOUT)
    codes = _wait_all(procs, MSRUN_TIMEOUT)
    assert codes == {0: 0, 1: 0}, {n: _tail(tmp_path / f"node{n}" / "launcher.out") for n in (0, 1)}

    # the scheduler on node 0 only; each node runs its own rank and writes its own log
    logs = {
        node: sorted(p.name for p in (tmp_path / f"node{node}" / "msrun_log").iterdir()) for node in (0, 1)
    }
    assert logs == {0: ["scheduler.log", "worker_0.log"], 1: ["worker_1.log"]}
    assert len(reference[0]) == 6 and reference[0] != reference[1]  # each rank its own shard
    for rank in (0, 1):
        log = tmp_path / f"node{rank}" / f"loss.rank{rank}.jsonl"
        assert [json.loads(line) for line in log.read_text().splitlines()] == reference[rank], f"rank {rank}"
