"""`mscodegen validate --run`: failures of the one-batch run mapped back to the YAML key.

The unit tests map texts captured from today's generated scripts (tests/preflight_texts/README.txt says
how). The end-to-end tests run MindSpore and need the scripts' `--fast-dev-run`.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mscodegen.cli import main
from mscodegen.config.load import LoadedConfig, load_config
from mscodegen.run.preflight import RunResult, diagnose, exception_line, map_failure, run_preflight

from conftest import REPO

TEXTS = REPO / "tests" / "preflight_texts"

# The config the texts were captured with (an imported dataset next to it), positions below.
CONFIG = """\
network:
  kind: builtin
  name: lenet5
  num_classes: 10
  input_shape: [1, 32, 32]
data:
  train:
    kind: import
    factory: mydata:make_data
    batch_size: 16
  eval:
    kind: import
    factory: mydata:make_data
    batch_size: 16
optimizer:
  name: momentum
"""


def factory(images: str, labels: str, columns: str = '{"image": images, "label": labels}') -> str:
    return f"""\
import numpy as np
from mindspore import dataset as ds


def make_data(num=64):
    rng = np.random.default_rng(0)
    images = rng.random({images}, dtype=np.float32)
    labels = {labels}
    return ds.NumpySlicesDataset({columns}, shuffle=False)
"""


# More configs of captured texts (tests/preflight_texts/capture.py runs them).
NETKWARG_CONFIG = CONFIG.replace(
    "  kind: builtin\n  name: lenet5\n  num_classes: 10\n  input_shape: [1, 32, 32]\n",
    "  kind: mindcv\n  name: resnet18\n  num_classes: 10\n  kwargs: {drop_rat: 0.1}\n",
)
BROKEN_METRIC = """

class Broken(nn.Metric):
    def clear(self):
        pass

    def update(self, *inputs):
        raise ValueError("the metric cannot take these outputs")

    def eval(self):
        return 0.0
""".replace("class Broken", "from mindspore import nn\n\n\nclass Broken")
METRIC_CONFIG = CONFIG + "eval:\n  metrics:\n  - {name: import, class: 'mydata:Broken', key: broken}\n"
SOFT_LOSS = """

def soft_loss():
    from mindspore import nn

    return nn.BCEWithLogitsLoss()
"""
ACCURACY_CONFIG = CONFIG + (
    "loss: {kind: import, path: 'mydata:soft_loss'}\neval:\n  metrics: [{name: accuracy}, {name: loss}]\n"
)
WORKERS_CONFIG = CONFIG.replace(
    "    factory: mydata:make_data\n    batch_size: 16\n  eval",
    "    factory: mydata:make_data\n    batch_size: 16\n    num_workers: 64\n"
    "    transforms: {image: [{HWC2CHW: {}}]}\n  eval",
)

# issue 35: failures that were reported at <root> (tests/preflight_texts/README.txt)
ONE_HOT = "np.eye(10, dtype=np.float32)[np.arange(num) % 10]"
MSE_CONFIG = CONFIG + "loss: {name: MSELoss}\n"
NOT_A_CELL = """

def not_a_cell(num_classes=10):
    return "a network"
"""
NET_RETURNS_CONFIG = CONFIG.replace(
    "  kind: builtin\n  name: lenet5\n  num_classes: 10\n  input_shape: [1, 32, 32]\n",
    "  kind: import\n  factory: mydata:not_a_cell\n",
)
SAMPLES_LIST = """

def sample_list(num=64):
    return [(np.zeros((1, 32, 32), np.float32), np.int32(0))] * num
"""
DATA_RETURNS_CONFIG = CONFIG.replace(
    "  train:\n    kind: import\n    factory: mydata:make_data",
    "  train:\n    kind: import\n    factory: mydata:sample_list",
)


@pytest.fixture
def loaded(tmp_path: Path) -> LoadedConfig:
    (tmp_path / "mydata.py").write_text(factory("(num, 1, 32, 32)", "np.zeros(num, np.int32)"))
    (tmp_path / "cfg.yaml").write_text(CONFIG)
    return load_config(tmp_path / "cfg.yaml")


def captured(name: str) -> str:
    return (TEXTS / name).read_text(encoding="utf-8")


def located(result: RunResult, loaded: LoadedConfig) -> tuple[str, int | None, int | None, str]:
    problem = diagnose(result, loaded)
    assert problem is not None
    return problem.path, problem.line, problem.column, problem.message


@pytest.mark.parametrize("variant", ["model", "native"])
def test_matmul_mismatch_maps_to_input_shape(loaded: LoadedConfig, variant: str) -> None:
    stderr = captured(f"shape_{variant}.stderr.txt")
    key, line, column, message = located(RunResult(variant, 1, "", stderr), loaded)
    assert (key, line, column) == ("network.input_shape", 5, 16)
    assert "For 'MatMul' the input dimensions must be equal" in message
    assert message.startswith(
        f"train_{variant}.py --fast-dev-run failed: the network cannot take data.train's"
    )


@pytest.mark.parametrize("variant", ["model", "native"])
def test_conv_channel_mismatch_maps_to_input_shape(loaded: LoadedConfig, variant: str) -> None:
    stderr = captured(f"chan_{variant}.stderr.txt")
    key, line, column, message = located(RunResult(variant, 1, "", stderr), loaded)
    assert (key, line, column) == ("network.input_shape", 5, 16)
    assert "For 'Conv2D', 'C_in' of input 'x'" in message


def test_shape_mismatch_without_input_shape_maps_to_the_factory(tmp_path: Path) -> None:
    (tmp_path / "mydata.py").write_text("def make_data():\n    pass\n")
    (tmp_path / "nets.py").write_text("def Net():\n    pass\n")
    text = CONFIG.replace(
        "  kind: builtin\n  name: lenet5\n  num_classes: 10\n  input_shape: [1, 32, 32]\n", ""
    )
    text = text.replace("network:\n", "network: {kind: import, factory: 'nets:Net'}\n")
    (tmp_path / "cfg.yaml").write_text(text)
    cfg = load_config(tmp_path / "cfg.yaml")
    key, stated = map_failure(captured("shape_native.stderr.txt"), cfg)
    assert key == ("data", "train", "factory")
    assert "the images data.train.factory yields" in stated


@pytest.mark.parametrize("variant", ["model", "native"])
def test_eval_only_shape_mismatch_maps_to_the_eval_factory(loaded: LoadedConfig, variant: str) -> None:
    """Captured with the real --fast-dev-run: the train batch passed, the eval batch did not."""
    stderr = captured(f"evalshape_{variant}.stderr.txt")
    key, line, column, message = located(RunResult(variant, 1, "", stderr), loaded)
    assert (key, line, column) == ("data.eval.factory", 13, 14)
    assert "the network cannot take data.eval's images" in message
    assert "For 'MatMul' the input dimensions must be equal" in message


@pytest.mark.parametrize("variant", ["model", "native"])
def test_zero_steps_maps_to_the_batch_size(loaded: LoadedConfig, variant: str) -> None:
    """Captured with the real --fast-dev-run: a factory of 8 samples, batches of 16, drop_remainder."""
    stderr = captured(f"empty_{variant}.stderr.txt")
    key, line, column, message = located(RunResult(variant, 1, "", stderr), loaded)
    assert (key, line, column) == ("data.train.batch_size", 10, 17)
    assert "trained 0 steps: data.train yields no batch" in message


@pytest.mark.parametrize("variant", ["model", "native"])
def test_label_out_of_range_maps_to_num_classes(loaded: LoadedConfig, variant: str) -> None:
    stderr = captured(f"labels_{variant}.stderr.txt")
    key, line, column, message = located(RunResult(variant, 1, "", stderr), loaded)
    assert (key, line, column) == ("network.num_classes", 4, 16)
    assert "got error label! label[index] must <= class_num" in message


@pytest.mark.parametrize(
    ("returncode", "stdout", "stderr"),
    [
        (1, "", "error: step 1: loss inf; lower optimizer.lr or set grad.clip\n"),  # the scripts' guard
        (0, "Eval result: epoch 1, metrics: {'loss': inf}\n", ""),
    ],
)
def test_a_non_finite_loss_after_one_batch_maps_to_num_classes(
    loaded: LoadedConfig, returncode: int, stdout: str, stderr: str
) -> None:
    """A label equal to num_classes can give an inf loss on CPU without an error (constructed text)."""
    key, line, column, message = located(RunResult("native", returncode, stdout, stderr), loaded)
    assert (key, line, column) == ("network.num_classes", 4, 16)
    assert "the loss is not finite after one batch" in message


@pytest.mark.parametrize("variant", ["model", "native"])
def test_label_equal_to_num_classes_with_a_finite_garbage_loss_is_not_seen(
    loaded: LoadedConfig, variant: str
) -> None:
    """The limit of --run: the out-of-bounds read gave finite losses here (train 2.19, eval 2.27)."""
    stdout = captured(f"label_equals_classes_{variant}.stdout.txt")
    assert "fast-dev-run: step 1 trained" in stdout and "'accuracy': 0.0" in stdout
    assert diagnose(RunResult(variant, 0, stdout, ""), loaded) is None


@pytest.mark.parametrize(
    ("variant", "error"),
    [
        ("model", "'train_dataset' should return two elements, but got 3"),
        ("native", "too many values to unpack (expected 2)"),
    ],
)
def test_column_count_maps_to_the_dataset(loaded: LoadedConfig, variant: str, error: str) -> None:
    stderr = captured(f"cols_{variant}.stderr.txt")
    key, line, column, message = located(RunResult(variant, 1, "", stderr), loaded)
    assert (key, line, column) == ("data.train", 8, 5)
    assert error in message


@pytest.mark.parametrize("variant", ["model", "native"])
def test_failing_factory_import_maps_to_that_factory(loaded: LoadedConfig, variant: str) -> None:
    stderr = captured(f"imp_{variant}.stderr.txt")
    key, line, column, message = located(RunResult(variant, 1, "", stderr), loaded)
    assert (key, line, column) == ("data.train.factory", 9, 14)
    assert "ModuleNotFoundError: No module named 'not_installed_pkg'" in message


@pytest.mark.parametrize("variant", ["model", "native"])
def test_misspelled_factory_kwarg_maps_to_that_kwarg(tmp_path: Path, variant: str) -> None:
    """data.eval.kwargs {sise: 16}, raised in create_eval_dataset."""
    # assigned, not defined: its signature is not read statically (validate cannot see the typo)
    (tmp_path / "mydata.py").write_text("def _make(num=64, size=32):\n    pass\n\n\nmake_data = _make\n")
    text = CONFIG.replace(
        "    factory: mydata:make_data\n    batch_size: 16\noptimizer",
        "    factory: mydata:make_data\n    kwargs: {sise: 16}\n    batch_size: 16\noptimizer",
    )
    (tmp_path / "cfg.yaml").write_text(text)
    cfg = load_config(tmp_path / "cfg.yaml")
    stderr = captured(f"kwarg_{variant}.stderr.txt")
    key, line, column, message = located(RunResult(variant, 1, "", stderr), cfg)
    assert (key, line, column) == ("data.eval.kwargs.sise", 14, 20)
    assert "calling it failed: TypeError: _make() got an unexpected keyword argument 'sise'" in message


def test_attribute_error_in_build_network_maps_to_network_factory(tmp_path: Path) -> None:
    (tmp_path / "mydata.py").write_text("def make_data():\n    pass\n")
    (tmp_path / "nets.py").write_text("def Net():\n    pass\n")
    text = CONFIG.replace(
        "  kind: builtin\n  name: lenet5\n  num_classes: 10\n  input_shape: [1, 32, 32]\n", ""
    )
    text = text.replace("network:\n", "network: {kind: import, factory: 'nets:Net'}\n")
    (tmp_path / "cfg.yaml").write_text(text)
    cfg = load_config(tmp_path / "cfg.yaml")
    stderr = (
        "Traceback (most recent call last):\n"
        '  File "/tmp/x/train_native.py", line 300, in main\n'
        '  File "/tmp/x/train_native.py", line 80, in build_network\n'
        "    network = Net()\n"
        '  File "/cfg/nets.py", line 2, in Net\n'
        "AttributeError: module 'mindspore.nn' has no attribute 'Conv3x3'\n"
    )
    assert map_failure(stderr, cfg)[0] == ("network", "factory")


def test_missing_mindspore_is_named(loaded: LoadedConfig) -> None:
    stderr = (
        "Traceback (most recent call last):\n"
        '  File "/tmp/x/train_model.py", line 70, in <module>\n'
        "    import mindspore as ms\n"
        "ModuleNotFoundError: No module named 'mindspore'\n"
    )
    problem = diagnose(RunResult("model", 1, "", stderr), loaded)
    assert problem is not None and (problem.path, problem.line) == ("", None)
    assert "the scripts need mindspore" in problem.message and "pip install -e '.[run]'" in problem.message


def test_unmapped_failure_keeps_the_last_lines(loaded: LoadedConfig) -> None:
    stderr = '[WARNING] noise\nTraceback (most recent call last):\n  File "x.py", line 1, in <module>\nOSError: disk full\n'
    problem = diagnose(RunResult("native", 1, "", stderr), loaded)
    assert problem is not None and (problem.path, problem.line) == ("", None)
    assert "OSError: disk full; last lines:" in problem.message
    assert "[WARNING]" not in problem.message


def test_a_script_without_the_flag_says_so(loaded: LoadedConfig) -> None:
    stderr = "usage: train_model.py [-h]\ntrain_model.py: error: unrecognized arguments: --fast-dev-run\n"
    problem = diagnose(RunResult("model", 2, "", stderr), loaded)
    assert problem is not None and "has no --fast-dev-run option" in problem.message


def test_passing_run_needs_a_trained_step(loaded: LoadedConfig) -> None:
    ok = "Eval result: epoch 1, metrics: {'loss': 2.3}\n"
    assert diagnose(RunResult("model", 0, ok, "", steps=1), loaded) is None
    problem = diagnose(RunResult("model", 0, "Train epoch time: 3 ms\n", "", steps=0), loaded)
    assert problem is not None and "exited 0 without training a step" in problem.message


def test_timeout(loaded: LoadedConfig) -> None:
    problem = diagnose(RunResult("native", None, "", ""), loaded)
    assert problem is not None and "did not finish one batch in time" in problem.message


def test_exception_line_is_the_last_one() -> None:
    assert exception_line(captured("shape_native.stderr.txt")).startswith("ValueError: For 'MatMul'")
    assert exception_line(captured("chan_model.stderr.txt")).startswith("RuntimeError: For 'Conv2D'")


def test_preflight_writes_only_into_a_temporary_directory(
    loaded: LoadedConfig,
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With a stand-in python that records where it ran: nothing lands next to the config or in cwd."""
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    bin_dir = tmp_path_factory.mktemp("bin")
    fake = bin_dir / "fake_python.py"
    fake.write_text(
        "import os, sys\n"
        f"open({str(bin_dir / 'runs.txt')!r}, 'a').write(os.getcwd() + ' ' + ' '.join(sys.argv[1:]) + '\\n')\n"
        "open(os.path.join(os.environ['MSCODEGEN_OBSERVE'], 'loss.jsonl'), 'a').write('{}\\n')\n"
    )
    wrapper = bin_dir / "py.sh"
    wrapper.write_text(f'#!/bin/sh\nexec {sys.executable} {fake} "$@"\n')
    wrapper.chmod(0o755)
    assert run_preflight(loaded, python=str(wrapper)) == []
    runs = (bin_dir / "runs.txt").read_text().splitlines()
    assert [run.split()[1:3] for run in runs] == [
        ["train_model.py", "--fast-dev-run"],
        ["train_native.py", "--fast-dev-run"],
    ]
    workdir = Path(runs[0].split()[0])
    assert "mscodegen-preflight-" in workdir.name and not workdir.exists()  # removed afterwards
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_preflight_imports_mindspore_only_in_the_children(loaded: LoadedConfig, tmp_path: Path) -> None:
    """The parent generates and runs: with a stand-in child, mindspore must not be in its sys.modules."""
    fake = tmp_path / "fake_python.sh"
    fake.write_text("#!/bin/sh\necho '{}' >> \"$MSCODEGEN_OBSERVE/loss.jsonl\"\n")
    fake.chmod(0o755)
    code = (
        "import sys; from pathlib import Path; from mscodegen.config.load import load_config; "
        "from mscodegen.run.preflight import run_preflight; "
        f"assert run_preflight(load_config(Path({str(loaded.path)!r})), python={str(fake)!r}) == []; "
        "bad = [m for m in ('mindspore', 'mindcv') if m in sys.modules]; "
        "assert not bad, bad"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


# --- end to end: needs `--fast-dev-run` in the generated scripts -------------------------------------------

TEMPLATES = REPO / "templates"
needs_fast_dev_run = pytest.mark.skipif(
    not any("--fast-dev-run" in p.read_text(encoding="utf-8") for p in TEMPLATES.glob("*.j2")),
    reason="the templates have no --fast-dev-run yet (it comes with branch plan)",
)


def e2e_config(tmp_path: Path, images: str, labels: str) -> Path:
    (tmp_path / "mydata.py").write_text(factory(images, labels))
    (tmp_path / "cfg.yaml").write_text(CONFIG)
    return tmp_path / "cfg.yaml"


@pytest.mark.slow
@needs_fast_dev_run
def test_validate_run_catches_a_shape_mismatch_from_an_imported_dataset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = e2e_config(tmp_path, "(num, 1, 16, 16)", "rng.integers(0, 10, size=num).astype(np.int32)")
    assert main(["validate", str(config)]) == 0  # no static rule can see it
    capsys.readouterr()
    assert main(["validate", str(config), "--run", "--timeout", "300"]) == 2
    err = capsys.readouterr().err
    assert f"{config}:5:16: network.input_shape: " in err
    assert "For 'MatMul' the input dimensions must be equal" in err
    assert not (tmp_path / "generated").exists() and not (Path.cwd() / "generated" / "cfg").exists()


@pytest.mark.slow
@needs_fast_dev_run
def test_validate_run_catches_a_class_count_mismatch_from_an_imported_dataset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = e2e_config(tmp_path, "(num, 1, 32, 32)", "rng.integers(0, 100, size=num).astype(np.int32)")
    assert main(["validate", str(config), "--run", "--timeout", "300"]) == 2
    err = capsys.readouterr().err
    assert f"{config}:4:16: network.num_classes: " in err
    assert "got error label!" in err


@pytest.mark.slow
@needs_fast_dev_run
def test_validate_run_passes_a_good_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = e2e_config(tmp_path, "(num, 1, 32, 32)", "rng.integers(0, 10, size=num).astype(np.int32)")
    assert main(["validate", str(config), "--run", "--timeout", "300"]) == 0, capsys.readouterr().err
    assert "ok (both variants trained and evaluated one batch)" in capsys.readouterr().out


def test_validate_help_says_what_run_costs(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["validate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert (
        "--run" in text
        and "each variant imports MindSpore, compiles the network and trains one batch" in text
    )
    assert "temporary directory" in text and "the output directory is never touched" in text


def _loaded(tmp_path: Path, config: str, module: str) -> LoadedConfig:
    (tmp_path / "mydata.py").write_text(module)
    (tmp_path / "cfg.yaml").write_text(config)
    return load_config(tmp_path / "cfg.yaml")


@pytest.mark.parametrize("variant", ["model", "native"])
def test_a_misspelt_mindcv_kwarg_maps_to_that_kwarg(tmp_path: Path, variant: str) -> None:
    """network.kwargs {drop_rat: 0.1} of mindcv's resnet18: mindcv raises in create_model (issue 22)."""
    cfg = _loaded(tmp_path, NETKWARG_CONFIG, factory("(num, 3, 32, 32)", "np.zeros(num, np.int32)"))
    key, line, _, message = located(
        RunResult(variant, 1, "", captured(f"netkwarg_{variant}.stderr.txt")), cfg
    )
    assert (key, line) == ("network.kwargs.drop_rat", 5)
    assert "network takes no such keyword argument" in message and "'drop_rat'" in message


@pytest.mark.parametrize("variant", ["model", "native"])
def test_an_imported_metric_that_raises_maps_to_that_metric(tmp_path: Path, variant: str) -> None:
    """Its module also holds the dataset factory: the frame's function (update) tells them apart."""
    module = factory("(num, 1, 32, 32)", "np.zeros(num, np.int32)") + BROKEN_METRIC
    cfg = _loaded(tmp_path, METRIC_CONFIG, module)
    key, line, _, message = located(RunResult(variant, 1, "", captured(f"metric_{variant}.stderr.txt")), cfg)
    assert (key, line) == ("eval.metrics[0].class", 19)
    assert "the metric cannot take these outputs" in message


@pytest.mark.parametrize("variant", ["model", "native"])
def test_mindspores_metric_failing_maps_to_that_metric(tmp_path: Path, variant: str) -> None:
    """accuracy on float multi-label targets (an imported loss: no static rule knows its targets)."""
    module = factory("(num, 1, 32, 32)", "rng.random((num, 10), dtype=np.float32)") + SOFT_LOSS
    cfg = _loaded(tmp_path, ACCURACY_CONFIG, module)
    key, line, _, message = located(
        RunResult(variant, 1, "", captured(f"accuracy_{variant}.stderr.txt")), cfg
    )
    assert (key, line) == ("eval.metrics[0]", 19)
    assert "In classification case" in message


@pytest.mark.parametrize("variant", ["model", "native"])
def test_too_many_workers_map_to_num_workers(tmp_path: Path, variant: str) -> None:
    """A script edited past its cap (the generated one takes min(N, os.cpu_count()))."""
    cfg = _loaded(tmp_path, WORKERS_CONFIG, factory("(num, 32, 32, 1)", "np.zeros(num, np.int32)"))
    key, line, _, message = located(RunResult(variant, 1, "", captured(f"workers_{variant}.stderr.txt")), cfg)
    assert (key, line) == ("data.train.num_workers", 11)
    assert "at most this machine's CPU count" in message


# --- issue 35: failures that were reported at <root> --------------------------------------------------------

ZEROS = "np.zeros(num, np.int32)"


@pytest.mark.parametrize("variant", ["model", "native"])
def test_one_hot_labels_into_the_sparse_loss_map_to_the_loss(tmp_path: Path, variant: str) -> None:
    """Graph compilation fails inside MindSpore's loss module: the loss is named, with what it takes."""
    cfg = _loaded(tmp_path, CONFIG, factory("(num, 1, 32, 32)", ONE_HOT))
    key, line, _, message = located(RunResult(variant, 1, "", captured(f"onehot_{variant}.stderr.txt")), cfg)
    assert (key, line) == ("loss.name", 1)  # not written: the key is named, the file's first line given
    assert "SoftmaxCrossEntropyWithLogits takes one int32 class index per sample" in message
    assert "loss.kwargs.sparse: false: data.train's labels do not fit" in message
    assert "labels_type] must be a type of {Tensor[Int32], Tensor[Int64]}" in message


@pytest.mark.parametrize("variant", ["model", "native"])
def test_class_indices_into_a_regression_loss_map_to_the_loss_name(tmp_path: Path, variant: str) -> None:
    cfg = _loaded(tmp_path, MSE_CONFIG, factory("(num, 1, 32, 32)", ZEROS))
    key, line, column, message = located(
        RunResult(variant, 1, "", captured(f"mse_{variant}.stderr.txt")), cfg
    )
    assert (key, line, column) == ("loss.name", 17, 14)
    assert message.startswith(
        f"train_{variant}.py --fast-dev-run failed: MSELoss takes targets of the network"
    )
    assert "need to broadcast" in message and "[16, 10] and input2.shape = [16]" in message


@pytest.mark.parametrize("variant", ["model", "native"])
def test_a_network_factory_returning_no_cell_maps_to_it(tmp_path: Path, variant: str) -> None:
    cfg = _loaded(tmp_path, NET_RETURNS_CONFIG, factory("(num, 1, 32, 32)", ZEROS) + NOT_A_CELL)
    stderr = captured(f"netreturns_{variant}.stderr.txt")
    key, line, column, message = located(RunResult(variant, 1, "", stderr), cfg)
    assert (key, line, column) == ("network.factory", 3, 12)
    assert message.endswith(
        "it returned a str, not a mindspore.nn.Cell "
        "(AttributeError: 'str' object has no attribute 'trainable_params')"
    )


@pytest.mark.parametrize("variant", ["model", "native"])
def test_a_dataset_factory_returning_no_dataset_maps_to_it(tmp_path: Path, variant: str) -> None:
    cfg = _loaded(tmp_path, DATA_RETURNS_CONFIG, factory("(num, 1, 32, 32)", ZEROS) + SAMPLES_LIST)
    stderr = captured(f"datareturns_{variant}.stderr.txt")
    key, line, column, message = located(RunResult(variant, 1, "", stderr), cfg)
    assert (key, line, column) == ("data.train.factory", 9, 14)
    assert message.endswith(
        "it returned a list, not a mindspore.dataset.Dataset "
        "(AttributeError: 'list' object has no attribute 'shuffle')"
    )


def test_an_imported_loss_that_fails_to_compile_maps_to_its_path(tmp_path: Path) -> None:
    """Its own module is the innermost frame of graph compilation (constructed from the mse text)."""
    cfg = _loaded(tmp_path, ACCURACY_CONFIG, factory("(num, 1, 32, 32)", ZEROS) + SOFT_LOSS)
    stderr = captured("mse_native.stderr.txt").replace(
        "/mindspore/nn/loss/loss.py:398", f"/{tmp_path.name}/mydata.py:12", 1
    )
    key, stated = map_failure(stderr, cfg)
    assert key == ("loss", "path")
    assert stated.startswith("mydata:soft_loss cannot take data.train's labels with the network's output")


def test_a_compile_failure_in_a_module_of_both_the_network_and_the_loss_is_not_blamed_on_the_loss(
    tmp_path: Path,
) -> None:
    text = ACCURACY_CONFIG.replace(
        "  kind: builtin\n  name: lenet5\n  num_classes: 10\n  input_shape: [1, 32, 32]\n",
        "  kind: import\n  factory: mydata:not_a_cell\n",
    )
    cfg = _loaded(tmp_path, text, factory("(num, 1, 32, 32)", ZEROS) + SOFT_LOSS + NOT_A_CELL)
    stderr = captured("mse_native.stderr.txt").replace(
        "/mindspore/nn/loss/loss.py:398", f"/{tmp_path.name}/mydata.py:12", 1
    )
    assert map_failure(stderr, cfg)[0] != ("loss", "path")


def test_an_attribute_missing_on_something_else_is_not_blamed_on_a_factory(tmp_path: Path) -> None:
    cfg = _loaded(tmp_path, NET_RETURNS_CONFIG, factory("(num, 1, 32, 32)", ZEROS) + NOT_A_CELL)
    stderr = captured("netreturns_native.stderr.txt").replace("network.trainable_params()", "params()")
    assert map_failure(stderr, cfg)[0] == ()
