"""Every example runs as shipped: `mscodegen parity examples/X.yaml` exactly as a user runs it in a
checkout after `make demo` (which writes the fine-tuning example's weights with its helper)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import REPO, shipped_parity

EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))
# Examples whose own test makes this same call (conftest.shipped_parity) for the whole run, with --keep,
# and asserts on the kept logs: one run of both variants feeds both tests.
OWN_TEST = {
    "dcgan_digits": "test_gan_parity.py",
    "diabetes": "test_metric_defaults.py",
    "diabetes_csv": "test_csv_runs.py",
    "digits_augment": "test_pipelines.py",
    "resnet18_finetune": "test_finetune.py",
    "sequence": "test_sequence_example.py",
    "two_input": "test_columns.py",
}


def test_examples_found():
    assert len(EXAMPLES) >= 10


def test_the_examples_left_to_their_own_tests_run_as_shipped_there():
    for example, test in OWN_TEST.items():
        text = (Path(__file__).parent / test).read_text(encoding="utf-8")
        assert f'shipped_parity(checkout, "{example}", ' in text, (example, test)


@pytest.mark.slow
@pytest.mark.parametrize("config", [c for c in EXAMPLES if c.stem not in OWN_TEST], ids=lambda p: p.stem)
def test_parity_on_the_example_as_shipped(config: Path, checkout: Path) -> None:
    done = shipped_parity(checkout, config.stem, "--steps", "2")
    assert "identical: 2 steps" in done.stdout, done.stdout[-2000:]
