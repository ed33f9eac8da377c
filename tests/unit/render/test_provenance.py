"""Provenance markers: stripping, carrying keys over to the real script's lines, look-ups."""

from __future__ import annotations

import pytest

from mscodegen.render.provenance import BEGIN, END, carry_over, explain_key, keys_at, lines_of, strip_markers

MARKED = f"""import mindspore as ms
{BEGIN}optimizer.lr
LR = 0.05  # optimizer.lr
{END}
{BEGIN}optimizer
def build_optimizer(params):
    {BEGIN}optimizer.momentum
    momentum = 0.9
    {END}
    return ms.nn.Momentum(params, LR, momentum)
{END}
"""


def test_markers_are_removed_and_each_line_gets_the_keys_around_it():
    text, keys = strip_markers(MARKED)
    assert BEGIN not in text and END not in text
    lines = text.splitlines()
    assert lines[1] == "LR = 0.05  # optimizer.lr"
    assert keys == [
        frozenset(),
        frozenset({"optimizer.lr"}),
        frozenset({"optimizer"}),
        frozenset({"optimizer", "optimizer.momentum"}),
        frozenset({"optimizer"}),
    ]


@pytest.mark.parametrize("text", [f"{BEGIN}a\nx = 1\n", f"x = 1\n{END}\n"])
def test_unbalanced_markers_are_an_error(text):
    with pytest.raises(ValueError, match="provenance marker"):
        strip_markers(text)


def test_a_key_asks_for_the_keys_below_it_but_not_above():
    _, keys = strip_markers(MARKED)
    assert lines_of(keys, "optimizer") == [2, 3, 4, 5]
    assert lines_of(keys, "optimizer.momentum") == [4]
    assert lines_of(keys, "optim") == []  # a prefix of a name is not a parent key


def test_keys_follow_equal_lines_when_the_real_script_is_laid_out_differently():
    marked_clean = ["a = 1\n", "b = [\n", "    1,\n", "]\n", "c = 3\n"]
    keys = [frozenset({"x"}), frozenset({"y"}), frozenset({"y"}), frozenset({"y"}), frozenset({"z"})]
    real = ["a = 1\n", "b = [1]\n", "c = 3\n"]
    assert carry_over(marked_clean, keys, real) == [frozenset({"x"}), frozenset(), frozenset({"z"})]


def test_explain_lists_where_a_constant_the_key_defined_is_read():
    text, keys = strip_markers(MARKED)
    explained = explain_key("train.py", text, keys, "optimizer.lr")
    assert explained.produced == [2]
    assert explained.used == [5]  # `LR` inside build_optimizer


def test_keys_at_a_line_most_specific_first():
    _, keys = strip_markers(MARKED)
    assert keys_at(keys, 4) == ["optimizer.momentum", "optimizer"]
    with pytest.raises(IndexError):
        keys_at(keys, 99)
