"""plan/predict_gan.py: a GAN config's predict.py plan against hand-written values, and the script it
renders importing only what the training script defines (no MindSpore)."""

from __future__ import annotations

import ast
from pathlib import Path

import yaml

from mscodegen.catalog.literals import Call, Name
from mscodegen.config.load import load_config
from mscodegen.output.generate import generate, plans_of
from mscodegen.plan.predict import build_predict
from mscodegen.plan.predict_gan import GanPredictPlan

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "examples" / "dcgan_digits.yaml"

SMALL: dict = {
    "gan": {
        "latent_dim": 16,
        "generator": {
            "network": {"kind": "builtin", "name": "dcgan_generator", "features": 8, "image_size": 16}
        },
        "discriminator": {"network": {"kind": "builtin", "name": "dcgan_discriminator", "features": 8}},
        "samples": None,
    },
    "data": {"train": {"kind": "digits", "batch_size": 16, "transforms": {"resize": [16, 16]}}},
}


def plan_for(path: Path) -> tuple[GanPredictPlan, dict[str, str]]:
    """The plan of `path`'s predict.py, and every file `new` writes for it."""
    loaded = load_config(path)
    out = path.parent / "out"
    shared, _ = plans_of(loaded, out)
    plan = build_predict(loaded.config, shared, "train_model.py")
    assert isinstance(plan, GanPredictPlan)
    return plan, generate(loaded, out)


def small(tmp_path: Path, **changes: object) -> Path:
    config = {**SMALL, **changes}
    path = tmp_path / "gan.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def imported_from_train(files: dict[str, str], module: str = "train_model") -> set[str]:
    tree = ast.parse(files["predict.py"])
    found = [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == module]
    return {alias.name for node in found for alias in node.names}


def defined_by_train(files: dict[str, str], module: str = "train_model") -> set[str]:
    """The training script's (or checkpoints.py's) top-level classes, functions and constants."""
    names = set()
    for node in ast.parse(files[f"{module}.py"]).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def test_the_example_samples_training_grids_and_finds_its_checkpoints() -> None:
    plan, files = plan_for(EXAMPLE)
    assert plan.template == "predict_gan.py.j2"
    assert plan.generator == Call.of("Generator", Name("LATENT_DIM"), features=32, channels=1)
    assert plan.generator_factory is None and plan.amp_level is None
    assert (plan.count, plan.columns, plan.seed) == (
        Name("SAMPLE_COUNT"),
        Name("SAMPLE_COLUMNS"),
        Name("SAMPLE_SEED"),
    )
    assert plan.latest and plan.training_grid
    from_train = {i.name for i in plan.from_train if i.module == "train_model"}
    assert from_train == {
        "LATENT_DIM",
        "OUTPUT_DIR",
        "SAMPLE_COLUMNS",
        "SAMPLE_COUNT",
        "SAMPLE_SEED",
        "Generator",
    }
    assert imported_from_train(files) == from_train <= defined_by_train(files)
    # --checkpoint latest: where training writes, and its config's hash, from checkpoints.py
    from_checkpoints = {i.name for i in plan.from_train if i.module == "checkpoints"}
    assert from_checkpoints == {"CHECKPOINT_DIR", "CONFIG_SHA256", "INFO"}
    assert imported_from_train(files, "checkpoints") == from_checkpoints
    assert from_checkpoints <= defined_by_train(files, "checkpoints")
    shipped = (REPO / "generated" / "dcgan_digits" / "predict.py").read_text(encoding="utf-8")
    assert len(shipped.splitlines()) <= 200  # the budget for predict.py beside the quick start's


def test_without_samples_or_checkpoints_the_defaults_are_the_grid_keys_defaults(tmp_path: Path) -> None:
    """gan.samples: null leaves no SAMPLE_* in train_model.py; no checkpoints, no CONFIG_SHA256."""
    plan, files = plan_for(small(tmp_path))
    assert (plan.count, plan.columns, plan.seed) == (64, 8, 0)  # SampleGrid's defaults
    assert not plan.latest and not plan.training_grid
    assert {i.name for i in plan.from_train} == {"LATENT_DIM", "Generator"}
    assert imported_from_train(files) == {i.name for i in plan.from_train} <= defined_by_train(files)
    text = files["predict.py"]
    assert 'parser.add_argument("--samples", type=int, default=64' in text
    assert "latest" not in text and "CONFIG_SHA256" not in text


def test_an_imported_generator_is_imported_where_train_imports_it(tmp_path: Path) -> None:
    (tmp_path / "nets.py").write_text("def make_generator(width):\n    pass\n", encoding="utf-8")
    network = {"kind": "import", "factory": "nets:make_generator", "kwargs": {"width": 4}}
    gan = {**SMALL["gan"], "generator": {"network": network}, "samples": {"count": 9, "columns": 3}}
    config = small(tmp_path, gan=gan, amp={"level": "O2"}, callbacks={"checkpoint": {"every_epochs": 1}})
    plan, files = plan_for(config)
    assert plan.generator == Call.of("make_generator", width=4)
    assert plan.generator_factory is not None
    assert (plan.generator_factory.module, plan.generator_factory.attr) == ("nets", "make_generator")
    assert plan.amp_level == "O2" and plan.latest
    assert "make_generator" not in plan.from_train  # not a name of train_model.py's
    from_train = {i.name for i in plan.from_train if i.module == "train_model"}
    assert imported_from_train(files) == from_train <= defined_by_train(files)
    from_checkpoints = {i.name for i in plan.from_train if i.module == "checkpoints"}
    assert imported_from_train(files, "checkpoints") == from_checkpoints
    assert from_checkpoints <= defined_by_train(files, "checkpoints")
    build = ast.get_source_segment(
        files["predict.py"],
        next(
            node
            for node in ast.parse(files["predict.py"]).body
            if isinstance(node, ast.FunctionDef) and node.name == "build_generator"
        ),
    )
    assert build is not None
    assert "from nets import make_generator" in build
    assert 'generator.update_parameters_name("generator.")' in build
    assert 'amp.auto_mixed_precision(generator, "O2")' in build
    assert "from mindspore import amp" in files["predict.py"]
