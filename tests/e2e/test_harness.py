"""The scripts' shared command line: --fast-dev-run, --save-weights, --device, bad step counts, and the zero-batch error.

Both variants run for real; `mscodegen parity` and `mscodegen validate --run` build on these flags.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mscodegen.run.parity import generate_both, run_script, step_differences

pytestmark = pytest.mark.slow


def run_all(commands: dict[str, list[str]], cwd: Path) -> dict[str, subprocess.CompletedProcess[str]]:
    """Start every command at once (each mostly waits for `import mindspore`), then collect them."""
    cwd.mkdir(parents=True, exist_ok=True)
    procs = {
        key: subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for key, cmd in commands.items()
    }
    results = {}
    for key, proc in procs.items():
        try:
            out, err = proc.communicate(timeout=300)
        finally:
            proc.kill()
        results[key] = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    return results


def test_fast_dev_run_trains_one_batch_and_writes_nothing(write_config, tmp_path):
    config = write_config(
        {
            "train": {"epochs": 3, "log_every_steps": 1},
            "callbacks": {"checkpoint": {"every_steps": 1}},
        }
    )
    scripts = generate_both(config, tmp_path / "scripts")
    workdir = tmp_path / "cwd"
    results = run_all(
        {v: [sys.executable, str(s), "--fast-dev-run"] for v, s in scripts.items()},
        workdir,
    )
    consoles = {}
    for variant, result in results.items():
        assert result.returncode == 0, result.stderr[-3000:]
        lines = result.stdout.splitlines()
        # one train step (log_every_steps 1 prints it), then one evaluation, and nothing more
        assert [line.split(",")[0] for line in lines if line.startswith("epoch: ")] == ["epoch: 1 step: 1"]
        assert len([line for line in lines if line.startswith("Eval result: epoch 1")]) == 1, variant
        consoles[variant] = [line for line in lines if not line.startswith("Train epoch time: ")]
    assert consoles["model"] == consoles["native"]  # one console
    assert list(workdir.iterdir()) == []  # no outputs/, no checkpoints


FOUR_SAMPLES = """
import numpy as np
from mindspore import dataset as ds


def make_dataset():
    images = np.zeros((4, 1, 8, 8), np.float32)
    labels = np.zeros((4,), np.int32)
    return ds.NumpySlicesDataset({"image": images, "label": labels}, shuffle=False)
"""


@pytest.mark.parametrize(
    ("overrides", "args", "cause"),
    [
        (
            # an imported factory with 4 samples: validate cannot count it, the script must
            {
                "data": {
                    "train": {
                        "kind": "import",
                        "factory": "four_samples:make_dataset",
                        "image_shape": [1, 8, 8],
                        "num_samples": None,
                        "num_classes": None,
                        "seed": None,
                    }
                }
            },
            [],
            "data.train yields no batch (fewer samples than its batch_size)",
        ),
    ],
    ids=["no-batch"],
)
def test_zero_steps_is_an_error_naming_the_cause(write_config, tmp_path, overrides, args, cause):
    (tmp_path / "four_samples.py").write_text(FOUR_SAMPLES)
    scripts = generate_both(write_config(overrides), tmp_path / "scripts")
    results = run_all({v: [sys.executable, str(s), *args] for v, s in scripts.items()}, tmp_path / "cwd")
    for result in results.values():
        assert result.returncode == 1
        assert result.stderr.splitlines()[-1].startswith(f"error: trained 0 steps: {cause}")


@pytest.mark.parametrize(
    "args", [["--max-steps", "0"], ["--epochs", "0"], ["--max-steps", "-2"], ["--epochs", "100001"]]
)
def test_a_run_of_no_steps_is_a_usage_error(write_config, tmp_path, args):
    scripts = generate_both(write_config(), tmp_path / "scripts")
    results = run_all({v: [sys.executable, str(s), *args] for v, s in scripts.items()}, tmp_path / "cwd")
    for result in results.values():
        assert result.returncode == 2
        assert result.stderr.splitlines()[-1].endswith(
            "error: --epochs takes 1 to 100000, --max-steps 1 or more"
        )


def test_save_weights_seed_and_device(write_config, tmp_path):
    """--save-weights writes the final network weights: equal tensors in both variants. Another
    runtime.seed gives other initial weights, other losses; --device CPU is accepted."""
    scripts = generate_both(write_config({"runtime": {"seed": 7}}), tmp_path / "scripts")
    runs = {}
    for variant, script in scripts.items():
        runs[variant] = run_script(
            script,
            tmp_path / variant,
            variant=variant,
            max_steps=4,
            extra_args=("--device", "CPU", "--save-weights", "weights/final.ckpt"),
        )
        assert runs[variant].returncode == 0, runs[variant].log_tail
    seed3 = generate_both(write_config({"runtime": {"seed": 3}}, name="seed3"), tmp_path / "seed3scripts")
    default_seed = run_script(seed3["model"], tmp_path / "seed3", variant="model", max_steps=4)
    assert default_seed.returncode == 0, default_seed.log_tail
    assert step_differences(runs["model"].steps, runs["native"].steps) == []
    assert [r["loss"] for r in runs["model"].steps] != [r["loss"] for r in default_seed.steps]

    import mindspore as ms

    model = ms.load_checkpoint(str(tmp_path / "model" / "weights" / "final.ckpt"))
    native = ms.load_checkpoint(str(tmp_path / "native" / "weights" / "final.ckpt"))
    assert sorted(model) == sorted(native) == ["fc1.bias", "fc1.weight", "fc2.bias", "fc2.weight"]
    for name in model:
        assert np.array_equal(model[name].asnumpy(), native[name].asnumpy()), name
