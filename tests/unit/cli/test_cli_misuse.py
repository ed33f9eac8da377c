"""Other commands given wrong arguments (issue 22): parity's steps and timeout, import-mindcv's output
and data path, plot's inputs and output name, explain's line number. One line each, never a traceback,
and nothing runs MindSpore."""

from __future__ import annotations

import struct
import sys
import time
from pathlib import Path

import pytest
import yaml

from mscodegen.cli import main
from mscodegen.run import parity as parity_module
from mscodegen.run.parity import EXIT_TIMEOUT, ScriptTimeout, run_script

from conftest import TINY


def one_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("error: "), err
    return err.strip()


# --- parity ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--steps", "-3"], "error: --steps must be at least 1 (got -3)"),
        (["--steps", "0"], "error: --steps must be at least 1 (got 0)"),
        (["--epochs", "0"], "error: --epochs must be at least 1 (got 0)"),
        (["--workers", "0"], "error: --workers must be at least 1 (got 0)"),
        (["--resume-at", "-1"], "error: --resume-at must be at least 1 (got -1)"),
        (["--timeout", "0"], "error: --timeout must be a positive number of seconds (got 0)"),
        (["--timeout", "nan"], "error: --timeout must be a positive number of seconds (got nan)"),
    ],
)
def test_parity_refuses_bad_numbers_before_running_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, flags: list[str], message: str
) -> None:
    def must_not_run(*_args: object, **_kwargs: object) -> int:
        raise AssertionError("parity ran")

    monkeypatch.setattr(parity_module, "run_parity", must_not_run)
    assert main(["parity", str(tmp_path / "any.yaml"), *flags]) == 2
    assert one_error(capsys) == message


def test_parity_timeout_exits_3_naming_the_slow_variant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    def slow(*_args: object, **_kwargs: object) -> int:
        raise ScriptTimeout("native", 1.5, tmp_path / "native")

    monkeypatch.setattr(parity_module, "run_parity", slow)
    assert main(["parity", str(tmp_path / "any.yaml"), "--timeout", "1.5"]) == EXIT_TIMEOUT == 3
    line = one_error(capsys)
    assert line.startswith("error: the native variant did not finish within --timeout 1.5 s and was killed")


def test_run_script_kills_a_script_past_its_timeout(tmp_path: Path) -> None:
    script = tmp_path / "sleeper.py"
    script.write_text("import time\ntime.sleep(60)\n")
    start = time.monotonic()
    with pytest.raises(ScriptTimeout) as info:
        run_script(script, tmp_path / "model", variant="model", timeout=0.5, python=sys.executable)
    assert time.monotonic() - start < 30
    assert info.value.variant == "model"


def test_parity_help_documents_the_exit_codes(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["parity", "--help"])
    assert "3 a variant ran past --timeout" in capsys.readouterr().out.replace("\n", " ").replace("  ", " ")


# --- import-mindcv -----------------------------------------------------------------------------------


RECIPE = """\
dataset: "mnist"
data_dir: "/nowhere/mnist"
val_while_train: True
val_split: "test"
batch_size: 16
image_resize: 32
model: "resnet18"
in_channels: 1
epoch_size: 8
warmup_epochs: 0
"""


WRITTEN = (0, 1)  # 1: some recipe argument did not convert exactly; the config is written either way


def _recipe(tmp_path: Path) -> Path:
    mnist = tmp_path / "mnist"
    mnist.mkdir()
    for prefix in ("train", "t10k"):  # idx headers of 32 samples (the images are not read)
        (mnist / f"{prefix}-images-idx3-ubyte").write_bytes(struct.pack(">IIII", 2051, 32, 28, 28))
        (mnist / f"{prefix}-labels-idx1-ubyte").write_bytes(struct.pack(">II", 2049, 32))
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(RECIPE)
    return recipe


def test_import_mindcv_keeps_an_existing_output_unless_force(tmp_path: Path, capsys) -> None:
    recipe, out = _recipe(tmp_path), tmp_path / "run.yaml"
    out.write_text("# my config\n")
    assert main(["import-mindcv", str(recipe), "-o", str(out)]) == 2
    assert one_error(capsys) == f"error: {out} exists; pass --force to overwrite it (nothing was written)"
    assert out.read_text() == "# my config\n"
    assert (
        main(
            ["import-mindcv", str(recipe), "-o", str(out), "--force", "--data-path", str(tmp_path / "mnist")]
        )
        in WRITTEN
    )
    assert yaml.safe_load(out.read_text())["network"]["name"] == "resnet18"
    capsys.readouterr()
    assert main(["import-mindcv", str(recipe), "-o", str(tmp_path)]) == 2
    assert "is a directory" in one_error(capsys)


@pytest.mark.usefixtures("capsys")  # keeps the command's report out of the test's output
def test_import_mindcv_data_path_replaces_the_recipes_data_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    recipe = _recipe(tmp_path)
    Path("configs").mkdir()
    assert main(["import-mindcv", str(recipe), "-o", "configs/run.yaml", "--data-path", "mnist"]) in WRITTEN
    text = Path("configs/run.yaml").read_text()
    data = yaml.safe_load(text)["data"]
    # relative to where the command ran, rewritten relative to the config, as data_dir is
    assert data["train"]["path"] == data["eval"]["path"] == "../mnist"
    assert "--data-path mnist" in text  # the command in the header reproduces it
    assert main(["validate", "configs/run.yaml"]) == 0


# --- plot --------------------------------------------------------------------------------------------

LOSS = '{"step": 1, "epoch": 1, "loss": 2.0, "lr": 0.1}\n{"step": 2, "epoch": 1, "loss": 1.5, "lr": 0.1}\n'


def test_plot_on_a_binary_file_is_one_line(tmp_path: Path, capsys) -> None:
    log = tmp_path / "model.ckpt"
    log.write_bytes(b"\x00\x01\xff\xfe" * 100)
    assert main(["plot", str(log), "-o", str(tmp_path / "x.png")]) == 2
    assert one_error(capsys) == f"error: {log}:1: byte 0xff is not UTF-8: not a loss.jsonl/eval.jsonl record"
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    assert main(["plot", str(text), "-o", str(tmp_path / "x.png")]) == 2
    assert one_error(capsys).startswith(f"error: {text}:1:1: not a JSON line (")
    assert main(["plot", str(tmp_path / "missing.jsonl"), "-o", str(tmp_path / "x.png")]) == 2
    assert one_error(capsys).startswith(f"error: {tmp_path / 'missing.jsonl'}: cannot read it:")
    assert not (tmp_path / "x.png").exists()


def test_plot_output_name_is_the_file_written(tmp_path: Path, capsys) -> None:
    pytest.importorskip("matplotlib")
    log = tmp_path / "loss.jsonl"
    log.write_text(LOSS)
    assert main(["plot", str(log), "-o", str(tmp_path / "myplot")]) == 0
    assert capsys.readouterr().out == f"wrote {tmp_path / 'myplot.png'}\n"
    assert (tmp_path / "myplot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not (tmp_path / "myplot").exists()
    assert main(["plot", str(log), "-o", str(tmp_path / "plot.txt")]) == 2
    assert one_error(capsys) == (
        f"error: {tmp_path / 'plot.txt'}: cannot write a '.txt' image; name a .png, .svg, .pdf file"
    )


# --- explain -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("line", ["-3", "0", "x"])
def test_explain_with_a_bad_line_number_says_lines_count_from_1(capsys, line: str) -> None:
    assert main(["explain", f"g/x.py:{line}"]) == 2
    assert (
        one_error(capsys)
        == f"error: 'g/x.py:{line}': {line} is not a line number; lines count from 1, e.g. g/x.py:1"
    )


def test_explain_a_script_that_is_not_utf8(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    Path("tiny.yaml").write_text(yaml.safe_dump(TINY, sort_keys=False))
    assert main(["new", "tiny.yaml", "--out", "out", "--variant", "native"]) == 0
    script = Path("out/train_native.py")
    script.write_bytes(script.read_bytes() + b"# caf\xe9\n")
    capsys.readouterr()
    assert main(["explain", "out/train_native.py:3"]) == 2
    assert "byte 0xe9 is not UTF-8" in one_error(capsys)
