"""Running a generated data-parallel script under msrun (through its launch.sh), for parity and tests.

Nothing here imports MindSpore: msrun is a separate program, started by launch.sh.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import IO

import psutil

from mscodegen.render.launch import LAUNCH_NAME


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now (for msrun's scheduler)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


# launch.sh's several-machine settings: a run here is one machine, whatever the shell exports
NODE_SETTINGS = ("NNODES", "NODE_RANK", "MASTER_ADDR", "NPROC_PER_NODE")


def child_env(
    log_dir: Path, port: int | None = None, base: dict[str, str] | None = None, python: str | None = None
) -> dict[str, str]:
    """Environment for launch.sh: one machine, this Python's bin directory (or `python`'s) first on PATH.

    msrun spawns `python` from PATH for the scheduler and every worker, so it must find the
    interpreter that has MindSpore (the one running mscodegen, or parity --python), not whatever
    `python` is first.
    """
    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in NODE_SETTINGS}
    bin_dir = str(Path(python or sys.executable).parent)
    env["PATH"] = os.pathsep.join([bin_dir, *(p for p in env.get("PATH", "").split(os.pathsep) if p)])
    env["MSRUN"] = str(Path(bin_dir) / "msrun") if (Path(bin_dir) / "msrun").exists() else "msrun"
    env["MASTER_PORT"] = str(port or free_port())
    env["MSRUN_LOG_DIR"] = str(log_dir)
    return env


def launch_command(script: Path, args: list[str]) -> list[str]:
    """`bash <dir>/launch.sh <script> <args...>`: launch.sh lives next to the script."""
    return ["bash", str(script.parent / LAUNCH_NAME), str(script), *args]


def run_launched(cmd: list[str], *, cwd: Path, env: dict[str, str], stdout: IO[str], timeout: float) -> int:
    """Run msrun (via launch.sh) and wait; on timeout kill it, its scheduler and its workers.

    msrun starts each worker in a session of its own (setsid), so killing msrun's process group is
    not enough: the workers are found as msrun's descendants and killed by pid.
    """
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=stdout, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        for pid in [*_descendants(proc.pid), proc.pid]:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        proc.wait()
        raise


def _descendants(pid: int) -> list[int]:
    """Every process below `pid` (psutil), children before their parents' kill."""
    try:
        return [child.pid for child in psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        return []


def rank_logs(path: Path) -> dict[int, Path]:
    """{rank: file} for per-rank logs named <stem>.rank<N><suffix> next to `path` (the observer's, under msrun)."""
    found = {}
    for candidate in path.parent.glob(f"{path.stem}.rank*{path.suffix}"):
        rank = candidate.name[len(f"{path.stem}.rank") : len(candidate.name) - len(path.suffix)]
        if rank.isdecimal():
            found[int(rank)] = candidate
    return dict(sorted(found.items()))
