"""network.aux_factor: the scripts' AuxLogitsLoss against mindcv's own CrossEntropySmooth(aux_factor) and a
numpy cross-entropy, on inception_v3's training output (logits, aux_logits) and on the evaluation's logits."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from mscodegen.config.load import load_config
from mscodegen.output.generate import generate

from conftest import INCEPTION_AUX as INCEPTION
from conftest import PROBE_IMPORT

PROBE = (
    PROBE_IMPORT
    + """
import importlib.util, json, os, sys
import numpy as np
import mindspore as ms
from mindspore import nn
from mindcv.loss import create_loss

mod = import_script(sys.argv[1])
rng = np.random.default_rng(0)
logits, aux = (ms.Tensor(rng.standard_normal((6, 4)).astype(np.float32) * 3) for _ in range(2))
labels = ms.Tensor(np.array([0, 3, 1, 2, 3, 0], np.int32))
ours = eval(sys.argv[2], vars(mod))
mindcv = create_loss("CE", label_smoothing=0.1, aux_factor=0.1)  # as mindcv's train.py builds it
bits = lambda t: t.asnumpy().astype(np.float32).view(np.uint32).item()
print(json.dumps({
    "train": [bits(ours((logits, aux), labels)), bits(mindcv((logits, aux), labels))],
    "eval": [bits(ours(logits, labels)), bits(mindcv(logits, labels))],
    "logits": logits.asnumpy().tolist(), "aux": aux.asnumpy().tolist(),
}))
"""
)


def _smoothed_ce(logits: np.ndarray, labels: np.ndarray, smoothing: float) -> float:
    shifted = logits - logits.max(1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    target = np.full(logits.shape, smoothing / logits.shape[1])
    target[np.arange(len(labels)), labels] += 1 - smoothing
    return float(-(target * log_p).sum(1).mean())


@pytest.mark.slow
def test_aux_logits_loss_is_mindcvs_cross_entropy_smooth(tmp_path: Path) -> None:
    config = tmp_path / "inception.yaml"
    config.write_text(yaml.safe_dump(INCEPTION, sort_keys=False), encoding="utf-8")
    files = generate(load_config(config), tmp_path / "out")
    script = tmp_path / "train_native.py"
    script.write_text(files["train_native.py"], encoding="utf-8")
    call = "AuxLogitsLoss(nn.CrossEntropyLoss(label_smoothing=0.1))"
    assert f"loss_fn = {call}" in files["train_native.py"]
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(script), call],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    result = json.loads(out.stdout.splitlines()[-1])
    assert result["train"][0] == result["train"][1]  # bit for bit
    assert result["eval"][0] == result["eval"][1]
    assert result["train"][0] != result["eval"][0]  # the auxiliary loss counts in training
    labels = np.array([0, 3, 1, 2, 3, 0])
    logits, aux = np.array(result["logits"], np.float64), np.array(result["aux"], np.float64)
    expected = _smoothed_ce(logits, labels, 0.1) + 0.1 * _smoothed_ce(aux, labels, 0.1)
    got = np.array(result["train"][0], np.uint32).view(np.float32)
    assert got == pytest.approx(expected, rel=1e-6)
