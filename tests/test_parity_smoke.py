"""The tiny config trains identically in both variants (the harness every parity test uses)."""

import pytest

from mscodegen.parity import step_differences

from conftest import run_both

pytestmark = pytest.mark.slow


def test_tiny_config_identical_losses_and_eval(write_config, tmp_path):
    model, native = run_both(write_config(), tmp_path)
    assert len(model.steps) == 12  # 48 samples / batch 8 = 6 steps x 2 epochs
    assert step_differences(model.steps, native.steps) == []
    assert [e["metrics"] for e in model.evals] == [e["metrics"] for e in native.evals]
    assert len(model.evals) == 2
