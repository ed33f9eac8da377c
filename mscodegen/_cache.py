"""The user cache directory: black output and compiled templates, to make `mscodegen new` fast.

Everything here is an optimisation only. Entries are content-addressed (the key covers every input
that can change the result) and carry a sha256 of their payload; a missing, corrupt or unwritable
entry is a miss, never an error, and never changes what is generated.

Location: $MSCODEGEN_CACHE_DIR, else $XDG_CACHE_HOME/mscodegen, else ~/.cache/mscodegen.
MSCODEGEN_NO_CACHE=1 turns it off.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path

MAX_ENTRIES = 256  # per kind; each entry is a generated script (~15 kB) or a compiled template


def cache_root() -> Path | None:
    if os.environ.get("MSCODEGEN_NO_CACHE", "") not in ("", "0"):
        return None
    explicit = os.environ.get("MSCODEGEN_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mscodegen"


def key(*parts: str | bytes) -> str:
    """sha256 over the parts, each length-prefixed so that no two part lists collide."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8") if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def read(path: Path) -> bytes | None:
    """The payload stored at path, or None if absent, unreadable or corrupt."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    digest, payload = data[:32], data[32:]
    if len(digest) != 32 or hashlib.sha256(payload).digest() != digest:
        return None
    return payload


def write(path: Path, payload: bytes) -> None:
    """Store payload atomically (temp file + rename); silently does nothing on any OS error."""
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(hashlib.sha256(payload).digest() + payload)
        os.replace(tmp, path)
        tmp = None
        _prune(path.parent)
    except OSError:
        pass
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                tmp.unlink()


def _prune(directory: Path) -> None:
    """Keep the newest MAX_ENTRIES files (a miss path only: one scandir)."""
    entries = [e for e in os.scandir(directory) if e.is_file() and not e.name.startswith(".")]
    if len(entries) <= MAX_ENTRIES:
        return
    entries.sort(key=lambda e: e.stat().st_mtime)
    for entry in entries[: len(entries) - MAX_ENTRIES // 2]:
        with contextlib.suppress(OSError):
            os.unlink(entry.path)
