"""The shipped table of dataset ops: it matches the installed MindSpore, check_op reports bad pipeline
entries without importing MindSpore, and what the table accepts MindSpore really builds and applies."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from mscodegen.catalog.dataset_ops import REFRESH_COMMAND, check_op, check_pipeline, load_table

from conftest import REPO

MEAN = [123.675, 116.28, 103.53]
STD = [58.395, 57.12, 57.375]


def run_python(*args: str, stdin: str = "") -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, *args], input=stdin, capture_output=True, text=True, env=env, cwd=REPO
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


# ---- check_op / check_pipeline: no MindSpore --------------------------------------------------------------


def test_the_mmpretrain_style_train_pipeline_is_accepted():
    pipeline = [
        {"RandomResizedCrop": {"size": 224, "scale": [0.08, 1.0]}},
        {"RandomHorizontalFlip": {"prob": 0.5}},
        {"RandomColorAdjust": {"brightness": 0.4, "contrast": 0.4, "saturation": 0.4}},
        {"RandAugment": {"num_ops": 2, "magnitude": 9}},
        {"Normalize": {"mean": MEAN, "std": STD}},
        {"HWC2CHW": {}},
        {"RandomErasing": {"prob": 0.25}},
        {"TypeCast": {"data_type": "float32"}},
    ]
    assert check_pipeline(pipeline) == []


def test_a_misspelt_op_name_suggests_the_right_one():
    assert check_op("RandomHorizontalFilp", {"prob": 0.5}) == [
        "unknown dataset op `RandomHorizontalFilp` (did you mean RandomHorizontalFlip or "
        "RandomHorizontalFlipWithBBox or HorizontalFlip?)"
    ]


def test_an_op_name_in_the_wrong_case_suggests_both_mixups():
    (problem,) = check_op("mixup", {})
    assert problem.startswith("unknown dataset op `mixup` (did you mean MixUp or mindcv.Mixup")


def test_a_misspelt_argument_suggests_the_ops_parameter():
    assert check_op("RandomHorizontalFlip", {"prb": 0.5}) == [
        "RandomHorizontalFlip: unknown argument `prb` (did you mean prob?)"
    ]


def test_an_unknown_argument_without_a_close_match_lists_the_parameters():
    assert check_op("Resize", {"size": 8, "antialias": True}) == [
        "Resize: unknown argument `antialias` (accepts: size, interpolation)"
    ]
    assert check_op("HWC2CHW", {"inplace": True}) == [
        "HWC2CHW: unknown argument `inplace` (accepts: no arguments)"
    ]


def test_a_non_string_argument_name_is_reported_not_raised():
    assert check_op("RandomHorizontalFlip", {1: 0.5}) == [  # YAML `1: 0.5`
        "RandomHorizontalFlip: unknown argument `1` (accepts: prob)"
    ]


def test_missing_required_arguments_are_reported():
    assert check_op("Normalize", {"mean": MEAN}) == ["Normalize: missing required argument `std`"]
    assert check_op("RandomResizedCrop", {"szie": 224}) == [
        "RandomResizedCrop: missing required argument `size`",
        "RandomResizedCrop: unknown argument `szie` (did you mean size?)",
    ]


def test_text_ops_needing_a_vocab_object_are_flagged_even_when_given_one():
    message = "Lookup needs a Vocab object for `vocab`, which a config cannot give"
    assert check_op("Lookup", {}) == [message]
    assert check_op("Lookup", {"vocab": "vocab.txt"}) == [message]
    assert check_op("ToVectors", {}) == [
        "ToVectors needs a Vectors object for `vectors`, which a config cannot give"
    ]
    assert check_op("WhitespaceTokenizer", {}) == []  # a text op that needs no resource
    assert check_op("JiebaTokenizer", {"hmm_path": "hmm.utf8", "mp_path": "jieba.dict.utf8"}) == []


def test_a_var_positional_op_cannot_be_given_keywords():
    assert check_op("Slice", {"slices": [0, 2]}) == [
        "Slice takes its arguments positionally (*slices), which a keyword form cannot give"
    ]


def test_nested_pipelines_are_checked_with_their_path():
    entry = {"transforms": [{"RandomHorizontalFlip": {}}, {"RandomCrop": {"szie": 8}}], "prob": 0.5}
    assert check_op("RandomApply", entry) == [
        "RandomApply.transforms[1]: RandomCrop: missing required argument `size`",
        "RandomApply.transforms[1]: RandomCrop: unknown argument `szie` (did you mean size?)",
    ]


def test_pipeline_problems_carry_the_entry_index():
    pipeline = [
        {"Resize": {"size": 8}},
        "HWC2CHW",
        {"HWC2CHW": None},
        {"Resize": {"size": 8}, "HWC2CHW": {}},
        {"Normalize": [MEAN, STD]},
        {"Rezise": {"size": 8}},
    ]
    *shape_problems, (index, typo) = check_pipeline(pipeline)
    assert shape_problems == [
        (1, "each entry is a one-key mapping `{OpName: {arguments}}`"),
        (3, "each entry is a one-key mapping `{OpName: {arguments}}`"),
        (4, "`Normalize`: the arguments of an op are a mapping of keyword: value"),
    ]
    assert index == 5 and typo.startswith("unknown dataset op `Rezise` (did you mean Resize")


def test_checking_does_not_import_mindspore():
    code = (
        "import sys; from mscodegen.catalog.dataset_ops import check_pipeline\n"
        "assert check_pipeline([{'Resize': {'size': 8}}, {'mindcv.Mixup': {'num_classes': 4}}]) == []\n"
        "print(sorted(m for m in sys.modules if m.startswith(('mindspore', 'mindcv', 'numpy'))))"
    )
    assert run_python("-c", code).strip() == "[]"


def test_table_records_what_the_mindspore_docs_state():
    ops = load_table()["ops"]
    wanted = [
        "Decode",
        "Resize",
        "Rescale",
        "Normalize",
        "HWC2CHW",
        "RandomResizedCrop",
        "RandomCrop",
        "CenterCrop",
        "RandomHorizontalFlip",
        "RandomVerticalFlip",
        "RandomColorAdjust",
        "RandAugment",
        "AutoAugment",
        "TrivialAugmentWide",
        "RandomErasing",
        "Pad",
        "ToTensor",
        "ConvertColor",
        "Grayscale",
        "TypeCast",
        "OneHot",
        "Compose",
        "RandomApply",
        "RandomChoice",
        "Fill",
        "MixUp",
        "MixUpBatch",
        "CutMixBatch",
        "mindcv.Mixup",
        "WhitespaceTokenizer",
        "Lookup",
    ]
    assert set(wanted) <= set(ops)
    rrc = {p["name"]: p for p in ops["RandomResizedCrop"]["params"]}
    assert list(rrc) == ["size", "scale", "ratio", "interpolation", "max_attempts"]
    assert rrc["size"]["required"] and rrc["scale"]["default"] == [0.08, 1.0]
    assert rrc["interpolation"] == {
        "name": "interpolation",
        "required": False,
        "default_repr": "Inter.BILINEAR",
        "type": "Inter, optional",
        "accepts": ["enum:Inter"],
    }
    assert [p["name"] for p in ops["HWC2CHW"]["params"]] == []
    assert {op: ops[op]["input"] for op in ("MixUpBatch", "CutMixBatch", "mindcv.Mixup", "Resize")} == {
        "MixUpBatch": "batch",
        "CutMixBatch": "batch",
        "mindcv.Mixup": "batch",
        "Resize": "image",
    }
    assert ops["RandomErasing"]["impl"] == "python" and ops["Resize"]["impl"] == "both"
    assert load_table()["enums"]["ImageBatchFormat"]["members"] == ["NHWC", "NCHW"]


# ---- against the installed MindSpore -------------------------------------------------------------------


@pytest.mark.slow
def test_shipped_table_matches_installed_mindspore():
    installed = json.loads(run_python("-m", "mscodegen.tools.catalog", "ops", "--print"))
    shipped = load_table()
    assert installed["versions"] == shipped["versions"], f"run: {REFRESH_COMMAND}"
    changed = sorted(
        k
        for k in installed["ops"].keys() | shipped["ops"].keys()
        if installed["ops"].get(k) != shipped["ops"].get(k)
    )
    assert not changed, f"ops differ from the installed MindSpore: {changed}; run: {REFRESH_COMMAND}"
    assert installed == shipped, f"run: {REFRESH_COMMAND}"


# Builds each op from the table's module and class, turning config values into what MindSpore takes
# (dtype and enum names, nested entries) as a generated script would, and applies it to a small input.
PROBE = r"""
import importlib, json, sys
import numpy as np
import mindspore
from mscodegen.catalog.dataset_ops import load_table

table = load_table()


def build(entry):
    ((name, kwargs),) = entry.items()
    op = table["ops"][name]
    accepts = {p["name"]: p["accepts"] for p in op["params"]}
    args = {}
    for key, value in kwargs.items():
        kind = accepts[key][0]
        if kind == "dtype":
            value = getattr(mindspore, value)
        elif kind.startswith("enum:"):
            enum = table["enums"][kind[5:]]
            value = getattr(getattr(importlib.import_module(enum["module"]), kind[5:]), value)
        elif kind == "ops":
            value = [build(e) for e in value] if isinstance(value, list) else build(value)
        args[key] = value
    return getattr(importlib.import_module(op["module"]), op["class"])(**args)


rng = np.random.RandomState(0)
image = rng.randint(0, 256, (32, 32, 3), dtype=np.uint8)
onehot = np.eye(4, dtype=np.float32)[[0, 1, 2, 3]]
inputs = {
    "hwc": lambda: (image.copy(),),
    "chw_float": lambda: (image.transpose(2, 0, 1).astype(np.float32) / 255,),
    "label": lambda: (np.array(2, dtype=np.int32),),
    "text": lambda: (np.array("hello big world"),),
    "batch_nhwc_onehot": lambda: (np.stack([image] * 4), onehot.copy()),
    "batch_nchw_int": lambda: (np.stack([image.transpose(2, 0, 1)] * 4).astype(np.float32), np.arange(4, dtype=np.int32)),
}
results = {}
for case in json.load(sys.stdin):
    try:
        out = build(case["entry"])(*inputs[case["input"]]())
        outs = out if isinstance(out, tuple) else (out,)
        results[case["id"]] = {
            "shapes": [list(np.shape(o)) for o in outs],
            "dtypes": [str(np.asarray(o).dtype) for o in outs],
            "hflip": bool(np.array_equal(outs[0], image[:, ::-1])),
        }
        if case["input"].startswith("batch"):
            results[case["id"]]["label_sums"] = np.asarray(outs[-1]).sum(axis=-1).round(4).tolist()
    except Exception as exc:  # reported per case by the test
        results[case["id"]] = {"error": f"{type(exc).__name__}: {exc}"[:400]}
print(json.dumps(results))
"""

# (id, entry, input, expected output shapes, expected dtypes); expectations from MindSpore's documentation.
APPLY_CASES = [
    ("Resize", {"Resize": {"size": [16, 24]}}, "hwc", [[16, 24, 3]], ["uint8"]),
    (
        "RandomResizedCrop",
        {"RandomResizedCrop": {"size": 16, "scale": [0.5, 1.0]}},
        "hwc",
        [[16, 16, 3]],
        ["uint8"],
    ),
    ("RandomCrop", {"RandomCrop": {"size": 24, "padding": 4}}, "hwc", [[24, 24, 3]], ["uint8"]),
    ("CenterCrop", {"CenterCrop": {"size": 20}}, "hwc", [[20, 20, 3]], ["uint8"]),
    ("RandomHorizontalFlip", {"RandomHorizontalFlip": {"prob": 1.0}}, "hwc", [[32, 32, 3]], ["uint8"]),
    ("RandomVerticalFlip", {"RandomVerticalFlip": {"prob": 0.5}}, "hwc", [[32, 32, 3]], ["uint8"]),
    (
        "RandomColorAdjust",
        {"RandomColorAdjust": {"brightness": 0.4, "contrast": 0.4, "saturation": 0.4, "hue": 0.1}},
        "hwc",
        [[32, 32, 3]],
        ["uint8"],
    ),
    (
        "RandAugment",
        {"RandAugment": {"num_ops": 2, "magnitude": 9, "interpolation": "BILINEAR"}},
        "hwc",
        [[32, 32, 3]],
        ["uint8"],
    ),
    ("AutoAugment", {"AutoAugment": {"policy": "CIFAR10"}}, "hwc", [[32, 32, 3]], ["uint8"]),
    ("Rescale", {"Rescale": {"rescale": 1 / 255, "shift": 0.0}}, "hwc", [[32, 32, 3]], ["float32"]),
    ("Normalize", {"Normalize": {"mean": MEAN, "std": STD}}, "hwc", [[32, 32, 3]], ["float32"]),
    ("HWC2CHW", {"HWC2CHW": {}}, "hwc", [[3, 32, 32]], ["uint8"]),
    ("Pad", {"Pad": {"padding": 2, "padding_mode": "REFLECT"}}, "hwc", [[36, 36, 3]], ["uint8"]),
    ("RandomErasing", {"RandomErasing": {"prob": 1.0, "value": 0}}, "chw_float", [[3, 32, 32]], ["float32"]),
    ("TypeCast", {"TypeCast": {"data_type": "float16"}}, "hwc", [[32, 32, 3]], ["float16"]),
    ("OneHot", {"OneHot": {"num_classes": 4}}, "label", [[4]], None),
    (
        "Compose",
        {"Compose": {"transforms": [{"Resize": {"size": 8}}, {"HWC2CHW": {}}]}},
        "hwc",
        [[3, 8, 8]],
        ["uint8"],
    ),
    (
        "RandomApply",
        {"RandomApply": {"transforms": [{"RandomHorizontalFlip": {"prob": 1.0}}], "prob": 1.0}},
        "hwc",
        [[32, 32, 3]],
        ["uint8"],
    ),
    ("WhitespaceTokenizer", {"WhitespaceTokenizer": {}}, "text", [[3]], None),
    (
        "MixUpBatch",
        {"MixUpBatch": {"alpha": 1.0}},
        "batch_nhwc_onehot",
        [[4, 32, 32, 3], [4, 4]],
        ["uint8", "float32"],
    ),
    (
        "CutMixBatch",
        {"CutMixBatch": {"image_batch_format": "NHWC", "alpha": 1.0, "prob": 1.0}},
        "batch_nhwc_onehot",
        [[4, 32, 32, 3], [4, 4]],
        ["uint8", "float32"],
    ),
    (
        "mindcv.Mixup",
        {"mindcv.Mixup": {"mixup_alpha": 0.8, "cutmix_alpha": 1.0, "label_smoothing": 0.1, "num_classes": 4}},
        "batch_nchw_int",
        [[4, 3, 32, 32], [4, 4]],
        ["float32", "float32"],
    ),
]


@pytest.fixture(scope="module")
def applied() -> dict:
    cases = [{"id": case_id, "entry": entry, "input": kind} for case_id, entry, kind, _, _ in APPLY_CASES]
    return json.loads(run_python("-c", PROBE, stdin=json.dumps(cases)))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("case_id", "entry", "kind", "shapes", "dtypes"), APPLY_CASES, ids=[c[0] for c in APPLY_CASES]
)
def test_what_the_table_accepts_mindspore_builds_and_applies(applied, case_id, entry, kind, shapes, dtypes):
    assert check_pipeline([entry]) == []
    result = applied[case_id]
    assert "error" not in result, result["error"]
    assert result["shapes"] == shapes
    if dtypes is not None:
        assert result["dtypes"] == dtypes
    if case_id in ("RandomHorizontalFlip", "RandomApply"):
        assert result["hflip"]  # prob 1.0: the image mirrored left-right
    if kind.startswith("batch"):
        assert result["label_sums"] == [1.0] * 4  # mixed labels stay distributions


@pytest.mark.slow
def test_every_op_without_required_arguments_constructs():
    code = (
        "import importlib, json\nfrom mscodegen.catalog.dataset_ops import load_table\nfailed = {}\n"
        "for name, op in load_table()['ops'].items():\n"
        "    if any(p['required'] or 'kind' in p for p in op['params']):\n        continue\n"
        "    try:\n        getattr(importlib.import_module(op['module']), op['class'])()\n"
        "    except Exception as exc:\n        failed[name] = repr(exc)[:200]\n"
        "print(json.dumps(failed))"
    )
    no_required = [
        name
        for name, op in load_table()["ops"].items()
        if not any(p["required"] or "kind" in p for p in op["params"])
    ]
    assert len(no_required) > 40
    assert json.loads(run_python("-c", code)) == {}


AUGMENT = r"""
import hashlib, sys
import numpy as np
import mindspore.dataset as ds
import mindspore.dataset.vision as vision

ds.config.set_seed(int(sys.argv[1]))
images = np.random.RandomState(0).randint(0, 256, (16, 32, 32, 3), dtype=np.uint8)
data = ds.NumpySlicesDataset({"image": images, "label": np.arange(16, dtype=np.int32)}, shuffle=False)
ops = [vision.RandomResizedCrop(24), vision.RandomHorizontalFlip(), vision.RandAugment()]
data = data.map(ops, input_columns="image", num_parallel_workers=2).shuffle(buffer_size=8).batch(4)
digest = hashlib.sha256()
for image, label in data.create_tuple_iterator(num_epochs=1, output_numpy=True):
    digest.update(image.tobytes())
    digest.update(label.tobytes())
print(digest.hexdigest())
"""


@pytest.mark.slow
def test_random_augmentation_and_shuffle_repeat_across_processes_with_the_same_seed():
    first, second, other = (run_python("-c", AUGMENT, seed) for seed in ("7", "7", "8"))
    assert first == second
    assert first != other
