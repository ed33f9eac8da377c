"""The import block of a generated script, decided in Python (never in a template).

Output follows isort's default layout (ruff's `I` rules): stdlib, then third-party;
plain `import x` lines before `from x import y` lines; one `as` alias per line.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

_STDLIB = sys.stdlib_module_names


@dataclass
class Imports:
    plain: set[str] = field(default_factory=set)  # "numpy as np", "json"
    from_names: dict[str, set[str]] = field(default_factory=dict)  # "mindspore" -> {"nn", "dataset as ds"}

    def module(self, name: str, alias: str | None = None) -> None:
        self.plain.add(f"{name} as {alias}" if alias else name)

    def names(self, module: str, *names: str) -> None:
        self.from_names.setdefault(module, set()).update(names)

    def lines(self) -> list[str]:
        """Import lines, with "" between the stdlib and third-party groups."""
        groups: dict[bool, list[str]] = {True: [], False: []}
        for plain in sorted(self.plain, key=str.lower):
            groups[plain.split(".")[0].split()[0] in _STDLIB].append(f"import {plain}")
        for module in sorted(self.from_names, key=str.lower):
            names = sorted(self.from_names[module], key=_member_key)
            aliased = [n for n in names if " as " in n]
            plain_names = [n for n in names if " as " not in n]
            lines = [f"from {module} import {n}" for n in aliased]
            if plain_names:
                lines.append(f"from {module} import {', '.join(plain_names)}")
            groups[module.split(".")[0] in _STDLIB].extend(sorted(lines, key=_from_key))
        stdlib, third = groups[True], groups[False]
        return [*stdlib, *([""] if stdlib and third else []), *third]


def _member_key(name: str) -> tuple[int, str, str]:
    """isort's order_by_type: CONSTANTS, then Classes, then the rest; each case-insensitively."""
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return (kind, name.lower(), name)


def _from_key(line: str) -> tuple[str, tuple[int, str, str]]:
    _, module, _, first = line.split(maxsplit=3)
    return (module.lower(), _member_key(first))
