"""The mindcv model names (`catalog/data/mindcv_models.txt`): `mindcv.models.list_models()`."""

from __future__ import annotations

import mindcv  # type: ignore[import-untyped]
from mindcv.models import list_models  # type: ignore[import-untyped]

REFRESH_COMMAND = "python -m mscodegen.tools.catalog mindcv"


def extract() -> str:
    """The names file's text: a header with mindcv's version, then `list_models()`, sorted."""
    names = sorted(list_models())
    return f"# mindcv {mindcv.__version__}: regenerate with `{REFRESH_COMMAND}`\n" + "\n".join(names) + "\n"
