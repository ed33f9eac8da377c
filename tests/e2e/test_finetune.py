"""network.checkpoint and network.freeze: schema errors, the load report, strictness, parity, frozen weights.

The source checkpoint is written here (mindcv resnet18, 10 classes, its own seed): no downloads.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from mscodegen.cli import main
from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.run.parity import generate_both, run_script, step_differences
from mscodegen.run.preflight import map_failure

from conftest import REPO, TINY, kept_runs, merge, pretrained, shipped_parity

EXAMPLE = REPO / "examples" / "resnet18_finetune.yaml"


def _write(tmp_path: Path, config: dict, name: str = "tiny") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _problems(path: Path) -> list:
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return info.value.problems


# --- schema: located errors -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "message"),
    [("", "empty pattern"), (" layer1.*", "spaces"), ("layer[1.*", "unbalanced")],
)
def test_bad_skip_pattern_is_located(tmp_path, pattern, message):
    config = merge(TINY, {"network": {"checkpoint": {"path": "w.ckpt", "skip": ["fc1.*", pattern]}}})
    (problem,) = _problems(_write(tmp_path, config))
    assert problem.path == "network.checkpoint.skip[1]"
    assert message in problem.message
    assert problem.line is not None


def test_bad_freeze_pattern_and_empty_list_are_located(tmp_path):
    (problem,) = _problems(
        _write(tmp_path, merge(TINY, {"network": {"freeze": {"patterns": ["fc1.*", ""]}}}))
    )
    assert problem.path == "network.freeze.patterns[1]"
    (problem,) = _problems(_write(tmp_path, merge(TINY, {"network": {"freeze": {"patterns": []}}})))
    assert problem.path == "network.freeze.patterns"


def test_checkpoint_path_must_be_a_ckpt(tmp_path):
    (problem,) = _problems(_write(tmp_path, merge(TINY, {"network": {"checkpoint": {"path": "w.pt"}}})))
    assert problem.path == "network.checkpoint.path"
    assert "*.ckpt" in problem.message


def test_validate_reports_a_missing_checkpoint_file_at_its_key(tmp_path, capsys):
    path = _write(tmp_path, merge(TINY, {"network": {"checkpoint": {"path": "weights/missing.ckpt"}}}))
    load_config(path)  # generating does not need the file
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "missing.ckpt" in text)
    assert f"{path}:{line}:" in err
    assert "network.checkpoint.path" in err and "does not exist" in err
    (tmp_path / "weights").mkdir()
    (tmp_path / "weights" / "missing.ckpt").write_bytes(b"")
    assert main(["validate", str(path)]) == 0


def test_example_validates_once_its_checkpoint_exists():
    loaded = load_config(EXAMPLE)
    net = loaded.config.network
    assert net.checkpoint is not None and net.checkpoint.skip == ["classifier.*"]
    assert net.freeze is not None


# --- running the scripts ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def source_ckpt(checkout: Path) -> Path:
    """The example's starting weights as examples/make_pretrained.py writes them (mindcv resnet18, 10 classes)."""
    return pretrained(checkout)


def _example(tmp_path: Path, source: Path, name: str, **network: object) -> Path:
    """The example, reading `source`, with network keys changed; written under tmp_path."""
    config = yaml.safe_load(EXAMPLE.read_text())
    config["network"]["checkpoint"]["path"] = str(source)
    for key, value in network.items():
        section, _, field = key.partition("__")
        config["network"][section][field] = value
    return _write(tmp_path, config, name)


def _load(path: Path) -> dict[str, np.ndarray]:
    import mindspore as ms

    return {name: p.asnumpy() for name, p in ms.load_checkpoint(str(path)).items()}


def _run(script: Path, workdir: Path, variant: str, *extra: str, steps: int = 3):
    return run_script(script, workdir, variant=variant, max_steps=steps, extra_args=extra, timeout=300)


@pytest.mark.slow
def test_example_finetunes_identically_and_keeps_frozen_weights(checkout, source_ckpt, tmp_path):
    """`mscodegen parity examples/resnet18_finetune.yaml` as shipped (it compares every step and the final
    weights); the weights it kept are checked against the file the example starts from."""
    shipped_parity(checkout, "resnet18_finetune", "--steps", "3", "--keep", str(tmp_path / "kept"))
    source = _load(source_ckpt)
    runs = kept_runs(tmp_path / "kept")
    final = {run.variant: (run, _load(tmp_path / "kept" / run.variant / "weights.ckpt")) for run in runs}
    (model, model_w), (native, native_w) = final["model"], final["native"]
    assert len(model.steps) == 3
    assert step_differences(model.steps, native.steps) == []
    assert all(np.array_equal(model_w[name], native_w[name]) for name in model_w)
    # Frozen trainable parameters are exactly the file's (loaded, then not trained) ...
    for name in ("conv1.weight", "bn1.gamma", "bn1.beta"):
        assert np.array_equal(model_w[name], source[name]), name
    # ... the stages (lr_scale 0.1) trained, and moved less than the head would at the full LR
    for name in ("layer1.0.conv1.weight", "layer4.1.bn2.beta"):
        assert not np.array_equal(model_w[name], source[name]), name
    # the LR the optimizer applies to each trainable parameter, in order: the stages at lr_scale 0.1
    # (order_params keeps the network's order), then the head's weight and bias at the full LR
    lrs = model.steps[0]["lr"]
    assert len(lrs) == 59 and lrs == pytest.approx([0.005] * 57 + [0.05] * 2)
    # ... the new head has 5 classes and trained: it differs from a run's with it frozen too
    assert model_w["classifier.weight"].shape == (5, 512)
    patterns = ["conv1.*", "bn1.*", "layer*", "classifier.weight"]  # the optimizer needs one parameter
    all_frozen = _example(tmp_path, source_ckpt, "all_frozen", freeze__patterns=patterns)
    frozen_scripts = generate_both(all_frozen, tmp_path / "lr0")
    untrained = tmp_path / "untrained.ckpt"
    result = _run(
        frozen_scripts["native"], tmp_path / "lr0run", "native", "--save-weights", str(untrained), steps=1
    )
    assert result.returncode == 0, result.log_tail
    initial = _load(untrained)
    assert not np.array_equal(model_w["classifier.weight"], initial["classifier.weight"])
    assert np.array_equal(initial["layer2.0.conv1.weight"], source["layer2.0.conv1.weight"])


@pytest.mark.slow
def test_strict_load_names_the_mismatching_parameter(source_ckpt, tmp_path):
    config = _example(tmp_path, source_ckpt, "strict", checkpoint__skip=[])
    scripts = generate_both(config, tmp_path / "scripts")
    proc = subprocess.run(
        [sys.executable, str(scripts["native"]), "--fast-dev-run"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode != 0
    assert "classifier.weight: (10, 512) in the file, (5, 512) in the network" in proc.stderr
    assert "classifier.bias: (10,) in the file, (5,) in the network" in proc.stderr
    key, cause = map_failure(proc.stderr, load_config(config))  # validate --run blames the key
    assert key == ("network", "checkpoint")
    assert "classifier.weight" in cause


@pytest.mark.slow
def test_not_strict_loads_what_matches_and_reports_the_rest(source_ckpt, tmp_path):
    config = _example(
        tmp_path, source_ckpt, "lenient", checkpoint__skip=["layer4.1.*"], checkpoint__strict=False
    )
    scripts = generate_both(config, tmp_path / "scripts")
    proc = subprocess.run(
        [sys.executable, str(scripts["model"]), "--fast-dev-run"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "loaded 90 parameters" in proc.stdout  # 102 - 10 in layer4.1 - the 2 of the head
    assert "skipped (10): layer4.1.conv1.weight" in proc.stdout
    assert "left initialised (2): classifier.weight, classifier.bias" in proc.stdout
