"""Every example runs as shipped: `mscodegen parity examples/X.yaml` exactly as a user runs it in a
checkout after `make demo` (which writes the fine-tuning example's weights with its helper)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))
PRETRAINED = Path("pretrained") / "resnet18_10classes.ckpt"


def test_examples_found():
    assert len(EXAMPLES) >= 10


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    """The examples folder as a checkout has it after `make demo`: the helper's weights written."""
    root = tmp_path_factory.mktemp("checkout") / "examples"
    shutil.copytree(REPO / "examples", root, ignore=shutil.ignore_patterns("pretrained", "__pycache__"))
    subprocess.run(
        [sys.executable, str(root / "make_pretrained.py"), str(root / PRETRAINED)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return root


@pytest.mark.slow
@pytest.mark.parametrize("config", EXAMPLES, ids=lambda p: p.stem)
def test_parity_on_the_example_as_shipped(config: Path, checkout: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mscodegen", "parity", f"examples/{config.name}", "--steps", "2"],
        cwd=checkout.parent,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "identical: 2 steps" in done.stdout, done.stdout[-2000:]
    assert "final weights equal" in done.stdout, done.stdout[-2000:]  # under msrun too (lenet_dp)
