"""plan.py: typed fields against hand-written values (literals, imports, paths, constants, Model's
keyword arguments, network shapes, what each variant writes out, per-device notes)."""

from __future__ import annotations

import ast
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import black
import pytest

from mscodegen.catalog.literals import Call, Name, literal
from mscodegen.config.load import LoadedConfig, load_config
from mscodegen.output.generate import generate, plans_of
from mscodegen.plan import SCRIPT_NAMES
from mscodegen.plan.data import DatasetFn, Source
from mscodegen.plan.imports import Import
from mscodegen.plan.loop import CHECKPOINTS_NAME
from mscodegen.plan.predict import PREDICT_NAME
from mscodegen.render.fmt import LINE_LENGTH
from mscodegen.render.imports import import_groups

MODE = black.Mode(line_length=LINE_LENGTH)

MINIMAL = """\
network: {kind: builtin, name: mlp}
data:
  train: {kind: synthetic, image_shape: [1, 8, 8]}
optimizer: {name: momentum}
"""


def load(directory: Path, text: str, name: str = "cfg") -> LoadedConfig:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return load_config(path)


def source_of(fn: DatasetFn) -> Call:
    """The call that makes a dataset function's unbatched dataset."""
    return next(s.call for s in fn.steps if isinstance(s, Source))


def plan_of(loaded: LoadedConfig, variant: str = "model", out_dir: Path | None = None):  # noqa: ANN201
    return plans_of(loaded, out_dir or loaded.path.parent / "out", (variant,))[1][variant]


# --- literal() and Call ----------------------------------------------------------------------------

NASTY_STRINGS = [
    "",
    "'",
    '"',
    "'''",
    '"""',
    "\\",
    "\\'",
    "a\nb",
    "a\r\nb",
    "\x00",
    "\t\x0b\x0c",
    "\u2028\u2029\x85",
    "é中文🙂",
    "\ud800",  # a lone surrogate
    "{x}",
    "%s",
    "'); import os; ('",
    '"); import os; ("',
    "__import__('os').system('x')",
    "#",
    "\\N{DASH}",
]
ROUND_TRIP = [
    *NASTY_STRINGS,
    None,
    True,
    False,
    0,
    -1,
    2**100,
    -(2**70),
    0.1,
    -0.0,
    1e-300,
    5e-324,
    1.7976931348623157e308,
    1e22,
    -2.5e-20,
    123456789.123456789,
    [],
    {},
    [1, [2, [3, []]], "x"],
    {"a": [1, {"b": None}], "c'": {"d\n": 1.5}},
    [{"k": ["'''", '"""']}, -0.0],
]


@pytest.mark.parametrize("value", ROUND_TRIP, ids=[repr(v)[:30] for v in ROUND_TRIP])
def test_literal_round_trips(value: Any) -> None:
    text = literal(value)
    assert ast.literal_eval(text) == value
    assert type(ast.literal_eval(text)) is type(value)
    assert "\n" not in text and "\r" not in text  # one line, whatever the value


QUOTE_MIXES = ["a'b", 'a"b', "a'b\"c", "a''b\"c", 'a\'b""c', "\\'\"", "'\\\"x", "\"'\"'", "é'\n\""]


@pytest.mark.parametrize(
    "value",
    [*NASTY_STRINGS, *QUOTE_MIXES, *ROUND_TRIP[len(NASTY_STRINGS) :], ["x", "it's", {'say "hi"': 1e16}]],
)
def test_literal_prints_what_black_prints(value: Any) -> None:
    """black leaves literal()'s text as it is: strings in double quotes unless they would escape more
    quotes than single ones (black's string normalization), floats without repr's `+` in an exponent."""
    line = f"x = {literal(value)}\n"
    assert black.format_str(line, mode=MODE) == line
    assert black.format_str(f"x = {value!r}\n", mode=MODE) == line


def test_literal_keeps_the_sign_of_negative_zero() -> None:
    assert math.copysign(1.0, ast.literal_eval(literal(-0.0))) == -1.0


@pytest.mark.parametrize("value", [(), (1,), (1, "a"), ((1, 2), [3])])
def test_literal_tuples(value: tuple) -> None:
    assert ast.literal_eval(literal(value)) == value


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, [1.0, math.inf], {"a": math.nan}])
def test_literal_refuses_non_finite_floats(value: Any) -> None:
    """repr() would give `inf`/`nan`: names, not literals (a NameError in the script). The schema rejects
    them first, so this is a second line of defence."""
    with pytest.raises(ValueError, match="has no Python literal"):
        literal(value)


@pytest.mark.parametrize("value", [{1, 2}, b"x", object(), 1j, {1: 2}.keys()])
def test_literal_refuses_anything_but_plain_data(value: Any) -> None:
    with pytest.raises(TypeError):
        literal(value)


def test_call_renders_keyword_values_as_literals() -> None:
    text = literal(Call.of("f", Name("x"), a="it's", b=[1, {"c": None}]))
    assert text == """f(x, a="it's", b=[1, {"c": None}])"""
    node = ast.parse(text, mode="eval").body
    assert isinstance(node, ast.Call) and [k.arg for k in node.keywords] == ["a", "b"]


def test_call_accepts_a_keyword_named_func() -> None:
    assert literal(Call.of("Net", func=1, args=2)) == "Net(func=1, args=2)"


def test_a_call_of_values_renders_as_literals() -> None:
    inner = Call.of("create_model", "resnet18", pretrained=False, func=1)
    assert (
        literal(Call("MainLogits", (inner,)))
        == 'MainLogits(create_model("resnet18", pretrained=False, func=1))'
    )
    with pytest.raises(ValueError, match="cannot be a keyword argument name"):
        Call.of("f", **{"a-b": 1})


@pytest.mark.parametrize("key", ["a-b", "class", "1x", "a b", "x=1, y", ""])
def test_call_refuses_keywords_that_are_not_identifiers(key: str) -> None:
    with pytest.raises(ValueError, match="cannot be a keyword argument name"):
        Call.of("f", **{key: 1})


# --- the import block is isort-ordered -------------------------------------------------------------

SUPPORT = {
    "nets.py": "def Net(**kwargs):\n    pass\n",
    "my_data.py": "def make(**kwargs):\n    pass\n",
    "my_metrics.py": "class Multi:\n    pass\n",
    "grad_tools.py": "def process(grads):\n    return grads\n",
}
IMPORT_CONFIGS = {
    "mlp": MINIMAL,
    "everything": """\
network: {kind: import, factory: nets:Net}
data:
  train: {kind: import, factory: my_data:make, image_shape: [1, 8, 8]}
  eval: {kind: digits, split: test, transforms: {resize: [8, 8], normalize: {mean: [0.5], std: [0.5]}}}
optimizer: {name: adamw, weight_decay: 0.01, decay_filter: no_norm_no_bias}
lr_schedule: {kind: warmup_cosine, warmup_epochs: 1}
train: {epochs: 3}
eval:
  metrics: [{name: accuracy}, {name: import, class: my_metrics:Multi, key: multi}]
amp: {level: O2}
loss_scale: {kind: dynamic}
grad: {clip: {kind: norm}, process: grad_tools:process, accumulation_steps: 2}
callbacks: {checkpoint: {every_steps: 5}}
""",
    "mindcv": """\
network: {kind: mindcv, name: resnet18, kwargs: {in_channels: 1}}
data:
  train: {kind: synthetic, image_shape: [1, 32, 32]}
optimizer: {name: sgd}
lr_schedule: {kind: piecewise, milestones: [1]}
train: {epochs: 2}
amp: {level: O1}
loss_scale: {kind: fixed}
""",
}


def ruff_isort_problems(files: dict[str, str], directory: Path) -> str:
    for name, text in files.items():
        (directory / name).write_text(text, encoding="utf-8")
    result = subprocess.run(
        # the scripts' width (black's, mscodegen.render.fmt.LINE_LENGTH), not ruff's default 88
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--isolated",
            "--line-length",
            "100",
            "--select",
            "I",
            "--no-cache",
            *files,
        ],
        cwd=directory,
        capture_output=True,
        text=True,
        check=False,
    )
    return "" if result.returncode == 0 else result.stdout + result.stderr


@pytest.mark.parametrize("name", IMPORT_CONFIGS)
def test_import_block_is_isort_ordered(tmp_path: Path, name: str) -> None:
    for file, text in SUPPORT.items():
        (tmp_path / file).write_text(text)
    loaded = load(tmp_path, IMPORT_CONFIGS[name])
    out = tmp_path / "gen"
    out.mkdir()
    files = generate(loaded, out)
    assert ruff_isort_problems(files, out) == ""
    for file, text in files.items():
        if file == CHECKPOINTS_NAME:  # a module of the scripts: no CLI, no network
            continue
        imported = {
            alias.asname or alias.name
            for node in ast.parse(text).body
            if isinstance(node, (ast.Import, ast.ImportFrom))
            for alias in node.names
        }
        # predict.py uses nn only for --evaluate (a config with data.eval) and amp's float32 cells
        assert {"argparse", "Path", "ms", *(() if file == "predict.py" else ("nn",))} <= imported, file


def test_import_block_orders_stdlib_before_third_party(tmp_path: Path) -> None:
    for file, text in SUPPORT.items():
        (tmp_path / file).write_text(text)
    plan = plan_of(load(tmp_path, IMPORT_CONFIGS["everything"]), "native")
    stdlib, third = import_groups(plan.imports)
    assert "import sys" in stdlib and "import math" in stdlib and "import time" in stdlib
    assert all("mindspore" not in line and "numpy" not in line for line in stdlib)
    assert any(line.startswith("from mindspore import") for line in third)
    lines = stdlib + third
    assert len(set(lines)) == len(lines)  # no duplicates


# --- paths ----------------------------------------------------------------------------------------


def make_mnist(directory: Path) -> None:
    directory.mkdir(parents=True)
    for name in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"):
        (directory / name).write_bytes(b"")


@pytest.mark.parametrize(
    ("config_dir", "out_dir"),
    [("configs/sub", "generated/run"), ("configs", "configs"), ("a", "a/b/c"), ("a/b/c", "x")],
)
def test_relative_data_paths_resolve_from_the_script_to_the_config_dir(
    tmp_path: Path, config_dir: str, out_dir: str
) -> None:
    make_mnist(tmp_path / config_dir / "../data/mnist")
    text = MINIMAL.replace("{kind: synthetic, image_shape: [1, 8, 8]}", "{kind: mnist, path: ../data/mnist}")
    loaded = load(tmp_path / config_dir, text)
    plan = plan_of(loaded, out_dir=tmp_path / out_dir)
    path = plan.shared.data_dir
    assert path is not None and not Path(path).is_absolute()
    assert "\\" not in path
    # What the generated script does: DATA_DIR = Path(__file__).parent / path
    assert (tmp_path / out_dir / path).resolve() == (tmp_path / config_dir / "../data/mnist").resolve()
    data_dir = {c.name: c.value for group in plan.shared.constants for c in group}["DATA_DIR"]
    assert literal(data_dir) == f'Path(__file__).parent / "{path}"'
    # the dataset function reads the folder train() passes it: args.data_dir (--data-dir, DATA_DIR by default)
    (fn,) = plan.shared.dataset_functions
    assert fn.params[0] == "data_dir" and "str(data_dir)" in literal(source_of(fn))
    assert [literal(use.call) for use in plan.shared.datasets] == [f"{fn.name}(args.data_dir)"]


def test_absolute_data_paths_stay_absolute(tmp_path: Path) -> None:
    data = tmp_path / "elsewhere" / "mnist"
    make_mnist(data)
    text = MINIMAL.replace(
        "{kind: synthetic, image_shape: [1, 8, 8]}", f"{{kind: mnist, path: '{data.as_posix()}'}}"
    )
    plan = plan_of(load(tmp_path / "cfg", text))
    assert plan.shared.data_dir == data.as_posix()
    data_dir = {c.name: c.value for group in plan.shared.constants for c in group}["DATA_DIR"]
    assert literal(data_dir) == f'Path("{data.as_posix()}")'


def test_modules_next_to_the_config_get_a_relative_sys_path(tmp_path: Path) -> None:
    config_dir = tmp_path / "configs"
    config_dir.mkdir()
    (config_dir / "nets.py").write_text("def Net():\n    pass\n")
    text = MINIMAL.replace("{kind: builtin, name: mlp}", "{kind: import, factory: nets:Net}")
    plan = plan_of(load(config_dir, text), out_dir=tmp_path / "generated" / "run")
    factory = plan.shared.network.factory
    assert factory is not None and factory.sys_path is not None
    assert (tmp_path / "generated" / "run" / factory.sys_path).resolve() == config_dir.resolve()
    assert (factory.module, factory.attr, factory.key) == ("nets", "Net", "network.factory")
    assert literal(plan.shared.network.call) == "Net()"


# --- constants carry their YAML keys --------------------------------------------------------------

FULL = """\
runtime: {seed: 5}
network: {kind: builtin, name: mlp}
data:
  train: {kind: synthetic, image_shape: [1, 8, 8]}
  eval: {kind: synthetic, image_shape: [1, 8, 8]}
optimizer: {name: momentum, lr: 0.02, weight_decay: 0.0001}
lr_schedule: {kind: LR_SCHEDULE}
train: {epochs: 6, log_every_steps: 7, output_dir: out/dir}
eval: {every_epochs: 3}
callbacks: {checkpoint: {PERIOD, keep_max: 4, directory: ckpts, prefix: pre}}
loss_scale: {LOSS_SCALE}
grad: {clip: {CLIP}, accumulation_steps: 2}
"""
COMMON = [
    ("SEED", "5", "runtime.seed"),
    ("EPOCHS", "6", "train.epochs"),
    ("LOG_EVERY_STEPS", "7", "train.log_every_steps"),
    ("OUTPUT_DIR", '"out/dir"', "train.output_dir"),
    ("LR", "0.02", "optimizer.lr"),
    ("WEIGHT_DECAY", "0.0001", "optimizer.weight_decay"),
]
CHECKPOINT = [
    ("CHECKPOINT_DIR", '"ckpts"', "callbacks.checkpoint.directory"),
    ("CHECKPOINT_PREFIX", '"pre"', "callbacks.checkpoint.prefix"),
    ("CHECKPOINT_KEEP_MAX", "4", "callbacks.checkpoint.keep_max"),
]
FULL_CASES = {
    "piecewise": (
        {
            "LR_SCHEDULE": "piecewise, milestones: [2, 4], gamma: 0.5",
            "PERIOD": "every_steps: 9",
            "LOSS_SCALE": "kind: fixed, value: 256",
            "CLIP": "kind: value, clip_value: 0.25",
        },
        [
            *COMMON,
            ("MILESTONES", "[2, 4]", "lr_schedule.milestones"),
            ("GAMMA", "0.5", "lr_schedule.gamma"),
            ("EVAL_EVERY_EPOCHS", "3", "eval.every_epochs"),
            *CHECKPOINT,
            ("CHECKPOINT_EVERY_STEPS", "9", "callbacks.checkpoint.every_steps"),
            ("LOSS_SCALE", "256.0", "loss_scale.value"),
            ("CLIP_VALUE", "0.25", "grad.clip.clip_value"),
            ("ACCUMULATION_STEPS", "2", "grad.accumulation_steps"),
        ],
    ),
    "warmup": (
        {
            "LR_SCHEDULE": "warmup_cosine, warmup_epochs: 2, warmup_start_lr: 0.001, min_lr: 0.0001",
            "PERIOD": "every_epochs: 2",
            "LOSS_SCALE": "kind: dynamic, init: 128, factor: 4, window: 50",
            "CLIP": "kind: global_norm, max_norm: 3.0",
        },
        [
            *COMMON,
            ("WARMUP_EPOCHS", "2", "lr_schedule.warmup_epochs"),
            ("WARMUP_START_LR", "0.001", "lr_schedule.warmup_start_lr"),
            ("MIN_LR", "0.0001", "lr_schedule.min_lr"),
            ("EVAL_EVERY_EPOCHS", "3", "eval.every_epochs"),
            *CHECKPOINT,
            ("CHECKPOINT_EVERY_EPOCHS", "2", "callbacks.checkpoint.every_epochs"),
            ("LOSS_SCALE", "128.0", "loss_scale.init"),
            ("LOSS_SCALE_FACTOR", "4", "loss_scale.factor"),
            ("LOSS_SCALE_WINDOW", "50", "loss_scale.window"),
            ("MAX_NORM", "3.0", "grad.clip.max_norm"),
            ("ACCUMULATION_STEPS", "2", "grad.accumulation_steps"),
        ],
    ),
    "cosine": (
        {
            "LR_SCHEDULE": "cosine, min_lr: 0.003",
            "PERIOD": "every_epochs: 1",
            "LOSS_SCALE": "kind: none",
            "CLIP": "kind: norm, max_norm: 0.5",
        },
        [
            *COMMON,
            ("MIN_LR", "0.003", "lr_schedule.min_lr"),
            ("EVAL_EVERY_EPOCHS", "3", "eval.every_epochs"),
            *CHECKPOINT,
            ("CHECKPOINT_EVERY_EPOCHS", "1", "callbacks.checkpoint.every_epochs"),
            ("MAX_NORM", "0.5", "grad.clip.max_norm"),
            ("ACCUMULATION_STEPS", "2", "grad.accumulation_steps"),
        ],
    ),
}


def full_config(tmp_path: Path, case: str) -> LoadedConfig:
    text = FULL
    for placeholder, value in FULL_CASES[case][0].items():
        text = text.replace(placeholder, value)
    return load(tmp_path, text)


@pytest.mark.parametrize("variant", ["model", "native"])
@pytest.mark.parametrize("case", FULL_CASES)
def test_constants_carry_their_yaml_keys(tmp_path: Path, case: str, variant: str) -> None:
    loaded = full_config(tmp_path, case)
    plan = plan_of(loaded, variant)
    constants = [(c.name, literal(c.value), c.key) for group in plan.shared.constants for c in group]
    # checkpoints make the run resumable: the config's sha256 and the run's id come first, with no key
    assert constants[0] == ("CONFIG_SHA256", f'"{loaded.sha256}"', "")
    assert constants[1][0] == "RUN_ID" and "os.getpid()" in constants[1][1]
    assert constants[2:] == FULL_CASES[case][1]


def test_constants_appear_in_the_scripts_with_their_key_comment(tmp_path: Path) -> None:
    files = generate(full_config(tmp_path, "piecewise"), tmp_path / "out")
    module = files[CHECKPOINTS_NAME]  # callbacks.checkpoint's, shared by both scripts
    for script in (files[name] for name in SCRIPT_NAMES.values()):  # predict.py imports what it needs
        assigned = {}
        for text in (script, module):
            lines = text.splitlines()
            for node in ast.parse(text).body:
                if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                    assert node.targets[0].id not in assigned, node.targets[0].id  # defined once
                    assigned[node.targets[0].id] = (node, lines[node.lineno - 1], text is module)
        for name, value, key in FULL_CASES["piecewise"][1]:
            node, line, in_module = assigned[name]
            assert ast.literal_eval(node.value) == ast.literal_eval(value)  # black may requote it
            assert line.endswith(f"  # {key}")
            assert in_module == name.startswith("CHECKPOINT_"), name


@pytest.mark.parametrize(
    ("case", "unit", "accumulated"),
    [("piecewise", "steps", True), ("warmup", "epochs", False)],
)
def test_checkpoint_period_unit(tmp_path: Path, case: str, unit: str, accumulated: bool) -> None:
    checkpoint = plan_of(full_config(tmp_path, case)).shared.checkpoint
    assert checkpoint is not None
    assert (checkpoint.unit, checkpoint.accumulated) == (unit, accumulated)


def test_checkpoint_every_steps_without_accumulation(tmp_path: Path) -> None:
    checkpoint = plan_of(
        load(tmp_path, MINIMAL + "callbacks: {checkpoint: {every_steps: 3}}\n")
    ).shared.checkpoint
    assert checkpoint is not None
    assert (checkpoint.unit, checkpoint.accumulated) == ("steps", False)


# --- Model's keyword arguments --------------------------------------------------------------------


def model_kwargs(tmp_path: Path, extra: str) -> dict[str, object]:
    plan = plan_of(load(tmp_path, MINIMAL + extra), "model")
    m = plan.model
    assert m is not None
    kwargs = {
        "amp_level": m.amp_level,
        "keep_batchnorm_fp32": m.keep_batchnorm_fp32,
        "loss_scale_manager": m.loss_scale_manager,
    }
    return {name: value for name, value in kwargs.items() if value is not None}


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ("", {}),
        ("amp: {level: O1}\n", {"amp_level": "O1"}),
        ("amp: {level: O3}\n", {"amp_level": "O3"}),
        ("amp: {level: auto}\n", {"amp_level": "auto"}),
        # O2 would pick dynamic loss scaling (no CPU kernel) unless told there is none
        ("amp: {level: O2}\n", {"amp_level": "O2", "loss_scale_manager": "none"}),
        (
            "amp: {level: O2, keep_batchnorm_fp32: false}\n",
            {"amp_level": "O2", "keep_batchnorm_fp32": False, "loss_scale_manager": "none"},
        ),
        (
            "amp: {level: O2}\nloss_scale: {kind: fixed, value: 64}\n",
            {"amp_level": "O2", "loss_scale_manager": "fixed"},
        ),
        (
            "loss_scale: {kind: fixed}\n",
            {"loss_scale_manager": "fixed"},
        ),
        # a custom train cell does its own scaling and is converted in the script: Model gets neither
        ("amp: {level: O2}\nloss_scale: {kind: dynamic}\n", {}),
        ("amp: {level: O2}\nloss_scale: {kind: fixed, drop_overflow_update: true}\n", {}),
        ("amp: {level: O2}\ngrad: {clip: {kind: global_norm}}\n", {}),
        # fp32_cells cannot be said with amp_level: the network is converted in build_network()
        ("amp: {level: O2, fp32_cells: [Softmax]}\n", {}),
    ],
    ids=[
        "O0",
        "O1",
        "O3",
        "auto",
        "O2",
        "O2-keep-bn-false",
        "O2-fixed",
        "O0-fixed",
        "O2-dynamic",
        "O2-drop-overflow",
        "O2-clip",
        "O2-fp32-cells",
    ],
)
def test_model_kwargs(tmp_path: Path, extra: str, expected: dict[str, object]) -> None:
    assert model_kwargs(tmp_path, extra) == expected


def test_fixed_loss_scale_without_custom_cell_goes_to_the_optimizer_too(tmp_path: Path) -> None:
    plan = plan_of(load(tmp_path, MINIMAL + "loss_scale: {kind: fixed}\n"))
    assert ("loss_scale", Name("LOSS_SCALE")) in plan.shared.optimizer.args


@pytest.mark.parametrize(
    ("amp", "form"), [("{level: O0}", "network"), ("{level: O2, fp32_cells: [Softmax]}", "net_with_loss")]
)
def test_fixed_loss_scale_manager_is_imported_with_either_form(tmp_path: Path, amp: str, form: str) -> None:
    """Model gets FixedLossScaleManager with network + loss as one cell too (it was not imported there)."""
    plan = plan_of(load(tmp_path, MINIMAL + f"amp: {amp}\nloss_scale: {{kind: fixed}}\n"))
    assert plan.model is not None and (plan.model.form, plan.model.loss_scale_manager) == (form, "fixed")
    assert Import("mindspore.amp", "FixedLossScaleManager") in plan.imports


# --- network build expressions and shapes ---------------------------------------------------------


@pytest.mark.parametrize(
    ("network", "expected"),
    [
        (
            "{kind: mindcv, name: resnet18}",
            'create_model("resnet18", num_classes=10, pretrained=False)',
        ),
        (
            "{kind: mindcv, name: resnet50, num_classes: 3, kwargs: {in_channels: 1, drop_rate: 0.1}}",
            'create_model("resnet50", num_classes=3, pretrained=False, in_channels=1, drop_rate=0.1)',
        ),
    ],
)
def test_mindcv_build_expression(tmp_path: Path, network: str, expected: str) -> None:
    channels = 1 if "in_channels: 1" in network else 3  # the data must fit the model (validate checks it)
    text = MINIMAL.replace("{kind: builtin, name: mlp}", network).replace(
        "[1, 8, 8]}", f"[{channels}, 8, 8], num_classes: 3}}"
    )
    plan = plan_of(load(tmp_path, text))
    assert literal(plan.shared.network.call) == expected
    assert Import("mindcv.models", "create_model") in plan.imports


def conv_out(size: int, kernel: int, stride: int = 1, padding: int = 0) -> int:
    return (size + 2 * padding - kernel) // stride + 1


def lenet_flatten(height: int, width: int) -> int:
    """16 channels after conv5 valid -> maxpool 2/2 -> conv5 valid -> maxpool 2/2."""
    sizes = []
    for side in (height, width):
        side = conv_out(side, 5)
        side = conv_out(side, 2, stride=2)
        side = conv_out(side, 5)
        side = conv_out(side, 2, stride=2)
        sizes.append(side)
    return 16 * sizes[0] * sizes[1]


@pytest.mark.parametrize(("height", "width"), [(16, 16), (28, 28), (32, 32), (28, 32), (17, 45)])
def test_lenet_flatten_size(tmp_path: Path, height: int, width: int) -> None:
    text = MINIMAL.replace("name: mlp}", f"name: lenet5, input_shape: [3, {height}, {width}]}}").replace(
        "[1, 8, 8]", f"[3, {height}, {width}]"
    )
    plan = plan_of(load(tmp_path, text))
    first = plan.shared.network.dense[0]
    assert math.prod(first.in_features) == lenet_flatten(height, width)
    assert literal(plan.shared.network.call) == "LeNet5(num_classes=10, in_channels=3)"
    assert [d.out_features for d in plan.shared.network.dense] == [120, 84, "num_classes"]


def test_lenet_known_sizes() -> None:
    """The classic numbers, as a check of the independent arithmetic above."""
    assert (lenet_flatten(32, 32), lenet_flatten(28, 28), lenet_flatten(16, 16)) == (400, 256, 16)


def test_mlp_input_features(tmp_path: Path) -> None:
    text = MINIMAL.replace("[1, 8, 8]", "[3, 5, 7]")
    plan = plan_of(load(tmp_path, text))
    assert literal(plan.shared.network.call) == "MLP(num_classes=10, in_features=105)"


# --- what each variant writes out ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("amp", "native_level", "cast"),
    [
        ("{level: O0}", "O0", False),
        ("{level: O1}", "O1", False),
        ("{level: O2}", "O2", True),
        ("{level: O2, keep_batchnorm_fp32: false}", "O3", True),
        ("{level: O3}", "O3", True),
        ("{level: O3, keep_batchnorm_fp32: true}", "O2", True),
        ("{level: auto}", "auto", True),
    ],
)
def test_amp_level_and_float32_loss(tmp_path: Path, amp: str, native_level: str, cast: bool) -> None:
    plan = plan_of(load(tmp_path, MINIMAL + f"amp: {amp}\n"), "native")
    assert (plan.shared.amp.native_level, plan.shared.amp.cast_loss_fp32) == (native_level, cast)
    assert plan.loss_cell == ("fp32" if cast else "nn")  # WithLossFp32, WithEvalCell(add_cast_fp32=True)


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        # Model builds everything from amp_level: no cell written, the network not converted
        ("amp: {level: O2}\n", ("network", False, False, False)),
        # clipping: Model gets the TrainStep cell, whose network the script converts
        ("amp: {level: O2}\ngrad: {clip: {kind: global_norm}}\n", ("train_cell", True, True, True)),
        # fp32_cells: converted in the script, Model gets network + float32 loss (WithLossFp32) as one cell
        ("amp: {level: O2, fp32_cells: [Softmax]}\n", ("net_with_loss", False, True, True)),
        ("amp: {level: O1, fp32_cells: [Softmax]}\n", ("network", False, True, False)),
        ("", ("network", False, False, False)),
    ],
    ids=["O2", "O2-clip", "O2-fp32-cells", "O1-fp32-cells", "fp32"],
)
def test_model_variant_forms(tmp_path: Path, extra: str, expected: tuple[str, bool, bool, bool]) -> None:
    plan = plan_of(load(tmp_path, MINIMAL + extra), "model")
    assert plan.model is not None
    assert (
        plan.model.form,
        "train_step" in plan.cells,
        plan.convert_network,
        "loss_cell" in plan.cells,
    ) == expected
    native = plan_of(load(tmp_path, MINIMAL + extra), "native")
    assert native.model is None and "train_step" in native.cells


def test_custom_cell_reasons_are_listed(tmp_path: Path) -> None:
    extra = "loss_scale: {kind: dynamic}\ngrad: {clip: {kind: norm}, accumulation_steps: 2}\n"
    step = plan_of(load(tmp_path, MINIMAL + extra)).shared.step
    assert step.custom_cell and step.accumulate and step.returns_scale
    assert [reason.split(" (")[0] for reason in step.custom_reasons] == [
        "dynamic loss scaling on CPU",
        "gradient clipping",
        "gradient accumulation",
    ]
    assert step.model_reason.startswith("Model has no option for dynamic loss scaling on CPU")
    assert step.extras == ("loss scaling (dynamic)", "clipping (norm)", "accumulation over 2 batches")


def test_a_factory_kwarg_named_batch_size_is_the_factorys_only(tmp_path: Path) -> None:
    (tmp_path / "my_data.py").write_text(SUPPORT["my_data.py"], encoding="utf-8")
    source = "{kind: import, factory: my_data:make, image_shape: [1, 8, 8], batch_size: 16, kwargs: {batch_size: 3}}"
    (fn,) = plan_of(
        load(tmp_path, MINIMAL.replace("{kind: synthetic, image_shape: [1, 8, 8]}", source))
    ).shared.dataset_functions
    assert [literal(s.call) for s in fn.steps if s.kind == "Imported"] == ["make(batch_size=3)"]
    assert fn.steps[-1].size == 16  # batch() takes data.train.batch_size


def test_data_parallel_shards_only_the_train_data(tmp_path: Path) -> None:
    text = MINIMAL.replace(
        "  train: {kind: synthetic, image_shape: [1, 8, 8]}\n",
        "  train: {kind: synthetic, image_shape: [1, 8, 8], batch_size: 8}\n"
        "  eval: {kind: synthetic, image_shape: [1, 8, 8], batch_size: 5}\n",
    )
    plan = plan_of(load(tmp_path, text + "parallel: {mode: data_parallel, workers: 2}\n"))
    train, evaluation = plan.shared.dataset_functions  # sharding keeps them two functions
    assert (train.params, train.steps[-1].size, train.steps[-1].per_shard) == (
        ("num_shards", "shard_id"),
        8,
        True,
    )
    assert literal(source_of(train)).endswith("num_shards=num_shards, shard_id=shard_id)")
    assert (evaluation.params, evaluation.steps[-1].size, evaluation.steps[-1].per_shard) == ((), 5, False)
    assert [literal(use.call) for use in plan.shared.datasets] == [
        "create_train_dataset(num_shards=group_size, shard_id=rank)",
        "create_eval_dataset()",
    ]
    assert plan.sets_parallel_context and plan.shared.step.parallel
    assert not plan_of(
        load(tmp_path, text + "parallel: {mode: data_parallel, workers: 2}\n"), "native"
    ).sets_parallel_context


@pytest.mark.parametrize("kind", ["constant", "piecewise", "cosine", "warmup_cosine"])
def test_lr_schedule_is_a_list_unless_constant(tmp_path: Path, kind: str) -> None:
    extra = (
        "lr_schedule: {kind: piecewise, milestones: [1]}\n"
        if kind == "piecewise"
        else f"lr_schedule: {{kind: {kind}}}\n"
    )
    plan = plan_of(load(tmp_path, MINIMAL + extra + "train: {epochs: 2}\n"))
    assert plan.shared.lr.is_list is (kind != "constant")


# --- per device ------------------------------------------------------------------------------------


def test_no_device_notes_when_nothing_differs(tmp_path: Path) -> None:
    plan = plan_of(load(tmp_path, MINIMAL))
    assert plan.device_notes == ()
    assert plan.shared.runtime.memory_devices == ()


def test_device_notes_for_memory_cap_and_sink_mode(tmp_path: Path) -> None:
    extra = "runtime: {max_device_memory: 8GB}\ntrain: {dataset_sink_mode: true, sink_size: 10}\n"
    model = plan_of(load(tmp_path, MINIMAL + extra), "model")
    native = plan_of(load(tmp_path, MINIMAL + extra), "native")
    assert model.shared.runtime.memory_devices == ("GPU", "Ascend")
    notes = {d.device: d.notes for d in model.device_notes}
    assert notes["CPU"] == (
        "train.dataset_sink_mode is ignored on CPU: one batch per step",
        "runtime.max_device_memory (8GB) does not apply on CPU",
    )
    assert (
        notes["GPU"]
        == notes["Ascend"]
        == (
            "train.dataset_sink_mode: Model sinks 10 batches per call (-1: a whole epoch); callbacks run once per sink",
            "memory pool capped at 8GB (runtime.max_device_memory)",
        )
    )
    native_gpu = {d.device: d.notes for d in native.device_notes}["GPU"]
    assert native_gpu[0].startswith("train.dataset_sink_mode: this loop feeds one batch per step")


# --- names the config imports ---------------------------------------------------------------------


def test_installed_factory_is_imported_without_sys_path(tmp_path: Path) -> None:
    """A factory from an installed package (not next to the config): no sys.path entry, but imported
    where it is called (it used to be called without an import: a NameError)."""
    text = MINIMAL.replace(
        "{kind: builtin, name: mlp}", "{kind: import, factory: 'mindcv.models.resnet:resnet18'}"
    )
    loaded = load(tmp_path, text)
    factory = plan_of(loaded).shared.network.factory
    assert factory is not None
    assert (factory.module, factory.attr, factory.sys_path) == ("mindcv.models.resnet", "resnet18", None)
    files = generate(loaded, tmp_path / "out")
    assert "    from mindcv.models.resnet import resnet18\n" in files[PREDICT_NAME]  # in build_network()
    for name, script in ((n, files[n]) for n in SCRIPT_NAMES.values()):
        (build,) = [
            node
            for node in ast.parse(script).body
            if isinstance(node, ast.FunctionDef) and node.name == "train"
        ]
        imports = [
            (n.module, [a.name for a in n.names]) for n in ast.walk(build) if isinstance(n, ast.ImportFrom)
        ]
        assert imports == [("mindcv.models.resnet", ["resnet18"])], name
        assert "sys.path" not in ast.unparse(build)
