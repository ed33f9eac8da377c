"""`mindcv.auto_augment` pipeline entries: the policy grammar (mindcv 0.3.0's), located errors, the call
the script makes and where it does not appear (evaluation, predict.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mscodegen.catalog import mindcv_augment, pipeline
from mscodegen.catalog.literals import literal
from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.run.parity import generate_both

DIGITS = (Path(__file__).resolve().parents[3] / "examples" / "data" / "digits_png").as_posix()
CONFIG = """\
network: {kind: builtin, name: lenet5, num_classes: 10}
optimizer: {name: momentum}
data:
  train:
    kind: image_folder
    path: DIGITS
    transforms:
      image:
        - RandomResizedCrop: {size: 16}
        - %s
        - HWC2CHW
      label: [{TypeCast: {data_type: int32}}]
""".replace("DIGITS", DIGITS)
RECIPE_POLICIES = (  # every auto_augment of mindcv 51b0636's configs/
    "randaug-m9-mstd0.5-inc1",
    "randaug-m9-mstd0.5",
    "randaug-m7-mstd0.5",
    "randaug-m7-mstd0.5-inc1",
    "randaug-m9-n2-mstd0.5-inc1",
    "autoaug",
    "autoaug-mstd0.5",
)


@pytest.mark.parametrize(
    "policy",
    [*RECIPE_POLICIES, "randaug", "randaug-w0-mmax12-mstd101", "autoaugr", "3a", "trivialaugwide-m20"],
)
def test_policies_mindcv_builds_are_accepted(policy):
    assert mindcv_augment.policy_problem(policy) is None


@pytest.mark.parametrize(
    ("policy", "why"),
    [
        ("randaug-m9-x1", "'randaug-m9-x1': randaug takes no section 'x'"),
        ("randaug-m9-foo", "randaug takes no section 'foo'"),  # mindcv would skip it silently
        ("randaug-m9.5", "section 'm9.5' needs an integer after 'm'"),
        ("randaug-mstd0.5.1", "section 'mstd0.5.1' needs a number after 'mstd'"),
        ("randaug-w1", "one set of op weights, w0"),
        ("autoaug-m9", "autoaug takes no section 'm'"),
        ("trivialaugwide-n2", "trivialaugwide takes no section 'n'"),
        ("augmix-m5", "'augmix-m5' names no mindcv policy ('augmix')"),
        ("RandAugment", "names no mindcv policy"),
    ],
)
def test_malformed_policies_name_the_grammar(policy, why):
    problem = mindcv_augment.policy_problem(policy)
    assert problem is not None
    assert why in problem
    assert problem.endswith(f"mindcv's policies: {mindcv_augment.POLICY_GRAMMAR}")


def _problems(tmp_path: Path, entry: str) -> list[tuple[str, int | None, int | None, str]]:
    path = tmp_path / "cfg.yaml"
    path.write_text(CONFIG % entry, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return [(p.path, p.line, p.column, p.message) for p in info.value.problems]


def test_a_malformed_policy_is_located_at_its_key(tmp_path):
    found = _problems(tmp_path, "mindcv.auto_augment: {policy: randaug-m9-x1, interpolation: BICUBIC}")
    assert [(p, line, col) for p, line, col, _ in found] == [
        ("data.train.transforms.image[1].mindcv.auto_augment.policy", 10, 41)  # the value's column
    ]
    assert "randaug[-m<int>][-n<int>][-w0]" in found[0][3]


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ("mindcv.auto_augment: {}", "missing required argument `policy`"),
        ("mindcv.auto_augment: {policy: 9}", "`policy` is a string"),
        ("mindcv.auto_augment: {policy: autoaug, magnitude: 9}", "unknown argument `magnitude`"),
        ("mindcv.auto_augment: {policy: autoaug, img_mean: [124, 256, 0]}", "integer 0-255"),
        ("mindcv.auto_augment: {policy: autoaug, translate_const: 1.5}", "`translate_const` is an integer"),
        ("mindcv.auto_augment: {policy: autoaug, interpolation: BICUBC}", "`interpolation` is one of"),
        # MindSpore's nested ops only
        ("RandomApply: {transforms: [{mindcv.auto_augment: {policy: autoaug}}]}", "unknown dataset op"),
    ],
)
def test_bad_arguments_are_located_at_the_entry(tmp_path, entry, words):
    found = _problems(tmp_path, entry)
    assert [(p, line) for p, line, _c, _m in found] == [("data.train.transforms.image[1]", 10)]
    assert words in found[0][3]


def test_the_call_is_mindcvs_function_with_create_transforms_hparams():
    entry = {
        "mindcv.auto_augment": {
            "policy": "randaug-m9-mstd0.5-inc1",
            "translate_const": 100,
            "img_mean": [124, 116, 104],
            "interpolation": "BICUBIC",
        }
    }
    assert literal(pipeline.render(entry)) == (
        'rand_augment_transform("randaug-m9-mstd0.5-inc1", {"translate_const": 100, '
        '"img_mean": (124, 116, 104), "interpolation": vision.Inter.BICUBIC})'
    )
    assert pipeline.modules([entry]) == {"rand_augment_transform", "vision"}
    # mindcv's defaults where a key is left out: its fill 128, a random interpolation per op
    bare = {"mindcv.auto_augment": {"policy": "autoaug"}}
    assert literal(pipeline.render(bare)) == 'auto_augment_transform("autoaug", {})'
    assert pipeline.modules([bare]) == {"auto_augment_transform"}
    assert pipeline.python_only([bare]) == ["mindcv.auto_augment"]
    assert pipeline.eval_entries([{"Resize": {"size": [8, 8]}}, bare]) == [{"Resize": {"size": [8, 8]}}]


def test_scripts_import_it_and_predict_does_not(tmp_path):
    path = tmp_path / "cfg.yaml"
    path.write_text(CONFIG % "mindcv.auto_augment: {policy: trivialaugwide, img_mean: 0}", encoding="utf-8")
    scripts = generate_both(path, tmp_path / "out")
    for script in scripts.values():
        text = script.read_text()
        assert "from mindcv.data.auto_augment import trivial_augment_wide_transform\n" in text
        assert '        trivial_augment_wide_transform("trivialaugwide", {"img_mean": 0}),\n' in text
        assert "    # mindcv.auto_augment runs in Python: one thread keeps it reproducible" in text
    assert "augment" not in (tmp_path / "out" / "predict.py").read_text()


@pytest.mark.parametrize(
    ("policy", "process"), [("randaug-m9", True), ("trivialaugwide", True), ("autoaug", False)]
)
def test_its_map_runs_in_a_process_beside_mixup_when_both_draw_from_numpy(tmp_path, policy, process):
    mixup = "    batch_transforms: [{mindcv.Mixup: {num_classes: 10}}]\n    batch_size: 8\n"
    path = tmp_path / "cfg.yaml"
    path.write_text(CONFIG % f"mindcv.auto_augment: {{policy: {policy}}}" + mixup, encoding="utf-8")
    text = generate_both(path, tmp_path / "out")["native"].read_text()
    assert ("python_multiprocessing=True" in text) is process
    assert (
        "# mindcv.auto_augment runs in a process: a thread would share numpy's generator" in text
    ) is process
    without = pipeline.shares_numpy_generator([{"mindcv.auto_augment": {"policy": policy}}], [])
    assert without is False  # no Mixup: one thread draws alone
