"""mscodegen.run.weights: final-weights comparison on small .ckpt files written by MindSpore itself."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from mscodegen.run.weights import CheckpointError, compare_arrays, compare_checkpoints

# Run in a child: the test process never imports MindSpore (as mscodegen itself).
WRITE_CKPTS = textwrap.dedent(
    """
    import sys
    import numpy as np
    import mindspore as ms

    def save(path, params):
        ms.save_checkpoint([{"name": n, "data": ms.Tensor(v)} for n, v in params.items()], path)

    out = sys.argv[1]
    w = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
    b = np.array([0.5, -0.25], dtype=np.float32)
    base = {"fc.weight": w, "fc.bias": b}
    save(f"{out}/a.ckpt", base)
    save(f"{out}/same.ckpt", {"fc.weight": w.copy(), "fc.bias": b.copy()})
    w2 = w.copy()
    w2[1, 2] += 0.5
    save(f"{out}/one_value.ckpt", {"fc.weight": w2, "fc.bias": b})
    save(f"{out}/no_bias.ckpt", {"fc.weight": w})
    save(f"{out}/extra.ckpt", {**base, "fc.scale": np.ones(2, np.float32)})
    save(f"{out}/shape.ckpt", {"fc.weight": w.reshape(3, 2), "fc.bias": b})
    save(f"{out}/dtype.ckpt", {"fc.weight": w.astype(np.float16), "fc.bias": b})
    """
)


@pytest.fixture(scope="module")
def ckpts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ckpts")
    proc = subprocess.run([sys.executable, "-c", WRITE_CKPTS, str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.mark.slow  # MindSpore writes and reads the checkpoints (a child each)
def test_equal_checkpoints(ckpts: Path) -> None:
    assert compare_checkpoints(ckpts / "a.ckpt", ckpts / "same.ckpt") == []
    assert compare_checkpoints(ckpts / "a.ckpt", ckpts / "a.ckpt") == []


@pytest.mark.slow  # MindSpore writes and reads the checkpoints (a child each)
def test_one_differing_value_names_the_parameter_and_max_abs_difference(ckpts: Path) -> None:
    assert compare_checkpoints(ckpts / "a.ckpt", ckpts / "one_value.ckpt") == [
        "parameter fc.weight: max |model - native| = 0.5 (1 of 6 values differ)"
    ]


@pytest.mark.slow  # MindSpore writes and reads the checkpoints (a child each)
def test_missing_and_extra_parameters(ckpts: Path) -> None:
    assert compare_checkpoints(ckpts / "a.ckpt", ckpts / "no_bias.ckpt") == [
        "parameter fc.bias: only in model"
    ]
    assert compare_checkpoints(ckpts / "a.ckpt", ckpts / "extra.ckpt") == [
        "parameter fc.scale: only in native"
    ]
    assert compare_checkpoints(ckpts / "a.ckpt", ckpts / "no_bias.ckpt", labels=("left", "right")) == [
        "parameter fc.bias: only in left"
    ]


@pytest.mark.slow  # MindSpore writes and reads the checkpoints (a child each)
def test_shape_and_dtype_differences(ckpts: Path) -> None:
    assert compare_checkpoints(ckpts / "a.ckpt", ckpts / "shape.ckpt") == [
        "parameter fc.weight: shape [2, 3] (model) != [3, 2] (native)"
    ]
    assert compare_checkpoints(ckpts / "a.ckpt", ckpts / "dtype.ckpt") == [
        "parameter fc.weight: dtype float32 (model) != float16 (native)"
    ]


@pytest.mark.slow  # MindSpore writes and reads the checkpoints (a child each)
def test_unreadable_checkpoints_raise(ckpts: Path, tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="no checkpoint at"):
        compare_checkpoints(ckpts / "a.ckpt", tmp_path / "nowhere.ckpt")
    broken = tmp_path / "broken.ckpt"
    broken.write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match="cannot compare"):
        compare_checkpoints(ckpts / "a.ckpt", broken)


def test_compare_arrays_nan_and_signed_zero() -> None:
    a = {"w": np.array([np.nan, 0.0, 1.0], np.float32)}
    assert compare_arrays(a, {"w": np.array([np.nan, -0.0, 1.0], np.float32)}) == []
    assert compare_arrays(a, {"w": np.array([2.0, 0.0, 1.0], np.float32)}) == [
        "parameter w: max |model - native| = nan (1 of 3 values differ)"
    ]
    ints = {"step": np.array([3], np.int32)}
    assert compare_arrays(ints, {"step": np.array([5], np.int32)}) == [
        "parameter step: max |model - native| = 2 (1 of 1 values differ)"
    ]
