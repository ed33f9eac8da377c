"""How `mscodegen parity` watches a generated script without any code in it for that purpose.

`observed_env` returns the environment that makes a Python process load `sitecustomize.py` from this
folder: it records what the script's train cells return and what MindSpore applied, and the
evaluation lines the script prints. The scripts stay as the user reads them.
"""

from __future__ import annotations

import os
from pathlib import Path

HOOK_DIR = Path(__file__).parent
ENV_DIR = "MSCODEGEN_OBSERVE"  # where the records go: loss.jsonl, eval.jsonl (.rank<N> under msrun)
ENV_SCRIPT = "MSCODEGEN_OBSERVE_SCRIPT"  # the file name of the observed script: only its process is hooked


def observed_env(script: Path, records: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    """`base` (os.environ by default) plus what makes `script`'s process write its records to `records`."""
    env = dict(os.environ if base is None else base)
    paths = [str(HOOK_DIR), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env[ENV_DIR], env[ENV_SCRIPT] = str(records), script.name
    return env
