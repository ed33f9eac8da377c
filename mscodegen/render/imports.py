"""A plan's import records as lines, in isort's default layout (ruff's `I` rules).

Two groups, the standard library then third-party; in each, plain `import x` lines before
`from x import y` lines; one `as` alias per line.
"""

from __future__ import annotations

import sys

from mscodegen.plan.imports import Import


def import_groups(imports: tuple[Import, ...]) -> tuple[list[str], list[str]]:
    """The standard library's import lines, and the third-party ones."""
    groups: dict[bool, list[str]] = {True: [], False: []}
    for i in sorted((i for i in imports if not i.name), key=lambda i: _as(i.module, i.alias).lower()):
        groups[_stdlib(i.module)].append(f"import {_as(i.module, i.alias)}")
    named = [i for i in imports if i.name]
    for module in sorted({i.module for i in named}, key=str.lower):
        names = sorted((_as(i.name, i.alias) for i in named if i.module == module), key=_member_key)
        lines = [f"from {module} import {n}" for n in names if " as " in n]
        if plain := [n for n in names if " as " not in n]:
            lines.append(f"from {module} import {', '.join(plain)}")
        groups[_stdlib(module)] += sorted(lines, key=lambda line: _member_key(line.split(maxsplit=3)[3]))
    return groups[True], groups[False]


def _as(name: str, alias: str) -> str:
    return f"{name} as {alias}" if alias else name


def _stdlib(module: str) -> bool:
    return module.split(".")[0] in sys.stdlib_module_names


def _member_key(name: str) -> tuple[int, str, str]:
    """isort's order_by_type: CONSTANTS, then Classes, then the rest; each case-insensitively."""
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return (kind, name.lower(), name)
