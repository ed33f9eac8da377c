"""network.dense_init / conv_init: builtin networks take MindSpore weight initializers, so MindSpore's LeNet
quick start (Dense layers Normal(0.02)) is expressible exactly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.run.parity import generate_both, step_differences

from conftest import REPO, TINY, UNTIL_OPTIMIZER, merge, run_both

LENET = merge(
    TINY,
    {
        "network": {
            "kind": "builtin",
            "name": "lenet5",
            "num_classes": 10,
            "hidden": None,
            "dense_init": {"name": "Normal", "sigma": 0.02},
        },
        "data": {
            "train": {"image_shape": [1, 32, 32], "num_classes": 10, "num_samples": 32},
            "eval": {"image_shape": [1, 32, 32], "num_classes": 10, "num_samples": 16},
        },
    },
)

# The LeNet5 of MindSpore's 1.x quick start, written out as the tutorial does (bench/reference_quickstart.py,
# the one hand-written reference); built after the same ms.set_seed as the generated script's
# build_network, every weight must be equal.
PROBE = (
    f"""
import sys
sys.path.insert(0, {str(REPO)!r})
"""
    + """
from bench.reference_quickstart import LeNet5 as QuickStartLeNet5
"""
    + UNTIL_OPTIMIZER
    + """
ours = {p.name: p.asnumpy() for p in optimizer.parameters}
ms.set_seed(mod.SEED)
theirs = {p.name: p.asnumpy() for p in QuickStartLeNet5().trainable_params()}
x = np.random.default_rng(0).standard_normal((2, 1, 32, 32)).astype(np.float32)
print(json.dumps({
    "names": [sorted(ours), sorted(theirs)],
    "equal": sorted(n for n in ours if n in theirs and np.array_equal(ours[n], theirs[n])),
    "fc1_std": float(ours["fc1.weight"].std()),
}))
"""
)


def _write(tmp_path: Path, config: dict) -> Path:
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


@pytest.mark.slow
def test_lenet5_with_normal_dense_init_is_the_quick_start_network(tmp_path: Path) -> None:
    scripts = generate_both(_write(tmp_path, LENET), tmp_path / "out")
    assert "weight_init=initializer.Normal(sigma=0.02)" in scripts["native"].read_text()
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    out = subprocess.run(
        [sys.executable, str(probe), str(scripts["native"])], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    ours, theirs = result["names"]
    assert ours == theirs
    assert result["equal"] == ours  # every parameter equal to the quick start's
    assert abs(result["fc1_std"] - 0.02) < 0.002


@pytest.mark.slow
def test_initializers_train_identically_in_both_variants(tmp_path: Path) -> None:
    config = merge(
        LENET,
        {
            "network": {
                "dense_init": {"name": "TruncatedNormal", "sigma": 0.05},
                "conv_init": {"name": "XavierUniform", "gain": 1.0},
            }
        },
    )
    model, native = run_both(_write(tmp_path, config), tmp_path)
    assert step_differences(model.steps, native.steps) == []


@pytest.mark.parametrize(
    ("network", "message"),
    [
        ({"dense_init": {"name": "Normal", "gain": 1.0}}, "Normal does not take gain"),
        ({"conv_init": {"name": "Constant"}}, "Constant needs value"),
        ({"dense_init": {"name": "Gaussian"}}, "dense_init.name"),
        ({"name": "mlp", "conv_init": {"name": "HeUniform"}}, "mlp has no convolutions"),
    ],
)
def test_bad_initializers_are_reported(tmp_path: Path, network: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(_write(tmp_path, merge(LENET, {"network": network})))
