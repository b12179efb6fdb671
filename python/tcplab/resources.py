"""Files that ship inside the package: the example scenarios, the sweeps, and the
linux engine's `tcplab-emu` binary (in a wheel).

In a repository checkout `scenarios/` and `sweeps/` are links to
`python/tcplab/data/...`, so the README's `tcplab run scenarios/x.toml` works there
as written; from an installed wheel the same path works in any directory: a path
that does not exist as given, and names a packaged file (`scenarios/x.toml`,
`sweeps/x.toml`), is read from the package.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["data_dir", "scenario_files", "sweep_files", "locate", "emulator"]

_KINDS = ("scenarios", "sweeps")


def data_dir() -> Path:
    """The package's data directory (a real directory: the package is never zipped)."""
    return Path(str(resources.files("tcplab") / "data"))


def scenario_files() -> list[Path]:
    """The packaged example scenarios, sorted by name."""
    return sorted((data_dir() / "scenarios").glob("*.toml"))


def sweep_files() -> list[Path]:
    """The packaged sweep files, sorted by name."""
    return sorted((data_dir() / "sweeps").glob("*.toml"))


def locate(path: str | Path) -> Path:
    """`path` if it exists as given; else the packaged file it names (`scenarios/x.toml`,
    `sweeps/x.toml`, with or without a leading `./`); else `path` unchanged (the caller
    reports it missing)."""
    p = Path(path)
    if p.exists() or p.is_absolute():
        return p
    parts = p.parts
    if len(parts) >= 2 and parts[0] in _KINDS:
        cand = data_dir().joinpath(*parts)
        if cand.is_file():
            return cand
    return p


def emulator() -> Path | None:
    """The `tcplab-emu` binary shipped in the wheel (tcplab/bin/), if there is one."""
    cand = Path(str(resources.files("tcplab") / "bin" / "tcplab-emu"))
    return cand if cand.is_file() else None
