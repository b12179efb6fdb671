"""Which code produced a result, and the metadata every file tcplab writes carries.

Two things live here:

* `build()` — the identity of the code that shapes a result: the tcplab version,
  the engine build id baked into the compiled module at build time
  (`_core.BUILD_ID`, a hash of the engine crates' sources, see crates/py/build.rs)
  and a hash of the Python modules that turn a scenario into numbers (the
  ns-2 export, the linux engine's driver, the metrics). Every cache key and
  every results-store key includes it, so a changed source file is a cache
  miss, never a stale hit. Presentation-only modules (CLI, plots, reports)
  are left out of the hash: changing a label must not throw the caches away.
* `metadata(...)` — the one function that builds the metadata of an output:
  summary.json, a sweep's sweep.json and the schema metadata of every
  Parquet file written through `write_parquet`.
"""

from __future__ import annotations

# stdlib only, and the slower modules imported where used: the CLI imports this
# module before parsing its arguments (`tcplab --help` stays fast)
import functools
import sys

__all__ = ["build", "build_id", "build_git", "metadata", "units_of", "write_parquet", "read_parquet", "with_metadata",
           "figure_metadata",
           "read_parquet_metadata", "PARQUET_KEY"]

#: The key under which Parquet files carry the metadata (JSON text).
PARQUET_KEY = b"tcplab"

#: Modules (relative to the package) that never change a number: left out of the
#: Python source hash. Anything else, new modules included, is in it.
_PRESENTATION = ("cli.py", "commands/", "plots.py", "reproduce/report.py", "sweep/report.py",
                 "citations.py", "provenance.py", "docs.py", "notebook.py")


def _core():
    from tcplab.scenario import _core as core

    return core()


def build_id() -> str:
    """The engine build id baked at build time (`_core.BUILD_ID`), e.g. "src-34a09e82f397d35b"."""
    try:
        return str(_core().BUILD_ID)
    except (ImportError, AttributeError):
        return "unbuilt"


def build_git() -> str:
    """The git commit the engine was built from ("…-dirty" if its crates differed), or ""."""
    try:
        return str(_core().BUILD_GIT)
    except (ImportError, AttributeError):
        return ""


@functools.lru_cache(maxsize=None)
def python_hash() -> str:
    """12 hex digits of SHA-256 over the result-shaping Python sources of the package."""
    import hashlib
    from pathlib import Path

    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(_PRESENTATION):
            continue
        h.update(rel.encode() + b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:12]


@functools.lru_cache(maxsize=None)
def build() -> str:
    """The build every key includes and every stored row records:
    "<tcplab version>+<engine build id>.py-<python hash>"."""
    from tcplab import __version__

    return f"{__version__}+{build_id()}.py-{python_hash()}"


# --- units -------------------------------------------------------------------------------

_UNITS = {
    # times
    "t": "s", "start_s": "s", "stop_s": "s", "measured_s": "s", "wall_s": "s", "srtt": "s", "rttvar": "s",
    "rto": "s",
    # rates and amounts
    "reference_bps": "bit/s", "rate_bps": "bit/s", "delivered_bytes": "byte",
    # windows, queues, sequence numbers: packets (segments)
    "cwnd": "packets", "ssthresh": "packets", "inflight": "packets", "packets": "packets", "tcp": "packets",
    "udp": "packets", "seq": "packet number", "ack": "packet number", "delivered_packets": "packets",
    "sent_packets": "packets", "arrivals": "packets", "departures": "packets", "drops": "packets",
    "errors": "packets", "retransmissions": "packets", "bottleneck_drops": "packets",
    "tcp_retransmissions": "packets",
    # counts and ratios
    "timeouts": "count", "fast_retransmits": "count", "tcp_timeouts": "count", "tcp_fast_retransmits": "count",
    "backoff": "count", "events": "count", "flows": "count", "replication": "count",
    "utilization": "ratio", "normalized_goodput": "ratio", "normalized_throughput": "ratio",
    "jain_index": "ratio", "share": "ratio", "bottleneck_utilization": "ratio", "bottleneck_loss_rate": "ratio",
    "app_success_percentage": "percent",
}


def _unit(column: str) -> str | None:
    last = column.rsplit(".", 1)[-1]
    if last in _UNITS:
        return _UNITS[last]
    if last.endswith("_bps"):
        return "bit/s"
    if last.endswith("_s"):
        return "s"
    if last.endswith("_us"):
        return "us"
    if last.endswith("_bytes"):
        return "byte"
    return None


def units_of(columns) -> dict[str, str]:
    """column → unit for the columns whose unit tcplab knows (identifiers and labels have none)."""
    return {c: u for c in columns if (u := _unit(str(c))) is not None}


# --- the metadata ------------------------------------------------------------------------


#: The command line `tcplab.cli.main` was given (it may be called in-process with its
#: own argv); None outside the CLI, where the process's argv is recorded.
COMMAND: list[str] | None = None


def _command() -> str:
    import shlex

    if COMMAND is not None:
        return shlex.join(COMMAND)
    argv = list(sys.argv)
    if argv and argv[0].endswith(("/tcplab", "tcplab/__main__.py", "cli.py")):
        argv[0] = "tcplab"
    return shlex.join(argv)


def metadata(*, engine: str | None = None, engine_version: str | None = None, seed=None,
             units: dict | None = None, **extra) -> dict:
    """The metadata of an output: what wrote it, with which code, where, when.

    `engine_version` is the engine's own (ns-2's version for ns2, the kernel's
    `uname -r` for linux, the engine crate's for packet); `units` maps column
    names to units (see `units_of`); `extra` items are added as they are."""
    import datetime as _dt
    import platform

    from tcplab import __version__

    try:
        rustc = str(_core().RUSTC_VERSION)
    except (ImportError, AttributeError):
        rustc = ""
    meta = {
        "tcplab_version": __version__,
        "build": build(),
        "build_id": build_id(),
        "git": build_git(),
        "engine": engine,
        "engine_version": engine_version,
        "command": _command(),
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "host": platform.node(),
        "platform": platform.platform(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "rust": rustc,
        "seed": seed,
    }
    if units is not None:
        meta["units"] = dict(units)
    meta.update(extra)
    return meta


def figure_metadata(path, **extra) -> dict:
    """`savefig(metadata=...)` for a figure written to `path`: which build drew it, with
    what command, when (PNG text chunks; SVG's Creator/Description/Date; PDF's Creator)."""
    import json
    from pathlib import Path

    m = metadata(**extra)
    desc = (f"tcplab {m['tcplab_version']}, build {m['build']}"
            + (f", git {m['git']}" if m["git"] else "") + f"; {m['command']}")
    fmt = Path(path).suffix.lower().lstrip(".")
    if fmt == "png":
        return {"Software": f"tcplab {m['build']}", "Description": desc, "Creation Time": m["created"],
                "tcplab": json.dumps(m, default=str)}
    if fmt == "svg":
        return {"Creator": f"tcplab {m['build']}", "Description": desc, "Date": m["created"]}
    if fmt == "pdf":
        return {"Creator": f"tcplab {m['build']}", "Subject": desc}
    return {}


def csv_metadata_line(engine: str | None = None, engine_version: str | None = None, seed=None) -> str:
    """The first line of a CSV that stands alone (no summary.json beside it): a '#'
    comment holding `metadata()` as JSON. pandas reads the file with comment="#"."""
    import json

    return "# tcplab " + json.dumps(metadata(engine=engine, engine_version=engine_version, seed=seed),
                                    default=str) + "\n"


def write_parquet(df, path, meta: dict) -> None:
    """Write a DataFrame as Parquet with `meta` (units narrowed to its columns) in the
    schema metadata under the key "tcplab" (JSON), beside pandas' own."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(df, preserve_index=False)
    table = with_metadata(table, meta)
    pq.write_table(table, path)


def read_parquet(path):
    """A Parquet file as a DataFrame, each column its own block: pyarrow hands the
    decoded columns over instead of stacking those of one dtype into a block (a copy
    of every value into fresh pages: on paper C's per-ack traces, 2.6 M rows, 0.13-0.96
    CPU-s a read against 0.13-0.20). The values and dtypes are those of
    `pandas.read_parquet`, and the frame takes writes as any other: a column pyarrow
    lent without a copy (one chunk, no nulls) is read-only memory, so it is copied, as
    are categorical columns (their codes may be lent too)."""
    import numpy as np
    import pandas as pd

    df = pd.read_parquet(path, to_pandas_kwargs={"split_blocks": True, "self_destruct": True})
    for c in df.columns:
        s = df[c]
        if isinstance(s.dtype, pd.CategoricalDtype):
            df[c] = s.copy()
        elif s.dtype.kind in "biufcmM" and not np.asarray(s.array).flags.writeable:
            df[c] = np.array(s.array)
    return df


def with_metadata(table, meta: dict):
    """An Arrow table with `meta` in its schema metadata (units narrowed to its columns)."""
    import json

    m = dict(meta)
    m["units"] = {c: u for c, u in (meta.get("units") or units_of(table.column_names)).items()
                  if c in table.column_names}
    old = dict(table.schema.metadata or {})
    old[PARQUET_KEY] = json.dumps(m, default=str).encode()
    return table.replace_schema_metadata(old)


def read_parquet_metadata(path) -> dict:
    """The tcplab metadata of a Parquet file ({} if it has none)."""
    import json

    import pyarrow.parquet as pq

    raw = (pq.read_schema(path).metadata or {}).get(PARQUET_KEY)
    return json.loads(raw) if raw else {}
