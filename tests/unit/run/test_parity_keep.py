"""parity --keep with a relative path, and msrun's process-tree walk (no MindSpore run)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from mscodegen.run import msrun, parity
from mscodegen.run.parity import RunResult


def test_relative_keep_is_resolved_once(tmp_path, monkeypatch) -> None:
    config = Path("examples/lenet_digits.yaml").resolve()
    seen: list[tuple[Path, Path]] = []

    def fake_run(script, workdir, **kwargs):
        seen.append((script, workdir))
        return RunResult(variant=kwargs["variant"], returncode=1, seconds=0.0, log_tail="stop")

    monkeypatch.setattr(parity, "_has_mindspore", lambda: True)
    monkeypatch.setattr(parity, "run_script", fake_run)
    monkeypatch.chdir(tmp_path)
    assert parity.run_parity(config, steps=1, keep=Path("kept")) == 1
    script, workdir = seen[0]
    assert workdir.is_absolute() and script.is_absolute()
    assert workdir.parent == tmp_path / "kept"
    assert script.exists() and script.parent == tmp_path / "kept" / "scripts"


def test_descendants_finds_grandchildren() -> None:
    proc = subprocess.Popen(["sh", "-c", "sleep 30 & sleep 30 & wait"])
    try:
        time.sleep(0.3)
        kids = msrun._descendants(proc.pid)
        assert len(kids) == 2 and proc.pid not in kids
    finally:
        for pid in [*msrun._descendants(proc.pid), proc.pid]:
            subprocess.run(["kill", str(pid)], check=False)
        proc.wait()
    assert msrun._descendants(2**22 + 12345) == []
    assert sys.stdlib_module_names  # imports.py relies on it (py>=3.10)


def test_keep_naming_a_file_is_a_usage_error_before_anything_runs(tmp_path, capsys) -> None:
    """Issue 30: --keep FILE trained both variants, then failed (exit 1); it is refused at once, exit 2."""
    from mscodegen.cli import main

    file = tmp_path / "kept.txt"
    file.write_text("")
    assert main(["parity", "examples/lenet_digits.yaml", "--keep", str(file)]) == 2
    assert (
        capsys.readouterr().err.strip()
        == f"error: --keep {file}: is a file; give a folder (created if missing)"
    )
