"""The plan holds facts, never code text; the templates print them (issue 33).

A string in the plan is code text when it parses as Python and is more than a name, a dotted name,
a literal or names joined by commas: a call, an operator, a subscript, a statement. Every plan of
every example and cookbook config is walked, field by field. Strings that are data by construction
(config keys, paths and prose, and the values inside a `Call`, which the `py` filter prints as
literals) are named below with their reason, so nothing is exempt by accident.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import sys
from pathlib import Path

import pytest

from mscodegen.config.load import load_config
from mscodegen.plan import build_plans

from conftest import REPO

CONFIGS = sorted(
    p for d in ("examples", "docs/cookbook") for p in (REPO / d).rglob("*.yaml") if "bases" not in p.parts
)

NOT_CODE = {
    # config keys, for provenance marks and messages: "optimizer.groups[0]" parses as a subscript
    "key", "keys", "groups_key",
    # paths and prose: "generated/x" parses as a division, "LeNet-5" as a subtraction
    "short", "summary", "extras", "Header.source", "OptimizerGroup.name",
    # a Call's arguments are values: the py filter prints a string quoted
    "Call.args", "Call.kwargs",
}  # fmt: skip


def is_code(text: str) -> bool:
    s = text.strip()
    if not s or s.startswith("#"):
        return False
    try:
        node = ast.parse(s, mode="eval").body
    except SyntaxError:
        try:
            statements = ast.parse(s).body
        except SyntaxError:
            return False  # prose
        return len(statements) > 1 or not isinstance(statements[0], ast.Expr)
    if isinstance(node, ast.Tuple):  # "image, label": names joined
        return not all(isinstance(e, ast.Name) for e in node.elts)
    return not all(isinstance(n, (ast.Name, ast.Attribute, ast.Load, ast.Constant)) for n in ast.walk(node))


def _strings(value: object):
    if isinstance(value, str):
        yield value
    elif isinstance(value, (tuple, list, frozenset, set)):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)


def _children(obj: object) -> list[object]:
    if dataclasses.is_dataclass(obj):
        return [getattr(obj, f.name) for f in dataclasses.fields(obj)]
    if isinstance(obj, (tuple, list)):
        return list(obj)
    return list(obj.values()) if isinstance(obj, dict) else []


def code_fields(root: object) -> dict[str, str]:
    """{Class.field: an example of its code text} for every dataclass reachable from `root`."""
    found: dict[str, str] = {}
    seen: set[int] = set()
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        for f in dataclasses.fields(obj) if dataclasses.is_dataclass(obj) else ():
            name = f"{type(obj).__name__}.{f.name}"
            code = [s for s in _strings(getattr(obj, f.name)) if is_code(s)]
            if code and f.name not in NOT_CODE and name not in NOT_CODE:
                found.setdefault(name, code[0])
        stack.extend(_children(obj))
    return found


def test_the_classifier_tells_code_from_names_and_prose():
    for code in ("nn.Dense(4, 2)", "LR * 0.1", "x[0]", "import argparse", "a = 1", '"b" not in name'):
        assert is_code(code), code
    for fact in ("nn.Dense", "GRAPH_MODE", "image, label", "the loss (mean)", "'text'", "0.5"):
        assert not is_code(fact), fact


def test_the_walker_finds_code_text_in_a_nested_record():
    @dataclasses.dataclass(frozen=True)
    class Inner:
        expr: str

    @dataclasses.dataclass(frozen=True)
    class Outer:
        name: str
        parts: tuple[Inner, ...]

    assert code_fields(Outer("lenet", (Inner("LeNet5(num_classes=10)"),))) == {
        "Inner.expr": "LeNet5(num_classes=10)"
    }


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_no_plan_field_holds_code_text(path: Path):
    loaded = load_config(path)
    shared, plans = build_plans(
        loaded.config,
        ("model", "native"),
        source=path.as_posix(),
        config_dir=path.parent,
        out_dir=REPO / "generated" / loaded.name,
        name=loaded.name,
        config_sha256=loaded.sha256,
    )
    assert code_fields((shared, tuple(plans.values()))) == {}


def test_no_plan_field_is_named_for_code():
    for name, module in sorted(sys.modules.items()):
        if not name.startswith("mscodegen.plan"):
            continue
        for cls in vars(module).values():
            if isinstance(cls, type) and dataclasses.is_dataclass(cls):
                for f in dataclasses.fields(cls):
                    assert not re.search(r"_expr$|_call$|^source_call$", f.name), f"{cls.__name__}.{f.name}"
