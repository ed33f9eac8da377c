"""A plan's import records as lines, in isort's default layout (ruff's `I` rules).

Three groups, the standard library, third-party, then the files beside the script; in each, plain `import x` lines before
`from x import y` lines; one `as` alias per line.
"""

from __future__ import annotations

import sys

from mscodegen.plan.imports import Import

# The files written beside the scripts that they import from (ruff's known-local-folder: a section last)
LOCAL_MODULES = frozenset({"checkpoints", "train_model", "train_native"})


def import_groups(imports: tuple[Import, ...]) -> tuple[list[str], list[str]]:
    """The standard library's import lines, and the third-party ones."""
    sections = _sections(imports)
    return sections["stdlib"], sections["third_party"]


def local_imports(imports: tuple[Import, ...]) -> list[str]:
    """The import lines of the files beside the script (LOCAL_MODULES)."""
    return _sections(imports)["local"]


def _sections(imports: tuple[Import, ...]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {"stdlib": [], "third_party": [], "local": []}
    for i in sorted((i for i in imports if not i.name), key=lambda i: _as(i.module, i.alias).lower()):
        groups[_section(i.module)].append(f"import {_as(i.module, i.alias)}")
    named = [i for i in imports if i.name]
    for module in sorted({i.module for i in named}, key=str.lower):
        names = sorted((_as(i.name, i.alias) for i in named if i.module == module), key=_member_key)
        lines = [f"from {module} import {n}" for n in names if " as " in n]
        if plain := [n for n in names if " as " not in n]:
            lines.append(f"from {module} import {', '.join(plain)}")
        groups[_section(module)] += sorted(lines, key=lambda line: _member_key(line.split(maxsplit=3)[3]))
    return groups


def _as(name: str, alias: str) -> str:
    return f"{name} as {alias}" if alias else name


def _section(module: str) -> str:
    top = module.split(".")[0]
    return "local" if top in LOCAL_MODULES else "stdlib" if top in sys.stdlib_module_names else "third_party"


def _member_key(name: str) -> tuple[int, str, str]:
    """isort's order_by_type: CONSTANTS, then Classes, then the rest; each case-insensitively."""
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return (kind, name.lower(), name)
