"""Issue 3: every precision/gradient combination the schema rejects, with its key path and reason."""

from __future__ import annotations

import pytest

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config

REJECTED = [
    pytest.param(
        {"amp": {"level": "O0", "fp32_cells": ["Softmax"]}},
        "amp.fp32_cells",
        "no effect with amp.level O0",
        id="fp32_cells-with-O0",
    ),
    pytest.param(
        {"amp": {"level": "O1", "keep_batchnorm_fp32": True}},
        "amp.keep_batchnorm_fp32",
        "applies to amp.level O2 and O3, not O1",
        id="keep_batchnorm_fp32-with-O1",
    ),
    pytest.param(
        {"amp": {"level": "auto", "keep_batchnorm_fp32": False}},
        "amp.keep_batchnorm_fp32",
        "not auto",
        id="keep_batchnorm_fp32-with-auto",
    ),
    pytest.param(
        {"grad": {"accumulation_steps": 2}, "data": {"train": {"drop_remainder": False}}},
        "data.train.drop_remainder",
        "a smaller last batch would be over-weighted",
        id="accumulation-with-partial-batches",
    ),
    pytest.param(
        # 48 samples / batch 8 = 6 batches per epoch, 2 epochs
        {"grad": {"accumulation_steps": 13}},
        "grad.accumulation_steps",
        "13 is more than the 12 batches of the whole run",
        id="accumulation-longer-than-the-run",
    ),
]


@pytest.mark.parametrize(("overrides", "key", "message"), REJECTED)
def test_rejected_combination(write_config, overrides, key, message):
    with pytest.raises(ConfigError) as caught:
        load_config(write_config(overrides))
    problems = [(p.path, p.message) for p in caught.value.problems]
    assert any(path == key and message in text for path, text in problems), problems


ACCEPTED = [
    pytest.param({"amp": {"level": "O2", "keep_batchnorm_fp32": False}}, id="O2-bn-fp16"),
    pytest.param({"amp": {"level": "O1", "fp32_cells": ["Softmax"]}}, id="O1-fp32_cells"),
    pytest.param({"grad": {"accumulation_steps": 12}}, id="accumulation-whole-run"),
    pytest.param(
        {"loss_scale": {"kind": "fixed", "value": 128.0}, "optimizer": {"weight_decay": 0.01}},
        id="fixed-scale-with-weight-decay",
    ),
    pytest.param(
        {"amp": {"level": "O0"}, "loss_scale": {"kind": "dynamic"}, "grad": {"clip": {"kind": "value"}}},
        id="O0-dynamic-value-clip",
    ),
]


@pytest.mark.parametrize("overrides", ACCEPTED)
def test_accepted_combination(write_config, overrides):
    load_config(write_config(overrides))
