"""The results store: one Parquet row per point, one file per batch.

Layout of a sweep directory::

    DIR/sweep.json                 what was swept (name, engine, axes, metric), for `tcplab results`
    DIR/store/part-<ns>-<pid>-<seq>.parquet   one file per batch, written to a temporary name
                                   and renamed (os.replace), so a file is there whole or not at all
    DIR/plot.png                   the default plot

A row: `key` (hash of resolved scenario, engine, engine version, build), the axis
values (one column per axis path, as written in the sweep file), `replication`,
`seed`, `engine`, `engine_version`, `build` (the code that computed it:
`tcplab.provenance.build()`), `status` (ok | failed), `error`, `wall_s`,
the flattened metrics, and `scenario` (the resolved scenario as JSON). Each
Parquet file carries the sweep's metadata (`tcplab.provenance.metadata`, with
units per column) in its schema metadata under "tcplab".

After the code changes, a re-run computes every point again (new keys) beside
the old rows; `connect(build=...)` and `tcplab results --build` pick one build.

A kill -9 loses at most the batch in progress; a re-run reads the keys already
stored and computes only the others. Should a key appear twice (a retried
failure, two sweeps sharing a directory), readers keep one row per key: an ok
row over a failed one, then the newest.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tcplab.errors import UserError

PART_GLOB = "part-*.parquet"


class Store:
    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.parts = self.root / "store"
        self._seq = 0

    # --- writing ---------------------------------------------------------------------

    def write_meta(self, meta: dict) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        _atomic_write(self.root / "sweep.json", (json.dumps(meta, indent=2, default=str) + "\n").encode())

    def write_batch(self, rows: list[dict], meta: dict | None = None) -> Path | None:
        """Write rows as one Parquet file, atomically (temporary file, fsync, os.replace);
        `meta` goes into its schema metadata (`tcplab.provenance.with_metadata`)."""
        if not rows:
            return None
        self.parts.mkdir(parents=True, exist_ok=True)
        self._seq += 1
        name = f"part-{time.time_ns():020d}-{os.getpid()}-{self._seq:05d}.parquet"
        table = _to_table(rows)
        if meta is not None:
            from tcplab.provenance import with_metadata

            table = with_metadata(table, meta)
        tmp = self.parts / f".{name}.tmp"
        pq.write_table(table, tmp)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, self.parts / name)
        dir_fd = os.open(self.parts, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
        return self.parts / name

    # --- reading ---------------------------------------------------------------------

    def clean_stale(self) -> int:
        """Remove temporary files left by a killed writer (its pid is gone); return how many."""
        removed = 0
        for tmp in self.parts.glob(".part-*.parquet.tmp") if self.parts.is_dir() else []:
            try:
                pid = int(tmp.name.split("-")[2])
                os.kill(pid, 0)
                continue  # its writer is alive
            except ProcessLookupError:
                pass
            except (ValueError, IndexError, PermissionError):
                continue
            tmp.unlink(missing_ok=True)
            removed += 1
        return removed

    def files(self) -> list[Path]:
        return sorted(self.parts.glob(PART_GLOB)) if self.parts.is_dir() else []

    def statuses(self) -> dict[str, str]:
        """key → "ok" or "failed" (ok wins) for every stored key."""
        out: dict[str, str] = {}
        for f in self.files():
            t = pq.read_table(f, columns=["key", "status"])
            for k, s in zip(t.column("key").to_pylist(), t.column("status").to_pylist()):
                if out.get(k) != "ok":
                    out[k] = s
        return out

    def meta(self) -> dict:
        p = self.root / "sweep.json"
        return json.loads(p.read_text()) if p.is_file() else {}

    def connect(self, build: str | None = None):
        """A DuckDB connection with the view `points` (one row per key) and `raw`
        (every stored row); with `build`, only rows whose build starts with it."""
        try:
            import duckdb
        except ImportError:  # pragma: no cover - a dependency
            raise UserError("tcplab results needs duckdb: pip install duckdb") from None
        con = duckdb.connect()
        files = self.files()
        if not files:
            raise UserError(f"{self.root}: no results stored yet (no {self.parts}/{PART_GLOB})")
        listing = ", ".join("'" + str(f).replace("'", "''") + "'" for f in files)
        where = ""
        if build is not None:
            names = {r[0] for r in con.execute(
                f"DESCRIBE SELECT * FROM read_parquet([{listing}], union_by_name = true)").fetchall()}
            prefix = build.replace("'", "''")
            where = f" WHERE starts_with(build, '{prefix}')" if "build" in names else " WHERE false"
        con.execute(f"CREATE VIEW raw AS SELECT * FROM read_parquet([{listing}], union_by_name = true, "
                    f"filename = true){where}")
        con.execute("CREATE VIEW points AS SELECT * EXCLUDE (filename) FROM raw "
                    "QUALIFY row_number() OVER (PARTITION BY key ORDER BY (status = 'ok') DESC, filename DESC) = 1")
        return con

    def builds(self) -> list[tuple[str | None, int]]:
        """(build, rows) for each build in the store, most rows first (None: rows
        written before builds were recorded)."""
        con = self.connect()
        if "build" not in {r[0] for r in con.execute("DESCRIBE raw").fetchall()}:
            return [(None, con.execute("SELECT count(*) FROM points").fetchone()[0])]
        return [(b, n) for b, n in con.execute(
            "SELECT build, count(*) AS n FROM points GROUP BY build ORDER BY n DESC, build").fetchall()]

    def frame(self):
        """Every point (one row per key) as a pandas DataFrame; empty if nothing stored."""
        import pandas as pd

        if not self.files():
            return pd.DataFrame()
        return self.connect().execute("SELECT * FROM points").df()


def _to_table(rows: list[dict]) -> pa.Table:
    """Rows → Arrow table; a column whose values mix types is stored as JSON text."""
    columns: dict[str, list] = {}
    for i, row in enumerate(rows):
        for k in row:
            if k not in columns:
                columns[k] = [None] * i
        for k, col in columns.items():
            col.append(row.get(k))
    arrays = {}
    for k, values in columns.items():
        try:
            arrays[k] = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            arrays[k] = pa.array([None if v is None else json.dumps(v, default=str) for v in values])
    return pa.table(arrays)


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
