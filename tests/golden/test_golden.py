"""Golden tests: generated/ is exactly what examples/ generate, and generation is deterministic."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import black
import pytest

from mscodegen.cli import main
from mscodegen.output.write import LOCK_NAME
from mscodegen.render.fmt import LINE_LENGTH

from conftest import REPO

# Top-level configs only: examples/bases/ holds files that others extend, not runs of their own.
EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))
REGENERATE = "make regenerate   (or: mscodegen new examples/<name>.yaml --force)"
MODE = black.Mode(line_length=LINE_LENGTH)


def test_examples_found():
    assert len(EXAMPLES) >= 2, "examples/ lost its configs"


def _generated_dirs() -> list[Path]:
    return sorted(p.parent for p in (REPO / "generated").glob(f"*/{LOCK_NAME}"))


def test_every_generated_dir_has_an_example():
    names = {p.stem for p in EXAMPLES}
    orphans = [d.name for d in _generated_dirs() if d.name not in names]
    assert orphans == [], f"generated/ has directories no example produces: {orphans}"


@pytest.mark.parametrize("config", EXAMPLES, ids=lambda p: p.stem)
def test_generated_is_in_sync(config, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    code = main(["new", str(config.relative_to(REPO)), "--check"])
    err = capsys.readouterr().err
    assert code == 0, f"generated/{config.stem} is out of date:\n{err}\nregenerate with: {REGENERATE}"


def mscodegen_imports(text: str) -> list[str]:
    """Every module of mscodegen the script imports, in any form: `import mscodegen.x as y`, `from mscodegen(.x)
    import y`, and `__import__("mscodegen")` / `importlib.import_module("mscodegen.x")` with a literal name."""
    names: list[str] = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            called = getattr(node.func, "id", getattr(node.func, "attr", ""))
            if called in ("__import__", "import_module") and isinstance(node.args[0].value, str):
                names.append(node.args[0].value)
    return [name for name in names if name == "mscodegen" or name.startswith("mscodegen.")]


@pytest.mark.parametrize(
    "line",
    [
        "import mscodegen",
        "import mscodegen.run.parity",
        "import os, mscodegen.x as y",
        "from mscodegen import cli",
        "from mscodegen.x import y",
        "from mscodegen.run.parity import (\n    run_script,\n)",
        "def f():\n    from mscodegen.x import y",
        "if True:\n    import mscodegen.x",
        "__import__('mscodegen.x')",
        "importlib.import_module('mscodegen')",
    ],
)
def test_the_import_check_catches_every_form(line: str) -> None:
    text = f"import json\nfrom pathlib import Path\n{line}\n"
    assert mscodegen_imports(text) != [], line


def test_the_import_check_passes_other_modules() -> None:
    text = "import mscodegenx\nfrom mscodegen_extra import y\nfrom . import mscodegen\nimport json as mscodegen\n"
    assert mscodegen_imports(text) == []


@pytest.mark.parametrize("config", EXAMPLES, ids=lambda p: p.stem)
def test_golden_scripts_parse_are_black_stable_and_ruff_clean(config):
    """Every golden parses, is what black makes of it, imports no mscodegen, and passes ruff."""
    out = REPO / "generated" / config.stem
    scripts = sorted(out.glob("*.py"))
    assert {p.name for p in scripts} >= {"train_model.py", "train_native.py", "predict.py"}
    for script in scripts:
        text = script.read_text()
        ast.parse(text, filename=str(script))
        assert black.format_str(text, mode=MODE) == text, f"{script} is not black-stable"
        assert mscodegen_imports(text) == [], f"{script} imports mscodegen"
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent))
    # the project's own rule set (pyproject.toml), as a user running ruff in the repository would
    result = subprocess.run([ruff, "check", "--no-cache", str(out)], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow  # no MindSpore, but every example generated again in a process of its own: 7 s
def test_generation_is_deterministic_across_hash_seeds():
    """Under a fixed hash seed every example generates generated/ byte for byte (scripts, lock, pristine
    copies). With test_generated_is_in_sync (this process's random seed, another each session) and the
    seed generated/ was written with, three seeds agree. A process of its own: PYTHONHASHSEED is read
    when Python starts."""
    script = (
        "import sys\nfrom mscodegen.cli import main\n"
        "for config in sys.argv[1:]:\n"
        "    assert main(['new', config, '--check']) == 0, config\n"
    )
    configs = [str(config.relative_to(REPO)) for config in EXAMPLES]
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    run = subprocess.run(
        [sys.executable, "-c", script, *configs], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr


def test_scripts_never_import_mscodegen_or_mindspore_in_the_generator():
    """The CLI must not import MindSpore (or mindcv): generation stays fast."""
    code = (
        "import sys; from mscodegen.cli import main; "
        "main(['validate', 'examples/resnet.yaml']); "
        "bad = [m for m in ('mindspore', 'mindcv') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, capture_output=True)
