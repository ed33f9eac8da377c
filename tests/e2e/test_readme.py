"""Issue #2 end to end: the README's user commands work in a fresh clone of this repository.

The clone holds what is committed (uncommitted work is not in it): the test proves that a user
who clones the repo gets a working `mscodegen`, examples that validate, a generated/ that is in
sync with examples/, and a generated script that trains. It reuses the running venv (its bin/
first in PATH, no new venv) but imports mscodegen from the clone, so code, templates, examples
and generated/ all come from the same commit.
"""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

BIN = Path(sys.executable).parent
# `mscodegen new CONFIG --check` for every CONFIG in argv, in one process; the exit code is the worst one
CHECK_ALL = "import sys; from mscodegen.cli import main; sys.exit(max(main(['new', c, '--check']) for c in sys.argv[1:]))"


def _run(
    args: list[str], cwd: Path, env: dict[str, str], timeout: float = 120
) -> subprocess.CompletedProcess:
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def _explain(proc: subprocess.CompletedProcess) -> str:
    return f"$ {' '.join(map(str, proc.args))}\nexit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"


def readme_commands(readme: str) -> list[list[str]]:
    """`mscodegen ...` lines of the README's bash blocks, comments and `> file` redirections dropped.

    `console` blocks (a `$` prompt, then output) are illustrations, e.g. of a refused `new`: not run.
    """
    commands = []
    for block in re.findall(r"^```(?:bash|sh)\n(.*?)^```", readme, re.MULTILINE | re.DOTALL):
        for line in block.splitlines():
            if line.startswith("mscodegen "):
                argv = shlex.split(line, comments=True)
                commands.append(argv[: argv.index(">")] if ">" in argv else argv)
    return commands


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    if shutil.which("git") is None:
        pytest.fail("git is needed to clone the repository")
    if not (REPO / ".git").exists():
        pytest.skip(f"{REPO} is not a git checkout")
    root = tmp_path_factory.mktemp("e2e") / "clone"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(root)], check=True, timeout=120)
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(root)  # the clone's mscodegen, not the checkout the venv points at
    env.pop("PYTHONHOME", None)
    return root, env


@pytest.mark.slow
def test_readme_commands_in_a_fresh_clone(clone, tmp_path):
    root, env = clone
    assert shutil.which("mscodegen", path=env["PATH"]) == str(BIN / "mscodegen")
    where = _run([str(BIN / "python"), "-c", "import mscodegen; print(mscodegen.__file__)"], root, env)
    assert Path(where.stdout.strip()).resolve().is_relative_to(root.resolve()), _explain(where)

    examples = sorted(p.relative_to(root).as_posix() for p in (root / "examples").glob("*.yaml"))
    assert "examples/lenet_digits.yaml" in examples

    # generated/ as committed must match examples/ (checked before anything regenerates it): `mscodegen new
    # EXAMPLE --check` for each, in one process of the clone's mscodegen (a process each cost ~0.7 s of start-up)
    proc = _run([str(BIN / "python"), "-c", CHECK_ALL, *examples], root, env)
    assert proc.returncode == 0, (
        "generated/ is out of date with examples/ in the committed tree; run `make regenerate` "
        "and commit generated/\n" + _explain(proc)
    )
    assert proc.stdout.count("up to date") == len(examples), _explain(proc)

    # The README's commands, in its order (parity runs both trainings: tests/e2e/test_parity_* cover it).
    commands = readme_commands((root / "README.md").read_text())
    assert {"new", "validate", "schema", "update", "diff"} <= {argv[1] for argv in commands}, commands
    for argv in commands:
        if argv[1] == "parity":
            continue
        proc = _run(argv, root, env)
        assert proc.returncode == 0, _explain(proc)
        if argv[1] == "schema":
            schema = json.loads(proc.stdout)
            assert schema["title"] == "mscodegen config"
            # Either form: one network, or two under gan:.
            assert sorted(ref["$ref"] for ref in schema["anyOf"]) == ["#/$defs/Config", "#/$defs/GanConfig"]
            assert {"network", "data", "optimizer", "train"} <= set(schema["$defs"]["Config"]["properties"])
            assert {"gan", "data", "train"} <= set(schema["$defs"]["GanConfig"]["properties"])
        if argv[1] == "diff":
            assert "no edits" in proc.stdout, _explain(proc)

    proc = _run(["mscodegen", "new", "examples/lenet_digits.yaml"], root, env)
    assert proc.returncode == 0, _explain(proc)
    out = root / "generated" / "lenet_digits"
    files = ("train_model.py", "train_native.py", "predict.py", "checkpoints.py")
    for name in (*files, ".mscodegen-lock.json"):
        assert (out / name).is_file(), f"{name} missing after `mscodegen new`\n{_explain(proc)}"
    # In sync before, so regenerating changes nothing.
    assert re.findall(r"^\s*(\w+)\s", proc.stdout, re.MULTILINE) == ["unchanged"] * len(files), proc.stdout

    # network.checkpoint files are the user's (examples/pretrained/ is git-ignored): validate checks
    # they exist, so the fine-tuning example gets a stand-in (tests/e2e/test_finetune.py writes a real one).
    weights = root / "examples" / "pretrained" / "resnet18_10classes.ckpt"
    weights.parent.mkdir(exist_ok=True)
    weights.write_bytes(b"")
    proc = _run(["mscodegen", "validate", *examples], root, env)
    assert proc.returncode == 0, _explain(proc)
    assert proc.stdout.splitlines() == [f"{e}: ok" for e in examples]

    # A short training run of the generated Model-API script, from its own directory, recorded from outside.
    logs = tmp_path / "logs"
    proc = _run(
        [
            "mscodegen",
            "record",
            "train_model.py",
            "--logs",
            str(logs),
            "--",
            "--max-steps",
            "5",
            "--epochs",
            "1",
            "--output-dir",
            str(tmp_path / "outputs"),
        ],
        out,
        env,
        timeout=300,
    )
    assert proc.returncode == 0, _explain(proc)
    steps = [json.loads(line) for line in (logs / "loss.jsonl").read_text().splitlines()]
    assert [s["step"] for s in steps] == [1, 2, 3, 4, 5]
    assert all(math.isfinite(s["loss"]) for s in steps), steps
    # The script wrote nothing into generated/ (outputs went to --output-dir).
    status = _run(["git", "status", "--porcelain", "--untracked-files=all"], root, env)
    assert status.stdout == "", f"the commands left changes in the clone:\n{status.stdout}"


def test_makefile_and_ci_entry_point():
    makefile = (REPO / "Makefile").read_text()
    targets = set(re.findall(r"^([A-Za-z][\w-]*)\s*:(?!=)", makefile, re.MULTILINE))
    assert {"demo", "test"} <= targets, f"Makefile targets: {sorted(targets)}"
    phony = re.search(r"^\.PHONY:(.*)$", makefile, re.MULTILINE)
    assert phony and {"demo", "test"} <= set(phony.group(1).split())
    ci = (REPO / ".ci" / "run").read_text()
    commands = [ln.split("#", 1)[0].strip() for ln in ci.splitlines()]
    assert "make test" in commands, ".ci/run must run the README's `make test`"
    assert os.access(REPO / ".ci" / "run", os.X_OK), ".ci/run is not executable"
    # `make -n` parses the Makefile and lists the commands without running them.
    if shutil.which("make"):
        for target in ("demo", "test"):
            proc = subprocess.run(
                ["make", "-n", target], cwd=REPO, capture_output=True, text=True, timeout=60, check=False
            )
            assert proc.returncode == 0, proc.stderr
        assert re.search(r"pytest\b", proc.stdout), proc.stdout
