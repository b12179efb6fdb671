"""`tcplab fluid` on the command line: the interface scripts rely on."""

import csv
import json

from tcplab.cli import main


def test_json_interface(capsys):
    rc = main(["fluid", "--n", "3", "--beta", "0.5", "--policy", "largest-rate",
               "--events", "10000", "--seed", "1", "--json"])
    assert rc == 0
    d = json.loads(capsys.readouterr().out)
    assert abs(d["mean_aggregate"] - 0.9) < 0.0045
    assert len(d["per_connection"]) == 3
    assert {"mean", "second_moment"} <= set(d["per_connection"][0])
    assert (d["n"], d["beta"], d["policy"], d["events"], d["seed"]) == (3, 0.5, "largest-rate", 10000, 1)


def test_table_output(capsys):
    assert main(["fluid", "--n", "2", "--policy", "beatdown", "--events", "1000"]) == 0
    out = capsys.readouterr().out
    assert "Theorem 1" in out and "0.85714" in out and "E[x]/c" in out


def test_heterogeneous_and_trace(tmp_path, capsys):
    path = tmp_path / "path.csv"
    hist = tmp_path / "hist.csv"
    rc = main(["fluid", "--n", "2", "--beta", "0.5,0.7", "--eta", "1,2", "--policy", "rate-independent",
               "--weights", "1,3", "--events", "2000", "--trace", str(path), "--trace-events", "5",
               "--histogram", str(hist), "--bins", "10"])
    assert rc == 0
    first = path.open().readline()
    assert first.startswith("# tcplab {")
    meta = json.loads(first[len("# tcplab "):])
    assert meta["engine"] == "fluid" and meta["build_id"] and meta["seed"] == 1 and "fluid" in meta["command"]
    rows = list(csv.DictReader(line for line in path.open() if not line.startswith("#")))
    assert list(rows[0]) == ["time", "x0", "x1"] and len(rows) == 10
    assert len(list(csv.DictReader(line for line in hist.open() if not line.startswith("#")))) == 20
    import pandas as pd

    assert list(pd.read_csv(path, comment="#").columns) == ["time", "x0", "x1"]


def test_user_errors_exit_2(capsys):
    assert main(["fluid", "--n", "3", "--beta", "1.5"]) == 2
    assert "beta[0]" in capsys.readouterr().err
    assert main(["fluid", "--n", "3", "--beta", "x"]) == 2
    assert "--beta" in capsys.readouterr().err
    assert main(["fluid", "--policy", "all", "--sigma", "0.3"]) == 2
    assert "sigma" in capsys.readouterr().err
