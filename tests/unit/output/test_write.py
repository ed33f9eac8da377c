"""Tests for mscodegen.output.write: lock file, refusal, force, 3-way update, atomicity."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from mscodegen.output.write import (
    LOCK_NAME,
    EditedFilesError,
    LockError,
    LockMeta,
    NoLockError,
    UnresolvedConflictError,
    atomic_write,
    check,
    read_lock,
    update,
    user_edits,
    write_new,
)

META = LockMeta(
    config="examples/lenet.yaml",
    config_sha256="ab" * 32,
    mscodegen_version="0.1.0",
    black_version="26.10.1",
)

V1 = """\
import mindspore as ms
from mindspore import nn

epochs = 5

lr = 0.01
net = build_net()
opt = nn.Momentum(net.trainable_params(), learning_rate=lr, momentum=0.9)
loss_fn = nn.CrossEntropyLoss()

for epoch in range(epochs):
    for step, (x, y) in enumerate(loader):
        loss = train_step(x, y)
    save_checkpoint(net, epoch)
"""
V2 = V1.replace("epochs = 5", "epochs = 8").replace(
    "opt = nn.Momentum(net.trainable_params(), learning_rate=lr, momentum=0.9)",
    "opt = nn.Adam(net.trainable_params(), learning_rate=lr)",
)
PRINT = "        print(f'step {step}: {loss}')\n"
EDITED = V1.replace("lr = 0.01", "lr = 0.003").replace(
    "        loss = train_step(x, y)\n", "        loss = train_step(x, y)\n" + PRINT
)
EVAL = "import mindspore as ms\n\nbatch_size = 32\n"


def pristine(out: Path) -> dict[str, str]:
    """The pristine copies on disk, read directly (not through mscodegen)."""
    root = out / ".mscodegen" / "pristine"
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def digest(text: str) -> dict[str, str]:
    return {"sha256": hashlib.sha256(text.encode()).hexdigest()}


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under root with its bytes and mtime (ns)."""
    return {
        str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def age_files(root: Path) -> None:
    """Give every file an old mtime so any rewrite is detectable."""
    for p in root.rglob("*"):
        os.utime(p, ns=(1_000_000_000, 1_000_000_000))


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """Output dir freshly generated with V1 train.py and eval.py."""
    d = tmp_path / "gen"
    d.mkdir()
    write_new(d, {"train.py": V1, "eval.py": EVAL}, META)
    return d


def test_write_new_creates_files_and_deterministic_lock(tmp_path: Path) -> None:
    report = write_new(tmp_path / "a", {"train.py": V1, "sub/eval.py": EVAL}, META)
    assert report.statuses == {"sub/eval.py": "created", "train.py": "created"}
    assert (tmp_path / "a" / "train.py").read_text() == V1
    assert (tmp_path / "a" / "sub" / "eval.py").read_text() == EVAL
    lock_text = (tmp_path / "a" / LOCK_NAME).read_text()
    doc = json.loads(lock_text)
    assert lock_text == json.dumps(doc, sort_keys=True, indent=2) + "\n"
    assert doc["format"] == 3
    assert doc["files"] == {"sub/eval.py": digest(EVAL), "train.py": digest(V1)}
    assert pristine(tmp_path / "a") == {"sub/eval.py": EVAL, "train.py": V1}
    assert doc["meta"] == {
        "config": "examples/lenet.yaml",
        "config_sha256": "ab" * 32,
        "mscodegen_version": "0.1.0",
        "black_version": "26.10.1",
    }
    write_new(tmp_path / "b", {"sub/eval.py": EVAL, "train.py": V1}, META)
    assert (tmp_path / "b" / LOCK_NAME).read_bytes() == lock_text.encode()
    lock = read_lock(tmp_path / "a")
    assert lock is not None and lock.meta == META and lock.files["train.py"] == digest(V1)["sha256"]


def test_rewrite_same_content_is_unchanged_and_byte_identical(out: Path) -> None:
    age_files(out)
    before = snapshot(out)
    report = write_new(out, {"train.py": V1, "eval.py": EVAL}, META)
    assert report.statuses == {"eval.py": "unchanged", "train.py": "unchanged"}
    assert snapshot(out) == before


def test_unedited_file_is_overwritten(out: Path) -> None:
    report = write_new(out, {"train.py": V2, "eval.py": EVAL}, META)
    assert report.statuses == {"eval.py": "unchanged", "train.py": "updated"}
    assert report.backups == []
    assert (out / "train.py").read_text() == V2
    assert pristine(out)["train.py"] == V2


def test_edited_file_refused_and_nothing_written(out: Path) -> None:
    (out / "train.py").write_text(EDITED)
    age_files(out)
    before = snapshot(out)
    with pytest.raises(EditedFilesError) as info:
        write_new(out, {"train.py": V2, "eval.py": EVAL + "x = 1\n"}, META)
    msg = str(info.value)
    assert str(out / "train.py") in msg and "eval.py" not in msg
    assert "mscodegen update" in msg and "--force" in msg and ".bak" in msg
    assert info.value.paths == [out / "train.py"]
    assert snapshot(out) == before  # eval.py (unedited) was not updated either


def test_existing_file_unknown_to_lock_is_refused(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("# mine\n")
    with pytest.raises(EditedFilesError, match="train.py"):
        write_new(tmp_path, {"train.py": V1}, META)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.py"]


def test_force_keeps_bak_of_edited_file(out: Path) -> None:
    (out / "train.py").write_text(EDITED)
    report = write_new(out, {"train.py": V2, "eval.py": EVAL}, META, force=True)
    assert report.statuses == {"eval.py": "unchanged", "train.py": "overwritten"}
    assert report.backups == ["train.py.bak"]
    assert (out / "train.py.bak").read_text() == EDITED
    assert (out / "train.py").read_text() == V2


def test_partial_write_keeps_other_files_and_lock_entries(tmp_path: Path) -> None:
    write_new(tmp_path, {"train_model.py": V1}, META)
    (tmp_path / "train_model.py").write_text(EDITED)
    report = write_new(tmp_path, {"train_native.py": V2}, META)
    assert report.statuses == {"train_native.py": "created"}
    assert (tmp_path / "train_model.py").read_text() == EDITED
    assert pristine(tmp_path) == {"train_model.py": V1, "train_native.py": V2}


def test_check_reports_stale_files_and_lock_without_writing(out: Path) -> None:
    files = {"train.py": V1, "eval.py": EVAL}
    assert check(out, files, META) == []
    (out / "eval.py").unlink()
    age_files(out)
    before = snapshot(out)
    assert check(out, files, META) == ["eval.py"]
    assert check(out, {**files, "train.py": V2}, META) == [
        "eval.py",
        "train.py",
        LOCK_NAME,
        ".mscodegen/pristine/train.py",
    ]
    newer = LockMeta(META.config, "cd" * 32, "0.2.0", META.black_version)
    assert check(out, files, newer) == ["eval.py", LOCK_NAME]
    assert snapshot(out) == before


def test_update_merges_user_edits_with_new_generation(out: Path) -> None:
    (out / "train.py").write_text(EDITED)
    report = update(out, {"train.py": V2, "eval.py": EVAL}, META)
    assert report.statuses == {"eval.py": "unchanged", "train.py": "merged"}
    assert not report.conflicts and report.conflicts == []
    merged = (out / "train.py").read_text()
    assert merged == V2.replace("lr = 0.01", "lr = 0.003").replace(
        "        loss = train_step(x, y)\n", "        loss = train_step(x, y)\n" + PRINT
    )
    assert "epochs = 8" in merged and "nn.Adam(" in merged and PRINT in merged
    assert "lr = 0.003" in merged and "Momentum" not in merged
    assert pristine(out)["train.py"] == V2
    assert not (out / "train.py.orig").exists()


def test_update_conflict_writes_markers_and_orig(out: Path) -> None:
    user = EDITED.replace("epochs = 5", "epochs = 20").replace("\n", "\r\n", 1)
    (out / "train.py").write_bytes(user.encode())
    report = update(out, {"train.py": V2, "eval.py": EVAL}, META)
    assert report.statuses["train.py"] == "conflict"
    assert report.conflicts and report.conflicts == [("train.py", 4)]
    assert report.originals == ["train.py.orig"]
    assert (out / "train.py.orig").read_bytes() == user.encode()
    lines = (out / "train.py").read_text().splitlines()
    assert lines[3:10] == [
        "<<<<<<< yours",
        "epochs = 20",
        "||||||| pristine",
        "epochs = 5",
        "=======",
        "epochs = 8",
        ">>>>>>> generated",
    ]
    assert lines[10:12] == ["", "lr = 0.003"]  # my edit one line away: merged
    assert lines[13] == "opt = nn.Adam(net.trainable_params(), learning_rate=lr)"
    assert PRINT.rstrip("\n") in lines
    assert pristine(out)["train.py"] == V2
    with pytest.raises(UnresolvedConflictError, match="train.py.orig"):
        update(out, {"train.py": V2.replace("epochs = 8", "epochs = 9")}, META)


def test_update_statuses_for_created_updated_unchanged(out: Path) -> None:
    (out / "eval.py").unlink()
    report = update(out, {"train.py": V2, "eval.py": EVAL, "new.py": "x = 1\n"}, META)
    assert report.statuses == {
        "eval.py": "created",
        "new.py": "created",
        "train.py": "updated",
    }
    assert (out / "eval.py").read_text() == EVAL
    assert (out / "new.py").read_text() == "x = 1\n"
    assert (out / "train.py").read_text() == V2
    assert sorted(read_lock(out).files) == ["eval.py", "new.py", "train.py"]  # type: ignore[union-attr]
    assert pristine(out) == {"eval.py": EVAL, "new.py": "x = 1\n", "train.py": V2}


def test_update_dry_run_writes_nothing_and_returns_diff(out: Path) -> None:
    (out / "train.py").write_text(EDITED)
    age_files(out)
    before = snapshot(out)
    report = update(out, {"train.py": V2, "eval.py": EVAL}, META, dry_run=True)
    assert snapshot(out) == before
    assert report.statuses == {"eval.py": "unchanged", "train.py": "merged"}
    diff = report.diffs["train.py"]
    assert diff.startswith("--- a/train.py\n+++ b/train.py\n")
    changed = [ln for ln in diff.splitlines() if ln[:1] in "+-" and ln[:3] not in ("---", "+++")]
    assert changed == [
        "-epochs = 5",
        "+epochs = 8",
        "-opt = nn.Momentum(net.trainable_params(), learning_rate=lr, momentum=0.9)",
        "+opt = nn.Adam(net.trainable_params(), learning_rate=lr)",
    ]
    assert list(report.diffs) == ["train.py"]


def test_update_without_lock_raises(tmp_path: Path) -> None:
    with pytest.raises(NoLockError, match="mscodegen new"):
        update(tmp_path, {"train.py": V1}, META)
    assert list(tmp_path.iterdir()) == []


def test_user_edits_shows_exactly_the_added_line(out: Path) -> None:
    assert user_edits(out) == {}
    (out / "train.py").write_text(V1.replace("    save_checkpoint", PRINT + "    save_checkpoint"))
    edits = user_edits(out)
    assert list(edits) == ["train.py"]
    body = edits["train.py"].splitlines()
    assert body[:2] == ["--- a/train.py", "+++ b/train.py"]
    assert [ln for ln in body[2:] if ln[:1] in "+-"] == ["+" + PRINT.rstrip("\n")]
    (out / "eval.py").unlink()
    removed = user_edits(out)["eval.py"].splitlines()
    assert [ln for ln in removed[2:] if ln[:1] in "+-"] == ["-" + line for line in EVAL.splitlines()]
    with pytest.raises(NoLockError):
        user_edits(out / "nowhere")


@pytest.mark.parametrize("broken", ["replace", "fsync"])
def test_atomic_write_failure_keeps_original_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, broken: str
) -> None:
    target = tmp_path / "train.py"
    target.write_text(V1)

    def boom(*_args: object) -> None:
        raise OSError("disk on fire")

    monkeypatch.setattr(os, broken, boom)
    with pytest.raises(OSError, match="disk on fire"):
        atomic_write(target, V2)
    with pytest.raises(OSError, match="disk on fire"):
        atomic_write(tmp_path / "new.py", V2)
    monkeypatch.undo()
    assert target.read_text() == V1
    assert [p.name for p in tmp_path.iterdir()] == ["train.py"]


def test_atomic_write_keeps_mode_and_bytes(tmp_path: Path) -> None:
    target = tmp_path / "run.sh"
    target.write_text("old\n")
    target.chmod(0o750)
    atomic_write(target, "a\r\nb")
    assert target.stat().st_mode & 0o777 == 0o750
    assert target.read_bytes() == b"a\r\nb"


def test_bad_names_and_corrupt_lock_are_rejected(tmp_path: Path) -> None:
    for bad in ("../x.py", "/abs.py", LOCK_NAME):
        with pytest.raises(ValueError, match="invalid generated file name"):
            write_new(tmp_path, {bad: "x\n"}, META)
    (tmp_path / LOCK_NAME).write_text("{not json")
    with pytest.raises(LockError, match=LOCK_NAME):
        read_lock(tmp_path)


def test_second_update_is_a_no_op(out: Path) -> None:
    (out / "train.py").write_text(EDITED)
    update(out, {"train.py": V2, "eval.py": EVAL}, META)
    age_files(out)
    before = snapshot(out)
    report = update(out, {"train.py": V2, "eval.py": EVAL}, META)
    assert report.statuses == {"eval.py": "unchanged", "train.py": "unchanged"}
    assert report.diffs == {}
    assert snapshot(out) == before
    assert list(user_edits(out)) == ["train.py"]


def test_update_merge_that_does_not_parse_becomes_a_conflict() -> None:
    from mscodegen.output.merge import merge3
    from mscodegen.output.write import _gated

    base, ours, theirs = "a = 1\nb = 2\nc = 3\n", "a = 1\nb = 2\nif True:\nc = 3\n", "a = 10\nb = 2\nc = 3\n"
    clean = merge3(base, ours, theirs)
    assert clean.conflicts == [] and clean.text == "a = 10\nb = 2\nif True:\nc = 3\n"
    gated = _gated("train_model.py", clean, ours, theirs)
    assert gated.conflicts == [1]
    assert gated.text.startswith("<<<<<<< yours\n" + ours + "=======\n" + theirs + ">>>>>>> generated")
    assert _gated("notes.txt", clean, ours, theirs) is clean
