"""Paper-style figures of a run's traces: cwnd, queue, seq, rate.

`plot(result, kind)` draws one figure (a matplotlib `Figure`, no pyplot state,
Agg backend) from any engine's traces, normalized by `tcplab.traces.canonical`.
The figure shows itself in Jupyter (it has `_repr_png_`), with no `%matplotlib`
magic and no pyplot state to clear:

* ``cwnd``  congestion window of each flow over time (paper A Figs. 4–10,
  paper C Figs. 7–9, 12, paper D Figs. 3–5); with several flows a second panel
  shows Σ cwnd, where synchronization shows as one big sawtooth (paper C).
* ``queue`` buffer occupancy of one link (default the forward bottleneck),
  stacked by class — UDP background under TCP — with the buffer size (paper A).
* ``seq``   sequence numbers sent (new and retransmitted), dropped and acked
  over time (paper A); ns-2 records only the highest sent and the ack.
* ``rate``  TCP goodput per interval (allotted goodput, paper B) per flow or
  group and in total, against the UDP background's sending rate and the
  bottleneck capacity (paper A's "sending rates").

Flows are labelled "flow i (group)"; with more than `MAX_FLOW_LEGEND` flows
they are coloured and labelled by group instead.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from tcplab.errors import UserError

__all__ = ["plot", "KINDS", "save", "sum_of_windows", "window", "COLORS", "ENGINE_STYLE", "InlineFigure"]

KINDS = ("cwnd", "queue", "seq", "rate")
MAX_FLOW_LEGEND = 10
#: one colour per class of line, the same in every figure (plots, compare, reproduce):
#: TCP traffic, UDP background, a sum or total over flows, the capacity and buffer limits
COLORS = {"tcp": "C0", "udp": "0.55", "total": "k", "limit": "C3"}
UDP_COLOR = COLORS["udp"]
#: how each engine's line is drawn where engines are overlaid (`tcplab compare`): colour,
#: line style and width, so that identical traces stay visible — the wide solid line
#: under the narrower dashed and dotted ones — and markers tell them apart in print
ENGINE_STYLE = {
    "packet": {"color": "C0", "ls": "-", "lw": 2.2, "alpha": 0.55, "marker": "o"},
    "ns2": {"color": "C1", "ls": "--", "lw": 1.0, "alpha": 1.0, "marker": "x"},
    "linux": {"color": "C2", "ls": ":", "lw": 1.3, "alpha": 1.0, "marker": "^"},
}
STYLE = {"font.size": 9, "axes.grid": True, "grid.alpha": 0.3, "axes.spines.top": False,
         "axes.spines.right": False, "legend.frameon": False, "legend.fontsize": 8}


class InlineFigure(Figure):
    """A matplotlib Figure that Jupyter displays as a PNG without `%matplotlib inline`
    (a bare Figure made without pyplot has no display formatter)."""

    def _repr_png_(self) -> bytes:
        import io

        buf = io.BytesIO()
        self.savefig(buf, format="png", dpi=100, bbox_inches="tight")
        return buf.getvalue()


def plot(res, kind: str = "cwnd", *, flows=None, start_s: float | None = None, end_s: float | None = None,
         interval_s: float = 1.0, link: int = 0, out: str | Path | None = None) -> Figure:
    """One figure of `res` (a `Result`, any engine): kind = cwnd | queue | seq | rate.

    `flows` selects flow ids (default: every TCP flow); `start_s`/`end_s` clip the
    time axis (default: the whole run); `interval_s` is the rate plot's averaging
    interval; `link` the queue plot's link id (0 = forward bottleneck). With
    `out` (.png, .svg or .pdf) the figure is also written there.
    """
    import matplotlib

    if kind not in KINDS:
        raise UserError(f"plot: unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
    from tcplab.plan import plan
    from tcplab.traces import canonical

    lo = 0.0 if start_s is None else float(start_s)
    hi = plan(res.scenario, resolved=True).end_s if end_s is None else float(end_s)
    if hi <= lo:
        raise UserError(f"plot: empty time range [{lo}, {hi}] s")
    tr = {name: window(df, lo, hi) for name, df in canonical(res.traces, res.links).items()}
    sel = _select_flows(res.flows, flows)
    with matplotlib.rc_context(STYLE):
        fig = {"cwnd": _cwnd, "queue": _queue, "seq": _seq, "rate": _rate}[kind](
            res, tr, sel, lo, hi, interval_s=interval_s, link=link)
        for ax in fig.axes:
            ax.set_xlim(lo, hi)
        fig.suptitle(_title(res), fontsize=9)
        if out is not None:
            save(fig, out)
    return fig


def save(fig: Figure, out: str | Path) -> Path:
    """Write `fig` as PNG (150 dpi), SVG or PDF, chosen by the file suffix."""
    out = Path(out)
    if out.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise UserError(f"--out: {out}: expected a .png, .svg or .pdf file name")
    from tcplab.outdir import atomic_path, check_output_file, record_written
    from tcplab.provenance import figure_metadata

    out.parent.mkdir(parents=True, exist_ok=True)
    target = check_output_file(out)
    # drawn to a temporary sibling, renamed when whole: a full disk leaves no cut figure
    atomic_path(target, lambda tmp: fig.savefig(tmp, format=out.suffix.lower().lstrip("."), dpi=150,
                                                bbox_inches="tight", metadata=figure_metadata(out)))

    record_written(out)  # a plot inside a run's --out folder is tcplab's: a later --out may replace it
    return out


# --- the four kinds -----------------------------------------------------------------

def _cwnd(res, tr, sel, lo, hi, **_):
    tcp = _need(tr, "tcp", "cwnd", "--trace cwnd")
    tcp = tcp[tcp["flow"].isin(sel["id"])]
    many = len(sel) > 1
    fig = InlineFigure(figsize=(7, 5.2 if many else 3.4), layout="constrained")
    axes = fig.subplots(2 if many else 1, 1, sharex=True, squeeze=False)[:, 0]
    ax = axes[0]
    for fid, label, color in _flow_styles(sel):
        f = tcp[tcp["flow"] == fid]
        ax.plot(f["t"], f["cwnd"], drawstyle="steps-post", lw=0.8, color=color, label=label)
    ax.set_ylabel("congestion window (packets)")
    _legend(ax)
    if many:
        total = sum_of_windows(tcp, lo, hi)
        axes[1].plot(total.index, total.to_numpy(), drawstyle="steps-post", lw=0.8, color=COLORS["total"],
                     label="Σ cwnd")
        axes[1].set_ylabel("sum of windows (packets)")
        _legend(axes[1])
    axes[-1].set_xlabel("time (s)")
    return fig


def _queue(res, tr, sel, lo, hi, link=0, **_):
    q = _need(tr, "queue", "packets", "--trace queue")
    q = q[q["link"] == link]
    if q.empty:
        have = sorted(tr["queue"]["link"].unique().tolist())
        raise UserError(f"plot: no queue trace for link {link} (traced links: {have})")
    q = _thin(q, lo, hi)
    fig = InlineFigure(figsize=(7, 3.4), layout="constrained")
    ax = fig.subplots()
    t = np.r_[q["t"].to_numpy(), hi]
    has_udp = (res.flows["kind"] == "udp").any()
    if "tcp" in q and "udp" in q:
        tcp_n = np.r_[q["tcp"].to_numpy(), q["tcp"].to_numpy()[-1]]
        udp_n = np.r_[q["udp"].to_numpy(), q["udp"].to_numpy()[-1]]
        bottom = np.zeros_like(tcp_n)
        if has_udp:
            ax.fill_between(t, 0, udp_n, step="post", color=UDP_COLOR, alpha=0.7, lw=0, label="UDP packets")
            bottom = udp_n
        ax.fill_between(t, bottom, bottom + tcp_n, step="post", color=COLORS["tcp"], alpha=0.8, lw=0,
                        label="TCP packets")
    else:
        n = np.r_[q["packets"].to_numpy(), q["packets"].to_numpy()[-1]]
        ax.fill_between(t, 0, n, step="post", color="0.35", alpha=0.7, lw=0, label="all packets (class not traced)")
    buf = _buffer(res, link)
    if buf is not None:
        ax.axhline(buf, ls="--", lw=0.8, color=COLORS["limit"], label=f"buffer B = {buf:g}")
    ax.set_ylim(bottom=0)
    ax.set_ylabel("queue occupancy (packets)")
    ax.set_xlabel("time (s)")
    ax.set_title(f"link {link}: {_link_name(res, link)}", fontsize=9, loc="right")
    _legend(ax)
    return fig


def _seq(res, tr, sel, lo, hi, **_):
    fig = InlineFigure(figsize=(7, 3.8), layout="constrained")
    ax = fig.subplots()
    sends, tcp, drops = tr.get("sends"), tr.get("tcp"), tr.get("drops")
    if sends is None and (tcp is None or "seq" not in tcp):
        raise UserError("plot: the seq plot needs a sequence-number trace; run with --trace seq")
    one = len(sel) == 1
    for fid, label, color in _flow_styles(sel):
        if sends is not None:
            s = sends[(sends["flow"] == fid) & (sends["t"] >= lo)]
            new, rtx = s[s["rtx"] == 0], s[s["rtx"] != 0]
            ax.plot(new["t"], new["seq"], ls="none", marker=".", ms=2, color=color, rasterized=True,
                    label="sent" if one else f"{label} sent")
            ax.plot(rtx["t"], rtx["seq"], ls="none", marker="o", ms=3, mfc="none", mew=0.6,
                    color="C3" if one else color, label="retransmitted" if one else f"{label} retransmitted")
        elif tcp is not None:
            f = tcp[tcp["flow"] == fid]
            ax.plot(f["t"], f["seq"], drawstyle="steps-post", lw=0.8, color=color,
                    label="highest sent" if one else f"{label} highest sent")
        if tcp is not None and "ack" in tcp:
            f = tcp[tcp["flow"] == fid]
            ax.plot(f["t"], f["ack"], drawstyle="steps-post", lw=0.6, color="0.3" if one else color, ls=":",
                    label="acked" if one else f"{label} acked")
        if drops is not None and "seq" in drops:
            d = drops[(drops["flow"] == fid) & (drops["t"] >= lo)]
            if len(d):
                ax.plot(d["t"], d["seq"], ls="none", marker="x", ms=4, mew=0.8, color="k",
                        label="dropped" if one else f"{label} dropped")
    ax.set_ylabel("sequence number (packets)")
    ax.set_xlabel("time (s)")
    if one:
        ax.set_title(_flow_styles(sel)[0][1], fontsize=9, loc="right")
    _legend(ax)
    return fig


def _rate(res, tr, sel, lo, hi, interval_s=1.0, **_):
    from tcplab import metrics
    from tcplab.plan import first_data_seq, plan
    from tcplab.traces import payload_bytes

    tcp = _need(tr, "tcp", "ack", "--trace seq")
    sc = res.scenario
    first = first_data_seq(sc)
    pay = payload_bytes(res.flows, sc).loc[sel["id"].tolist()]
    al = metrics.allotted_goodput(tcp, pay, interval_s, lo, hi, res.flows, first)
    if al.empty:
        raise UserError(f"plot: the time range is shorter than one interval ({interval_s} s)")
    edges = np.r_[al.index.to_numpy(), al.index.to_numpy()[-1] + interval_s]
    fig = InlineFigure(figsize=(7, 3.4), layout="constrained")
    ax = fig.subplots()

    def steps(y, **kw):
        ax.plot(edges, np.r_[y, y[-1]] / 1e6, drawstyle="steps-post", **kw)

    if len(sel) <= MAX_FLOW_LEGEND:
        for fid, label, color in _flow_styles(sel):
            steps(al[fid].to_numpy(), lw=0.9, color=color, label=f"{label} goodput")
    else:
        for k, (g, ids) in enumerate(sel.groupby("group", sort=True)["id"]):
            steps(al[ids.tolist()].sum(axis=1, min_count=1).to_numpy(), lw=0.9, color=f"C{k}",
                  label=f"{g} goodput ({len(ids)} flows)")
    if len(sel) > 1:
        steps(metrics.allotted_system_goodput(al).to_numpy(), lw=1.2, color=COLORS["total"], label="TCP total goodput")
    p = plan(sc, resolved=True)
    udp: dict = {}
    for f in p.engine["flows"]:
        # constant-rate UDP groups: their sending rate while each flow runs
        if f["kind"] == "udp" and f["udp"]["shape"]["kind"] == "constant":
            on = (edges >= f["start_ns"] / 1e9) & (edges < f["stop_ns"] / 1e9)
            udp[f["group"]] = udp.get(f["group"], 0.0) + np.where(on, f["udp"]["shape"]["rate_bps"], 0.0)
    for g, rate in udp.items():
        ax.plot(edges, rate / 1e6, drawstyle="steps-post", lw=1.2, color=UDP_COLOR, ls="--",
                label=f"UDP {g} sending rate")
    ax.axhline(p.bottleneck()["rate_bps"] / 1e6, ls=":", lw=0.8, color=COLORS["limit"],
               label="bottleneck capacity C")
    ax.set_ylim(bottom=0)
    ax.set_ylabel(f"rate (Mb/s, per {interval_s:g} s)")
    ax.set_xlabel("time (s)")
    _legend(ax)
    return fig


# --- helpers ------------------------------------------------------------------------

def sum_of_windows(tcp: pd.DataFrame, lo: float, hi: float) -> pd.Series:
    """Σ_i cwnd_i(t) over [lo, hi] at every change of any flow's window (index t,
    the first entry at `lo`), each flow's window held from its last change —
    including a change before `lo`: cutting the trace first would start the sum
    with only the flows that happen to change right after `lo`."""
    w = window(tcp[["t", "flow", "cwnd"]], lo, hi)
    t = np.maximum(w["t"].to_numpy(), lo)
    # each row changes the sum by its flow's step (its first row: by its whole window);
    # linear in the rows, however many flows
    step = w["cwnd"] - w.groupby("flow", sort=False)["cwnd"].shift(fill_value=0.0)
    total = pd.Series(step.cumsum().to_numpy(), index=pd.Index(t, name="t"), name="sum_cwnd")
    return total.groupby(level=0, sort=True).last()


def window(df: pd.DataFrame, lo: float, hi: float) -> pd.DataFrame:
    """Rows in [lo, hi], plus each series' last row before lo (its value at lo)."""
    key = "flow" if "flow" in df else "link"
    t = df["t"].to_numpy()
    keep = (t >= lo) & (t <= hi)
    before = df.index[t < lo]
    if len(before):
        keep[df.loc[before].groupby(key, sort=False).tail(1).index.to_numpy()] = True
    return df[keep].reset_index(drop=True)


def _thin(q: pd.DataFrame, lo: float, hi: float, bins: int = 3000) -> pd.DataFrame:
    """A queue trace with at most two rows per time bin — those of the largest
    and smallest occupancy — when it has far more rows than the figure has
    pixels: the envelope looks the same and a million-row trace draws in a second."""
    if len(q) <= 4 * bins:
        return q
    b = np.floor((q["t"].to_numpy() - lo) / (hi - lo) * bins).astype(np.int64)
    g = q["packets"].groupby(b)
    keep = np.union1d(g.idxmax().to_numpy(), g.idxmin().to_numpy())
    return q.loc[keep].reset_index(drop=True)


def _select_flows(flows: pd.DataFrame, ids) -> pd.DataFrame:
    tcp = flows[flows["kind"] == "tcp"]
    if ids is None:
        return tcp.reset_index(drop=True)
    ids = [int(i) for i in ids]
    unknown = sorted(set(ids) - set(tcp["id"]))
    if unknown:
        raise UserError(f"--flows: no TCP flow {', '.join(map(str, unknown))} "
                        f"(TCP flows: {', '.join(map(str, tcp['id']))})")
    return tcp.set_index("id").loc[ids].reset_index()


def _flow_styles(sel: pd.DataFrame) -> list[tuple[int, str, str]]:
    """(flow id, label, colour): per flow, or per group when there are many flows."""
    if len(sel) <= MAX_FLOW_LEGEND:
        return [(int(r.id), f"flow {r.id} ({r.group})", f"C{k % 10}") for k, r in enumerate(sel.itertuples())]
    groups = {g: k for k, g in enumerate(sorted(sel["group"].unique()))}
    return [(int(r.id), str(r.group), f"C{groups[r.group] % 10}") for r in sel.itertuples()]


def _legend(ax, **kw) -> None:
    """One entry per label, in rows above the axes, clear of the data."""
    handles, labels = ax.get_legend_handles_labels()
    seen: dict = {}
    for h, lab in zip(handles, labels):
        seen.setdefault(lab, h)
    ax.legend(seen.values(), seen.keys(), loc="lower left", bbox_to_anchor=(0.0, 1.0),
              ncol=min(len(seen), 4), borderaxespad=0.2, handlelength=1.5, columnspacing=1.0, **kw)


def _need(tr: dict, table: str, column: str, hint: str) -> pd.DataFrame:
    df = tr.get(table)
    if df is None or column not in df:
        raise UserError(f"plot: this run has no {column} trace; run it with {hint}")
    return df


def _buffer(res, link: int):
    links = res.links.reset_index(drop=True)
    name = _link_name(res, link).split("[")[0].split(" ")[0]
    topo = res.scenario["topology"]
    b = (topo.get(name) or {}).get("buffer")
    return float(b) if b is not None and link < len(links) else None


def _link_name(res, link: int) -> str:
    lk = res.links.reset_index(drop=True)
    row = lk[lk["id"] == link] if "id" in lk else lk.iloc[[link]] if link < len(lk) else lk.iloc[[]]
    if row.empty:
        return "bottleneck" if link == 0 else f"link {link}"
    r = row.iloc[0]
    return f"{r['name']} {r['direction']}" if "direction" in r else str(r["name"])


def _title(res) -> str:
    from tcplab.console import shown

    sc = res.scenario
    return f"{shown(sc.get('name') or 'scenario')} — {res.engine} {res.engine_version}"
