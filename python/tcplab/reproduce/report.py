"""HTML reports: out/<paper>/index.html (citation, setup, one section per claim,
summary) and out/index.html (the papers, cited in full, with a verdict table and a
thumbnail per claim; the tcplab version and build that wrote it). Plain HTML, no
scripts, relative links only, so the reports open from disk and survive being
mailed around."""

from __future__ import annotations

import datetime as _dt
import html
import json
from pathlib import Path

from tcplab import citations

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 980px; margin: 2em auto; padding: 0 1em; color: #222; line-height: 1.45 }
h1 { font-size: 1.5em } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ddd }
table { border-collapse: collapse; margin: 1em 0 } td, th { border: 1px solid #ccc; padding: 4px 8px; vertical-align: top; text-align: left }
th { background: #f4f4f4 } .v { font-weight: 600; padding: 2px 8px; border-radius: 4px; white-space: nowrap }
.reproduced { background: #d8f0d8; color: #185818 } .partly { background: #fbeec8; color: #6b4d00 }
.not-reproduced { background: #f6d5d5; color: #7a1b1b } .not-run { background: #e6e6e6; color: #555 } .pending { background: #e6e6e6; color: #555 }
figure { margin: 1em 0 } figure img { max-width: 100%; border: 1px solid #eee } figcaption { font-size: .85em; color: #555 }
.claim { margin-bottom: 2.5em } dl { display: grid; grid-template-columns: 9em 1fr; gap: .3em 1em } dt { font-weight: 600; color: #555 }
code { background: #f4f4f4; padding: 0 3px }
.thumbs { display: flex; flex-wrap: wrap; gap: .6em; margin: .5em 0 1.5em } .thumbs a { text-decoration: none; color: #333 }
.thumbs figure { margin: 0; width: 170px } .thumbs img { width: 170px; height: auto; border: 1px solid #ddd }
.thumbs figcaption { font-size: .8em } .cite { font-size: .92em; color: #333 } footer { margin-top: 3em; font-size: .85em; color: #666 }
"""
#: width (pixels) of the index page's thumbnails, written to <paper>/thumbs/<stem>.png
THUMB_WIDTH = 340


def _e(s) -> str:
    return html.escape(str(s))


def _code(s: str) -> str:
    """Escape, then turn `x` into <code>x</code>."""
    parts = _e(s).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def badge(verdict: str) -> str:
    text = "not run on this engine" if verdict == "not-run" else verdict
    return f'<span class="v {_e(verdict)}">{_e(text)}</span>'


def _page(title: str, body: str) -> str:
    # an empty icon: browsers would otherwise ask for /favicon.ico and log its absence
    return (f"<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{_e(title)}</title>"
            f"<link rel=\"icon\" href=\"data:,\"><style>{STYLE}</style></head><body>\n{body}\n"
            f"<footer>{_e(build_line())}</footer>\n</body></html>\n")


def build_line() -> str:
    """Which tcplab wrote the page: its version, the engine's, and the build id where the
    engine has one."""
    from importlib import metadata

    from tcplab.scenario import _core

    core = _core()
    try:
        version = metadata.version("tcplab")
    except metadata.PackageNotFoundError:  # pragma: no cover - run from a source tree
        version = "unknown"
    parts = [f"tcplab {version}", f"engine {getattr(core, 'ENGINE_VERSION', '?')}"]
    build = getattr(core, "BUILD_ID", None)
    if build:
        parts.append(f"build {build}")
    return ", ".join(parts) + f"; written {_dt.datetime.now().strftime('%Y-%m-%d %H:%M')}"


def citation_html(letter: str) -> str:
    """Paper `letter`'s full reference, the DOI (or address) as a link."""
    slug = next(s for s, c in citations.CITATIONS.items() if c.letter == letter.upper())
    return f'<span class="cite">{citations.html(slug)}</span>'


def write_text(path: Path, text: str) -> None:
    from tcplab.reproduce import write_text as write

    write(path, text)


def thumbnail(root: Path, stem: str) -> str | None:
    """root/thumbs/<stem>.png, a small copy of root/<stem>.png (made if missing or older);
    the path relative to root, or None without a figure."""
    src = root / f"{stem}.png"
    if not src.is_file():
        return None
    dst = root / "thumbs" / f"{stem}.png"
    if not dst.is_file() or dst.stat().st_mtime < src.stat().st_mtime:
        from PIL import Image

        dst.parent.mkdir(parents=True, exist_ok=True)
        from tcplab.outdir import atomic_path

        with Image.open(src) as im:
            im.thumbnail((THUMB_WIDTH, THUMB_WIDTH * 4))
            atomic_path(dst, lambda tmp: im.save(tmp, format="PNG", optimize=True))
    return f"thumbs/{stem}.png"


def counts(rows: list[dict]) -> dict[str, int]:
    out = {"reproduced": 0, "partly": 0, "not-reproduced": 0, "not-run": 0}
    for r in rows:
        out[r["verdict"]] = out.get(r["verdict"], 0) + 1
    return out


def write_paper(paper, rows: list[dict], ctx, wall_s: float) -> Path:
    """out/<paper>/index.html from the claims.json rows."""
    b = [f"<p><a href=\"../index.html\">← all papers</a></p>",
         f"<h1>Paper {paper.letter}: {_e(paper.title)}</h1>",
         f"<p class=\"cite\">{citations.html(paper.slug)}</p>",
         f"<p>Mode <b>{_e(ctx.mode)}</b>, engine <b>{_e(ctx.engine)}</b>, TCP profile "
         f"<b>{_e(getattr(ctx, 'profile', 'ns2-2.35'))}</b>, this run {wall_s:.0f} s, "
         f"{_e(build_line())}. Machine-readable verdicts: "
         f"<a href=\"claims.json\">claims.json</a>; data: <code>data/*.parquet</code>.</p>",
         "<h2>Setup</h2><table><tr><th>parameter</th><th>value</th></tr>"]
    b += [f"<tr><td>{_e(k)}</td><td>{_code(v)}</td></tr>" for k, v in paper.setup]
    b.append("</table>")
    b.append("<h2>Verdicts</h2>" + verdict_table(rows, link=True, other=_other_profile(ctx)))
    for r in rows:
        b.append(f'<div class="claim" id="{_e(r["id"])}"><h2>{_e(r["id"])} — {_e(r.get("title", ""))} '
                 f'{badge(r["verdict"])}</h2><dl>'
                 f'<dt>paper ({_e(r.get("figure", ""))})</dt><dd>{_e(r["paper"])}</dd>'
                 f'<dt>measured</dt><dd>{_code(r["measured"])}</dd>'
                 f'<dt>criterion</dt><dd>{_code(r.get("criterion", ""))}</dd>'
                 f'<dt>why</dt><dd>{_code(r["note"])}</dd></dl>')
        for stem in r.get("figures", []):
            b.append(f'<figure><img src="{_e(stem)}.png" alt="{_e(stem)}">'
                     f'<figcaption>{_e(stem)} (<a href="{_e(stem)}.svg">SVG</a>)</figcaption></figure>')
        b.append("</div>")
    c = counts(rows)
    b.append("<h2>Summary</h2>")
    b.append(f"<p>{c['reproduced']} reproduced, {c['partly']} partly, {c['not-reproduced']} not reproduced"
             + (f", {c['not-run']} not run on this engine" if c["not-run"] else "")
             + f" of {len(rows)} claims.</p>")
    if paper.summary:
        b.append(f"<p>{_code(paper.summary)}</p>")
    for r in rows:
        if r["verdict"] != "reproduced":
            b.append(f"<p><b>{_e(r['id'])}</b> ({_e(r['verdict'])}): {_code(r['note'])}</p>")
    path = ctx.root / "index.html"
    write_text(path, _page(f"Paper {paper.letter}: {paper.title}", "\n".join(b)))
    return path


def _other_profile(ctx):
    """(label, {id: row}) of the other TCP profile's verdicts for this paper and engine,
    if a run wrote them (`reproduce --profile`), else None."""
    from tcplab.reproduce import DEFAULT_PROFILE, PROFILES

    here = getattr(ctx, "profile", DEFAULT_PROFILE)
    other = next(p for p in PROFILES if p != here)
    base = ctx.root if here == DEFAULT_PROFILE else ctx.root.parent
    f = base / ("" if other == DEFAULT_PROFILE else other) / "claims.json"
    if not f.is_file():
        return None
    try:
        return other, {r["id"]: r for r in json.loads(f.read_text())}
    except (json.JSONDecodeError, KeyError, TypeError):
        return None


def verdict_table(rows: list[dict], link: bool = False, prefix: str = "", other=None) -> str:
    """One row per claim; `other` = (profile, {id: row}) adds that profile's verdict and
    value beside this one's (a claim it did not run shows "—")."""
    extra = f"<th>{_e(other[0])} verdict</th><th>{_e(other[0])} measured</th>" if other else ""
    out = [f"<table><tr><th>claim</th><th>verdict</th><th>measured</th>{extra}<th>paper</th></tr>"]
    for r in rows:
        cid = _e(r["id"])
        name = f'<a href="{prefix}#{cid}">{cid}</a>' if link else cid
        cells = ""
        if other:
            o = other[1].get(r["id"])
            cells = (f"<td>{badge(o['verdict'])}</td><td>{_code(o['measured'])}</td>" if o else "<td>—</td><td>—</td>")
        out.append(f"<tr><td>{name}</td><td>{badge(r['verdict'])}</td><td>{_code(r['measured'])}</td>{cells}"
                   f"<td>{_e(r['paper'])}</td></tr>")
    out.append("</table>")
    return "".join(out)


def _thumbs(out: Path, slug: str, rows: list[dict]) -> str:
    """One thumbnail per claim (its first figure), linking to the claim's section."""
    cells = []
    for r in rows:
        figs = r.get("figures") or []
        thumb = thumbnail(out / slug, figs[0]) if figs else None
        cid = _e(r["id"])
        img = (f'<img src="{slug}/{thumb}" alt="{cid}: {_e(figs[0])}">' if thumb
               else '<span class="v pending">no figure</span>')
        cells.append(f'<a href="{slug}/index.html#{cid}"><figure>{img}<figcaption><b>{cid}</b> '
                     f'{badge(r["verdict"])}</figcaption></figure></a>')
    return f'<div class="thumbs">{"".join(cells)}</div>'


def _run_of(root: Path) -> tuple[str, str]:
    """(mode, engine) of a paper's last run, from its meta.json ("?" where unknown)."""
    try:
        meta = json.loads((root / "meta.json").read_text())
        return str(meta.get("mode", "?")), str(meta.get("engine", "?"))
    except (OSError, ValueError, AttributeError):
        return "?", "?"


def _mode_badge(mode: str) -> str:
    """The run's mode as the index shows it: a quick run says it is one."""
    if mode == "quick":
        return ('<span class="v partly" title="tcplab reproduce --quick: shorter runs and fewer '
                'seeds than the paper; --full runs the paper\'s lengths">quick</span>')
    return _e(mode)


def write_index(out: Path) -> Path:
    """out/index.html: every paper, with what its claims.json holds (or that it was not run)."""
    from tcplab.reproduce import LETTERS, PAPERS, load_paper

    b = ["<h1>tcplab reproduce</h1>",
         "<p>Each paper's claims (listed in the project's docs/claims.md), with a figure and a verdict "
         "(reproduced / partly / not-reproduced / not run on this engine) against the paper's statement. "
         f"Written by {_e(build_line())}.</p>",
         "<table><tr><th>paper</th><th>mode</th><th>engine</th><th>claims</th><th>reproduced</th><th>partly</th>"
         "<th>not reproduced</th><th>not run on its engine</th></tr>"]
    sections = []
    letter_of = {v: k for k, v in LETTERS.items()}
    for slug in PAPERS:
        f = out / slug / "claims.json"
        title = load_paper(slug).title
        if not f.is_file():
            b.append(f"<tr><td>{letter_of[slug]}: {_e(slug)} — {_e(title)}</td><td colspan=7>"
                     f"<span class=\"v pending\">not run</span></td></tr>")
            continue
        rows = json.loads(f.read_text())
        c = counts(rows)
        mode, engine = _run_of(out / slug)
        b.append(f'<tr><td><a href="{slug}/index.html">{letter_of[slug]}: {_e(slug)}</a> — {_e(title)}</td>'
                 f"<td>{_mode_badge(mode)}</td><td>{_e(engine)}</td><td>{len(rows)}</td><td>{c['reproduced']}</td><td>{c['partly']}</td><td>{c['not-reproduced']}</td><td>{c['not-run']}</td></tr>")
        sections.append(f'<h2><a href="{slug}/index.html">{letter_of[slug]}: {_e(title)}</a></h2>'
                        f"<p>{citation_html(letter_of[slug])}</p>"
                        + _thumbs(out, slug, rows)
                        + verdict_table(rows, link=True, prefix=f"{slug}/index.html"))
    b.append("</table>")
    b += sections
    b.append("<h2>References</h2><ol type=\"A\">"
             + "".join(f"<li>{citation_html(letter_of[slug])}</li>" for slug in PAPERS) + "</ol>")
    path = out / "index.html"
    out.mkdir(parents=True, exist_ok=True)
    write_text(path, _page("tcplab reproduce", "\n".join(b)))
    return path
