"""`Context.write_figures`: each figure written as png and svg, cropped to the box
`bbox_inches="tight"` gives, with a thumbnail of its first panel, without the draws
savefig made to measure the box and the thumbnail's own draw (issue 30)."""

import io
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from PIL import Image  # noqa: E402

from tcplab.reproduce import FIGURE_DPI, Context, Paper, tight_box  # noqa: E402
from tcplab.reproduce.report import THUMB_WIDTH  # noqa: E402


def _figure(panels: int):
    """A figure as the claims draw them: panels with legends placed 'best', long tick
    labels, a colorbar, the claim's heading above the figure's top edge."""
    fig, axes = plt.subplots(1, panels, figsize=(4 * panels, 3.2), squeeze=False)
    x = np.linspace(0.05, 10, 200)
    for i, ax in enumerate(axes[0]):
        ax.plot(x, np.sin(x * (i + 1)) * 1e4, label=f"panel {i}")
        ax.set_xscale("log")
        ax.set_title(f"a title long enough to reach past the axes {i}", fontsize=9)
        ax.set_ylabel("a quantity\n(two lines)")
        ax.legend(loc="best")
    if panels > 1:
        im = axes[0][-1].pcolormesh(np.arange(4).reshape(2, 2))
        fig.colorbar(im, ax=axes[0][-1], label="colour")
    fig.tight_layout()
    fig.text(0.5, 1.0, "X9 — partly", ha="center", va="bottom", fontsize=11, weight="bold",
             transform=fig.transFigure)
    return fig


def _context(tmp_path):
    return Context(Paper("test-paper", "X", "a test", [], []), tmp_path / "out", "tiny", "packet",
                   cache=tmp_path / "cache")


def _pixels(data) -> np.ndarray:
    with Image.open(data) as im:
        return np.asarray(im.convert("RGBA"))


def _svg_size(text: str) -> tuple[str, str]:
    return re.search(r'<svg[^>]*width="([\d.]+)pt" height="([\d.]+)pt"', text).groups()


@pytest.mark.parametrize("panels", [1, 2])
def test_tight_box_is_the_box_savefig_measures(panels):
    fig = _figure(panels)
    png, png_tight, svg, svg_tight = (io.BytesIO() for _ in range(4))
    fig.savefig(png, format="png", dpi=FIGURE_DPI, bbox_inches=tight_box(fig, "png", FIGURE_DPI))
    fig.savefig(png_tight, format="png", dpi=FIGURE_DPI, bbox_inches="tight")
    fig.savefig(svg, format="svg", dpi=FIGURE_DPI, bbox_inches=tight_box(fig, "svg", FIGURE_DPI))
    fig.savefig(svg_tight, format="svg", dpi=FIGURE_DPI, bbox_inches="tight")
    # the same picture, pixel for pixel; the svg the same size (to the point's millionth)
    a, b = _pixels(png), _pixels(png_tight)
    assert a.shape == b.shape and (a == b).all()
    assert _svg_size(svg.getvalue().decode()) == _svg_size(svg_tight.getvalue().decode())
    plt.close(fig)


def test_write_figures_draws_each_figure_once_per_format(tmp_path, monkeypatch):
    """Before: a tight png and a tight svg drew the figure twice each (once to measure
    it), and a figure of several panels once more for its thumbnail: 5 draws."""
    ctx = _context(tmp_path)
    fig = _figure(2)  # tight_layout draws it too
    draws = []
    real = Figure.draw
    monkeypatch.setattr(Figure, "draw", lambda self, renderer: (draws.append(self), real(self, renderer))[1])
    ctx.save_figure(fig, "x9-two-panels")
    ctx.write_figures("X9", "partly")
    assert len(draws) == 2
    for ext in ("png", "svg"):
        assert (ctx.root / f"x9-two-panels.{ext}").stat().st_size > 0


def test_the_written_figures_are_savefigs_tight_ones(tmp_path):
    ctx = _context(tmp_path)
    fig = _figure(2)
    ctx.save_figure(fig, "x9")
    ctx.write_figures("X9", "partly")
    # write_figures heads the figure and closes it: draw the same one again to compare
    ref = _figure(2)
    ref.text(0.5, 1.0, "X9 — partly", ha="center", va="bottom", fontsize=11, weight="bold",
             color="#9a6700", transform=ref.transFigure)
    png, svg = io.BytesIO(), io.BytesIO()
    ref.savefig(png, format="png", dpi=FIGURE_DPI, bbox_inches="tight")
    ref.savefig(svg, format="svg", dpi=FIGURE_DPI, bbox_inches="tight")
    a, b = _pixels(ctx.root / "x9.png"), _pixels(png)
    assert a.shape == b.shape and (a == b).all()
    assert _svg_size((ctx.root / "x9.svg").read_text()) == _svg_size(svg.getvalue().decode())
    plt.close(ref)


def test_thumbnail_is_the_first_panel_at_the_thumbnails_width(tmp_path):
    ctx = _context(tmp_path)
    fig = _figure(2)
    fig.dpi = FIGURE_DPI
    panel = fig.axes[0].get_tightbbox(fig.canvas.get_renderer()).transformed(fig.dpi_scale_trans.inverted())
    panel = panel.padded(0.08)
    ctx.save_figure(fig, "x9")
    ctx.write_figures("X9", "reproduced")
    with Image.open(ctx.root / "thumbs" / "x9.png") as im:
        thumb = np.asarray(im.convert("RGB")).astype(float)
    assert thumb.shape[1] == THUMB_WIDTH
    # its first panel alone: the figure's png cropped to the panel (and its labels), shrunk
    assert thumb.shape[0] == pytest.approx(THUMB_WIDTH * panel.height / panel.width, abs=1.5)
    with Image.open(ctx.root / "x9.png") as im:
        whole = im.convert("RGB")
        small = whole.resize((THUMB_WIDTH, round(whole.height * THUMB_WIDTH / whole.width)))
    # not the whole figure shrunk (two panels and a colorbar: another shape)
    assert small.size[1] != thumb.shape[0]
    # mostly white, with the panel's line drawn (not an empty crop)
    assert (thumb < 250).any(axis=2).mean() > 0.05
    plt.close(fig)


def test_a_figure_with_a_layout_engine_is_laid_out_by_its_saves(tmp_path):
    """A constrained-layout figure (as `tcplab.plots` draws them, not a pyplot one) is
    written as savefig lays it out, with a thumbnail of its first panel."""
    from tcplab.plots import InlineFigure

    def draw():
        fig = InlineFigure(figsize=(7, 5), layout="constrained")
        for i, ax in enumerate(fig.subplots(2, 1)):
            ax.plot([0, 1, 2], [i, 2, 1], label="a line")
            ax.set_ylabel("a label\non two lines")
            ax.legend()
        return fig

    ctx = _context(tmp_path)
    ctx.save_figure(draw(), "x9-constrained")
    ctx.write_figures("X9", "reproduced")
    ref = draw()
    ref.text(0.5, 1.0, "X9 — reproduced", ha="center", va="bottom", fontsize=11, weight="bold",
             color="#1a7f37", transform=ref.transFigure)
    png = io.BytesIO()
    ref.savefig(png, format="png", dpi=FIGURE_DPI, bbox_inches="tight")
    a, b = _pixels(ctx.root / "x9-constrained.png"), _pixels(png)
    assert a.shape == b.shape and (a == b).all()
    with Image.open(ctx.root / "thumbs" / "x9-constrained.png") as im:
        assert im.width == THUMB_WIDTH and im.height < im.width


def test_one_panel_figure_is_left_to_the_index(tmp_path):
    ctx = _context(tmp_path)
    ctx.save_figure(_figure(1), "x9-one")
    ctx.write_figures("X9", "reproduced")
    assert (ctx.root / "x9-one.png").is_file() and not (ctx.root / "thumbs" / "x9-one.png").exists()
