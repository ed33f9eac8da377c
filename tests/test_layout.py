"""_layout.fit, the templates' `fit` filter: long statements split the way black splits them (issue 14).

Two facts, both checked against black itself: fit never changes what black makes of a line (a comma
black would not add would keep a bracket exploded), and for the shape fit knows, its output is
black's output, so black has nothing left to do.
"""

from __future__ import annotations

import string

import black
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mscodegen._layout import fit
from mscodegen._literals import literal
from mscodegen.fmt import LINE_LENGTH, MODE


def _context(line: str) -> tuple[str, str]:
    """Code before and after `line` that puts it where its indentation says: in a function body,
    or (a line ending in a comma) an item of a call or dict that black keeps exploded."""
    indent = len(line) - len(line.lstrip(" "))
    code = line.split("  #")[0]
    if code.endswith(","):
        outer = " " * (indent - 4)
        opener, closer = ("{", "}") if code.lstrip().startswith('"') else ("g(", ")")
        before = "def f():\n" + "".join(f"{' ' * d}if x:\n" for d in range(4, indent - 4, 4))
        return before + f"{outer}x = {opener}\n", f"{outer}{closer}\n"
    return "def f():\n" + "".join(f"{' ' * d}if x:\n" for d in range(4, indent, 4)), ""


def black_layout(line: str) -> str:
    """What black makes of `line` in its place, without the surrounding code."""
    before, after = _context(line)
    formatted = black.format_str(before + line + "\n" + after, mode=MODE)
    assert formatted.startswith(before) and formatted.endswith(after)
    return formatted[len(before) : len(formatted) - len(after)]


# Long statements of the generated scripts (the examples print these shapes).
SCRIPT_LINES = [
    '    dataset = ds.NumpySlicesDataset({"image": images, "label": labels}, shuffle=True, num_parallel_workers=1)',
    "    image_ops = [vision.Resize((16, 16)), vision.Normalize(mean=[0.5], std=[0.5]), vision.HWC2CHW()]"
    "  # data.train.transforms",
    "    dataset = dataset.map(Mixup(mixup_alpha=0.2, cutmix_alpha=1.0, switch_prob=0.5, label_smoothing=0.1,"
    ' num_classes=10), input_columns=["image", "label"], num_parallel_workers=1)',
    "    dataset = dataset.map([transforms.OneHot(num_classes=10), transforms.TypeCast(ms.float32)],"
    ' input_columns="label", num_parallel_workers=1)',
    '    parser = argparse.ArgumentParser(description="lenet_digits: train the builtin lenet5 with an explicit'
    ' MindSpore training loop (native variant).")',
    "        self.fc1 = nn.Dense(400, 120, weight_init=initializer.Normal(sigma=0.02))"
    "  # 16 channels x 5 x 5 after conv2 + pool",
    '    return create_model("resnet18", num_classes=10, pretrained=False, in_channels=1, drop_rate=0.1,'
    ' labels=["cat", "dog"])',
    "        loss_scale_manager=FixedLossScaleManager(LOSS_SCALE, drop_overflow_update=False),"
    "  # loss_scale.kind fixed; the optimizer divides by the same scale",
    '        "multi": Multi(label=["a long label", "another long label", "a third long label", "and one more"]),',
]


@pytest.mark.parametrize("line", SCRIPT_LINES, ids=range(len(SCRIPT_LINES)))
def test_fit_prints_what_black_prints(line: str) -> None:
    assert len(line) > LINE_LENGTH
    laid = fit(line + "\n")
    assert laid != line + "\n"
    assert laid == black_layout(line)


# Shapes fit does not know: left as they are, for black.
LEFT_ALONE = [
    "    x = table[" + ", ".join(f"key_{i}" for i in range(14)) + "]",  # a subscript
    "    x = [transform(item, scale=0.5, shift=1.0) for item in a_rather_long_sequence_name if item] + [1]",
    "    x = [transform(item, scale=0.5, shift=1.0, offset=2.0) for item in a_rather_long_sequence_name if item]",
    "    x = build(*arguments, first_keyword=1.0, second_keyword=2.0, third_keyword=3.0, fifth_keyword=5.0, fourth=4.0)",
    "    x = build(key=lambda a, b: a + b, first_keyword=1.0, second_keyword=2.0, third_keyword=3.0, fifth_keyword=5.0, z=1)",
    '    x = build("caf\u00e9 au lait", first_keyword=1.0, second_keyword=2.0, third_keyword=3.0, fifth_keyword=5.0, fourth=4.0)',
    "    x = offset + build(first_keyword=1.0, second_keyword=2.0, third_keyword=3.0, fifth_keyword=5.0, fourth_one=4.0)",
    "    x = (first_keyword_value, second_keyword_value, third_keyword_value, fourth_keyword_value, fifth_value)",
    "    x = build(first_keyword=1.0, second_keyword=2.0, third_keyword=3.0, fifth_keyword=5.0, fourth_keyword=4.0, z=5,)",
    "    x = build(first_keyword=1.0, second_keyword=2.0, third_keyword=3.0, fifth_keyword=5.0, fourth_keyword=4.0)  #tight",
    '    x = build(f"{first}", first_keyword=1.0, second_keyword=2.0, third_keyword=3.0, fifth_keyword=5.0, fourth_kw=4.0)',
    "    x = build(first_keyword=1.0, second_keyword=2.0)(third_keyword=3.0, fifth_keyword=5.0, fourth_keyword=4.0, z=5.0)",
    '    """A docstring that is longer than the line length, which black does not split at all, not ever."""',
]


@pytest.mark.parametrize("line", LEFT_ALONE, ids=range(len(LEFT_ALONE)))
def test_fit_leaves_other_shapes_to_black(line: str) -> None:
    assert len(line) > LINE_LENGTH
    assert fit(line + "\n") == line + "\n"


# Statements with parts fit does not know (an operator inside a bracket, a key that fills the line):
# fit splits what it knows, black may split more, and black ends with what it makes of the statement.
PARTLY = [
    '    sys.path.insert(0, str(Path(__file__).resolve().parent / "../data/a/rather/long/path/to/the/helpers/of/this/project"))',
    '    return {"a_key_that_is_long_enough_to_fill_most_of_the_line_by_itself_and_then_some_more": [1, 2, 3]}',
    "    return build(total_of_all_the_values / count_of_all_the_values + offset_of_the_values - bias_value_of_it)",
]


@pytest.mark.parametrize("line", PARTLY, ids=range(len(PARTLY)))
def test_fit_never_changes_what_black_makes_of_a_line(line: str) -> None:
    assert len(line) > LINE_LENGTH
    laid = fit(line + "\n")
    assert laid != line + "\n"
    before, after = _context(line)
    assert black.format_str(before + laid + after, mode=MODE) == before + black_layout(line) + after


def test_fit_leaves_short_lines_and_lines_inside_a_longer_statement() -> None:
    inner = "        vision.Normalize(mean=[0.5, 0.5, 0.5], std=[0.5, 0.5, 0.5]), vision.HWC2CHW(), vision.Xyzzy(),"
    assert len(inner) > LINE_LENGTH
    text = f"def build():\n    image_ops = [\n{inner}\n    ]\n    return image_ops\n"
    assert fit(text) == text
    long = (
        "    dataset = ds.NumpySlicesDataset(images, shuffle=True, num_parallel_workers=1, num_samples=1000)"
    )
    laid = fit(text + long + "\n")
    assert laid.startswith(text) and laid[len(text) :] == black_layout(long)


# Random statements of the shape fit knows: calls of dotted names, lists and dicts of literals.
NAMES = st.sampled_from(["x", "images", "vision.Resize", "ds.NumpySlicesDataset", "a_rather_long_name"])
KEYWORDS = st.sampled_from(["size", "mean", "input_columns", "num_parallel_workers"])
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**12), max_value=10**12),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(alphabet=string.ascii_letters + " _'\"\\", max_size=40),
).map(literal)


def _call(parts: tuple[str, list[str], list[tuple[str, str]]]) -> str:
    name, args, kwargs = parts
    return f"{name}({', '.join([*args, *(f'{k}={v}' for k, v in kwargs)])})"


EXPRESSIONS = st.recursive(
    SCALARS | NAMES,
    lambda inner: st.one_of(
        st.tuples(NAMES, st.lists(inner, max_size=4), st.lists(st.tuples(KEYWORDS, inner), max_size=3)).map(
            _call
        ),
        st.lists(inner, max_size=6).map(lambda items: "[" + ", ".join(items) + "]"),
        st.lists(st.tuples(st.text(string.ascii_lowercase, min_size=1, max_size=12), inner), max_size=4).map(
            lambda pairs: "{" + ", ".join(f"{literal(k)}: {v}" for k, v in pairs) + "}"
        ),
    ),
    max_leaves=30,
)
STATEMENTS = st.tuples(
    st.integers(min_value=1, max_value=3),
    st.sampled_from(["", "x = ", "image_ops = ", "return ", "self.fc1 = "]),
    st.tuples(
        NAMES, st.lists(EXPRESSIONS, max_size=5), st.lists(st.tuples(KEYWORDS, EXPRESSIONS), max_size=3)
    ).map(_call)
    | st.lists(EXPRESSIONS, min_size=1, max_size=6).map(lambda items: "[" + ", ".join(items) + "]"),
    st.sampled_from(
        ["", "  # data.train.transforms", "  # a longer comment that pushes a line over the limit"]
    ),
).map(lambda t: " " * (4 * t[0]) + (t[1] or ("x = " if t[2].startswith("[") else "")) + t[2] + t[3])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(STATEMENTS)
def test_fit_prints_what_black_prints_for_random_statements(line: str) -> None:
    """Exactly black's layout, for short and long statements alike (a short one is left as it is)."""
    assert fit(line + "\n") == black_layout(line)
