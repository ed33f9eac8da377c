"""Names of the models mindcv can build, read from a list shipped with mscodegen.

The generator must not import mindcv (it imports MindSpore, ~1 s), so the list is
refreshed from the installed mindcv by running this module:

    python -m mscodegen.catalog.mindcv_names

and a test checks that it still matches `mindcv.models.list_models()`.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

NAMES_FILE = Path(__file__).parent / "data" / "mindcv_models.txt"


@cache
def mindcv_model_names() -> frozenset[str]:
    """The model names accepted by `mindcv.create_model`."""
    lines = NAMES_FILE.read_text(encoding="utf-8").splitlines()
    return frozenset(line for line in lines if line and not line.startswith("#"))


def _refresh() -> None:
    import mindcv  # type: ignore[import-untyped]  # tool path only: never imported by the CLI
    from mindcv.models import list_models  # type: ignore[import-untyped]

    names = sorted(list_models())
    header = f"# mindcv {mindcv.__version__}: regenerate with `python -m mscodegen.catalog.mindcv_names`\n"
    NAMES_FILE.write_text(header + "\n".join(names) + "\n", encoding="utf-8")
    print(f"wrote {len(names)} names to {NAMES_FILE}")


if __name__ == "__main__":
    _refresh()
