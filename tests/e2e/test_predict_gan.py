"""predict.py of a GAN config (dcgan_digits): the seeded sample grid, the generator's export, bad checkpoints.

One module fixture generates the example, trains it 3 steps (--save-weights, and the training checkpoint
the run leaves), then runs every predict.py command of the tests, two at a time, and a probe that
computes the generator's outputs without predict.py: the class imported from train_model.py, built and
loaded by hand, the MINDIR loaded with nn.GraphCell.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from mscodegen.config.load import load_config
from mscodegen.output.generate import generate

from conftest import REPO

pytestmark = pytest.mark.slow

EXAMPLE = REPO / "examples" / "dcgan_digits.yaml"
SIDE, BORDER = 32, 1  # the example's images (gan.generator.network.image_size), the grid's border
STEPS = 3

# predict.py's commands, run once each by the fixture: {name: arguments}
RUNS = {
    "seed5": ["--checkpoint", "w.ckpt", "--samples", "6", "--columns", "4", "--seed", "5", "--grid", "a.png",
              "--export", "g.mindir", "--batch", "3"],
    "seed5_again": ["--checkpoint", "w.ckpt", "--samples", "6", "--columns", "4", "--seed", "5", "--grid", "b.png"],
    "seed6_latest": ["--checkpoint", "latest", "--output-dir", "out", "--samples", "6", "--columns", "4",
                     "--seed", "6", "--grid", "c.png", "--export", "g.onnx"],
    "defaults": ["--checkpoint", "w.ckpt"],
    "defaults_latest": ["--checkpoint", "latest", "--output-dir", "out", "--grid", "latest.png"],
    "missing": ["--checkpoint", "nowhere.ckpt"],
    "damaged": ["--checkpoint", "damaged.ckpt"],
    "lenet": ["--checkpoint", "lenet.ckpt"],
    "other_config": ["--checkpoint", "training.ckpt"],  # run by the other config's predict.py
}  # fmt: skip

# Without predict.py: the generator as the test builds it from train_model.py's class, w.ckpt loaded
# into it; its images for seed 5 (6 latent vectors), and the MINDIR against it on a latent batch of 3.
PROBE = """
import mindspore as ms, numpy as np
from mindspore import nn
from train_model import Generator  # python -c: the current folder is on sys.path
ms.set_context(mode=ms.GRAPH_MODE)
generator = Generator(100, features=32, channels=1)
generator.update_parameters_name("generator.")
missing, _ = ms.load_param_into_net(generator, ms.load_checkpoint("w.ckpt"), strict_load=True)
assert not missing, missing
generator.set_train(False)
noise = np.random.default_rng(5).standard_normal((6, 100, 1, 1), dtype=np.float32)
latent = np.random.default_rng(1).standard_normal((3, 100, 1, 1), dtype=np.float32)
exported = nn.GraphCell(ms.load("g.mindir"))
np.savez(
    "probe.npz",
    images=generator(ms.Tensor(noise)).asnumpy(),
    eager=generator(ms.Tensor(latent)).asnumpy(),
    mindir=exported(ms.Tensor(latent)).asnumpy(),
)
"""


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ONEDNN_MAX_CPU_ISA": "AVX2"}
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def _probe(seed5: Future[subprocess.CompletedProcess[str]], here: Path) -> subprocess.CompletedProcess[str]:
    seed5.result()  # g.mindir written
    return _run(["-c", PROBE], here)


def _write(files: dict[str, str], out: Path) -> None:
    out.mkdir(parents=True)
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def runs(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, dict[str, subprocess.CompletedProcess[str]]]:
    """(the generated folder, {RUNS name: predict.py's result, "probe": the probe's})."""
    root = tmp_path_factory.mktemp("predict_gan")
    here, other, lenet = root / "dcgan", root / "other", root / "lenet"
    _write(generate(load_config(EXAMPLE), here), here)
    # the same example with another epochs: another config (CONFIG_SHA256), the same generator
    _write(generate(load_config(EXAMPLE, ["train.epochs=11"]), other), other)
    _write(generate(load_config(REPO / "examples" / "lenet_digits.yaml"), lenet), lenet)
    train = ["train_model.py", "--epochs", "1", "--output-dir", "out", "--max-steps"]
    with ThreadPoolExecutor(2) as pool:  # lenet's weights: another network's file
        done = list(
            pool.map(
                _run,
                [
                    [*train, str(STEPS), "--save-weights", "w.ckpt"],
                    [*train, "1", "--save-weights", "lenet.ckpt"],
                ],
                [here, lenet],
            )
        )
    for result in done:
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    (here / "lenet.ckpt").write_bytes((lenet / "lenet.ckpt").read_bytes())
    (here / "damaged.ckpt").write_bytes((here / "w.ckpt").read_bytes()[:5000])
    [checkpoint] = (here / "out" / "checkpoints").glob(f"*/dcgan-1_{STEPS}.ckpt")
    (other / "training.ckpt").write_bytes(checkpoint.read_bytes())
    with ThreadPoolExecutor(2) as pool:
        futures = {
            name: pool.submit(_run, ["predict.py", *args], other if name == "other_config" else here)
            for name, args in RUNS.items()
        }
        probe = pool.submit(_probe, futures["seed5"], here)  # last in the queue
        results = {name: future.result() for name, future in futures.items()}
        results["probe"] = probe.result()
    return here, results


def _ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return result.stdout


def _grid(path: Path) -> np.ndarray:
    image = Image.open(path)
    assert image.mode == "L"  # one channel, as the digits
    return np.asarray(image)


def _tiles(grid: np.ndarray, count: int, columns: int) -> np.ndarray:
    """The grid's images, row by row, without their borders."""
    step, tiles = SIDE + 2 * BORDER, []
    for k in range(count):
        top, left = k // columns * step + BORDER, k % columns * step + BORDER
        tiles.append(grid[top : top + SIDE, left : left + SIDE])
    return np.stack(tiles)


def test_the_grid_has_rows_of_columns_images(runs) -> None:
    here, results = runs
    assert "wrote a.png (6 images, 2 rows of 4)" in _ok(results["seed5"])
    step = SIDE + 2 * BORDER
    assert _grid(here / "a.png").shape == (2 * step, 4 * step)
    assert _grid(here / "samples.png").shape == (8 * step, 8 * step)  # gan.samples: 64 in 8 columns


def test_one_seed_one_grid_another_seed_another(runs) -> None:
    here, results = runs
    for name in ("seed5", "seed5_again", "seed6_latest"):
        _ok(results[name])
    assert (here / "a.png").read_bytes() == (here / "b.png").read_bytes()
    a, c = _tiles(_grid(here / "a.png"), 6, 4), _tiles(_grid(here / "c.png"), 6, 4)
    assert all((a[k] != c[k]).any() for k in range(6))  # seed 6: every image another


def test_the_grid_holds_the_generators_images(runs) -> None:
    """The images predict.py wrote are the generator's, computed by the probe without predict.py."""
    here, results = runs
    _ok(results["seed5"])
    _ok(results["probe"])
    images = np.load(here / "probe.npz")["images"]  # (6, 1, 32, 32) in [-1, 1]
    assert images.shape == (6, 1, SIDE, SIDE) and images.std() > 0
    expected = np.clip((images[:, 0] + 1) * 127.5, 0, 255).astype(np.uint8)
    np.testing.assert_array_equal(_tiles(_grid(here / "a.png"), 6, 4), expected)


def test_the_defaults_redraw_trainings_last_grid(runs) -> None:
    """gan.samples' seed and count by default: the grid training wrote after its last step, pixel for
    pixel (training draws and writes it with its own code, in train_model.py)."""
    here, results = runs
    assert "weights from w.ckpt" in _ok(results["defaults"])
    np.testing.assert_array_equal(
        _grid(here / "samples.png"), _grid(here / "out" / "samples" / "epoch_001.png")
    )


def test_the_training_checkpoint_gives_the_save_weights_images(runs) -> None:
    """latest: the run's training checkpoint (the train step's parameters), saved at the step
    --save-weights saved: the same grid."""
    here, results = runs
    assert f"dcgan-1_{STEPS}.ckpt" in _ok(results["defaults_latest"]).splitlines()[0]
    _ok(results["defaults"])
    assert (here / "latest.png").read_bytes() == (here / "samples.png").read_bytes()


def test_the_mindir_equals_the_eager_generator(runs) -> None:
    here, results = runs
    assert "wrote g.mindir (MINDIR, input (3, 100, 1, 1))" in _ok(results["seed5"])
    _ok(results["probe"])
    probe = np.load(here / "probe.npz")
    assert probe["eager"].shape == (3, 1, SIDE, SIDE)
    np.testing.assert_array_equal(probe["mindir"], probe["eager"])  # measured: equal, bit for bit


def test_onnx_export_writes_the_generator(runs) -> None:
    """MindSpore 2.10 exports the generator's ops (Conv2dTranspose included) to ONNX."""
    here, results = runs
    assert "wrote g.onnx (ONNX, input (1, 100, 1, 1))" in _ok(results["seed6_latest"])
    # it holds the generator's 370,048 float32 parameters (convolutions, BatchNorm's four per channel)
    assert (here / "g.onnx").stat().st_size > 370_048 * 4


@pytest.mark.parametrize(
    ("run", "message"),
    [
        ("missing", "error: --checkpoint nowhere.ckpt: no such file"),
        ("damaged", "error: --checkpoint damaged.ckpt: damaged, or not a MindSpore checkpoint"),
        (
            "lenet",
            "error: --checkpoint lenet.ckpt: 16 of the generator's 16 parameters missing "
            "(generator.layers.0.weight, ...): another network's?",
        ),
        ("other_config", "error: --checkpoint training.ckpt: written by another config's training"),
    ],
)
def test_a_bad_checkpoint_is_one_line(runs, run: str, message: str) -> None:
    _, results = runs
    result = results[run]
    lines = [line for line in result.stderr.splitlines() if not line.startswith("[WARNING]")]
    assert (result.returncode, lines, result.stdout) == (1, [message], "")
