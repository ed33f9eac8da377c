"""Every MindSpore name the scripts in generated/ use, and the keywords they pass, checked in each version.

The five examples the matrix runs exercise one path each; the golden scripts of every example use more
(EMA, other optimizers and schedules, transforms, fine-tuning). This reads them all with `ast`:
module-level names reached from a MindSpore import (`ms.amp.DynamicLossScaler`, `vision.Resize`, imported
names) and the keywords of calls to them, then asks each version's interpreter whether the name resolves
and its signature takes those keywords. Methods called on objects (`model.fit(...)`) are not seen here;
the runs cover those the examples use.
"""

from __future__ import annotations

import ast
import json
import subprocess
from collections.abc import Iterable
from pathlib import Path

Uses = dict[str, list[str]]  # dotted name -> the keywords passed to it anywhere (sorted)


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> the MindSpore module or object it stands for, from every import in the file."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "mindspore":
                    found[a.asname or a.name.split(".")[0]] = a.name if a.asname else "mindspore"
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "mindspore":
            for a in node.names:
                found[a.asname or a.name] = f"{node.module}.{a.name}"
    return found


def _dotted(node: ast.expr, aliases: dict[str, str]) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id in aliases:
        return ".".join([aliases[node.id], *reversed(parts)])
    return None


def used_apis(scripts: Iterable[Path]) -> Uses:
    uses: dict[str, set[str]] = {}
    for script in scripts:
        tree = ast.parse(script.read_text(encoding="utf-8"))
        aliases = _aliases(tree)
        for imported in aliases.values():
            uses.setdefault(imported, set())
        inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and id(node) not in inner:  # the whole chain, once
                chain = _dotted(node, aliases)
                if chain:
                    uses.setdefault(chain, set())
            if isinstance(node, ast.Call):
                called = _dotted(node.func, aliases)
                if called:
                    uses.setdefault(called, set()).update(k.arg for k in node.keywords if k.arg)
    return {name: sorted(keys) for name, keys in sorted(uses.items())}


# Run by a version's interpreter: {name: keywords} on stdin, {name: problem} (only problems) on stdout.
PROBE = """
import importlib, inspect, json, sys
problems = {}
for name, keywords in json.loads(sys.stdin.read()).items():
    parts, obj = name.split("."), None
    try:
        obj = importlib.import_module(parts[0])
        for i, part in enumerate(parts[1:], 1):
            try:
                obj = getattr(obj, part)
            except AttributeError:
                obj = importlib.import_module(".".join(parts[: i + 1]))
    except Exception as exc:
        problems[name] = f"missing ({type(exc).__name__})"
        continue
    if not keywords:
        continue
    try:
        params = inspect.signature(obj).parameters.values()
    except (TypeError, ValueError):
        continue
    if any(p.kind is p.VAR_KEYWORD for p in params):
        continue
    rejected = sorted(set(keywords) - {p.name for p in params})
    if rejected:
        problems[name] = "does not take " + ", ".join(rejected)
print(json.dumps(problems))
"""


def api_problems(uses: Uses, python: Path) -> dict[str, str]:
    """{name: what is wrong} in the version `python` has; {} when every name and keyword is there."""
    proc = subprocess.run(
        [str(python), "-c", PROBE], input=json.dumps(uses), capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        return {"(probe)": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
    found: dict[str, str] = json.loads(proc.stdout.strip().splitlines()[-1])
    return found
