"""Tests for mscodegen.output.merge.merge3 (line-based diff3 merge on the merge3 package).

Where git is installed, `git merge-file --diff3` is the oracle for the merged text.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from mscodegen.output.merge import MergeResult, merge3, split_lines

BASE = """\
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


def test_realistic_edits_in_different_places_merge_cleanly() -> None:
    ours = BASE.replace("lr = 0.01", "lr = 0.003").replace(
        "        loss = train_step(x, y)\n",
        "        loss = train_step(x, y)\n        print(f'step {step}: {loss}')\n",
    )
    theirs = BASE.replace(
        "opt = nn.Momentum(net.trainable_params(), learning_rate=lr, momentum=0.9)",
        "opt = nn.Adam(net.trainable_params(), learning_rate=lr)",
    ).replace("loss_fn = nn.CrossEntropyLoss()", "loss_fn = nn.MSELoss()")
    result = merge3(BASE, ours, theirs)
    assert result.conflicts == []
    assert (
        result.text
        == """\
import mindspore as ms
from mindspore import nn

epochs = 5
lr = 0.003
net = build_net()
opt = nn.Adam(net.trainable_params(), learning_rate=lr)
loss_fn = nn.MSELoss()

for epoch in range(epochs):
    for step, (x, y) in enumerate(loader):
        loss = train_step(x, y)
        print(f'step {step}: {loss}')
    save_checkpoint(net, epoch)
"""
    )


def test_conflict_on_same_line_has_diff3_markers_and_exact_line() -> None:
    ours = BASE.replace("epochs = 5", "epochs = 20")
    theirs = BASE.replace("epochs = 5", "epochs = 8")
    result = merge3(BASE, ours, theirs)
    assert result.conflicts == [4]
    lines = result.text.splitlines()
    assert lines[3:10] == [
        "<<<<<<< yours",
        "epochs = 20",
        "||||||| pristine",
        "epochs = 5",
        "=======",
        "epochs = 8",
        ">>>>>>> generated",
    ]
    assert lines[:3] == BASE.splitlines()[:3]
    assert lines[10:] == BASE.splitlines()[4:]


def test_two_conflict_blocks_report_both_marker_lines() -> None:
    ours = BASE.replace("epochs = 5", "epochs = 1").replace("momentum=0.9", "momentum=0.5")
    theirs = BASE.replace("epochs = 5", "epochs = 2").replace("momentum=0.9", "momentum=0.8")
    result = merge3(BASE, ours, theirs)
    # first block occupies lines 4-10, then "lr" and "net" (11, 12), second block at 13
    assert result.conflicts == [4, 13]
    out = result.text.splitlines()
    assert out[3] == "<<<<<<< yours" and out[12] == "<<<<<<< yours"
    assert out[13] == "opt = nn.Momentum(net.trainable_params(), learning_rate=lr, momentum=0.5)"


def test_identical_edit_on_both_sides_is_taken_once() -> None:
    edited = BASE.replace("lr = 0.01", "lr = 0.02")
    assert merge3(BASE, edited, edited) == MergeResult(edited, [])
    # the same edit on both sides, plus one more (not adjacent) on theirs
    both = BASE.replace("lr = 0.01", "lr = 0.02").replace("nn.CrossEntropyLoss()", "nn.MSELoss()")
    ours = BASE.replace("lr = 0.01", "lr = 0.02")
    result = merge3(BASE, ours, both)
    assert result == MergeResult(both, [])


def test_insertions_at_same_point() -> None:
    base = "a\nb\n"
    assert merge3(base, "a\nX\nb\n", "a\nX\nb\n").text == "a\nX\nb\n"
    result = merge3(base, "a\nX\nb\n", "a\nY\nb\n")
    assert result.conflicts == [2]
    assert result.text == ("a\n<<<<<<< yours\nX\n||||||| pristine\n=======\nY\n>>>>>>> generated\nb\n")


def test_deletion_on_one_side_and_edit_elsewhere() -> None:
    ours = BASE.replace("loss_fn = nn.CrossEntropyLoss()\n", "")
    theirs = BASE.replace("epochs = 5", "epochs = 8")
    result = merge3(BASE, ours, theirs)
    assert result.conflicts == []
    assert result.text == BASE.replace("epochs = 5", "epochs = 8").replace(
        "loss_fn = nn.CrossEntropyLoss()\n", ""
    )


def test_delete_versus_modify_conflicts() -> None:
    base = "a\nb\nc\n"
    result = merge3(base, "a\nc\n", "a\nB\nc\n")
    assert result.conflicts == [2]
    assert result.text == ("a\n<<<<<<< yours\n||||||| pristine\nb\n=======\nB\n>>>>>>> generated\nc\n")


def test_empty_inputs() -> None:
    assert merge3("", "", "") == MergeResult("", [])
    assert merge3("", "", "x\n") == MergeResult("x\n", [])
    assert merge3("x\n", "", "x\n") == MergeResult("", [])
    result = merge3("", "a\n", "b\n")
    assert result == MergeResult("<<<<<<< yours\na\n||||||| pristine\n=======\nb\n>>>>>>> generated\n", [1])


def test_missing_trailing_newline_is_preserved() -> None:
    result = merge3("a\nx\nb", "A\nx\nb", "a\nx\nB")
    assert result == MergeResult("A\nx\nB", [])


def test_conflict_on_last_line_without_newline_keeps_markers_on_own_lines() -> None:
    result = merge3("a\nb", "a\nc", "a\nd")
    assert result == MergeResult(
        "a\n<<<<<<< yours\nc\n||||||| pristine\nb\n=======\nd\n>>>>>>> generated\n", [2]
    )


def test_crlf_lines_untouched() -> None:
    base = "a\r\nx\r\nb\r\n"
    result = merge3(base, "A\r\nx\r\nb\r\n", "a\r\nx\r\nB\r\n")
    assert result == MergeResult("A\r\nx\r\nB\r\n", [])
    conflict = merge3(base, "A\r\nx\r\nb\r\n", "Z\r\nx\r\nb\r\n")
    assert conflict.text == (
        "<<<<<<< yours\r\nA\r\n||||||| pristine\r\na\r\n=======\r\nZ\r\n>>>>>>> generated\r\nx\r\nb\r\n"
    )


def test_split_lines() -> None:
    assert split_lines("a\r\nb\x0cc\nd") == ["a\r\n", "b\x0cc\n", "d"]
    assert split_lines("") == []


def test_adjacent_edits_conflict_as_in_git() -> None:
    """Edits on neighbouring lines are one conflict (git merge-file does the same).

    The hand-written merge this package replaced resolved them (``resolve_adjacent``); that test
    and the one that pinned same-length replacements being split into single lines are gone.
    """
    ours = BASE.replace("lr = 0.01", "lr = 0.003")
    theirs = BASE.replace("epochs = 5", "epochs = 8")
    result = merge3(BASE, ours, theirs)
    assert result.conflicts == [4]
    assert result.text.splitlines()[3:13] == [
        "<<<<<<< yours",
        "epochs = 5",
        "lr = 0.003",
        "||||||| pristine",
        "epochs = 5",
        "lr = 0.01",
        "=======",
        "epochs = 8",
        "lr = 0.01",
        ">>>>>>> generated",
    ]


LONG = "".join(f"x{i} = {i}\n\n" for i in range(150))  # 300 lines, half of them blank
LONG_BASE = LONG + "a = 1\n\n\nb = 2\n" + LONG


def test_blank_lines_in_a_long_file_still_separate_edits() -> None:
    """No autojunk: difflib's default would treat the (popular) blank lines as junk in a file over
    200 lines, fuse `a` and `b` into one change and report a conflict with the insertion between."""
    ours = LONG_BASE.replace("a = 1", "a = 10").replace("b = 2", "b = 20")
    theirs = LONG_BASE.replace("a = 1\n\n\n", "a = 1\n\n# new\n\n")
    result = merge3(LONG_BASE, ours, theirs)
    assert result == MergeResult(LONG + "a = 10\n\n# new\n\nb = 20\n" + LONG, [])


def test_insertion_touching_other_sides_edit_conflicts() -> None:
    base = "a\nb\nc\n"
    result = merge3(base, "a\nb\nX\nc\n", "a\nB\nc\n")
    assert result.conflicts == [2]
    assert result.text == ("a\n<<<<<<< yours\nb\nX\n||||||| pristine\nb\n=======\nB\n>>>>>>> generated\nc\n")


def test_shifted_lines_still_merge() -> None:
    ours = "# my notes\n# more notes\n" + BASE
    theirs = BASE.replace("    save_checkpoint(net, epoch)\n", "")
    result = merge3(BASE, ours, theirs)
    assert result == MergeResult(
        "# my notes\n# more notes\n" + BASE.replace("    save_checkpoint(net, epoch)\n", ""),
        [],
    )


GIT_CASES = {
    "separate edits": (
        BASE,
        BASE.replace("lr = 0.01", "lr = 0.003"),
        BASE.replace("loss_fn = nn.CrossEntropyLoss()", "loss_fn = nn.MSELoss()"),
    ),
    "adjacent edits": (BASE, BASE.replace("lr = 0.01", "lr = 0.3"), BASE.replace("epochs = 5", "epochs = 8")),
    "same line": (BASE, BASE.replace("epochs = 5", "epochs = 1"), BASE.replace("epochs = 5", "epochs = 2")),
    "two blocks": (
        BASE,
        BASE.replace("epochs = 5", "epochs = 1").replace("momentum=0.9", "momentum=0.5"),
        BASE.replace("epochs = 5", "epochs = 2").replace("momentum=0.9", "momentum=0.8"),
    ),
    "insert vs edit": ("a\nb\nc\n", "a\nb\nX\nc\n", "a\nB\nc\n"),
    "delete vs edit": ("a\nb\nc\n", "a\nc\n", "a\nB\nc\n"),
    "shifted": (BASE, "# notes\n" + BASE, BASE.replace("    save_checkpoint(net, epoch)\n", "")),
    "blank lines in a long file": (
        LONG_BASE,
        LONG_BASE.replace("a = 1", "a = 10").replace("b = 2", "b = 20"),
        LONG_BASE.replace("a = 1\n\n\n", "a = 1\n\n# new\n\n"),
    ),
    "identical plus one": (
        BASE,
        BASE.replace("lr = 0.01", "lr = 0.02"),
        BASE.replace("lr = 0.01", "lr = 0.02").replace("epochs = 5", "epochs = 9"),
    ),
}


@pytest.mark.skipif(shutil.which("git") is None, reason="git is the oracle")
@pytest.mark.parametrize("case", sorted(GIT_CASES))
def test_same_text_as_git_merge_file_diff3(case: str, tmp_path: Path) -> None:
    base, ours, theirs = GIT_CASES[case]
    for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
        (tmp_path / name).write_text(text)
    labels = ["-L", "yours", "-L", "pristine", "-L", "generated"]
    git = subprocess.run(
        ["git", "merge-file", "-p", "--diff3", *labels, "ours", "base", "theirs"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    result = merge3(base, ours, theirs)
    assert result.text == git.stdout
    assert len(result.conflicts) == git.returncode  # git exits with the number of conflicts
