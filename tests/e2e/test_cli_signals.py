"""SIGTERM or Ctrl-C (SIGINT) to `mscodegen parity` stops the training script it is running, prints one
line and exits 128 + the signal (issue 30: the scripts ran on after SIGTERM, and Ctrl-C printed a
traceback)."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest
import yaml

from conftest import COLD_PYTHON, TINY, merge

pytestmark = pytest.mark.slow


def _training_scripts(parity: psutil.Process) -> list[psutil.Process]:
    try:
        return [p for p in parity.children(recursive=True) if any("train_" in part for part in p.cmdline())]
    except psutil.Error:
        return []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_parity_and_both_scripts(signum: int, tmp_path: Path) -> None:
    config = tmp_path / "long.yaml"
    config.write_text(yaml.safe_dump(merge(TINY, {"train": {"epochs": 5000}}), sort_keys=False))
    proc = subprocess.Popen(
        [
            COLD_PYTHON,
            "-m",
            "mscodegen",
            "parity",
            str(config),
            "--steps",
            "100000",
        ],  # scripts are its children
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # the signal reaches mscodegen alone, as `kill PID` sends it
    )
    try:
        parity = psutil.Process(proc.pid)
        deadline = time.monotonic() + 180
        while not (scripts := _training_scripts(parity)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert scripts, "a variant should be running"
        time.sleep(2)  # it is training
        proc.send_signal(signum)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 128 + signum, stderr[-2000:]
    assert "Traceback" not in stderr
    name = signal.Signals(signum).name
    assert (
        stderr.strip().splitlines()[-1].startswith(f"mscodegen parity: interrupted by {name}; stopped the ")
    )
    gone, alive = psutil.wait_procs(scripts, timeout=10)
    assert alive == [], [p.pid for p in alive]
