"""`mscodegen plot`: series from hand-written logs, and a real, non-trivial PNG."""

from __future__ import annotations

import builtins
import json
from pathlib import Path

import pytest

from mscodegen.cli import main
from mscodegen.run.plot import parity_curves, series

LOSS = [
    {"step": 1, "epoch": 1, "loss": 2.5, "lr": 0.1, "loss_scale": 1024.0, "overflow": False},
    {"step": 2, "epoch": 1, "loss": 2.0, "lr": 0.05, "loss_scale": 512.0, "overflow": True},
    {"step": 3, "epoch": 2, "loss": 1.25, "lr": 0.025, "loss_scale": 512.0, "overflow": False},
]
EVAL = [
    {"epoch": 1, "step": 2, "metrics": {"accuracy": 0.5, "loss": [1.75]}},
    {"epoch": 2, "step": 3, "metrics": {"accuracy": 0.75, "loss": [1.5]}},
]


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_series_are_the_logged_values() -> None:
    got = series(LOSS + EVAL)
    assert got["loss"] == ([1.0, 2.0, 3.0], [2.5, 2.0, 1.25])
    assert got["lr"] == ([1.0, 2.0, 3.0], [0.1, 0.05, 0.025])
    assert got["loss_scale"] == ([1.0, 2.0, 3.0], [1024.0, 512.0, 512.0])
    assert got["eval accuracy"] == ([1.0, 2.0], [0.5, 0.75])
    assert got["eval loss"] == ([1.0, 2.0], [1.75, 1.5])
    assert "overflow" not in got


def test_parity_curves_difference() -> None:
    other = [dict(r, loss=r["loss"] - 0.5) for r in LOSS]
    diff = parity_curves(LOSS, other)["model - native"]["loss diff"]
    assert diff == ([1.0, 2.0, 3.0], [0.5, 0.5, 0.5])


@pytest.mark.usefixtures("capsys")
def test_plot_writes_a_real_png(tmp_path: Path) -> None:
    import matplotlib.image as mpimg

    a = _write(tmp_path / "a.jsonl", LOSS)
    b = _write(tmp_path / "b.jsonl", [dict(r, loss=r["loss"] * 0.5) for r in LOSS])
    e = _write(tmp_path / "eval.jsonl", EVAL)
    png = tmp_path / "out" / "plot.png"
    assert main(["plot", str(a), str(b), str(e), "-o", str(png)]) == 0
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 5000
    pixels = mpimg.imread(png)
    assert pixels.shape[0] > 500  # five subplots stacked
    assert (pixels != pixels[0, 0]).any()  # not a single colour


def test_bad_line_is_located(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "loss.jsonl"
    log.write_text('{"step": 1, "loss": 1.0}\n{oops\n')
    assert main(["plot", str(log), "-o", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert f"{log}:2:" in err and "Traceback" not in err
    assert not (tmp_path / "x.png").exists()


def test_without_matplotlib_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real_import = builtins.__import__

    def no_matplotlib(name: str, *args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        if name.split(".")[0] == "matplotlib":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    log = _write(tmp_path / "loss.jsonl", LOSS)
    assert main(["plot", str(log), "-o", str(tmp_path / "x.png")]) == 2
    assert "pip install -e '.[plot]'" in capsys.readouterr().err
