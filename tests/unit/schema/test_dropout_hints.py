"""Dropout meets runtime.cpu_threads other than 1 (issue 32): `validate` warns at the network's key and
exits 0; `parity` prints the same as a hint when the variants differ. No MindSpore run."""

from __future__ import annotations

from pathlib import Path

import pytest

from mscodegen.cli import main
from mscodegen.config.load import hints, load_config
from mscodegen.run import parity
from mscodegen.run.parity import RunResult

NETS = """\
from mindspore import nn, ops


class Dropping(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(64, 10)
        self.drop = nn.Dropout(p=0.5)

    def construct(self, x):
        return self.drop(self.fc(x))


class Functional(nn.Cell):
    def construct(self, x):
        return ops.dropout(x, p=0.1)


class NoRate(nn.Cell):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(p=0.0)


class Plain(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(64, 10)
"""

CONFIG = """\
network: {kind: import, factory: 'nets:NAME'}
data:
  train: {kind: synthetic, image_shape: [1, 8, 8]}
optimizer: {name: momentum}
"""


def found(tmp_path: Path, text: str) -> list[tuple[str, int | None, int | None, str]]:
    (tmp_path / "nets.py").write_text(NETS)
    (tmp_path / "cfg.yaml").write_text(text)
    return [(h.path, h.line, h.column, h.message) for h in hints(load_config(tmp_path / "cfg.yaml"))]


@pytest.mark.parametrize("name", ["Dropping", "Functional"])
def test_an_imported_network_that_calls_dropout_is_warned_at_its_factory(tmp_path: Path, name: str) -> None:
    ((key, line, column, message),) = found(tmp_path, CONFIG.replace("NAME", name))
    assert (key, line, column) == ("network.factory", 1, 34)
    assert message == (
        f"nets:{name} has Dropout: on CPU the two variants train identically only with runtime.cpu_threads: 1 "
        "(now unset); set it for `mscodegen parity` to give =="
    )


@pytest.mark.parametrize(
    "text",
    [
        CONFIG.replace("NAME", "Dropping") + "runtime: {cpu_threads: 1}\n",
        CONFIG.replace("NAME", "Dropping") + "runtime: {device_target: GPU}\n",
        CONFIG.replace("NAME", "NoRate"),
        CONFIG.replace("NAME", "Plain"),
        CONFIG.replace("{kind: import, factory: 'nets:NAME'}", "{kind: builtin, name: mlp}"),
    ],
    ids=["one-thread", "gpu", "rate-0", "no-dropout", "builtin"],
)
def test_no_warning_without_dropout_or_with_one_thread(tmp_path: Path, text: str) -> None:
    assert found(tmp_path, text) == []


def test_a_mindcv_drop_rate_is_warned_at_its_kwarg(tmp_path: Path) -> None:
    text = (
        "network: {kind: mindcv, name: resnet18, kwargs: {drop_rate: 0.2}}\n"
        "data:\n  train: {kind: synthetic, image_shape: [3, 32, 32]}\n"
        "optimizer: {name: momentum}\nruntime: {cpu_threads: 4}\n"
    )
    ((key, line, column, message),) = found(tmp_path, text)
    assert (key, line, column) == ("network.kwargs.drop_rate", 1, 61)
    assert message.startswith("mindcv's resnet18 with drop_rate 0.2 has Dropout:") and "(now 4)" in message


def test_validate_prints_the_warning_and_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "nets.py").write_text(NETS)
    (tmp_path / "cfg.yaml").write_text(CONFIG.replace("NAME", "Dropping"))
    assert main(["validate", str(tmp_path / "cfg.yaml")]) == 0
    out, err = capsys.readouterr()
    assert out == f"{tmp_path / 'cfg.yaml'}: ok\n"
    assert err.startswith(
        f"warning: {tmp_path / 'cfg.yaml'}:1:34: network.factory: nets:Dropping has Dropout"
    )


def test_parity_explains_a_difference_with_the_hint(tmp_path: Path, monkeypatch, capsys) -> None:
    (tmp_path / "nets.py").write_text(NETS)
    (tmp_path / "cfg.yaml").write_text(CONFIG.replace("NAME", "Dropping"))

    def fake_run(_script, _workdir, **kwargs):  # the variants' first losses differ
        loss = 1.0 if kwargs["variant"] == "model" else 1.5
        return RunResult(kwargs["variant"], 0, 0.0, steps=[{"step": 1, "epoch": 1, "loss": loss}])

    monkeypatch.setattr(parity, "_has_mindspore", lambda: True)
    monkeypatch.setattr(parity, "run_script", fake_run)
    assert parity.run_parity(tmp_path / "cfg.yaml", steps=1, keep=tmp_path / "kept") == 1
    err = capsys.readouterr().err
    assert "NOT identical" in err
    assert f"hint: {tmp_path / 'cfg.yaml'}:1:34: network.factory: nets:Dropping has Dropout" in err
