"""Pristine copies as plain files: missing/tampered copies, interrupted writes."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from mscodegen.cli import main
from mscodegen.output.write import (
    LOCK_NAME,
    LockMeta,
    PristineError,
    check,
    update,
    user_edits,
    write_new,
)

MODEL, NATIVE = "train_model.py", "train_native.py"
META = LockMeta("examples/x.yaml", "ab" * 32, "0.1.0", "26.10.1")
V1 = "epochs = 5\n\nlr = 0.01\n\nprint(epochs, lr)\n"
V2 = V1.replace("epochs = 5", "epochs = 8")
EDITED = V1.replace("lr = 0.01", "lr = 0.003")


def pristine_dir(out: Path) -> Path:
    return out / ".mscodegen" / "pristine"


def pristine(out: Path) -> dict[str, str]:
    """The pristine copies on disk, read directly (not through mscodegen)."""
    root = pristine_dir(out)
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


# ---------------------------------------------------------------------------
# Missing or tampered pristine copies: a clear error, nothing written
# ---------------------------------------------------------------------------


@pytest.fixture
def out(tmp_path: Path) -> Path:
    d = tmp_path / "gen"
    write_new(d, {"train.py": V1}, META)
    (d / "train.py").write_text(EDITED)
    return d


@pytest.mark.parametrize("damage", ["missing", "tampered"])
def test_unusable_pristine_copy_stops_update_diff_and_new(out: Path, damage: str) -> None:
    copy = pristine_dir(out) / "train.py"
    if damage == "missing":
        copy.unlink()
    else:
        copy.write_text(V1.replace("print", "# print"))
    before = snapshot(out)
    expected = "is missing" if damage == "missing" else "does not match the sha256"
    for call in (
        lambda: update(out, {"train.py": V2}, META),
        lambda: update(out, {"train.py": V2}, META, dry_run=True),
        lambda: user_edits(out),
        lambda: write_new(out, {"train.py": V2}, META),
    ):
        with pytest.raises(PristineError) as info:
            call()
        message = str(info.value)
        assert str(copy) in message and expected in message
        assert "git checkout" in message and "--force" in message and "nothing was written" in message
    assert snapshot(out) == before
    assert ".mscodegen/pristine/train.py" in check(out, {"train.py": EDITED}, META)


def test_new_force_repairs_an_unusable_copy_and_keeps_the_edit_as_bak(out: Path) -> None:
    (pristine_dir(out) / "train.py").unlink()
    report = write_new(out, {"train.py": V2}, META, force=True)
    assert report.statuses == {"train.py": "overwritten"} and report.backups == ["train.py.bak"]
    assert (out / "train.py.bak").read_text() == EDITED
    assert (out / "train.py").read_text() == V2
    assert pristine(out) == {"train.py": V2}
    assert user_edits(out) == {}


def test_unusable_copy_of_an_unedited_file_needs_no_pristine_text(out: Path) -> None:
    """Without the pristine text an edited file cannot be told apart; a file already equal to the new
    generation can, and writing it repairs the copy."""
    (pristine_dir(out) / "train.py").unlink()
    (out / "train.py").write_text(V2)
    assert write_new(out, {"train.py": V2}, META).statuses == {"train.py": "unchanged"}
    assert pristine(out) == {"train.py": V2}


def test_update_repairs_an_unusable_copy_when_the_file_is_already_current(out: Path) -> None:
    (pristine_dir(out) / "train.py").write_text("tampered\n")
    (out / "train.py").write_text(V2)
    assert update(out, {"train.py": V2}, META).statuses == {"train.py": "unchanged"}
    assert pristine(out) == {"train.py": V2}
    assert user_edits(out) == {}


def test_generated_names_cannot_reach_mscodegens_own_files(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="invalid generated file name"):
        write_new(tmp_path, {".mscodegen/pristine/x.py": "x = 1\n"}, META)


# ---------------------------------------------------------------------------
# Interrupted writes: the lock is the commit point
# ---------------------------------------------------------------------------


class Killed(BaseException):
    """Stands in for a kill at an arbitrary point."""


@pytest.mark.parametrize("command", ["new", "update"])
def test_kill_after_pristine_copies_before_lock_keeps_the_old_base(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """The new pristine copy is in place, the lock (old hash) is not: the old text is read from
    .mscodegen/previous, so a rerun still merges against the right base."""
    out = tmp_path / "gen"
    write_new(out, {"train.py": V1, "eval.py": "e = 1\n"}, META)
    if command == "update":
        (out / "train.py").write_text(EDITED)
    old_lock = (out / LOCK_NAME).read_text()
    real = os.replace

    def replace(src: str, dst: str) -> None:
        if os.path.basename(dst) == LOCK_NAME:
            raise Killed
        real(src, dst)

    files = {"train.py": V2, "eval.py": "e = 2\n"}
    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(Killed):
        if command == "update":
            update(out, files, META)
        else:
            write_new(out, files, META)
    monkeypatch.undo()
    assert (out / LOCK_NAME).read_text() == old_lock
    assert pristine(out) == files  # the copies were replaced before the kill
    assert (out / ".mscodegen" / "previous" / "train.py").read_text() == V1
    # the old lock still works: its base texts come from previous/
    if command == "update":
        assert list(user_edits(out)) == ["eval.py", "train.py"]  # both differ from the old base now
    report = update(out, files, META) if command == "update" else write_new(out, files, META)
    assert set(report.statuses.values()) <= {"unchanged"}
    expected = EDITED.replace("epochs = 5", "epochs = 8") if command == "update" else V2
    assert (out / "train.py").read_text() == expected
    assert pristine(out) == files
    assert not (out / ".mscodegen" / "previous").exists()
    assert json.loads((out / LOCK_NAME).read_text())["files"]["train.py"] == {
        "sha256": hashlib.sha256(V2.encode()).hexdigest()
    }
    assert not list(out.rglob("*.tmp"))


def test_cli_reports_an_unusable_copy_and_exits_1(out: Path, capsys) -> None:
    copy = pristine_dir(out) / "train.py"
    copy.unlink()
    assert main(["diff", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {copy} is missing") and "nothing was written" in err
