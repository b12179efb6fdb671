"""Where tcplab keeps what it can compute again: the per-user cache directory.

`tcplab reproduce` caches its sweeps and traced runs here, not in the report
directory, so that reports stay small (figures, verdicts, data tables) and
every report directory of the same user shares one cache. Entries are keyed
by what produced them (`tcplab.sweep.keys.point_key`: the resolved scenario,
the engine and its version), so a shared cache never mixes runs up.

The directory is, first found:

1. the `--cache DIR` option of the command (`cache_dir(explicit)`);
2. ``$TCPLAB_CACHE``;
3. ``$XDG_CACHE_HOME/tcplab``;
4. ``~/.cache/tcplab``.

Deleting it is always safe: whatever is missing is computed again.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV = "TCPLAB_CACHE"


def cache_dir(explicit: str | Path | None = None) -> Path:
    """The cache directory (not created): `explicit`, else $TCPLAB_CACHE,
    else $XDG_CACHE_HOME/tcplab, else ~/.cache/tcplab."""
    if explicit:
        return Path(explicit).expanduser()
    if os.environ.get(ENV):
        return Path(os.environ[ENV]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "tcplab"


def checked_cache_dir(explicit: str | Path | None = None) -> Path:
    """`cache_dir(explicit)`, created if missing; UserError naming where it came from
    (--cache, $TCPLAB_CACHE or the default) when it is not a writable directory."""
    from tcplab.errors import UserError

    path = cache_dir(explicit)
    origin = "--cache" if explicit else (f"${ENV}" if os.environ.get(ENV) else "the cache directory")
    if path.exists() and not path.is_dir():
        raise UserError(f"{origin}: {path} is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"{origin}: cannot create {path}: {exc.strerror}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise UserError(f"{origin}: {path} is not writable")
    from tcplab.outdir import _check_writable

    _check_writable(path, origin, str(path))  # a read-only mount, no free space
    return path


# --- entries that prove what they hold -------------------------------------------------------
#
# A cache entry is a folder (a reproduce run: `run.json`, `flows.parquet`, ...) whose
# index file records the key the entry was stored under, the SHA-256 of every other
# file, and a checksum of the index itself. `verify_entry` checks all three before an
# entry is served; an entry that fails is moved aside (`quarantine`, never deleted),
# reported in one line, and computed again. An index without a checksum was written by
# an older build: a miss, computed again like any other.

#: the format of an entry's index (`seal`); an index without it is an older build's
ENTRY_FORMAT = 2
QUARANTINE = "quarantine"


class DamagedEntry(Exception):
    """A cache entry that cannot be served: the message says why (one line)."""


def file_sha256(path: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _doc_checksum(doc: dict) -> str:
    import hashlib
    import json

    body = {k: v for k, v in doc.items() if k != "checksum"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, allow_nan=True).encode()).hexdigest()


def seal(folder: Path, index: str, key: str, payload: dict) -> None:
    """Write `folder/index`: `payload` with the entry's `key`, the SHA-256 of every
    other file in `folder` and a checksum of the whole (`verify_entry` checks them)."""
    import json

    files = {p.name: file_sha256(p) for p in sorted(folder.iterdir()) if p.is_file() and p.name != index}
    doc = json.loads(json.dumps({"format": ENTRY_FORMAT, "key": key, "files": files, **payload},
                                default=float))
    doc["checksum"] = _doc_checksum(doc)
    (folder / index).write_text(json.dumps(doc))


def verify_entry(folder: Path, index: str, key: str) -> dict:
    """The index of the entry `folder`, after checking that it is whole, that it was
    stored under `key` and that every file it lists has the content it had; raises
    `DamagedEntry` naming what is wrong."""
    import json

    path = folder / index
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DamagedEntry(f"no {index}") from None
    except IsADirectoryError:
        raise DamagedEntry(f"{index} is a folder") from None
    try:
        doc = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise DamagedEntry(f"{index} is not text (garbled)") from None
    except ValueError as exc:
        where = f" ({exc.msg} at byte {exc.pos})" if hasattr(exc, "msg") else ""
        raise DamagedEntry(f"{index} is not whole JSON{where}") from None
    except RecursionError:
        raise DamagedEntry(f"{index} is nested too deeply") from None
    if not isinstance(doc, dict):
        raise DamagedEntry(f"{index} is not a JSON object")
    if "checksum" not in doc or doc.get("format") != ENTRY_FORMAT:
        raise DamagedEntry(f"{index} has no checksum (written by an older build)")
    try:
        same = doc["checksum"] == _doc_checksum(doc)
    except (ValueError, TypeError, RecursionError):
        same = False
    if not same:
        raise DamagedEntry(f"{index} does not match its checksum")
    if doc.get("key") != key:
        raise DamagedEntry(f"the entry was stored under key {doc.get('key')!r}, not {key!r} (misplaced)")
    files = doc.get("files")
    if not isinstance(files, dict):
        raise DamagedEntry(f"{index} lists no files")
    for name, digest in files.items():
        if not isinstance(name, str) or not name or "/" in name or name in (".", "..") or "\0" in name:
            raise DamagedEntry(f"{index} lists a file named {str(name)[:40]!r}")
        f = folder / name
        if not f.is_file():
            raise DamagedEntry(f"{name} is missing")
        if file_sha256(f) != digest:
            raise DamagedEntry(f"{name} does not match its checksum (changed or cut)")
    return doc


def quarantine(entry: Path, root: Path, why: str, what: str = "cache entry") -> Path:
    """Move `entry` (a file or a folder) into `root/quarantine/` — never delete it —
    and say so on stderr in one line; returns where it went."""
    import sys
    import time

    q = root / QUARANTINE
    q.mkdir(parents=True, exist_ok=True)
    dest = q / entry.name
    n = 1
    while dest.exists() or dest.is_symlink():
        n += 1
        dest = q / f"{entry.name}.{time.strftime('%Y%m%d-%H%M%S')}-{n}"
    os.replace(entry, dest)
    print(f"tcplab: warning: {what} {entry}: {why}; moved to {dest} and computed again", file=sys.stderr)
    return dest
