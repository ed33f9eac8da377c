"""callbacks.checkpoint.keep_max_by (mindcv's top_k): what validate refuses, at which key, and what it accepts."""

from __future__ import annotations

import pytest
import yaml

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config

from conftest import REPO, merge

KEY = "callbacks.checkpoint.keep_max_by"
EVAL = {"every_epochs": 1, "metrics": [{"name": "accuracy"}, {"name": "loss"}]}
RANKED = {"every_epochs": 2, "keep_max": 2, "keep_max_by": {"monitor": "accuracy"}}


def problems_of(write_config, overrides: dict) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as caught:
        load_config(write_config(overrides))
    return [(p.path, p.message) for p in caught.value.problems]


REJECTED = [
    pytest.param(
        {"data": {"eval": None}, "callbacks": {"checkpoint": RANKED}},
        KEY,
        "ranking the checkpoints needs an evaluation: add data.eval",
        id="no-eval-data",
    ),
    pytest.param(
        {"eval": EVAL, "callbacks": {"checkpoint": {**RANKED, "keep_max_by": {"monitor": "top_5"}}}},
        KEY + ".monitor",
        "'top_5' is not an eval metric; eval.metrics gives: accuracy, loss",
        id="a-metric-not-computed",
    ),
    pytest.param(
        {"eval": {"every_epochs": 2}, "callbacks": {"checkpoint": {**RANKED, "every_epochs": 3}}},
        "callbacks.checkpoint.every_epochs",
        "every_epochs must be a multiple of eval.every_epochs (2), not 3",
        id="saves-without-an-evaluation",
    ),
    pytest.param(
        {"eval": EVAL, "callbacks": {"checkpoint": {**RANKED, "every_epochs": None, "every_steps": 6}}},
        KEY,
        "use every_epochs, not every_steps",
        id="saves-every-steps",
    ),
    pytest.param(
        {"eval": {"every_steps": 4}, "callbacks": {"checkpoint": RANKED}},
        KEY,
        "use eval.every_epochs, not every_steps",
        id="evaluates-every-steps",
    ),
    pytest.param(
        {"eval": EVAL, "callbacks": {"checkpoint": {**RANKED, "keep": {"best": 1, "monitor": "loss"}}}},
        KEY,
        "keep_max_by already keeps the best checkpoints: leave out keep",
        id="with-keep-best",
    ),
]


@pytest.mark.parametrize(("overrides", "key", "message"), REJECTED)
def test_refused_at_its_key(write_config, overrides, key, message):
    problems = problems_of(write_config, overrides)
    assert any(path == key and message in text for path, text in problems), problems


def test_monitor_is_required(write_config):
    problems = problems_of(
        write_config, {"eval": EVAL, "callbacks": {"checkpoint": {**RANKED, "keep_max_by": {}}}}
    )
    assert problems == [(KEY, "missing required key 'monitor'")]


@pytest.mark.parametrize(
    "overrides",
    [
        pytest.param({"eval": EVAL, "callbacks": {"checkpoint": RANKED}}, id="every-save-evaluated"),
        pytest.param(
            {"callbacks": {"checkpoint": {**RANKED, "keep_max_by": {"monitor": "loss"}}}}, id="default-eval"
        ),
        pytest.param(
            {"eval": {**EVAL, "every_epochs": 2}, "callbacks": {"checkpoint": {**RANKED, "every_epochs": 4}}},
            id="saves-every-second-evaluation",
        ),
    ],
)
def test_accepted(write_config, overrides):
    ranked = load_config(write_config(overrides)).config.callbacks.checkpoint.keep_max_by
    assert (
        ranked is not None
        and ranked.monitor == overrides["callbacks"]["checkpoint"]["keep_max_by"]["monitor"]
    )


def test_refused_for_a_gan(tmp_path):
    recipe = yaml.safe_load((REPO / "docs" / "cookbook" / "wgan.yaml").read_text())
    ranked = {"callbacks": {"checkpoint": {"every_epochs": 1, "keep_max_by": {"monitor": "loss"}}}}
    path = tmp_path / "wgan.yaml"
    path.write_text(yaml.safe_dump(merge(recipe, ranked), sort_keys=False))
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert KEY in [p.path for p in caught.value.problems], caught.value.problems
