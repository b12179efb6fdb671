"""Traces on disk: a run's memory flat in its duration.

A packet-engine run that keeps its traces in memory grows by a few MB per
simulated second with several series on 100 flows (3.7 GB for 1000 s;
bench/NOTES.md, "Traces on disk", and docs/results.md). With
`tcplab run --out DIR` (or `tcplab.run(..., out=DIR)`) the engine instead
streams each trace table to raw column files in a folder inside the output's
temporary folder as the run goes (`Sim::spill_traces` in
crates/engine/src/sim/mod.rs, `Spill` in crates/engine/src/record.rs): every
10 ms of simulated time, each table that holds `SPILL_ROWS` rows; the queue table, whose rows
are sorted by link, is written per link as its rows become final. Saving
then copies the files into Parquet (and CSV) `CHUNK_ROWS` rows at a time, one
row group per chunk; the raw files are removed before the output is renamed
into place. The files hold what the in-memory path holds, row for row: the
DataFrames read back from the Parquet files are those `tcplab.run(...)` returns
(tests/test_trace_spill.py).

- `SpilledTrace`: one table's raw files (columns, dtypes, row count; read in
  chunks, or whole).
- `write_trace`: write a trace (a DataFrame or a `SpilledTrace`) as Parquet
  and/or CSV.
- `TraceFiles`: the traces of a written output folder as a mapping of
  DataFrames, each read from its Parquet file when first used.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["SPILL_ROWS", "CHUNK_ROWS", "SpilledTrace", "TraceFiles", "write_trace"]

# Rows of one table the engine holds before it writes them out (8 bytes a value).
SPILL_ROWS = 1 << 16
# Rows per chunk read back from the raw files, per Parquet row group and CSV append.
CHUNK_ROWS = 1 << 16


class SpilledTrace:
    """One trace table the engine wrote to raw column files in `folder`: its
    `parts` [(stem, rows)] in row order, column `c` of part `p` in
    `folder/p.c` as raw little-endian values of the column's dtype."""

    def __init__(self, folder: str | Path, columns: list[tuple[str, str]], parts: list[tuple[str, int]]):
        self.folder = Path(folder)
        self.dtypes = {c: np.dtype(d) for c, d in columns}
        self.parts = [(str(p), int(n)) for p, n in parts]

    @property
    def columns(self) -> list[str]:
        return list(self.dtypes)

    def __len__(self) -> int:
        return sum(n for _, n in self.parts)

    def __repr__(self) -> str:
        return f"SpilledTrace({self.folder}, rows={len(self)}, columns={self.columns})"

    def frames(self, rows: int | None = None) -> Iterator[pd.DataFrame]:
        """The table as DataFrames of `rows` rows (`CHUNK_ROWS`; the last one
        fewer), in row order, a chunk spanning parts where it falls across
        them; one empty DataFrame (with the dtypes) for an empty table."""
        rows = rows or CHUNK_ROWS
        pieces: list[dict] = []  # read, not yet given out
        held = 0
        for stem, n in self.parts:
            start = 0
            while start < n:
                count = min(rows - held, n - start)
                pieces.append({c: self._read(stem, c, start, count) for c in self.dtypes})
                held += count
                start += count
                if held == rows:
                    yield self._frame(pieces)
                    pieces, held = [], 0
        if held or not any(n for _, n in self.parts):
            yield self._frame(pieces)

    def _read(self, stem: str, column: str, start: int, count: int) -> np.ndarray:
        dt = self.dtypes[column]
        path = self.folder / f"{stem}.{column}"
        values = np.fromfile(path, dtype=dt, count=count, offset=start * dt.itemsize)
        if values.size != count:
            raise OSError(f"{path}: {values.size} values where {count} were written")
        return values

    def _frame(self, pieces: list[dict]) -> pd.DataFrame:
        if len(pieces) == 1:
            return pd.DataFrame(pieces[0])
        return pd.DataFrame({c: np.concatenate([p[c] for p in pieces]) if pieces else np.array([], dtype=dt)
                             for c, dt in self.dtypes.items()})

    def to_frame(self) -> pd.DataFrame:
        """The whole table as one DataFrame (as the in-memory path makes it: one
        block a column, the arrays filled here held as they are, not copied)."""
        whole = {c: np.empty(len(self), dtype=dt) for c, dt in self.dtypes.items()}
        at = 0
        for df in self.frames():
            for c in whole:
                whole[c][at:at + len(df)] = df[c].to_numpy()
            at += len(df)
        return pd.DataFrame(whole, copy=False)


def write_trace(trace, folder: Path, name: str, meta: dict | None, formats=("parquet", "csv")) -> None:
    """Write one trace (a DataFrame or a `SpilledTrace`) into `folder` as
    `name.parquet` (schema metadata as `tcplab.provenance.write_parquet` writes
    it, `meta` under the key "tcplab") and/or `name.csv`. A `SpilledTrace` is
    copied a chunk at a time: one Parquet row group and one CSV append each."""
    if isinstance(trace, pd.DataFrame):
        if "parquet" in formats:
            from tcplab.provenance import write_parquet

            write_parquet(trace, folder / f"{name}.parquet", meta)
        if "csv" in formats:
            trace.to_csv(folder / f"{name}.csv", index=False)
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tcplab.provenance import with_metadata

    writer = None
    csv = open(folder / f"{name}.csv", "w", newline="") if "csv" in formats else None
    try:
        for i, df in enumerate(trace.frames()):
            if "parquet" in formats:
                table = with_metadata(pa.Table.from_pandas(df, preserve_index=False), meta)
                if writer is None:
                    writer = pq.ParquetWriter(folder / f"{name}.parquet", table.schema)
                writer.write_table(table)
                del table
            if csv is not None:
                df.to_csv(csv, index=False, header=i == 0)
    finally:
        if writer is not None:
            writer.close()
        if csv is not None:
            csv.close()


class TraceFiles(Mapping):
    """The traces of an output folder (`folder/<name>.parquet`) as a mapping
    name -> DataFrame, each read from its file when first used and kept."""

    def __init__(self, folder: str | Path, names: list[str], columns: dict[str, list[str]]):
        self.folder = Path(folder)
        self._names = list(names)
        self._columns = dict(columns)
        self._frames: dict[str, pd.DataFrame] = {}

    def __getitem__(self, name: str) -> pd.DataFrame:
        if name not in self._names:
            raise KeyError(name)
        if name not in self._frames:
            from tcplab.provenance import read_parquet

            self._frames[name] = read_parquet(self.folder / f"{name}.parquet")
        return self._frames[name]

    def __iter__(self):
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def columns(self, name: str) -> list[str]:
        """A trace's column names, without reading it."""
        return list(self._columns[name])

    def __repr__(self) -> str:
        return f"TraceFiles({self.folder}, {self._names})"
