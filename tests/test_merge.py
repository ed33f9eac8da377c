"""Tests for mscodegen.merge.merge3 (line-based diff3 merge)."""

from __future__ import annotations

from mscodegen.merge import MergeResult, merge3, split_lines

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
    theirs = BASE.replace("epochs = 5", "epochs = 8").replace(
        "opt = nn.Momentum(net.trainable_params(), learning_rate=lr, momentum=0.9)",
        "opt = nn.Adam(net.trainable_params(), learning_rate=lr)",
    )
    result = merge3(BASE, ours, theirs)
    assert result.conflicts == []
    assert (
        result.text
        == """\
import mindspore as ms
from mindspore import nn

epochs = 8
lr = 0.003
net = build_net()
opt = nn.Adam(net.trainable_params(), learning_rate=lr)
loss_fn = nn.CrossEntropyLoss()

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
    both = BASE.replace("lr = 0.01", "lr = 0.02").replace("epochs = 5", "epochs = 9")
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


def test_custom_labels_and_split_lines() -> None:
    result = merge3("a\n", "b\n", "c\n", labels=("mine", "base", "new"))
    assert result.text.splitlines()[0] == "<<<<<<< mine"
    assert "||||||| base\n" in result.text and ">>>>>>> new\n" in result.text
    assert split_lines("a\r\nb\x0cc\nd") == ["a\r\n", "b\x0cc\n", "d"]
    assert split_lines("") == []


def test_adjacent_edits_conflict_in_classic_mode() -> None:
    ours = BASE.replace("lr = 0.01", "lr = 0.003")
    theirs = BASE.replace("epochs = 5", "epochs = 8")
    assert merge3(BASE, ours, theirs).text == BASE.replace("lr = 0.01", "lr = 0.003").replace(
        "epochs = 5", "epochs = 8"
    )
    classic = merge3(BASE, ours, theirs, resolve_adjacent=False)
    assert classic.conflicts == [4]
    assert classic.text.splitlines()[3:13] == [
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
