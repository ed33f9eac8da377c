"""The config schema: defaults, every kind of every discriminated union, the JSON Schema, and the settings
of the seed guide (../shared/seed/model-module-guide.zh.txt), each shown by the YAML key that expresses it."""

from __future__ import annotations

import json
import typing
from pathlib import Path

import jsonschema
import pytest
import yaml

from mscodegen.catalog.literals import literal
from mscodegen.cli import main
from mscodegen.config.compose import compose
from mscodegen.config.load import LoadedConfig, load_config
from mscodegen.output.generate import plans_of
from mscodegen.schema import Config
from mscodegen.schema.data import Data
from mscodegen.schema.optim import LOSS_CLASSES
from mscodegen.schema.precision import Grad
from mscodegen.schema.training import SAME_SHAPE_TARGET_LOSSES, Eval

from conftest import REPO

EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))

MINIMAL = """\
network: {kind: builtin, name: mlp}
data:
  train: {kind: synthetic, image_shape: [1, 8, 8]}
optimizer: {name: momentum}
"""


def load(tmp_path: Path, text: str, name: str = "cfg") -> LoadedConfig:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return load_config(path)


def plan_of(loaded: LoadedConfig, variant: str = "model"):  # noqa: ANN201
    return plans_of(loaded, loaded.path.parent / "out", (variant,))[1][variant]


# --- defaults -------------------------------------------------------------------------------------


def test_minimal_config_gets_every_default(tmp_path: Path) -> None:
    cfg = load(tmp_path, MINIMAL).config
    assert (cfg.runtime.mode, cfg.runtime.device_target, cfg.runtime.seed) == ("graph", "CPU", 1)
    assert cfg.runtime.max_device_memory is None
    assert (cfg.train.epochs, cfg.train.dataset_sink_mode, cfg.train.sink_size) == (1, False, -1)
    assert cfg.train.output_dir == "outputs"
    assert (cfg.loss.name, cfg.loss.kwargs) == ("SoftmaxCrossEntropyWithLogits", None)
    assert cfg.lr_schedule.kind == "constant"
    assert cfg.loss_scale.kind == "none"
    assert (cfg.amp.level, cfg.amp.keep_batchnorm_fp32, cfg.amp.fp32_cells) == ("O0", None, [])
    assert (cfg.grad.clip, cfg.grad.accumulation_steps, cfg.grad.process) == (None, 1, None)
    assert (cfg.parallel.mode, cfg.parallel.workers, cfg.parallel.gradients_mean) == ("stand_alone", 1, True)
    assert cfg.eval is None and cfg.data.eval is None
    assert cfg.callbacks.checkpoint is None
    train = cfg.data.train
    # shuffle and drop_remainder: None, each split's default (true for train, false for eval)
    assert (train.batch_size, train.shuffle, train.drop_remainder, train.num_workers) == (32, None, None, 1)
    assert (cfg.optimizer.lr, cfg.optimizer.momentum, cfg.optimizer.weight_decay) == (0.01, 0.9, 0.0)


def test_eval_section_defaults_to_accuracy_and_loss() -> None:
    assert [m.name for m in Eval().metrics] == ["accuracy", "loss"]
    assert Eval().every_epochs == 1


def test_name_defaults_to_the_file_stem(tmp_path: Path) -> None:
    assert load(tmp_path, MINIMAL, name="my_run-2").name == "my_run-2"
    assert load(tmp_path, "name: other\n" + MINIMAL, name="my_run-2").name == "other"


@pytest.mark.parametrize(
    ("train_shuffle", "eval_shuffle", "expected"),
    [(None, None, (True, False)), (False, True, (False, True)), (True, None, (True, False))],
)
def test_shuffle_default_depends_on_the_split(
    tmp_path: Path, train_shuffle: bool | None, eval_shuffle: bool | None, expected: tuple[bool, bool]
) -> None:
    def split(shuffle: bool | None) -> str:
        extra = "" if shuffle is None else f", shuffle: {str(shuffle).lower()}"
        return f"{{kind: synthetic, image_shape: [1, 8, 8]{extra}}}"

    text = MINIMAL.replace(
        "  train: {kind: synthetic, image_shape: [1, 8, 8]}\n",
        f"  train: {split(train_shuffle)}\n  eval: {split(eval_shuffle)}\n",
    )
    loaded = load(tmp_path, text)
    assert (loaded.config.data.train.shuffle, loaded.config.data.eval.shuffle) == (
        train_shuffle,
        eval_shuffle,
    )
    plan = plan_of(loaded)
    # one function for both splits, told by its callers whether to shuffle
    (function,) = plan.shared.dataset_functions
    assert "shuffle" in function.params and "shuffle=shuffle" in literal(
        next(s.call for s in function.steps if s.kind == "Source")
    )
    calls = [literal(use.call) for use in plan.shared.datasets]
    assert [f"shuffle={expected[0]}" in calls[0], f"shuffle={expected[1]}" in calls[1]] == [True, True]


@pytest.mark.parametrize("loss", LOSS_CLASSES)
def test_loss_kwargs_default_only_for_softmax_cross_entropy(tmp_path: Path, loss: str) -> None:
    text = MINIMAL + f"loss: {{name: {loss}}}\n"
    if loss in SAME_SHAPE_TARGET_LOSSES:  # the built-in sources yield class indices: regress on your own data
        (tmp_path / "targets.py").write_text("def make():\n    pass\n")
        text = text.replace(
            "{kind: synthetic, image_shape", "{kind: import, factory: 'targets:make', image_shape"
        )
    loaded = load(tmp_path, text)
    assert loaded.config.loss.kwargs is None
    expected = {
        "SoftmaxCrossEntropyWithLogits": 'nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")',
        "FocalLoss": "FocalLossOnIndices()",  # the synthetic source's class indices, reshaped for it
    }.get(loss, f"nn.{loss}()")
    assert literal(plan_of(loaded).shared.loss.call) == expected


def test_explicit_loss_kwargs_replace_the_default(tmp_path: Path) -> None:
    text = MINIMAL + "loss: {name: SoftmaxCrossEntropyWithLogits, kwargs: {sparse: true}}\n"
    assert (
        literal(plan_of(load(tmp_path, text)).shared.loss.call)
        == "nn.SoftmaxCrossEntropyWithLogits(sparse=True)"
    )


# --- discriminated unions: every kind is accepted ------------------------------------------------


def tags(annotation: object, discriminator: str) -> set[str]:
    """The tags a discriminated-union annotation accepts, read from the member models."""
    union = annotation
    if typing.get_origin(union) is typing.Annotated:  # Annotated[Union[...], Field(discriminator=...)]
        union = typing.get_args(union)[0]
    found: set[str] = set()
    for member in typing.get_args(union):
        found.update(typing.get_args(member.model_fields[discriminator].annotation))
    return found


UNIONS: dict[str, tuple[object, str, dict[str, dict]]] = {
    "network": (
        Config.model_fields["network"].annotation,
        "kind",
        {
            "builtin": {"kind": "builtin", "name": "lenet5", "input_shape": [1, 32, 32]},
            "mindcv": {"kind": "mindcv", "name": "resnet18"},
            "import": {"kind": "import", "factory": "pkg.nets:Net", "kwargs": {"width": 2}},
        },
    ),
    "data.train": (
        Data.model_fields["train"].annotation,
        "kind",
        {
            "synthetic": {"kind": "synthetic"},
            "digits": {"kind": "digits", "split": "test"},
            "mnist": {"kind": "mnist", "path": "mnist"},
            "cifar10": {"kind": "cifar10", "path": "cifar"},
            "image_folder": {"kind": "image_folder", "path": "images"},
            "import": {"kind": "import", "factory": "pkg.data:make", "image_shape": [3, 8, 8]},
            "csv": {"kind": "csv", "path": "table.csv", "columns": {"image": ["a", "b"], "label": "c"}},
        },
    ),
    "optimizer": (
        Config.model_fields["optimizer"].annotation,
        "name",
        {
            "momentum": {"name": "momentum", "momentum": 0.8},
            "sgd": {"name": "sgd", "momentum": 0.9, "nesterov": True},
            "adam": {"name": "adam", "beta1": 0.8},
            "adamw": {"name": "adamw", "weight_decay": 0.01},
            "rmsprop": {"name": "rmsprop", "centered": True},
            "lamb": {"name": "lamb", "eps": 1e-7},
            "lion": {"name": "lion", "beta2": 0.98},
        },
    ),
    "lr_schedule": (
        Config.model_fields["lr_schedule"].annotation,
        "kind",
        {
            "constant": {"kind": "constant"},
            "piecewise": {"kind": "piecewise", "milestones": [1, 2]},
            "cosine": {"kind": "cosine", "min_lr": 0.001},
            "warmup_cosine": {"kind": "warmup_cosine", "warmup_epochs": 1},
            "exponential": {"kind": "exponential", "gamma": 0.5},
            "polynomial": {"kind": "polynomial", "power": 2.0, "epoch_stair": True},
            "one_cycle": {"kind": "one_cycle", "pct_start": 0.25},
        },
    ),
    "loss_scale": (
        Config.model_fields["loss_scale"].annotation,
        "kind",
        {
            "none": {"kind": "none"},
            "fixed": {"kind": "fixed", "value": 128.0},
            "dynamic": {"kind": "dynamic", "window": 10},
        },
    ),
    "grad.clip": (
        typing.get_args(Grad.model_fields["clip"].annotation)[0],  # Clip | None
        "kind",
        {
            "global_norm": {"kind": "global_norm", "max_norm": 2.0},
            "norm": {"kind": "norm"},
            "value": {"kind": "value", "clip_value": 0.5},
        },
    ),
    "eval.metrics[0]": (
        typing.get_args(Eval.model_fields["metrics"].annotation)[0],  # list[Metric]
        "name",
        {
            "accuracy": {"name": "accuracy"},
            "loss": {"name": "loss"},
            "precision": {"name": "precision"},
            "recall": {"name": "recall"},
            "f1": {"name": "f1"},
            "mae": {"name": "mae"},
            "mse": {"name": "mse"},
            "binary_accuracy": {"name": "binary_accuracy"},
            "binary_precision": {"name": "binary_precision"},
            "binary_recall": {"name": "binary_recall"},
            "binary_f1": {"name": "binary_f1"},
            "auc": {"name": "auc"},
            "top_k": {"name": "top_k", "k": 3},
            "import": {"name": "import", "class": "pkg.metrics:Multi", "key": "multi"},
        },
    ),
}
BASE = yaml.safe_load(MINIMAL)


def with_value(key: str, value: dict) -> dict:
    data = yaml.safe_load(MINIMAL)
    data["data"]["eval"] = {"kind": "synthetic"}
    if key == "data.train":
        data["data"]["train"] = value
    elif key == "grad.clip":
        data["grad"] = {"clip": value}
    elif key == "eval.metrics[0]":
        data["eval"] = {"metrics": [value]}
    else:
        data[key] = value
    return data


def selected(cfg: Config, key: str) -> object:
    return {
        "data.train": lambda: cfg.data.train,
        "grad.clip": lambda: cfg.grad.clip,
        "eval.metrics[0]": lambda: cfg.eval.metrics[0],
    }.get(key, lambda: getattr(cfg, key))()


@pytest.mark.parametrize("key", UNIONS)
def test_samples_cover_every_kind_of_the_union(key: str) -> None:
    annotation, discriminator, samples = UNIONS[key]
    assert set(samples) == tags(annotation, discriminator)


@pytest.mark.parametrize(
    ("key", "tag"), [(key, tag) for key, (_, _, samples) in UNIONS.items() for tag in samples]
)
def test_each_kind_of_each_union_is_accepted(key: str, tag: str) -> None:
    annotation, discriminator, samples = UNIONS[key]
    cfg = Config.model_validate(with_value(key, samples[tag]))
    value = selected(cfg, key)
    assert getattr(value, discriminator) == tag
    for field, expected in samples[tag].items():
        attr = "cls" if field == "class" else field
        assert getattr(value, attr) == expected


# --- JSON Schema ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def json_schema() -> dict:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["schema"]) == 0
    return json.loads(out.getvalue())


@pytest.fixture(scope="module")
def validator(json_schema: dict) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json_schema)


def test_schema_command_prints_a_valid_json_schema(json_schema: dict) -> None:
    assert json_schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(json_schema)
    # either form: one network, or two (gan:)
    assert json_schema["anyOf"] == [{"$ref": "#/$defs/Config"}, {"$ref": "#/$defs/GanConfig"}]
    one, gan = json_schema["$defs"]["Config"], json_schema["$defs"]["GanConfig"]
    assert set(one["required"]) == {"network", "data", "optimizer"}
    assert set(gan["required"]) == {"gan", "data"}
    assert one["additionalProperties"] is False and gan["additionalProperties"] is False


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_json_schema_accepts_the_examples(validator: jsonschema.Draft202012Validator, example: Path) -> None:
    # A config that extends a base is checked as composed (the base supplies required sections).
    validator.validate(compose(example).loaded.data)


def test_examples_exist() -> None:
    assert len(EXAMPLES) >= 1


@pytest.mark.parametrize(("key", "tag"), [(k, t) for k, (_, _, s) in UNIONS.items() for t in s])
def test_json_schema_accepts_every_kind(
    validator: jsonschema.Draft202012Validator, key: str, tag: str
) -> None:
    validator.validate(with_value(key, UNIONS[key][2][tag]))


@pytest.mark.parametrize(
    "bad",
    [
        {**BASE, "optimiser": {"name": "adam"}},
        {**BASE, "optimizer": {"name": "adamx"}},
        {**BASE, "train": {"epochs": 0}},
        {k: v for k, v in BASE.items() if k != "network"},
        {**BASE, "eval": {"metrics": [{"name": "import", "cls": "a:B", "key": "k"}]}},
    ],
    ids=["unknown-key", "unknown-tag", "out-of-range", "missing-section", "alias-not-field-name"],
)
def test_json_schema_rejects_what_the_loader_rejects(
    validator: jsonschema.Draft202012Validator, bad: dict
) -> None:
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(bad)


# --- every setting of the seed guide is expressible ---------------------------------------------
# Each case: a config fragment for one setting the guide (../shared/seed) names, and the MindSpore
# statement it must produce in the generated script of the given variant. Checked on the written
# text (what the user runs), not on the config object that was just loaded.

EVAL = "  eval: {kind: synthetic, image_shape: [1, 8, 8], seed: 1}\n"
GUIDE_CASES = {
    "model_metrics": (
        MINIMAL.replace("data:\n", "data:\n" + EVAL) + "eval: {metrics: [{name: accuracy}, {name: loss}]}\n",
        "model",
        ['"accuracy": nn.Accuracy()', '"loss": nn.Loss()', "Model("],
    ),
    "amp_o2": (MINIMAL + "amp: {level: O2}\n", "model", ['amp_level="O2"']),
    "fixed_loss_scale": (
        MINIMAL + "amp: {level: O2}\nloss_scale: {kind: fixed, value: 1024}\n",
        "model",
        [
            "FixedLossScaleManager(",
            "LOSS_SCALE, drop_overflow_update=False",
            "loss_scale=LOSS_SCALE",
            "LOSS_SCALE = 1024.0",
        ],
    ),
    "dynamic_loss_scale": (
        MINIMAL + "amp: {level: O2}\nloss_scale: {kind: dynamic, init: 65536, window: 2000}\n",
        "native",
        [
            "amp.DynamicLossScaler(LOSS_SCALE, LOSS_SCALE_FACTOR, LOSS_SCALE_WINDOW)",
            "LOSS_SCALE_WINDOW = 2000",
        ],
    ),
    "clip_and_grad_process": (
        MINIMAL
        + "grad:\n  clip: {kind: global_norm, max_norm: 1.0}\n  process: grad_tools:extra_weight_decay\n",
        "model",
        ["ops.clip_by_global_norm(grads, MAX_NORM)", "from grad_tools import extra_weight_decay"],
    ),
    "custom_metric_dict": (
        MINIMAL.replace("data:\n", "data:\n" + EVAL)
        + "eval:\n  metrics:\n    - {name: import, class: my_metrics:MultiMetric, key: multi}\n",
        "native",
        ['"multi": MultiMetric()'],
    ),
    "data_parallel": (
        MINIMAL.replace("image_shape: [1, 8, 8]}", "image_shape: [1, 8, 8], batch_size: 32, shuffle: true}")
        + "runtime: {seed: 7}\nparallel: {mode: data_parallel, workers: 2, gradients_mean: true}\n",
        "native",
        ["nn.DistributedGradReducer(optimizer.parameters, mean=GRADIENTS_MEAN)", "init()", "SEED = 7"],
    ),
    "sink_mode": (
        MINIMAL + "runtime: {device_target: Ascend}\ntrain: {dataset_sink_mode: true, sink_size: 100}\n",
        "model",
        ["dataset_sink_mode=True", "sink_size=100"],
    ),
    "max_device_memory": (
        MINIMAL + "runtime: {device_target: GPU, max_device_memory: 30GB}\n",
        "native",
        ["ms.runtime.set_memory(max_size=MAX_DEVICE_MEMORY)", 'MAX_DEVICE_MEMORY = "30GB"'],
    ),
}


@pytest.mark.parametrize("case", list(GUIDE_CASES))
def test_guide_setting_reaches_the_script(tmp_path: Path, case: str) -> None:
    text, variant, expected = GUIDE_CASES[case]
    (tmp_path / "grad_tools.py").write_text("def extra_weight_decay(grads, weights):\n    return grads\n")
    (tmp_path / "my_metrics.py").write_text("class MultiMetric:\n    def eval(self):\n        return {}\n")
    config = tmp_path / "cfg.yaml"
    config.write_text(text, encoding="utf-8")
    assert main(["new", str(config), "--out", str(tmp_path / "out"), "--variant", variant]) == 0
    script = (tmp_path / "out" / f"train_{variant}.py").read_text()
    for statement in expected:
        assert statement in script, f"{case}: {statement!r} not in train_{variant}.py"


# --- the examples are valid -----------------------------------------------------------------------


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_validate_accepts_the_example(
    example: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    weights: list[str] = []
    if "checkpoint:\n    path:" in example.read_text(encoding="utf-8"):
        # network.checkpoint: validate checks the file exists; the example's is written by its test
        (tmp_path / "w.ckpt").write_bytes(b"")
        weights = ["--set", f"network.checkpoint.path={tmp_path / 'w.ckpt'}"]
    assert main(["validate", str(example), *weights]) == 0
    out, err = capsys.readouterr()
    assert (out, err) == (f"{example}: ok\n", "")
