"""examples/sequence.yaml (issue 10, examples): an Embedding + LSTM + Dense classifier over padded token
ids from an imported dataset factory; it validates, both variants train identically in GRAPH mode, and
the factory's rows are what the config's comment says."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mscodegen.config.load import load_config
from mscodegen.run.parity import step_differences

from conftest import REPO, kept_runs, shipped_parity

EXAMPLE = REPO / "examples" / "sequence.yaml"

# Run in a child: the test process never imports MindSpore (as mscodegen itself).
DUMP_ROWS = """\
import json, sys
sys.path.insert(0, sys.argv[1])
from sequence_parts import token_sequences
out = {}
for split in ("train", "test"):
    rows = list(token_sequences(split).create_tuple_iterator(output_numpy=True))
    out[split] = {
        "tokens": [r[0].tolist() for r in rows],
        "label": [r[1].tolist() for r in rows],
        "dtypes": sorted({str(r[0].dtype) for r in rows} | {str(r[1].dtype) for r in rows}),
    }
print(json.dumps(out))
"""


def test_the_sequence_example_validates() -> None:
    config = load_config(EXAMPLE)
    assert config is not None


@pytest.mark.slow
def test_the_factory_yields_padded_sequences_labelled_by_token_7() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", DUMP_ROWS, str(REPO / "examples")], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    assert [len(data["train"]["label"]), len(data["test"]["label"])] == [64, 32]
    for split in ("train", "test"):
        tokens = np.array(data[split]["tokens"])
        labels = np.array(data[split]["label"])
        assert data[split]["dtypes"] == ["int32"]
        assert tokens.shape[1] == 12
        assert tokens.min() >= 0 and tokens.max() <= 19  # vocabulary 20, 0 is padding
        for row, label in zip(tokens, labels, strict=True):
            used = int(np.count_nonzero(row))
            assert 3 <= used <= 12
            assert (row[:used] != 0).all() and (row[used:] == 0).all()  # right-padded with 0
            expected = 1 if 7 in row.tolist() else 0  # the label rule, computed here
            assert label == expected
        assert 0 < labels.sum() < len(labels)  # both classes occur


@pytest.mark.slow
def test_sequence_example_losses_and_final_weights_are_identical(checkout: Path, tmp_path: Path) -> None:
    """The whole run as shipped (`mscodegen parity` in a checkout; it compares the final weights)."""
    shipped_parity(checkout, "sequence", "--steps", "100000", "--keep", str(tmp_path))
    model, native = kept_runs(tmp_path)
    assert step_differences(model.steps, native.steps) == []
    losses = [r["loss"] for r in model.steps]
    assert losses == [r["loss"] for r in native.steps]
    assert len(model.steps) == 2 * (64 // 16)  # 64 sequences, batch 16, 2 epochs
    assert [e["metrics"] for e in model.evals] == [e["metrics"] for e in native.evals]
    assert set(model.evals[-1]["metrics"]) == {"accuracy", "loss"}
    assert losses[-1] < losses[0]  # it learned something in 8 steps
