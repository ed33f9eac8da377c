"""callbacks.checkpoint.keep_max_by (mindcv's top_k): a run of each variant keeps exactly the keep_max
checkpoints with the best accuracy, read from the console's 'Eval result' lines; both keep the same files
with the same weights; --resume latest finds them and resumes exactly."""

from __future__ import annotations

import ast
import os
import re
import time
from pathlib import Path

import numpy as np
import pytest

from mscodegen.run.parity import generate_both

from conftest import TINY, import_script, run_plain

pytestmark = pytest.mark.slow

EPOCHS, KEEP = 3, 2
STEPS_PER_EPOCH = TINY["data"]["train"]["num_samples"] // TINY["data"]["train"]["batch_size"]  # 48 / 8
RANKED = {
    "train": {"epochs": EPOCHS},
    "eval": {"every_epochs": 1, "metrics": [{"name": "accuracy"}, {"name": "loss"}]},
    "callbacks": {
        "checkpoint": {
            "every_epochs": 1,
            "keep_max": KEEP,
            "prefix": "tiny",
            "keep_max_by": {"monitor": "accuracy"},
        }
    },
}
EVAL_LINE = re.compile(r"^Eval result: epoch (\d+), metrics: (\{.*\})$", re.MULTILINE)


def evaluations(stdout: str) -> dict[int, dict[str, float]]:
    """{epoch: metrics} as the console printed them."""
    return {int(epoch): ast.literal_eval(metrics) for epoch, metrics in EVAL_LINE.findall(stdout)}


def tensors(path: Path) -> dict[str, np.ndarray]:
    import mindspore as ms

    saved = ms.load_checkpoint(str(path), crc_check=True)
    return {name: value.asnumpy() for name, value in saved.items() if isinstance(value, ms.Tensor)}


def test_the_best_two_of_three_evaluations_kept_alike_in_both_variants(write_config, tmp_path) -> None:
    scripts = generate_both(write_config(RANKED), tmp_path / "scripts")
    kept: dict[str, dict[str, dict[str, np.ndarray]]] = {}
    printed: dict[str, dict[int, dict[str, float]]] = {}
    for variant, script in scripts.items():
        run = run_plain(script, "--output-dir", "out", cwd=tmp_path / variant)
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        printed[variant] = evals = evaluations(run.stdout)
        assert sorted(evals) == [1, 2, 3], run.stdout[-2000:]
        # the test's own ranking: highest accuracy first, the earlier evaluation first among equals
        best = sorted(evals, key=lambda epoch: (-evals[epoch]["accuracy"], epoch))[:KEEP]
        assert sorted(best) != [2, 3], f"the data ranks as the latest two, nothing tested: {evals}"
        (folder,) = (tmp_path / variant / "out" / "checkpoints").iterdir()  # the run's own folder
        files = {path.name: path for path in folder.iterdir()}
        assert sorted(files) == sorted(f"tiny-{epoch}_{STEPS_PER_EPOCH}.ckpt" for epoch in best), evals
        kept[variant] = {name: tensors(path) for name, path in files.items()}
        for epoch in best:
            saved = kept[variant][f"tiny-{epoch}_{STEPS_PER_EPOCH}.ckpt"]
            assert int(saved["step_num"]) == epoch * STEPS_PER_EPOCH  # what --resume reads
            assert {"global_step", "moments.fc1.weight"} <= saved.keys()  # the optimizer state too
    assert printed["model"] == printed["native"]
    assert kept["model"].keys() == kept["native"].keys()
    for name, model_tensors in kept["model"].items():
        native_tensors = kept["native"][name]
        assert model_tensors.keys() == native_tensors.keys(), name
        for key, value in model_tensors.items():
            assert value.tobytes() == native_tensors[key].tobytes(), (name, key)

    # --resume latest: this config's checkpoint with the highest step among those kept, resumed exactly
    native = tmp_path / "native"
    before = {path: path.read_bytes() for path in (native / "out" / "checkpoints").glob("*/*.ckpt")}
    stale = next(iter(before)).with_name("tiny-0_1.ckpt.tmp")  # a save killed halfway, two hours ago
    stale.write_bytes(b"")
    os.utime(stale, (time.time() - 7200,) * 2)
    resumed = run_plain(scripts["native"], "--output-dir", "out", "--resume", "latest", cwd=native)
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-2000:]
    last_kept = max(
        epoch for epoch in printed["native"] if f"tiny-{epoch}_{STEPS_PER_EPOCH}.ckpt" in kept["native"]
    )
    assert last_kept < EPOCHS, "the resumed run would train nothing"
    assert f"at step {last_kept * STEPS_PER_EPOCH}" in resumed.stdout
    again = evaluations(resumed.stdout)
    assert again == {e: printed["native"][e] for e in range(last_kept + 1, EPOCHS + 1)}
    assert {path: path.read_bytes() for path in before} == before  # the first run's files untouched
    assert not stale.exists()


def test_ties_and_displacements_as_mindcvs_checkpoint_manager(write_config, tmp_path, monkeypatch) -> None:
    """The generated RankedCheckpoints and mindcv 0.3.0's own CheckpointManager (top_k), handed the same
    accuracies, keep the same epochs: a tie with the worst kept is not saved, a better one displaces the
    later of two tied worst, and a tie with the best two is not saved either."""

    import mindspore as ms
    from mindcv.utils.checkpoint_manager import CheckpointManager
    from mindspore import nn

    accuracies = [0.5, 0.7, 0.5, 0.7, 0.6, 0.75, 0.7]
    expected_by_hand = [
        2,
        6,
    ]  # 1, 2; 4 displaces 1; 6 displaces 4 (the later of 2 and 4); 3, 5, 7 never saved
    network = nn.Dense(1, 1)
    saves = ms.save_checkpoint

    def save_now(*args, **kwargs):  # mindcv saves asynchronously: each file written before the next step
        kwargs.pop("async_save", None)
        return saves(*args, **kwargs)

    monkeypatch.setattr(ms, "save_checkpoint", save_now)

    script = generate_both(write_config(RANKED), tmp_path / "scripts")["native"]
    generated = import_script(script, "ranked_native")
    ranked = generated.RankedCheckpoints(tmp_path / "ours", 0, 1)  # start_step 0, one step per epoch
    manager = CheckpointManager(ckpt_save_policy="top_k")
    (tmp_path / "mindcv").mkdir()
    for epoch, accuracy in enumerate(accuracies, 1):
        params = generated.CallbackParams(
            train_network=network,
            cur_epoch_num=epoch,
            cur_step_num=epoch,
            epoch_num=len(accuracies),
            metrics={"accuracy": accuracy, "loss": 1.0},
        )
        ranked.on_train_epoch_end(ms.train.RunContext(params))
        path = tmp_path / "mindcv" / f"m-{epoch}_1.ckpt"
        manager.save_ckpoint(network, num_ckpt=KEEP, metric=accuracy, save_path=str(path))

    def epochs(folder: Path) -> list[int]:
        return sorted(int(path.stem.split("-")[1].split("_")[0]) for path in folder.glob("*.ckpt"))

    assert epochs(tmp_path / "mindcv") == expected_by_hand
    (ours,) = (tmp_path / "ours" / "checkpoints").iterdir()
    assert epochs(ours) == expected_by_hand
