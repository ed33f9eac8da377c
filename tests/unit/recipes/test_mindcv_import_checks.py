"""`mscodegen import-mindcv`: recipes it refuses, the validation of what it writes, and the optimizer and
loss-scale choices it converts exactly (opt rmsprop, loss_scale_type auto).

Where a conversion rests on a default of MindSpore or of mindcv (nn.RMSProp's decay, the loss scale
Model picks at amp_level O2), the default is read from the installed package's source with `ast`, not
imported (importing MindSpore takes seconds) and not copied from the converter.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_import_mindcv import findings, write_mnist

import mscodegen.recipes.mindcv as mindcv_recipes
from mscodegen.cli import main
from mscodegen.run.parity import generate_both


def recipe_file(tmp_path: Path, **arguments: Any) -> Path:
    """A small mnist recipe (its data written) with `arguments` on top."""
    write_mnist(tmp_path / "mnist")
    recipe = tmp_path / "recipe.yaml"
    base = {
        "dataset": "mnist",
        "data_dir": str(tmp_path / "mnist"),
        "batch_size": 16,
        "image_resize": 32,
        "model": "resnet18",
        "in_channels": 1,
        "epoch_size": 4,
        "warmup_epochs": 0,
        "decay_epochs": 4,  # the cosine (mindcv's default scheduler) spans the training
        "opt": "momentum",
    }
    recipe.write_text(yaml.safe_dump({**base, **arguments}))
    return recipe


def run(recipe: Path, out: Path, capsys) -> tuple[int, list[str]]:
    code = main(["import-mindcv", str(recipe), "-o", str(out)])
    return code, capsys.readouterr().err.splitlines()


def source_of(package: str, relative: str) -> ast.Module:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        pytest.skip(f"{package} is not installed")
    return ast.parse((Path(spec.submodule_search_locations[0]) / relative).read_text(encoding="utf-8"))


def init_defaults(module: ast.Module, class_name: str) -> dict[str, Any]:
    """The keyword defaults of `class_name.__init__` in `module`, evaluated (they are constant expressions)."""
    for node in ast.walk(module):
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    args = item.args.args[len(item.args.args) - len(item.args.defaults) :]
                    return {
                        a.arg: eval(compile(ast.Expression(d), "<default>", "eval"), {"__builtins__": {}})
                        for a, d in zip(args, item.args.defaults, strict=True)
                    }
    raise AssertionError(f"no {class_name}.__init__")


# -- refused: the recipe's own numbers contradict each other --------------------------------------------


@pytest.mark.parametrize(
    ("warmup", "epochs", "relation"),
    [(10, 3, ">"), (4, 4, "=")],  # volo_d3_ascend's numbers, and a warm-up that is the whole training
)
def test_a_warm_up_as_long_as_the_training_is_refused_naming_both_keys(
    tmp_path: Path, capsys, warmup: int, epochs: int, relation: str
) -> None:
    recipe = recipe_file(
        tmp_path, scheduler="warmup_cosine_decay", warmup_epochs=warmup, epoch_size=epochs, decay_epochs=290
    )
    out = tmp_path / "out.yaml"
    code, err = run(recipe, out, capsys)
    assert code == 2
    assert not out.exists()
    assert len(err) == 1 and err[0].startswith(f"error: {recipe}: ")
    assert f"warmup_epochs {warmup} {relation} epoch_size {epochs}" in err[0]


def test_no_note_prints_a_negative_span(tmp_path: Path, capsys) -> None:
    # a cosine of decay_epochs longer than the 3 epochs after the warm-up: cut at the end, as mindcv's
    recipe = recipe_file(
        tmp_path, scheduler="cosine_decay", warmup_epochs=1, epoch_size=4, decay_epochs=290, warmup_factor=0.1
    )
    out = tmp_path / "out.yaml"
    code, err = run(recipe, out, capsys)
    assert code == 0, err
    written = out.read_text()
    assert "decay_epochs: 290  # decay_epochs: runs 287 epochs past the training, cut there" in written
    assert not re.search(r"(?<![\w.])-\d", "\n".join([*err, written])), err


@pytest.mark.parametrize(
    ("arguments", "keys"),
    [
        ({"epoch_size": 0}, "epoch_size"),
        ({"warmup_epochs": -1}, "warmup_epochs"),
        ({"scheduler": "one_cycle", "warmup_epochs": 3}, "warmup_epochs 3"),  # mindcv raises ValueError
        ({"scheduler": "one_cycle", "min_lr": 0.0}, "min_lr"),
        ({"loss_scale_type": "auto", "ema": True}, "loss_scale_type auto with ema"),
    ],
)
def test_recipes_mindcv_cannot_train_are_refused(tmp_path: Path, capsys, arguments, keys) -> None:
    recipe = recipe_file(tmp_path, **arguments)
    out = tmp_path / "out.yaml"
    code, err = run(recipe, out, capsys)
    assert code == 2 and not out.exists()
    assert len(err) == 1 and keys in err[0], err


# -- what import-mindcv writes is validated -------------------------------------------------------------


def test_a_written_config_that_does_not_validate_is_reported_at_its_key(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    # the converter never writes such a config (the census checks all of mindcv's recipes); a faulty rule
    # is simulated so that the check itself is seen to work
    convert = mindcv_recipes.convert

    def faulty(*args: Any, **kwargs: Any) -> mindcv_recipes.Conversion:
        conversion = convert(*args, **kwargs)
        conversion.config["train"]["epochs"] = 0
        return conversion

    monkeypatch.setattr(mindcv_recipes, "convert", faulty)
    out = tmp_path / "out.yaml"
    code, err = run(recipe_file(tmp_path), out, capsys)
    assert code == 2
    assert f"error: wrote {out}, but it does not validate:" in err
    assert any(line.strip().startswith(f"{out}:") and ": train.epochs: " in line for line in err), err


def test_data_that_is_not_here_yet_is_only_a_note(tmp_path: Path, capsys) -> None:
    recipe = recipe_file(
        tmp_path,
        data_dir=str(tmp_path / "elsewhere"),
        dataset="imagenet",
        val_while_train=True,
        num_classes=3,
        in_channels=3,
    )
    out = tmp_path / "out.yaml"
    code, err = run(recipe, out, capsys)
    assert code == 0 and out.exists(), err
    notes = [line for line in err if line.startswith("note: the recipe's data is not here yet: ")]
    assert [n.split(": ")[2] for n in notes] == ["data.train.path", "data.eval.path"], err


# -- opt: rmsprop -----------------------------------------------------------------------------------------


def test_rmsprop_is_mindcvs_nn_rmsprop_call(tmp_path: Path, capsys) -> None:
    # mindcv's create_optimizer: nn.RMSProp(..., momentum=momentum, epsilon=eps, ...), no decay, no centered
    factory = source_of("mindcv", "optim/optim_factory.py")
    calls = [
        n
        for n in ast.walk(factory)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "RMSProp"
    ]
    assert len(calls) == 1
    passed = {k.arg: ast.unparse(k.value) for k in calls[0].keywords if k.arg}
    assert passed["momentum"] == "momentum" and passed["epsilon"] == "eps"
    assert "decay" not in passed and "centered" not in passed
    defaults = init_defaults(source_of("mindspore", "nn/optim/rmsprop.py"), "RMSProp")

    recipe = recipe_file(tmp_path, opt="rmsprop", lr=0.016, momentum=0.8, eps=0.001, weight_decay=1e-5)
    out = tmp_path / "out.yaml"
    code, err = run(recipe, out, capsys)
    assert code == 0, err
    optimizer = yaml.safe_load(out.read_text())["optimizer"]
    assert optimizer == {
        "name": "rmsprop",
        "lr": 0.016,
        "decay": defaults["decay"],
        "momentum": 0.8,
        "epsilon": 0.001,
        "centered": defaults["centered"],
        "weight_decay": 1e-5,
        "decay_filter": "every_parameter",  # weight_decay_filter disable, mindcv's default
    }
    assert (defaults["decay"], defaults["centered"]) == (0.9, False)
    # and the scripts call nn.RMSProp with them: the arguments mindcv passes, the others at their defaults
    for script in generate_both(out, tmp_path / "scripts").values():
        (call,) = [
            n
            for n in ast.walk(ast.parse(script.read_text()))
            if isinstance(n, ast.Call) and ast.unparse(n.func) == "nn.RMSProp"
        ]
        keywords = {k.arg: ast.unparse(k.value) for k in call.keywords}
        assert keywords == {
            "learning_rate": "learning_rate",
            "decay": repr(defaults["decay"]),
            "momentum": "0.8",
            "epsilon": "0.001",
            "centered": repr(defaults["centered"]),
        }


# -- loss_scale_type: auto --------------------------------------------------------------------------------


def model_default_loss_scale() -> dict[str, Any]:
    """{amp level: None or DynamicLossScaleManager()'s keyword arguments}: mindspore/train/amp.py's
    _config_level, with DynamicLossScaleManager's defaults read from loss_scale_manager.py."""
    amp = source_of("mindspore", "train/amp.py")
    defaults = init_defaults(source_of("mindspore", "train/loss_scale_manager.py"), "DynamicLossScaleManager")
    for node in amp.body:
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "_config_level":
            assert isinstance(node.value, ast.Dict)
            levels: dict[str, Any] = {}
            for level, options in zip(node.value.keys, node.value.values, strict=True):
                assert isinstance(level, ast.Constant) and isinstance(options, ast.Dict)
                manager = dict(zip([ast.literal_eval(k) for k in options.keys], options.values, strict=True))[
                    "loss_scale_manager"
                ]
                if isinstance(manager, ast.Constant) and manager.value is None:
                    levels[level.value] = None
                else:
                    assert (
                        isinstance(manager, ast.Call)
                        and ast.unparse(manager.func) == "DynamicLossScaleManager"
                    )
                    assert not manager.args and not manager.keywords
                    levels[level.value] = defaults
            return levels
    raise AssertionError("no _config_level in mindspore/train/amp.py")


@pytest.mark.parametrize("level", ["O0", "O1", "O2", "O3", "auto"])
def test_auto_loss_scale_is_what_model_picks_at_the_amp_level(tmp_path: Path, capsys, level: str) -> None:
    picked = model_default_loss_scale()[level]
    recipe = recipe_file(tmp_path, loss_scale_type="auto", loss_scale=1024.0, amp_level=level)
    out = tmp_path / "out.yaml"
    code, err = run(recipe, out, capsys)
    assert code == 0, err
    written = yaml.safe_load(out.read_text())["loss_scale"]
    if picked is None:
        assert written == {"kind": "none"}
    else:
        assert written == {
            "kind": "dynamic",
            "init": picked["init_loss_scale"],
            "factor": picked["scale_factor"],
            "window": picked["scale_window"],
        }
    assert findings(err, "not converted") == {} and findings(err, "approximated") == {}
    assert (level == "O2") == (picked is not None)  # the recipes' level, O2, is the one that scales
