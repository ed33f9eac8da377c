"""One virtual environment per MindSpore version, outside git: built with uv (seconds) or pip, reused.

Measured on this project's 2-core machine: uv builds one in 12-25 s from a cold cache and 2-5 s from
a warm one; pip takes 50-120 s every time, because the registry's responses carry no caching headers
and pip's HTTP cache keeps nothing. Each environment is about 2.7 GB.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import tomllib

# Every MindSpore release PyPI offers for CPython 3.11 (2.6 and older have no 3.11 wheels; a new release
# is added here, to pyproject.toml's [run] range, and the matrix is run again).
VERSIONS = ("2.7.0", "2.7.1", "2.7.2", "2.8.0", "2.9.0", "2.10.0")
REFERENCE = "2.10.0"  # the dev extra's pin, which the golden tests and the rest of the suite run on
MARKER = ".mscodegen-compat"  # in an environment: the requirements it was built with

ENV_VAR = "MSCODEGEN_COMPAT_DIR"


def default_dir() -> Path:
    """$MSCODEGEN_COMPAT_DIR, else the user's cache directory: never inside the repository."""
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR])
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "mscodegen-compat"


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def run_extra(pyproject: Path) -> list[str]:
    """The `[run]` extra of pyproject.toml: what a user installs to run the generated scripts."""
    data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    extra: list[str] = data["project"]["optional-dependencies"]["run"]
    return extra


def requirements(version: str, run: list[str]) -> list[str]:
    """`run` with its MindSpore range narrowed to exactly `version`."""
    out = [f"mindspore=={version}"]
    out += [req for req in run if re.split(r"[<>=!~ ;\[]", req, maxsplit=1)[0].lower() != "mindspore"]
    return out


@dataclass(frozen=True)
class Env:
    version: str
    path: Path
    how: str  # "reused", "uv", "pip" or "failed"
    seconds: float
    error: str = ""

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"


def installed_mindspore(python: Path) -> str | None:
    """The MindSpore version installed for `python` (from its metadata: nothing is imported)."""
    if not python.exists():
        return None
    check = "import importlib.metadata as m; print(m.version('mindspore'))"
    proc = subprocess.run([str(python), "-c", check], capture_output=True, text=True, check=False)
    return proc.stdout.strip() if proc.returncode == 0 else None


def find_uv() -> str | None:
    """uv beside this Python (`pip install uv`, the dev extra has it), else on PATH."""
    return shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")


def ensure_env(version: str, envs: Path, reqs: list[str], *, installer: str, rebuild: bool, log: Path) -> Env:
    """envs/ms-<version>: reused when it holds that MindSpore (unless `rebuild`), else built afresh."""
    path = envs / f"ms-{version}"
    start = time.monotonic()
    if not rebuild and installed_mindspore(path / "bin" / "python") == version:
        return Env(version, path, "reused", round(time.monotonic() - start, 1))
    uv = find_uv() if installer in ("auto", "uv") else None
    if installer == "uv" and uv is None:
        return Env(version, path, "failed", 0.0, "--installer uv: no uv here (pip install uv)")
    shutil.rmtree(path, ignore_errors=True)
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as out:
        if uv:
            steps = [
                [sys.executable, "-m", "venv", "--without-pip", str(path)],
                [uv, "pip", "install", "--python", str(path / "bin" / "python"), *reqs],
            ]
        else:
            steps = [[sys.executable, "-m", "venv", str(path)], [str(path / "bin" / "pip"), "install", *reqs]]
        for cmd in steps:
            print("$ " + " ".join(cmd), file=out, flush=True)
            if subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, check=False).returncode:
                tail = log.read_text(errors="replace").strip().splitlines()[-1:]
                return Env(version, path, "failed", round(time.monotonic() - start, 1), " ".join(tail))
    (path / MARKER).write_text("\n".join(reqs) + "\n")
    return Env(version, path, "uv" if uv else "pip", round(time.monotonic() - start, 1))
