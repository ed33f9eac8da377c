"""loss.heads (several label columns): each mismatch fails at validate time, located at its key; the plan
of the cookbook recipe (docs/cookbook/several_heads.yaml)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.output.generate import generate
from mscodegen.plan import build_shared

from conftest import REPO

RECIPE = REPO / "docs" / "cookbook" / "several_heads.yaml"
BASE = yaml.safe_load(RECIPE.read_text(encoding="utf-8"))


def _write(tmp_path: Path, tree: dict) -> Path:
    (tmp_path / "several_heads_parts.py").write_text(
        (RECIPE.parent / "several_heads_parts.py").read_text(encoding="utf-8"), encoding="utf-8"
    )
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(tree, sort_keys=False), encoding="utf-8")
    return path


def _problems(tmp_path: Path, **changes: object) -> list[tuple[str, str]]:
    tree = {**BASE, **changes}
    with pytest.raises(ConfigError) as info:
        load_config(_write(tmp_path, tree))
    return [(p.path, p.message) for p in info.value.problems]


def test_a_head_without_a_label_column_and_a_label_without_a_head(tmp_path: Path) -> None:
    heads = {"digit": {"name": "CrossEntropyLoss"}, "parityy": {"name": "BCEWithLogitsLoss"}}
    found = _problems(tmp_path, loss={"heads": heads})
    messages = dict(found)
    assert set(messages) == {"loss.heads.parityy", "data.labels[1]", "eval.metrics[1].head"}
    assert "'parityy' is not a label column" in messages["loss.heads.parityy"]
    assert "did you mean 'parity'" in messages["loss.heads.parityy"]
    assert "label column 'parity' has no head in loss.heads" in messages["data.labels[1]"]


def test_heads_in_another_order_than_the_labels(tmp_path: Path) -> None:
    heads = {"parity": {"name": "BCEWithLogitsLoss"}, "digit": {"name": "CrossEntropyLoss"}}
    found = _problems(tmp_path, loss={"heads": heads})
    assert [path for path, _ in found] == ["loss.heads"]
    assert "in data.labels' order (digit, parity)" in found[0][1]


@pytest.mark.parametrize("weight", ["0.5", True, 0, -1.0])
def test_a_weight_must_be_a_positive_number(tmp_path: Path, weight: object) -> None:
    heads = {"digit": {"name": "CrossEntropyLoss", "weight": weight}, "parity": {"name": "BCEWithLogitsLoss"}}
    found = _problems(tmp_path, loss={"heads": heads})
    assert [path for path, _ in found] == ["loss.heads.digit.weight"]


def test_metrics_name_a_known_head(tmp_path: Path) -> None:
    metrics = [
        {"name": "accuracy", "head": "digits"},  # unknown head
        {"name": "accuracy"},  # no head
        {"name": "loss", "head": "digit"},  # the loss is the sum
        {"name": "accuracy", "head": "parity"},  # a BCE head: binary metrics
    ]
    found = _problems(tmp_path, eval={"metrics": metrics})
    assert [path for path, _ in found] == [
        "eval.metrics[0].head",
        "eval.metrics[1]",
        "eval.metrics[2].head",
        "eval.metrics[3].name",
    ]
    assert "'digits' is not a head; loss.heads has digit, parity" in found[0][1]
    assert "use binary_accuracy" in found[3][1]


def test_head_needs_loss_heads_and_heads_need_an_imported_network(tmp_path: Path) -> None:
    found = _problems(tmp_path, loss={"name": "CrossEntropyLoss"})  # two labels, one loss, metrics with head
    assert ("eval.metrics[0].head", "head reads one output of several: it needs loss.heads") in found
    builtin = {"kind": "builtin", "name": "mlp", "num_classes": 10, "input_shape": [1, 8, 8]}
    found = _problems(tmp_path, network=builtin)
    assert [path for path, _ in found] == ["loss.heads"]
    assert "network returns one: use your own (network.kind: import)" in found[0][1]


def test_a_head_loss_kwargs_are_checked(tmp_path: Path) -> None:
    heads = {"digit": {"name": "CrossEntropyLoss", "kwargs": {"smoothing": 0.1}}, "parity": {}}
    found = _problems(tmp_path, loss={"heads": heads})
    assert [path for path, _ in found][:1] == ["loss.heads.digit.kwargs.smoothing"]


def test_the_recipe_plan(tmp_path: Path) -> None:
    loaded = load_config(RECIPE)
    shared = build_shared(
        loaded.config, source="several_heads.yaml", config_dir=RECIPE.parent, out_dir=tmp_path, name="heads"
    )
    assert shared.heads is not None
    assert [(h.name, h.loss, h.weight, h.constant) for h in shared.heads.heads] == [
        ("digit", "CrossEntropyLoss", 1.0, "DIGIT_LOSS_WEIGHT"),
        ("parity", "BCEWithLogitsLoss", 0.5, "PARITY_LOSS_WEIGHT"),
    ]
    assert [(m.key, m.call.func, m.head) for m in shared.metrics] == [
        ("digit_accuracy", "HeadMetric", 0),
        ("parity_binary_accuracy", "HeadMetric", 1),
        ("loss", "nn.Loss", None),
    ]
    assert [m.call.args[0].func for m in shared.metrics[:2]] == ["nn.Accuracy", "BinaryMetric"]
    assert shared.binary_metric  # the script writes BinaryMetric, wrapped or not
    texts = generate(loaded, tmp_path / "out")
    for name in ("train_model.py", "train_native.py"):
        assert (
            "loss_fn = HeadsLoss(digit_loss=nn.CrossEntropyLoss(), parity_loss=nn.BCEWithLogitsLoss())"
            in (texts[name])
        )
        assert '"digit_accuracy": HeadMetric(nn.Accuracy(), 0)' in texts[name]
    assert "eval_network=WithEvalHeads(network, loss_fn)" in texts["train_model.py"]
    assert "WithEvalColumns" not in texts["train_model.py"]  # the heads' eval cell replaces it
    assert (
        "HEADS = ['digit', 'parity']" in texts["predict.py"]
        or 'HEADS = ["digit", "parity"]' in texts["predict.py"]
    )


def test_without_eval_metrics_each_head_gets_its_loss_defaults(tmp_path: Path) -> None:
    tree = {key: value for key, value in BASE.items() if key != "eval"}
    shared = build_shared(
        load_config(_write(tmp_path, tree)).config,
        source="cfg.yaml",
        config_dir=tmp_path,
        out_dir=tmp_path / "out",
        name="heads",
    )
    assert [(m.key, m.head) for m in shared.metrics] == [
        ("digit_accuracy", 0),
        ("parity_binary_accuracy", 1),
        ("loss", None),
    ]


def test_class_names_with_heads(tmp_path: Path) -> None:
    data = {**BASE["data"], "class_names": [str(i) for i in range(10)]}
    found = _problems(tmp_path, data=data)
    assert [path for path, _ in found] == ["data.class_names"]


def test_a_column_named_like_a_head_s_output_or_loss(tmp_path: Path) -> None:
    columns = ["image", "digit", "digit_loss"]
    data = {
        **BASE["data"],
        "labels": ["digit", "digit_loss"],
        "train": {**BASE["data"]["train"], "columns": columns},
        "eval": {**BASE["data"]["eval"], "columns": columns},
    }
    heads = {"digit": {"name": "CrossEntropyLoss"}, "digit_loss": {"name": "BCEWithLogitsLoss"}}
    metrics = [{"name": "loss"}]
    found = _problems(tmp_path, data=data, loss={"heads": heads}, eval={"metrics": metrics})
    assert [path for path, _ in found] == ["loss.heads.digit"]
    assert "digit_loss is a column: rename the column" in found[0][1]
