"""The caches prove what they serve: a reproduce run entry (run.json, tcp.parquet, ...)
or a sweep store part that was cut, garbled, swapped with another or changed is
moved aside (never deleted), named in one line, and computed again: the answer is
the one a clean cache gives, never a traceback, never another run's numbers."""

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

ROOT = Path(__file__).resolve().parent.parent
TINY_SWEEP = ROOT / "tests" / "hostile" / "_tiny-sweep.toml"


# The CLI with the build pinned: keys include the engine's build id and a hash of the
# package's Python sources, which would change under the test if the code were rebuilt
# or edited while it runs (a new build misses every entry: the damaged ones would never
# be looked up, and the test would pass or fail for the wrong reason)
PINNED = ("import sys, tcplab.provenance as pv; pv.build = lambda: '0.0.0+pinned-for-test'; "
          "from tcplab.cli import main; sys.exit(main(sys.argv[1:]))")


def tcplab(*args, cwd):
    return subprocess.run([sys.executable, "-c", PINNED, *args], capture_output=True, text=True, cwd=cwd,
                          env=dict(os.environ, COLUMNS="200"))


def d3(out: Path, cache: Path, cwd: Path):
    """Paper D's D3 on the tiny runs: three traced runs (B = 19, 20, 22) through the run cache."""
    p = tcplab("reproduce", "D", "--claims", "D3", "--tiny", "--out", str(out), "--cache", str(cache), cwd=cwd)
    values = None
    claims = out / "triple-slowstart" / "claims.json"
    if claims.is_file():
        values = json.loads(claims.read_text())[0]["values"]
    return p, values


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """A cache of D3's runs and the values D3 reports from it."""
    base = tmp_path_factory.mktemp("clean")
    p, values = d3(base / "rep", base / "cache", base)
    assert p.returncode == 0, p.stderr
    assert values["queue_peak_first_12s"] == {"19": 19, "20": 20, "22": 22}, values
    return base / "cache", values


def entries(cache: Path) -> dict[int, Path]:
    """buffer B → the run entry D3 cached for it (read from the entry's own scenario)."""
    out = {}
    for e in (cache / "reproduce" / "runs").iterdir():
        sc = json.loads((e / "run.json").read_text())["scenario"]
        out[sc["topology"]["bottleneck"]["buffer"]] = e
    return out


def damage_truncate(e19: Path, e20: Path):
    with open(e19 / "run.json", "r+b") as fh:
        fh.truncate(100)
    return [e19]


def damage_garble(e19: Path, e20: Path):
    (e19 / "run.json").write_bytes(random.Random(7).randbytes(4000))
    return [e19]


def damage_half_parquet(e19: Path, e20: Path):
    data = (e19 / "tcp.parquet").read_bytes()
    (e19 / "tcp.parquet").write_bytes(data[: len(data) // 2])
    return [e19]


def damage_swap(e19: Path, e20: Path):
    tmp = e19.with_name("swap")
    os.rename(e19, tmp)
    os.rename(e20, e19)
    os.rename(tmp, e20)
    return [e19, e20]


@pytest.mark.parametrize("damage", [damage_truncate, damage_garble, damage_half_parquet, damage_swap],
                         ids=["run.json-cut-to-100-bytes", "run.json-random-bytes", "tcp.parquet-cut-in-half",
                              "two-entries-swapped"])
def test_a_damaged_run_entry_is_quarantined_and_computed_again(clean, tmp_path, damage):
    cache0, want = clean
    cache = tmp_path / "cache"
    shutil.copytree(cache0, cache)
    by_b = entries(cache)
    bad = damage(by_b[19], by_b[20])
    damaged = {p.name: sorted(f.name for f in p.iterdir()) for p in bad}
    p, values = d3(tmp_path / "rep", cache, tmp_path)
    assert "Traceback" not in p.stderr, p.stderr[-3000:]
    assert p.returncode == 0, p.stderr[-2000:]
    assert values == want, "the answer of a clean cache, not another run's numbers"
    # each damaged entry is named in one line, moved aside (kept), and stored anew
    q = cache / "reproduce" / "quarantine"
    for name, files in damaged.items():
        lines = [ln for ln in p.stderr.splitlines() if f"runs/{name}:" in ln and "moved to" in ln]
        assert len(lines) == 1, p.stderr
        assert sorted(f.name for f in (q / name).iterdir()) == files, "quarantined whole, not deleted"
        assert (cache / "reproduce" / "runs" / name / "run.json").is_file()
    # and the recomputed entries are served next time, silently
    p, again = d3(tmp_path / "rep2", cache, tmp_path)
    assert p.returncode == 0 and again == want and "moved to" not in p.stderr


def test_an_entry_of_an_older_build_without_checksum_is_a_miss(clean, tmp_path):
    cache0, want = clean
    cache = tmp_path / "cache"
    shutil.copytree(cache0, cache)
    e19 = entries(cache)[19]
    doc = json.loads((e19 / "run.json").read_text())
    doc["metrics"]["normalized_throughput"] = 0.123  # would show if served
    for k in ("checksum", "format", "files", "key"):
        doc.pop(k, None)
    (e19 / "run.json").write_text(json.dumps(doc))
    p, values = d3(tmp_path / "rep", cache, tmp_path)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert values == want
    assert "older build" in p.stderr
    assert json.loads((e19 / "run.json").read_text()).get("checksum"), "computed again and sealed"


# --- the sweep store -------------------------------------------------------------------------------------


def avg(out: Path, cwd: Path):
    p = tcplab("results", str(out), "--sql", "SELECT avg(mean_aggregate) AS a, count(*) AS n FROM points",
               "--format", "csv", cwd=cwd)
    return p


@pytest.mark.parametrize("keep_metadata", [True, False], ids=["checksum-kept", "metadata-stripped"])
def test_a_part_whose_metric_column_became_text_is_named_and_computed_again(tmp_path, keep_metadata):
    out = tmp_path / "sw"
    args = ["sweep", str(TINY_SWEEP), "--out", str(out), "--no-plot", "--jobs", "1", "--batch", "1"]
    assert tcplab(*args, cwd=tmp_path).returncode == 0
    want = avg(out, tmp_path)
    assert want.returncode == 0, want.stderr
    part = sorted((out / "store").glob("part-*.parquet"))[0]
    t = pq.read_table(part)
    i = t.column_names.index("mean_aggregate")
    t = t.set_column(i, pa.field("mean_aggregate", pa.string()), t.column(i).cast(pa.string()))
    if not keep_metadata:
        t = t.replace_schema_metadata(None)
    pq.write_table(t, part)
    # the resumed sweep names the part, moves it aside and computes its point again
    p = tcplab(*args, cwd=tmp_path)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert part.name in p.stderr and "moved to" in p.stderr, p.stderr
    assert (out / "store" / "quarantine" / part.name).is_file(), "kept, not deleted"
    got = avg(out, tmp_path)
    assert got.returncode == 0, got.stderr
    assert got.stdout == want.stdout


def test_a_reader_names_a_changed_part_and_leaves_it(tmp_path):
    out = tmp_path / "sw"
    args = ["sweep", str(TINY_SWEEP), "--out", str(out), "--no-plot", "--jobs", "1", "--batch", "1"]
    assert tcplab(*args, cwd=tmp_path).returncode == 0
    part = sorted((out / "store").glob("part-*.parquet"))[0]
    t = pq.read_table(part)
    i = t.column_names.index("mean_aggregate")
    t = t.set_column(i, "mean_aggregate", pa.array([0.5] * t.num_rows))  # another number, same type
    pq.write_table(t, part)
    p = avg(out, tmp_path)
    assert p.returncode == 0, p.stderr
    assert part.name in p.stderr and "checksum" in p.stderr and "skipped" in p.stderr
    assert part.is_file(), "a reader moves nothing"
    assert p.stdout.splitlines()[1].endswith(",1"), "only the other part's point is counted"
