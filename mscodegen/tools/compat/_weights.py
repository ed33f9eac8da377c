"""Child process (an environment's interpreter): how far apart pairs of checkpoints are, read as JSON from stdin.

Prints one JSON line: for each pair, {"values", "differ", "max_ulps", "max_abs", "problems"}: how many
values there are, how many are not ==, the largest difference in ulps at its tensor's scale (see
scaled_ulps), the largest absolute difference, and structural problems (names, shapes, dtypes).
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

import numpy as np


def scaled_ulps(x: Any, y: Any) -> int:
    """The largest |x - y| of two float tensors, in ulps of the tensor's largest magnitude.

    Counted at each value itself, a weight near zero would make a 1e-9 difference millions of ulps; at
    the tensor's scale it reads as what it is, a change in the last bits of the tensor's numbers.
    """
    diff = float(np.nanmax(np.abs(x.astype(np.float64) - y.astype(np.float64))))
    scale = np.spacing(np.nanmax(np.abs(x)).astype(x.dtype))
    return math.ceil(diff / float(scale)) if diff else 0


def distance(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"values": 0, "differ": 0, "max_ulps": 0, "max_abs": 0.0, "problems": []}
    for name in sorted(set(a) | set(b)):
        if name not in a or name not in b:
            out["problems"].append(
                f"parameter {name} only in {'this version' if name in a else 'the reference'}"
            )
            continue
        x, y = a[name], b[name]
        if x.dtype != y.dtype or x.shape != y.shape:
            out["problems"].append(f"parameter {name}: {x.dtype}{list(x.shape)} != {y.dtype}{list(y.shape)}")
            continue
        same = (x == y) | (np.isnan(x) & np.isnan(y)) if x.dtype.kind == "f" else x == y
        out["values"] += int(same.size)
        out["differ"] += int(same.size - np.count_nonzero(same))
        if not same.all():
            out["max_abs"] = max(out["max_abs"], float(np.nanmax(np.abs(x.astype(np.float64) - y))))
            if x.dtype.kind == "f":
                out["max_ulps"] = max(out["max_ulps"], scaled_ulps(x, y))
    return out


def main() -> int:
    from mscodegen.run.weights import load_arrays

    pairs = json.loads(sys.stdin.read())
    print(json.dumps([distance(load_arrays(a), load_arrays(b)) for a, b in pairs]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
