"""Parameter sweeps: sweep files, executors (local, Ray) and the results store.

    >>> from tcplab.sweep import load_sweep, run_sweep
    >>> sweep = load_sweep("sweeps/c-n-buffer.toml")
    >>> outcome = run_sweep(sweep, "runs/sweeps/c-n-buffer")      # resumes if interrupted
    >>> Store("runs/sweeps/c-n-buffer").frame()                    # one row per point

`spec` parses sweep files into points, `keys` hashes resolved scenarios,
`engines` resolves and runs one point on any engine, `executors` runs many
(threads, processes, Ray), `store` keeps the rows (Parquet, DuckDB), `runner`
ties them together, `report` prints the summary and draws the default plot.
"""

from tcplab.sweep.keys import canonical_json, point_key
from tcplab.sweep.runner import Outcome, plan, run_sweep
from tcplab.sweep.spec import Axis, Point, Sweep, derive_seed, load_sweep, parse_sweep
from tcplab.sweep.store import Store

__all__ = ["Axis", "Outcome", "Point", "Store", "Sweep", "canonical_json", "derive_seed", "load_sweep",
           "parse_sweep", "plan", "point_key", "run_sweep"]
