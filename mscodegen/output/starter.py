"""`mscodegen init`: an example config shipped with mscodegen, copied out as a starting point.

The examples are examples/ in the repository and mscodegen/examples in the wheel. `copy_example` writes
the config and what it reads beside it, at the same relative places: its `extends` bases, the data
folders it names, the modules its factories import, and the helper its header asks to run first
(`# run first: python make_pretrained.py`), so that `mscodegen new DEST` works at once. Nothing that
exists is overwritten.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from mscodegen.catalog.suggest import did_you_mean

_RUN_FIRST = re.compile(r"^# run first: python (\S+\.py)", re.MULTILINE)


class StarterError(Exception):
    """An unknown example name or a destination that cannot be written."""


@dataclass(frozen=True)
class Example:
    name: str
    path: Path
    summary: str  # the first sentence of its header comment


@dataclass
class Copied:
    config: Path
    written: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)  # existed already: left as they were
    run_first: list[str] = field(default_factory=list)  # helpers the user runs before training


def examples_dir() -> Path:
    packaged = Path(__file__).parents[1] / "examples"  # the wheel: mscodegen/examples
    return packaged if packaged.is_dir() else Path(__file__).parents[2] / "examples"


def list_examples() -> list[Example]:
    paths = sorted(examples_dir().glob("*.yaml"))
    return [Example(path.stem, path, _summary(path.read_text(encoding="utf-8"))) for path in paths]


def _summary(text: str, width: int = 90) -> str:
    """The header comment's first sentence, cut to `width` characters."""
    header = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        header.append(line.lstrip("#").strip())
    sentence = re.split(r"(?<=[.:])\s", " ".join(header), maxsplit=1)[0].rstrip(".:")
    return sentence if len(sentence) <= width else sentence[: width - 3].rstrip() + "..."


def find_example(name: str) -> Example:
    """The example called `name`, or the only one whose name contains it ("quickstart")."""
    examples = list_examples()
    exact = [e for e in examples if e.name == name]
    matches = exact or [e for e in examples if name in e.name]
    if len(matches) == 1:
        return matches[0]
    names = [e.name for e in examples]
    if matches:
        raise StarterError(f"{name!r} matches several examples: {', '.join(e.name for e in matches)}")
    raise StarterError(f"no example {name!r}{did_you_mean(name, names)}; `mscodegen init --list` shows them")


def copy_example(example: Example, dest: Path) -> Copied:
    """Write `example` as `dest` (a .yaml file) and its companions beside it."""
    from mscodegen.config.compose import compose
    from mscodegen.config.load import load_config

    if dest.suffix not in (".yaml", ".yml"):
        raise StarterError(f"{dest}: name the config to write with .yaml, e.g. {dest.with_suffix('.yaml')}")
    if dest.exists():
        raise StarterError(f"{dest} exists; choose another name (init never overwrites a file)")
    source_dir = example.path.parent
    companions = [base for base in compose(example.path).files if base != example.path]
    config = load_config(example.path).config
    for spec in (config.data.train, config.data.eval):
        path = getattr(spec, "path", None)
        if path is not None:
            companions.append(source_dir / path)
    for module in _imported_modules(config):
        candidate = source_dir / f"{module}.py"
        if candidate.is_file():
            companions.append(candidate)
    text = example.path.read_text(encoding="utf-8")
    run_first = _RUN_FIRST.findall(text)
    companions += [source_dir / helper for helper in run_first]
    copied = Copied(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(text, encoding="utf-8")
    copied.written.append(dest)
    for companion in dict.fromkeys(companions):
        target = dest.parent / companion.relative_to(source_dir)
        if target.exists():
            copied.kept.append(target)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if companion.is_dir():
            shutil.copytree(companion, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(companion, target)
        copied.written.append(target)
    copied.run_first = [f"python {dest.parent / helper}" for helper in run_first]
    return copied


def _imported_modules(config: object) -> list[str]:
    """The modules of every `module:name` import path in the config (factories, losses, metrics, ...)."""
    found: list[str] = []

    def visit(value: object) -> None:
        if isinstance(value, dict):
            for item in value.values():
                visit(item)
        elif isinstance(value, list | tuple):
            for item in value:
                visit(item)
        elif isinstance(value, str) and re.fullmatch(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*", value):
            found.append(value.split(":")[0].split(".")[0])

    dump = getattr(config, "model_dump", None)
    visit(dump() if dump else config)
    return found
