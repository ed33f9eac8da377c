"""A plan's import records as lines, in isort's default layout (ruff's `I` rules).

Two groups, the standard library then third-party; in each, plain `import x` lines before
`from x import y` lines; one `as` alias per line.
"""

from __future__ import annotations

import sys

from mscodegen.plan.imports import Import


def import_groups(imports: tuple[Import, ...]) -> tuple[list[str], list[str]]:
    """The standard library's import lines, and the third-party ones."""
    plain: list[str] = []
    from_names: dict[str, list[str]] = {}
    for i in imports:
        text = f"{i.name or i.module} as {i.alias}" if i.alias else i.name or i.module
        if i.name:
            from_names.setdefault(i.module, []).append(text)
        else:
            plain.append(text)
    groups: dict[bool, list[str]] = {True: [], False: []}
    for text in sorted(plain, key=str.lower):
        groups[_stdlib(text)].append(f"import {text}")
    for module in sorted(from_names, key=str.lower):
        names = sorted(from_names[module], key=_member_key)
        lines = [f"from {module} import {n}" for n in names if " as " in n]
        if plain_names := [n for n in names if " as " not in n]:
            lines.append(f"from {module} import {', '.join(plain_names)}")
        groups[_stdlib(module)].extend(sorted(lines, key=_from_key))
    return groups[True], groups[False]


def _stdlib(module: str) -> bool:
    return module.split(".")[0].split()[0] in sys.stdlib_module_names


def _member_key(name: str) -> tuple[int, str, str]:
    """isort's order_by_type: CONSTANTS, then Classes, then the rest; each case-insensitively."""
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return (kind, name.lower(), name)


def _from_key(line: str) -> tuple[str, tuple[int, str, str]]:
    _, module, _, first = line.split(maxsplit=3)
    return (module.lower(), _member_key(first))
