"""`mscodegen explain`: key -> script lines and script line -> keys, through the real CLI."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mscodegen.cli import main

from conftest import REPO


def run(capsys, *args: object) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/ copied and examples/lenet_amp_accum.yaml generated into gen/, once for the module."""
    root = tmp_path_factory.mktemp("explain")
    shutil.copytree(REPO / "examples", root / "examples")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        assert main(["new", "examples/lenet_amp_accum.yaml", "--out", "gen"]) == 0
    return root


@pytest.fixture
def amp_accum(generated, tmp_path, monkeypatch) -> Path:
    """A copy of `generated` (tests edit the scripts) in tmp_path; cwd = tmp_path; returns gen/."""
    shutil.copytree(generated, tmp_path, dirs_exist_ok=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path / "gen"


def numbered(out: str) -> dict[int, str]:
    """{line number: text} of the listed lines of one script's report."""
    rows = {}
    for line in out.splitlines():
        head, _, text = line.strip().partition("  ")
        if head.isdigit():
            rows[int(head)] = text.strip()
    return rows


def test_a_key_lists_the_lines_it_produced_in_both_scripts(amp_accum, capsys):
    rc, out, _ = run(capsys, "explain", "examples/lenet_amp_accum.yaml", "grad.clip", "--out", "gen")
    assert rc == 0
    model, native = out.split("train_native.py:")
    for report, script in ((model, "train_model.py"), (native, "train_native.py")):
        rows = numbered(report)
        lines = (amp_accum / script).read_text().splitlines()
        assert rows, report
        for number, text in rows.items():  # the numbers are the written script's
            assert lines[number - 1].strip() == text
        assert "MAX_NORM = 1.0  # grad.clip.max_norm" in rows.values()
        assert "grads = ops.clip_by_global_norm(grads, MAX_NORM)" in rows.values()
        # nothing unrelated: no optimizer or data lines
        assert not any("Momentum" in t or "batch(" in t for t in rows.values())


@pytest.mark.usefixtures("amp_accum")
def test_a_section_includes_the_keys_below_it(capsys):
    _, out, _ = run(capsys, "explain", "examples/lenet_amp_accum.yaml", "callbacks", "--out", "gen")
    texts = set(numbered(out).values())
    assert 'CHECKPOINT_PREFIX = "lenet_amp"  # callbacks.checkpoint.prefix' in texts
    # the constant lives in checkpoints.py, which both scripts import; they show its uses
    module_report = out.split("checkpoints.py: lines callbacks produced\n")[1]
    assert 'CHECKPOINT_PREFIX = "lenet_amp"  # callbacks.checkpoint.prefix' in module_report
    assert "train_native.py: lines callbacks produced" in out


def test_a_script_line_names_its_keys_and_an_edited_line_has_none(amp_accum, capsys):
    script = amp_accum / "train_native.py"
    lines = script.read_text().splitlines()
    clip = next(i for i, line in enumerate(lines, 1) if "clip_by_global_norm" in line)
    rc, out, _ = run(capsys, "explain", f"gen/train_native.py:{clip}")
    assert rc == 0
    assert "produced by: grad.clip" in out

    lines[clip - 1] = lines[clip - 1].replace("MAX_NORM", "2.0 * MAX_NORM")
    lines.insert(0, "# my note")  # shifts every line: lines are matched, not numbered
    script.write_text("\n".join(lines) + "\n")
    rc, out, _ = run(capsys, "explain", f"gen/train_native.py:{clip + 1}")
    assert rc == 0
    assert "no config key" in out and "you edited" in out
    # checkpoints.py, which both scripts import, is explained the same way
    module = (amp_accum / "checkpoints.py").read_text().splitlines()
    prefix = next(i for i, line in enumerate(module, 1) if line.startswith("CHECKPOINT_PREFIX ="))
    _, out, _ = run(capsys, "explain", f"gen/checkpoints.py:{prefix}")
    assert "produced by: callbacks.checkpoint.prefix" in out


@pytest.mark.usefixtures("amp_accum")
def test_an_unknown_key_is_an_error_with_a_suggestion(capsys):
    rc, _, err = run(capsys, "explain", "examples/lenet_amp_accum.yaml", "grad.clp")
    assert rc == 2
    assert "grad.clp: not a key of this config; did you mean 'grad.clip'?" in err


@pytest.mark.usefixtures("amp_accum")
def test_a_line_outside_the_script_and_a_script_without_lock_are_errors(tmp_path, capsys):
    rc, _, err = run(capsys, "explain", "gen/train_native.py:99999")
    assert rc == 2 and "no line 99999" in err
    (tmp_path / "loose.py").write_text("x = 1\n")
    rc, _, err = run(capsys, "explain", "loose.py:1")
    assert rc == 2 and "no mscodegen lock" in err


def test_explain_and_diff_work_from_any_directory(amp_accum, tmp_path, monkeypatch, capsys):
    """The lock names the config relative to the output directory, not to where `new` ran."""
    script = amp_accum / "train_native.py"
    lines = script.read_text().splitlines()
    clip = next(i for i, line in enumerate(lines, 1) if "clip_by_global_norm" in line)
    script.write_text(script.read_text().replace("MAX_NORM = 1.0", "MAX_NORM = 2.0"))
    elsewhere = tmp_path / "somewhere" / "else"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)
    rc, out, err = run(capsys, "explain", f"../../gen/train_native.py:{clip}")
    assert rc == 0, err
    assert "produced by: grad.clip" in out
    rc, out, err = run(capsys, "diff", "../../gen")
    assert rc == 0, err
    assert "+MAX_NORM = 2.0" in out
    monkeypatch.chdir(amp_accum)  # and from inside the output directory
    rc, out, err = run(capsys, "explain", f"train_native.py:{clip}")
    assert rc == 0 and "produced by: grad.clip" in out, err


def test_written_scripts_carry_no_provenance_markers():
    for script in (REPO / "generated").rglob("*.py"):
        assert "@mscodegen-" not in script.read_text(), script
