"""Child process (an environment's interpreter): compare pairs of checkpoints read as JSON from stdin.

Prints one JSON line: for each pair, the list of differences (empty when every tensor is ==).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from mscodegen.run.weights import compare_arrays


def main() -> int:
    import mindspore as ms

    def load(path: str) -> dict[str, Any]:
        return {name: param.asnumpy() for name, param in ms.load_checkpoint(path).items()}

    pairs = json.loads(sys.stdin.read())
    print(json.dumps([compare_arrays(load(a), load(b), ("this version", "reference")) for a, b in pairs]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
