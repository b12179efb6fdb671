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
    return path
