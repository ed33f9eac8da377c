"""What writing into an output directory needs besides atomic writes: a located message for bytes that
are not UTF-8, backup names that never replace an earlier backup, and the temp files a killed write
left behind."""

from __future__ import annotations

import contextlib
import os
import re
import stat
import time
from collections.abc import Iterable
from pathlib import Path

# atomic_write's temp files: tempfile.mkstemp(prefix=".<name>.", suffix=".tmp"), whose random part is
# 8 characters of tempfile's alphabet. Only files of this shape, for a name mscodegen writes, are removed.
_TEMP_RE = re.compile(r"^\.(?P<name>.+)\.[a-z0-9_]{8}\.tmp$")
_BACKUP_RE = re.compile(r"\.(bak|orig)(\.[0-9]+)?$")
# A temp file lives for one write (write, fsync, rename: well under a second); one this old was left
# by a killed process, not by a concurrent `new` still writing it.
STALE_TEMP_SECONDS = 300


def not_utf8(raw: bytes, exc: UnicodeDecodeError) -> str:
    """Where ``raw`` stops being UTF-8: ``line:column: byte 0x.. is not UTF-8``."""
    line = raw.count(b"\n", 0, exc.start) + 1
    column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
    return f"{line}:{column}: byte 0x{raw[exc.start]:02x} is not UTF-8"


def free_name(path: Path, suffix: str) -> Path:
    """``<path><suffix>``, or ``<path><suffix>.1``, ``.2``, ...: the first that does not exist yet."""
    candidate = path.with_name(path.name + suffix)
    number = 0
    while os.path.lexists(candidate):
        number += 1
        candidate = path.with_name(f"{path.name}{suffix}.{number}")
    return candidate


def latest_name(path: Path, suffix: str) -> Path:
    """The newest backup :func:`free_name` made (``<path><suffix>`` when there is none)."""
    found = path.with_name(path.name + suffix)
    number = 1
    while os.path.lexists(path.with_name(f"{path.name}{suffix}.{number}")):
        found = path.with_name(f"{path.name}{suffix}.{number}")
        number += 1
    return found


def remove_stale_temps(directories: Iterable[Path], names: Iterable[str]) -> list[Path]:
    """Remove the temp files a killed write of one of ``names`` (or its backups) left in ``directories``.

    Only regular files named like atomic_write's temp files for those names, and untouched for
    STALE_TEMP_SECONDS, are removed; the removed paths are returned.
    """
    known = set(names)
    cutoff = time.time() - STALE_TEMP_SECONDS
    removed = []
    for directory in directories:
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            match = _TEMP_RE.match(entry.name)
            if not match or _BACKUP_RE.sub("", match.group("name")) not in known:
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and info.st_mtime < cutoff:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)
                    removed.append(Path(entry.path))
    return removed
