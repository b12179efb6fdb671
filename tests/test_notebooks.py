"""The notebooks in docs/notebooks run top to bottom and show what they promise:
a Result as tables, figures inline without %matplotlib, a DuckDB query's table."""

import shutil
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="needs the test extras (nbformat, nbclient, ipykernel)")
nbclient = pytest.importorskip("nbclient", reason="needs the test extras (nbformat, nbclient, ipykernel)")
pytest.importorskip("ipykernel", reason="needs the test extras (nbformat, nbclient, ipykernel)")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "docs" / "notebooks"


def execute(name: str, cwd: Path):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    # an empty directory: the notebooks must not depend on the repository's layout
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(cwd)}}).execute()
    return nb


def outputs(cell) -> dict:
    """mime type -> data, over a cell's outputs."""
    out = {}
    for o in cell.get("outputs", []):
        out.update(o.get("data", {}))
    return out


def test_committed_notebooks_carry_no_outputs():
    for path in NOTEBOOKS.glob("*.ipynb"):
        nb = nbformat.read(path, as_version=4)
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), path.name


def test_run_and_plot_notebook_shows_tables_and_inline_figures(tmp_path):
    nb = execute("run-and-plot.ipynb", tmp_path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    html = outputs(code[0]).get("text/html", "")
    assert "metrics" in html and "normalized_throughput" in html and "<table" in html
    assert "bit/s" in html  # units beside the values
    for cell in code[2:4]:  # res.plot("cwnd"), res.plot("queue"): pictures, not "<Figure ...>"
        assert "image/png" in outputs(cell), cell.source
    assert not list(tmp_path.iterdir())  # a run writes nothing unless asked


def test_sweep_and_query_notebook_queries_and_plots(tmp_path):
    nb = execute("sweep-and-query.ipynb", tmp_path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    table = outputs(code[1]).get("text/html", "")
    assert "throughput" in table and "buffer" in table
    assert "image/png" in outputs(code[2])
    assert (tmp_path / "runs" / "n-buffer" / "store").is_dir()
    shutil.rmtree(tmp_path / "runs")
