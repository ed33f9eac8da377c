"""Child process (an environment's interpreter): how far apart pairs of checkpoints are, read as JSON from stdin.

Prints one JSON line: for each pair, {"values", "differ", "max_ulps", "max_abs", "problems"}: how many
values there are, how many are not ==, the largest distance in units in the last place of their own
float type, the largest absolute difference, and structural problems (names, shapes, dtypes).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np

INTS = {2: np.int16, 4: np.int32, 8: np.int64}  # a float's bits, to count the floats between two values


def ulps(x: Any, y: Any) -> Any:
    """Element-wise distance in ulp between two float arrays of one dtype (0 where ==)."""
    bits = INTS[x.dtype.itemsize]
    sign = np.int64(1) << (8 * x.dtype.itemsize - 1)

    def ordered(a: Any) -> Any:
        raw = a.view(bits).astype(np.int64)
        return np.where(raw < 0, -(raw & (sign - 1)), raw)

    return np.abs(ordered(x) - ordered(y))


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
            if x.dtype.kind == "f" and x.dtype.itemsize in INTS:
                out["max_ulps"] = max(out["max_ulps"], int(ulps(x, y).max()))
    return out


def main() -> int:
    import mindspore as ms

    def load(path: str) -> dict[str, Any]:
        return {name: param.asnumpy() for name, param in ms.load_checkpoint(path).items()}

    pairs = json.loads(sys.stdin.read())
    print(json.dumps([distance(load(a), load(b)) for a, b in pairs]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
