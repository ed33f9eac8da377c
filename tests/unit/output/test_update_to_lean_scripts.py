"""`update` from older generated scripts to today's keeps every edit: the long ones before issue 20,
and those that still held the parity harness before issue 29.

tests/data/lenet_digits_long/ is generated/lenet_digits as committed before the lean templates (scripts,
pristine copies, lock). An edit on a line both versions have is merged in; an edit inside code the lean
version no longer has is a reported conflict, the edited file kept as .orig: nothing is lost.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mscodegen.cli import main

from conftest import REPO

LONG = REPO / "tests" / "data" / "lenet_digits_long"
SCRIPTS = ("train_model.py", "train_native.py")
LR_EDIT = ("LR = 0.05  # optimizer.lr", "LR = 0.02  # optimizer.lr (tuned by hand)")
NET_EDIT = ("        x = self.flatten(x)\n", "        x = self.flatten(x)\n        x = x * 1.0  # my probe\n")
# report_epoch_time() exists only in the long scripts: the lean ones print with TimeMonitor / inline
GONE_EDIT = ('f"epoch time: {seconds * 1000:.3f} ms', 'f"my epoch time: {seconds * 1000:.3f} ms')


def _project(tmp_path: Path, edits: list[tuple[str, str]]) -> Path:
    out = tmp_path / "gen"
    shutil.copytree(LONG, out)
    for name in SCRIPTS:
        text = (out / name).read_text(encoding="utf-8")
        for old, new in edits:
            assert text.count(old) == 1, (name, old)
            text = text.replace(old, new)
        (out / name).write_text(text, encoding="utf-8")
    return out


def test_edits_on_lines_both_versions_have_are_kept(tmp_path, monkeypatch, capsys) -> None:
    out = _project(tmp_path, [LR_EDIT, NET_EDIT])
    monkeypatch.chdir(REPO)
    assert main(["update", "examples/lenet_digits.yaml", "--out", str(out)]) == 0, capsys.readouterr().err
    for name in SCRIPTS:
        text = (out / name).read_text(encoding="utf-8")
        fresh = (REPO / "generated" / "lenet_digits" / name).read_text(encoding="utf-8")
        assert len(fresh.splitlines()) < len((LONG / name).read_text(encoding="utf-8").splitlines()) / 1.5
        # the lean script, with exactly the user's two edits in it
        assert text == fresh.replace(LR_EDIT[0], LR_EDIT[1]).replace(NET_EDIT[0], NET_EDIT[1])
        assert not (out / f"{name}.orig").exists()


def test_an_edit_in_code_the_lean_script_dropped_is_a_conflict_and_nothing_is_lost(
    tmp_path, monkeypatch, capsys
) -> None:
    out = _project(tmp_path, [LR_EDIT, GONE_EDIT])
    edited = {name: (out / name).read_text(encoding="utf-8") for name in SCRIPTS}
    monkeypatch.chdir(REPO)
    assert main(["update", "examples/lenet_digits.yaml", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    for name in SCRIPTS:
        assert f"{name}:" in err and "conflict" in err
        merged = (out / name).read_text(encoding="utf-8")
        assert "<<<<<<<" in merged and ">>>>>>>" in merged
        assert GONE_EDIT[1] in merged  # the user's side of the conflict
        assert LR_EDIT[1] in merged  # the clean edit merged as well
        assert (out / f"{name}.orig").read_text(encoding="utf-8") == edited[name]


@pytest.mark.parametrize("name", SCRIPTS)
def test_the_test_data_is_the_long_version(name: str) -> None:
    assert len((LONG / name).read_text(encoding="utf-8").splitlines()) > 500


# tests/data/lenet_digits_with_harness/ is generated/lenet_digits as committed before issue 29 (the scripts
# still held RunLog, --loss-log and --eval-log): a user with those scripts moves over with `update`.
WITH_HARNESS = REPO / "tests" / "data" / "lenet_digits_with_harness"
MIN_LR_EDIT = ("MIN_LR = 0.001  # lr_schedule.min_lr", "MIN_LR = 0.002  # lr_schedule.min_lr (tuned by hand)")
RUN_LOG_EDIT = ('"""--loss-log and --eval-log: a JSON object per line."""', '"""My logs."""')


def test_update_from_scripts_with_the_parity_harness_keeps_edits_and_drops_the_harness(
    tmp_path, monkeypatch, capsys
) -> None:
    out = tmp_path / "gen"
    shutil.copytree(WITH_HARNESS, out)
    for name in SCRIPTS:
        text = (out / name).read_text(encoding="utf-8")
        (out / name).write_text(
            text.replace(MIN_LR_EDIT[0], MIN_LR_EDIT[1]).replace(*NET_EDIT), encoding="utf-8"
        )
    monkeypatch.chdir(REPO)
    assert main(["update", "examples/lenet_digits.yaml", "--out", str(out)]) == 0, capsys.readouterr().err
    for name in SCRIPTS:
        text = (out / name).read_text(encoding="utf-8")
        fresh = (REPO / "generated" / "lenet_digits" / name).read_text(encoding="utf-8")
        assert text == fresh.replace(*MIN_LR_EDIT).replace(*NET_EDIT)
        assert "RunLog" not in text and "--loss-log" not in text


def test_an_edit_of_the_old_harness_is_a_conflict_and_kept(tmp_path, monkeypatch, capsys) -> None:
    out = tmp_path / "gen"
    shutil.copytree(WITH_HARNESS, out)
    native = out / "train_native.py"
    edited = native.read_text(encoding="utf-8").replace(*RUN_LOG_EDIT)
    native.write_text(edited, encoding="utf-8")
    monkeypatch.chdir(REPO)
    assert main(["update", "examples/lenet_digits.yaml", "--out", str(out)]) == 1
    assert "train_native.py" in capsys.readouterr().err
    assert (out / "train_native.py.orig").read_text(encoding="utf-8") == edited  # nothing lost
    assert "<<<<<<<" in native.read_text(encoding="utf-8")


# tests/data/lenet_digits_before_checkpoints_py/ is generated/lenet_digits as committed before checkpoints.py
# (each script held the checkpoint constants, checkpoint_callback and load_checkpoint): `update` writes the
# module and takes them out of the scripts; an edit of one of them there is a conflict, kept in .orig.
BEFORE_MODULE = REPO / "tests" / "data" / "lenet_digits_before_checkpoints_py"
KEEP_MAX_EDIT = (
    "CHECKPOINT_KEEP_MAX = 2  # callbacks.checkpoint.keep_max",
    "CHECKPOINT_KEEP_MAX = 5  # mine",
)


def test_update_moves_the_checkpoint_code_into_checkpoints_py(tmp_path, monkeypatch, capsys) -> None:
    out = tmp_path / "gen"
    shutil.copytree(BEFORE_MODULE, out)
    assert not (out / "checkpoints.py").exists()
    model, native = out / "train_model.py", out / "train_native.py"
    model.write_text(model.read_text(encoding="utf-8").replace(*MIN_LR_EDIT), encoding="utf-8")
    edited = native.read_text(encoding="utf-8").replace(*KEEP_MAX_EDIT)
    native.write_text(edited, encoding="utf-8")
    monkeypatch.chdir(REPO)
    assert main(["update", "examples/lenet_digits.yaml", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "train_native.py" in err and "conflict" in err and "train_model.py:" not in err
    fresh = REPO / "generated" / "lenet_digits"
    for name in ("checkpoints.py", "predict.py"):  # created; updated (it imports from checkpoints.py now)
        assert (out / name).read_text(encoding="utf-8") == (fresh / name).read_text(encoding="utf-8")
    # the untouched functions left the script cleanly, the user's edit stayed
    text = model.read_text(encoding="utf-8")
    assert text == (fresh / "train_model.py").read_text(encoding="utf-8").replace(*MIN_LR_EDIT)
    assert "def load_checkpoint" not in text and "from checkpoints import" in text
    # the edited constant: a conflict naming the user's line; the file as it was is kept
    merged = native.read_text(encoding="utf-8")
    assert "<<<<<<<" in merged and KEEP_MAX_EDIT[1] in merged
    assert (out / "train_native.py.orig").read_text(encoding="utf-8") == edited
