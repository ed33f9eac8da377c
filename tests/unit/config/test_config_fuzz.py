"""Property-based fuzzing of the config reader (issue 12) and of hostile inputs (issue 22).

Random mutations of the example configs, random YAML text and random bytes never give a traceback
or a hang: `mscodegen validate` exits 0 or 2. Every mutated config that validates generates scripts
that parse, compile and have no undefined names (`ruff check --select F`).

Issue 22's classes: files around the size cap, any encoding, any `extends` target (directory, FIFO,
device, symlink loop, a non-YAML or foreign file, a deep chain), any `--set` text, and output
directories in any state (lock, script, pristine copy, temp files damaged): each is judged within 2 s
with one located line per problem, and `new --force` recovers every output directory.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import io
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mscodegen.cli import main
from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.config.reader import MAX_BYTES
from mscodegen.output import generate as generate_module
from mscodegen.output.generate import generate
from mscodegen.output.write import LOCK_NAME

from conftest import REPO, TINY

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


# slow: no MindSpore, but 120 configs generated (three scripts each, through black): 13 s of make test-fast
@pytest.mark.slow
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


# --- issue 22: sizes, encodings, extends targets, --set values, output-directory states -------------

# CPU seconds any input may take to be accepted or rejected (in-process, so without Python's start-up;
# CPU time, so other processes on a loaded machine do not count)
FAST = 2.0
SMALL = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
LENET = REPO / "examples" / "lenet_digits.yaml"


def _run(argv: list[str]) -> tuple[int, list[str]]:
    """`mscodegen ARGV` in-process: exit code and stderr lines; a traceback fails the test."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    return code, err.getvalue().splitlines()


def _located(lines: list[str], *sources: str) -> None:
    """Every stderr line is one whole message: it starts with its source (no message was split)."""
    for line in lines:
        assert line.startswith((*sources, "--set ", "error: ")) or re.match(r"\d+ problems? in ", line), line


@SMALL
@given(
    size=st.integers(min_value=MAX_BYTES - 2000, max_value=MAX_BYTES + 2000),
    unit=st.sampled_from(
        ["\n", "# comment\n", "a: 1\n", "k: [1, 2, 3]\n", "[1,", "x", "  ", "- a\n", "\x00"]
    ),
)
def test_any_size_near_the_cap_is_judged_fast(size: int, unit: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.yaml"
        path.write_text((unit * (size // len(unit) + 1))[:size])
        _run(["validate", str(LENET)])  # the first validation imports the rules: not the input's cost
        start = time.process_time()
        code, lines = _run(["validate", str(path)])
        assert time.process_time() - start < FAST
    assert code in (0, 2)
    _located(lines, str(path))


@SMALL
@given(
    encoding=st.sampled_from(
        ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-32", "latin-1", "cp1252", "shift_jis"]
    ),
    extra=st.text(max_size=20),
    cut=st.integers(min_value=0, max_value=3000),
)
def test_any_encoding_is_read_or_refused_with_one_located_line(encoding: str, extra: str, cut: int) -> None:
    text = LENET.read_text(encoding="utf-8") + f"# {extra}\n"
    data = text.encode(encoding, errors="replace")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "enc.yaml"
        path.write_bytes(data[: max(cut, len(data) // 2)])
        code, lines = _run(["validate", str(path)])
    assert code in (0, 2)
    _located(lines, str(path))


def _make_base(directory: Path, kind: str) -> str:
    """An `extends` target of some kind in `directory`; its entry text."""
    secret = "root:$6$saltsalt$secrethash:19000:0:99999:7:::\n"
    if kind == "not yaml":
        (directory / "shadow").write_text(secret)
        return "shadow"
    if kind == "foreign yaml":
        (directory / "shadow.yaml").write_text(secret * 3)
        return "shadow.yaml"
    if kind == "binary":
        (directory / "bin.yaml").write_bytes(bytes(range(256)))
        return "bin.yaml"
    if kind == "huge":
        with open(directory / "huge.yaml", "wb") as file:
            file.truncate(10 * MAX_BYTES)
        return "huge.yaml"
    if kind == "deep":
        for i in range(40):
            (directory / f"d{i}.yaml").write_text(f"extends: d{i + 1}.yaml\n")
        (directory / "d40.yaml").write_text(LENET.read_text())
        return "d0.yaml"
    if kind == "valid":
        shutil.copy(LENET, directory / "base.yaml")
        return "base.yaml"
    return _make_not_a_file(directory, kind)


def _make_not_a_file(directory: Path, kind: str) -> str:
    """An `extends` target that is no regular file (or the child itself); its entry text."""
    if kind == "missing":
        return "nope.yaml"
    if kind == "self":
        return "child.yaml"
    if kind == "directory":
        (directory / "dir.yaml").mkdir()
        return "dir.yaml"
    if kind == "fifo":
        os.mkfifo(directory / "pipe.yaml")
        return "pipe.yaml"
    if kind == "device":
        (directory / "zero.yaml").symlink_to("/dev/zero")
        return "zero.yaml"
    assert kind == "loop", kind
    (directory / "l1.yaml").symlink_to(directory / "l2.yaml")
    (directory / "l2.yaml").symlink_to(directory / "l1.yaml")
    return "l1.yaml"


BASE_KINDS = [
    "missing", "directory", "fifo", "device", "loop", "not yaml", "foreign yaml", "binary", "huge", "self",
    "deep", "valid",
]  # fmt: skip


@SMALL
@given(
    kinds=st.lists(st.sampled_from(BASE_KINDS), min_size=1, max_size=3, unique=True), as_list=st.booleans()
)
def test_any_extends_target_is_one_located_line_that_echoes_no_content(
    kinds: list[str], as_list: bool
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        entries = [_make_base(directory, kind) for kind in kinds]
        value = json.dumps(entries) if as_list or len(entries) > 1 else json.dumps(entries[0])
        child = directory / "child.yaml"
        child.write_text(f"extends: {value}\ntrain: {{epochs: 2}}\n")
        start = time.process_time()
        code, lines = _run(["validate", str(child)])
        assert time.process_time() - start < FAST
    assert code == (0 if set(kinds) == {"valid"} else 2)
    _located(lines, tmp)
    assert not any("secrethash" in line for line in lines)


SET_KEYS = st.sampled_from(
    ["optimizer.lr", "optimizer", "network.input_shape", "eval.metrics.0.name", "data.train.batch_size",
     "train", "a.b.c", "metrics.-1", "", "train.epochs", "data.train.transforms.resize.0"]
)  # fmt: skip
SET_VALUES = st.one_of(
    st.text(max_size=30),
    st.sampled_from(
        ["[3, 32, 32]", "{name: adam}", "&a [*a]", "[", "yes", "1e29", "!!python/none ''", "a\nb"]
    ),
)


@BOUNDED
@given(key=SET_KEYS, value=SET_VALUES, separator=st.sampled_from(["=", "", "=="]))
def test_any_set_value_is_applied_or_refused_on_one_line(key: str, value: str, separator: str) -> None:
    code, lines = _run(["validate", str(LENET), "--set", f"{key}{separator}{value}"])
    assert code in (0, 2)
    _located(lines, str(LENET))


# An output directory a kill, an editor or a hand left behind: whatever its state, every command
# ends with an exit code (never a traceback), and `new --force` always recovers it.
STATE_COMMANDS = [
    ["new"],
    ["new", "--check"],
    ["update"],
    ["update", "--dry-run"],
    ["diff"],
]
PLACES = ["script", "lock", "pristine", "previous", "temp", "orig", "bak"]
DAMAGES = ["append", "truncate", "delete", "replace", "markers", "json"]
_GENERATED: dict[tuple[str, str, tuple[str, ...]], dict[str, str]] = {}


@contextlib.contextmanager
def _memo_generate() -> Iterator[None]:
    """generate() memoised (black costs ~0.3 s a script; every example generates the same one)."""
    real = generate_module.generate

    def memo(loaded: Any, out_dir: Path, variants: tuple[str, ...] = ("model", "native")) -> dict[str, str]:
        key = (loaded.sha256, str(out_dir), tuple(variants))
        if key not in _GENERATED:
            _GENERATED[key] = real(loaded, out_dir, variants)  # type: ignore[arg-type]
        return dict(_GENERATED[key])

    generate_module.generate = memo  # type: ignore[assignment]
    try:
        yield
    finally:
        generate_module.generate = real


def _damage(out: Path, place: str, damage: str, junk: bytes) -> None:
    script = "train_native.py"
    path = {
        "script": out / script,
        "lock": out / LOCK_NAME,
        "pristine": out / ".mscodegen" / "pristine" / script,
        "previous": out / ".mscodegen" / "previous" / script,
        "temp": out / f".{script}.k3j4h5g6.tmp",
        "orig": out / f"{script}.orig",
        "bak": out / f"{script}.bak",
    }[place]
    path.parent.mkdir(parents=True, exist_ok=True)
    old = path.read_bytes() if path.exists() else b""
    if damage == "delete":
        path.unlink(missing_ok=True)
    elif damage == "append":
        path.write_bytes(old + junk)
    elif damage == "truncate":
        path.write_bytes(old[: len(old) // 2])
    elif damage == "replace":
        path.write_bytes(junk)
    elif damage == "markers":
        path.write_bytes(b"<<<<<<< yours\n" + old + b"=======\n>>>>>>> generated\n")
    elif damage == "json" and old:
        try:
            doc = json.loads(old)
        except ValueError:
            return
        if isinstance(doc, dict) and isinstance(doc.get("meta"), dict):
            doc["meta"]["config"] = junk.decode("latin-1")
            path.write_text(json.dumps(doc))
    if place == "temp" and path.exists():
        os.utime(path, (time.time() - 3600, time.time() - 3600))


@pytest.mark.slow  # no MindSpore, but a `new` or `update` per example: 8 s of make test-fast
@SMALL
@given(
    damages=st.lists(
        st.tuples(st.sampled_from(PLACES), st.sampled_from(DAMAGES), st.binary(max_size=16)),
        min_size=1,
        max_size=3,
    ),
    command=st.sampled_from(STATE_COMMANDS),
)
def test_any_output_directory_state_ends_cleanly_and_new_force_recovers_it(
    damages: list[tuple[str, str, bytes]], command: list[str]
) -> None:
    with tempfile.TemporaryDirectory() as tmp, _memo_generate():
        root = Path(tmp)
        config = root / "tiny.yaml"
        config.write_text(yaml.safe_dump(TINY, sort_keys=False))
        out = root / "out"
        where = ["--out", str(out), "--variant", "native"]
        assert _run(["new", str(config), *where])[0] == 0
        for place, damage, junk in damages:
            _damage(out, place, damage, junk)
        argv = (
            [command[0], str(out)]
            if command[0] == "diff"
            else [command[0], str(config), *command[1:], *where]
        )
        code, lines = _run(argv)
        assert code in (0, 1, 2)
        assert not any("Traceback" in line for line in lines)
        assert _run(["new", str(config), *where, "--force"])[0] == 0
        assert _run(["new", str(config), *where, "--check"])[0] == 0
