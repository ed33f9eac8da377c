"""No string from a config ever becomes code in the generated scripts.

Every payload below is put into every config field that takes free text (or plain-data kwargs). Either
validation rejects it, or it reaches the scripts only as a string literal (an ast.Constant) or inside a
comment. The payloads carry the name `pwned_marker` after each line break: if any part escaped its
literal or its comment, `pwned_marker` would be a NAME token of the script.
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path
from typing import Any

import pytest
import yaml

from mscodegen.config.errors import ConfigError, format_path
from mscodegen.config.load import load_config
from mscodegen.output.generate import generate
from mscodegen.plan.loop import CHECKPOINTS_NAME
from mscodegen.plan.predict import PREDICT_NAME

MARKER = "pwned_marker"
PAYLOADS = [
    "'",
    '"',
    "'''",
    '"""',
    "\\",
    "\\'",
    '\\"',
    f"a\n{MARKER}()\n#",
    f"x\r\n{MARKER}()",
    f"x\r{MARKER}()",
    f"__import__('os').system('{MARKER}')",
    f"\"); import os; os.system('{MARKER}'); (\"",
    f"'); import os; os.system('{MARKER}'); ('",
    f'"""; {MARKER}(); """',
    f"'''; {MARKER}(); '''",
    f'\\"); {MARKER}(); (\\"',
    f"x\u2028{MARKER}()\u2029",
    f"x\x00{MARKER}",
    f"x\x0b{MARKER}\x0c\x85",
    f"{{{MARKER}}} %({MARKER})s",
    f"# {MARKER}",
    f"\\n {MARKER} \\\\",
    f"\t{MARKER}",
    f"{{{{ {MARKER} }}}}{{% raw %}}",
    f"eval('{MARKER}')",
]
IDS = [repr(p)[:40] for p in PAYLOADS]

SUPPORT = {
    "nets.py": "def Net(**kwargs):\n    pass\n",
    "my_data.py": "def make(**kwargs):\n    pass\n",
    "my_metrics.py": "class Multi:\n    pass\n",
}
DANGEROUS_FUNCTIONS = {"__import__", "eval", "exec", "compile", "getattr", MARKER}  # called by name
DANGEROUS_METHODS = {"system", "popen", "import_module"}  # os.system(...), importlib.import_module(...)


def write(directory: Path, data: dict, name: str = "cfg") -> Path:
    for file, text in SUPPORT.items():
        (directory / file).write_text(text)
    path = directory / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def imported_config(payload: str, values: list[str] | None = None) -> dict:
    """`payload` in every single-valued free-text field, `values` (default [payload]) in every kwargs
    of a config with imported network, data and metric."""
    values = [payload] if values is None else values
    nested: dict[str, Any] = {"list": [payload, {"deep": payload}], "n": 1.5}
    for value in values:
        if value.isprintable():  # keys with line breaks are rejected: see test_nested_key_with_line_break
            nested[value] = 0
    # paths refuse control characters (issue 30): a payload with them is tested as refused below
    path = payload if payload.isprintable() else "out"
    checkpoint = {"every_epochs": 1, "directory": path}
    if path and "/" not in path and "\\" not in path:
        checkpoint["prefix"] = path
    return {
        "network": {"kind": "import", "factory": "nets:Net", "kwargs": {"text": payload, "nested": nested}},
        "data": {
            "train": {
                "kind": "import",
                "factory": "my_data:make",
                "kwargs": {"root": payload, "items": values},
                "image_shape": [1, 8, 8],
            },
            "eval": {"kind": "synthetic", "image_shape": [1, 8, 8]},
        },
        "loss": {"name": "MSELoss"},
        "optimizer": {"name": "momentum"},
        "train": {"output_dir": path},
        "eval": {
            "metrics": [
                {"name": "accuracy"},
                {"name": "import", "class": "my_metrics:Multi", "key": "multi", "kwargs": {"label": values}},
            ]
        },
        "callbacks": {"checkpoint": checkpoint},
    }


def mindcv_config(payload: str, values: list[str] | None = None) -> dict:
    values = [payload] if values is None else values
    return {
        "network": {"kind": "mindcv", "name": "resnet18", "kwargs": {"in_channels": 1, "labels": values}},
        "data": {"train": {"kind": "mnist", "path": payload}},
        "optimizer": {"name": "adam"},
    }


def string_and_comment_spans(source: str) -> tuple[list[tuple[tuple[int, int], tuple[int, int]]], set[str]]:
    """(start, end) of every STRING and COMMENT token, and every NAME token's text."""
    spans, names = [], set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            assert len(tok.string.splitlines()) == 1, tok  # nothing in a comment that splits lines
        if tok.type in (tokenize.STRING, tokenize.COMMENT):
            spans.append((tok.start, tok.end))
        elif tok.type == tokenize.NAME:
            names.add(tok.string)
        assert tok.type != tokenize.ERRORTOKEN, tok
    return spans, names


def marker_positions(source: str) -> list[tuple[int, int]]:
    found = []
    for number, line in enumerate(source.splitlines(keepends=False), start=1):
        start = line.find(MARKER)
        while start != -1:
            found.append((number, start))
            start = line.find(MARKER, start + 1)
    return found


def check_script(name: str, source: str) -> set[Any]:
    """Everything this module promises about one generated script; returns its constants."""
    tree = ast.parse(source, filename=name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                assert func.id not in DANGEROUS_FUNCTIONS, f"{name}:{node.lineno}: call to {func.id}"
            if isinstance(func, ast.Attribute):
                assert func.attr not in DANGEROUS_METHODS, f"{name}:{node.lineno}: call to .{func.attr}"
        if isinstance(node, ast.Name):
            assert node.id != MARKER, f"{name}:{node.lineno}: the payload became code"
    spans, names = string_and_comment_spans(source)
    assert MARKER not in names
    # Only the characters Python itself treats as line ends may split lines here: str.splitlines()
    # would also split at \x0b, \x0c, \x1c-\x1e, \x85, \u2028, \u2029, which must all be escaped.
    assert source.splitlines() == source.removesuffix("\n").split("\n")
    for position in marker_positions(source):
        assert any(start <= position < end for start, end in spans), f"{name}: {MARKER} at {position} is code"
    for line in source.split("\n"):
        assert "\r" not in line and "\x00" not in line
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)}


# Generating takes about a second (black), so every payload goes into the kwargs of one config at
# once, all of them concatenated into each single-valued field, and a few alone into each field.
ALL_AT_ONCE = "".join(PAYLOADS)
ALONE = [ALL_AT_ONCE, f"a\n{MARKER}()\n#", f'"""; {MARKER}(); """', "\\"]


@pytest.mark.parametrize("payload", ALONE, ids=repr)
def test_payloads_in_every_text_field_stay_strings(tmp_path: Path, payload: str) -> None:
    loaded = load_config(write(tmp_path, imported_config(payload, [payload, *PAYLOADS])))
    for name, source in generate(loaded, tmp_path / "out").items():
        constants = check_script(name, source)
        if name == CHECKPOINTS_NAME:  # the checkpoints' folder, prefix, counts: the payloads are not there
            continue
        missing = [p for p in [payload, *PAYLOADS] if p not in constants]
        assert not missing, f"{name}: not kept as string literals: {missing}"
    # the values come back from the config unchanged
    assert loaded.config.train.output_dir == (payload if payload.isprintable() else "out")
    assert loaded.config.eval.metrics[1].kwargs == {"label": [payload, *PAYLOADS]}
    if not payload.isprintable():  # a path with a control character is refused at its key
        config = imported_config("x")
        config["train"]["output_dir"] = payload
        assert "train.output_dir" in [path for path, _ in rejected(tmp_path, config, "paths")]


@pytest.mark.parametrize("payload", [p for p in ALONE if "/" not in p and p.isprintable()], ids=repr)
def test_payloads_in_mindcv_kwargs_and_data_path_stay_strings(tmp_path: Path, payload: str) -> None:
    data_dir = tmp_path / payload
    data_dir.mkdir()
    for file in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"):
        (data_dir / file).write_bytes(b"")
    loaded = load_config(write(tmp_path, mindcv_config(payload, PAYLOADS)))
    for name, source in generate(loaded, tmp_path / "out").items():
        constants = check_script(name, source)
        assert all(p in constants for p in PAYLOADS)
        if name != PREDICT_NAME:  # predict.py imports DATA_DIR from the training script
            assert any(isinstance(c, str) and c.endswith("/" + payload) for c in constants)


# --- what validation rejects ----------------------------------------------------------------------


def rejected(tmp_path: Path, data: dict, name: str = "cfg") -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, data, name))
    return [(p.path, p.message) for p in info.value.problems]


@pytest.mark.parametrize("payload", PAYLOADS, ids=IDS)
def test_payload_as_run_name_is_rejected(tmp_path: Path, payload: str) -> None:
    (tmp_path / "x").mkdir()  # the data directory exists: the name is the only problem (all are reported)
    for file in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"):
        (tmp_path / "x" / file).write_bytes(b"")
    problems = rejected(tmp_path, {**mindcv_config("x"), "name": payload})
    assert [path for path, _ in problems] == ["name"]


@pytest.mark.parametrize("payload", PAYLOADS, ids=IDS)
def test_payload_as_metric_key_is_rejected(tmp_path: Path, payload: str) -> None:
    config = imported_config("x")
    config["eval"]["metrics"][1]["key"] = payload
    assert [path for path, _ in rejected(tmp_path, config)] == ["eval.metrics[1].key"]


@pytest.mark.parametrize("payload", PAYLOADS, ids=IDS)
def test_payload_as_normalize_value_is_rejected(tmp_path: Path, payload: str) -> None:
    config = imported_config("x")
    config["data"]["eval"] = {
        "kind": "digits",
        "transforms": {"normalize": {"mean": [payload], "std": [0.5]}},
    }
    assert [path for path, _ in rejected(tmp_path, config)] == ["data.eval.transforms.normalize.mean[0]"]


@pytest.mark.parametrize("payload", [*PAYLOADS, "class", "lambda", "None", "a-b", "1x", "x y", ""], ids=repr)
def test_payload_as_kwargs_key_is_rejected(tmp_path: Path, payload: str) -> None:
    config = imported_config("x")
    config["loss"]["kwargs"] = {payload: 1}
    config["network"]["kwargs"] = {payload: 1}
    config["eval"]["metrics"][1]["kwargs"] = {payload: 1}
    config["data"]["train"]["kwargs"] = {payload: 1}
    paths = sorted(path for path, _ in rejected(tmp_path, config))
    shown = format_path([payload])  # a line break or a long payload is escaped and shortened: one line
    assert paths == sorted(
        f"{section}.{shown}"
        for section in ("loss.kwargs", "network.kwargs", "eval.metrics[1].kwargs", "data.train.kwargs")
    )


@pytest.mark.parametrize("payload", [p for p in PAYLOADS if not p.isprintable()], ids=repr)
def test_nested_key_with_line_break_is_rejected(tmp_path: Path, payload: str) -> None:
    config = imported_config("x")
    config["network"]["kwargs"] = {"nested": {payload: 1}}
    assert [path for path, _ in rejected(tmp_path, config)] == ["network.kwargs.nested"]


@pytest.mark.parametrize(
    "factory",
    [f"nets:Net(); {MARKER}", f"nets:Net\n{MARKER}", f"os; {MARKER}:x", "nets:Net()", "nets :Net", "nets:"],
)
def test_payload_in_import_path_is_rejected(tmp_path: Path, factory: str) -> None:
    config = imported_config("x")
    config["network"]["factory"] = factory
    assert [path for path, _ in rejected(tmp_path, config)] == ["network.factory"]


@pytest.mark.parametrize("payload", ["a/b", "a\\b", ""])
def test_checkpoint_prefix_must_be_a_file_name(tmp_path: Path, payload: str) -> None:
    config = imported_config("x")
    config["callbacks"]["checkpoint"]["prefix"] = payload
    assert [path for path, _ in rejected(tmp_path, config)] == ["callbacks.checkpoint.prefix"]


@pytest.mark.parametrize(
    "stem", ['x"""+__import__("os").system("x")+"""', "a b", "x'", "x\\y", "-x", ".hidden"]
)
def test_file_stem_that_cannot_name_the_run_is_rejected(tmp_path: Path, stem: str) -> None:
    """Without `name:` the stem names the run and is printed in the scripts' docstring."""
    problems = rejected(tmp_path, mindcv_config("x") | {"data": {"train": {"kind": "digits"}}}, name=stem)
    assert [path for path, _ in problems] == ["name"]
    assert "set name:" in problems[0][1]


def test_config_path_and_out_dir_only_reach_comments_escaped(tmp_path: Path) -> None:
    """With `name:` set the file may be called anything; its path and the output directory are printed
    in the header comments, where a line break would end the comment."""
    config = mindcv_config("x") | {"data": {"train": {"kind": "digits"}}, "name": "ok"}
    stem = f'x"""\n{MARKER}()\r\n#\u2028{MARKER}\\'
    loaded = load_config(write(tmp_path, config, name=stem))
    for name, source in generate(loaded, tmp_path / f"out\n{MARKER}()").items():
        check_script(name, source)
        # escaped in the docstring: its quotes, line breaks and backslash
        assert f'x\\"\\"\\"\\n{MARKER}()\\r\\n#\\u2028{MARKER}\\\\.yaml' in source
