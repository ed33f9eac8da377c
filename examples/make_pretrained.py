"""Write the checkpoint examples/resnet18_finetune.yaml starts from: mindcv's ResNet-18 with a 10-class
head, randomly initialised with a fixed seed (no download), as a stand-in for published weights.

    python make_pretrained.py [OUT]      # default: pretrained/resnet18_10classes.ckpt beside this file

`make demo` and `make test` run it once; `mscodegen init resnet18_finetune` copies it beside the config.
"""

from __future__ import annotations

import sys
from pathlib import Path

DEFAULT = Path(__file__).resolve().parent / "pretrained" / "resnet18_10classes.ckpt"


def write_pretrained(out: Path = DEFAULT) -> Path:
    import mindspore as ms
    from mindcv.models import create_model

    ms.set_seed(123)
    network = create_model("resnet18", num_classes=10, pretrained=False)
    out.parent.mkdir(parents=True, exist_ok=True)
    ms.save_checkpoint(network, str(out))
    return out


if __name__ == "__main__":
    print(f"wrote {write_pretrained(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT)}")
