"""Compare two MindSpore checkpoints tensor by tensor (parity's final-weights check).

:func:`compare_checkpoints` loads the files in a child process (``python -m mscodegen.run.weights A B``),
so that mscodegen itself never imports MindSpore. Equal means: the same parameter names, and for
each the same dtype, the same shape and equal values (``==`` element-wise; NaN equals NaN).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

    import numpy as np

    Array = np.ndarray[Any, Any]

LABELS = ("model", "native")


class CheckpointError(Exception):
    """A checkpoint could not be loaded (missing, corrupt, or MindSpore not importable)."""


def compare_arrays(
    a: Mapping[str, Array], b: Mapping[str, Array], labels: Sequence[str] = LABELS
) -> list[str]:
    """Differences between two {name: array} dicts, in `a`'s order then `b`'s extra names; [] if equal.

    Each value difference names the parameter and its max absolute difference.
    """
    import numpy as np

    la, lb = labels
    problems = []
    for name, x in a.items():
        if name not in b:
            problems.append(f"parameter {name}: only in {la}")
            continue
        y = b[name]
        if x.dtype != y.dtype:
            problems.append(f"parameter {name}: dtype {x.dtype} ({la}) != {y.dtype} ({lb})")
        elif x.shape != y.shape:
            problems.append(f"parameter {name}: shape {list(x.shape)} ({la}) != {list(y.shape)} ({lb})")
        else:
            same = (x == y) | (np.isnan(x) & np.isnan(y)) if x.dtype.kind == "f" else x == y
            if same.all():
                continue
            diff = np.abs(x.astype(np.float64) - y.astype(np.float64))[~same]
            worst = float("nan") if np.isnan(diff).all() else float(np.nanmax(diff))
            count = same.size - int(np.count_nonzero(same))
            problems.append(
                f"parameter {name}: max |{la} - {lb}| = {worst:.6g} ({count} of {same.size} values differ)"
            )
    problems += [f"parameter {name}: only in {lb}" for name in b if name not in a]
    return problems


def compare_checkpoints(
    a: Path, b: Path, *, labels: Sequence[str] = LABELS, python: str = sys.executable, timeout: float = 300
) -> list[str]:
    """Differences between checkpoint files `a` and `b` ([] when every tensor is equal).

    Raises :class:`CheckpointError` if either cannot be loaded.
    """
    for path in (a, b):
        if not Path(path).is_file():
            raise CheckpointError(f"no checkpoint at {path}")
    env = dict(os.environ)
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
    cmd = [python, "-m", "mscodegen.run.weights", str(a), str(b), *labels]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout, check=False)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
        raise CheckpointError(f"cannot compare {a} and {b}:\n{tail}")
    problems = json.loads(proc.stdout.strip().splitlines()[-1])
    assert isinstance(problems, list)
    return [str(p) for p in problems]


def load_arrays(path: str) -> dict[str, Array]:
    """A checkpoint's {name: numpy array} (in a process that may import MindSpore)."""
    import mindspore as ms

    return {name: param.asnumpy() for name, param in ms.load_checkpoint(path).items()}


def _main(argv: Sequence[str]) -> int:
    """Child process: load both checkpoints, print the JSON list of differences as the last line."""
    a, b, *labels = argv
    print(json.dumps(compare_arrays(load_arrays(a), load_arrays(b), labels or LABELS)))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
