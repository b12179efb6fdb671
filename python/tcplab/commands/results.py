"""`tcplab results SWEEP_DIR`: query a sweep's results store with DuckDB.

The view `points` holds one row per point (columns: key, the axes, replication,
seed, engine, engine_version, build, status, error, wall_s, the metrics, scenario);
`raw` every stored row. Axis and metric names contain dots: quote them,
e.g. --sql 'SELECT "flows.sack.count", avg(normalized_throughput) FROM points GROUP BY 1'.

`build` says which code computed a row (tcplab version + engine build id +
Python source hash). After the code changed, a re-run stores new rows beside
the old: --builds lists the builds with their row counts, --build PREFIX keeps
only the rows of one build (e.g. --build 0.1.0+src-34a0).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from tcplab.outdir import command


def register(sub) -> None:
    p = sub.add_parser("results", help="query a sweep's results (DuckDB SQL, CSV export)", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir", metavar="SWEEP_DIR", help="a directory written by tcplab sweep")
    p.add_argument("--sql", metavar="QUERY", help="a DuckDB query over the views points and raw "
                   "(default: the axes, seed, status and main metric of every point)")
    p.add_argument("--csv", metavar="FILE", help="write the query's result to FILE as CSV ('-' for stdout)")
    p.add_argument("--limit", type=int, default=50, metavar="N", help="rows to print (default 50; 0 = all)")
    p.add_argument("--format", choices=("table", "csv", "markdown"), default="table",
                   help="how to print the result: a table (default; the terminal's width, or whole when "
                        "piped), CSV or a Markdown table (every row, never cut)")
    p.add_argument("--build", metavar="PREFIX", help="only rows computed by the build starting with PREFIX "
                   "(see --builds)")
    p.add_argument("--builds", action="store_true", help="list the builds that computed the stored rows")
    p.set_defaults(func=main)


def default_query(meta: dict, columns: list[str]) -> str:
    axes = [c for a in meta.get("axes", []) for c in a["columns"]]
    metric = meta.get("metric")
    want = axes + ["replication", "seed", "engine", "build", "status"]
    if metric in columns:
        want.append(metric)
    want.append("error")
    sel = ", ".join(_quote(c) for c in want if c in columns)
    order = ", ".join(_quote(c) for c in axes + ["replication"] if c in columns)
    return f"SELECT {sel} FROM points" + (f" ORDER BY {order}" if order else "")


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@command("csv", inputs=("dir",))
def main(args) -> int:
    import duckdb

    from tcplab.errors import UserError
    from tcplab.sweep.store import Store

    root = Path(args.dir)
    if not root.is_dir():
        raise UserError(f"{root}: no such sweep directory")
    if args.limit < 0:
        raise UserError(f"--limit: expected a whole number ≥ 0 (0 = all rows), got {args.limit}")
    if args.csv and args.csv != "-":
        from tcplab.outdir import check_output_file

        csv_dir = Path(args.csv).parent
        if not csv_dir.is_dir():
            raise UserError(f"--csv {args.csv}: no such folder {str(csv_dir)!r}")
        check_output_file(args.csv, "--csv")
    store = Store(root, readonly=True)
    if args.builds:
        _print(_builds_frame(store.builds()), 0)
        return 0
    meta = store.meta()
    try:
        con = store.connect(build=args.build)
        if args.build is not None and not con.execute("SELECT count(*) FROM raw").fetchone()[0]:
            known = ", ".join(b or "(not recorded)" for b, _ in store.builds())
            raise UserError(f"--build: no stored row was computed by a build starting with {args.build!r}; "
                            f"stored builds: {known}")
        columns = [r[0] for r in con.execute("DESCRIBE points").fetchall()]
    except duckdb.Error as exc:
        raise UserError(f"{root}: cannot read the results store: {str(exc).splitlines()[0]}") from None
    query = args.sql or default_query(meta, columns)
    if args.sql:
        read_only_query(con, query)
    try:
        df = con.execute(query).df()
    except duckdb.Error as exc:
        raise UserError(f"--sql: {exc}") from None
    if args.csv:
        if args.csv == "-":
            print(df.to_csv(index=False), end="")
            return 0
        from tcplab.outdir import atomic_file, check_output_file

        with atomic_file(check_output_file(args.csv, "--csv"), "w", option="--csv", newline="") as fh:
            df.to_csv(fh, index=False)
        Console(stderr=True).print(f"[dim]wrote {len(df)} rows to {args.csv}[/dim]")
        return 0
    if args.format == "csv":
        print(df.to_csv(index=False), end="")
    elif args.format == "markdown":
        from tcplab.console import markdown_table

        print(markdown_table(df), end="")
    else:
        _print(df, args.limit)
    return 0


def _builds_frame(builds):
    import pandas as pd

    return pd.DataFrame([{"build": b if b is not None else "(not recorded)", "rows": n} for b, n in builds])


#: what --sql may run: queries, which read (the store is opened read-only)
READ_ONLY = ("SELECT", "EXPLAIN")


def read_only_query(con, query: str) -> None:
    """Refuse (UserError) any statement but a query: COPY ... TO, ATTACH, CREATE,
    INSERT, SET, PRAGMA and the like would write files or change the session."""
    import duckdb

    from tcplab.errors import UserError

    try:
        statements = con.extract_statements(query)
    except duckdb.Error as exc:
        raise UserError(f"--sql: {exc}") from None
    for st in statements:
        kind = str(st.type).rsplit(".", 1)[-1]
        if kind not in READ_ONLY:
            raise UserError(f"--sql: only queries (SELECT, EXPLAIN) are allowed, the store is opened "
                            f"read-only; got a {kind} statement: {st.query.strip()[:80]!r}")


def _print(df, limit: int) -> None:
    from rich.table import Table

    from tcplab.console import stdout_console

    shown = df if limit == 0 else df.head(limit)
    t = Table(title=f"{len(df)} rows" + (f" (first {limit})" if 0 < limit < len(df) else ""))
    for c in df.columns:
        t.add_column(str(c), overflow="fold")
    for row in shown.itertuples(index=False):
        t.add_row(*[_cell(v) for v in row])
    stdout_console().print(t)


def _cell(v) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return "–"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)
