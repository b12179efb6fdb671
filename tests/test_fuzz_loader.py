"""Fuzzing the Python loader, overrides, units and sweep files with Hypothesis.

The bar: any input gives a valid scenario (or sweep, or number) or a UserError
(the CLI's exit 2 with a message) — never another exception, a RecursionError,
or a Rust panic surfacing through the bindings.

CI runs each target for a bounded number of examples (about a minute in all);
a long run takes an environment variable:

    TCPLAB_FUZZ_EXAMPLES=200000 .venv/bin/pytest tests/test_fuzz_loader.py -q -p no:cacheprovider

Each test reports nothing on success; a failure prints the smallest input that
breaks the bar (Hypothesis shrinks it) — add it to tests/hostile/ when fixed.
"""

from __future__ import annotations

import json
import math
import os
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcplab.errors import UserError
from tcplab.scenario import apply_overrides, load_scenario, load_toml, parse_override, read_toml, resolve
from tcplab.sweep.spec import parse_sweep
from tcplab.units import parse_bytes, parse_duration, parse_freq, parse_rate

ROOT = Path(__file__).resolve().parent.parent
SCENARIO_FILES = sorted((ROOT / "scenarios").glob("*.toml"))
EXAMPLES = int(os.environ.get("TCPLAB_FUZZ_EXAMPLES", "250"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize="TCPLAB_FUZZ_EXAMPLES" not in os.environ,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])

# --- strategies -------------------------------------------------------------------

#: what TOML can hold (no null), nested a few levels
toml_values = st.recursive(
    st.booleans() | st.integers(min_value=-(2**70), max_value=2**70) | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12)

#: words scenarios are made of: keys, units, numbers, punctuation
TOKENS = ["[", "]", "{", "}", "=", ",", ".", '"', "'", "\n", " ", "#", "[[", "]]", "flows", "tcp", "udp",
          "topology", "bottleneck", "rate", "delay", "buffer", "count", "duration", "seed", "shape", "sine",
          "piecewise", "points", "file", "1e300", "-1", "0", "1e-300", "nan", "inf", "2e19", "18446744073709551616",
          "5ms", "1Mbps", "0.4Hz", "1e12s", "true", "\xff", "\x00", "é", "\\u0000"]

units = st.one_of(
    st.from_regex(r"\A\s?[-+]?(\d{1,400}|\d*\.\d+)([eE][-+]?\d{1,4})?\s?(s|ms|us|µs|ns|min|h|bps|kbps|Mbps|Gbps|b/s|"
                  r"Hz|kHz|mHz|B|KB|MB|GB|KiB|MiB|)\s?\Z", fullmatch=True),
    st.text(max_size=20), st.integers(min_value=-(2**1100), max_value=2**1100), st.floats(), st.booleans(),
    st.none(), st.lists(st.integers(), max_size=2))


@st.composite
def mutated_scenarios(draw) -> bytes:
    """A real scenario file with a few tokens inserted, replaced or deleted."""
    text = draw(st.sampled_from(SCENARIO_FILES)).read_text()
    for _ in range(draw(st.integers(1, 6))):
        i = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["insert", "replace", "delete"]))
        token = draw(st.sampled_from(TOKENS) | st.text(max_size=4))
        j = min(len(text), i + draw(st.integers(0, 12)))
        text = text[:i] + ("" if op == "delete" else token) + text[(j if op != "insert" else i):]
    data = text.encode("utf-8", "surrogatepass")
    if draw(st.booleans()):  # sometimes a stray byte that is not UTF-8
        k = draw(st.integers(0, len(data)))
        data = data[:k] + draw(st.binary(min_size=1, max_size=3)) + data[k:]
    return data


override_keys = st.lists(st.sampled_from(["flows", "tcp", "background", "topology", "bottleneck", "access", "rate",
                                          "delay", "buffer", "count", "variant", "seed", "duration", "warmup",
                                          "shape", "file", "points", "measure", "reference", "trace", "x"])
                         | st.text(string.ascii_letters + "._-", max_size=6), min_size=0, max_size=5)
override_values = st.one_of(st.sampled_from(TOKENS), st.text(max_size=16), units.map(str),
                            st.builds(lambda d: "[" * d + "1" + "]" * d, st.integers(0, 3000)),
                            st.builds(lambda d: "{a=" * d + "1" + "}" * d, st.integers(0, 3000)))
override_texts = st.one_of(st.builds(lambda k, v: ".".join(k) + "=" + v, override_keys, override_values),
                           st.text(max_size=40))


axis_specs = st.one_of(
    st.builds(lambda k, lo, hi: {k: [lo, hi]}, st.sampled_from(["range", "linear", "log"]), units, units),
    st.builds(lambda lo, hi, step: {"range": [lo, hi], "step": step}, units, units, units),
    st.builds(lambda k, lo, hi, n: {k: [lo, hi], "n": n}, st.sampled_from(["linear", "log"]), units, units,
              st.integers(-2, 2**40) | toml_values),
    st.builds(lambda z: {"zip": z}, st.dictionaries(st.text(max_size=4), toml_values, max_size=3)))


def _user_error_or(fn, *args):
    """Call fn; a UserError is a fine answer, any other exception fails the test."""
    try:
        return fn(*args)
    except UserError as exc:
        assert str(exc), "a UserError says what was wrong"
        return None


# --- targets ----------------------------------------------------------------------

@FUZZ
@given(data=st.one_of(mutated_scenarios(), st.binary(max_size=200)))
def test_scenario_files_load_or_give_a_user_error(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fz") / "s.toml"
    path.write_bytes(data)
    table = _user_error_or(read_toml, path)
    if table is not None:
        _user_error_or(resolve, table)


@FUZZ
@given(text=override_texts)
def test_override_strings_parse_or_give_a_user_error(text):
    out = _user_error_or(parse_override, text)
    if out is not None:
        parts, _ = out
        assert parts and all(parts)


@FUZZ
@given(overrides=st.lists(override_texts, min_size=1, max_size=3), which=st.sampled_from(SCENARIO_FILES))
def test_overrides_on_real_scenarios_resolve_or_give_a_user_error(overrides, which):
    base = _user_error_or(read_toml, which)
    assert base is not None
    sc = _user_error_or(apply_overrides, base, overrides)
    if sc is not None:
        resolved = _user_error_or(resolve, sc)
        assert resolved is None or isinstance(resolved, dict)


@FUZZ
@given(path=override_keys.filter(bool), value=toml_values, which=st.sampled_from(SCENARIO_FILES))
def test_any_value_anywhere_resolves_or_gives_a_user_error(path, value, which):
    base = read_toml(which)
    sc = _user_error_or(apply_overrides, base, [(path, value)])
    if sc is not None:
        _user_error_or(resolve, sc)


@FUZZ
@given(value=units)
def test_units_give_a_finite_number_or_a_user_error(value):
    for fn in (parse_duration, parse_rate, parse_freq, parse_bytes):
        v = _user_error_or(fn, value)
        assert v is None or (math.isfinite(v) and v >= 0)


@FUZZ
@given(table=st.dictionaries(st.sampled_from(["name", "engine", "scenario", "metric", "replications", "batch",
                                              "set", "axes", "description", "x"]), toml_values, max_size=6),
       axes=st.dictionaries(st.sampled_from(["n", "beta", "eta", "policy", "a.b", "x"]) | st.text(max_size=8),
                            toml_values | axis_specs, max_size=3))
def test_sweep_tables_parse_or_give_a_user_error(table, axes):
    table = dict(table)
    table.setdefault("engine", "fluid")
    table.setdefault("scenario", {"n": 2})
    if "axes" not in table:
        table["axes"] = axes
    sweep = _user_error_or(parse_sweep, table)
    if sweep is not None:
        _user_error_or(sweep.points)


@pytest.mark.parametrize("data", [b"x = " + b"[" * 5000 + b"]" * 5000, b"\xff\xfe", b"a." * 3000 + b"a = 1",
                                  b'x = "\xe9"'])
def test_the_fuzzers_first_findings_stay_fixed(tmp_path, data):
    path = tmp_path / "s.toml"
    path.write_bytes(data)
    with pytest.raises(UserError):
        load_toml(path)


# --- the caches: a damaged entry or part is never served --------------------------------------------------

def _tiny_result(tag: float = 1.5):
    import numpy as np
    import pandas as pd

    from tcplab.result import Result

    flows = pd.DataFrame({"id": [0, 1], "group": ["tcp", "tcp"], "goodput_bps": [tag, 2 * tag]})
    links = pd.DataFrame({"name": ["bottleneck"], "direction": ["forward"], "drops": [int(tag)]})
    trace = pd.DataFrame({"t": np.arange(300) * tag, "cwnd": np.arange(300) % 17 * 1.0, "flow": np.zeros(300, int)})
    return Result("packet", "test", {"name": "fuzz", "seed": 1}, flows, links, {"tag": tag, "nested": {"a": [1, 2]}},
                  traces={"tcp": trace})


def _same_result(a, b) -> bool:
    return (a.scenario == b.scenario and a.metrics == b.metrics and a.flows.equals(b.flows)
            and a.links.equals(b.links) and set(a.traces) == set(b.traces)
            and all(a.traces[n].equals(b.traces[n]) for n in a.traces))


#: an edit of a file's bytes: (operation, position as a fraction of the size, bytes)
byte_edits = st.tuples(st.sampled_from(["truncate", "flip", "insert", "replace", "zero", "garble"]),
                       st.floats(min_value=0, max_value=1), st.binary(min_size=1, max_size=16))


def _edit(data: bytes, edit) -> bytes:
    op, at, chunk = edit
    i = min(int(at * len(data)), max(len(data) - 1, 0))
    if op == "truncate":
        return data[:i]
    if op == "flip":
        return data[:i] + bytes([data[i] ^ (chunk[0] or 1)]) + data[i + 1:] if data else chunk
    if op == "insert":
        return data[:i] + chunk + data[i:]
    if op == "replace":
        return data[:i] + chunk + data[i + len(chunk):]
    if op == "zero":
        return b""
    return chunk * (1 + len(data) // len(chunk))


@pytest.fixture(scope="module")
def cache_template(tmp_path_factory):
    from tcplab.reproduce import _save_run

    root = tmp_path_factory.mktemp("cache-template")
    _save_run(_tiny_result(), root / "runs" / "0123456789abcdef", key="0123456789abcdef")
    return root / "runs" / "0123456789abcdef"


@FUZZ
@given(which=st.sampled_from(["run.json", "tcp.parquet", "flows.parquet", "links.parquet"]), edits=st.lists(
    byte_edits, min_size=1, max_size=3), swap_key=st.booleans())
def test_a_damaged_cache_entry_is_never_served(cache_template, tmp_path_factory, which, edits, swap_key):
    """Any edit of any file of a reproduce cache entry (or the entry under another key):
    the loader gives back the very run it stored, or moves the entry aside and says
    so (None: computed again) — never another run's numbers, never an exception."""
    import shutil

    from tcplab.reproduce import _cached_run

    cache = tmp_path_factory.mktemp("cache")
    key = "fedcba9876543210" if swap_key else cache_template.name
    where = cache / "runs" / key
    shutil.copytree(cache_template, where)
    data = (where / which).read_bytes()
    for e in edits:
        data = _edit(data, e)
    (where / which).write_bytes(data)
    got = _cached_run(where, key, cache)
    if got is None:
        assert not where.exists() and (cache / "quarantine" / key).is_dir(), "moved aside, not deleted"
    else:
        assert not swap_key, "served under another key"
        assert _same_result(got, _tiny_result()), "served something other than what was stored"


@pytest.fixture(scope="module")
def store_template(tmp_path_factory):
    from tcplab.sweep.store import Store

    root = tmp_path_factory.mktemp("store-template")
    rows = [{"key": f"k{i}", "beta": 0.5 + i / 10, "replication": 0, "seed": 2**64 - 1 - i, "engine": "fluid",
             "status": "ok" if i % 3 else "failed", "error": None if i % 3 else "boom", "wall_s": 0.01 * i,
             "mean_aggregate": 0.8 + i / 100, "scenario": json.dumps({"n": 2}),
             # an axis of tables (a rate shape): a struct with a list of structs, as paper A sweeps
             "rate": {"shape": "sines", "components": [{"frequency": f"{i}Hz"}] * (i % 3)}} for i in range(6)]
    part = Store(root).write_batch(rows, {"engine": "fluid"})
    store = Store(root)
    assert store.files() == [part] and part.name in store._verified, "a part as written proves its content"
    return part


@FUZZ
@given(edits=st.lists(byte_edits, min_size=1, max_size=3))
def test_a_damaged_store_part_is_never_read(store_template, tmp_path_factory, edits):
    """Any edit of a results part: the store reads exactly the rows written, or
    moves the part aside (sweep) — never other rows, never an exception."""
    import pyarrow.parquet as pq

    from tcplab.sweep.store import Store

    root = tmp_path_factory.mktemp("store")
    (root / "store").mkdir()
    data = store_template.read_bytes()
    for e in edits:
        data = _edit(data, e)
    part = root / "store" / store_template.name
    part.write_bytes(data)
    store = Store(root)
    files = store.files()
    if files:
        want = pq.read_table(store_template).replace_schema_metadata(None)
        assert pq.read_table(files[0]).replace_schema_metadata(None).equals(want), "other rows were read"
        assert store.statuses() == {f"k{i}": "ok" if i % 3 else "failed" for i in range(6)}
    else:
        assert not part.exists() and (root / "store" / "quarantine" / part.name).is_file()
