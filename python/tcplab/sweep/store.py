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
failure), readers keep one row per key: an ok row over a failed one, then the newest.

Each part carries, in its schema metadata under "tcplab.checksum", the SHA-256 of
its content (every column's name and values: the keys it holds and their rows),
checked when it is first read. A part file that cannot be read whole
(truncated, garbage), whose content does not match its checksum, or — written
without a checksum, by an older build — whose columns disagree in kind with the
verified parts' (a metric column turned text, which would stop `avg(...)` in
`tcplab results`) is moved aside to DIR/store/quarantine/ by a sweep, named in
one line, and its points are computed again; readers (`tcplab results`,
`--dry-run`) skip it with the same line and move nothing. A sweep holds an exclusive lock on DIR/.lock (fcntl) while it
runs: a second sweep into the same directory waits for it, then computes only
what is still missing.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tcplab.errors import UserError

PART_GLOB = "part-*.parquet"
QUARANTINE = "quarantine"
#: schema-metadata key of a part's content checksum (`table_checksum`)
CHECKSUM_KEY = b"tcplab.checksum"
#: the kind every part must give these columns (`_kind`)
RESERVED_KINDS = {"key": "text", "status": "text", "error": "text", "engine": "text", "engine_version": "text",
                  "build": "text", "scenario": "text", "seed": "number", "replication": "number",
                  "wall_s": "number"}
#: the seed column is unsigned: seeds are u64 end to end (the engines' type)
SEED_TYPE = pa.uint64()


def warn(msg: str) -> None:
    print(f"tcplab: warning: {msg}", file=sys.stderr)


class Store:
    def __init__(self, root: str | Path, readonly: bool = False):
        self.root = Path(root)
        self.parts = self.root / "store"
        self.readonly = readonly  # readers never move a file, even an unreadable one
        self._seq = 0
        self._good: dict[str, dict] = {}  # part files read whole once (a part never changes): column kinds
        self._verified: set[str] = set()  # of those, the ones whose checksum matched
        self._bad: set[str] = set()

    @contextlib.contextmanager
    def lock(self, console=None):
        """Hold DIR/.lock exclusively (fcntl.flock) while a sweep writes; a second
        writer waits for the first, then sees what it stored."""
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
                msg = f"another sweep (pid {holder}) is writing to {self.root}; waiting for it to finish"
                if console is not None:
                    console.print(f"[yellow]{msg}[/yellow]")
                else:
                    warn(msg)
                fcntl.flock(fd, fcntl.LOCK_EX)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            yield
        finally:
            os.close(fd)  # releases the lock

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
        table = table.replace_schema_metadata({**(table.schema.metadata or {}),
                                               CHECKSUM_KEY: table_checksum(table).encode()})
        tmp = self.parts / f".{name}.tmp"
        try:
            pq.write_table(table, tmp)
            with open(tmp, "rb") as fh:
                os.fsync(fh.fileno())
            os.replace(tmp, self.parts / name)
        except BaseException:
            tmp.unlink(missing_ok=True)  # no partial part left behind (a full disk, a kill)
            raise
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
        parts = list(self.parts.glob(".part-*.parquet.tmp")) if self.parts.is_dir() else []
        metas = list(self.root.glob(".sweep.json.*.tmp")) if self.root.is_dir() else []
        for tmp in parts + metas:
            try:
                pid = int(tmp.name.split("-")[2] if tmp in parts else tmp.name.split(".")[3])
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
        """The part files that can be read whole and prove their content (`_readable`);
        the others are quarantined (moved to store/quarantine/, never deleted) or,
        read-only, skipped, with a one-line warning naming each."""
        found = sorted(self.parts.glob(PART_GLOB)) if self.parts.is_dir() else []
        good = [f for f in found if self._readable(f)]
        # parts without a checksum (older builds) must agree with the verified ones
        kinds: dict[str, str] = dict(RESERVED_KINDS)
        for f in good:
            if f.name in self._verified:
                for c, k in self._good[f.name].items():
                    if k != "null":
                        kinds.setdefault(c, k)
        out = []
        for f in good:
            if f.name not in self._verified:
                clash = [(c, k, kinds[c]) for c, k in self._good[f.name].items()
                         if k != "null" and kinds.get(c, k) != k]
                if clash:
                    c, k, want = clash[0]
                    self._reject(f, f"column {c!r} holds {k} where the store's other parts hold {want} "
                                    "(a part without a checksum, changed or from another build)")
                    continue
            out.append(f)
        return out

    def _readable(self, f: Path) -> bool:
        if f.name in self._good:
            return True
        if f.name in self._bad:
            return False
        try:
            t = pq.read_table(f, use_threads=False)
            if "key" not in t.column_names or "status" not in t.column_names:
                raise ValueError("no key or status column")
        except (MemoryError, PermissionError):
            raise  # short of memory, or not allowed: the file's content is not to blame
        except (OSError, ValueError, pa.ArrowException, NotImplementedError, KeyError, IndexError, TypeError,
                RecursionError) as exc:  # ArrowInvalid, ArrowIOError, ArrowNotImplementedError...: corrupt files
            why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            self._reject(f, f"unreadable results file ({why})")
            return False
        stored = (t.schema.metadata or {}).get(CHECKSUM_KEY)
        if stored is not None:
            try:
                same = stored.decode(errors="replace") == table_checksum(t)
            except (ValueError, pa.ArrowException, NotImplementedError, TypeError, OverflowError) as exc:
                self._reject(f, f"its content cannot be read back ({type(exc).__name__})")
                return False
            if not same:
                self._reject(f, "its content does not match its checksum (changed or damaged)")
                return False
            self._verified.add(f.name)
        self._good[f.name] = {c: _kind(t.schema.field(c).type) for c in t.column_names}
        return True

    def _reject(self, f: Path, why: str) -> None:
        """Skip (read-only) or quarantine a part that cannot be trusted, saying so once."""
        if f.name in self._bad:
            return
        self._bad.add(f.name)
        self._good.pop(f.name, None)
        if self.readonly:
            warn(f"{f}: {why}: skipped; its points count as not stored "
                 "(a sweep re-run moves it aside and computes them)")
        else:
            q = self.parts / QUARANTINE
            q.mkdir(exist_ok=True)
            dest = q / f.name
            n = 1
            while dest.exists():
                n += 1
                dest = q / f"{f.stem}.{n}{f.suffix}"
            os.replace(f, dest)
            warn(f"{f}: {why}: moved to {dest}; its points will be computed again")

    def statuses(self) -> dict[str, str]:
        """key → "ok" or "failed" (ok wins) for every stored key."""
        out: dict[str, str] = {}
        for f in self.files():
            t = pq.read_table(f, columns=["key", "status"], use_threads=False)
            for k, s in zip(t.column("key").to_pylist(), t.column("status").to_pylist()):
                if out.get(k) != "ok":
                    out[k] = s
        return out

    def meta(self) -> dict:
        p = self.root / "sweep.json"
        if not p.is_file():
            return {}
        try:
            meta = json.loads(p.read_text())
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            raise UserError(f"{p}: unreadable sweep description ({exc}); "
                            "re-run the sweep to write it again") from None
        if not isinstance(meta, dict):
            raise UserError(f"{p}: expected a JSON object; re-run the sweep to write it again")
        return meta

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


def _kind(t: pa.DataType) -> str:
    """What a column holds, as far as queries care: number, text, null or another type."""
    if pa.types.is_null(t):
        return "null"
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t) or pa.types.is_decimal(t):
        return "number"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "text"
    return str(t)


def table_checksum(table: pa.Table) -> str:
    """SHA-256 of a table's content: each column's name and values, in order, as JSON
    (so a number turned text, or an int turned float, changes it). Not the Arrow type's
    name, which Parquet does not keep to the letter (a list's item field comes back as
    "element"), nor the schema metadata: the same for the table written and read back."""
    import hashlib

    h = hashlib.sha256()
    for name, col in zip(table.column_names, table.columns):
        h.update(json.dumps(name).encode())
        h.update(json.dumps(col.to_pylist(), default=str, allow_nan=True).encode())
        h.update(b"\n")
    return h.hexdigest()


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
            arrays[k] = pa.array(values, type=SEED_TYPE if k == "seed" else None)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            arrays[k] = pa.array([None if v is None else json.dumps(v, default=str) for v in values])
    return pa.table(arrays)


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
