"""`mscodegen parity DIR` (the scripts as they are on disk), `--set` on parity, the final-weights check.

The slow tests run the tiny config's scripts for real through the CLI (in-process `main`).
`test_untouched_pair_compares_final_weights` needs the generated scripts' `--save-weights` option.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from mscodegen.cli import main
from mscodegen.plan import SCRIPT_NAMES
from mscodegen.run.parity import step_differences

MODEL, NATIVE = SCRIPT_NAMES["model"], SCRIPT_NAMES["native"]
STEPS = 4


@pytest.fixture
def cli(capsys):
    """cli(*args) -> (exit code, stdout, stderr) of `mscodegen ARGS` run in-process."""

    def run(*args: object) -> tuple[int, str, str]:
        capsys.readouterr()
        rc = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return rc, out, err

    return run


@pytest.fixture
def gen(tmp_path, write_config, monkeypatch, cli) -> Path:
    """The tiny config's two scripts written by `mscodegen new` into tmp_path/gen."""
    monkeypatch.chdir(tmp_path)
    rc, _, err = cli("new", write_config().name, "--out", "gen")
    assert rc == 0, err
    return Path("gen")


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# ---------------------------------------------------------------------------
# No training run
# ---------------------------------------------------------------------------


def test_step_differences_lists_the_first_differing_step_first() -> None:
    model = [
        {"step": 1, "epoch": 1, "loss": 0.5, "lr": 0.1},
        {"step": 2, "epoch": 1, "loss": 0.25, "lr": 0.1},
    ]
    native = [
        {"step": 1, "epoch": 1, "loss": 0.5, "lr": 0.1},
        {"step": 2, "epoch": 1, "loss": 0.75, "lr": 0.1},
    ]
    assert step_differences(model, native) == ["step 2: loss 0.25 (model) != 0.75 (native)"]
    assert step_differences(model, native[:1]) == ["step count differs: 2 (model) != 1 (native)"]
    assert step_differences(model, model) == []


def test_directory_without_a_lock_is_refused(tmp_path, cli) -> None:
    rc, _, err = cli("parity", tmp_path)
    assert rc == 2
    assert f"{tmp_path} has no .mscodegen-lock.json" in err


def test_directory_with_one_variant_is_refused(tmp_path, write_config, monkeypatch, cli) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli("new", write_config().name, "--out", "gen", "--variant", "model")[0] == 0
    rc, _, err = cli("parity", "gen")
    assert rc == 2
    assert "missing in gen" in err and NATIVE in err


@pytest.mark.parametrize("option", [["--set", "optimizer.lr=0.01"], ["--workers", "2"]])
def test_directory_takes_no_config_changes(gen, cli, option) -> None:
    rc, _, err = cli("parity", gen, *option)
    assert rc == 2
    assert f"{option[0]} changes the config" in err
    assert not Path("gen", "model").exists()  # nothing ran


def test_parity_set_error_is_reported_like_new(tmp_path, write_config, monkeypatch, cli) -> None:
    monkeypatch.chdir(tmp_path)
    rc, _, err = cli("parity", write_config().name, "--set", "optimizer.nope=1", "--keep", "kept")
    assert rc == 2
    assert "optimizer.nope" in err
    assert not Path("kept", "model").exists()  # nothing ran


# ---------------------------------------------------------------------------
# Real runs
# ---------------------------------------------------------------------------


@pytest.mark.slow
def test_an_lr_edit_in_the_native_script_fails_at_the_first_differing_step(gen, cli) -> None:
    script = gen / NATIVE
    text = script.read_text()
    lines = re.findall(r"^LR = .*$", text, re.MULTILINE)
    assert len(lines) == 1, lines
    script.write_text(text.replace(lines[0], "LR = 0.04  # tuned by hand"))

    rc, out, err = cli("parity", gen, "--steps", STEPS, "--keep", "kept")
    assert rc == 1, out + err
    assert f"(your edits to {NATIVE} included)" in out
    # The first differing step and field, found here from the kept logs.
    model, native = (read_jsonl(Path("kept", v, "loss.jsonl")) for v in ("model", "native"))
    assert len(model) == len(native) == STEPS
    first = next(
        (m["step"], key, m[key], n[key])
        for m, n in zip(model, native, strict=True)
        for key in ("loss", "lr")
        if m[key] != n[key]
    )
    step, key, a, b = first
    assert step <= 2  # a different LR shows at once (lr) or in the next step's loss
    assert f"NOT identical: step {step}: {key} {a!r} (model) != {b!r} (native)" in err.splitlines()


@pytest.mark.slow
def test_parity_set_overrides_the_config(tmp_path, write_config, monkeypatch, cli) -> None:
    monkeypatch.chdir(tmp_path)
    rc, out, err = cli(
        "parity", write_config().name, "--set", "optimizer.lr=0.01", "--steps", 2, "--keep", "kept"
    )
    assert rc == 0, out + err
    for variant in ("model", "native"):
        # the LR the optimizer applied: its float32 parameter
        assert [r["lr"] for r in read_jsonl(Path("kept", variant, "loss.jsonl"))] == [
            float(np.float32(0.01))
        ] * 2
    assert re.search(r"^LR = 0\.01\b", Path("kept", "scripts", MODEL).read_text(), re.MULTILINE)


@pytest.mark.slow
def test_untouched_pair_is_identical_and_compares_final_weights(gen, cli) -> None:
    """One parity run of the untouched pair (it was two tests, each running both scripts).
    Needs `--save-weights PATH` in the generated scripts (both variants)."""
    rc, out, err = cli("parity", gen, "--steps", STEPS, "--keep", "kept")
    assert rc == 0, out + err
    assert "as they are on disk" in out and "your edits" not in out
    assert re.search(rf"^identical: {STEPS} steps.*, final weights equal$", out, re.MULTILINE), out + err
    for variant in ("model", "native"):
        assert Path("kept", variant, "weights.ckpt").stat().st_size > 0


PERTURB_SAVED_WEIGHTS = '''
import mindspore as _ms

_real_save_checkpoint = _ms.save_checkpoint


def _perturbed_save_checkpoint(network, path, *args, **kwargs):
    """Test edit: the final weights (--save-weights) get one parameter shifted by 1e-3."""
    if str(path).endswith("weights.ckpt"):
        param = network.trainable_params()[0]
        param.set_data(param + 1e-3)
        print("PERTURBED", param.name, flush=True)
    return _real_save_checkpoint(network, path, *args, **kwargs)


_ms.save_checkpoint = _perturbed_save_checkpoint

'''


@pytest.mark.slow
def test_an_edit_of_the_final_weights_only_fails_on_the_weights(gen, cli) -> None:
    """Needs `--save-weights PATH` (saved with ms.save_checkpoint) in the generated scripts."""
    script = gen / NATIVE
    text = script.read_text()
    main_guard = 'if __name__ == "__main__":'
    assert text.count(main_guard) == 1
    script.write_text(text.replace(main_guard, PERTURB_SAVED_WEIGHTS + main_guard))

    rc, out, err = cli("parity", gen, "--steps", STEPS, "--keep", "kept")
    assert rc == 1, out + err
    perturbed = re.findall(
        r"^PERTURBED (\S+)$", Path("kept", "native", "stdout.txt").read_text(), re.MULTILINE
    )
    assert len(perturbed) == 1
    problems = [line for line in err.splitlines() if line.startswith("NOT identical")]
    match = re.fullmatch(
        rf"NOT identical: final weights: parameter {re.escape(perturbed[0])}: "
        r"max \|model - native\| = (\S+) \((\d+) of (\d+) values differ\)",
        problems[0] if problems else "",
    )
    assert match, err
    assert float(match.group(1)) == pytest.approx(1e-3, rel=1e-3)
    assert match.group(2) == match.group(3)  # every value of that parameter was shifted
    assert re.search(rf"^ +{STEPS} +\d+ .* yes$", out, re.MULTILINE)  # the losses still agree
