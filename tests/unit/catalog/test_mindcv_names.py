"""The shipped list of mindcv model names matches the installed mindcv."""

import subprocess
import sys

import pytest

from mscodegen.catalog.mindcv_names import mindcv_model_names


@pytest.mark.slow
def test_shipped_names_match_installed_mindcv():
    code = "from mindcv.models import list_models; print('\\n'.join(sorted(list_models())))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    installed = {line for line in out.splitlines() if line}
    assert installed == set(mindcv_model_names()), "run: python -m mscodegen.tools.catalog mindcv"
