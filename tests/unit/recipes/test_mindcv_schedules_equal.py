"""The LR schedules import-mindcv converts exactly, against mindcv's own `create_scheduler`.

Each recipe is converted, both scripts are generated, and the generated `build_lr` (with the script's
constants) is run beside mindcv 0.3.0's `create_scheduler` with the recipe's arguments, for several
steps-per-epoch. Both lists go to a MindSpore optimizer as `learning_rate`, which holds them as float32:
that is what is compared, exactly. (As float64 some values differ in the last bit, where the two compute
a fraction of the warm-up or of the cosine in another order: i / steps_per_epoch / epochs against
i / (epochs * steps_per_epoch).)

mindcv's scheduler package imports only `math`, `bisect` and `logging`; importing `mindcv` would import
MindSpore, so the package is loaded from its folder under a name of its own.
"""

from __future__ import annotations

import ast
import importlib.util
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from test_import_mindcv import write_mnist

from mscodegen.cli import main
from mscodegen.run.parity import generate_both

# each case generates both scripts (about 1 s of CPU): in `make test`, not `make test-fast`
pytestmark = pytest.mark.slow

STEPS_PER_EPOCH = (1, 3, 7, 50)

# every argument create_scheduler takes, set in each recipe (no default of either side is relied on)
BASE = {
    "lr": 0.1,
    "min_lr": 1e-6,
    "warmup_epochs": 0,
    "warmup_factor": 0.0,
    "decay_epochs": 10,
    "decay_rate": 0.5,
    "multi_step_decay_milestones": [3, 5],
    "epoch_size": 10,
    "num_cycles": 1,
    "cycle_decay": 1.0,
    "lr_epoch_stair": False,
}

SCHEDULES = {
    "cosine": {"scheduler": "cosine_decay"},
    "warmup_cosine": {
        "scheduler": "warmup_cosine_decay",
        "warmup_epochs": 3,
        "warmup_factor": 0.01,
        "decay_epochs": 7,
    },
    "multi_step_after_warm_up": {
        "scheduler": "multi_step_decay",
        "warmup_epochs": 2,
        "warmup_factor": 0.1,
        "decay_rate": 0.1,
        "multi_step_decay_milestones": [5, 3, 30],
    },
    "step_after_warm_up": {"scheduler": "step_decay", "warmup_epochs": 1, "decay_epochs": 3},
    "exponential_after_warm_up": {"scheduler": "exponential_decay", "warmup_epochs": 2, "decay_rate": 0.8},
    "exponential_stair": {"scheduler": "exponential_decay", "decay_rate": 0.8, "lr_epoch_stair": True},
    "polynomial_after_warm_up": {"scheduler": "polynomial_decay", "warmup_epochs": 2, "decay_rate": 2.0},
    "polynomial_stair_after_warm_up": {
        "scheduler": "polynomial_decay",
        "warmup_epochs": 2,
        "warmup_factor": 0.1,
        "decay_rate": 0.9,
        "lr_epoch_stair": True,
    },
    "one_cycle": {"scheduler": "one_cycle", "lr": 0.3, "min_lr": 1e-4},
    # the cosine's own length, restarts and lr_epoch_stair, as mindcv's recipes use them
    "cosine_stair_after_warm_up": {  # pit, visformer, pvt_v2, ...: decay_epochs = the epochs after it
        "scheduler": "cosine_decay",
        "warmup_epochs": 3,
        "warmup_factor": 0.01,
        "decay_epochs": 7,
        "lr_epoch_stair": True,
    },
    "cosine_decay_epochs_then_min_lr": {"scheduler": "cosine_decay", "warmup_epochs": 2, "decay_epochs": 5},
    "cosine_cut_at_the_end": {  # squeezenet: the cosine runs past the training by the warm-up
        "scheduler": "warmup_cosine_decay",
        "warmup_epochs": 2,
        "warmup_factor": 0.1,
        "decay_epochs": 10,
    },
    "cosine_restarts_stair": {  # crossvit_15
        "scheduler": "warmup_cosine_decay",
        "warmup_epochs": 1,
        "decay_epochs": 4,
        "num_cycles": 2,
        "lr_epoch_stair": True,
    },
    "cosine_restarts_decayed": {  # 5 cycles of 3 epochs in 10: the 4th is cut, the 5th never starts
        "scheduler": "cosine_decay",
        "decay_epochs": 3,
        "num_cycles": 5,
        "cycle_decay": 0.5,
    },
}


def mindcv_create_scheduler() -> Callable[..., list[float]]:
    spec = importlib.util.find_spec("mindcv")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("mindcv is not installed")
    folder = Path(spec.submodule_search_locations[0]) / "scheduler"
    name = "_mindcv_scheduler_alone"
    if name not in sys.modules:
        package = importlib.util.spec_from_file_location(
            name, folder / "__init__.py", submodule_search_locations=[str(folder)]
        )
        assert package is not None and package.loader is not None
        module = importlib.util.module_from_spec(package)
        sys.modules[name] = module
        package.loader.exec_module(module)
    return sys.modules[name].create_scheduler  # type: ignore[no-any-return]


def generated_build_lr(script: Path) -> Callable[[int, int], list[float]]:
    """build_lr of a generated script, run with the script's module-level constants (literals only)."""
    tree = ast.parse(script.read_text(encoding="utf-8"))
    namespace: dict[str, Any] = {"math": math}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                namespace[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                continue
        elif isinstance(node, ast.FunctionDef) and node.name == "build_lr":
            exec(compile(ast.Module([node], []), str(script), "exec"), namespace)
    return namespace["build_lr"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", SCHEDULES)
def test_converted_schedule_gives_mindcvs_learning_rates(tmp_path: Path, capsys, name: str) -> None:
    arguments = {**BASE, **SCHEDULES[name]}
    write_mnist(tmp_path / "mnist")
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(
        yaml.safe_dump(
            {
                "dataset": "mnist",
                "data_dir": str(tmp_path / "mnist"),
                "batch_size": 16,
                "image_resize": 32,
                "model": "resnet18",
                "in_channels": 1,
                "opt": "momentum",
                **arguments,
            }
        )
    )
    out = tmp_path / "run.yaml"
    assert main(["import-mindcv", str(recipe), "-o", str(out)]) == 0, capsys.readouterr().err
    scripts = generate_both(out, tmp_path / "scripts")
    create_scheduler = mindcv_create_scheduler()
    for steps_per_epoch in STEPS_PER_EPOCH:
        expected = create_scheduler(
            steps_per_epoch,
            scheduler=arguments["scheduler"],
            lr=arguments["lr"],
            min_lr=arguments["min_lr"],
            warmup_epochs=arguments["warmup_epochs"],
            warmup_factor=arguments["warmup_factor"],
            decay_epochs=arguments["decay_epochs"],
            decay_rate=arguments["decay_rate"],
            milestones=arguments["multi_step_decay_milestones"],
            num_epochs=arguments["epoch_size"],
            num_cycles=arguments["num_cycles"],
            cycle_decay=arguments["cycle_decay"],
            lr_epoch_stair=arguments["lr_epoch_stair"],
        )
        assert len(expected) == steps_per_epoch * arguments["epoch_size"]
        for variant, script in scripts.items():
            got = generated_build_lr(script)(steps_per_epoch * arguments["epoch_size"], steps_per_epoch)
            assert len(got) == len(expected), (variant, steps_per_epoch)
            want32, got32 = np.array(expected, np.float32), np.array(got, np.float32)
            differ = np.flatnonzero(want32 != got32)
            assert differ.size == 0, (
                f"{variant}, {steps_per_epoch} steps per epoch: step {differ[0]}: "
                f"mindcv {expected[differ[0]]!r}, generated {got[differ[0]]!r}"
            )
