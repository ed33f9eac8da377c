"""`validate --run`'s look at the data files themselves: the files MindSpore would fail on mid-epoch.

- image_folder: every file of the class sub-directories (what ImageFolderDataset reads without
  `extensions`) decoded once with MindSpore's own decoder (vision.Decode), in a child process: the
  generator never imports MindSpore. A file that crashes the decoder (a JPEG cut inside its header
  kills the process with SIGFPE, in the scripts too) is named as well: the child says which file it
  is at before each decode, and a fresh child goes on after it.
- cifar10: each binary batch must hold whole 3073-byte records (a cut file fails MindSpore's reader);
  file sizes only, no child.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from mscodegen.config.errors import Problem
from mscodegen.config.load import LoadedConfig
from mscodegen.run.preflight import located
from mscodegen.schema.data import Cifar10Data, ImageFolderData
from mscodegen.schema.sources import CIFAR10_BATCHES, CIFAR10_RECORD

LISTED = 20  # bad files named in one problem; the count says how many more
PROGRESS_AFTER = 3.0  # seconds of decoding before the first progress line
PROGRESS_EVERY = 5.0
MAX_CRASHES = 50  # decoder crashes before the check gives up on the folder

# Decodes the files listed in argv[1] (one path a line) from index argv[2] on. Before each file it
# prints the index, after a failure "bad <index> <MindSpore's message>": a crash leaves the index last.
_DECODER = r"""
import re, sys
import numpy as np
from mindspore.dataset import vision

paths = open(sys.argv[1], encoding="utf-8").read().split("\n")
decode = vision.Decode()
for i in range(int(sys.argv[2]), len(paths)):
    print(i, flush=True)
    try:
        decode(np.fromfile(paths[i], dtype=np.uint8))
    except Exception as error:  # MindSpore raises RuntimeError; an unreadable file OSError
        found = re.search(r"^\[ERROR\] (.*)", str(error), re.MULTILINE)
        message = found[1] if found else (str(error).strip().splitlines() or [type(error).__name__])[-1]
        print("bad", i, message.partition(" Dump the abnormal image")[0].strip(), flush=True)
print("done", flush=True)
"""


def data_file_problems(
    loaded: LoadedConfig, *, python: str = sys.executable, progress: Callable[[str], None] | None = None
) -> list[Problem]:
    """One problem per data source (at its `path`) whose files MindSpore cannot read, naming them."""
    cfg = loaded.config
    config_dir = loaded.path.parent
    problems = []
    checked: set[tuple[Path, tuple[str, ...]]] = set()
    for split in ("train", "eval"):
        spec = getattr(cfg.data, split, None)
        if not isinstance(spec, ImageFolderData | Cifar10Data):
            continue
        directory = (config_dir / spec.path).resolve()
        usages = ("train", "test") if getattr(spec, "usage", "") == "all" else (getattr(spec, "usage", ""),)
        if (directory, usages) in checked or not directory.is_dir():  # a missing one: the static checks'
            continue
        checked.add((directory, usages))
        if isinstance(spec, Cifar10Data):
            bad = cifar10_bad_files(directory, usages)
            what = "CIFAR-10 batch file(s) MindSpore cannot read"
        else:
            try:
                bad = unreadable_images(directory, python=python, progress=progress)
            except RuntimeError:  # no MindSpore in this Python: the scripts' runs report that
                continue
            what = "image(s) MindSpore cannot decode"
        if bad:
            lines = [f"{path}: {why}" for path, why in bad[:LISTED]]
            if len(bad) > LISTED:
                lines.append(f"... and {len(bad) - LISTED} more")
            message = f"{len(bad)} {what} in {directory}:\n    " + "\n    ".join(lines)
            problems.append(located(loaded, ("data", split, "path"), message))
    return problems


def cifar10_bad_files(directory: Path, usages: tuple[str, ...]) -> list[tuple[Path, str]]:
    """The batches of `usages` whose size is not a whole number of records, and where the cut is."""
    bad = []
    for path in sorted(p for p in directory.iterdir() if p.suffix == ".bin"):
        size = path.stat().st_size
        whole, extra = divmod(size, CIFAR10_RECORD)
        if extra and any(CIFAR10_BATCHES[u] in path.name for u in usages):
            why = f"{size} bytes is not a whole number of {CIFAR10_RECORD}-byte records: record {whole}"
            why += f" (counting from 0) is cut after {extra} bytes (a truncated download? fetch it again)"
            bad.append((path, why))
    return bad


def _throttled(say: Callable[[int], None]) -> Callable[[int], None]:
    """say(n) for the n-th file decoded: after PROGRESS_AFTER seconds, then every PROGRESS_EVERY."""
    shown = time.monotonic() + PROGRESS_AFTER

    def decoded(current: int) -> None:
        nonlocal shown
        if time.monotonic() >= shown:
            say(current)
            shown = time.monotonic() + PROGRESS_EVERY

    return decoded


def _decode(
    command: list[str],
    scratch: str,
    files: list[Path],
    bad: list[tuple[Path, str]],
    decoded: Callable[[int], None],
) -> tuple[bool, int | None, list[str], int]:
    """One decoder child: whether it finished, the last file it reached, its last other lines and its exit
    code; each file it rejects goes to `bad`."""
    env = {**os.environ, "GLOG_v": "3", "PYTHONUNBUFFERED": "1"}  # MindSpore's warnings: not ours to show
    with subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # one pipe: a full second one could block the child
        text=True,
        errors="replace",
        env=env,
        cwd=scratch,
    ) as child:
        assert child.stdout is not None
        current: int | None = None
        finished, other = False, list[str]()
        for line in child.stdout:
            word, _, rest = line.rstrip("\n").partition(" ")
            if word == "done":
                finished = True
            elif word == "bad":
                index, _, message = rest.partition(" ")
                bad.append((files[int(index)], message))
            elif word.isdigit():
                current = int(word)
                decoded(current)
            elif line.strip():
                other = [*other[-2:], line.strip()]  # the last lines: why a child failed to start
        return finished, current, other, child.wait()


def unreadable_images(
    directory: Path, *, python: str = sys.executable, progress: Callable[[str], None] | None = None
) -> list[tuple[Path, str]]:
    """Each file of the folder that MindSpore's decoder rejects or crashes on, with the reason."""
    # what ImageFolderDataset reads without `extensions`: the files of each class sub-directory
    classes = sorted(p for p in directory.iterdir() if p.is_dir())
    files = [file for c in classes for file in sorted(p for p in c.iterdir() if p.is_file())]
    if not files:
        return []
    bad: list[tuple[Path, str]] = []
    say = progress or (lambda text: print(text, file=sys.stderr, flush=True))
    decoded = _throttled(lambda n: say(f"  decoded {n}/{len(files)} images of {directory} ..."))
    # the child's working directory: MindSpore writes ./abnormal_image.jpg for a JPEG libjpeg rejects
    with tempfile.TemporaryDirectory(prefix="mscodegen-decode-") as scratch:
        listing = Path(scratch) / "images.txt"  # one path a line: argv would be too long for a big folder
        listing.write_text("\n".join(str(p) for p in files), encoding="utf-8")
        start = crashes = 0
        while start < len(files):
            finished, current, other, code = _decode(
                [python, "-c", _DECODER, str(listing), str(start)], scratch, files, bad, decoded
            )
            if finished:
                break
            if current is None:  # no file reached: MindSpore is missing or broken in this Python
                tail = "; ".join(other)
                raise RuntimeError(f"cannot decode images with {python} (exit {code}): {tail}")
            bad.append((files[current], f"crashes MindSpore's decoder ({_signal_name(code)})"))
            crashes += 1
            if crashes >= MAX_CRASHES:
                bad.append((directory, f"stopped after {crashes} crashes; the files after {files[current]}"))
                break
            start = current + 1
    return bad


def _signal_name(code: int) -> str:
    with contextlib.suppress(ValueError):
        if code < 0:
            return f"killed by {signal.Signals(-code).name}"
    return f"exit {code}"
