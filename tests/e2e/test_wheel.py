"""From nothing to a trained quick start with the wheel alone, outside the repository:
`pip install mscodegen-*.whl`, `mscodegen init quickstart my.yaml`, `mscodegen new my.yaml`,
`python generated/my/train_model.py --max-steps 5`. The wheel carries the LICENSE.

The fresh environment installs the wheel without its dependencies and borrows them from the test's
own environment (a .pth line): the wheel's contents are what is tested, without downloading MindSpore.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from conftest import REPO

pytestmark = pytest.mark.slow


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{cmd}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done


def test_wheel_init_new_train_outside_the_repository(tmp_path):
    wheels = tmp_path / "dist"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(REPO)], tmp_path, env
    )
    (wheel,) = wheels.glob("mscodegen-*.whl")
    with zipfile.ZipFile(wheel) as archive:  # the license travels with the wheel (Apache-2.0, PEP 639)
        info = "-".join(wheel.name.split("-")[:2]) + ".dist-info"
        assert archive.read(f"{info}/licenses/LICENSE") == (REPO / "LICENSE").read_bytes()
        assert "License-Expression: Apache-2.0" in archive.read(f"{info}/METADATA").decode().splitlines()
    home = tmp_path / "fresh"
    venv.create(home, with_pip=False)
    python = home / "bin" / "python"
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    # install the wheel alone: unpack it where pip would (no network, no dependencies)
    _run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)],
        tmp_path,
        env,
    )
    (site / "borrowed_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    (home / "bin" / "mscodegen").write_text(
        f"#!{python}\nimport sys\nfrom mscodegen.cli import main\nsys.exit(main())\n"
    )
    (home / "bin" / "mscodegen").chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    env["PATH"] = f"{home / 'bin'}{os.pathsep}{env['PATH']}"
    where = _run([str(python), "-c", "import mscodegen; print(mscodegen.__file__)"], work, env).stdout
    assert where.startswith(str(site)), where  # the wheel's package, not the repository's
    _run(["mscodegen", "init", "quickstart", "my.yaml"], work, env)
    _run(["mscodegen", "new", "my.yaml"], work, env)
    # recorded from outside the script: the wheel ships the observer
    _run(
        ["mscodegen", "record", "generated/my/train_model.py", "--logs", "logs", "--", "--max-steps", "5"],
        work,
        env,
    )
    steps = [json.loads(line) for line in (work / "logs" / "loss.jsonl").read_text().splitlines()]
    assert [s["step"] for s in steps] == [1, 2, 3, 4, 5]
    assert all(s["loss"] > 0 for s in steps)
    assert not any(REPO.as_posix() in p.read_text() for p in (work / "generated" / "my").glob("*.py"))
