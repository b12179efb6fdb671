"""What a sweep shows at the end: a summary table and the default plot."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from rich.markup import escape

from tcplab.console import shown
from tcplab.labels import label as human
from tcplab.sweep.runner import Outcome, axis_column, metric_of
from tcplab.sweep.spec import si_value, split_unit
from tcplab.sweep.store import Store


def sweep_frame(outcome: Outcome) -> pd.DataFrame:
    """This sweep's points joined with their stored rows (one row per point)."""
    df = Store(outcome.out_dir).frame()
    rows = []
    for p in outcome.planned:
        r = {axis_column(k): v for k, v in p.point.axes.items()}
        r.update({"replication": p.point.replication, "seed": p.seed, "key": p.key})
        rows.append(r)
    pts = pd.DataFrame(rows)
    if df.empty:
        pts["status"] = "missing"
        return pts
    keep = [c for c in df.columns if c not in pts.columns or c == "key"]
    out = pts.merge(df[keep], on="key", how="left")
    out["status"] = out["status"].fillna("missing")
    return out


def _x(values: pd.Series) -> pd.Series:
    return values.map(lambda v: si_value(v) if si_value(v) is not None else v)


def mean_table(outcome: Outcome, frame: pd.DataFrame | None = None) -> pd.DataFrame:
    """The main metric per axis combination over replications: columns _mean, _std, _n."""
    df = sweep_frame(outcome) if frame is None else frame
    metric = metric_of(outcome.sweep)
    cols = [axis_column(p) for p in outcome.sweep.columns]
    ok = df[df["status"] == "ok"]
    if metric not in ok or ok.empty:
        return pd.DataFrame(columns=cols + ["_mean", "_std", "_n"])
    vals = pd.to_numeric(ok[metric], errors="coerce")
    ok = ok.assign(_m=vals)
    if not cols:
        return pd.DataFrame({"_mean": [ok["_m"].mean()], "_std": [ok["_m"].std()], "_n": [ok["_m"].count()]})
    g = ok.groupby(cols, sort=False, dropna=False)["_m"]
    return pd.DataFrame({"_mean": g.mean(), "_std": g.std(), "_n": g.count()}).reset_index()


def print_summary(outcome: Outcome, console) -> None:
    from rich.table import Table

    sweep = outcome.sweep
    metric = metric_of(sweep)
    df = sweep_frame(outcome)
    n_ok = int((df["status"] == "ok").sum())
    n_failed = int((df["status"] == "failed").sum())
    n_missing = int((df["status"] == "missing").sum())
    head = (f"[bold]{escape(shown(sweep.name))}[/bold] — engine {sweep.engine}: {len(df)} points "
            f"({outcome.unique_keys} distinct), {n_ok} ok, {n_failed} failed"
            + (f", {n_missing} missing" if n_missing else "")
            + f"; computed now {outcome.computed} ({outcome.failed_now} failed), "
            f"{outcome.stored_before} already stored; {outcome.wall_s:.1f} s")
    console.print(head)
    if outcome.interrupted:
        console.print("[yellow]interrupted: the points finished so far are stored; run the same command to resume[/yellow]")
    table = mean_table(outcome, df)
    cols = [axis_column(p) for p in sweep.columns]
    if len(table):
        t = Table(title=f"{metric} (mean over {sweep.replications} replication{'s' if sweep.replications > 1 else ''})"
                  + (" — first 40 rows" if len(table) > 40 else ""))
        for c in cols:
            t.add_column(c, justify="right")
        t.add_column("mean", justify="right")
        if sweep.replications > 1:
            t.add_column("std", justify="right")
        t.add_column("n", justify="right")
        for r in table.head(40).to_dict("records"):
            cells = [str(r[c]) for c in cols] + [f"{r['_mean']:.4g}"]
            if sweep.replications > 1:
                cells.append("–" if pd.isna(r["_std"]) else f"{r['_std']:.2g}")
            cells.append(str(int(r["_n"])))
            t.add_row(*cells)
        console.print(t)
    elif n_ok:
        console.print(f"[yellow]metric {metric!r} is not among the results; name one with metric = \"...\" "
                      f"(see `tcplab results {outcome.out_dir}`)[/yellow]")
    if outcome.failures:
        t = Table(title=f"{n_failed} failed point{'s' if n_failed != 1 else ''}, by reason")
        t.add_column("points", justify="right")
        t.add_column("error")
        for err, count in sorted(outcome.failures.items(), key=lambda kv: -kv[1])[:20]:
            t.add_row(str(count), err)
        console.print(t)


def plot(outcome: Outcome, path: str | Path | None = None) -> Path | None:
    """The main metric against the first axis, one line per value of the second
    (other axes and replications averaged; error bars: std over replications).
    Returns the PNG path, or None when there is nothing to plot."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sweep = outcome.sweep
    if not sweep.axes:
        return None
    metric = metric_of(sweep)
    df = sweep_frame(outcome)
    ok = df[df["status"] == "ok"]
    if ok.empty or metric not in ok:
        return None
    ok = ok.assign(_m=pd.to_numeric(ok[metric], errors="coerce"))
    first = sweep.axes[0]
    xcol = axis_column(first.paths[0])
    ok = ok.assign(_x=_x(ok[xcol]))
    if not pd.api.types.is_numeric_dtype(ok["_x"]):
        order = {v[0]: i for i, v in enumerate(first.values)}
        ok = ok.assign(_x=ok[xcol].map(order))
        ticks = list(order)
    else:
        ticks = None
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    second = sweep.axes[1] if len(sweep.axes) > 1 else None
    groups = [(None, ok)] if second is None else [
        (v[0], ok[ok[axis_column(second.paths[0])] == v[0]]) for v in second.values]
    for label, d in groups:
        if d.empty:
            continue
        per_rep = d.groupby(["_x", "replication"])["_m"].mean()  # other axes averaged
        g = per_rep.groupby(level=0)
        mean, std = g.mean(), g.std()
        name = None if label is None else f"{human(second.paths[0])} = {label}"
        if sweep.replications > 1:
            ax.errorbar(mean.index, mean.values, yerr=std.fillna(0).values, marker="o", ms=3, capsize=2, label=name)
        else:
            ax.plot(mean.index, mean.values, marker="o", ms=3, label=name)
    if first.log:
        ax.set_xscale("log")
    if ticks is not None:
        ax.set_xticks(range(len(ticks)), [str(t) for t in ticks])
    xlabel = human(first.paths[0])
    if ticks is None and isinstance(first.values[0][0], str):
        kind = split_unit(first.values[0][0], "")[2]
        unit = {"duration": " (s)", "rate": " (bit/s)", "frequency": " (Hz)"}.get(kind, "")
        xlabel += "" if unit.strip() in xlabel else unit
    ax.set_xlabel(xlabel)
    ax.set_ylabel(human(metric))
    rest = [human(a.paths[0]) if a.name == a.paths[0] else a.name for a in sweep.axes[2:]]
    ax.set_title(f"{shown(sweep.name)} — {sweep.engine}" + (f" (averaged over {', '.join(rest)})" if rest else ""))
    ax.grid(True, alpha=0.3)
    if second is not None:
        ax.legend(fontsize=8)
    fig.tight_layout()
    out = Path(path) if path else outcome.out_dir / "plot.png"
    from tcplab.provenance import figure_metadata

    from tcplab.outdir import atomic_path

    atomic_path(out, lambda tmp: fig.savefig(tmp, format=out.suffix.lstrip(".") or "png",
                                             metadata=figure_metadata(out, engine=sweep.engine)))
    plt.close(fig)
    return out
