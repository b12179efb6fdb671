"""`tcplab reproduce`: every claim of the four papers, with a figure and a verdict.

One package per paper (`adaptivity`, `alpha_beta`, `parallel_aimd`,
`triple_slowstart`) declares a :class:`Paper`: its setup (a table for the
report) and its claims. A claim is an id (``"C1"``), the paper's statement,
the criterion we judge it by, and a function ``check(ctx) -> Outcome`` that
runs what the claim needs (through ``ctx``: sweeps cached in the results store,
traced runs cached as Parquet and given back as `tcplab.result.Result`, fluid
runs), draws the figure (same axes and series as the paper) and returns the
verdict with the measured numbers. In each package `runs.py` says which
scenario files run with which overrides (reading the setup's constants from
the scenario's Plan, `plan_of`), `claims.py` holds the statements, criteria and
checks, `figures.py` the figures, and `notes.md` the notes the report prints
beside each verdict (`load_notes`).

    >>> from tcplab.reproduce import reproduce
    >>> verdicts = reproduce("triple-slowstart", claims=["D3"], out="reports")

Verdicts are ``reproduced``, ``partly`` or ``not-reproduced``; ``not-run`` ("not run
on this engine") when the chosen engine cannot run a claim's scenario (ns-2 has no
threshold dropper), with the reason, and the other claims go on. A paper slots in
by adding a package and one line to :data:`PAPERS`.

`out/<paper>/claims.json` (a list of ``{id, verdict, measured, paper, note}``
plus ``title``, ``criterion``, ``values``, ``figures``) is the interface
scripts rely on; `report.py` writes the HTML beside it.
"""

from __future__ import annotations

import importlib
import json
import re
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from tcplab.errors import EngineCannotRun, UserError
from tcplab.result import Result

VERDICTS = ("reproduced", "partly", "not-reproduced", "not-run")
#: what the report prints for "not-run": the claim's scenario uses a mechanism this
#: engine does not have (`tcplab.errors.EngineCannotRun`); the reason is the note
NOT_RUN = "not run on this engine"
#: the colour of a verdict in the report's badges and on its figures' heads
VERDICT_COLORS = {"reproduced": "#1a7f37", "partly": "#9a6700", "not-reproduced": "#cf222e",
                  "not-run": "#57606a"}
#: TCP default profiles (`crates/engine/src/tcp/profiles.rs`): `--profile ns2-2001` runs
#: every TCP group that names none with the paper era's ns-2 defaults
PROFILES = ("ns2-2.35", "ns2-2001")
DEFAULT_PROFILE = "ns2-2.35"
MODES = ("quick", "full", "tiny")  # tiny: for tests only (seconds)

#: paper slug → module. The order is the report's.
PAPERS: dict[str, str] = {
    "adaptivity": "tcplab.reproduce.adaptivity",
    "alpha-beta": "tcplab.reproduce.alpha_beta",
    "parallel-aimd": "tcplab.reproduce.parallel_aimd",
    "triple-slowstart": "tcplab.reproduce.triple_slowstart",
}
#: claim-id letter → paper slug
LETTERS = {"A": "adaptivity", "B": "alpha-beta", "C": "parallel-aimd", "D": "triple-slowstart"}


@dataclass
class Outcome:
    """What a claim's check found."""

    verdict: str
    measured: str  # the measured numbers, one or two sentences
    note: str = ""  # why the verdict (mechanism, what differs, what was tried)
    values: dict = field(default_factory=dict)  # the numbers, for scripts
    figures: list[str] = field(default_factory=list)  # stems under out/<paper>/ (.png, .svg)
    data: dict[str, pd.DataFrame] = field(default_factory=dict)  # written as data/<id>-<name>.parquet

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")


@dataclass
class Claim:
    id: str
    title: str
    paper: str  # the paper's statement (what we hold the measurement against)
    criterion: str  # how the verdict is decided, with its tolerance
    check: Callable[["Context"], Outcome]
    figure: str = ""  # which figure(s) of the paper
    #: engines the check runs on; with --engine linux only claims that list it run
    #: (real-time runs), the others keep their verdicts from earlier runs
    engines: tuple[str, ...] = ("packet", "ns2")


@dataclass
class Paper:
    slug: str
    letter: str
    title: str
    setup: list[tuple[str, str]]  # (parameter, value) rows of the report's setup table
    claims: list[Claim]
    summary: str = ""  # one paragraph for the report's end (optional)


@dataclass
class Verdict:
    """A claim's entry in claims.json."""

    id: str
    title: str
    verdict: str
    measured: str
    paper: str
    note: str
    criterion: str
    figure: str
    values: dict
    figures: list[str]
    wall_s: float

    def to_json(self) -> dict:
        return {"id": self.id, "verdict": self.verdict, "measured": self.measured, "paper": self.paper,
                "note": self.note, "title": self.title, "criterion": self.criterion, "figure": self.figure,
                "values": self.values, "figures": self.figures, "wall_s": round(self.wall_s, 2)}


# --- the context a check runs in --------------------------------------------------------------


class Context:
    """What a claim's check may use: the mode, the engine, cached runs, figure output.

    Caches live in the per-user cache directory (`tcplab.cache.cache_dir`), not in
    the report: ``<cache>/reproduce/sweeps/<paper>/<name>/`` holds sweeps in the
    sweep results store (one Parquet row per point, keyed by `point_key`: the
    resolved scenario, the engine and its version), ``<cache>/reproduce/runs/<key>/``
    traced runs as Parquet tables keyed the same way. Every report directory
    shares them, so a second `tcplab reproduce` computes nothing it has already
    computed, whatever its --out.
    """

    def __init__(self, paper: Paper, out: Path, mode: str, engine: str, jobs: int | None = None,
                 progress=None, cache: str | Path | None = None, profile: str = DEFAULT_PROFILE):
        from tcplab.cache import cache_dir

        self.paper = paper
        self.profile = profile
        # the era profile's verdicts sit beside the default ones, in their own folder
        self.root = Path(out) / paper.slug / ("" if profile == DEFAULT_PROFILE else profile)
        self.mode = mode
        self.engine = engine
        self.jobs = jobs
        self.progress = progress  # a rich Progress (or None): stopped while a sweep draws its own bar
        self.figures: list[str] = []
        self._pending_figures: list = []  # (figure, stem) kept until the claim's verdict
        self.cache = cache_dir(cache) / "reproduce"
        self.memo: dict = {}  # results several claims share (e.g. one table over B)
        self.claims: _Claims | None = None  # set when claims run concurrently (`reproduce_all`)

    @property
    def quick(self) -> bool:
        return self.mode != "full"

    def pick(self, tiny, quick, full):
        """The value for the current mode."""
        return {"tiny": tiny, "quick": quick, "full": full}[self.mode]

    # runs ----------------------------------------------------------------------------------

    def sweep(self, name: str, scenario: str | dict, axes: dict, set: dict | None = None,
              replications: int = 1, engine: str | None = None) -> pd.DataFrame:
        """Run a grid through the sweep machinery (parallel, cached); one row per point
        with the axis columns, `replication`, `seed`, `status` and the flat metrics."""
        from tcplab.sweep import Store, parse_sweep, plan, run_sweep

        engine = engine or self.engine
        scenario = self._profiled(scenario)
        data = {"name": f"{self.paper.slug}-{name}", "engine": engine, "replications": replications,
                "scenario": str(_repo_path(scenario)) if isinstance(scenario, str) else scenario,
                "set": set or {}, "axes": axes}
        sw = parse_sweep(data)
        where = self.cache / "sweeps" / self.paper.slug / name
        planned = plan(sw)
        for p in planned:
            if p.scenario is not None:
                _check_engine_runs(engine, p.scenario)
        if self.claims is not None:
            # other claims run meanwhile; the sweep's points go to the shared workers, its bar
            # onto the shared display, and a second claim of the same sweep waits for the first
            with self.claims.released(), self.claims.store(where):
                run_sweep(sw, where, jobs=self.jobs, planned=planned, retry_failed=True, progress=False,
                          shared=self.claims.pool, bar=self.progress)
        else:
            stored = Store(where).statuses() if (where / "store").is_dir() else {}
            todo = {p.key for p in planned} - {k for k, s in stored.items() if s == "ok"}
            if todo and self.progress is not None:
                self.progress.stop()
            try:
                run_sweep(sw, where, jobs=self.jobs, planned=planned, retry_failed=True,
                          progress=bool(todo) and self.progress is not None,
                          console=self.progress.console if self.progress is not None else None)
            finally:
                if todo and self.progress is not None:
                    self.progress.start()
        df = Store(where).frame()
        keys = {p.key for p in planned}
        if keys and ("key" not in df.columns or not df["key"].isin(keys).any()):
            # every part just written was refused on reading back: say where, never a KeyError
            raise UserError(f"sweep {name}: no result could be read back from {where / 'store'}; "
                            "see the warnings above")
        df = df[df["key"].isin(keys)]
        # the points in the grid's order, not the order they finished in (which depends on
        # the workers, and on the other claims' runs beside them): the same frame every time
        order: dict[str, int] = {}
        for p in planned:
            order.setdefault(p.key, len(order))
        df = df.iloc[df["key"].map(order).to_numpy().argsort(kind="stable")].reset_index(drop=True)
        bad = df[df["status"] != "ok"]
        if len(bad):
            raise UserError(f"sweep {name}: {len(bad)} point(s) failed, e.g. {bad['error'].iloc[0]}")
        return df

    def run(self, scenario: str | dict, overrides=(), trace=("cwnd", "drops"), engine: str | None = None,
            keep: Callable[[Result], dict] | None = None) -> Result:
        """One traced run, cached as Parquet under <cache>/runs/<key>/: returns its
        `Result` (scenario, metrics, flows, links) with canonical traces.

        With `keep`, a function of the run returning {name: DataFrame}, only what
        it returns is cached and returned as the run's `traces` (say, one row per
        cycle instead of one per ack): the cache keeps what the claim needs, and
        its entry names the reduction (`reduction` in run.json). Its
        entry is keyed by the run and by the source of `keep`'s module and of
        `tcplab.metrics`, so editing the reduction recomputes it."""
        return self.runs([dict(scenario=scenario, overrides=overrides, trace=trace, engine=engine, keep=keep)])[0]

    def runs(self, calls: list[dict]) -> list[Result]:
        """`run` of each of `calls` (each a dict of `run`'s arguments), in order. When
        claims run at once, every run of `calls` the cache has not got goes to the
        shared workers before the first is waited for, so that they run side by side:
        a claim's loop of `run` (paper D's 64 buffers) kept one run at a time in
        flight, and at the end of `reproduce all`, one worker of two busy. Each run
        and its cache entry are those `run` gives."""
        preps = [self._run_prep(**c) for c in calls]
        if self.claims is None:
            return [cached if cached is not None else _traced_run(*args)
                    for cached, args in preps]
        subs = [None if cached is not None else self.claims.traced(args[-1], *args[:-1])
                for cached, args in preps]
        out: list[Result] = []
        try:
            for (cached, args), sub in zip(preps, subs):
                if sub is None:
                    out.append(cached)
                    continue
                fut, mine = sub
                key, where = args[-1], args[-2]
                try:
                    with self.claims.released():
                        res = self.claims.pool.result(fut)
                finally:
                    if mine:
                        self.claims.forget(key)
                if mine:
                    out.append(res)
                    continue
                # another claim's run: read back from the cache (its own copy, as a later run would)
                again = _cached_run(where, key, self.cache)
                out.append(again if again is not None else _traced_run(*args))
        except BaseException:
            for sub, (_, args) in zip(subs[len(out):], preps[len(out):]):
                if sub is not None and sub[1]:
                    sub[0].cancel()  # not started: dropped
                    self.claims.forget(args[-1])
            raise
        return out

    def _run_prep(self, scenario: str | dict, overrides=(), trace=("cwnd", "drops"), engine: str | None = None,
                  keep: Callable[[Result], dict] | None = None):
        """(the cached Result or None, `_traced_run`'s arguments) of a `run`."""
        from tcplab.scenario import apply_overrides, read_toml, resolve
        from tcplab.sweep.engines import engine_version
        from tcplab.sweep.keys import point_key

        engine = engine or self.engine
        sc = read_toml(_repo_path(scenario)) if isinstance(scenario, str) else dict(scenario)
        sc = self._profiled(sc)
        sc = apply_overrides(sc, overrides)
        sc = apply_overrides(sc, [("trace.series", list(trace))])
        resolved = resolve(sc)
        _check_engine_runs(engine, resolved)
        key = point_key(resolved, engine, engine_version(engine))
        if keep is not None:
            key += "-" + _reduction_id(keep)
        where = self.cache / "runs" / key
        return _cached_run(where, key, self.cache), (sc, engine, self.progress, keep, where, key)

    def _profiled(self, scenario):
        """The scenario with the context's TCP profile on every TCP group that names
        none (a scenario's own profile, like any key it sets, wins); unchanged under
        the default profile, so default results and their cache keys do not move."""
        if self.profile == DEFAULT_PROFILE:
            return scenario
        from tcplab.scenario import read_toml

        sc = read_toml(_repo_path(scenario)) if isinstance(scenario, str) else dict(scenario)
        sc["flows"] = {name: ({**g, "profile": self.profile} if g.get("kind", "tcp") == "tcp" and "profile" not in g
                              else g) for name, g in sc.get("flows", {}).items()}
        return sc

    def fluid(self, **kwargs):
        """tcplab.fluid(...) — milliseconds, so not cached."""
        return self.fluids([kwargs])[0]

    def fluids(self, calls: list[dict]):
        """`fluid` of each of `calls` (each a dict of its arguments), in order. When
        claims run at once they go to the shared workers together, as `runs` does:
        computed in the claim's own thread, which holds the claims' lock, paper C's
        model runs (C1's 40, seconds each in --full) kept every other claim from
        submitting work, and the workers idled."""
        from tcplab.fluid import fluid

        if self.claims is None:
            return [fluid(**c) for c in calls]
        futs = [self.claims.pool.submit(fluid, **c) for c in calls]
        out = []
        try:
            for fut in futs:
                with self.claims.released():
                    out.append(self.claims.pool.result(fut))
        except BaseException:
            for fut in futs[len(out):]:
                fut.cancel()
            raise
        return out

    # figures -------------------------------------------------------------------------------

    def save_figure(self, fig, stem: str) -> str:
        """Keep `fig` to be written as out/<paper>/<stem>.png and .svg once its claim
        has a verdict (`write_figures`, which heads it with the claim and the verdict);
        returns the stem."""
        self._pending_figures.append((fig, stem))
        return stem

    def _thumbnail(self, fig, stem: str, box, png: Path) -> None:
        """thumbs/<stem>.png for the report's index: a figure of several panels is
        shown by its first panel alone (the whole, shrunk to a thumbnail's width, was
        unreadable); a one-panel figure is left to `report.thumbnail`.

        The panel is cut from `png`, the figure just written at `FIGURE_DPI` cropped to
        `box` (inches), and scaled to the thumbnail's width: drawing the figure once
        more, at the thumbnail's resolution, cost as much as writing it."""
        from PIL import Image

        from tcplab.outdir import atomic_path
        from tcplab.reproduce.report import THUMB_WIDTH

        axes = [a for a in fig.axes if a.get_visible() and a.get_label() != "<colorbar>"]
        if len(axes) < 2:
            return
        with _agg(fig, FIGURE_DPI) as renderer:
            panel = axes[0].get_tightbbox(renderer).transformed(fig.dpi_scale_trans.inverted())
        panel = panel.padded(0.08)
        with Image.open(png) as im:
            # inches from the box's top left corner to pixels of the png (its rows run down)
            left = max(0, round((panel.x0 - box.x0) * FIGURE_DPI))
            upper = max(0, round((box.y1 - panel.y1) * FIGURE_DPI))
            right = min(im.width, round((panel.x1 - box.x0) * FIGURE_DPI))
            lower = min(im.height, round((box.y1 - panel.y0) * FIGURE_DPI))
            cut = im.crop((left, upper, right, lower))
        height = max(1, round(cut.height * THUMB_WIDTH / cut.width))
        small = cut.resize((THUMB_WIDTH, height), Image.LANCZOS)
        dest = self.root / "thumbs" / f"{stem}.png"
        dest.parent.mkdir(parents=True, exist_ok=True)
        atomic_path(dest, lambda tmp: small.save(tmp, format="PNG"))

    def write_figures(self, claim_id: str, verdict: str | None) -> None:
        """Write the figures the claim's check kept, each headed by "<claim> — <verdict>"
        (None: discard them, the check did not finish)."""
        import matplotlib.pyplot as plt
        from matplotlib.layout_engine import PlaceHolderLayoutEngine

        from tcplab.outdir import atomic_path
        from tcplab.provenance import figure_metadata

        pending, self._pending_figures = self._pending_figures, []
        try:
            if verdict is None:
                return
            self.root.mkdir(parents=True, exist_ok=True)
            shown = "not run on this engine" if verdict == "not-run" else verdict
            for fig, stem in pending:
                fig.text(0.5, 1.0, f"{claim_id} — {shown}", ha="center", va="bottom", fontsize=11,
                         weight="bold", color=VERDICT_COLORS.get(verdict, "black"),
                         transform=fig.transFigure)
                # each format's tight box measured without drawing (`tight_box`): savefig
                # drew the figure once more to measure it, and once more again while the
                # figure keeps the placeholder `tight_layout()` leaves (a layout engine
                # that lays out nothing): it is dropped, the figure is drawn already. A
                # figure with a layout engine that lays it out is saved as it was
                laid_out = fig.get_layout_engine() is None or isinstance(fig.get_layout_engine(),
                                                                           PlaceHolderLayoutEngine)
                if laid_out:
                    fig.set_layout_engine(None)
                boxes = {}
                for ext in ("png", "svg"):
                    path = self.root / f"{stem}.{ext}"
                    box = boxes[ext] = tight_box(fig, ext, FIGURE_DPI) if laid_out else "tight"
                    atomic_path(path, lambda tmp, fig=fig, ext=ext, path=path, box=box: fig.savefig(
                        tmp, format=ext, dpi=FIGURE_DPI, bbox_inches=box,
                        metadata=figure_metadata(path, engine=self.engine, paper=self.paper.slug)))
                box = boxes["png"] if laid_out else tight_box(fig, "png", FIGURE_DPI)  # laid out by now
                self._thumbnail(fig, stem, box, self.root / f"{stem}.png")
        finally:
            for fig, _ in pending:
                plt.close(fig)


#: the resolution of the reports' PNG figures
FIGURE_DPI = 120


@contextmanager
def _dpi(fig, dpi: float):
    """`fig` at `dpi` for the block (as savefig sets it while it draws)."""
    before = fig.dpi
    fig.dpi = dpi
    try:
        yield fig
    finally:
        fig.dpi = before


@contextmanager
def _agg(fig, dpi: float):
    """An Agg renderer of `fig` at `dpi` (the png's), `fig` at that dpi for the block:
    what a png save measures extents with, without drawing."""
    from matplotlib.backends.backend_agg import RendererAgg

    with _dpi(fig, dpi):
        w, h = fig.bbox.size
        yield RendererAgg(w, h, dpi)


def tight_box(fig, fmt: str, dpi: float):
    """The box (inches) `fig.savefig(format=fmt, dpi=dpi, bbox_inches="tight")` crops
    the figure to (fmt: "png" or "svg"), padded by `savefig.pad_inches`. Given to
    savefig as `bbox_inches`, it saves the same picture without the draw savefig makes
    to measure it: each tight save laid the whole figure out once more. Measured with
    the format's own renderer (Agg at `dpi`; svg's at 72 dpi, as savefig draws a
    vector format), whose text extents differ by fractions of a point. Measured without
    a draw: on every figure of `reproduce all` the box is the one savefig finds after
    its draw, the png the same pixel for pixel (tests/test_reproduce_figures.py)."""
    import io

    import matplotlib as mpl

    if fmt == "png":
        with _agg(fig, dpi) as renderer:
            box = fig.get_tightbbox(renderer)
    elif fmt == "svg":
        from matplotlib.backends.backend_svg import RendererSVG

        with _dpi(fig, 72):
            w, h = fig.get_size_inches() * 72
            box = fig.get_tightbbox(RendererSVG(w, h, io.StringIO(), image_dpi=dpi))
    else:
        raise ValueError(f"tight_box: format {fmt!r}, expected png or svg")
    return box.padded(mpl.rcParams["savefig.pad_inches"])


def _traced_run(sc: dict, engine: str, progress, keep, where: Path, key: str) -> Result:
    """`Context.run`'s work once the cache has not got it: run, canonical traces,
    `keep`'s reduction, stored under `where`."""
    from tcplab.api import run
    from tcplab.progress import watching
    from tcplab.traces import canonical

    with watching(engine, sc, progress):
        res = run(sc, engine=engine)
    res.traces = canonical(res.traces, res.links)
    if keep is not None:
        res.traces = dict(keep(res))
    _save_run(res, where, None if keep is None else f"{keep.__module__}.{keep.__qualname__}", key=key)
    return res


def _save_run(run: Result, where: Path, reduction: str | None = None, key: str | None = None) -> None:
    """Write a traced run into the cache entry `where`, whole or not at all: into a
    temporary sibling first, renamed into place (two reproductions sharing the cache
    may finish the same run; the first rename wins, the other is dropped). Every
    table carries the build's metadata (`tcplab.provenance`).

    The entry is the reproduce cache's own form of a `Result`, not `Result.save`'s
    run directory: traces as zstd Parquet (`_write_trace`), no CSV copies, and
    `run.json` with what `_load_run` needs to give the `Result` back, sealed
    (`tcplab.cache.seal`) with the entry's `key` (default: the folder's name) and
    the SHA-256 of every file, which `_load_run` checks before serving it.
    `reduction` names the `Context.run(keep=...)` function whose tables `run.traces`
    hold instead of the run's own traces (None: the traces themselves)."""
    import os
    import shutil

    from tcplab.cache import seal, verify_entry, DamagedEntry, quarantine
    from tcplab.provenance import metadata, write_parquet

    key = key or where.name
    meta = metadata(engine=run.engine, engine_version=run.engine_version, seed=run.scenario.get("seed"))
    where.parent.mkdir(parents=True, exist_ok=True)
    tmp = where.with_name(f".{where.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        for name, df in run.traces.items():
            _write_trace(df, tmp / f"{name}.parquet", dict(meta, table=name))
        write_parquet(run.flows, tmp / "flows.parquet", dict(meta, table="flows"))
        write_parquet(run.links, tmp / "links.parquet", dict(meta, table="links"))
        seal(tmp, "run.json", key, {"scenario": run.scenario, "metrics": run.metrics,
                                    "traces": sorted(run.traces), "reduction": reduction, "meta": meta})
        try:
            os.rename(tmp, where)
            return
        except OSError:  # another process stored it first (or an entry that does not verify is there)
            pass
        try:
            verify_entry(where, "run.json", key)
            return  # theirs is whole: ours is dropped (finally)
        except DamagedEntry as exc:
            quarantine(where, where.parent.parent, str(exc))
        os.rename(tmp, where)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _cached_run(where: Path, key: str, cache: Path) -> Result | None:
    """The run the cache entry `where` holds, if it is there and proves to be the
    run of `key` (`_load_run`); an entry that does not is moved to
    `<cache>/quarantine/` (one line on stderr) and None returned: computed again."""
    from tcplab.cache import DamagedEntry, quarantine

    if not (where.exists() or where.is_symlink()):
        return None
    try:
        return _load_run(where, key)
    except DamagedEntry as exc:
        quarantine(where, cache, str(exc))
        return None


def _load_run(where: Path, key: str | None = None) -> Result:
    """The `Result` a cache entry written by `_save_run` holds (engine and version
    from its metadata), after `tcplab.cache.verify_entry` checked it was stored
    under `key` (default: the folder's name) and that no file changed; raises
    `tcplab.cache.DamagedEntry` otherwise."""
    from tcplab.cache import DamagedEntry, verify_entry
    from tcplab.provenance import read_parquet

    if where.is_symlink() or not where.is_dir():
        raise DamagedEntry("not a folder")
    d = verify_entry(where, "run.json", key or where.name)
    try:
        meta = d.get("meta", {})
        traces = {n: read_parquet(where / f"{n}.parquet") for n in d["traces"]}
        return Result(meta.get("engine"), str(meta.get("engine_version")), d["scenario"],
                      pd.read_parquet(where / "flows.parquet"), pd.read_parquet(where / "links.parquet"),
                      d["metrics"], traces)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError, NotImplementedError) as exc:
        # ArrowInvalid is a ValueError, ArrowNotImplementedError a NotImplementedError
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise DamagedEntry(f"cannot be read back ({type(exc).__name__}: {first})") from None


def _reduction_id(keep: Callable) -> str:
    """Names a `Context.run(keep=...)` reduction in cache keys: its name and a hash
    of the sources it most likely depends on (its module, tcplab.metrics)."""
    import hashlib
    import inspect
    import sys

    h = hashlib.sha256(keep.__qualname__.encode())
    for name in (keep.__module__, "tcplab.metrics"):
        try:
            h.update(inspect.getsource(sys.modules[name]).encode())
        except (KeyError, OSError, TypeError):  # not imported, or no source (frozen)
            h.update(name.encode())
    return h.hexdigest()[:8]


def _write_trace(df: pd.DataFrame, path: Path, meta: dict | None = None) -> None:
    """A trace table as Parquet, compressed for what traces are: sorted times and
    slowly changing windows (zstd over byte-stream-split floats: 2.2 MB instead of
    Snappy's 4.6 MB for a 1200 s Tahoe run's per-ack trace; lossless). Level 3, not 6:
    on paper C's largest per-ack trace (2.4 M rows) it writes in 0.44 s instead of 0.93
    s for 2 % more bytes (25.5 against 24.9 MB), and the reproduction waits for it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(df, preserve_index=False)
    if meta is not None:
        from tcplab.provenance import with_metadata

        table = with_metadata(table, meta)
    floats = [f.name for f in table.schema if pa.types.is_floating(f.type)]
    pq.write_table(table, path, compression="zstd", compression_level=3,
                   use_byte_stream_split=floats or False, use_dictionary=[f.name for f in table.schema
                                                                             if f.name not in floats])


def plan_of(path: str, overrides: dict | None = None):
    """The `tcplab.plan.Plan` of a scenario file (relative to the repository root):
    where a paper's runs read the constants of its setup (rates, delays, buffers,
    packet sizes) from the engine's resolution, so that they are stated once, in
    the TOML. `overrides`: {key path: value} set first, as a sweep's `set` table
    (a mode's duration and warm-up: their seconds are the Plan's, not the strings')."""
    from tcplab.plan import plan
    from tcplab.scenario import load_scenario

    sets = [(key.split("."), value) for key, value in (overrides or {}).items()]
    return plan(load_scenario(_repo_path(path), sets), resolved=True)


def load_notes(package: str) -> dict[str, str]:
    """The sections of a paper package's ``notes.md``: ``## name`` heading → its
    text. A paragraph's lines are joined with one space (as Markdown reads them),
    paragraphs with a blank line; text before the first heading is the file's
    preface and is left out. A section may hold ``{name}`` fields, which the claim
    fills in with `str.format`."""
    import importlib.resources

    text = importlib.resources.files(package).joinpath("notes.md").read_text(encoding="utf-8")
    sections: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            if current in sections:
                raise ValueError(f"{package}/notes.md: section {current!r} twice")
            sections[current] = []
        elif current is not None:
            sections[current].append(line.strip())
    out = {}
    for name, lines in sections.items():
        paragraphs = [p for p in re.split(r"\n(?:\s*\n)+", "\n".join(lines).strip()) if p]
        out[name] = "\n\n".join(" ".join(p.split("\n")) for p in paragraphs)
    return out


def _repo_path(p: str) -> Path:
    """Scenario paths in the paper modules (`scenarios/x.toml`) name packaged files
    (never a same-named file in the directory tcplab runs in)."""
    from tcplab.resources import data_dir

    path = Path(p)
    if path.is_absolute():
        return path
    return data_dir() / path


# --- registry and driver ----------------------------------------------------------------------


def paper_slug(name: str) -> str:
    """The slug of a paper given by slug or by its letter (A–D, any case);
    UserError if it names none."""
    slug = LETTERS.get(name.upper(), name) if len(name) == 1 else name
    if slug not in PAPERS:
        names = ", ".join(f"{slug} ({letter})" for letter, slug in LETTERS.items())
        raise UserError(f"unknown paper {name!r}; expected one of {names} or all")
    return slug


def load_paper(slug: str) -> Paper:
    """The Paper of `slug` (or letter); UserError if unknown."""
    return importlib.import_module(PAPERS[paper_slug(slug)]).PAPER


def select_claims(paper: Paper, ids: list[str] | None) -> list[Claim]:
    if not ids:
        return list(paper.claims)
    return [c for c in paper.claims if c.id in ids]


def check_claim_ids(ids: list[str]) -> None:
    """UserError naming any id that belongs to no paper's claims."""
    known: set[str] = set()
    for slug in PAPERS:
        known |= {c.id for c in load_paper(slug).claims}
    bad = [i for i in ids if i not in known]
    if bad:
        raise UserError(f"--claims: unknown claim id(s) {', '.join(bad)}; known: {', '.join(sorted(known, key=_id_order))}")


def _id_order(i: str):
    return (i[0], int(i[1:]) if i[1:].isdigit() else 0)


def _check_engine_runs(engine: str, resolved: dict) -> None:
    """Raise `EngineCannotRun` if `engine` cannot run this (valid) scenario, before
    any run: ns-2's export refuses what ns-2 has no counterpart for."""
    if engine == "ns2":
        from tcplab.backends.ns2 import export_tcl

        export_tcl(resolved)


def run_claim(claim: Claim, ctx: Context) -> Verdict:
    t0 = time.perf_counter()
    try:
        out = claim.check(ctx)
        if ctx.claims is not None:
            ctx.claims.pool.check()  # stopped meanwhile: no figure, no data
    except EngineCannotRun as exc:
        out = Outcome("not-run", NOT_RUN, f"engine {ctx.engine}: {exc}")
    except BaseException:
        ctx.write_figures(claim.id, None)
        raise
    ctx.write_figures(claim.id, out.verdict)
    root = ctx.root / "data"
    if out.data:
        from tcplab.provenance import metadata, write_parquet

        meta = metadata(engine=ctx.engine, claim=claim.id, paper=ctx.paper.slug, mode=ctx.mode)
    for name, df in out.data.items():
        from tcplab.outdir import atomic_path

        root.mkdir(parents=True, exist_ok=True)
        atomic_path(root / f"{claim.id}-{name}.parquet",
                    lambda tmp, df=df, name=name: write_parquet(df, tmp, dict(meta, table=name)))
    return Verdict(claim.id, claim.title, out.verdict, out.measured, claim.paper, out.note, claim.criterion,
                   claim.figure, _plain(out.values), out.figures, time.perf_counter() - t0)


def write_text(path: Path, text: str) -> None:
    """Write a report file whole or not at all (`tcplab.outdir.atomic_file`)."""
    from tcplab.outdir import atomic_file

    with atomic_file(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def _plain(v):
    """JSON-safe values (numpy scalars, NaN → None)."""
    import math

    import numpy as np

    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, np.ndarray)):
        return [_plain(x) for x in v]
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return None if not math.isfinite(float(v)) else round(float(v), 6)
    return v


class _Claims:
    """Claims running concurrently (`reproduce_all`): one thread a claim, sharing
    one pool of `jobs` engine workers (`tcplab.sweep.executors.SharedPool`), so
    that one claim's sweep tail, figures and verdict overlap the next claims'
    runs while no more than `jobs` runs go on at once.

    A claim's own Python (its checks, figures with pyplot, which is not
    thread-safe, the shared `memo`, the report files) runs under `lock`, one
    claim at a time, as it did when claims ran one after another; a claim lets go
    of it only while it waits for its runs (`released`). A sweep's store is
    written by one claim at a time (`store`), and a traced run two claims ask for
    is run once (`traced`)."""

    def __init__(self, jobs: int | None):
        from tcplab.sweep.executors import SharedPool

        self.pool = SharedPool(jobs)
        self.lock = threading.Lock()
        self._guard = threading.Lock()  # for the two tables below
        self._stores: dict[Path, threading.Lock] = {}
        self._runs: dict[str, object] = {}  # cache key → the Future of the run under way

    @contextmanager
    def released(self):
        """Let other claims' Python run while this claim waits (it holds `lock`)."""
        self.lock.release()
        try:
            yield
        finally:
            self.lock.acquire()
        self.pool.check()

    @contextmanager
    def store(self, where: Path):
        """Hold the sweep store `where` for this claim (another claim of this process
        running the same sweep waits here, not on the store's file lock)."""
        with self._guard:
            lock = self._stores.setdefault(Path(where), threading.Lock())
        while not lock.acquire(timeout=self.pool.POLL_S):
            self.pool.check()
        try:
            yield
        finally:
            lock.release()

    def traced(self, key: str, *args):
        """(future, mine): the run of cache key `key` under way, submitted now if it is
        not (`mine`: submitted by this call; args as `_traced_run`'s)."""
        with self._guard:
            fut = self._runs.get(key)
            if fut is not None:
                return fut, False
            sc, engine, progress, keep, where = args
            fut = self._runs[key] = self.pool.submit(_traced_run, sc, engine, progress, keep, where, key)
            return fut, True

    def forget(self, key: str) -> None:
        """The run of `key` is over (stored, or failed): a later claim reads the cache."""
        with self._guard:
            self._runs.pop(key, None)


@dataclass
class _Job:
    """One paper's share of `reproduce_all`."""

    paper: Paper
    chosen: list[Claim]
    partial: bool
    ctx: Context
    task: object = None  # its bar
    verdicts: list = field(default_factory=list)
    running: list[str] = field(default_factory=list)
    left: int = 0
    t0: float | None = None


def _job(paper: str, claims, mode, engine, out, jobs, progress, cache, profile) -> _Job | None:
    """What `paper` has to run (None: nothing — not written yet, or no claim selected)."""
    if mode not in MODES:
        raise UserError(f"mode: expected one of {', '.join(MODES)}, got {mode!r}")
    if profile not in PROFILES:
        raise UserError(f"--profile: expected one of {', '.join(PROFILES)}, got {profile!r}")
    p = load_paper(paper)
    if p is None:
        return None
    chosen = select_claims(p, claims)
    partial = bool(claims)
    if engine not in ("packet", "ns2"):
        partial = True
        chosen = [c for c in chosen if engine in c.engines]
    if not chosen:
        return None
    ctx = Context(p, Path(out), mode, engine, jobs, progress, cache, profile)
    return _Job(p, chosen, partial, ctx, verdicts=[None] * len(chosen), left=len(chosen))


def _write_paper(job: _Job, wall: float, out) -> None:
    """claims.json, meta.json, the paper's page and the index, once all its claims have verdicts."""
    from tcplab.reproduce import report

    p, ctx, verdicts = job.paper, job.ctx, job.verdicts
    # a run of a few claims keeps the others' earlier verdicts in claims.json
    previous = {}
    path = ctx.root / "claims.json"
    if job.partial and path.is_file():
        try:
            previous = {d["id"]: d for d in json.loads(path.read_text())}
        except (json.JSONDecodeError, KeyError, TypeError):
            previous = {}
    merged = dict(previous)
    merged.update({v.id: v.to_json() for v in verdicts})
    order = [c.id for c in p.claims]
    rows = [merged[i] for i in order if i in merged]
    write_text(path, json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
    # claims.json stays the plain list scripts rely on; what wrote it sits beside it
    from tcplab.provenance import metadata

    meta = metadata(engine=ctx.engine, paper=p.slug, mode=ctx.mode, profile=ctx.profile,
                    claims_run=[c.id for c in job.chosen], seconds=round(wall, 3))
    write_text(ctx.root / "meta.json", json.dumps(meta, indent=2, ensure_ascii=False, default=str) + "\n")
    report.write_paper(p, rows, ctx, wall)
    report.write_index(Path(out))


def reproduce(paper: str, claims: list[str] | None = None, mode: str = "quick", engine: str = "packet",
              out: str | Path = "reports", jobs: int | None = None, progress=None,
              cache: str | Path | None = None, profile: str = DEFAULT_PROFILE) -> list[Verdict]:
    """Check the claims of one paper; write out/<paper>/{claims.json,index.html,*.png,*.svg,data/}.
    Runs are cached in `cache` (default: `tcplab.cache.cache_dir()`, the per-user cache).
    Returns the verdicts (empty if the paper is not written yet or no claim was selected).
    Its claims run concurrently as `reproduce_all` runs them."""
    slug = paper_slug(paper)
    return reproduce_all([slug], claims, mode, engine, out, jobs, progress, cache, profile)[slug]


def reproduce_all(papers: list[str], claims: list[str] | None = None, mode: str = "quick",
                  engine: str = "packet", out: str | Path = "reports", jobs: int | None = None, progress=None,
                  cache: str | Path | None = None, profile: str = DEFAULT_PROFILE) -> dict[str, list[Verdict]]:
    """`reproduce` each of `papers` (slugs); {slug: its verdicts}.

    With `jobs` 1, or the linux engine (real time), claims run one after another,
    paper after paper. Otherwise the claims of all the papers run concurrently
    (`_Claims`): each sweep point and each traced run goes to one pool of `jobs`
    workers (default: every core), so that the machine does not idle at a
    sweep's tail or while a claim draws its figures; each paper is written when
    its last claim has its verdict. Results are those of the serial order: a
    claim's runs and numbers do not depend on what runs beside it. A claim that
    fails lets the others finish (their papers are written), then its error is
    raised; Ctrl-C or SIGTERM stops every claim within a fraction of a second
    (the engine's runs in flight are cancelled, `SharedPool.stop`) and writes no
    verdict of an unfinished paper."""
    from tcplab.sweep.executors import default_jobs

    jobs_ = [_job(s, claims, mode, engine, out, jobs, progress, cache, profile) for s in papers]
    if (jobs or default_jobs()) == 1 or engine == "linux":
        return {s: _serial(j, out, progress) for s, j in zip(papers, jobs_)}
    live = [j for j in jobs_ if j is not None]
    done = {s: (j.verdicts if j is not None else []) for s, j in zip(papers, jobs_)}
    if not live:
        return done
    import concurrent.futures as cf

    shared = _Claims(jobs)
    for j in live:
        j.ctx.claims = shared
        j.ctx.root.mkdir(parents=True, exist_ok=True)
        if progress is not None:
            j.task = progress.add_task(j.paper.slug, total=len(j.chosen), claim="")

    def one(job: _Job, i: int) -> None:
        import copy

        claim = job.chosen[i]
        shared.lock.acquire()
        try:
            shared.pool.check()
            if job.t0 is None:
                job.t0 = time.perf_counter()
            job.running.append(claim.id)
            if progress is not None:
                progress.update(job.task, claim=" ".join(job.running))
            ctx = copy.copy(job.ctx)  # the claim's own figures; the paper's memo
            ctx._pending_figures = []
            try:
                job.verdicts[i] = run_claim(claim, ctx)
            finally:
                job.running.remove(claim.id)
                if progress is not None:
                    progress.update(job.task, claim=" ".join(job.running))
            job.left -= 1
            if progress is not None:
                progress.update(job.task, advance=1)
            if job.left == 0:
                shared.pool.check()
                _write_paper(job, time.perf_counter() - job.t0, out)
        finally:
            shared.lock.release()

    # one more claim than workers: while a claim draws its figures, the others keep them busy
    runners = cf.ThreadPoolExecutor(max_workers=shared.pool.jobs + 1, thread_name_prefix="tcplab-claim")
    futures: list = []
    try:
        futures.extend(runners.submit(one, j, i) for j in live for i in range(len(j.chosen)))
        pending = set(futures)
        while pending:
            _, pending = cf.wait(pending, timeout=0.2)
    except BaseException:
        shared.pool.stop()
        runners.shutdown(wait=False, cancel_futures=True)
        # each claim under way stops at its next wait for a run (within 0.1 s) or its end; the
        # claims not started are cancelled (never "done" for cf.wait: not waited for)
        cf.wait([f for f in futures if not f.cancelled()])
        raise
    finally:
        runners.shutdown(wait=True, cancel_futures=True)
        shared.pool.stop()
    errors = [f.exception() for f in futures if f.exception() is not None]
    if errors:
        raise errors[0]
    return done


def _serial(job: _Job | None, out, progress) -> list[Verdict]:
    """A paper's claims one after another (`--jobs 1`, the linux engine)."""
    if job is None:
        return []
    p, ctx = job.paper, job.ctx
    ctx.root.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    task = progress.add_task(p.slug, total=len(job.chosen), claim="") if progress is not None else None
    for i, c in enumerate(job.chosen):
        if progress is not None:
            progress.update(task, claim=c.id)
        job.verdicts[i] = run_claim(c, ctx)
        if progress is not None:
            progress.update(task, advance=1)
    _write_paper(job, time.perf_counter() - t0, out)
    return job.verdicts
