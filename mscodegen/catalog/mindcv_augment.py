"""mindcv's own auto-augmentation (`mindcv.data.auto_augment`) as a per-column pipeline entry.

    image:
      - RandomCropDecodeResize: {size: 224, interpolation: BICUBIC}
      - mindcv.auto_augment: {policy: randaug-m9-mstd0.5-inc1, translate_const: 100,
                              img_mean: [124, 116, 104], interpolation: BICUBIC}
      - Normalize: {...}

is what mindcv's `transforms_imagenet_train` builds for `auto_augment: randaug-m9-mstd0.5-inc1`: the
script calls the mindcv function the policy's name selects, as mindcv does, with the hparams it passes
(`translate_const`, `img_mean`, `interpolation`; a key left out is left out of the dict, and mindcv's
default applies):

    rand_augment_transform("randaug-m9-mstd0.5-inc1", {"translate_const": 100, ...})

MindSpore's `RandAugment`/`AutoAugment`/`TrivialAugmentWide` are torchvision's algorithms, not mindcv's
(timm's): other op lists, probabilities and magnitudes. mindcv's ops take the uint8 HWC image (numpy)
and run in Python, with Python's `random` and numpy's global generators.

The policy string is checked here with mindcv 0.3.0's grammar (POLICY_GRAMMAR), stricter where mindcv
silently skips a section without a digit or asserts when the script runs (`w` other than 0).
"""

from __future__ import annotations

import re
from typing import Any

NAME = "mindcv.auto_augment"
MODULE = "mindcv.data.auto_augment"
# the policy's name -> the mindcv function transforms_imagenet_train calls, and the sections it reads
FUNCTIONS = {
    "randaug": "rand_augment_transform",
    "autoaug": "auto_augment_transform",
    "autoaugr": "auto_augment_transform",
    "3a": "auto_augment_transform",
    "trivialaugwide": "trivial_augment_wide_transform",
}
SECTIONS: dict[str, dict[str, str]] = {  # section -> its number's kind
    "rand_augment_transform": {
        "m": "int",
        "n": "int",
        "w": "int",
        "mstd": "float",
        "mmax": "int",
        "inc": "int",
    },
    "auto_augment_transform": {"mstd": "float"},
    "trivial_augment_wide_transform": {"m": "int"},
}
# The functions whose ops draw from numpy's global generator (np.random.choice of the ops), as mindcv's
# Mixup does; auto_augment_transform draws from Python's `random` only.
NUMPY_GLOBAL = frozenset({"rand_augment_transform", "trivial_augment_wide_transform"})
POLICY_GRAMMAR = (
    "randaug[-m<int>][-n<int>][-w0][-mstd<float>][-mmax<int>][-inc<int>], "
    "autoaug|autoaugr|3a[-mstd<float>] or trivialaugwide[-m<int>] (sections in any order), "
    "e.g. randaug-m9-mstd0.5-inc1"
)
PARAMS = ("policy", "translate_const", "img_mean", "interpolation")
NUMBERS = {"int": r"\d+", "float": r"\d+(\.\d*)?|\.\d+"}


def function(policy: str) -> str:
    """The mindcv function that builds the policy (the policy passed policy_problem)."""
    return FUNCTIONS[policy.split("-", 1)[0]]


def policy_problem(policy: object) -> str | None:
    """Why `policy` is not a string mindcv 0.3.0 builds (POLICY_GRAMMAR ends the message), or None."""
    why = _policy_why(policy)
    return None if why is None else f"{why}; mindcv's policies: {POLICY_GRAMMAR}"


def _policy_why(policy: object) -> str | None:
    if not isinstance(policy, str):
        return f"`policy` is a string, not {policy!r}"
    name, *sections = policy.split("-")
    if name not in FUNCTIONS:
        return f"{policy!r} names no mindcv policy ({name!r})"
    kinds = SECTIONS[FUNCTIONS[name]]
    for section in sections:
        # mindcv: re.split(r"(\d.*)", section) -> the key before the first digit, the number after it
        key, digit, number = (
            re.split(r"(\d)", section, maxsplit=1) if re.search(r"\d", section) else (section, "", "")
        )
        if key not in kinds:
            return f"{policy!r}: {name} takes no section {key or section!r}"
        if not re.fullmatch(NUMBERS[kinds[key]], digit + number):
            number_kind = "an integer" if kinds[key] == "int" else "a number"
            return f"{policy!r}: section {section!r} needs {number_kind} after {key!r}"
        if name == "randaug" and key == "w" and int(digit + number) != 0:
            return f"{policy!r}: mindcv has one set of op weights, w0 (it asserts so)"
    return None


def kwargs_problems(kwargs: dict[str, Any], inter_members: list[str]) -> list[str]:
    """What is wrong with the entry's arguments other than the policy's grammar."""
    problems = [
        f"{NAME}: unknown argument `{key}` (accepts: {', '.join(PARAMS)})"
        for key in kwargs
        if key not in PARAMS
    ]
    if "policy" not in kwargs:
        problems.append(f"{NAME}: missing required argument `policy` ({POLICY_GRAMMAR})")
    elif not isinstance(kwargs["policy"], str):
        problems.append(f"{NAME}: `policy` is a string ({POLICY_GRAMMAR})")
    const = kwargs.get("translate_const", 0)
    if not _is_int(const) or const < 0:
        problems.append(f"{NAME}: `translate_const` is an integer of at least 0 (got {const!r})")
    mean = kwargs.get("img_mean", 0)
    values = mean if isinstance(mean, list) else [mean]
    if not values or not all(_is_int(v) and 0 <= v <= 255 for v in values):
        problems.append(
            f"{NAME}: `img_mean` (the fill colour) is an integer 0-255 or a list of them (got {mean!r})"
        )
    inter = kwargs.get("interpolation", inter_members[0])
    if inter not in inter_members:
        problems.append(f"{NAME}: `interpolation` is one of {', '.join(inter_members)} (got {inter!r})")
    return problems


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
