"""bench's measuring arithmetic (steady rate, call/host split, ratios, the bit-for-bit loss check) and
the worker's pure parts (the command line a script gets, reading a loss), on values written by hand;
no MindSpore and no timing assertions. One slow test runs the worker on a tiny script."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from bench.__main__ import first_difference, loss_check, ratio_rows, split_rows, steady, training_table
from bench.worker import loss_value, script_argv

from conftest import REPO


def test_steady_drops_warm_up_and_splits_each_step_into_call_and_host():
    # 8 steps (fewer than 20: the first 3 are warm-up). Step j begins at 1.0*j, its cell returns
    # 0.75 later; step ends (after the callbacks) 0.8 after the begin: gaps 1.0, call 0.75, host 0.25.
    begins = [1.0 * j for j in range(8)]
    call_ends = [b + 0.75 for b in begins]
    ends = [b + 0.8 for b in begins]
    out = steady(ends, begins, call_ends)
    assert out["timed_steps"] == 4  # gaps between ends[3..7]
    assert out["steps_per_s"] == pytest.approx(1.0)
    assert out["median_call_ms"] == pytest.approx(750.0)
    assert out["median_host_ms"] == pytest.approx(250.0)


def test_steady_without_begins_gives_no_split():
    out = steady([0.5 * j for j in range(10)])
    assert out["steps_per_s"] == pytest.approx(2.0)
    assert "median_call_ms" not in out


def test_steady_rate_is_the_median_gap_and_the_span_keeps_epoch_ends():
    # 30 steps of 1 s, every 10th gap 6 s (an epoch end with an evaluation): the step rate ignores
    # them, the throughput over the same steps does not
    ends, t = [], 0.0
    for j in range(30):
        t += 6.0 if j % 10 == 0 and j else 1.0
        ends.append(t)
    out = steady(ends)
    assert out["steps_per_s"] == pytest.approx(1.0)
    assert out["timed_steps"] == 24  # 30 steps, the first 5 dropped: 24 gaps, two of them 6 s
    assert out["span_steps_per_s"] == pytest.approx(24 / 34)


def test_split_rows_takes_the_host_difference_per_round():
    def run(call: float, host: float) -> dict:
        return {"median_call_ms": call, "median_host_ms": host}

    rounds = [
        {"floor": run(90, 0.0), "model": run(90, 0.5), "native": run(91, 0.7)},
        {"floor": run(80, 0.0), "model": run(81, 0.6), "native": run(80, 0.7)},
        {"floor": run(85, 0.0), "model": {"error": "exit 1"}, "native": run(85, 0.9)},
    ]
    out = split_rows(rounds, ("floor", "model", "native"))
    assert out["model"]["call"]["values"] == [90, 81]
    assert out["host native-model"]["values"] == pytest.approx([0.2, 0.1])  # round 3 has no model
    assert out["host native-model"]["median"] == pytest.approx(0.15)


def test_a_cost_point_the_rows_measured_is_taken_from_them():
    from bench.__main__ import _from_row

    def run(sps: float, rss: float) -> dict:
        return {"steps_per_s": sps, "peak_rss_mb": rss}

    rows = [
        {
            "config": "bench_lenet_fp32",
            "steps_per_s": {"floor": {"median": 15.0}, "model": {"median": 14.0}, "native": {"median": 14.5}},
            "rounds": [
                {"floor": run(15, 400), "model": run(14, 470)},
                {"floor": run(15, 420), "model": run(14, 480)},
            ],
        }
    ]
    # bench_lenet_fp32 trains with batch 32: that point is the row; batch 16 is not
    assert _from_row(rows, "bench_lenet_fp32", 32) == {
        "floor": {"steps_per_s": 15.0, "peak_rss_mb": 410.0},
        "model": {"steps_per_s": 14.0, "peak_rss_mb": 475.0},
    }
    assert _from_row(rows, "bench_lenet_fp32", 16) is None
    assert _from_row([], "bench_lenet_fp32", 32) is None


def test_ratios_are_taken_per_round_for_every_pair_a_row_has():
    rounds = [
        {"reference": {"steps_per_s": 10.0}, "model": {"steps_per_s": 9.0}, "native": {"steps_per_s": 10.0}},
        {"reference": {"steps_per_s": 5.0}, "model": {"steps_per_s": 5.0}, "native": {"steps_per_s": 5.5}},
        {"reference": {"steps_per_s": 8.0}, "model": {"error": "exit 1"}, "native": {"steps_per_s": 8.0}},
    ]
    out = ratio_rows(rounds)
    assert set(out) == {"native/model", "model/reference", "native/reference"}
    assert out["model/reference"]["values"] == pytest.approx([0.9, 1.0])  # round 3 has no model
    assert out["native/reference"]["values"] == pytest.approx([1.0, 1.1, 1.0])
    assert out["native/reference"]["verdict"] == "met"  # target 0.95, interval [1.0, 1.1]
    assert "floor" not in str(list(out))


def test_first_difference_is_bit_for_bit_and_counts_a_missing_step():
    a = [float(np.float32(2.3025851)), float(np.float32(2.29))]
    assert first_difference(a, list(a)) is None
    one_ulp = float(np.nextafter(np.float32(a[1]), np.float32(3)))
    assert first_difference(a, [a[0], one_ulp]) == 2
    assert first_difference(a, a[:1]) == 2
    assert first_difference(a[:1], a) == 2


def test_the_loss_check_compares_every_run_with_the_first_run_of_the_base_kind():
    ref = [2.5, 2.25, 2.0]
    rounds = [
        {"reference": {"losses": ref}, "model": {"losses": ref}, "native": {"losses": ref}},
        {
            "reference": {"losses": ref},
            "model": {"losses": [2.5, 2.25, 2.0000002]},
            "native": {"losses": ref},
        },
        {"reference": {"losses": ref}, "model": {"error": "exit 1"}, "native": {"losses": ref}},
    ]
    out = loss_check(rounds, "reference")
    assert out["base"] == "reference"
    assert out["kinds"]["reference"] == {"runs": 3, "steps": 3, "equal": True}
    assert out["kinds"]["native"]["equal"] is True
    model = out["kinds"]["model"]
    assert model["equal"] is False and model["runs"] == 2
    assert model["first_difference"] == {"run": 2, "step": 3, "reference": 2.0, "model": 2.0000002}
    row = {"config": "mnist_quickstart", "steps_per_s": {}, "ratios": {}, "losses": out}
    text = training_table([row])
    assert "3 steps vs reference: reference 3 runs equal across runs;" in text
    assert "model DIFFERS from step 3 (run 2: 2.0000002 vs 2.0); native equal (3 runs)" in text


def test_a_script_gets_only_the_flags_its_text_names(tmp_path):
    lean = tmp_path / "train_model.py"
    lean.write_text('parser.add_argument("--epochs", type=int)\nparser.add_argument("--device")\n')
    assert script_argv(lean, 40) == [str(lean), "--epochs", "40", "--device", "CPU"]
    full = tmp_path / "train_native.py"
    full.write_text('"--epochs" "--max-steps" "--data-dir"')
    assert script_argv(full, 40, "/data") == [
        str(full),
        "--epochs",
        "40",
        "--max-steps",
        "40",
        "--data-dir",
        "/data",
    ]
    assert script_argv(full, 40) == [str(full), "--epochs", "40", "--max-steps", "40"]


def test_a_loss_is_the_output_or_the_first_item_of_a_tuple():
    class FakeTensor:
        def __init__(self, value: float) -> None:
            self.value = np.float32(value)

        def asnumpy(self) -> np.ndarray:
            return np.asarray(self.value)

    assert loss_value(FakeTensor(2.5)) == 2.5
    assert loss_value((FakeTensor(1.25), FakeTensor(0.0), FakeTensor(1024.0))) == 1.25
    assert loss_value(np.float32(0.1)) == float(np.float32(0.1))  # exact: float32 -> float is exact


TINY_SCRIPT = """
import argparse

import mindspore as ms
import numpy as np
from mindspore import nn

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=1)
args = parser.parse_args()
ms.set_context(mode=ms.PYNATIVE_MODE)
ms.set_seed(0)
net = nn.Dense(4, 1)
step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.01))
step.set_train()
x, y = ms.Tensor(np.ones((8, 4), np.float32)), ms.Tensor(np.full((8, 1), 3.0, np.float32))
net.set_train(False)
net(x)  # a call of a cell that is not a train cell: not timed
for epoch in range(args.epochs):
    for _ in range(2):
        step(x, y)
print("trained all epochs")
"""


@pytest.mark.slow
def test_the_worker_times_a_script_from_outside_and_stops_it(tmp_path):
    # a script with no --max-steps: 2 steps an epoch, --epochs 3 gives 6; the 4th call ends it
    script = tmp_path / "tiny.py"
    script.write_text(TINY_SCRIPT)
    out = tmp_path / "out.json"
    for kind in ("model", "floor"):
        proc = subprocess.run(
            [sys.executable, "-m", "bench.worker", kind, str(script), "3", str(out)],
            cwd=tmp_path,
            env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        result = json.loads(out.read_text())
        assert result["steps"] == 3 and len(result["begins"]) == 3
        assert "trained all epochs" not in proc.stdout
        assert result["ended_by"] == ("step limit" if kind == "model" else "exit")
        if kind == "model":
            losses = result["losses"]
            assert losses[0] > losses[1] > losses[2]  # it trained: the loss falls
        else:
            assert result["losses"] == losses  # the floor: same cell parts, same batches, same losses
