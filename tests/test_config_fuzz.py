"""Property-based fuzzing of the config reader (issue 12).

Random mutations of the example configs, random YAML text and random bytes never give a traceback
or a hang: `mscodegen validate` exits 0 or 2. Every mutated config that validates generates scripts
that parse, compile and have no undefined names (`ruff check --select F`).
"""

from __future__ import annotations

import ast
import copy
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mscodegen.cli import main
from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.output.generate import generate

from conftest import REPO

EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))
TREES = [yaml.safe_load(p.read_text(encoding="utf-8")) for p in EXAMPLES if "extends:" not in p.read_text()]
BOUNDED = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.lists(st.integers(min_value=-5, max_value=300), max_size=4),
)


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += _paths(value, (*prefix, i))
    return out


def _mutate(tree: Any, rng: random.Random, value: Any) -> Any:
    """One structural mutation at a random path: delete, replace, retype, add a key, or duplicate."""
    tree = copy.deepcopy(tree)
    path = rng.choice(_paths(tree)[1:])
    parent = tree
    for element in path[:-1]:
        parent = parent[element]
    last = path[-1]
    action = rng.choice(("delete", "replace", "add", "wrap", "swap"))
    if action == "delete":
        del parent[last]
    elif action == "replace":
        parent[last] = value
    elif action == "add" and isinstance(parent, dict):
        parent[f"{last}_x" if isinstance(last, str) else "extra"] = value
    elif action == "wrap":
        parent[last] = [parent[last]] if rng.random() < 0.5 else {"value": parent[last]}
    elif action == "swap" and isinstance(parent, dict) and len(parent) > 1:
        other = rng.choice([k for k in parent if k != last])
        parent[last], parent[other] = parent[other], parent[last]
    return tree


def _validate_text(text: str | bytes) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.yaml"
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
        start = time.monotonic()
        code = main(["validate", str(path)])
        assert time.monotonic() - start < 10, "validate took over 10 s"
    return code


@BOUNDED
@given(
    which=st.integers(min_value=0, max_value=len(TREES) - 1),
    seed=st.integers(min_value=0, max_value=2**32),
    value=SCALARS,
    rounds=st.integers(min_value=1, max_value=4),
)
def test_mutated_examples_never_give_a_traceback(which: int, seed: int, value: Any, rounds: int) -> None:
    rng = random.Random(seed)
    tree = TREES[which]
    for _ in range(rounds):
        tree = _mutate(tree, rng, value)
    assert _validate_text(yaml.safe_dump(tree, allow_unicode=True)) in (0, 2)


@BOUNDED
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=300))
def test_random_yaml_text_never_gives_a_traceback(text: str) -> None:
    assert _validate_text(text) in (0, 2)


@BOUNDED
@given(st.binary(max_size=300))
def test_random_bytes_never_give_a_traceback(data: bytes) -> None:
    assert _validate_text(data) in (0, 2)


@BOUNDED
@given(st.sampled_from(EXAMPLES), st.integers(min_value=0, max_value=4000))
def test_truncated_examples_never_give_a_traceback(example: Path, cut: int) -> None:
    data = example.read_bytes()
    assert _validate_text(data[: cut % max(len(data), 1)]) in (0, 2)


def test_every_mutation_that_validates_generates_code_without_undefined_names(tmp_path: Path) -> None:
    """Deterministic mutations (fixed seeds); the scripts of every one that validates are checked once."""
    rng = random.Random(12)
    written = []
    for i in range(120):
        tree = _mutate(rng.choice(TREES), rng, rng.choice([0, 1, 2, 0.5, -1, "x", True, None, [1, 2]]))
        config = tmp_path / f"c{i}.yaml"
        config.write_text(yaml.safe_dump(tree), encoding="utf-8")
        try:
            loaded = load_config(config)
        except ConfigError:
            continue
        for name, text in generate(loaded, tmp_path / f"out{i}").items():
            if name.endswith(".py"):
                compile(ast.parse(text), name, "exec")
                target = tmp_path / f"gen{i}_{name}"
                target.write_text(text, encoding="utf-8")
                written.append(target)
    assert len(written) >= 20, f"only {len(written)} mutated configs validated: the mutations are too harsh"
    ruff = [sys.executable, "-m", "ruff", "check", "--isolated", "--select", "F", *map(str, written)]
    result = subprocess.run(ruff, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("tree", TREES[:1])
def test_mutation_helper_changes_the_tree(tree: Any) -> None:
    rng = random.Random(0)
    assert any(_mutate(tree, rng, "zz") != tree for _ in range(5))
